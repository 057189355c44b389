//! A league's standings, computed from its stored results: ratings (see `ratings`) and plain
//! statistics with 95% confidence intervals, per game and overall.
//!
//! **Order.** Bots are ranked by their mean score over their matches: the mean place
//! (Schocken, Sjokken, and overall), or the net chips per 100 rounds (Zokken); ties by the
//! conservative rating, then by name. Measured (`arena/server/benches/league_efficiency.rs`,
//! docs/leagues.md "Statistical efficiency"), the mean score orders six players of known
//! strength correctly with about a fifth of the matches the match-by-match Weng-Lin
//! rating needs, and it is where duplicate sets pay off: a bot's score summed over a set
//! has sat in every seat with the same dice as its opponents, so the luck of the seat
//! cancels, while a rating updated one match at a time sees each match's luck alone.
//!
//! - **Loss rate** (Schocken, Sjokken): the share of matches a bot lost (its place is the
//!   worst of the match), with a Wilson score interval, beside `1/k`, the rate a bot of
//!   average strength would have at tables of `k` seats.
//! - **Net chips per 100 rounds** (Zokken): each match's net chips scaled to 100 rounds
//!   (by the rounds the match's rules set), the mean over matches with a normal interval
//!   (mean ± 1.96 standard errors).
//! - **Head to head**: for every two bots, how often each placed above the other in the
//!   matches they shared.
//! - **Paired difference**: for every two bots and every duplicate set both played in, the
//!   difference of their scores over the set's matches (the same dice, the seats swapped):
//!   the mean over sets with a normal interval. The score is the loss rate (Schocken,
//!   Sjokken; lower is better) or the net chips per 100 rounds (Zokken; higher is better).
//!   Because the dice are the same for both, the luck of the dice largely cancels.

use std::collections::BTreeMap;

use knobel_engine::Game;

use super::confidence::{BettingSequence, Bounds, MIN_OBSERVATIONS, MixtureSequence};
use super::ratings::{Rating, Ratings};
use super::settle::{Margins, PairVerdict};

/// The normal quantile of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// One seat of a played league match.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayedSeat {
    /// The bot.
    pub bot: String,
    /// Its place, 1 = first.
    pub place: u8,
    /// Net chips (Zokken).
    pub chips: Option<i64>,
    /// Its luck-adjusted score ([`knobel_engine::match_luck`]: the score of the paired
    /// difference minus the luck of the dice), if it was computed when the result was
    /// recorded (`None` for results recorded before, or of a league of another
    /// [`knobel_engine::LUCK_VERSION`]).
    pub adjusted: Option<f64>,
}

/// A played league match, as the store holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayedMatch {
    /// Its place in the schedule.
    pub ordinal: u32,
    /// The game.
    pub game: Game,
    /// Its duplicate set.
    pub set: u32,
    /// Rounds its rules set (Zokken), for chips per 100 rounds.
    pub rounds: u32,
    /// The seats, in seat order.
    pub seats: Vec<PlayedSeat>,
}

/// An estimate with its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Interval {
    /// The estimate.
    pub estimate: f64,
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

impl Interval {
    /// The Wilson score interval of `k` successes in `n` trials.
    pub fn wilson(k: u64, n: u64) -> Interval {
        if n == 0 {
            return Interval {
                estimate: f64::NAN,
                low: 0.0,
                high: 1.0,
            };
        }
        let (k, n) = (k as f64, n as f64);
        let p = k / n;
        let z2 = Z95 * Z95;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        Interval {
            estimate: p,
            low: (centre - half).max(0.0),
            high: (centre + half).min(1.0),
        }
    }

    /// The mean of `values` ± 1.96 standard errors (the sample standard deviation over
    /// `n - 1`); infinitely wide for fewer than two values.
    pub fn mean(values: &[f64]) -> Interval {
        let n = values.len() as f64;
        if values.is_empty() {
            return Interval {
                estimate: f64::NAN,
                low: f64::NEG_INFINITY,
                high: f64::INFINITY,
            };
        }
        let mean = values.iter().sum::<f64>() / n;
        if values.len() < 2 {
            return Interval {
                estimate: mean,
                low: f64::NEG_INFINITY,
                high: f64::INFINITY,
            };
        }
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let half = Z95 * (var / n).sqrt();
        Interval {
            estimate: mean,
            low: mean - half,
            high: mean + half,
        }
    }
}

