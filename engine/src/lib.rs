//! The Knobel engine: a pure, deterministic referee for the pub dice games **Schocken**,
//! **Sjokken** and **Zokken**, exactly as the project's `RULES.md` states them.
//!
//! - [`Rules`] names a game, a preset and its variants.
//! - [`Match`] is one match: who must act ([`Match::to_act`]), what they may do
//!   ([`Match::legal_actions`]), [`Match::apply`] with typed [`ActionError`]s, what each
//!   player may see ([`Match::observe`]), public [`Event`]s and the [`Outcome`].
//! - Dice come from a [`DiceSource`] keyed by (seed, seat, round, throw, die slot), so the
//!   same rules, seed and decisions replay the same match; a [`MatchLog`] records and
//!   verifies it.
//! - The referee's penalties ([`Match::strike`], [`Match::forfeit`]) are part of the match:
//!   logged, replayed, counted in the [`Outcome`], and forfeited seats rank last.
//! - [`policy`] has the built-in players used by tests, benchmarks and the simulator.
//!
//! The engine does no I/O, reads no clock and uses no global randomness.
#![warn(missing_docs)]

mod action;
mod dice;
mod error;
mod event;
mod hand;
mod log;
pub mod luck;
mod penalty;
mod play;
pub mod policy;
mod record;
mod rules;
mod shake;
mod types;
mod zokken;

pub use action::Action;
pub use dice::{DiceKey, DiceScript, DiceSource};
pub use error::{
    ActionError, DieSlotError, PenaltyError, QUOTED_CHARS, RulesError, SetupError, bounded, quoted,
};
pub use event::Event;
pub use hand::{Hand, MIWIN_FACES, MIWIN_NAMES, sorted_desc};
pub use log::{LOG_FORMAT_VERSION, LogEntry, LogError, MatchLog, ReplayError};
pub use luck::{
    LUCK_VERSION, LuckError, LuckScale, MatchLuck, ThrowLuck, match_luck, match_luck_on,
};
pub use penalty::{ForfeitReason, StrikeReason};
pub use play::{Match, Observation, Outcome};
pub use record::{PublicRecord, RECORD_FORMAT_VERSION};
pub use rules::{Game, PRESETS, Rules, SchockenRules, SjokkenRules, ZokkenRules};
pub use shake::{ShakeDecision, ShakeObservation, TurnView};
pub use types::{DICE, DieMask, MAX_SEATS, MIN_SEATS, Placings, Seat, Seats};
pub use zokken::{ZokkenObservation, ZokkenPhase, ZokkenSeatStatus, ZokkenSeatView};
