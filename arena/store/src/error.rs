//! The errors of the store.

use thiserror::Error;

/// The message of [`StoreError::NameTaken`].
fn name_taken(name: &str, existing: &str) -> String {
    if name == existing {
        format!("a bot named {name:?} already exists: choose another name")
    } else {
        format!(
            "a bot named {existing:?} already exists, and {name:?} counts as the same name \
             (names are unique regardless of case and look-alike characters): choose another name"
        )
    }
}

/// What can go wrong in the store.
///
/// Messages are lowercase and name the cause; the underlying database error, where there is
/// one, is kept as the [`source`](std::error::Error::source) (print with `{:#}` through
/// `anyhow`, or walk the chain, to see it). Messages never contain a password: database URLs
/// are redacted before they are put into an error.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database URL is neither a `sqlite:` nor a `postgres:`/`postgresql:` URL, or could
    /// not be parsed.
    #[error("unsupported database url \"{url}\": {reason}")]
    InvalidUrl {
        /// The URL, with any password replaced by `***`.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// An in-memory SQLite database was asked for: every pooled connection would get its own
    /// empty database, and everything would be lost on exit.
    #[error("in-memory sqlite databases are not supported: use a file, e.g. sqlite://knobel.db")]
    InMemorySqlite,
    /// The database could not be reached or opened.
    #[error("could not open the database at \"{url}\"")]
    Connect {
        /// The URL, with any password replaced by `***`.
        url: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The schema migrations could not be applied.
    #[error("could not apply the database migrations")]
    Migrate {
        /// The migrator's error.
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    /// A query failed.
    #[error("database error while {context}")]
    Database {
        /// What the store was doing, e.g. "listing bots".
        context: &'static str,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// A bot with this name, or one that counts as the same (equal up to case and look-alike
    /// characters), is already registered (revoked bots keep their names).
    #[error("{}", name_taken(name, existing))]
    NameTaken {
        /// The name asked for.
        name: String,
        /// The name of the bot that holds it.
        existing: String,
    },
    /// The bot name is not acceptable (see [`check_bot_name`](crate::check_bot_name)).
    #[error(transparent)]
    InvalidBotName(#[from] crate::BotNameError),
    /// The token hash given is not a hash from the arena's `auth::hash_token` (perhaps the clear
    /// token, which is never stored).
    #[error(
        "a bot's token hash must be 64 lowercase hex digits from auth::hash_token, never the clear token"
    )]
    InvalidTokenHash,
    /// Another bot is already registered with the same token hash.
    #[error("this token is already registered to another bot: generate a new token")]
    TokenTaken,
    /// A league of this name already exists.
    #[error("a league named {name:?} already exists: choose another name")]
    LeagueExists {
        /// The name asked for.
        name: String,
    },
    /// A match with this id is already stored.
    #[error("a match with id \"{id}\" already exists")]
    MatchExists {
        /// The match id.
        id: String,
    },
    /// The match to finish is not running: unknown, or already finished or aborted.
    #[error("match \"{id}\" is not running: it is unknown, or already finished or aborted")]
    MatchNotRunning {
        /// The match id.
        id: String,
    },
    /// The placings given to finish a match do not match its seats.
    #[error("match \"{id}\" has {seats} seats but {placings} placings were given")]
    PlacingsMismatch {
        /// The match id.
        id: String,
        /// How many seats the match was started with.
        seats: usize,
        /// How many placings were given.
        placings: usize,
    },
    /// A per-seat list of the outcome given to finish a match does not have one entry per
    /// placing.
    #[error(
        "match \"{id}\": the outcome's {field} has {len} entries, but it has {placings} placings: give one per seat"
    )]
    OutcomeMismatch {
        /// The match id.
        id: String,
        /// The list, e.g. "strikes".
        field: &'static str,
        /// Its length.
        len: usize,
        /// How many placings the outcome has.
        placings: usize,
    },
    /// The match recorder's task stopped (its runtime is shutting down) before it could say
    /// whether a write was committed (see [`Recorder`](super::Recorder)).
    #[error("the match recorder stopped before confirming the write")]
    RecorderStopped,
    /// The database did not answer in time: no free connection (it may be down or
    /// unreachable), or a statement that took too long. Nothing may be assumed about a write
    /// that timed out: it may or may not have been committed (writes are idempotent, so it
    /// is safe to retry; see [`Store::write_matches`](super::Store::write_matches)).
    #[error("the store did not answer within {ms} ms while {context}")]
    Timeout {
        /// What the store was doing, e.g. "listing matches".
        context: &'static str,
        /// The store's timeout, in milliseconds.
        ms: u64,
    },
    /// A write was not tried on its own because the batch it was in failed for want of a
    /// database (see [`Store::write_matches`](super::Store::write_matches)).
    #[error("the database is unavailable while {context}: {reason}")]
    Unavailable {
        /// What the store was doing.
        context: &'static str,
        /// The error of the batch.
        reason: String,
        /// Whether the batch may have been committed nevertheless.
        maybe_written: bool,
    },
    /// A stored value could not be read back (hand-edited or damaged database).
    #[error("the database holds an invalid value: {what}")]
    Corrupt {
        /// What was wrong.
        what: String,
    },
}

