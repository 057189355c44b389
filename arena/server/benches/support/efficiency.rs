//! The statistical-efficiency measure of the `league_efficiency` bench (and of
//! `arena/server/tests/league_efficiency.rs`): leagues of a field of known strength, played with
//! duplicate sets and with independent seeds, and whether their orderings rank the field
//! in its true order.

use std::collections::BTreeMap;

use knobel_arena::league::simulate::{PlayerFactory, play_match, play_match_with_log};
use knobel_arena::league::{
    DiceMode, LeagueConfig, LeagueDice, LeagueSecret, PlayedMatch, ScheduledMatch, expand,
    standings,
};
use knobel_engine::policy::HANDICAP_LADDER;
use knobel_engine::{Event, Game, LogEntry, MatchLog, Seat, Seats};

/// Six deterministic built-in players of known, distinct strength, strongest first: the
/// heuristic, its handicapped versions ([`HANDICAP_LADDER`]) and `timid` between the last
/// two. Their decisions depend on nothing but what they see, so their only luck is the
/// dice.
pub const HANDICAPPED: [&str; 6] = [
    "heuristic",
    HANDICAP_LADDER[0],
    HANDICAP_LADDER[1],
    HANDICAP_LADDER[2],
    "timid",
    HANDICAP_LADDER[3],
];

/// The orderings compared in every game: the standings' own order (mean score), the
/// match-by-match Weng-Lin rating (conservative), and a Weng-Lin rating with one update per
/// duplicate set (each bot placed by its score summed over the set's matches).
pub const STATS: [&str; 3] = ["standings (mean score)", "rating", "set rating"];

/// Finer per-match scores tried for Schocken and Sjokken (lower is better), each also an
/// ordering (by its mean over a bot's matches): the rounds a seat lost, the tokens it took
/// (from the middle or from the round's winner; all of them on a Schock out), both per
/// round of the match, and the halves it lost (Schocken; the final counts as a half).
/// [`SCORES`]`[0]` is the standings' own score.
pub const SCORES: [&str; 6] = [
    "standings score",
    "rounds lost",
    "tokens taken",
    "rounds lost / round",
    "tokens taken / round",
    "halves lost",
];

/// The orderings measured in `game`: [`STATS`], and for Schocken and Sjokken the finer
/// scores of [`SCORES`] (halves lost in Schocken only).
pub fn stats(game: Game) -> Vec<String> {
    let scores = match game {
        Game::Zokken => 0,
        Game::Sjokken => SCORES.len() - 2,
        Game::Schocken => SCORES.len() - 1,
    };
    STATS
        .iter()
        .map(|s| (*s).to_owned())
        .chain(SCORES[1..=scores].iter().map(|s| format!("mean {s}")))
        .collect()
}

/// What a match's log tells beyond its result (Schocken, Sjokken): per seat the rounds it
/// lost, the tokens it took and the halves it lost; the rounds played; and per round its
/// starter, the seats in play and the loser (`None`: a SJOK1 round).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rounds {
    /// Rounds played.
    pub played: u32,
    /// Per seat: rounds lost.
    pub lost: Vec<u32>,
    /// Per seat: tokens taken.
    pub taken: Vec<u32>,
    /// Per seat: halves lost (Schocken).
    pub halves: Vec<u32>,
    /// Per round: (starter, seats in play, loser).
    pub keys: Vec<(Option<Seat>, Seats, Option<Seat>)>,
}

impl Rounds {
    /// Counted from the events of `log`.
    pub fn of(log: &MatchLog) -> Rounds {
        let n = usize::from(log.seats);
        let mut r = Rounds {
            lost: vec![0; n],
            taken: vec![0; n],
            halves: vec![0; n],
            ..Rounds::default()
        };
        for entry in &log.entries {
            let LogEntry::Event { event } = entry else {
                continue;
            };
            match *event {
                Event::RoundStarted { seats, starter, .. } => {
                    r.played += 1;
                    r.keys.push((starter, seats, None));
                }
                Event::RoundDecided { loser, .. } => {
                    r.lost[loser.index()] += 1;
                    if let Some(key) = r.keys.last_mut() {
                        key.2 = Some(loser);
                    }
                }
                Event::TokensMoved { to, count, .. } => r.taken[to.index()] += u32::from(count),
                Event::HalfLost { seat, .. } => r.halves[seat.index()] += 1,
                _ => {}
            }
        }
        r
    }
}