/// One bot's line in the standings of a game (or overall).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BotStanding {
    /// The bot.
    pub bot: String,
    /// Matches played.
    pub matches: u64,
    /// Rating mean.
    pub mu: f64,
    /// Rating uncertainty.
    pub sigma: f64,
    /// `mu - 3 sigma` (the standings' tie-break; they are ordered by mean score).
    pub conservative: f64,
    /// Mean place.
    pub mean_place: f64,
    /// Matches lost (Schocken, Sjokken).
    pub losses: Option<u64>,
    /// Loss rate with its interval (Schocken, Sjokken).
    pub loss_rate: Option<Interval>,
    /// What a bot of average strength loses: 1/k at tables of k seats.
    pub average_loss_rate: Option<f64>,
    /// Net chips per 100 rounds with its interval (Zokken).
    pub chips_per_100_rounds: Option<Interval>,
    /// The mean luck-adjusted score per match with its interval: the loss rate (Schocken,
    /// Sjokken) or the net chips per 100 rounds (Zokken) with the luck of the dice taken
    /// out (`None` where a match of it has no adjusted score, and overall).
    pub adjusted: Option<Interval>,
}

/// What a game's order and comparisons are computed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreBasis {
    /// The luck-adjusted scores (every match of the game has them).
    Adjusted,
    /// The raw scores (some match has no adjusted score).
    Raw,
}

impl ScoreBasis {
    /// Its name on the wire, in the CLI, the pages and the metrics.
    pub fn name(self) -> &'static str {
        match self {
            ScoreBasis::Adjusted => "adjusted",
            ScoreBasis::Raw => "raw",
        }
    }
}

/// Two neighbours of a game's standings and how far their order is known.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Neighbours {
    /// The bot placed above.
    pub above: String,
    /// The bot placed just below it.
    pub below: String,
    /// Duplicate sets (a table's seat orders) both played in: the observations.
    pub sets: u64,
    /// How much better `above` scored than `below` per set, on the game's basis (the loss
    /// rate of `below` minus that of `above`; `above`'s chips minus `below`'s in Zokken):
    /// positive if the order is right.
    pub difference: f64,
    /// The anytime-valid 95% confidence sequence on that difference ([`super::confidence`]).
    pub sequence: Bounds,
    /// Separated, equivalent or open.
    pub verdict: PairVerdict,
}

/// Two bots compared over the matches they shared.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PairComparison {
    /// The first bot (by name).
    pub a: String,
    /// The second bot.
    pub b: String,
    /// Matches in which both sat.
    pub matches: u64,
    /// Of those, how often `a` placed above `b`.
    pub a_above: u64,
    /// How often `b` placed above `a`.
    pub b_above: u64,
    /// Duplicate sets in which both sat.
    pub sets: u64,
    /// `a`'s score minus `b`'s, per set, its mean and interval (see the module docs).
    pub paired_difference: Interval,
    /// The anytime-valid 95% confidence sequence on the mean per set of `a`'s score minus
    /// `b`'s, on the game's basis (adjusted or raw): valid however often it is read.
    pub sequence: Bounds,
}

/// The standings of one game.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GameStandings {
    /// The game.
    pub game: Game,
    /// Matches played.
    pub matches: u64,
    /// The bots, best first.
    pub bots: Vec<BotStanding>,
    /// Every two bots that met, by name.
    pub pairs: Vec<PairComparison>,
    /// What the order and the comparisons are on: adjusted scores where every match has
    /// them, else raw.
    pub basis: ScoreBasis,
    /// The equivalence margin: neighbours whose difference is known to lie within it are
    /// equivalent (the league file's `games.<game>.margin`).
    pub margin: f64,
    /// Each bot and the next below it, best first.
    pub neighbours: Vec<Neighbours>,
}

impl GameStandings {
    /// Whether the order is settled: every two neighbours are separated or equivalent.
    pub fn settled(&self) -> bool {
        self.neighbours
            .iter()
            .all(|n| n.verdict != PairVerdict::Open)
    }

    /// The comparison of bots `x` and `y` (in either order), if they met.
    pub fn pair(&self, x: &str, y: &str) -> Option<&PairComparison> {
        let (a, b) = if x < y { (x, y) } else { (y, x) };
        self.pairs.iter().find(|p| p.a == a && p.b == b)
    }

    /// `x`'s score minus `y`'s over the duplicate sets they shared (the pair is stored once,
    /// by name: the other way round its interval is negated); `None` if they never met.
    pub fn paired_difference(&self, x: &str, y: &str) -> Option<Interval> {
        let pair = self.pair(x, y)?;
        let d = pair.paired_difference;
        Some(if pair.a == x {
            d
        } else {
            Interval {
                estimate: -d.estimate,
                low: -d.high,
                high: -d.low,
            }
        })
    }
}

