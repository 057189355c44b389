//! The store (`knobel-store`): registered bots, matches with their logs, per-seat results,
//! leagues with their schedules and claims, and arena instances' leases, kept in SQLite (the
//! default, one file) or PostgreSQL. It is the layer under the arena's runtime: it reads
//! leagues through `knobel-league`, checks what it reads (a row that cannot be played is
//! [`StoreError::Corrupt`]), and reports its failures through [`StoreObserver`], a trait it
//! owns: it knows no metrics, no runtime and no adapter (ARCHITECTURE.md).
//!
//! [`Store::connect`] opens a pool on a `sqlite:` or `postgres:`/`postgresql:` URL and brings
//! the schema up to date (the migrations in `arena/store/migrations/<backend>/` are embedded in the
//! binary). The same SQL runs on both backends, written with `$1`-style placeholders, which
//! SQLite accepts too; timestamps are `BIGINT` unix milliseconds and JSON values are `TEXT`, so
//! that both drivers decode every column the same way.
//!
//! The store never sees a clear bot token: callers pass its SHA-256 hash (the arena's
//! `auth::hash_token`).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

/// Runs `$body` with `$pool` bound to the store's pool, whichever backend it is, within the
/// store's timeout (see [`Store::with_timeout`]): a body that has not ended by then is
/// dropped (a transaction it had open is rolled back) and gives the error type's
/// [`TimedOut`](error::TimedOut) value. A failure because the database is unavailable is
/// told to the store's observer if it has one (see [`Store::counting_errors`]).
///
/// The body is expanded once per backend, so it may use the backend's concrete types (rows,
/// transactions) while being written once. On SQLite this is the pool of readers; writes
/// use [`with_writer!`].
macro_rules! with_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        with_pool!(@sqlite readers, $store, $pool => $body)
    };
    (@sqlite $role:ident, $store:expr, $pool:ident => $body:expr) => {
        match &$store.backend {
            $crate::Backend::Sqlite { $role: $pool, .. } => {
                $store.timed(async { $body }).await
            }
            $crate::Backend::Postgres($pool) => $store.timed(async { $body }).await,
        }
    };
}

/// Like [`with_pool!`], for statements that write: on SQLite they all go through its one
/// writer connection.
macro_rules! with_writer {
    ($store:expr, $pool:ident => $body:expr) => {
        with_pool!(@sqlite writer, $store, $pool => $body)
    };
}

/// The database's clock as an SQL expression in unix milliseconds, per backend: what
/// [`Store::db_now_ms`] reads, written into statements that compare lease and claim times
/// so that they need no round trip of their own.
macro_rules! db_now_ms_sql {
    (postgres) => {
        "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
    };
    (sqlite) => {
        "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"
    };
}

mod bots;
mod error;
mod instances;
mod league_schedule;
mod leagues;
mod matches;
mod migrations;
mod observer;
mod recorder;
mod types;

pub use bots::{BotNameError, check_bot_name};
pub use error::StoreError;
pub use instances::{InstanceId, Lease};
pub use league_schedule::{LEAGUE_CREATION_TIME_PER_MATCH, league_creation_timeout};
pub use leagues::{
    ArchiveRow, HeldSecret, LeagueRecord, LeagueStatus, MatchLeague, NewLeague, OpenLeagueMatch,
    UNSTARTED_CLAIM_MS,
};
pub use observer::{StoreObserver, StoreOperation};
pub use recorder::{MAX_BACKOFF, MAX_PENDING, MIN_BACKOFF, Recorded, Recorder};
pub use types::{
    AbortedMatch, BotRecord, BotResult, BotTotals, FinishedMatch, LeagueSlot, MatchCursor,
    MatchFilter, MatchRecord, MatchStatus, MatchSummary, MatchWrite, NewMatch,
    ParseMatchStatusError, SeatResult,
};

use error::redact_url;

/// How many connections a store's pool opens at most.
pub const MAX_CONNECTIONS: u32 = 8;

/// Transactions writing match records at once on PostgreSQL (see [`Store::writers`]): half
/// of the pool, leaving the rest for reads, claims and the heartbeat.
pub const POSTGRES_WRITERS: usize = 4;

/// How long a query waits for a free connection (or SQLite for a lock) before failing. The
/// store's own timeout (see [`Store::with_timeout`]) is meant to cut calls off earlier.
const WAIT: Duration = Duration::from_secs(10);

