//! The match log: everything needed to replay and verify a match (RULES.md §6).

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::action::Action;
use crate::error::{ActionError, PenaltyError, SetupError};
use crate::event::Event;
use crate::penalty::{ForfeitReason, StrikeReason};
use crate::play::Match;
use crate::rules::Rules;
use crate::types::{DieMask, MAX_SEATS, MIN_SEATS, Seat};

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

/// The version of the match log's JSON layout that [`MatchLog::to_json`] writes, in its
/// `format_version` field (documented by `docs/match-log.schema.json`). Raise it whenever a
/// change to the layout could make an older reader misread a log.
///
/// Format 0 is the unversioned layout written before the field existed: the same layout
/// without `format_version` (and without the kinds of entry added since, which a format-0
/// log simply does not contain). It is read as format 1.
pub const LOG_FORMAT_VERSION: u32 = 1;

/// A complete record of a match: rules, seed, seats and every throw, decision and event.
///
/// Reading a log (from JSON, [`MatchLog::from_json`] or any serde `Deserialize`) checks its
/// format version, its number of seats and the bounds of its rules ([`Rules::validate`]):
/// a log is untrusted input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawMatchLog")]
pub struct MatchLog {
    /// The layout version, [`LOG_FORMAT_VERSION`] (a format-0 log is read as the current
    /// format).
    pub format_version: u32,
    /// The rules played.
    pub rules: Rules,
    /// The match seed the dice are drawn from.
    pub seed: u64,
    /// Number of seats.
    pub seats: u8,
    /// Everything that happened, in order.
    pub entries: Vec<LogEntry>,
}

/// A match log as it is read, before its format, seats and rules are checked.
#[derive(Deserialize)]
struct RawMatchLog {
    /// Missing in the unversioned format 0.
    #[serde(default)]
    format_version: u32,
    rules: Rules,
    seed: u64,
    seats: u8,
    entries: Vec<LogEntry>,
}

impl TryFrom<RawMatchLog> for MatchLog {
    type Error = LogError;

    fn try_from(raw: RawMatchLog) -> Result<MatchLog, LogError> {
        // Format 0 has the layout of format 1 without the version field.
        if raw.format_version > LOG_FORMAT_VERSION {
            return Err(LogError::UnsupportedFormat {
                found: raw.format_version,
                supported: LOG_FORMAT_VERSION,
            });
        }
        if !(MIN_SEATS..=MAX_SEATS).contains(&(raw.seats as usize)) {
            return Err(LogError::Setup(SetupError::Seats {
                seats: raw.seats as usize,
                min: MIN_SEATS,
                max: MAX_SEATS,
            }));
        }
        raw.rules
            .validate()
            .map_err(|e| LogError::Setup(SetupError::Rules(e)))?;
        Ok(MatchLog {
            format_version: LOG_FORMAT_VERSION,
            rules: raw.rules,
            seed: raw.seed,
            seats: raw.seats,
            entries: raw.entries,
        })
    }
}

/// Why a match log cannot be read.
#[derive(Debug, Error)]
pub enum LogError {
    /// Not JSON, or not the layout of a match log.
    #[error("the match log is not valid JSON of a match log: {0}")]
    Json(#[from] serde_json::Error),
    /// A format version this engine does not know (written by a newer arena).
    #[error(
        "match log format {found} is not supported: this engine reads format {supported} \
         (and the unversioned format 0)"
    )]
    UnsupportedFormat {
        /// The log's `format_version`.
        found: u32,
        /// The format this engine writes and reads, [`LOG_FORMAT_VERSION`].
        supported: u32,
    },
    /// The log's seats or rules are out of the bounds a match can be set up with.
    #[error("the match log's setup is invalid: {0}")]
    Setup(SetupError),
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
    ///
    /// The rules are checked against the bounds of the settings first
    /// ([`ReplayError::Setup`] with [`SetupError::Rules`]), also for a log built in code.
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

    /// Parses a log from JSON, checking its format version, seats and rules (see
    /// [`MatchLog`]). A format-0 (unversioned) log is read as the current format.
    pub fn from_json(json: &str) -> Result<MatchLog, LogError> {
        let raw: RawMatchLog = serde_json::from_str(json)?;
        MatchLog::try_from(raw)
    }

    /// The `format_version` of a log's JSON without reading the rest of it (0 when the field
    /// is missing: the unversioned format).
    pub fn format_of(json: &str) -> Result<u32, LogError> {
        #[derive(Deserialize)]
        struct Version {
            #[serde(default)]
            format_version: u32,
        }
        Ok(serde_json::from_str::<Version>(json)?.format_version)
    }

    /// A log's JSON in the current format: unchanged if it is in it already, else (an
    /// unversioned format-0 log, e.g. one stored before the field existed) read and written
    /// again, so that it carries `format_version`.
    pub fn upgrade_json(json: &str) -> Result<std::borrow::Cow<'_, str>, LogError> {
        match MatchLog::format_of(json)? {
            LOG_FORMAT_VERSION => Ok(std::borrow::Cow::Borrowed(json)),
            _ => Ok(std::borrow::Cow::Owned(
                MatchLog::from_json(json)?.to_json(),
            )),
        }
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