/// A league's standings.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Standings {
    /// Per game, in the order schocken, sjokken, zokken (games without results left out).
    pub games: Vec<GameStandings>,
    /// Over all games: the rating of every match in schedule order, and the mean place.
    pub overall: Vec<BotStanding>,
}

/// The bots of `m` and their places, in seat order: what a rating update takes.
fn placed(m: &PlayedMatch) -> Vec<(&str, u8)> {
    m.seats.iter().map(|s| (s.bot.as_str(), s.place)).collect()
}

/// Whether seat `i` of `m` lost the match: its place is the worst, and not everyone's.
fn lost(m: &PlayedMatch, i: usize) -> bool {
    let worst = m.seats.iter().map(|s| s.place).max().unwrap_or(0);
    let best = m.seats.iter().map(|s| s.place).min().unwrap_or(0);
    worst > best && m.seats[i].place == worst
}

/// Seat `i`'s raw score in `m`, the one the paired difference and the confidence sequences
/// read: 1 if it lost the match, else 0 (Schocken, Sjokken); its net chips per 100 rounds
/// (Zokken). The luck-adjusted score is on the same scale.
pub fn score(m: &PlayedMatch, i: usize) -> f64 {
    match m.game {
        Game::Zokken => chips_per_100(m, i),
        Game::Schocken | Game::Sjokken => f64::from(u8::from(lost(m, i))),
    }
}

/// The per-match score on `basis` (the adjusted score is on the scale of [`score`]).
fn score_on(m: &PlayedMatch, i: usize, basis: ScoreBasis) -> f64 {
    match (basis, m.seats[i].adjusted) {
        (ScoreBasis::Adjusted, Some(adjusted)) => adjusted,
        _ => score(m, i),
    }
}

fn chips_per_100(m: &PlayedMatch, i: usize) -> f64 {
    m.seats[i].chips.unwrap_or(0) as f64 * 100.0 / f64::from(m.rounds.max(1))
}

/// Two bots' shared matches: how many, `a` above, `b` above; per duplicate set the sum of
/// `a`'s score minus `b`'s raw and on the basis, and the matches summed.
#[derive(Default)]
struct PairTally {
    matches: u64,
    a_above: u64,
    b_above: u64,
    sets: BTreeMap<u32, SetSums>,
}

#[derive(Default)]
struct SetSums {
    raw: f64,
    basis: f64,
    matches: u32,
}

#[derive(Default)]
struct Tally {
    matches: u64,
    place_sum: u64,
    losses: u64,
    seats_sum: u64,
    chips: Vec<f64>,
    adjusted: Vec<f64>,
}

fn standing(bot: &str, tally: &Tally, rating: Rating, game: Option<Game>) -> BotStanding {
    let shake = matches!(game, Some(Game::Schocken | Game::Sjokken));
    BotStanding {
        bot: bot.to_owned(),
        matches: tally.matches,
        mu: rating.mu,
        sigma: rating.sigma,
        conservative: rating.conservative(),
        mean_place: tally.place_sum as f64 / tally.matches.max(1) as f64,
        losses: shake.then_some(tally.losses),
        loss_rate: shake.then(|| Interval::wilson(tally.losses, tally.matches)),
        // Tables of one game have one size; the mean of 1/k over matches is that 1/k.
        average_loss_rate: shake.then(|| tally.matches as f64 / tally.seats_sum.max(1) as f64),
        chips_per_100_rounds: (game == Some(Game::Zokken)).then(|| Interval::mean(&tally.chips)),
        adjusted: (game.is_some() && !tally.adjusted.is_empty())
            .then(|| Interval::mean(&tally.adjusted)),
    }
}

/// The order of the standings: by mean score, best first (see the module docs), then by
/// the conservative rating, then by name.
fn ranked(mut rows: Vec<BotStanding>) -> Vec<BotStanding> {
    rows.sort_by(|x, y| {
        order_score(x)
            .total_cmp(&order_score(y))
            .then_with(|| y.conservative.total_cmp(&x.conservative))
            .then_with(|| x.bot.cmp(&y.bot))
    });
    rows
}

