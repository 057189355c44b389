//! A league archive: everything needed to check an ended league's dice without trusting the
//! arena (docs/fair-play.md, "Archive"), and the check itself.
//!
//! An archive is JSON lines: an [`ArchiveHeader`] (the league file, bots, dice secret and
//! commitment), then one [`ArchivedMatch`] per scheduled match in schedule order (its stored
//! full log if it has a result), then an [`ArchiveEnd`] that counts the match lines, so a
//! cut-off archive is told from a complete one. [`Verifier`] checks one line at a time: the
//! commitment, the schedule recomputed from the league file and the secret, every match's
//! seed, and every log replayed by the engine against its stored placings.

use knobel_engine::{Game, MatchLog, Rules};
use serde::{Deserialize, Serialize};

use super::dice::{DiceMode, LeagueDice, LeagueSecret, SeedSource};
use super::{LeagueConfig, ScheduledMatch, expand};
use knobel_engine::{bounded, quoted};

/// The name in an archive's first line.
pub const ARCHIVE_KIND: &str = "knobel-league";
/// The layout version of archives written now.
pub const ARCHIVE_FORMAT_VERSION: u32 = 1;

/// The archive's first line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArchiveHeader {
    /// Always [`ARCHIVE_KIND`].
    pub archive: String,
    /// [`ARCHIVE_FORMAT_VERSION`].
    pub format_version: u32,
    /// The league.
    pub league: ArchivedLeague,
}

/// An ended league, as its archive shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArchivedLeague {
    /// Its id in the arena (part of the commitment).
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Finished or cancelled.
    pub status: String,
    /// When it was created, unix milliseconds.
    pub created_unix_ms: i64,
    /// The league file as given.
    pub config_toml: String,
    /// The bots it resolved to, in order.
    pub bots: Vec<String>,
    /// "independent" or "duplicate".
    pub dice: String,
    /// "secret", "league-file" or "legacy".
    pub seed_source: String,
    /// The commitment published at creation (empty for a legacy league).
    pub dice_commitment: String,
    /// The revealed secret, 64 hex digits (empty for a legacy league).
    pub dice_secret: String,
}

/// One scheduled match of the league.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ArchivedMatch {
    /// Its place in the schedule.
    pub ordinal: u32,
    /// The game.
    pub game: Game,
    /// The preset its rules start from.
    pub preset: String,
    /// Its rules.
    pub rules: Rules,
    /// Its duplicate set.
    pub set: u32,
    /// Its seat order in the set.
    pub rotation: u32,
    /// Its bots in seat order.
    pub seats: Vec<String>,
    /// "finished", or "pending"/"claimed" in a cancelled league.
    pub status: String,
    /// With a result: the attempt that gave it (from 1; its seed depends on it with
    /// independent dice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// With a result: the arena's match id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_id: Option<String>,
    /// With a result: the stored placings, by seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placings: Option<Vec<u8>>,
    /// With a result: the stored full log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<Box<serde_json::value::RawValue>>,
}

/// The archive's last line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveEnd {
    /// How many match lines came before it.
    pub end_of_archive: u64,
}

/// Why an archive does not verify.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VerifyError {
    /// A line is not what it should be.
    #[error("archive line {line}: {message}")]
    Format {
        /// The line, from 1.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// The league has no secret to verify.
    #[error(
        "league {league:?} was created before leagues had secret seeds: it has no commitment \
         to verify (its dice were public)"
    )]
    Legacy {
        /// The league.
        league: String,
    },
    /// The revealed secret is not the one committed to.
    #[error(
        "league {league:?}: the revealed secret does not match the commitment published at \
         creation ({commitment}): the secret was altered"
    )]
    Commitment {
        /// The league.
        league: String,
        /// The published commitment.
        commitment: String,
    },
    /// The league file or the secret do not give the archived schedule.
    #[error("league {league:?}: {message}")]
    Schedule {
        /// The league.
        league: String,
        /// What differs.
        message: String,
    },
    /// A match differs from what the secret and the engine say.
    #[error("match {match_id} (ordinal {ordinal}): {message}")]
    Match {
        /// The match's ordinal.
        ordinal: u32,
        /// Its match id.
        match_id: String,
        /// What differs.
        message: String,
    },
}

