//! Leagues that stop when their order is settled (`stop = "settled"` in the league file).
//!
//! Each two neighbours of a game's standings get a verdict from the anytime-valid
//! confidence sequence on their score difference over the sets both played
//! ([`super::confidence`]): **separated** (the sequence lies above zero: the one above is
//! known to be better), **equivalent** (it lies within the game's margin: they play alike,
//! to within the margin) or **open** (neither, or the sequence lies below zero: the order
//! by mean score over all matches contradicts the pair's own sets). A game is settled when no two
//! neighbours are open; a settled league stops when every game is settled, or when it has
//! played its budget. Because the sequences hold at every moment at once, stopping as soon as
//! they say so keeps their 95% guarantee.
//!
//! While it runs, the schedule is played adaptively ([`Plan::priority`]): first the
//! remaining seat orders of every table already begun (a table's seat orders are always
//! played complete), then the tables that seat a bot with no results yet, then those that
//! seat open neighbours, the most pairs of open neighbours first, each in schedule order;
//! tables that would decide nothing wait.

use std::collections::{BTreeSet, HashMap, HashSet};

use knobel_engine::Game;

use super::confidence::Bounds;
use super::standings::Standings;

/// When a league ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// When every scheduled match is played (the default).
    #[default]
    Fixed,
    /// When every two neighbours of every game are separated or equivalent, or the budget
    /// is played.
    Settled,
}

impl Stop {
    /// Its name in a league file.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Fixed => "fixed",
            Stop::Settled => "settled",
        }
    }
}

impl std::str::FromStr for Stop {
    type Err = String;

    fn from_str(s: &str) -> Result<Stop, String> {
        match s {
            "fixed" => Ok(Stop::Fixed),
            "settled" => Ok(Stop::Settled),
            other => Err(format!(
                "unknown stop {}: legal are \"fixed\" (play the whole schedule, the default) \
                 and \"settled\" (stop when the order is known)",
                knobel_engine::quoted(other)
            )),
        }
    }
}

/// Where two neighbours of the standings stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairVerdict {
    /// The one above is known to be better: their order is settled.
    Separated,
    /// Their difference is known to lie within the margin.
    Equivalent,
    /// Neither yet (or the one below is known to be better: the order shown is wrong, and
    /// stays open until the standings agree).
    Open,
}

impl PairVerdict {
    /// Every verdict.
    pub const ALL: [PairVerdict; 3] = [
        PairVerdict::Separated,
        PairVerdict::Equivalent,
        PairVerdict::Open,
    ];

    /// The verdict on how much better the bot above did than the bot below (positive: the
    /// order shown is right), whose confidence sequence is `sequence`, with equivalence
    /// margin `margin`; open unless `enough` observations were made. A sequence below zero
    /// says the order shown is wrong (the standings order by mean score over all matches,
    /// the sequence reads the pair's shared sets): open, not separated, unless it lies
    /// within the margin.
    pub fn of(enough: bool, sequence: Bounds, margin: f64) -> PairVerdict {
        if !enough {
            PairVerdict::Open
        } else if sequence.low > 0.0 {
            PairVerdict::Separated
        } else if sequence.low >= -margin && sequence.high <= margin {
            PairVerdict::Equivalent
        } else {
            PairVerdict::Open
        }
    }

    /// Its name on the wire, in the CLI, the pages and the metrics.
    pub fn name(self) -> &'static str {
        match self {
            PairVerdict::Separated => "separated",
            PairVerdict::Equivalent => "equivalent",
            PairVerdict::Open => "open",
        }
    }
}

/// The equivalence margin of each game, on its score's scale: the difference of two loss
/// rates (Schocken, Sjokken) or of net chips per 100 rounds (Zokken).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Margins([f64; 3]);

/// The default margin of Schocken and Sjokken: two percentage points of loss rate.
pub const DEFAULT_SHAKE_MARGIN: f64 = 0.02;
/// The default margin of Zokken: 10 chips per 100 rounds.
pub const DEFAULT_ZOKKEN_MARGIN: f64 = 10.0;
/// The largest margin a league file may set (larger would call every pair equivalent).
pub const MAX_MARGIN: f64 = 1_000.0;

impl Default for Margins {
    fn default() -> Margins {
        Margins([
            DEFAULT_SHAKE_MARGIN,
            DEFAULT_SHAKE_MARGIN,
            DEFAULT_ZOKKEN_MARGIN,
        ])
    }
}

impl Margins {
    /// The default margin of `game`.
    pub fn default_of(game: Game) -> f64 {
        Margins::default().get(game)
    }

