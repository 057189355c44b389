//! What an ended match may show, and when: the one rule for GetMatchLog, StreamMatchLog,
//! GetMatchRecord, ExportLeague and the web pages ([`ended_log`]). A running match's log
//! would show every hidden die; a league match's seed and hidden dice stay secret until its
//! league has ended (docs/fair-play.md). Anything that serves a log goes through here.

use crate::league::DiceMode;
use crate::store::{MatchStatus, Store, StoreError};

/// `Ok` if `id` can be a match id (1..=64 bytes), else what is legal.
pub fn check_match_id(id: &str) -> Result<(), &'static str> {
    if id.is_empty() || id.len() > 64 {
        return Err("match_id must be 1..=64 characters: see ListMatches");
    }
    Ok(())
}

/// Why a match's full log is withheld.
pub fn withheld(id: &str, league: &str) -> String {
    format!(
        "match {id} is of league {league:?}, which has not ended: its full log (seed and hidden \
         dice) is served once the league has finished or been cancelled; its public record is \
         served now (GetMatchRecord)"
    )
}

/// A match's log as GetMatchLog may serve it: only once the match has ended (a running
/// match's log would show every hidden die), and, for a match of a league, once the league
/// has ended (its seed and hidden dice stay secret until then: docs/fair-play.md). The one
/// rule for GetMatchLog, StreamMatchLog, GetMatchRecord, ExportLeague and the web pages.
pub enum EndedLog {
    /// No such match.
    Unknown,
    /// The match is running: its log is not public yet.
    Running,
    /// The match ended without a log.
    Missing,
    /// The log of the ended match, as JSON text.
    Log(String),
    /// The match is of `league`, which has not ended: only the log's public record may be
    /// served.
    Withheld {
        /// The league's name.
        league: String,
        /// The full log, to build the public record from; never to be served.
        log_json: String,
    },
    /// The match is of duplicate set `set` of `league`, which has `left` seat orders still
    /// to play on the same dice: not even its public record may be served yet.
    SetPlaying {
        /// The league's name.
        league: String,
        /// The set.
        set: u32,
        /// Its matches without a result.
        left: u64,
    },
}

/// The log of match `id` if it has ended (see [`EndedLog`]).
pub async fn ended_log(store: &Store, id: &str) -> Result<EndedLog, StoreError> {
    let log = match store.match_log(id).await? {
        None => return Ok(EndedLog::Unknown),
        Some((MatchStatus::Running, _)) => return Ok(EndedLog::Running),
        Some((_, None)) => return Ok(EndedLog::Missing),
        Some((_, Some(log))) => log,
    };
    Ok(match store.match_league(id).await? {
        None => EndedLog::Log(log),
        Some(league) if league.has_ended() => EndedLog::Log(log),
        Some(league) if league.dice == DiceMode::Duplicate && league.set_unfinished > 0 => {
            EndedLog::SetPlaying {
                league: league.league,
                set: league.set,
                left: league.set_unfinished,
            }
        }
        Some(league) => EndedLog::Withheld {
            league: league.league,
            log_json: log,
        },
    })
}
