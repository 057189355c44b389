//! The statistical-efficiency measure of the `league_efficiency` bench (and of
//! `arena/tests/league_efficiency.rs`): leagues of a field of known strength, played with
//! duplicate sets and with independent seeds, and whether their orderings rank the field
//! in its true order.

use knobel_arena::league::schedule::mix;
use knobel_arena::league::simulate::{PlayerFactory, play_schedule};
use knobel_arena::league::{LeagueConfig, PlayedMatch, ScheduledMatch, expand, standings};
use knobel_engine::Game;
use knobel_engine::policy::HANDICAP_LADDER;

/// The orderings compared: the standings' own order (mean score), the match-by-match
/// Weng-Lin rating (conservative), and a Weng-Lin rating with one update per duplicate set
/// (each bot placed by its score summed over the set's matches).
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

pub const STATS: [&str; 3] = ["standings (mean score)", "rating", "set rating"];

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
            "name = \"efficiency\"\nseed = {seed}\nbots = [{}]\nrepetitions = {repetitions}\n\
             [games.{}]\ntable_size = {}\n{settings}",
            bots.join(", "),
            self.game.name(),
            table_size(self.game)
        );
        let config = LeagueConfig::from_toml(&text).expect("a valid league file");
        let bots: Vec<String> = self.field.iter().map(|b| (*b).to_owned()).collect();
        expand(&config, &bots).expect("a schedule")
    }

    /// Per ordering of [`STATS`]: whether it ranks the field in its order, and how many
    /// adjacent pairs it does.
    pub fn check(&self, played: &[PlayedMatch]) -> Vec<(bool, usize)> {
        orders(played)
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
                let played = play_schedule(s, players);
                grid.iter()
                    .map(|&r| {
                        self.check(&played[..r as usize * per_rep])
                            .into_iter()
                            .map(|(all, adj)| (u64::from(all), adj as u64))
                            .collect()
                    })
                    .collect()
            })
            .collect()
    }
}

/// The same matches, each with its own seed.
pub fn independent(mut schedule: Vec<ScheduledMatch>) -> Vec<ScheduledMatch> {
    for m in &mut schedule {
        m.seed = mix(m.seed, 0x1d_0000 + u64::from(m.ordinal));
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

/// The bots ordered by each of [`STATS`].
fn orders(played: &[PlayedMatch]) -> Vec<Vec<String>> {
    let s = standings(played);
    let bots = &s.games[0].bots;
    let standings_order: Vec<String> = bots.iter().map(|b| b.bot.clone()).collect();
    let mut by_rating: Vec<(&str, f64)> = bots
        .iter()
        .map(|b| (b.bot.as_str(), b.conservative))
        .collect();
    by_rating.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(y.0)));
    // Per set: bot -> summed score.
    let mut sets: std::collections::BTreeMap<u32, std::collections::BTreeMap<&str, f64>> =
        Default::default();
    for m in played {
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
    vec![standings_order, names(by_rating), names(by_set_rating)]
}

/// Counts, per mode (0: duplicate, 1: independent), grid point and ordering of [`STATS`]:
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