/// A played match: its result and what its log tells.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    /// The result, as the standings read it.
    pub result: PlayedMatch,
    /// Rounds lost, tokens taken, and so on.
    pub rounds: Rounds,
}

/// Plays `schedule` with `players`, in order. A match is logged and its [`Rounds`] counted
/// only in a game with finer scores (Schocken, Sjokken); Zokken's are left empty.
pub fn play(schedule: &[ScheduledMatch], players: PlayerFactory<'_>) -> Vec<Played> {
    schedule
        .iter()
        .map(|m| {
            if stats(m.game).len() == STATS.len() {
                return Played {
                    result: play_match(m, players),
                    rounds: Rounds::default(),
                };
            }
            let (result, log) = play_match_with_log(m, players);
            Played {
                result,
                rounds: Rounds::of(&log),
            }
        })
        .collect()
}

/// Seat `i`'s score `k` of [`SCORES`] in `p`, lower is better.
pub fn score(k: usize, p: &Played, i: usize) -> f64 {
    let r = &p.rounds;
    let per_round = |x: u32| f64::from(x) / f64::from(r.played.max(1));
    match k {
        0 => seat_score(&p.result, i),
        1 => f64::from(r.lost[i]),
        2 => f64::from(r.taken[i]),
        3 => per_round(r.lost[i]),
        4 => per_round(r.taken[i]),
        _ => f64::from(r.halves[i]),
    }
}

/// Per bot, its mean score `k` of [`SCORES`] over its matches in `played`.
pub fn mean_scores(k: usize, played: &[Played]) -> BTreeMap<&str, f64> {
    let mut sums: BTreeMap<&str, (f64, u32)> = BTreeMap::new();
    for p in played {
        for (i, seat) in p.result.seats.iter().enumerate() {
            let e = sums.entry(&seat.bot).or_default();
            e.0 += score(k, p, i);
            e.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(bot, (sum, n))| (bot, sum / f64::from(n)))
        .collect()
}

/// The seats of a table of `game` in the measure: 2 for Zokken, else 4.
pub fn table_size(game: Game) -> u32 {
    match game {
        Game::Zokken => 2,
        _ => 4,
    }
}

/// What is measured: a game, its field (strongest first) and, for Zokken, the rounds of a
/// match (`None`: the preset's).
#[derive(Clone, Debug)]
pub struct Setup<'a> {
    /// The game.
    pub game: Game,
    /// The players, strongest first (valid bot names of the player factory).
    pub field: &'a [&'a str],
    /// Zokken matches of this many rounds instead of the preset's.
    pub zokken_rounds: Option<u32>,
}

impl Setup<'_> {
    /// The round robin of the field with `repetitions` duplicate sets per table, league
    /// seed `seed`, as `expand` makes it.
    pub fn schedule(&self, seed: u64, repetitions: u32) -> Vec<ScheduledMatch> {
        let bots: Vec<String> = self.field.iter().map(|b| format!("\"{b}\"")).collect();
        let settings = match (self.game, self.zokken_rounds) {
            (Game::Zokken, Some(r)) => format!("settings = {{ rounds = {r} }}\n"),
            _ => String::new(),
        };
        let text = format!(
            "name = \"efficiency\"\nseed = {seed}\ndice = \"duplicate\"\nbots = [{}]\n\
             repetitions = {repetitions}\n\
             [games.{}]\ntable_size = {}\n{settings}",
            bots.join(", "),
            self.game.name(),
            table_size(self.game)
        );
        let config = LeagueConfig::from_toml(&text).expect("a valid league file");
        let bots: Vec<String> = self.field.iter().map(|b| (*b).to_owned()).collect();
        expand(&config, &bots, &LeagueDice::for_config(&config).0).expect("a schedule")
    }

    /// Per ordering of [`stats`]: whether it ranks the field in its order, and how many
    /// adjacent pairs it does. `results` are the results of `played`.
    pub fn check(&self, results: &[PlayedMatch], played: &[Played]) -> Vec<(bool, usize)> {
        orders(self.game, results, played)
            .into_iter()
            .map(|order| {
                let rank = |bot: &str| order.iter().position(|b| b == bot).expect("ranked");
                let adjacent = self
                    .field
                    .windows(2)
                    .filter(|w| rank(w[0]) < rank(w[1]))
                    .count();
                (order == self.field, adjacent)
            })
            .collect()
    }

    /// One league seed's [`Counts`] at each number of sets per table of `grid` (ascending):
    /// the league of `grid`'s last number is played once per mode and cut to each.
    pub fn tally(&self, seed: u64, grid: &[u32], players: PlayerFactory<'_>) -> Counts {
        let max = *grid.last().expect("a grid");
        let per_rep = self.schedule(0, 1).len();
        let base = self.schedule(seed, max);
        [base.clone(), independent(base)]
            .iter()
            .map(|s| {
                let played = play(s, players);
                let results: Vec<PlayedMatch> = played.iter().map(|p| p.result.clone()).collect();
                grid.iter()
                    .map(|&r| {
                        let n = r as usize * per_rep;
                        self.check(&results[..n], &played[..n])
                            .into_iter()
                            .map(|(all, adj)| (u64::from(all), adj as u64))
                            .collect()
                    })
                    .collect()
            })
            .collect()
    }
}