    /// The margin of `game`.
    pub fn get(&self, game: Game) -> f64 {
        self.0[game as usize]
    }

    /// Sets the margin of `game`.
    pub fn set(&mut self, game: Game, margin: f64) {
        self.0[game as usize] = margin;
    }
}

/// What a settled league plays next, from its standings now.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// Every game of the league is settled.
    pub settled: bool,
    /// Per game, the open neighbours (names in order).
    open: HashSet<(Game, String, String)>,
    /// Games with a verdict yet to come (no results, an open pair, or a bot still to play).
    unsettled: BTreeSet<u8>,
    /// Per game, the bots with results in it.
    played: HashMap<Game, HashSet<String>>,
}

impl Plan {
    /// The plan of a league of `games` with `standings`.
    pub fn new(standings: &Standings, games: &[Game]) -> Plan {
        let mut plan = Plan::default();
        for &game in games {
            match standings.games.iter().find(|g| g.game == game) {
                None => {
                    plan.unsettled.insert(game as u8);
                }
                Some(g) => {
                    let bots = g.bots.iter().map(|b| b.bot.clone());
                    plan.played.entry(game).or_default().extend(bots);
                    for n in g
                        .neighbours
                        .iter()
                        .filter(|n| n.verdict == PairVerdict::Open)
                    {
                        plan.open.insert(pair(game, &n.above, &n.below));
                        plan.unsettled.insert(game as u8);
                    }
                }
            }
        }
        plan.settled = plan.unsettled.is_empty();
        plan
    }

    /// Takes the league's open matches, as (game, seats): a game in which one of them
    /// seats a bot with no results yet is not settled (its place in the order is unknown),
    /// whatever the verdicts of the bots that have played say.
    pub fn note_unplayed<'a>(&mut self, open: impl IntoIterator<Item = (Game, &'a [String])>) {
        for (game, seats) in open {
            if self.seats_unplayed(game, seats) {
                self.unsettled.insert(game as u8);
                self.settled = false;
            }
        }
    }

    /// When a match of `game` at a table of `seats` in a set that `begun` says was begun
    /// should be played, lower first: 0 if its set was begun, 1 if its table seats a bot
    /// with no results in `game` yet (every table of a game without results), `255 - n` if
    /// it seats `n` pairs of open neighbours (the more, the sooner: one set then tells about
    /// each of them), `None` if it would decide nothing.
    pub fn priority(&self, game: Game, seats: &[String], begun: bool) -> Option<u8> {
        if begun {
            return Some(0);
        }
        if self.seats_unplayed(game, seats) {
            return Some(1);
        }
        if !self.unsettled.contains(&(game as u8)) {
            return None;
        }
        let open_pairs: usize = seats
            .iter()
            .enumerate()
            .map(|(i, a)| {
                seats[i + 1..]
                    .iter()
                    .filter(|b| self.open.contains(&pair(game, a, b)))
                    .count()
            })
            .sum();
        (open_pairs > 0).then(|| u8::MAX - open_pairs.min(253) as u8)
    }

    /// Whether `seats` holds a bot with no results in `game` yet.
    fn seats_unplayed(&self, game: Game, seats: &[String]) -> bool {
        let played = self.played.get(&game);
        seats.iter().any(|b| !played.is_some_and(|p| p.contains(b)))
    }
}

