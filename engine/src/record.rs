//! The public record of a match: what every seat saw, and nothing else.
//!
//! A match log holds the truth (the seed and every die as thrown, hidden ones included). Its
//! public record holds the rules, the number of seats and the match's public events, in order:
//! the events every seat received as the match went on (a die under the cup or a blind die is
//! `None` in them), the hands revealed at each round's end, and the final placings. It has no
//! seed, no throw entries, no decisions and no strikes. The arena serves a match's record
//! where its full log may not be served yet (docs/fair-play.md).

use serde::{Deserialize, Serialize};

use crate::event::Event;
use crate::log::{LogEntry, MatchLog};
use crate::rules::Rules;

/// The version of the public record's JSON layout, in its `format_version` field.
pub const RECORD_FORMAT_VERSION: u32 = 1;

/// A match's public record (see the module documentation). Built only by
/// [`MatchLog::public_record`], from the events the match sent to every seat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicRecord {
    /// The layout version, [`RECORD_FORMAT_VERSION`].
    pub format_version: u32,
    /// The rules played.
    pub rules: Rules,
    /// Number of seats.
    pub seats: u8,
    /// The public events, in the order they happened.
    pub events: Vec<Event>,
}

impl MatchLog {
    /// The public record of this match: its rules, seats and public events, without the
    /// seed, the throws (the truth of hidden dice), the decisions and the strikes.
    pub fn public_record(&self) -> PublicRecord {
        PublicRecord {
            format_version: RECORD_FORMAT_VERSION,
            rules: self.rules.clone(),
            seats: self.seats,
            events: self
                .entries
                .iter()
                .filter_map(|entry| match entry {
                    LogEntry::Event { event } => Some(*event),
                    _ => None,
                })
                .collect(),
        }
    }
}

impl PublicRecord {
    /// The record as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a public record always serializes")
    }
}
