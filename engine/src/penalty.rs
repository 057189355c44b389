//! Penalties the referee gives: strikes and forfeits, and how a forfeit ranks.
//!
//! The engine does not watch clocks or connections; the referee does, and tells the match
//! with [`Match::strike`](crate::Match::strike) and [`Match::forfeit`](crate::Match::forfeit).
//! The match records them in its log (so that a replay checks them), counts them in its
//! [`Outcome`](crate::Outcome), and ranks forfeited seats after all others.
//!
//! Rules (documented in the rule book's appendix, `docs/rules.md`):
//! - A strike on a seat that has forfeited is refused: a forfeited seat is played by the
//!   referee's default actions and can no longer be struck.
//! - The first forfeit stands: a second forfeit of the same seat is refused and the first
//!   reason is kept.
//! - Neither is accepted once the match is over.
//! - Final placings: the seats that did not forfeit keep their order by the game's own
//!   placings; every forfeited seat is placed after all of them, and forfeited seats are
//!   ordered among themselves by their game placings. Equal keys share a place
//!   (competition ranking: 1, 1, 3).
//! - Tokens, chips, halves lost and the loser stay as played: they report the play as it
//!   went, the forfeited seat having been played by default actions from its forfeit on.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::types::{MAX_SEATS, Seat};

/// Why the referee struck a seat. Three strikes forfeit a seat (the arena's rule; the
/// engine only counts them).
///
/// New reasons may be added: code outside the engine that matches on it should keep a
/// catch-all arm where it can.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StrikeReason {
    /// No answer within the deadline and the time bank. Counted in
    /// [`Outcome::timeouts`](crate::Outcome::timeouts) too.
    Timeout,
    /// The answer was an action that is not legal now.
    IllegalAction,
    /// The answer could not be read as an action.
    Malformed,
}

impl StrikeReason {
    /// The reason's name, as the log and the database spell it.
    pub fn name(self) -> &'static str {
        match self {
            StrikeReason::Timeout => "timeout",
            StrikeReason::IllegalAction => "illegal_action",
            StrikeReason::Malformed => "malformed",
        }
    }
}

impl fmt::Display for StrikeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a seat forfeited. A forfeited seat is played by the referee's default actions to
/// the end of the match and placed after every seat that did not forfeit.
///
/// New reasons may be added: code outside the engine that matches on it should keep a
/// catch-all arm where it can (the wire has `FORFEIT_REASON_NONE = 0` and may grow).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForfeitReason {
    /// The seat reached the arena's strike limit.
    Strikes,
    /// The bot's connection closed or broke during the match.
    Disconnected,
    /// The bot stopped reading its messages (its outgoing queue filled up).
    NotReading,
    /// The bot's token was revoked during the match.
    Revoked,
    /// The bot never took its seat: it was gone before the match began.
    Absent,
}

impl ForfeitReason {
    /// Every reason, in a fixed order.
    pub const ALL: [ForfeitReason; 5] = [
        ForfeitReason::Strikes,
        ForfeitReason::Disconnected,
        ForfeitReason::NotReading,
        ForfeitReason::Revoked,
        ForfeitReason::Absent,
    ];

    /// The reason's name, as the log and the database spell it.
    pub fn name(self) -> &'static str {
        match self {
            ForfeitReason::Strikes => "strikes",
            ForfeitReason::Disconnected => "disconnected",
            ForfeitReason::NotReading => "not_reading",
            ForfeitReason::Revoked => "revoked",
            ForfeitReason::Absent => "absent",
        }
    }

    /// The reason named `name` (see [`ForfeitReason::name`]).
    pub fn from_name(name: &str) -> Option<ForfeitReason> {
        ForfeitReason::ALL.into_iter().find(|r| r.name() == name)
    }
}

impl fmt::Display for ForfeitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Per seat: strikes, timeouts and the forfeit, in fixed arrays (no allocation).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Penalties {
    pub(crate) strikes: [u32; MAX_SEATS],
    pub(crate) timeouts: [u32; MAX_SEATS],
    pub(crate) forfeits: [Option<ForfeitReason>; MAX_SEATS],
    /// Whether any seat has forfeited (the placings then need adjusting).
    pub(crate) any_forfeit: bool,
}

impl Penalties {
    pub(crate) fn strike(&mut self, seat: Seat, reason: StrikeReason) {
        let i = seat.index();
        self.strikes[i] = self.strikes[i].saturating_add(1);
        if reason == StrikeReason::Timeout {
            self.timeouts[i] = self.timeouts[i].saturating_add(1);
        }
    }

    pub(crate) fn forfeit(&mut self, seat: Seat, reason: ForfeitReason) {
        self.forfeits[seat.index()] = Some(reason);
        self.any_forfeit = true;
    }

    /// The final placings from the game's `placings`, written into `out`: forfeited seats
    /// after all others, ranked among themselves by their game place; equal keys share a
    /// place (competition ranking).
    pub(crate) fn final_placings(&self, placings: &[u8], out: &mut [u8]) {
        let key = |i: usize| (self.forfeits[i].is_some(), placings[i]);
        for (i, place) in out.iter_mut().enumerate().take(placings.len()) {
            *place = 1 + (0..placings.len()).filter(|&j| key(j) < key(i)).count() as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(placings: &[u8], forfeited: &[bool]) -> Vec<u8> {
        let mut p = Penalties::default();
        for (i, &f) in forfeited.iter().enumerate() {
            if f {
                p.forfeit(Seat(i as u8), ForfeitReason::Disconnected);
            }
        }
        let mut out = vec![0; placings.len()];
        p.final_placings(placings, &mut out);
        out
    }

    #[test]
    fn forfeited_seats_are_placed_last() {
        assert_eq!(placed(&[1, 1, 3, 4], &[false; 4]), [1, 1, 3, 4]);
        assert_eq!(
            placed(&[1, 1, 3, 4], &[true, false, false, false]),
            [4, 1, 2, 3]
        );
        assert_eq!(placed(&[1, 2, 2], &[false, true, true]), [1, 2, 2]);
        assert_eq!(placed(&[3, 1, 1], &[true, true, false]), [3, 2, 1]);
        assert_eq!(placed(&[1, 1, 1], &[true, true, true]), [1, 1, 1]);
    }

    #[test]
    fn reasons_have_stable_names() {
        for reason in ForfeitReason::ALL {
            assert_eq!(ForfeitReason::from_name(reason.name()), Some(reason));
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(json, format!("\"{}\"", reason.name()));
        }
        assert_eq!(ForfeitReason::from_name("bored"), None);
        assert_eq!(
            serde_json::to_string(&StrikeReason::IllegalAction).unwrap(),
            "\"illegal_action\""
        );
    }
}
