//! Typed errors. Messages are lowercase, name the bad value and say what would be legal.

use thiserror::Error;

use crate::rules::{Game, PRESETS};
use crate::types::{DICE, Seat};

/// A die slot from untrusted input that does not name one of the three dice.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DieSlotError {
    /// A slot outside 0..=2.
    #[error("cannot use die {slot}: dice are numbered 0..={}", DICE - 1)]
    OutOfRange {
        /// The slot that was named.
        slot: u32,
    },
    /// A slot named twice in one list.
    #[error("die {slot} is named twice: name each die at most once")]
    Repeated {
        /// The slot that was named twice.
        slot: u32,
    },
}

/// A preset, variant or setting that does not exist or is out of bounds.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RulesError {
    /// An unknown game name.
    #[error("unknown game {}: games are {}", quoted(name), Game::ALL.map(Game::name).join(", "))]
    UnknownGame {
        /// The name given.
        name: String,
    },
    /// An unknown preset name.
    #[error("unknown preset {}: presets are {}", quoted(name), PRESETS.join(", "))]
    UnknownPreset {
        /// The name given.
        name: String,
    },
    /// A variant this game does not have.
    #[error("{game} has no variant {}: its variants are [{legal}]", quoted(name))]
    UnknownVariant {
        /// The game of the rules.
        game: Game,
        /// The name given.
        name: String,
        /// The variants the game has.
        legal: String,
    },
    /// A numeric setting this game does not have.
    #[error("{game} has no setting {}", quoted(name))]
    UnknownSetting {
        /// The game of the rules.
        game: Game,
        /// The name given.
        name: String,
    },
    /// A numeric setting out of its bounds.
    #[error(
        "{} = {value} is out of range: it must be {min}..={max}",
        bounded(name)
    )]
    OutOfRange {
        /// The setting.
        name: String,
        /// The value given.
        value: u32,
        /// Smallest legal value.
        min: u32,
        /// Largest legal value.
        max: u32,
    },
}

/// A match that cannot be set up.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SetupError {
    /// Too few or too many seats.
    #[error("cannot seat {seats} players: a match has {min}..={max} seats")]
    Seats {
        /// The number asked for.
        seats: usize,
        /// The fewest seats.
        min: usize,
        /// The most seats.
        max: usize,
    },
    /// A numeric setting of the rules is out of its bounds (rules that did not come
    /// through [`Rules::set_number`](crate::Rules::set_number), e.g. read from a match log).
    #[error("the rules are out of bounds: {0}")]
    Rules(#[from] RulesError),
}