impl StoreError {
    /// An error mapper for a failed query, for `map_err`. A query cut off by the store's
    /// timeout (see [`TimedOut`]) or a pool that had no connection in time becomes
    /// [`StoreError::Timeout`].
    pub(crate) fn db(context: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
        move |source| match timeout_ms(&source) {
            Some(ms) => StoreError::Timeout { context, ms },
            None => StoreError::Database { context, source },
        }
    }

    /// Whether the error says the database is unavailable (down, unreachable, too slow, or
    /// a connection lost): worth retrying later, and "unavailable" rather than "internal
    /// error" to a client. Refusals (a taken name, a match that is not running) and damaged
    /// data are not.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Timeout { .. }
            | StoreError::RecorderStopped
            | StoreError::Unavailable { .. } => true,
            StoreError::Database { source, .. } => driver_unavailable(source),
            _ => false,
        }
    }

    /// Whether a write that failed with this error may nevertheless have been committed
    /// (the answer to the commit was lost), so that it must be undone or confirmed later.
    pub fn maybe_written(&self) -> bool {
        match self {
            StoreError::Timeout { .. } | StoreError::RecorderStopped => true,
            StoreError::Database { context, .. } => *context == COMMITTING,
            StoreError::Unavailable { maybe_written, .. } => *maybe_written,
            _ => false,
        }
    }
}

/// Whether a driver's error says the database is unavailable (see
/// [`StoreError::is_unavailable`]); a query cut off by the store's timeout is an I/O error.
fn driver_unavailable(source: &sqlx::Error) -> bool {
    matches!(
        source,
        sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
            | sqlx::Error::Protocol(_)
    ) || matches!(source, sqlx::Error::Database(db) if is_transient(db.code().as_deref()))
}

/// The context of a failed commit (see [`StoreError::maybe_written`]).
pub(crate) const COMMITTING: &str = "committing match records";

/// Whether a database error code is one of PostgreSQL's "try again" classes: 08
/// (connection exception), 40 (transaction rollback: serialization, deadlock), 53
/// (insufficient resources), 57P (operator intervention: shutdown, cancel), or SQLite's
/// busy/locked (5, 6).
fn is_transient(code: Option<&str>) -> bool {
    match code {
        Some(code) => {
            code.starts_with("08")
                || code.starts_with("40")
                || code.starts_with("53")
                || code.starts_with("57P")
                || code == "5"
                || code == "6"
        }
        None => false,
    }
}

/// The marker inside the I/O error of a query cut off by the store's timeout.
#[derive(Debug)]
struct Elapsed(u64);

impl std::fmt::Display for Elapsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the store did not answer within {} ms", self.0)
    }
}

impl std::error::Error for Elapsed {}

/// The timeout in milliseconds, if `error` is a query cut off by the store's timeout.
fn timeout_ms(error: &sqlx::Error) -> Option<u64> {
    match error {
        sqlx::Error::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<Elapsed>())
            .map(|elapsed| elapsed.0),
        _ => None,
    }
}