/// What a verified archive held.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Scheduled matches.
    pub scheduled: u64,
    /// Matches whose log was replayed.
    pub replayed: u64,
    /// Throws recomputed from their seeds.
    pub throws: u64,
}

/// Checks an archive line by line ([`Verifier::new`] with the header, [`Verifier::check`] for
/// each match line, [`Verifier::finish`] with the last line).
pub struct Verifier {
    league: String,
    dice: LeagueDice,
    schedule: Vec<ScheduledMatch>,
    report: VerifyReport,
}

impl Verifier {
    /// Starts checking the archive of `header`: its commitment, and the schedule its league
    /// file and secret give.
    pub fn new(header: &ArchiveHeader) -> Result<Verifier, VerifyError> {
        let format = |message: String| VerifyError::Format { line: 1, message };
        if header.archive != ARCHIVE_KIND || header.format_version != ARCHIVE_FORMAT_VERSION {
            return Err(format(format!(
                "not a league archive of format {ARCHIVE_FORMAT_VERSION}: {} format {}",
                quoted(&header.archive),
                header.format_version
            )));
        }
        let l = &header.league;
        let source: SeedSource = l.seed_source.parse().map_err(format)?;
        if source == SeedSource::Legacy || l.dice_secret.is_empty() {
            return Err(VerifyError::Legacy {
                league: l.name.clone(),
            });
        }
        let secret = LeagueSecret::from_hex(&l.dice_secret).map_err(|e| format(e.to_string()))?;
        if secret.commitment(l.id, &l.name) != l.dice_commitment {
            return Err(VerifyError::Commitment {
                league: l.name.clone(),
                commitment: bounded(&l.dice_commitment),
            });
        }
        let schedule_error = |message: String| VerifyError::Schedule {
            league: l.name.clone(),
            message,
        };
        let config = LeagueConfig::from_toml(&l.config_toml)
            .map_err(|e| schedule_error(format!("its league file does not read: {e}")))?;
        let mode: DiceMode = l.dice.parse().map_err(format)?;
        if mode != config.dice {
            return Err(schedule_error(format!(
                "the archive says dice = {mode}, its league file {}",
                config.dice
            )));
        }
        if let Some(seed) = config.seed
            && (source != SeedSource::LeagueFile || secret != LeagueSecret::from_public_seed(seed))
        {
            return Err(schedule_error(format!(
                "its league file names seed {seed}, whose public secret is not the revealed one"
            )));
        }
        let dice = LeagueDice { secret, mode };
        let schedule = expand(&config, &l.bots, &dice)
            .map_err(|e| schedule_error(format!("its schedule cannot be made again: {e}")))?;
        Ok(Verifier {
            league: l.name.clone(),
            dice,
            report: VerifyReport {
                scheduled: schedule.len() as u64,
                ..VerifyReport::default()
            },
            schedule,
        })
    }