/// An action the referee refuses. The match state is unchanged when `apply` returns one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ActionError {
    /// The match has ended.
    #[error("the match is over: no action is legal")]
    MatchOver,
    /// A seat that is not at the table.
    #[error("{seat} is not at the table: seats are 0..={last}")]
    NoSuchSeat {
        /// The seat named.
        seat: Seat,
        /// The highest seat number.
        last: u8,
    },
    /// The seat is not one the referee is waiting for.
    #[error("{seat} cannot act now: waiting for {waiting}")]
    NotYourTurn {
        /// The seat that tried to act.
        seat: Seat,
        /// The seats that may act, e.g. "seat 1".
        waiting: String,
    },
    /// An action of the wrong kind for this decision (a bet while rerolling, ...).
    #[error("cannot {action} now: legal actions are {legal}")]
    WrongKind {
        /// What was tried, e.g. "bet".
        action: &'static str,
        /// The kinds of action that are legal now.
        legal: &'static str,
    },
    /// A reroll naming no dice where at least one is required.
    #[error("cannot reroll no dice: name at least one die to reroll, or stop")]
    EmptyReroll,
    /// A reroll after the last allowed throw.
    #[error("cannot reroll: {throws} of {limit} allowed throws are used, the turn can only stop")]
    NoThrowLeft {
        /// Throws used.
        throws: u8,
        /// Throws allowed.
        limit: u8,
    },
    /// A reroll of a die that was turned earlier in the turn.
    #[error(
        "cannot reroll die {slot}: it was turned to a one and stays held for the rest of the turn"
    )]
    RerollTurned {
        /// The die named.
        slot: usize,
    },
    /// A die named both to turn and to reroll.
    #[error("cannot both turn and reroll die {slot}: a turned die is held")]
    TurnAndReroll {
        /// The die named.
        slot: usize,
    },
    /// A die that cannot be turned now.
    #[error("cannot turn die {slot}: {reason}; turnable dice now are {turnable}")]
    NotTurnable {
        /// The die named.
        slot: usize,
        /// Why not.
        reason: &'static str,
        /// The dice that could be turned, e.g. "{0, 2}" or "none".
        turnable: String,
    },
    /// More sixes turned than the throw allows.
    #[error("cannot turn {count} sixes: at most {max} may be turned after this throw")]
    TooManyTurned {
        /// Dice named.
        count: usize,
        /// Most allowed.
        max: usize,
    },
    /// Turning without rerolling where turning is part of a reroll.
    #[error(
        "cannot turn sixes and stop: turning is part of a reroll here (variant turn_on_last_throw allows it); reroll at least one other die, or stop without turning"
    )]
    TurnNeedsReroll,
    /// Too many dice rerolled in Zokken.
    #[error("cannot reroll {count} dice: at most {max} may be rerolled, at least one die stays")]
    TooManyRerolled {
        /// Dice named.
        count: usize,
        /// Most allowed.
        max: usize,
    },
    /// A betting action that is not legal now.
    #[error("cannot {action}: {reason}; legal actions are {legal}")]
    Betting {
        /// What was tried.
        action: &'static str,
        /// Why not.
        reason: &'static str,
        /// What is legal now, e.g. "call, raise, fold".
        legal: String,
    },
    /// A seat that folded tried to act.
    #[error("{seat} has folded and cannot act until the next round")]
    Folded {
        /// The seat.
        seat: Seat,
    },
    /// A seat sent its reroll choice twice.
    #[error("{seat} has already chosen its reroll for this throw")]
    AlreadyChosen {
        /// The seat.
        seat: Seat,
    },
}

/// Formats a list of seats for an error message: "seat 1" or "seats 0, 2".
pub(crate) fn seats_text(seats: impl Iterator<Item = Seat>) -> String {
    let list: Vec<String> = seats.map(|s| s.0.to_string()).collect();
    match list.len() {
        0 => "nobody".to_owned(),
        1 => format!("seat {}", list[0]),
        _ => format!("seats {}", list.join(", ")),
    }
}

/// A strike or forfeit the match refuses (see [`Match::strike`](crate::Match::strike) and
/// [`Match::forfeit`](crate::Match::forfeit)). Nothing is recorded when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PenaltyError {
    /// The match has ended: its outcome is final.
    #[error("the match is over: no strike or forfeit can be given")]
    MatchOver,
    /// A seat that is not at the table.
    #[error("{seat} is not at the table: seats are 0..={last}")]
    NoSuchSeat {
        /// The seat named.
        seat: Seat,
        /// The highest seat number.
        last: u8,
    },
    /// The seat has already forfeited; the first forfeit stands and a forfeited seat is
    /// not struck.
    #[error("{seat} has already forfeited ({reason}): the first forfeit stands")]
    Forfeited {
        /// The seat.
        seat: Seat,
        /// Why it forfeited first.
        reason: crate::penalty::ForfeitReason,
    },
}

/// At most this many characters of a name are quoted in an error message.
pub const QUOTED_CHARS: usize = 64;

/// `text` as an error message quotes it: Debug-quoted, at most [`QUOTED_CHARS`] characters
/// of it, then "..." and its length in bytes.
pub fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        None => format!("{text:?}"),
        Some((at, _)) => format!("{:?}... ({} bytes)", &text[..at], text.len()),
    }
}

/// `text` as an error message shows it unquoted: at most [`QUOTED_CHARS`] characters, then
/// "..." and its length in bytes.
pub fn bounded(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}... ({} bytes)", &text[..at], text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_list_the_legal_ones() {
        let game = RulesError::UnknownGame {
            name: "poker".to_owned(),
        };
        assert_eq!(
            game.to_string(),
            "unknown game \"poker\": games are schocken, sjokken, zokken"
        );
        let preset = RulesError::UnknownPreset {
            name: "poker".to_owned(),
        };
        assert_eq!(
            preset.to_string(),
            "unknown preset \"poker\": presets are schocken, schocken-typenclub, sjokken, zokken"
        );
    }
}
