//! What a player can do.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::types::DieMask;

/// A player's decision. Schocken and Sjokken use [`Action::Stop`] and [`Action::Reroll`];
/// Zokken uses [`Action::Reroll`] (with `turn` empty, and `dice` possibly empty: "keep all")
/// for its reroll choices and the betting actions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// End the turn, first turning the sixes in `turn` into ones (if the rules allow it).
    Stop {
        /// Sixes to turn into ones before stopping (usually empty).
        #[serde(default)]
        turn: DieMask,
    },
    /// Turn the sixes in `turn` into ones (held from then on), then throw the dice in `dice`
    /// again. In Zokken `dice` are the dice to reroll at the next throw and `turn` is empty.
    Reroll {
        /// Dice to throw again.
        dice: DieMask,
        /// Sixes to turn into ones first.
        #[serde(default)]
        turn: DieMask,
    },
    /// Zokken: pass without betting (no bet to call yet).
    Check,
    /// Zokken: open the betting.
    Bet,
    /// Zokken: match the current bet.
    Call,
    /// Zokken: raise the current bet by one bet size.
    Raise,
    /// Zokken: give up the round (only when facing a bet).
    Fold,
}

impl Action {
    /// A stop without turning.
    pub const STOP: Action = Action::Stop {
        turn: DieMask::EMPTY,
    };

    /// A reroll of `dice` without turning.
    pub fn reroll(dice: DieMask) -> Action {
        Action::Reroll {
            dice,
            turn: DieMask::EMPTY,
        }
    }

    /// The verb used in error messages.
    pub fn verb(&self) -> &'static str {
        match self {
            Action::Stop { .. } => "stop",
            Action::Reroll { .. } => "reroll",
            Action::Check => "check",
            Action::Bet => "bet",
            Action::Call => "call",
            Action::Raise => "raise",
            Action::Fold => "fold",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Stop { turn } if turn.is_empty() => write!(f, "stop"),
            Action::Stop { turn } => write!(f, "turn {turn} and stop"),
            Action::Reroll { dice, turn } if turn.is_empty() => write!(f, "reroll {dice}"),
            Action::Reroll { dice, turn } => write!(f, "turn {turn} and reroll {dice}"),
            other => f.write_str(other.verb()),
        }
    }
}
