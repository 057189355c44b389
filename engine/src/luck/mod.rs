//! Luck-adjusted scores (issue 23): an AIVAT-style correction of a match's scores for the
//! luck of its dice.
//!
//! For every throw of a match (every chance event), a value function `V` gives every seat's
//! expected score in the state right after the throw. The throw's **luck term** for a seat
//! is `V(after) - E[V(after) | before]`, the expectation taken exactly over every way the
//! dice rolled in that throw could have landed (each equally likely). A seat's **adjusted
//! score** is its match score minus [`coefficient`] times the sum of its luck terms.
//!
//! Whatever the bots do, each term has mean zero given everything before its throw (the dice
//! of a throw are uniform whatever was decided before it), so the adjusted score is an
//! unbiased estimate of a bot's expected score, for every bot. Only dice enter `V` and the
//! expectation: a bot's own decisions are never counted as luck. A better `V` only makes the
//! adjusted score less noisy; `V` is fixed in code, versioned by [`LUCK_VERSION`], and never
//! fitted to a league's results.
//!
//! The score is the one the arena's standings use per seat: in Schocken and Sjokken whether
//! the seat lost the match (1) or not (0); in Zokken its net chips per 100 rounds. `V` is on
//! the same scale. How `V` is built for each game: [`shake`] (Schocken, Sjokken) and
//! [`zokken`] (Zokken); docs/luck.md explains it for a reader without the code. The throws
//! of the opening throw-off (round 0, who starts) are not corrected: leaving a chance event
//! out keeps the adjusted score unbiased, it only leaves that event's luck in it.

mod shake;
mod zokken;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::event::Event;
use crate::log::{LogEntry, MatchLog};
use crate::rules::{Game, Rules};
use crate::types::{MAX_SEATS, Seat};

/// The version of the value functions and of the scores they are on. A league stores it with
/// its adjusted scores: scores of different versions must not be mixed. Raise it whenever a
/// change could change any luck term.
pub const LUCK_VERSION: &str = "luck-1";

/// Which per-match score the luck is measured on (`V` is on the same scale).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LuckScale {
    /// The score of the standings' loss rate and paired difference: 1 if the seat lost the
    /// match, else 0 (Schocken, Sjokken); net chips per 100 rounds (Zokken).
    Loss,
    /// The score the standings are ordered by: the seat's place, 1 the best (Schocken,
    /// Sjokken); net chips per 100 rounds (Zokken, the same as [`LuckScale::Loss`]).
    Place,
}

/// The luck of one throw: the term of every seat (indexed by seat).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThrowLuck {
    /// The index of the throw's entry in the match log.
    pub entry: usize,
    /// Who threw.
    pub seat: Seat,
    /// The round of the throw.
    pub round: u32,
    /// The throw number (as in the log).
    pub throw: u8,
    /// `V(after) - E[V(after) | before]` for every seat, on the score's scale.
    pub terms: Vec<f64>,
}

/// A match's scores, luck and luck-adjusted scores (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchLuck {
    /// [`LUCK_VERSION`].
    pub version: String,
    /// The game.
    pub game: Game,
    /// The coefficient the luck is scaled by ([`coefficient`]).
    pub coefficient: f64,
    /// The score's scale.
    pub scale: LuckScale,
    /// Every seat's match score on `scale`.
    pub scores: Vec<f64>,
    /// Every seat's sum of luck terms over the match.
    pub luck: Vec<f64>,
    /// `scores - coefficient * luck`, per seat.
    pub adjusted: Vec<f64>,
    /// The terms of every throw corrected, in the order of the log.
    pub throws: Vec<ThrowLuck>,
}

/// Why the luck of a match log cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LuckError {
    /// The log does not end with the match's end.
    #[error("the match log does not end the match: its luck is computed once it is over")]
    NotOver,
    /// A log entry names a seat the match does not have.
    #[error("log entry {index} names seat {seat}, but the match has {seats} seats")]
    NoSuchSeat {
        /// Index of the entry.
        index: usize,
        /// The seat named.
        seat: u8,
        /// Seats of the match.
        seats: u8,
    },
    /// A throw shows dice its game's dice cannot show.
    #[error("log entry {index}: the dice {dice:?} cannot be thrown in this game")]
    ImpossibleDice {
        /// Index of the entry.
        index: usize,
        /// The dice.
        dice: [u8; 3],
    },
    /// The entries do not follow one another as a match's do.
    #[error("log entry {index} does not follow from the entries before it: {reason}")]
    OutOfOrder {
        /// Index of the entry.
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
}

/// The coefficient the luck of `game` is scaled by in the adjusted score: 0.6 in Schocken
/// and Sjokken, 0.5 in Zokken.
///
/// Any fixed coefficient keeps the adjusted score unbiased; the best one is the one that
/// leaves the least variance, and that depends on how far the players differ from the
/// reference play `V` assumes (evenly matched players: about 0.8; a field of mixed
/// strengths: about 0.6). These were chosen from simulated matches of built-in players on
/// seeds disjoint from those the measurement of docs/luck.md uses, never from a league's
/// results, and are part of [`LUCK_VERSION`].
pub fn coefficient(game: Game) -> f64 {
    match game {
        Game::Schocken | Game::Sjokken => 0.6,
        Game::Zokken => 0.5,
    }
}

