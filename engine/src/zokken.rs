//! Zokken (RULES.md §4). Skeleton: being written.

use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::dice::DiceSource;
use crate::error::ActionError;
use crate::log::Sink;
use crate::play::Outcome;
use crate::rules::ZokkenRules;
use crate::types::{Seat, Seats};

/// Where a Zokken round stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZokkenPhase {
    /// Betting round `n` (1..=3).
    Betting(u8),
    /// Choosing the dice to reroll before throw `n` (2..=3).
    Choosing(u8),
    /// The match is over.
    Over,
}

/// What a player sees of one seat in Zokken (everything is public).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZokkenSeatView {
    /// Dice III, IV, V.
    pub dice: [u8; 3],
}

/// Everything one player of a Zokken match may see.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZokkenObservation {
    /// The observing seat.
    pub seat: Seat,
    /// Phase.
    pub phase: ZokkenPhase,
    /// Seats.
    pub seats: Vec<ZokkenSeatView>,
}

#[derive(Clone, Debug)]
pub(crate) struct ZokkenState {
    seats: u8,
}

impl ZokkenState {
    pub(crate) fn new(_rules: &ZokkenRules, _dice: DiceSource, seats: usize, _sink: &mut Sink) -> ZokkenState {
        ZokkenState { seats: seats as u8 }
    }
    pub(crate) fn to_act(&self) -> Seats {
        Seats::EMPTY
    }
    pub(crate) fn apply(&mut self, _seat: Seat, _action: Action, _sink: &mut Sink) -> Result<(), ActionError> {
        Err(ActionError::MatchOver)
    }
    pub(crate) fn legal_actions(&self, _seat: Seat, out: &mut Vec<Action>) {
        out.clear();
    }
    pub(crate) fn default_action(&self, _seat: Seat) -> Option<Action> {
        None
    }
    pub(crate) fn observe_into(&self, seat: Seat, out: &mut ZokkenObservation) {
        *out = self.observe(seat);
    }
    pub(crate) fn observe(&self, seat: Seat) -> ZokkenObservation {
        ZokkenObservation { seat, phase: ZokkenPhase::Over, seats: vec![ZokkenSeatView::default(); self.seats as usize] }
    }
    pub(crate) fn outcome(&self) -> Option<Outcome> {
        None
    }
    pub(crate) fn true_dice(&self, _seat: Seat) -> ([u8; 3], u8) {
        ([0; 3], 0)
    }
    pub(crate) fn net_chips_total(&self) -> i64 {
        0
    }
}