/// What the standings are ordered by, lower first: the adjusted loss rate (Schocken,
/// Sjokken) or minus the adjusted chips (Zokken) where every match has adjusted scores;
/// else minus the net chips per 100 rounds (Zokken), or the mean place.
fn order_score(row: &BotStanding) -> f64 {
    match (row.adjusted, row.chips_per_100_rounds) {
        (Some(adjusted), Some(_)) => -adjusted.estimate,
        (Some(adjusted), None) => adjusted.estimate,
        (None, Some(chips)) => -chips.estimate,
        (None, None) => row.mean_place,
    }
}

/// Adds match `m` to the tallies of its bots and of every two of them.
fn tally_match<'a>(
    m: &'a PlayedMatch,
    basis: ScoreBasis,
    tallies: &mut BTreeMap<&'a str, Tally>,
    pairs: &mut BTreeMap<(&'a str, &'a str), PairTally>,
) {
    for (i, seat) in m.seats.iter().enumerate() {
        let t = tallies.entry(&seat.bot).or_default();
        t.matches += 1;
        t.place_sum += u64::from(seat.place);
        t.losses += u64::from(lost(m, i));
        t.seats_sum += m.seats.len() as u64;
        t.chips.push(chips_per_100(m, i));
        if basis == ScoreBasis::Adjusted {
            t.adjusted.push(score_on(m, i, basis));
        }
    }
    for (i, a) in m.seats.iter().enumerate() {
        for (j, b) in m.seats.iter().enumerate() {
            if a.bot >= b.bot {
                continue;
            }
            let e = pairs.entry((&a.bot, &b.bot)).or_default();
            e.matches += 1;
            e.a_above += u64::from(a.place < b.place);
            e.b_above += u64::from(b.place < a.place);
            let s = e.sets.entry(m.set).or_default();
            s.raw += score(m, i) - score(m, j);
            s.basis += score_on(m, i, basis) - score_on(m, j, basis);
            s.matches += 1;
        }
    }
}

/// The confidence sequence on the mean per set of `a - b` on `basis`: the exact betting
/// sequence for raw Schocken and Sjokken scores (a loss difference lies in `[-1, 1]`), the
/// mixture sequence otherwise (adjusted scores and chips have no known bound).
fn pair_sequence(game: Game, basis: ScoreBasis, tally: &PairTally) -> Bounds {
    let per_set = tally.sets.values().map(|s| s.basis / f64::from(s.matches));
    if basis == ScoreBasis::Raw && game != Game::Zokken {
        let mut sequence = BettingSequence::default();
        per_set.for_each(|d| sequence.push((d + 1.0) / 2.0));
        let b = sequence.bounds();
        Bounds {
            low: 2.0 * b.low - 1.0,
            high: 2.0 * b.high - 1.0,
        }
    } else {
        let mut sequence = MixtureSequence::default();
        per_set.for_each(|d| sequence.push(d));
        sequence.bounds()
    }
}

fn comparison(
    game: Game,
    basis: ScoreBasis,
    (a, b): (&str, &str),
    t: &PairTally,
) -> PairComparison {
    let per_set: Vec<f64> = t
        .sets
        .values()
        .map(|s| s.raw / f64::from(s.matches))
        .collect();
    PairComparison {
        a: a.to_owned(),
        b: b.to_owned(),
        matches: t.matches,
        a_above: t.a_above,
        b_above: t.b_above,
        sets: per_set.len() as u64,
        paired_difference: Interval::mean(&per_set),
        sequence: pair_sequence(game, basis, t),
    }
}

/// Each bot of `bots` (ranked) and the next below it, with their verdict.
fn neighbours(
    game: Game,
    bots: &[BotStanding],
    pairs: &[PairComparison],
    tallies: &BTreeMap<(&str, &str), PairTally>,
    margin: f64,
) -> Vec<Neighbours> {
    bots.windows(2)
        .map(|w| {
            let (above, below) = (w[0].bot.as_str(), w[1].bot.as_str());
            let (a, b) = if above < below {
                (above, below)
            } else {
                (below, above)
            };
            let pair = pairs.iter().find(|p| p.a == a && p.b == b);
            // `a - b` per set; "better" is lower for a loss, higher for chips.
            let better = if game == Game::Zokken { 1.0 } else { -1.0 };
            let sign = if a == above { better } else { -better };
            let (sets, mean, sequence) = match (pair, tallies.get(&(a, b))) {
                (Some(p), Some(t)) => {
                    let n = t.sets.len() as f64;
                    let mean = t
                        .sets
                        .values()
                        .map(|s| s.basis / f64::from(s.matches))
                        .sum::<f64>()
                        / n;
                    (p.sets, mean, p.sequence)
                }
                _ => (0, f64::NAN, Bounds::UNKNOWN),
            };
            let sequence = if sign > 0.0 {
                sequence
            } else {
                Bounds {
                    low: -sequence.high,
                    high: -sequence.low,
                }
            };
            Neighbours {
                above: above.to_owned(),
                below: below.to_owned(),
                sets,
                difference: sign * mean,
                sequence,
                verdict: PairVerdict::of(sets >= MIN_OBSERVATIONS, sequence, margin),
            }
        })
        .collect()
}