/// The scores, luck terms and luck-adjusted scores of a finished match on the
/// [`LuckScale::Loss`] scale (the score of the standings' paired difference), from its full
/// log (the truth of every die, hidden ones included: the arena computes this once the
/// match is over). The log is read as it is; it is not replayed ([`MatchLog::replay`]
/// verifies it).
pub fn match_luck(log: &MatchLog) -> Result<MatchLuck, LuckError> {
    match_luck_on(log, LuckScale::Loss)
}

/// [`match_luck`] on the given scale ([`LuckScale::Place`]: the places the standings are
/// ordered by). Each scale has its own `V` and terms; both are unbiased.
pub fn match_luck_on(log: &MatchLog, scale: LuckScale) -> Result<MatchLuck, LuckError> {
    check_seats(log)?;
    final_placings(log)?;
    let game = log.rules.game();
    let end = log.entries.len();
    let (scores, throws) = match &log.rules {
        Rules::Schocken(_) | Rules::Sjokken(_) => (
            shake::scores(log, scale)?,
            shake::throws(log, scale, 0..end)?,
        ),
        Rules::Zokken(rules) => zokken::luck(log, rules, 0..end)?,
    };
    let n = log.seats as usize;
    let mut luck = vec![0.0; n];
    for throw in &throws {
        for (sum, term) in luck.iter_mut().zip(&throw.terms) {
            *sum += term;
        }
    }
    let c = coefficient(game);
    let adjusted = scores.iter().zip(&luck).map(|(s, l)| s - c * l).collect();
    Ok(MatchLuck {
        version: LUCK_VERSION.to_owned(),
        game,
        coefficient: c,
        scale,
        scores,
        luck,
        adjusted,
        throws,
    })
}

/// Every seat a log's entries name is one of its seats.
fn check_seats(log: &MatchLog) -> Result<(), LuckError> {
    let seats = log.seats;
    let bad = |index: usize, seat: Seat| LuckError::NoSuchSeat {
        index,
        seat: seat.0,
        seats,
    };
    for (index, entry) in log.entries.iter().enumerate() {
        let named: Vec<Seat> = match entry {
            LogEntry::Decision { seat, .. }
            | LogEntry::Throw { seat, .. }
            | LogEntry::Strike { seat, .. }
            | LogEntry::Forfeit { seat, .. } => vec![*seat],
            LogEntry::Event { event } => event_seats(event),
        };
        if let Some(&seat) = named.iter().find(|s| s.0 >= seats) {
            return Err(bad(index, seat));
        }
        if let LogEntry::Event { event } = entry
            && let Some(other) = event_seat_sets(event).find(|s| s.0 >= seats)
        {
            return Err(bad(index, other));
        }
    }
    Ok(())
}

/// The seats an event names one by one (sets of seats: [`event_seat_sets`]).
fn event_seats(event: &Event) -> Vec<Seat> {
    match *event {
        Event::OpeningThrow { seat, .. }
        | Event::StarterChosen { seat }
        | Event::Thrown { seat, .. }
        | Event::Turned { seat, .. }
        | Event::Rerolled { seat, .. }
        | Event::Stopped { seat, .. }
        | Event::Revealed { seat, .. }
        | Event::SeatOut { seat }
        | Event::Sjok1 { seat, .. }
        | Event::HalfLost { seat, .. }
        | Event::Ante { seat, .. }
        | Event::RerollChosen { seat, .. }
        | Event::Betting { seat, .. }
        | Event::PotWon { seat, .. }
        | Event::Forfeited { seat, .. } => vec![seat],
        Event::HalfStarted { starter, .. } => vec![starter],
        Event::RoundStarted { starter, .. } => starter.into_iter().collect(),
        Event::RoundDecided { winner, loser, .. } => vec![winner, loser],
        Event::TokensMoved { from, to, .. } => from.into_iter().chain([to]).collect(),
        Event::ThrowLimitSet { .. } | Event::TieReplay { .. } | Event::MatchOver { .. } => {
            Vec::new()
        }
    }
}

/// The seats in the sets of seats an event carries.
fn event_seat_sets(event: &Event) -> impl Iterator<Item = Seat> {
    let set = match *event {
        Event::HalfStarted { seats, .. }
        | Event::RoundStarted { seats, .. }
        | Event::TieReplay { seats, .. } => seats,
        _ => crate::types::Seats::EMPTY,
    };
    set.iter()
}

/// The placings of the log's `MatchOver` event.
fn final_placings(log: &MatchLog) -> Result<Vec<u8>, LuckError> {
    log.entries
        .iter()
        .rev()
        .find_map(|entry| match entry {
            LogEntry::Event {
                event: Event::MatchOver { placings },
            } => Some(placings.to_vec()),
            _ => None,
        })
        .filter(|p| p.len() == log.seats as usize)
        .ok_or(LuckError::NotOver)
}

/// The luck terms of the throws among the entries `range` of a match log, finished or not
/// (the entries before the range are followed, not valued: the tests enumerate the
/// outcomes of one throw with it).
#[cfg(test)]
pub(crate) fn throws_in(
    log: &MatchLog,
    scale: LuckScale,
    range: std::ops::Range<usize>,
) -> Result<Vec<ThrowLuck>, LuckError> {
    check_seats(log)?;
    match &log.rules {
        Rules::Schocken(_) | Rules::Sjokken(_) => shake::throws(log, scale, range),
        Rules::Zokken(rules) => Ok(zokken::luck(log, rules, range)?.1),
    }
}

/// Per-seat values, indexed by seat (a fixed array: values are computed often).
pub(crate) type Values = [f64; MAX_SEATS];

#[cfg(test)]
mod tests;
