//! An ended league's archive read from the store ([`super::archive`] is its format and its
//! check): what ExportLeague sends and `knobel league export` saves.

use super::SeedSource;
use super::archive::{
    ARCHIVE_FORMAT_VERSION, ARCHIVE_KIND, ArchiveEnd, ArchiveHeader, ArchivedLeague, ArchivedMatch,
};
use crate::store::{LeagueRecord, Store, StoreError};

/// Match lines read from the store at once.
pub const PAGE: u32 = 64;

/// Why a league's archive cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// No such league.
    #[error("no league named {name}: see `knobel league list`")]
    NoLeague {
        /// The name asked for, quoted (a bounded prefix of it).
        name: String,
    },
    /// The league may still play: its secret is not revealed.
    #[error(
        "league {name:?} is {status}: its dice secret is revealed, and its archive served, once \
         it has finished or been cancelled ({finished} of {total} matches have a result)"
    )]
    NotEnded {
        /// The league.
        name: String,
        /// Where it stands.
        status: crate::store::LeagueStatus,
        /// Matches with a result.
        finished: u64,
        /// Matches scheduled.
        total: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// League `name` and its archive's first line, if it has ended.
pub async fn header(store: &Store, name: &str) -> Result<(LeagueRecord, String), ExportError> {
    let Some(league) = store.league(name).await? else {
        return Err(ExportError::NoLeague {
            name: knobel_engine::quoted(name),
        });
    };
    let secret = match league.revealed_secret() {
        Some(secret) => secret.to_hex(),
        // A legacy league has no secret: its archive says so, and does not verify.
        None if league.has_ended() && league.seed_source == SeedSource::Legacy => String::new(),
        None => {
            return Err(ExportError::NotEnded {
                name: league.name.clone(),
                status: league.status,
                finished: league.finished_matches,
                total: league.total_matches,
            });
        }
    };
    let header = ArchiveHeader {
        archive: ARCHIVE_KIND.to_owned(),
        format_version: ARCHIVE_FORMAT_VERSION,
        league: ArchivedLeague {
            id: league.id,
            name: league.name.clone(),
            status: league.status.as_str().to_owned(),
            created_unix_ms: league.created_at_ms,
            config_toml: league.config_toml.clone(),
            bots: league.bots.clone(),
            dice: league.dice.as_str().to_owned(),
            seed_source: league.seed_source.as_str().to_owned(),
            dice_commitment: league.commitment.clone().unwrap_or_default(),
            dice_secret: secret,
        },
    };
    let line = serde_json::to_string(&header).expect("an archive header serializes");
    Ok((league, line))
}

/// The archive's match lines of `league` from ordinal `from` on, at most [`PAGE`], each
/// ending in a newline; empty after the last.
pub async fn page(
    store: &Store,
    league: &LeagueRecord,
    from: u32,
) -> Result<Vec<String>, StoreError> {
    let rows = store.league_archive_page(league.id, from, PAGE).await?;
    let mut lines = Vec::with_capacity(rows.len());
    for row in rows {
        let finished = row.status == "finished";
        let (mut log, mut placings) = (None, None);
        if let (true, Some(id)) = (finished, &row.match_id) {
            if let Some((_, Some(json))) = store.match_log(id).await? {
                log = serde_json::value::RawValue::from_string(json).ok();
            }
            placings = Some(
                store
                    .seat_results(id)
                    .await?
                    .iter()
                    .map(|s| s.place)
                    .collect(),
            );
        }
        let m = row.scheduled;
        let archived = ArchivedMatch {
            ordinal: row.ordinal,
            game: m.game,
            preset: m.preset,
            rules: m.rules,
            set: m.set,
            rotation: m.rotation,
            seats: m.seats,
            status: row.status,
            attempt: finished.then_some(row.attempts),
            match_id: row.match_id,
            placings,
            log,
        };
        let mut line = serde_json::to_string(&archived).expect("an archive line serializes");
        line.push('\n');
        lines.push(line);
    }
    Ok(lines)
}

/// The archive's last line, after `matches` match lines.
pub fn end_line(matches: u64) -> String {
    let end = ArchiveEnd {
        end_of_archive: matches,
    };
    let mut line = serde_json::to_string(&end).expect("an archive end serializes");
    line.push('\n');
    line
}

/// The whole archive of league `name` as one text (for tests and small leagues).
pub async fn archive(store: &Store, name: &str) -> Result<String, ExportError> {
    let (league, mut text) = header(store, name).await?;
    text.push('\n');
    let mut next = 0u32;
    loop {
        let lines = page(store, &league, next).await?;
        if lines.is_empty() {
            text.push_str(&end_line(u64::from(next)));
            return Ok(text);
        }
        next += lines.len() as u32;
        lines.iter().for_each(|l| text.push_str(l));
    }
}