    /// Checks the archive's next match line (`line` from 2, for errors).
    pub fn check(&mut self, line: u64, m: &ArchivedMatch) -> Result<(), VerifyError> {
        let expected_ordinal = line.saturating_sub(2);
        let Some(planned) = self
            .schedule
            .get(expected_ordinal as usize)
            .filter(|_| u64::from(m.ordinal) == expected_ordinal)
        else {
            return Err(VerifyError::Format {
                line,
                message: format!(
                    "match ordinal {} where the schedule of {} matches has {expected_ordinal} next",
                    m.ordinal,
                    self.schedule.len()
                ),
            });
        };
        let match_id = m.match_id.clone().unwrap_or_else(|| "(none)".to_owned());
        let differs = |message: String| VerifyError::Match {
            ordinal: m.ordinal,
            match_id: match_id.clone(),
            message,
        };
        if (m.game, &m.preset, &m.rules, m.set, m.rotation, &m.seats)
            != (
                planned.game,
                &planned.preset,
                &planned.rules,
                planned.set,
                planned.rotation,
                &planned.seats,
            )
        {
            return Err(differs(format!(
                "the archive's game, rules, set or seats ({} set {} seats {:?}) are not the \
                 schedule's ({} set {} seats {:?})",
                m.game, m.set, m.seats, planned.game, planned.set, planned.seats
            )));
        }
        let (Some(log), Some(attempt), Some(placings)) = (&m.log, m.attempt, &m.placings) else {
            if m.status == "finished" {
                return Err(differs("a finished match without its log".to_owned()));
            }
            return Ok(());
        };
        let log = MatchLog::from_json(log.get())
            .map_err(|e| differs(format!("its log does not read: {e}")))?;
        let seed = self.dice.match_seed(m.ordinal, m.set, attempt);
        if log.seed != seed {
            return Err(differs(format!(
                "its log's seed {} is not the seed {seed} its secret gives (attempt {attempt})",
                log.seed
            )));
        }
        if log.rules != planned.rules || usize::from(log.seats) != planned.seats.len() {
            return Err(differs(
                "its log's rules or seats are not the schedule's".to_owned(),
            ));
        }
        let replayed = log
            .replay()
            .map_err(|e| differs(format!("its log does not replay: {e}")))?;
        let outcome = replayed
            .outcome()
            .ok_or_else(|| differs("its log ends before the match is over".to_owned()))?;
        if &outcome.placings != placings {
            return Err(differs(format!(
                "the replay places the seats {:?}, the stored result {placings:?}",
                outcome.placings
            )));
        }
        self.report.replayed += 1;
        self.report.throws += log
            .entries
            .iter()
            .filter(|e| matches!(e, knobel_engine::LogEntry::Throw { .. }))
            .count() as u64;
        Ok(())
    }

    /// Checks the archive's last line (`line`, for errors): it counts every match line.
    pub fn finish(self, line: u64, end: &ArchiveEnd) -> Result<VerifyReport, VerifyError> {
        let lines = line.saturating_sub(2);
        if end.end_of_archive != lines || lines != self.report.scheduled {
            return Err(VerifyError::Format {
                line,
                message: format!(
                    "the archive ends after {lines} match lines, says {}, and league {:?} \
                     scheduled {}: it is incomplete",
                    end.end_of_archive, self.league, self.report.scheduled
                ),
            });
        }
        Ok(self.report)
    }
}

/// Checks an archive fed one line at a time, as it arrives.
#[derive(Default)]
pub struct LineVerifier {
    verifier: Option<Verifier>,
    lines: u64,
    report: Option<VerifyReport>,
}

impl LineVerifier {
    /// Checks the archive's next line.
    pub fn line(&mut self, text: &str) -> Result<(), VerifyError> {
        self.lines += 1;
        let number = self.lines;
        let parse_error = |e: serde_json::Error| VerifyError::Format {
            line: number,
            message: format!("not the JSON of an archive line: {e}"),
        };
        if self.report.is_some() {
            return Err(VerifyError::Format {
                line: number,
                message: "a line after the archive's last line".to_owned(),
            });
        }
        let Some(verifier) = &mut self.verifier else {
            let header: ArchiveHeader = serde_json::from_str(text).map_err(parse_error)?;
            self.verifier = Some(Verifier::new(&header)?);
            return Ok(());
        };
        if let Ok(end) = serde_json::from_str::<ArchiveEnd>(text) {
            let verifier = self.verifier.take().expect("checked above");
            self.report = Some(verifier.finish(number, &end)?);
            return Ok(());
        }
        let m: ArchivedMatch = serde_json::from_str(text).map_err(parse_error)?;
        verifier.check(number, &m)
    }

    /// The report, once the archive's last line has been checked.
    pub fn finish(self) -> Result<VerifyReport, VerifyError> {
        self.report.ok_or(VerifyError::Format {
            line: self.lines,
            message: if self.lines == 0 {
                "the archive is empty".to_owned()
            } else {
                "the archive is cut off: its last line (end_of_archive) is missing".to_owned()
            },
        })
    }
}

/// Verifies a whole archive given as text lines.
pub fn verify_lines<'a>(lines: impl Iterator<Item = &'a str>) -> Result<VerifyReport, VerifyError> {
    let mut verifier = LineVerifier::default();
    for line in lines {
        verifier.line(line)?;
    }
    verifier.finish()
}