/// How long a store call may take by default before it fails with
/// [`StoreError::Timeout`] (see [`Store::with_timeout`]).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// A handle on the database. Cheap to clone: clones share one connection pool.
#[derive(Clone)]
pub struct Store {
    backend: Backend,
    /// How long one call (waiting for a connection and running its statements) may take.
    timeout: Duration,
    /// The arena instance that owns the matches this handle starts (see
    /// [`Store::owned_by`]).
    owner: Option<InstanceId>,
    /// Where its calls that fail because the database is unavailable are counted (see
    /// [`Store::counting_errors`]).
    errors: Option<(Arc<dyn StoreObserver>, StoreOperation)>,
}

/// Runs `body`, cut off after `timeout` with `E`'s timeout error.
pub(crate) async fn timed<T, E: error::TimedOut>(
    timeout: Duration,
    body: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    match tokio::time::timeout(timeout, body).await {
        Ok(result) => result,
        Err(_) => Err(E::timed_out(
            u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        )),
    }
}

/// The pool of the backend in use.
#[derive(Clone)]
enum Backend {
    /// A SQLite file, written by one connection and read by several. SQLite lets one
    /// connection write at a time anyway; a single writer also keeps its page cache valid
    /// from one transaction to the next (a connection must re-read pages that another one
    /// has changed), and WAL checkpoints are not held up by several writers.
    Sqlite {
        readers: SqlitePool,
        writer: SqlitePool,
    },
    /// A PostgreSQL database.
    Postgres(PgPool),
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend_name())
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens the database at `url` and applies any pending migrations.
    ///
    /// `url` is either `sqlite://<path>` / `sqlite:<path>` (the file is created if missing;
    /// opened in WAL mode with foreign keys on and a busy timeout) or
    /// `postgres://user[:password]@host[:port]/database` (`postgresql://` too; the database
    /// must exist). In-memory SQLite databases are refused: every pooled connection would see
    /// its own. Connecting twice to the same database is fine: applied migrations are skipped.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        let store = Store::open(url).await?;
        store.migrate(None).await?;
        Ok(store)
    }

    /// The store on `url` with its migrations applied up to `version` and nothing more:
    /// for tests that write rows as an older arena did and check that the later migrations
    /// keep them readable (close it, then [`Store::connect`] applies the rest). The arena
    /// itself always uses [`Store::connect`].
    #[doc(hidden)]
    pub async fn connect_at_version(url: &str, version: i64) -> Result<Store, StoreError> {
        let store = Store::open(url).await?;
        store.migrate(Some(version)).await?;
        Ok(store)
    }

    /// Opens the database at `url` (see [`Store::connect`]), without migrating it.
    async fn open(url: &str) -> Result<Store, StoreError> {
        let scheme = url
            .split_once(':')
            .map(|(scheme, _)| scheme.to_ascii_lowercase());
        let backend = match scheme.as_deref() {
            Some("sqlite") => {
                let (readers, writer) = connect_sqlite(url).await?;
                Backend::Sqlite { readers, writer }
            }
            Some("postgres" | "postgresql") => Backend::Postgres(connect_postgres(url).await?),
            _ => {
                return Err(StoreError::InvalidUrl {
                    url: redact_url(url),
                    reason: "expected a sqlite: or postgres: url".to_owned(),
                });
            }
        };
        Ok(Store {
            backend,
            timeout: DEFAULT_TIMEOUT,
            owner: None,
            errors: None,
        })
    }

    /// This store with every call cut off after `timeout` (waiting for a connection
    /// included): a call that takes longer fails with [`StoreError::Timeout`], so that
    /// nobody hangs on a database that is down or unreachable. The default is
    /// [`DEFAULT_TIMEOUT`]. Clones share the pool; each keeps its own timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Store {
        self.timeout = timeout;
        self
    }

    /// The timeout of this store's calls (see [`Store::with_timeout`]).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// This store recording the matches it starts as owned by arena instance `owner` (see
    /// [`Store::abort_orphaned_matches`]). Without an owner, matches are started ownerless:
    /// any arena starting up aborts them if they are still running.
    pub fn owned_by(mut self, owner: InstanceId) -> Store {
        self.owner = Some(owner);
        self
    }

    /// This store counting its calls that fail because the database is unavailable (see
    /// [`StoreError::is_unavailable`]) with `observer` as `operation`: every call through
    /// this handle and its clones, in one place (the store's timeout), so that a path of the
    /// arena given its own handle has every failure counted, and counted once.
    pub fn counting_errors<O: StoreObserver + Clone>(
        mut self,
        observer: &O,
        operation: StoreOperation,
    ) -> Store {
        self.errors = Some((Arc::new(observer.clone()), operation));
        self
    }

    /// Runs `body` within the store's timeout (see [`with_pool!`]), counting a failure
    /// because the database is unavailable (see [`Store::counting_errors`]).
    pub(crate) async fn timed<T, E: error::TimedOut>(
        &self,
        body: impl Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        let result = timed(self.timeout, body).await;
        if let (Err(error), Some((observer, operation))) = (&result, &self.errors)
            && error.unavailable()
        {
            observer.failed(*operation);
        }
        result
    }

    /// The instance owning the matches this store starts, if one was set.
    pub fn owner(&self) -> Option<&InstanceId> {
        self.owner.as_ref()
    }

    /// How many transactions writing match records may commit at once
    /// ([`Recorder`]'s writer tasks): [`POSTGRES_WRITERS`] on PostgreSQL, 1 on SQLite (one
    /// writer connection).
    pub fn writers(&self) -> usize {
        match self.backend {
            Backend::Sqlite { .. } => 1,
            Backend::Postgres(_) => POSTGRES_WRITERS,
        }
    }

    /// The backend in use: "sqlite" or "postgres".
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite { .. } => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// Closes the pool, waiting for connections in use to be returned. Clones of this store
    /// cannot be used afterwards.
    pub async fn close(&self) {
        match &self.backend {
            Backend::Sqlite { readers, writer } => {
                readers.close().await;
                writer.close().await;
            }
            Backend::Postgres(pool) => pool.close().await,
        }
    }

    /// Applies the embedded migrations that the database has not seen yet (those up to
    /// `until` only, if it is given, and then nothing else).
    async fn migrate(&self, until: Option<i64>) -> Result<(), StoreError> {
        let result = match &self.backend {
            Backend::Sqlite { writer, .. } => {
                migrations::migrator(migrations::SQLITE, until)
                    .run(writer)
                    .await
            }
            Backend::Postgres(pool) => {
                migrations::migrator(migrations::POSTGRES, until)
                    .run(pool)
                    .await
            }
        };
        result.map_err(|source| StoreError::Migrate { source })?;
        if until.is_none() {
            self.backfill_name_keys().await?;
        }
        Ok(())
    }
}

