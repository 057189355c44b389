//! The one boundary between engine types and the wire (house rule: one boundary for the
//! wire). Nothing else in the workspace builds protobuf values from engine values or back.
//!
//! **Engine to wire** (what the arena sends; cannot fail): `From` impls for [`Game`],
//! [`Action`], [`Hand`], [`Observation`] (and its parts), [`Event`] and [`Outcome`], plus
//! [`seats_to_wire`], [`mask_to_wire`], and the builders [`decision_request`],
//! [`match_start`] and [`match_result`].
//!
//! **Wire to engine** (untrusted input; never panics): `TryFrom` impls returning
//! [`WireError`]:
//! - what a bot sends: [`BotHello`] from [`pb::Hello`], [`BotDecision`] from
//!   [`pb::Decision`], [`Action`] from [`pb::Action`], [`Game`] from [`pb::Game`] (or
//!   [`game_from_wire`] for a raw enum field);
//! - what a Rust bot receives: [`Observation`], [`Event`], [`Hand`] and [`Outcome`], so that
//!   it can decide with engine types (for example with a built-in policy).
//!
//! Wire to engine to wire gives back the same message for everything the arena sends.
//!
//! The code is split by direction; every public item is re-exported here:
//! - `validate`: what a bot sends (Hello, Decision, Action, Game) and the field checks
//!   every wire-to-engine conversion uses (seats, die slots, dice, lengths);
//! - `encode` (with `encode/events.rs`): engine to wire, and the arena's message builders;
//! - `decode` (with `decode/events.rs`): wire to engine for what the arena sends
//!   (observations, events, hands, outcomes), as a bot client uses it;
//! - this file: [`WireError`] and the helpers its messages use.

use std::fmt::Write as _;
use std::sync::LazyLock;

#[cfg(doc)]
use knobel_engine::{Action, Event, Hand, Observation, Outcome};
use knobel_engine::{DICE, DieSlotError, Game, PRESETS};
use thiserror::Error;

use crate::v1 as pb;

mod decode;
mod encode;
mod validate;

pub use decode::forfeit_from_wire;
pub use encode::{
    arena_message, decision_request, decision_request_from, mask_to_wire, match_result,
    match_start, rules_settings, seats_to_wire,
};
pub use validate::{
    BotDecision, BotHello, game_from_wire, mask_from_wire, seat_from_wire, seats_from_wire,
};

/// The longest bot name a [`pb::Hello`] may carry, in characters (the one name rule:
/// [`crate::names`]).
pub const MAX_NAME_CHARS: usize = crate::names::MAX_NAME_CHARS;
/// The longest client version a [`pb::Hello`] may carry, in characters.
pub const MAX_CLIENT_VERSION_CHARS: usize = 64;

/// How much of an untrusted string an error message repeats.
const QUOTE_CHARS: usize = 40;