/// The standings of one game's matches (in schedule order).
fn game_standings(game: Game, matches: &[&PlayedMatch], margin: f64) -> GameStandings {
    let basis = if matches
        .iter()
        .all(|m| m.seats.iter().all(|s| s.adjusted.is_some()))
    {
        ScoreBasis::Adjusted
    } else {
        ScoreBasis::Raw
    };
    let mut ratings = Ratings::default();
    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    // (a, b) with a < b.
    let mut pair_tallies: BTreeMap<(&str, &str), PairTally> = BTreeMap::new();
    for m in matches {
        ratings.apply(&placed(m));
        tally_match(m, basis, &mut tallies, &mut pair_tallies);
    }
    let bots = ranked(
        tallies
            .iter()
            .map(|(bot, t)| standing(bot, t, ratings.get(bot), Some(game)))
            .collect(),
    );
    let pairs: Vec<PairComparison> = pair_tallies
        .iter()
        .map(|(&names, t)| comparison(game, basis, names, t))
        .collect();
    let neighbours = neighbours(game, &bots, &pairs, &pair_tallies, margin);
    GameStandings {
        game,
        matches: matches.len() as u64,
        bots,
        pairs,
        basis,
        margin,
        neighbours,
    }
}

/// The standings of `played` (any order: they are sorted into schedule order first), with
/// the default equivalence margins ([`Margins::default`]).
pub fn standings(played: &[PlayedMatch]) -> Standings {
    standings_with(played, &Margins::default())
}

/// The standings of `played` with the equivalence margins of a league file.
pub fn standings_with(played: &[PlayedMatch], margins: &Margins) -> Standings {
    let mut order: Vec<&PlayedMatch> = played.iter().collect();
    order.sort_by_key(|m| m.ordinal);
    let games = Game::ALL
        .into_iter()
        .filter_map(|game| {
            let matches: Vec<&PlayedMatch> =
                order.iter().copied().filter(|m| m.game == game).collect();
            (!matches.is_empty()).then(|| game_standings(game, &matches, margins.get(game)))
        })
        .collect();
    // The overall ratings take the matches of every game in schedule order.
    let mut overall_ratings = Ratings::default();
    let mut overall: BTreeMap<&str, Tally> = BTreeMap::new();
    for m in &order {
        overall_ratings.apply(&placed(m));
        for seat in &m.seats {
            let o = overall.entry(&seat.bot).or_default();
            o.matches += 1;
            o.place_sum += u64::from(seat.place);
        }
    }
    let overall = ranked(
        overall
            .iter()
            .map(|(bot, t)| standing(bot, t, overall_ratings.get(bot), None))
            .collect(),
    );
    Standings { games, overall }
}

/// One bot's rating after each of its matches: the ratings over time.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingSeries {
    /// The bot.
    pub bot: String,
    /// After each match it played: the match's number among the matches replayed (from 1)
    /// and the bot's rating after it.
    pub points: Vec<(usize, Rating)>,
}

/// The ratings over time of the matches of `game` (all games: `None`) in `played`: the
/// results replayed in schedule order through the very rating the standings use (the last
/// point of each bot is its rating in the standings). Bots by name.
pub fn rating_history(played: &[PlayedMatch], game: Option<Game>) -> Vec<RatingSeries> {
    let mut order: Vec<&PlayedMatch> = played
        .iter()
        .filter(|m| game.is_none_or(|g| m.game == g))
        .collect();
    order.sort_by_key(|m| m.ordinal);
    let mut ratings = Ratings::default();
    let mut series: BTreeMap<&str, Vec<(usize, Rating)>> = BTreeMap::new();
    for (i, m) in order.iter().enumerate() {
        let seats = placed(m);
        ratings.apply(&seats);
        for (bot, _) in &seats {
            series
                .entry(bot)
                .or_default()
                .push((i + 1, ratings.get(bot)));
        }
    }
    series
        .into_iter()
        .map(|(bot, points)| RatingSeries {
            bot: bot.to_owned(),
            points,
        })
        .collect()
}