/// The same matches, each with its own seed: `dice = "independent"`'s derivation, keyed by
/// the set's seed.
pub fn independent(mut schedule: Vec<ScheduledMatch>) -> Vec<ScheduledMatch> {
    for m in &mut schedule {
        m.seed = LeagueSecret::from_public_seed(m.seed).match_seed(
            DiceMode::Independent,
            m.ordinal,
            m.set,
            1,
        );
    }
    schedule
}

/// A seat's score in one match, lower is better: its place (Schocken, Sjokken), or minus
/// its net chips per 100 rounds (Zokken).
fn seat_score(m: &PlayedMatch, i: usize) -> f64 {
    match m.game {
        Game::Zokken => {
            -(m.seats[i].chips.unwrap_or(0) as f64) * 100.0 / f64::from(m.rounds.max(1))
        }
        _ => f64::from(m.seats[i].place),
    }
}

/// The bots ordered by each of [`stats`]`(game)`, from `played` and its `results`.
fn orders(game: Game, results: &[PlayedMatch], played: &[Played]) -> Vec<Vec<String>> {
    let s = standings(results);
    let bots = &s.games[0].bots;
    let standings_order: Vec<String> = bots.iter().map(|b| b.bot.clone()).collect();
    let mut by_rating: Vec<(&str, f64)> = bots
        .iter()
        .map(|b| (b.bot.as_str(), b.conservative))
        .collect();
    by_rating.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(y.0)));
    // Per set: bot -> summed score.
    let mut sets: BTreeMap<u32, BTreeMap<&str, f64>> = BTreeMap::new();
    for m in results {
        for (i, seat) in m.seats.iter().enumerate() {
            *sets.entry(m.set).or_default().entry(&seat.bot).or_default() += seat_score(m, i);
        }
    }
    let mut ratings = knobel_arena::league::ratings::Ratings::default();
    for set in sets.values() {
        let seats: Vec<(&str, u8)> = set
            .iter()
            .map(|(bot, score)| {
                let place = 1 + set.values().filter(|x| *x < score).count() as u8;
                (*bot, place)
            })
            .collect();
        ratings.apply(&seats);
    }
    let mut by_set_rating: Vec<(&str, f64)> = bots
        .iter()
        .map(|b| (b.bot.as_str(), ratings.get(&b.bot).conservative()))
        .collect();
    by_set_rating.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(y.0)));
    let names = |v: Vec<(&str, f64)>| v.into_iter().map(|(b, _)| b.to_owned()).collect();
    let mut out = vec![standings_order, names(by_rating), names(by_set_rating)];
    for k in 1..=stats(game).len() - STATS.len() {
        let mut by_score: Vec<(&str, f64)> = mean_scores(k, played).into_iter().collect();
        by_score.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(y.0)));
        out.push(names(by_score));
    }
    out
}

/// Counts, per mode (0: duplicate, 1: independent), grid point and ordering of [`stats`]:
/// the leagues all in order, and the adjacent pairs in order.
pub type Counts = Vec<Vec<Vec<(u64, u64)>>>;

/// Adds `part` to `sum` (of the same shape).
pub fn add(sum: &mut Counts, part: &Counts) {
    for (a, b) in sum
        .iter_mut()
        .flatten()
        .flatten()
        .zip(part.iter().flatten().flatten())
    {
        a.0 += b.0;
        a.1 += b.1;
    }
}