fn pair(game: Game, x: &str, y: &str) -> (Game, String, String) {
    if x < y {
        (game, x.to_owned(), y.to_owned())
    } else {
        (game, y.to_owned(), x.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PlayedMatch, PlayedSeat, standings};

    #[test]
    fn a_verdict_needs_enough_observations_and_a_decided_sequence() {
        let b = |low, high| Bounds { low, high };
        assert_eq!(PairVerdict::of(false, b(0.1, 0.2), 0.02), PairVerdict::Open);
        assert_eq!(
            PairVerdict::of(true, b(0.1, 0.2), 0.02),
            PairVerdict::Separated
        );
        // The pair's own sets say the bot below is better: the order shown is wrong.
        assert_eq!(
            PairVerdict::of(true, b(-0.2, -0.1), 0.02),
            PairVerdict::Open
        );
        assert_eq!(
            PairVerdict::of(true, b(-0.015, -0.001), 0.02),
            PairVerdict::Equivalent
        );
        assert_eq!(
            PairVerdict::of(true, b(-0.01, 0.02), 0.02),
            PairVerdict::Equivalent
        );
        assert_eq!(
            PairVerdict::of(true, b(-0.03, 0.01), 0.02),
            PairVerdict::Open
        );
        assert_eq!(
            PairVerdict::of(true, Bounds::UNKNOWN, 0.02),
            PairVerdict::Open
        );
        // Within the margin and excluding zero: the order is known, so separated.
        assert_eq!(
            PairVerdict::of(true, b(0.001, 0.01), 0.02),
            PairVerdict::Separated
        );
    }

    #[test]
    fn stop_reads_its_two_names_and_refuses_others() {
        assert_eq!("settled".parse::<Stop>(), Ok(Stop::Settled));
        assert_eq!("fixed".parse::<Stop>(), Ok(Stop::Fixed));
        let e = "sometimes".parse::<Stop>().unwrap_err();
        assert!(
            e.contains("\"sometimes\"") && e.contains("\"settled\""),
            "{e}"
        );
    }

    /// A Zokken match of `a` against `b` in set `set` that `a` wins by 100 chips.
    fn zokken_match(set: u32, a: &str, b: &str) -> PlayedMatch {
        let seat = |bot: &str, place, chips: i64| PlayedSeat {
            bot: bot.to_owned(),
            place,
            chips: Some(chips),
            adjusted: Some(chips as f64),
        };
        PlayedMatch {
            ordinal: set,
            game: Game::Zokken,
            set,
            rounds: 100,
            seats: vec![seat(a, 1, 100), seat(b, 2, -100)],
        }
    }

    fn seats(bots: &[&str]) -> Vec<String> {
        bots.iter().map(|b| (*b).to_owned()).collect()
    }

    #[test]
    fn a_table_seating_a_bot_without_results_is_deciding() {
        let games = [Game::Zokken];
        // Only ada and bob have played, once: their pair is open.
        let open = standings(&[zokken_match(0, "ada", "bob")]);
        let plan = Plan::new(&open, &games);
        assert!(!plan.settled);
        let p = |bots: &[&str]| plan.priority(Game::Zokken, &seats(bots), false);
        assert_eq!(p(&["ada", "bob"]), Some(254));
        // cy has no results: her tables decide, though they seat no open pair.
        assert_eq!(p(&["ada", "cy"]), Some(1));
        assert_eq!(p(&["cy", "dan"]), Some(1));
        // ada and bob separated (a clear difference, over enough sets): their standings
        // alone look settled, but cy and dan are still to play.
        let played: Vec<PlayedMatch> = (0..20).map(|i| zokken_match(i, "ada", "bob")).collect();
        let mut plan = Plan::new(&standings(&played), &games);
        assert!(plan.settled);
        assert_eq!(
            plan.priority(Game::Zokken, &seats(&["ada", "bob"]), false),
            None
        );
        let cy = seats(&["bob", "cy"]);
        plan.note_unplayed([(Game::Zokken, cy.as_slice())]);
        assert!(!plan.settled);
        assert_eq!(plan.priority(Game::Zokken, &cy, false), Some(1));
        assert_eq!(
            plan.priority(Game::Zokken, &seats(&["ada", "bob"]), false),
            None
        );
        // Tables of bots that all played tell nothing new: the plan stays settled.
        let mut plan = Plan::new(&standings(&played), &games);
        let ab = seats(&["bob", "ada"]);
        plan.note_unplayed([(Game::Zokken, ab.as_slice())]);
        assert!(plan.settled);
    }

    #[test]
    fn tables_seating_more_open_pairs_come_first() {
        // Four bots at a table of four, in one set each: every pair has too few sets, so
        // all three neighbour pairs are open.
        let seat = |bot: &str, place| PlayedSeat {
            bot: bot.to_owned(),
            place,
            chips: None,
            adjusted: Some(f64::from(place)),
        };
        let played = PlayedMatch {
            ordinal: 0,
            game: Game::Schocken,
            set: 0,
            rounds: 0,
            seats: vec![seat("a", 1), seat("b", 2), seat("c", 3), seat("d", 4)],
        };
        let plan = Plan::new(&standings(&[played]), &[Game::Schocken]);
        let p = |bots: &[&str]| plan.priority(Game::Schocken, &seats(bots), false);
        assert_eq!(
            p(&["a", "b", "c", "d"]),
            Some(252),
            "three open pairs: a-b, b-c, c-d"
        );
        assert_eq!(p(&["a", "b", "d", "c"]), Some(252), "in any seat order");
        assert_eq!(p(&["a", "b"]), Some(254));
        assert_eq!(p(&["a", "c"]), None, "not neighbours");
        assert_eq!(
            plan.priority(Game::Schocken, &seats(&["a", "c"]), true),
            Some(0)
        );
    }
}
