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
    /// The bot name is not acceptable (see [`crate::auth::check_bot_name`]).
    #[error(transparent)]
    InvalidBotName(#[from] crate::auth::BotNameError),
    /// The token hash given is not a hash from [`crate::auth::hash_token`] (perhaps the clear
    /// token, which is never stored).
    #[error(
        "a bot's token hash must be 64 lowercase hex digits from auth::hash_token, never the clear token"
    )]
    InvalidTokenHash,
    /// Another bot is already registered with the same token hash.
    #[error("this token is already registered to another bot: generate a new token")]
    TokenTaken,
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
    /// A stored value could not be read back (hand-edited or damaged database).
    #[error("the database holds an invalid value: {what}")]
    Corrupt {
        /// What was wrong.
        what: String,
    },
}

impl StoreError {
    /// An error mapper for a failed query, for `map_err`.
    pub(crate) fn db(context: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
        move |source| StoreError::Database { context, source }
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
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest_start = scheme_end + 3;
    let rest = &url[rest_start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_owned();
    };
    let userinfo = &authority[..at];
    let Some(colon) = userinfo.find(':') else {
        return url.to_owned();
    };
    format!(
        "{}{}:***{}",
        &url[..rest_start],
        &userinfo[..colon],
        &url[rest_start + at..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