/// A wire value that does not make a valid engine value. Messages are lowercase, name the
/// field and the bad value, and say what would be legal.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// A required field or oneof is not set.
    #[error("{field} is missing: {expected}")]
    Missing {
        /// The field, e.g. `decision.action`.
        field: &'static str,
        /// What to set.
        expected: &'static str,
    },
    /// A list of die slots names a slot outside 0..=2, or one slot twice.
    #[error("{field}: {}", die_slot_text(verb, error))]
    DieSlot {
        /// The field, e.g. `reroll.dice`.
        field: &'static str,
        /// What the dice were named for: "reroll", "turn", ...
        verb: &'static str,
        /// The engine's complaint.
        error: DieSlotError,
    },
    /// `GAME_UNSPECIFIED` where a game is required.
    #[error("{field} is GAME_UNSPECIFIED: name a game: {}", game_values())]
    UnspecifiedGame {
        /// The field.
        field: &'static str,
    },
    /// An enum number this version of the contract does not know.
    #[error("{field} = {value} is not a known value: legal values are {legal}")]
    UnknownEnum {
        /// The field.
        field: &'static str,
        /// The number sent.
        value: i32,
        /// The legal numbers and their names.
        legal: &'static str,
    },
    /// A text or list that must not be empty.
    #[error("{field} is empty: {expected}")]
    Empty {
        /// The field.
        field: &'static str,
        /// What it must hold.
        expected: &'static str,
    },
    /// A bot name that breaks the name rule ([`crate::names`]).
    #[error("{field}: {error}")]
    Name {
        /// The field, e.g. `hello.name`.
        field: &'static str,
        /// The rule it breaks.
        error: crate::names::NameError,
    },
    /// A text of only spaces where a visible character is needed.
    #[error("{field} {value:?} is blank: it needs at least one visible character")]
    Blank {
        /// The field.
        field: &'static str,
        /// The text sent.
        value: String,
    },
    /// A text longer than allowed.
    #[error("{field} has {chars} characters: at most {max} are allowed")]
    TooLong {
        /// The field.
        field: &'static str,
        /// Its length in characters.
        chars: usize,
        /// The most allowed.
        max: usize,
    },
    /// A text with a control or invisible formatting character.
    #[error(
        "{field} has the unprintable character {code} at position {position}: use printable characters only"
    )]
    Unprintable {
        /// The field.
        field: &'static str,
        /// The character's position (in characters, from 0).
        position: usize,
        /// The character as `U+XXXX`.
        code: String,
    },
    /// A list of games naming one game twice.
    #[error("{field} names {game} twice: name each game once")]
    RepeatedGame {
        /// The field.
        field: &'static str,
        /// The game named twice.
        game: Game,
    },
    /// A preset name that does not exist.
    #[error("{field} {name:?} is not a preset: presets are {}", PRESETS.join(", "))]
    UnknownPreset {
        /// The field.
        field: &'static str,
        /// The name sent (shortened if long).
        name: String,
    },
    /// A preset wish for a game the bot does not play.
    #[error(
        "{field} {name:?} is a {game} preset, but hello.games does not name {game}: add {game} or wish for another preset"
    )]
    PresetNotPlayed {
        /// The field.
        field: &'static str,
        /// The preset.
        name: String,
        /// Its game.
        game: Game,
    },
    /// A number outside the range the engine allows.
    #[error("{field} = {value} is out of range: it must be {min}..={max}")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The number sent.
        value: i64,
        /// The smallest legal value.
        min: i64,
        /// The largest legal value.
        max: i64,
    },
    /// A list of the wrong length.
    #[error("{field} has {len} entries: it must have {expected}")]
    WrongLength {
        /// The field.
        field: &'static str,
        /// The entries sent.
        len: usize,
        /// How many it must have, e.g. "3" or "one per seat (4)".
        expected: String,
    },
    /// A hand whose values do not make the hand its kind names.
    #[error("{field}: {kind} with values {values} is not a hand: {expected}")]
    BadHand {
        /// The field.
        field: &'static str,
        /// The hand kind, e.g. "schock".
        kind: &'static str,
        /// The values sent (shortened if long).
        values: String,
        /// What the values of this kind must be.
        expected: &'static str,
    },
    /// A value of the wrong game, e.g. a Zokken game in a Schocken observation.
    #[error("{field} is {value}: it must be {expected}")]
    WrongGame {
        /// The field.
        field: &'static str,
        /// What was sent.
        value: String,
        /// What is legal there.
        expected: &'static str,
    },
}

/// Wire enum values with their names, for error messages: `1 (schocken), 2 (sjokken)`.
pub(crate) fn enum_values<T: Copy>(
    values: &[T],
    number: impl Fn(T) -> i32,
    name: impl Fn(T) -> String,
) -> String {
    let values: Vec<String> = values
        .iter()
        .map(|&value| format!("{} ({})", number(value), name(value)))
        .collect();
    values.join(", ")
}

/// The games as wire enum numbers with their names, for error messages:
/// `1 (schocken), 2 (sjokken), 3 (zokken)` (derived from [`Game::ALL`]).
pub(crate) fn game_values() -> &'static str {
    static TEXT: LazyLock<String> = LazyLock::new(|| {
        enum_values(
            &Game::ALL,
            |game| pb::Game::from(game) as i32,
            |game| game.to_string(),
        )
    });
    &TEXT
}

/// The engine's complaint about a die slot, saying what the dice were named for.
fn die_slot_text(verb: &str, error: &DieSlotError) -> String {
    match error {
        DieSlotError::OutOfRange { slot } => {
            format!(
                "cannot {verb} die {slot}: dice are numbered 0..={}",
                DICE - 1
            )
        }
        DieSlotError::Repeated { .. } => error.to_string(),
    }
}

/// The first [`QUOTE_CHARS`] characters of an untrusted text, for an error message.
pub(crate) fn quote(text: &str) -> String {
    let mut out: String = text.chars().take(QUOTE_CHARS).collect();
    if text.chars().nth(QUOTE_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// The first few numbers of an untrusted list, for an error message.
pub(crate) fn quote_list(values: &[u32]) -> String {
    let mut out = String::from("[");
    for (i, v) in values.iter().take(5).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{v}");
    }
    if values.len() > 5 {
        out.push_str(", …");
    }
    out.push(']');
    out
}