/// The error for a `url` the driver cannot parse (its password redacted).
fn invalid_url(url: &str, error: sqlx::Error) -> StoreError {
    StoreError::InvalidUrl {
        url: redact_url(url),
        reason: error.to_string(),
    }
}

/// Opens the pools of readers and of the one writer on the SQLite file named by `url`.
async fn connect_sqlite(url: &str) -> Result<(SqlitePool, SqlitePool), StoreError> {
    let lower = url.to_ascii_lowercase();
    if lower.contains(":memory:") || lower.contains("mode=memory") {
        return Err(StoreError::InMemorySqlite);
    }
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| invalid_url(url, e))?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // With WAL, NORMAL is durable across application crashes (not power loss) and much
        // faster than FULL.
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(WAIT)
        .foreign_keys(true);
    let pool = |connections: u32| {
        SqlitePoolOptions::new()
            .max_connections(connections)
            .acquire_timeout(WAIT)
            // A connection to a local file does not go stale: pinging it before every use
            // is a round trip to its worker thread for nothing.
            .test_before_acquire(false)
    };
    let connect_error = |source| StoreError::Connect {
        url: redact_url(url),
        source,
    };
    // The writer first: it creates the file and switches it to WAL.
    let writer = pool(1)
        .connect_with(options.clone())
        .await
        .map_err(connect_error)?;
    let readers = pool(MAX_CONNECTIONS)
        .connect_with(options)
        .await
        .map_err(connect_error)?;
    Ok((readers, writer))
}

/// Opens a pool on the PostgreSQL database named by `url`.
async fn connect_postgres(url: &str) -> Result<PgPool, StoreError> {
    let options = PgConnectOptions::from_str(url)
        .map_err(|e| invalid_url(url, e))?
        .application_name("knobel-arena");
    PgPoolOptions::new()
        .max_connections(MAX_CONNECTIONS)
        .acquire_timeout(WAIT)
        .connect_with(options)
        .await
        .map_err(|source| StoreError::Connect {
            url: redact_url(url),
            source,
        })
}

/// The current time in unix milliseconds, as the store records it.
pub fn now_ms() -> i64 {
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}
