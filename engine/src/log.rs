//! The match log: everything needed to replay and verify a match (RULES.md §6).

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::action::Action;
use crate::error::{ActionError, PenaltyError, SetupError};
use crate::event::Event;
use crate::penalty::{ForfeitReason, StrikeReason};
use crate::play::Match;
use crate::rules::Rules;
use crate::types::{DieMask, Seat};

/// One entry of a match log, in the order things happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LogEntry {
    /// A player's decision, as the referee accepted it.
    Decision {
        /// Who decided.
        seat: Seat,
        /// What.
        action: Action,
    },
    /// A throw with every die as it landed (the truth, including hidden dice).
    Throw {
        /// Who threw.
        seat: Seat,
        /// The round (0: opening throw-off).
        round: u32,
        /// The throw number within the round for that seat.
        throw: u8,
        /// The dice rolled.
        rolled: DieMask,
        /// All three dice after the throw.
        dice: [u8; 3],
    },
    /// A public event.
    Event {
        /// The event.
        event: Event,
    },
    /// The referee struck a seat (not public: only the log has it).
    Strike {
        /// Who.
        seat: Seat,
        /// Why.
        reason: StrikeReason,
    },
    /// The referee forfeited a seat; the public [`Event::Forfeited`] follows.
    Forfeit {
        /// Who.
        seat: Seat,
        /// Why.
        reason: ForfeitReason,
    },
}

/// A complete record of a match: rules, seed, seats and every throw, decision and event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchLog {
    /// The rules played.
    pub rules: Rules,
    /// The match seed the dice are drawn from.
    pub seed: u64,
    /// Number of seats.
    pub seats: u8,
    /// Everything that happened, in order.
    pub entries: Vec<LogEntry>,
}

/// Why a match log does not replay.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReplayError {
    /// The log's setup is not a valid match.
    #[error("the log's setup is invalid: {0}")]
    Setup(#[from] SetupError),
    /// A logged decision is illegal when replayed.
    #[error("log entry {index}: the decision {action} of {seat} is illegal on replay: {error}")]
    IllegalDecision {
        /// Index of the entry.
        index: usize,
        /// Who.
        seat: Seat,
        /// What.
        action: Action,
        /// Why the referee refuses it.
        error: ActionError,
    },
    /// A logged strike or forfeit is refused when replayed.
    #[error("log entry {index}: the penalty is refused on replay: {error}")]
    IllegalPenalty {
        /// Index of the entry.
        index: usize,
        /// Why the match refuses it.
        error: PenaltyError,
    },
    /// The replayed match differs from the log.
    #[error("log entry {index} was altered: the log says {logged}, the replay gives {replayed}")]
    Mismatch {
        /// Index of the first differing entry.
        index: usize,
        /// The entry in the log (JSON), or "nothing".
        logged: String,
        /// The entry of the replay (JSON), or "nothing".
        replayed: String,
    },
}

impl MatchLog {
    /// Replays the log from its rules, seed, decisions, strikes and forfeits, and checks that
    /// every throw, event and token move comes out exactly as logged. Returns the replayed
    /// match.
    pub fn replay(&self) -> Result<Match, ReplayError> {
        let mut replay = Match::new_with_log(self.rules.clone(), self.seed, self.seats as usize)?;
        for (index, entry) in self.entries.iter().enumerate() {
            if replay.is_over() {
                break;
            }
            let penalty = match *entry {
                LogEntry::Decision { seat, action } => {
                    replay
                        .apply(seat, action)
                        .map_err(|error| ReplayError::IllegalDecision {
                            index,
                            seat,
                            action,
                            error,
                        })?;
                    Ok(())
                }
                LogEntry::Strike { seat, reason } => replay.strike(seat, reason),
                LogEntry::Forfeit { seat, reason } => replay.forfeit(seat, reason).map(|_| ()),
                LogEntry::Throw { .. } | LogEntry::Event { .. } => Ok(()),
            };
            penalty.map_err(|error| ReplayError::IllegalPenalty { index, error })?;
        }
        let replayed = replay
            .log()
            .map(|log| log.entries.as_slice())
            .unwrap_or(&[]);
        let len = replayed.len().max(self.entries.len());
        for index in 0..len {
            let (a, b) = (self.entries.get(index), replayed.get(index));
            if a != b {
                let show = |e: Option<&LogEntry>| {
                    e.map_or_else(
                        || "nothing".to_owned(),
                        |e| serde_json::to_string(e).unwrap_or_default(),
                    )
                };
                return Err(ReplayError::Mismatch {
                    index,
                    logged: show(a),
                    replayed: show(b),
                });
            }
        }
        Ok(replay)
    }

    /// The log as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a match log always serializes")
    }

    /// Parses a log from JSON.
    pub fn from_json(json: &str) -> Result<MatchLog, serde_json::Error> {
        serde_json::from_str(json)
    }
}

/// Where a game state writes what happens: the step's public events, and, when the match
/// records its log, the log entries.
pub(crate) struct Sink<'a> {
    pub(crate) events: &'a mut Vec<Event>,
    pub(crate) log: Option<&'a mut Vec<LogEntry>>,
}

impl Sink<'_> {
    #[inline(always)]
    pub(crate) fn event(&mut self, event: Event) {
        if let Some(log) = self.log.as_deref_mut() {
            log.push(LogEntry::Event { event });
        }
        self.events.push(event);
    }

    #[inline]
    pub(crate) fn throw(
        &mut self,
        seat: Seat,
        round: u32,
        throw: u8,
        rolled: DieMask,
        dice: [u8; 3],
    ) {
        if let Some(log) = self.log.as_deref_mut() {
            log.push(LogEntry::Throw {
                seat,
                round,
                throw,
                rolled,
                dice,
            });
        }
    }
}