/// The error of a store call cut off after `ms` milliseconds, in the error type of the
/// call (the driver's or the store's): see `with_pool!`.
/// It also says whether an error of the call means the database is unavailable.
pub(crate) trait TimedOut {
    fn timed_out(ms: u64) -> Self;
    fn unavailable(&self) -> bool;
}

impl TimedOut for sqlx::Error {
    fn timed_out(ms: u64) -> Self {
        sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            Elapsed(ms),
        ))
    }

    fn unavailable(&self) -> bool {
        driver_unavailable(self)
    }
}

impl TimedOut for StoreError {
    fn timed_out(ms: u64) -> Self {
        StoreError::Timeout {
            context: "writing match records",
            ms,
        }
    }

    fn unavailable(&self) -> bool {
        self.is_unavailable()
    }
}

/// Whether `err` is the violation of a unique constraint (or primary key).
pub(crate) fn is_unique_violation(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Database(db) => db.is_unique_violation(),
        _ => false,
    }
}

/// `url` with the password (if any) replaced by `***`, fit to be shown in messages and logs.
pub(crate) fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => match parsed.set_password(Some("***")) {
            Ok(()) => parsed.into(),
            Err(()) => REDACTED.to_owned(),
        },
        Ok(_) => url.to_owned(),
        // Not a URL the driver reads either; it may still hold a password.
        Err(_) if url.contains('@') => REDACTED.to_owned(),
        Err(_) => url.to_owned(),
    }
}

/// What a database URL that cannot be read is shown as (it may hold a password).
const REDACTED: &str = "(a database url that cannot be read, not shown)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_and_lost_connections_are_unavailable() {
        let timeout = StoreError::db("listing matches")(<sqlx::Error as TimedOut>::timed_out(250));
        assert!(
            matches!(
                timeout,
                StoreError::Timeout {
                    context: "listing matches",
                    ms: 250
                }
            ),
            "{timeout:?}"
        );
        assert_eq!(
            timeout.to_string(),
            "the store did not answer within 250 ms while listing matches"
        );
        assert!(timeout.is_unavailable() && timeout.maybe_written());
        let reset = StoreError::db("reading a match")(sqlx::Error::Io(std::io::Error::from(
            std::io::ErrorKind::ConnectionReset,
        )));
        assert!(matches!(reset, StoreError::Database { .. }), "{reset:?}");
        assert!(reset.is_unavailable() && !reset.maybe_written());
        let commit = StoreError::db(COMMITTING)(sqlx::Error::PoolClosed);
        assert!(commit.is_unavailable() && commit.maybe_written());
        let refused = StoreError::MatchNotRunning { id: "m".into() };
        assert!(!refused.is_unavailable() && !refused.maybe_written());
        let corrupt = StoreError::db("reading a match")(sqlx::Error::RowNotFound);
        assert!(!corrupt.is_unavailable());
        for code in ["08006", "40001", "53300", "57P01", "5", "6"] {
            assert!(is_transient(Some(code)), "{code}");
        }
        for code in ["23505", "42P01", "19"] {
            assert!(!is_transient(Some(code)), "{code}");
        }
        assert!(!is_transient(None));
    }

    #[test]
    fn redacts_passwords_only() {
        assert_eq!(
            redact_url("postgres://knobel:s3cret@db:5432/knobel?sslmode=require"),
            "postgres://knobel:***@db:5432/knobel?sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://postgres@127.0.0.1/postgres"),
            "postgres://postgres@127.0.0.1/postgres"
        );
        assert_eq!(redact_url("sqlite://knobel.db"), "sqlite://knobel.db");
        assert_eq!(redact_url("sqlite:knobel.db"), "sqlite:knobel.db");
        assert_eq!(
            redact_url("postgresql://u:p@ss@h/db"),
            "postgresql://u:***@h/db"
        );
        // Unreadable, with what may be a password: not shown at all.
        assert_eq!(redact_url("postgres://u:p@[::1/db"), REDACTED);
    }
}
