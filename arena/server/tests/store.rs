//! The store's tests, each run on SQLite and on PostgreSQL, each on a fresh database.
//!
//! `store_tests!` turns every test body below into `sqlite::<name>` (a new file in a temporary
//! folder) and `postgres::<name>` (a new database `knobel_test_<random hex>`, created through
//! the admin URL in `KNOBEL_TEST_POSTGRES_URL`, default
//! `postgres://postgres@127.0.0.1:5432/postgres`, and dropped afterwards, also when the test
//! fails). If PostgreSQL cannot be reached the PostgreSQL tests fail when `CI` is set (it is
//! mandatory there) and are skipped, with a message, otherwise.

use std::future::Future;
use std::time::Duration;

use knobel_arena::auth::{generate_token, hash_token};
use knobel_arena::league::schedule::MAX_MATCHES;
use knobel_arena::league::{
    DiceMode, LeagueConfig, LeagueDice, LeagueSecret, ScheduledMatch, SeedSource, Stop, expand,
};
use knobel_arena::settings::{RawSettings, STORE_TIMEOUT_MS};
use knobel_arena::store::{
    AbortedMatch, BotRecord, BotTotals, FinishedMatch, InstanceId, MAX_PENDING, MatchCursor,
    MatchFilter, MatchStatus, MatchSummary, MatchWrite, NewMatch, Recorded, Recorder, SeatResult,
    Store, StoreError, now_ms,
};
use knobel_arena::store::{LeagueRecord, LeagueSlot, LeagueStatus, NewLeague, UNSTARTED_CLAIM_MS};
use knobel_engine::{ForfeitReason, Game, Outcome};
use sqlx::{AssertSqlSafe, Connection, PgConnection, Row};

// ----------------------------------------------------------------------------------------------
// Harness
// ----------------------------------------------------------------------------------------------

const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// Which backend a test database is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sqlite,
    Postgres,
}

/// A fresh, empty database for one test.
struct TestDb {
    kind: Kind,
    url: String,
    /// The folder of the SQLite file, removed when the test ends.
    _dir: Option<tempfile::TempDir>,
}

/// Evaluates `$body` with `$conn`, a new connection to the test database `$db`, of its
/// backend's type (the body is written once and compiled for each backend).
macro_rules! with_conn {
    ($db:expr, $conn:ident => $body:expr) => {
        match $db.kind {
            Kind::Sqlite => {
                let mut $conn = sqlx::SqliteConnection::connect(&$db.url).await.unwrap();
                $body
            }
            Kind::Postgres => {
                let mut $conn = PgConnection::connect(&$db.url).await.unwrap();
                $body
            }
        }
    };
}

impl TestDb {
    /// A store on the test database (migrations applied).
    async fn store(&self) -> Store {
        Store::connect(&self.url)
            .await
            .unwrap_or_else(|e| panic!("cannot open the test store: {e:?}"))
    }

    /// Every row of `table`, each column rendered as text: what an attacker with a copy of
    /// the database would see.
    async fn raw_rows(&self, table: &str) -> Vec<Vec<String>> {
        let sql = AssertSqlSafe(format!("SELECT * FROM {table}"));
        with_conn!(self, conn => {
            let rows = sqlx::query(sql).fetch_all(&mut conn).await.unwrap();
            rows.iter()
                .map(|row| {
                    (0..row.len())
                        .map(|i| {
                            row.try_get::<Option<String>, _>(i)
                                .map(|v| v.unwrap_or_default())
                                .or_else(|_| {
                                    row.try_get::<Option<i64>, _>(i)
                                        .map(|v| v.map(|v| v.to_string()).unwrap_or_default())
                                })
                                .or_else(|_| row.try_get::<i32, _>(i).map(|v| v.to_string()))
                                .unwrap()
                        })
                        .collect()
                })
                .collect()
        })
    }

    /// How many rows `table` has.
    async fn count(&self, table: &str) -> i64 {
        self.scalar(&format!("SELECT COUNT(*) FROM {table}")).await
    }

    /// Runs `sql` (a statement that returns no rows).
    async fn execute(&self, sql: &str) {
        let sql = AssertSqlSafe(sql.to_owned());
        with_conn!(self, conn => {
            sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
        })
    }

    /// The one 64-bit integer that `sql` selects.
    async fn scalar(&self, sql: &str) -> i64 {
        let sql = AssertSqlSafe(sql.to_owned());
        with_conn!(self, conn => sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap())
    }
}

/// The finished seats with their results (migration 0013 folded `seat_results` into
/// `match_seats`), with `seat_results`' columns in its order: for `count`, `raw_rows` and
/// queries.
const SEAT_RESULTS: &str = "(SELECT match_id, seat, bot_name, place, strikes, timeouts, \
     forfeit_reason, tokens, chips, bot_id, adjusted_score \
     FROM match_seats WHERE place IS NOT NULL) AS seat_results";

/// Runs `test` on a new SQLite file.
async fn run_sqlite<F, Fut>(test: F)
where
    F: FnOnce(TestDb) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().expect("a temporary folder");
    let url = format!("sqlite://{}", dir.path().join("knobel.db").display());
    test(TestDb {
        kind: Kind::Sqlite,
        url,
        _dir: Some(dir),
    })
    .await;
}

/// `url` (a PostgreSQL URL) naming database `db` instead of its own.
fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let base = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    format!("{base}/{db}{query}")
}

/// Drops a test database when dropped, unless [`DbGuard::drop_now`] did it already: the
/// fallback for a test that is torn down before it could clean up.
struct DbGuard {
    admin_url: String,
    name: String,
    armed: bool,
}

impl DbGuard {
    fn drop_sql(&self) -> AssertSqlSafe<String> {
        AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ))
    }

    async fn drop_now(mut self, admin: &mut PgConnection) {
        self.armed = false;
        if let Err(e) = sqlx::raw_sql(self.drop_sql()).execute(admin).await {
            eprintln!("warning: cannot drop test database {}: {e}", self.name);
        }
    }
}

impl Drop for DbGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let admin_url = self.admin_url.clone();
        let sql = self.drop_sql();
        let name = self.name.clone();
        // Drop cannot await: use a runtime of our own on a thread of our own.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let dropped = async {
                    let mut admin = PgConnection::connect(&admin_url).await?;
                    sqlx::raw_sql(sql).execute(&mut admin).await
                };
                if let Err(e) = dropped.await {
                    eprintln!("warning: cannot drop test database {name}: {e}");
                }
            });
        })
        .join();
    }
}

/// Runs `test` on a new PostgreSQL database, dropped afterwards whatever happens. Fails if
/// PostgreSQL cannot be reached: a test never passes without having run (see
/// `arena/server/build.rs` for marking these tests ignored instead).
async fn run_postgres<F, Fut>(test: F)
where
    F: FnOnce(TestDb) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let admin_url =
        std::env::var("KNOBEL_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.into());
    let connected =
        tokio::time::timeout(Duration::from_secs(10), PgConnection::connect(&admin_url)).await;
    let mut admin = match connected {
        Ok(Ok(admin)) => admin,
        failed => {
            let why = match failed {
                Ok(Err(e)) => e.to_string(),
                _ => "timed out after 10 s".to_owned(),
            };
            panic!(
                "PostgreSQL cannot be reached at {admin_url}: {why}. Start it (see \
                 .ci/run) or set KNOBEL_TEST_POSTGRES_URL; or build the tests with \
                 KNOBEL_TEST_WITHOUT=postgres to mark the tests that need it ignored \
                 (refused in CI)"
            );
        }
    };
    // 64 random bits in hex.
    let name = format!("knobel_test_{}", &generate_token()[4..20]);
    sqlx::raw_sql(AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap_or_else(|e| panic!("cannot create test database {name}: {e}"));
    let guard = DbGuard {
        admin_url: admin_url.clone(),
        name: name.clone(),
        armed: true,
    };
    let db = TestDb {
        kind: Kind::Postgres,
        url: with_database(&admin_url, &name),
        _dir: None,
    };
    // A task of its own, so that a failing test still lets us drop the database here.
    let outcome = tokio::spawn(test(db)).await;
    guard.drop_now(&mut admin).await;
    if let Err(e) = outcome {
        match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => panic!("test task failed: {e}"),
        }
    }
}

/// Generates `sqlite::<name>` and `postgres::<name>` for each test body `<name>`.
macro_rules! store_tests {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    crate::run_sqlite(crate::$name).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                #[cfg_attr(
                    knobel_without_postgres,
                    ignore = "built with KNOBEL_TEST_WITHOUT=postgres: needs PostgreSQL"
                )]
                async fn $name() {
                    crate::run_postgres(crate::$name).await;
                }
            )*
        }
    };
}

store_tests!(
    migrations_apply_twice,
    outcomes_are_stored_without_zero_filled_fields,
    bot_registry_roundtrip,
    duplicate_and_invalid_bots,
    tokens_never_stored_in_clear,
    match_lifecycle,
    failed_finish_writes_nothing,
    abort_match_keeps_given_log,
    list_matches_filters_and_order,
    list_limit_is_clamped,
    list_matches_by_bot,
    match_seats_are_filled_in_for_older_matches,
    seats_and_results_stored_before_0013_stay_readable,
    mark_running_as_aborted,
    seat_results_and_results_for_bot,
    concurrent_writes,
    logs_are_stored_compressed,
    unversioned_logs_are_served_in_the_current_format,
    batched_writes_refuse_alone,
    failed_batch_is_written_one_by_one,
    recorder_batches_concurrent_writes,
    full_outcomes_are_stored_and_listed,
    outcomes_that_do_not_fit_are_refused,
    names_are_unique_up_to_case_and_look_alikes,
    name_keys_are_filled_in_for_older_bots,
    seat_results_carry_bot_ids,
    revoked_among_finds_revoked_bots,
    leases_decide_which_matches_are_orphans,
    the_database_clock_is_unix_milliseconds,
    the_oldest_live_arena_leads,
    retried_writes_are_written_once,
    a_late_result_of_an_aborted_match_is_refused_and_counted,
    recorder_retries_until_the_database_answers,
    calls_time_out_on_a_locked_database,
    the_retry_backlog_is_bounded,
    league_lifecycle,
    a_leagues_playing_matches_are_counted_in_the_store,
    a_cancelled_leagues_secret_waits_for_its_matches_in_play,
    a_league_ends_early_only_with_no_match_in_play,
    aborted_league_claims_are_claimed_again,
    league_archives_verify_and_tampering_is_named,
    the_largest_league_is_created,
    a_failed_league_creation_leaves_nothing,
    league_adjusted_scores_follow_the_luck_version,
    recorded_adjusted_scores_are_the_luck_of_the_stored_log,
    unplayable_league_matches_are_read_as_corrupt,
    a_league_file_is_read_once_by_the_store,
);

// ----------------------------------------------------------------------------------------------
// Helpers
// ----------------------------------------------------------------------------------------------

fn new_match(id: &str, game: &str, seats: &[&str], started_at_ms: i64) -> NewMatch {
    NewMatch {
        id: id.to_owned(),
        game: game.to_owned(),
        preset: format!("{game}-classic"),
        rules_json: format!(r#"{{"game":"{game}","lives":13}}"#),
        seed: 42,
        seat_names: seats.iter().map(|s| s.to_string()).collect(),
        seat_bot_ids: Vec::new(),
        started_at_ms,
        league: None,
    }
}

fn ids(matches: &[MatchSummary]) -> Vec<&str> {
    matches.iter().map(|m| m.id.as_str()).collect()
}

fn filter(game: Option<&str>, status: Option<MatchStatus>, limit: u32) -> MatchFilter {
    MatchFilter {
        game: game.map(str::to_owned),
        status,
        limit,
        ..MatchFilter::default()
    }
}

/// `filter` from just after the last match of `page`.
fn after(filter: MatchFilter, page: &[MatchSummary]) -> MatchFilter {
    MatchFilter {
        after: Some(MatchCursor::of(
            page.last().expect("a page with a last match"),
        )),
        ..filter
    }
}

// ----------------------------------------------------------------------------------------------
// Tests
// ----------------------------------------------------------------------------------------------

async fn migrations_apply_twice(db: TestDb) {
    let first = db.store().await;
    first
        .add_bot("alice", &hash_token(&generate_token()))
        .await
        .unwrap();
    // A second store on the same database while the first is open, then a third after both
    // are closed: applied migrations are recognised and skipped, and the data stays.
    let second = db.store().await;
    assert_eq!(second.list_bots().await.unwrap().len(), 1);
    first.close().await;
    second.close().await;
    let third = db.store().await;
    assert_eq!(third.list_bots().await.unwrap()[0].name, "alice");
    assert_eq!(
        third.backend_name(),
        match db.kind {
            Kind::Sqlite => "sqlite",
            Kind::Postgres => "postgres",
        }
    );
    third.close().await;
    let files = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../store/migrations/sqlite"
    ))
    .unwrap()
    .filter(|e| {
        e.as_ref()
            .unwrap()
            .path()
            .extension()
            .is_some_and(|x| x == "sql")
    })
    .count();
    assert_eq!(
        db.count("_sqlx_migrations").await,
        files as i64,
        "every migration applied once"
    );
}

async fn bot_registry_roundtrip(db: TestDb) {
    let store = db.store().await;
    assert!(store.list_bots().await.unwrap().is_empty());

    let before = now_ms();
    let alice_token = generate_token();
    let bob_token = generate_token();
    let alice = store
        .add_bot("alice", &hash_token(&alice_token))
        .await
        .unwrap();
    let bob = store.add_bot("bob", &hash_token(&bob_token)).await.unwrap();
    let after = now_ms();
    assert_eq!(alice.name, "alice");
    assert!((before..=after).contains(&alice.created_at_ms));
    assert_eq!(alice.revoked_at_ms, None);
    assert!(!alice.is_revoked());
    assert_ne!(alice.id, bob.id);

    assert_eq!(
        store.list_bots().await.unwrap(),
        vec![alice.clone(), bob.clone()]
    );
    assert_eq!(
        store
            .bot_by_token_hash(&hash_token(&alice_token))
            .await
            .unwrap(),
        Some(alice.clone())
    );
    assert_eq!(
        store
            .bot_by_token_hash(&hash_token(&bob_token))
            .await
            .unwrap(),
        Some(bob.clone())
    );
    assert_eq!(store.bot_by_name("bob").await.unwrap(), Some(bob.clone()));
    assert_eq!(store.bot_by_name("carol").await.unwrap(), None);
    let stranger = hash_token(&generate_token());
    assert_eq!(store.bot_by_token_hash(&stranger).await.unwrap(), None);
    // Looking up by the clear token finds nothing: only hashes are stored.
    assert_eq!(store.bot_by_token_hash(&alice_token).await.unwrap(), None);

    // Revoking: once, then no more; unknown bots are not revoked.
    assert!(store.revoke_bot("alice").await.unwrap());
    assert!(!store.revoke_bot("alice").await.unwrap());
    assert!(!store.revoke_bot("carol").await.unwrap());
    assert_eq!(
        store
            .bot_by_token_hash(&hash_token(&alice_token))
            .await
            .unwrap(),
        None,
        "a revoked token must not authenticate"
    );
    assert_eq!(
        store
            .bot_by_token_hash(&hash_token(&bob_token))
            .await
            .unwrap(),
        Some(bob.clone())
    );
    let bots = store.list_bots().await.unwrap();
    assert_eq!(bots.len(), 2);
    let revoked: &BotRecord = &bots[0];
    assert_eq!(revoked.name, "alice");
    let revoked_at = revoked.revoked_at_ms.expect("alice is revoked");
    assert!(revoked_at >= alice.created_at_ms && revoked_at <= now_ms());
    assert_eq!(bots[1], bob);
}

async fn duplicate_and_invalid_bots(db: TestDb) {
    let store = db.store().await;
    let token = generate_token();
    store.add_bot("alice", &hash_token(&token)).await.unwrap();

    let err = store
        .add_bot("alice", &hash_token(&generate_token()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NameTaken { name, .. } if name == "alice"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "a bot named \"alice\" already exists: choose another name"
    );

    // Revoked bots keep their names.
    assert!(store.revoke_bot("alice").await.unwrap());
    let err = store
        .add_bot("alice", &hash_token(&generate_token()))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NameTaken { .. }), "{err:?}");

    // The same token for two bots is refused.
    let err = store.add_bot("bob", &hash_token(&token)).await.unwrap_err();
    assert!(matches!(err, StoreError::TokenTaken), "{err:?}");

    // A clear token passed where the hash belongs is refused, and so are bad names.
    let err = store.add_bot("carol", &generate_token()).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidTokenHash), "{err:?}");
    let err = store
        .add_bot(" carol", &hash_token(&generate_token()))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidBotName(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "invalid bot name \" carol\": a bot name cannot start or end with a space"
    );

    let names: Vec<String> = store
        .list_bots()
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(names, ["alice"]);
}

async fn tokens_never_stored_in_clear(db: TestDb) {
    let store = db.store().await;
    let mut tokens = Vec::new();
    for name in ["alice", "bob", "carol"] {
        let token = generate_token();
        store.add_bot(name, &hash_token(&token)).await.unwrap();
        tokens.push(token);
    }
    store.revoke_bot("bob").await.unwrap();
    store.close().await;

    let rows = db.raw_rows("bots").await;
    assert_eq!(rows.len(), 3);
    let dump = format!("{rows:?}");
    for token in &tokens {
        let secret = &token[4..];
        assert!(!dump.contains(secret), "a clear token is in the bots table");
        assert!(
            dump.contains(&hash_token(token)),
            "the hash should be stored"
        );
    }
    if db.kind == Kind::Sqlite {
        // Nowhere in the database files either (main file, write-ahead log).
        let path = db.url.strip_prefix("sqlite://").unwrap();
        for file in [path.to_owned(), format!("{path}-wal")] {
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            for token in &tokens {
                let secret = &token.as_bytes()[4..];
                assert!(
                    !bytes.windows(secret.len()).any(|w| w == secret),
                    "a clear token is in {file}"
                );
            }
        }
    }
}

async fn match_lifecycle(db: TestDb) {
    let store = db.store().await;
    let mut new = new_match("m-1", "schocken", &["alice", "bob"], 1_000);
    new.seed = u64::MAX as i64; // the engine's u64 seeds round-trip through the bit pattern
    store.insert_match(&new).await.unwrap();

    let err = store.insert_match(&new).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::MatchExists { id } if id == "m-1"),
        "{err:?}"
    );

    assert_eq!(
        store.match_log("m-1").await.unwrap(),
        Some((MatchStatus::Running, None))
    );
    assert_eq!(store.match_log("m-unknown").await.unwrap(), None);

    let record = store.get_match("m-1").await.unwrap().expect("stored");
    assert_eq!(record.seed as u64, u64::MAX);
    assert_eq!(record.summary.rules_json, new.rules_json);
    assert_eq!(
        record.summary,
        MatchSummary {
            id: "m-1".into(),
            game: "schocken".into(),
            preset: "schocken-classic".into(),
            seat_names: vec!["alice".into(), "bob".into()],
            status: MatchStatus::Running,
            placings: None,
            outcome: None,
            abort_reason: None,
            started_at_ms: 1_000,
            finished_at_ms: None,
            rules_json: new.rules_json.clone(),
        }
    );
    assert!(store.get_match("m-unknown").await.unwrap().is_none());

    let log = r#"{"events":[{"roll":[1,1,1]}]}"#;
    store
        .finish_match("m-1", log, &placed(&[2, 1]), 5_000)
        .await
        .unwrap();
    assert_eq!(
        store.match_log("m-1").await.unwrap(),
        Some((MatchStatus::Finished, Some(log.to_owned())))
    );
    let listed = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].status, MatchStatus::Finished);
    assert_eq!(listed[0].placings, Some(vec![2, 1]));
    assert_eq!(listed[0].finished_at_ms, Some(5_000));
    assert_eq!(listed[0].abort_reason, None);

    // A match ends once.
    let err = store
        .finish_match("m-1", log, &placed(&[1, 2]), 6_000)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::MatchNotRunning { id } if id == "m-1"),
        "{err:?}"
    );
    let err = store
        .abort_match("m-1", "too late", None, 6_000)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MatchNotRunning { .. }), "{err:?}");
    let err = store
        .finish_match("m-unknown", log, &placed(&[1]), 6_000)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MatchNotRunning { .. }), "{err:?}");
    assert_eq!(
        store.match_log("m-1").await.unwrap(),
        Some((MatchStatus::Finished, Some(log.to_owned())))
    );
    assert_eq!(
        store
            .get_match("m-1")
            .await
            .unwrap()
            .unwrap()
            .summary
            .placings,
        Some(vec![2, 1])
    );
}

async fn failed_finish_writes_nothing(db: TestDb) {
    let store = db.store().await;
    store
        .insert_match(&new_match(
            "m-1",
            "schocken",
            &["alice", "bob", "carol"],
            1_000,
        ))
        .await
        .unwrap();
    let err = store
        .finish_match("m-1", "{}", &placed(&[1, 2]), 2_000)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::PlacingsMismatch {
                seats: 3,
                placings: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "match \"m-1\" has 3 seats but 2 placings were given"
    );
    // The transaction was rolled back: still running, no log, no results.
    assert_eq!(
        store.match_log("m-1").await.unwrap(),
        Some((MatchStatus::Running, None))
    );
    assert_eq!(db.count(SEAT_RESULTS).await, 0);
    // And it can still be finished properly.
    store
        .finish_match("m-1", "{}", &placed(&[3, 1, 2]), 2_000)
        .await
        .unwrap();
    assert_eq!(db.count(SEAT_RESULTS).await, 3);

    // A match started without seat names takes any placings and writes no seat results.
    store
        .insert_match(&new_match("m-2", "schocken", &[], 1_000))
        .await
        .unwrap();
    store
        .finish_match("m-2", "{}", &placed(&[1, 2]), 2_000)
        .await
        .unwrap();
    assert_eq!(db.count(SEAT_RESULTS).await, 3);
}

async fn abort_match_keeps_given_log(db: TestDb) {
    let store = db.store().await;
    for id in ["m-1", "m-2"] {
        store
            .insert_match(&new_match(id, "zokken", &["alice", "bob"], 1_000))
            .await
            .unwrap();
    }
    let partial = r#"{"events":[]}"#;
    store
        .abort_match("m-1", "bob disconnected", Some(partial), 3_000)
        .await
        .unwrap();
    store
        .abort_match("m-2", "the arena shut down", None, 4_000)
        .await
        .unwrap();
    assert_eq!(
        store.match_log("m-1").await.unwrap(),
        Some((MatchStatus::Aborted, Some(partial.to_owned())))
    );
    assert_eq!(
        store.match_log("m-2").await.unwrap(),
        Some((MatchStatus::Aborted, None))
    );
    let m1 = store.get_match("m-1").await.unwrap().unwrap().summary;
    assert_eq!(m1.status, MatchStatus::Aborted);
    assert_eq!(m1.abort_reason.as_deref(), Some("bob disconnected"));
    assert_eq!(m1.finished_at_ms, Some(3_000));
    assert_eq!(m1.placings, None);
    // Aborted matches cannot be finished or aborted again, and leave no results.
    let err = store
        .finish_match("m-1", "{}", &placed(&[1, 2]), 5_000)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MatchNotRunning { .. }), "{err:?}");
    let err = store
        .abort_match("m-2", "again", None, 5_000)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MatchNotRunning { .. }), "{err:?}");
    let err = store
        .abort_match("m-9", "unknown", None, 5_000)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MatchNotRunning { .. }), "{err:?}");
    assert_eq!(db.count(SEAT_RESULTS).await, 0);
}

async fn logs_are_stored_compressed(db: TestDb) {
    let store = db.store().await;
    for id in ["m-1", "m-2", "m-3"] {
        store
            .insert_match(&new_match(id, "schocken", &["alice", "bob"], 1_000))
            .await
            .unwrap();
    }
    // A log as repetitive as the engine's JSON logs.
    let entry = r#"{"kind":"throw","seat":1,"round":3,"throw":2,"rolled":[0,2],"dice":[1,4,6]},"#;
    let log = format!("{{\"entries\":[{}{{}}]}}", entry.repeat(500));
    store
        .finish_match("m-1", &log, &placed(&[1, 2]), 2_000)
        .await
        .unwrap();
    store
        .abort_match("m-2", "the arena shut down", Some(&log), 2_000)
        .await
        .unwrap();
    for id in ["m-1", "m-2"] {
        let (_, stored) = store.match_log(id).await.unwrap().unwrap();
        assert_eq!(stored.as_deref(), Some(log.as_str()));
        let packed = db
            .scalar(&format!(
                "SELECT CAST(length(log_lz4) AS BIGINT) FROM matches \
                 WHERE id = '{id}' AND log_json IS NULL"
            ))
            .await;
        assert!(
            packed > 0 && packed * 10 < log.len() as i64,
            "{id}: {packed} bytes stored for a {} byte log",
            log.len()
        );
    }
    // A log stored before compression (in log_json) still reads.
    store
        .finish_match("m-3", "{}", &placed(&[2, 1]), 2_000)
        .await
        .unwrap();
    db.execute("UPDATE matches SET log_lz4 = NULL, log_json = '{\"old\":true}' WHERE id = 'm-3'")
        .await;
    let (status, stored) = store.match_log("m-3").await.unwrap().unwrap();
    assert_eq!(status, MatchStatus::Finished);
    assert_eq!(stored.as_deref(), Some(r#"{"old":true}"#));
}

async fn unversioned_logs_are_served_in_the_current_format(db: TestDb) {
    use knobel_engine::{LOG_FORMAT_VERSION, Match, MatchLog, Rules, policy};
    let store = db.store().await;
    let mut rules = Rules::preset("zokken").unwrap();
    rules.set_number("rounds", 3).unwrap();
    let mut m = Match::new_with_log(rules, 9, 3).unwrap();
    let mut players: Vec<_> = (0..3)
        .map(|i| policy::by_name("random", i).unwrap())
        .collect();
    policy::play_out(&mut m, &mut players);
    let log = m.log().unwrap().clone();
    let current = log.to_json();
    // The log as the arena stored it before logs had a format_version.
    let mut old: serde_json::Value = serde_json::from_str(&current).unwrap();
    old.as_object_mut().unwrap().remove("format_version");
    let old = old.to_string();
    assert_eq!(MatchLog::format_of(&old).unwrap(), 0);
    for id in ["m-1", "m-2", "m-3"] {
        store
            .insert_match(&new_match(id, "zokken", &["a", "b", "c"], 1_000))
            .await
            .unwrap();
    }
    store
        .finish_match("m-1", &old, &placed(&[1, 2, 3]), 2_000)
        .await
        .unwrap();
    store
        .finish_match("m-2", &current, &placed(&[1, 2, 3]), 2_000)
        .await
        .unwrap();
    // And one stored even before logs were compressed.
    store
        .finish_match("m-3", "{}", &placed(&[1, 2, 3]), 2_000)
        .await
        .unwrap();
    db.execute(&format!(
        "UPDATE matches SET log_lz4 = NULL, log_json = '{}' WHERE id = 'm-3'",
        old.replace('\'', "''")
    ))
    .await;
    for id in ["m-1", "m-2", "m-3"] {
        let (status, served) = store.match_log(id).await.unwrap().unwrap();
        assert_eq!(status, MatchStatus::Finished);
        let served = served.expect("a log");
        assert_eq!(
            MatchLog::format_of(&served).unwrap(),
            LOG_FORMAT_VERSION,
            "{id}"
        );
        assert_eq!(
            served, current,
            "{id}: served as the current format writes it"
        );
        assert_eq!(MatchLog::from_json(&served).unwrap(), log);
    }
}

async fn list_matches_filters_and_order(db: TestDb) {
    let store = db.store().await;
    // Inserted out of start order on purpose.
    let plan = [
        ("a", "schocken", 3_000),
        ("b", "zokken", 1_000),
        ("c", "schocken", 5_000),
        ("d", "sjokken", 2_000),
        ("e", "schocken", 4_000),
        ("f", "zokken", 6_000),
        ("g", "schocken", 6_000), // same start as f: ties go by id, descending
    ];
    for (id, game, started) in plan {
        store
            .insert_match(&new_match(id, game, &["x", "y"], started))
            .await
            .unwrap();
    }
    store
        .finish_match("a", "{}", &placed(&[1, 2]), 7_000)
        .await
        .unwrap();
    store
        .finish_match("c", "{}", &placed(&[2, 1]), 7_000)
        .await
        .unwrap();
    store
        .finish_match("b", "{}", &placed(&[1, 1]), 7_000)
        .await
        .unwrap();
    store.abort_match("e", "crash", None, 7_000).await.unwrap();

    let all = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(ids(&all), ["g", "f", "c", "e", "a", "d", "b"]);

    let schocken = store
        .list_matches(&filter(Some("schocken"), None, 50))
        .await
        .unwrap();
    assert_eq!(ids(&schocken), ["g", "c", "e", "a"]);
    assert!(schocken.iter().all(|m| m.game == "schocken"));

    let finished = store
        .list_matches(&filter(None, Some(MatchStatus::Finished), 50))
        .await
        .unwrap();
    assert_eq!(ids(&finished), ["c", "a", "b"]);
    let running = store
        .list_matches(&filter(None, Some(MatchStatus::Running), 50))
        .await
        .unwrap();
    assert_eq!(ids(&running), ["g", "f", "d"]);
    let aborted = store
        .list_matches(&filter(None, Some(MatchStatus::Aborted), 50))
        .await
        .unwrap();
    assert_eq!(ids(&aborted), ["e"]);

    let both = store
        .list_matches(&filter(Some("schocken"), Some(MatchStatus::Finished), 50))
        .await
        .unwrap();
    assert_eq!(ids(&both), ["c", "a"]);
    let none = store
        .list_matches(&filter(Some("kniffel"), None, 50))
        .await
        .unwrap();
    assert!(none.is_empty());

    // Paging.
    // Paging by position: each page starts after the last match of the one before.
    let three = filter(None, None, 3);
    let (page1, more1) = store.list_matches_page(&three).await.unwrap();
    let (page2, more2) = store
        .list_matches_page(&after(three.clone(), &page1))
        .await
        .unwrap();
    let (page3, more3) = store
        .list_matches_page(&after(three.clone(), &page2))
        .await
        .unwrap();
    assert_eq!(ids(&page1), ["g", "f", "c"]);
    assert_eq!(ids(&page2), ["e", "a", "d"]);
    assert_eq!(ids(&page3), ["b"]);
    assert_eq!((more1, more2, more3), (true, true, false));
    // A full last page says so too.
    let six = filter(None, None, 6);
    let (first, more) = store.list_matches_page(&six).await.unwrap();
    assert!(more);
    let (last, more) = store.list_matches_page(&after(six, &first)).await.unwrap();
    assert_eq!((ids(&last), more), (vec!["b"], false));
    let (all_seven, more) = store
        .list_matches_page(&filter(None, None, 7))
        .await
        .unwrap();
    assert_eq!((all_seven.len(), more), (7, false));
    // From between f and g's start (same millisecond, ids descending) and with a filter.
    let after_g = MatchFilter {
        after: Some(MatchCursor {
            started_at_ms: 6_000,
            id: "g".to_owned(),
        }),
        ..filter(Some("schocken"), None, 50)
    };
    assert_eq!(
        ids(&store.list_matches(&after_g).await.unwrap()),
        ["c", "e", "a"]
    );

    // A limit of 0 is clamped up to 1.
    let one = store.list_matches(&filter(None, None, 0)).await.unwrap();
    assert_eq!(ids(&one), ["g"]);
}

async fn list_matches_by_bot(db: TestDb) {
    let store = db.store().await;
    let plan: [(&str, &str, &[&str], i64); 5] = [
        ("a", "schocken", &["ann", "bob"], 1_000),
        ("b", "zokken", &["bob", "cy", "dee"], 2_000),
        ("c", "schocken", &["cy", "builtin-random-1"], 3_000),
        ("d", "sjokken", &["Bob", "ann"], 4_000),
        ("e", "schocken", &["bob", "ann"], 5_000),
    ];
    for (id, game, seats, started) in plan {
        store
            .insert_match(&new_match(id, game, seats, started))
            .await
            .unwrap();
    }
    // A match started and finished in one batch has its seats too.
    let batched = new_match("f", "zokken", &["bob", "eve"], 6_000);
    let results = store
        .write_matches(&[
            MatchWrite::Start(batched),
            MatchWrite::Finish(FinishedMatch {
                id: "f".to_owned(),
                log_json: "{}".to_owned(),
                outcome: placed(&[1, 2]),
                finished_at_ms: 7_000,
                adjusted: None,
            }),
        ])
        .await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    store
        .finish_match("a", "{}", &placed(&[2, 1]), 7_000)
        .await
        .unwrap();
    store.abort_match("b", "crash", None, 7_000).await.unwrap();

    let by = |name: &str| MatchFilter {
        bot_name: Some(name.to_owned()),
        ..MatchFilter::default()
    };
    // Running, finished and aborted alike; names compared exactly.
    assert_eq!(
        ids(&store.list_matches(&by("bob")).await.unwrap()),
        ["f", "e", "b", "a"]
    );
    assert_eq!(ids(&store.list_matches(&by("Bob")).await.unwrap()), ["d"]);
    assert_eq!(
        ids(&store.list_matches(&by("ann")).await.unwrap()),
        ["e", "d", "a"]
    );
    assert_eq!(
        ids(&store.list_matches(&by("builtin-random-1")).await.unwrap()),
        ["c"]
    );
    assert!(store.list_matches(&by("nobody")).await.unwrap().is_empty());
    // With the other filters and paging.
    let finished_bob = MatchFilter {
        status: Some(MatchStatus::Finished),
        ..by("bob")
    };
    assert_eq!(
        ids(&store.list_matches(&finished_bob).await.unwrap()),
        ["f", "a"]
    );
    let schocken_bob = MatchFilter {
        game: Some("schocken".to_owned()),
        ..by("bob")
    };
    assert_eq!(
        ids(&store.list_matches(&schocken_bob).await.unwrap()),
        ["e", "a"]
    );
    let one_by_one = MatchFilter {
        limit: 1,
        ..by("bob")
    };
    let mut pages = Vec::new();
    let mut page = store.list_matches_page(&one_by_one).await.unwrap();
    loop {
        pages.extend(ids(&page.0).into_iter().map(str::to_owned));
        if !page.1 {
            break;
        }
        page = store
            .list_matches_page(&after(one_by_one.clone(), &page.0))
            .await
            .unwrap();
    }
    assert_eq!(pages, ["f", "e", "b", "a"]);
}

/// Migration 0007 fills `match_seats` in for the matches stored before it, from their seat
/// names and seat bot ids: it gives the rows the store writes itself, and migration 0013,
/// which drops those JSON columns, keeps them.
async fn match_seats_are_filled_in_for_older_matches(db: TestDb) {
    let seats = "(SELECT match_id, seat, bot_name, bot_id FROM match_seats) AS s";
    // Two matches as an arena before migration 0007 stored them.
    Store::connect_at_version(&db.url, 5)
        .await
        .unwrap()
        .close()
        .await;
    db.execute(
        "INSERT INTO matches (id, game, preset, rules_json, seed, seat_names, status, \
         started_at_ms, seat_bot_ids) VALUES \
         ('a', 'schocken', 'schocken', '{}', 1, '[\"ann\",\"bob\",\"builtin-timid-1\"]', \
          'running', 1000, '[5,6,null]'), \
         ('b', 'zokken', 'zokken', '{}', 2, '[\"bob\",\"cy\"]', 'running', 2000, NULL)",
    )
    .await;
    let store = db.store().await;
    let mut filled = db.raw_rows(seats).await;
    filled.sort();
    let row =
        |m: &str, seat: &str, name: &str, id: &str| [m, seat, name, id].map(str::to_owned).to_vec();
    assert_eq!(
        filled,
        [
            row("a", "0", "ann", "5"),
            row("a", "1", "bob", "6"),
            row("a", "2", "builtin-timid-1", ""),
            row("b", "0", "bob", ""),
            row("b", "1", "cy", ""),
        ]
    );
    // The store writes the same rows for the same seats.
    let mut with_ids = new_match("c", "schocken", &["ann", "bob", "builtin-timid-1"], 3_000);
    with_ids.seat_bot_ids = vec![Some(5), Some(6), None];
    store.insert_match(&with_ids).await.unwrap();
    let mut written = db.raw_rows(seats).await;
    written.retain(|r| r[0] == "c");
    written.sort();
    let filled_a: Vec<Vec<String>> = filled.iter().filter(|r| r[0] == "a").cloned().collect();
    for (w, f) in written.iter().zip(&filled_a) {
        assert_eq!(w[1..], f[1..]);
    }
    assert_eq!(written.len(), filled_a.len());
    let by_bob = MatchFilter {
        bot_name: Some("bob".to_owned()),
        ..MatchFilter::default()
    };
    assert_eq!(
        ids(&store.list_matches(&by_bob).await.unwrap()),
        ["c", "b", "a"]
    );
}

/// Migration 0013 stores a match's seats and their results once, in `match_seats`: the
/// seats, placings and results an arena stored before it (JSON columns, `seat_results`) read
/// the same after it, and the store goes on writing.
async fn seats_and_results_stored_before_0013_stay_readable(db: TestDb) {
    Store::connect_at_version(&db.url, 12)
        .await
        .unwrap()
        .close()
        .await;
    db.execute(
        "INSERT INTO bots (id, name, token_hash, created_at_ms) VALUES (7, 'ann', 'h', 1); \
         INSERT INTO matches (id, game, preset, rules_json, seed, seat_names, status, \
          placings, started_at_ms, finished_at_ms, seat_bot_ids) VALUES \
         ('f', 'schocken', 'schocken', '{}', 1, '[\"ann\",\"bob\"]', 'finished', '[2,1]', \
          1000, 2000, NULL), \
         ('r', 'zokken', 'zokken', '{}', 2, '[\"ann\",\"cy\"]', 'running', NULL, 3000, NULL, \
          '[7,null]'), \
         ('g', 'zokken', 'zokken', '{}', 3, '[\"bob\",\"cy\"]', 'finished', '[1,2]', \
          4000, 5000, NULL); \
         INSERT INTO match_seats (match_id, seat, bot_name, bot_id) VALUES \
         ('f', 0, 'ann', NULL), ('f', 1, 'bob', NULL), ('r', 0, 'ann', 7), ('r', 1, 'cy', NULL); \
         INSERT INTO seat_results (match_id, seat, bot_name, place, strikes, timeouts, \
          forfeit_reason, tokens, chips, bot_id, adjusted_score) VALUES \
         ('f', 0, 'ann', 2, 1, 0, NULL, 3, NULL, 7, NULL), \
         ('f', 1, 'bob', 1, 0, 2, NULL, 0, NULL, NULL, 0.5), \
         ('g', 0, 'bob', 1, 0, 0, NULL, NULL, 4, NULL, NULL), \
         ('g', 1, 'cy', 2, 3, 0, 'strikes', NULL, -4, NULL, NULL)",
    )
    .await;
    let store = db.store().await;
    let read = |id: &'static str| {
        let store = store.clone();
        async move { store.get_match(id).await.unwrap().unwrap().summary }
    };
    let f = read("f").await;
    assert_eq!(
        (f.seat_names, f.placings),
        (vec!["ann".into(), "bob".into()], Some(vec![2, 1]))
    );
    let r = read("r").await;
    assert_eq!(
        (r.seat_names, r.placings),
        (vec!["ann".into(), "cy".into()], None)
    );
    // A result whose seat had no row gets one.
    let g = read("g").await;
    assert_eq!(
        (g.seat_names, g.placings),
        (vec!["bob".into(), "cy".into()], Some(vec![1, 2]))
    );
    let seat =
        |seat, bot_name: &str, place, strikes, timeouts, forfeit, tokens, chips| SeatResult {
            seat,
            bot_name: bot_name.to_owned(),
            place,
            strikes,
            timeouts,
            forfeit,
            tokens,
            chips,
        };
    assert_eq!(
        store.seat_results("f").await.unwrap(),
        [
            seat(0, "ann", 2, 1, 0, None, Some(3), None),
            seat(1, "bob", 1, 0, 2, None, Some(0), None),
        ]
    );
    assert_eq!(
        store.seat_results("g").await.unwrap(),
        [
            seat(0, "bob", 1, 0, 0, None, None, Some(4)),
            seat(
                1,
                "cy",
                2,
                3,
                0,
                Some(ForfeitReason::Strikes),
                None,
                Some(-4)
            ),
        ]
    );
    assert!(store.seat_results("r").await.unwrap().is_empty());
    assert_eq!(
        db.scalar("SELECT COUNT(*) FROM match_seats WHERE adjusted_score > 0.4")
            .await,
        1
    );
    // A seat's bot id that its start did not keep comes from its result.
    let by_id = store.results_for_bot_id(7).await.unwrap();
    assert_eq!(
        by_id
            .iter()
            .map(|r| (r.match_id.as_str(), r.seat, r.place, r.seats))
            .collect::<Vec<_>>(),
        [("f", 0, 2, 2)]
    );
    let cy = store.bot_totals("cy").await.unwrap();
    assert_eq!((cy.matches, cy.strikes, cy.forfeits), (1, 3, 1));
    let by_cy = MatchFilter {
        bot_name: Some("cy".to_owned()),
        ..MatchFilter::default()
    };
    assert_eq!(ids(&store.list_matches(&by_cy).await.unwrap()), ["g", "r"]);
    assert_eq!(db.count("match_seats").await, 6);
    // The store goes on: the running match finishes into the same rows.
    store
        .finish_match("r", "{}", &placed(&[1, 2]), 6_000)
        .await
        .unwrap();
    assert_eq!(read("r").await.placings, Some(vec![1, 2]));
    assert_eq!(store.results_for_bot_id(7).await.unwrap().len(), 2);
}

async fn list_limit_is_clamped(db: TestDb) {
    let store = db.store().await;
    let total = MatchFilter::MAX_LIMIT as usize + 5;
    for i in 0..total {
        store
            .insert_match(&new_match(
                &format!("m-{i:04}"),
                "schocken",
                &["x"],
                i as i64,
            ))
            .await
            .unwrap();
    }
    let page = store
        .list_matches(&filter(None, None, u32::MAX))
        .await
        .unwrap();
    assert_eq!(page.len(), MatchFilter::MAX_LIMIT as usize);
    assert_eq!(page[0].id, format!("m-{:04}", total - 1));
    let rest = store
        .list_matches(&after(filter(None, None, u32::MAX), &page))
        .await
        .unwrap();
    assert_eq!(
        ids(&rest),
        ["m-0004", "m-0003", "m-0002", "m-0001", "m-0000"]
    );
}

async fn mark_running_as_aborted(db: TestDb) {
    let store = db.store().await;
    for (id, started) in [("r1", 1_000), ("r2", 2_000), ("r3", 3_000), ("done", 4_000)] {
        store
            .insert_match(&new_match(id, "schocken", &["x", "y"], started))
            .await
            .unwrap();
    }
    store
        .finish_match("done", "{}", &placed(&[1, 2]), 5_000)
        .await
        .unwrap();

    let before = now_ms();
    let n = store
        .mark_running_as_aborted("the arena restarted")
        .await
        .unwrap();
    assert_eq!(n, 3);
    for id in ["r1", "r2", "r3"] {
        let m = store.get_match(id).await.unwrap().unwrap().summary;
        assert_eq!(m.status, MatchStatus::Aborted);
        assert_eq!(m.abort_reason.as_deref(), Some("the arena restarted"));
        assert!(m.finished_at_ms.unwrap() >= before);
    }
    let done = store.get_match("done").await.unwrap().unwrap().summary;
    assert_eq!(done.status, MatchStatus::Finished);
    assert_eq!(done.abort_reason, None);
    assert_eq!(done.finished_at_ms, Some(5_000));
    assert_eq!(store.mark_running_as_aborted("again").await.unwrap(), 0);
}

async fn seat_results_and_results_for_bot(db: TestDb) {
    let store = db.store().await;
    // alice plays herself in m-1 (seats 0 and 2).
    store
        .insert_match(&new_match(
            "m-1",
            "schocken",
            &["alice", "bob", "alice"],
            1_000,
        ))
        .await
        .unwrap();
    store
        .insert_match(&new_match("m-2", "zokken", &["bob", "alice"], 2_000))
        .await
        .unwrap();
    store
        .insert_match(&new_match("m-3", "zokken", &["alice", "carol"], 3_000))
        .await
        .unwrap();
    store
        .insert_match(&new_match("m-4", "zokken", &["alice", "carol"], 4_000))
        .await
        .unwrap();
    // m-2 finishes before m-1.
    store
        .finish_match("m-2", "{}", &placed(&[1, 1]), 8_000)
        .await
        .unwrap();
    store
        .finish_match("m-1", "{}", &placed(&[2, 1, 3]), 9_000)
        .await
        .unwrap();
    store
        .abort_match("m-3", "crash", None, 9_500)
        .await
        .unwrap();
    // m-4 stays running.

    let mut rows = db.raw_rows(SEAT_RESULTS).await;
    rows.sort();
    assert_eq!(
        rows,
        [
            // match, seat, bot, place, strikes, timeouts, forfeit, tokens, chips, bot id,
            // adjusted score (none: not league matches)
            ["m-1", "0", "alice", "2", "0", "0", "", "0", "", "", ""],
            ["m-1", "1", "bob", "1", "0", "0", "", "0", "", "", ""],
            ["m-1", "2", "alice", "3", "0", "0", "", "0", "", "", ""],
            ["m-2", "0", "bob", "1", "0", "0", "", "", "0", "", ""],
            ["m-2", "1", "alice", "1", "0", "0", "", "", "0", "", ""],
        ]
    );

    let alice = store.results_for_bot("alice").await.unwrap();
    let summary: Vec<(&str, &str, u8, u8, u8, i64)> = alice
        .iter()
        .map(|r| {
            (
                r.match_id.as_str(),
                r.game.as_str(),
                r.seat,
                r.place,
                r.seats,
                r.finished_at_ms,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("m-2", "zokken", 1, 1, 2, 8_000),
            ("m-1", "schocken", 0, 2, 3, 9_000),
            ("m-1", "schocken", 2, 3, 3, 9_000),
        ]
    );
    let bob = store.results_for_bot("bob").await.unwrap();
    assert_eq!(bob.len(), 2);
    assert_eq!((bob[1].match_id.as_str(), bob[1].place), ("m-1", 1));
    // carol only played matches that did not finish.
    assert!(store.results_for_bot("carol").await.unwrap().is_empty());
    assert!(store.results_for_bot("nobody").await.unwrap().is_empty());
}

async fn concurrent_writes(db: TestDb) {
    let store = db.store().await;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..24 {
        let store = store.clone();
        tasks.spawn(async move {
            let id = format!("m-{i:02}");
            store
                .insert_match(&new_match(&id, "schocken", &["alice", "bob"], i))
                .await?;
            if i % 3 == 0 {
                store.abort_match(&id, "crash", None, 100 + i).await
            } else {
                store
                    .finish_match(&id, "{}", &placed(&[1, 2]), 100 + i)
                    .await
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined.expect("task").expect("write");
    }
    let finished = store
        .list_matches(&filter(None, Some(MatchStatus::Finished), 100))
        .await
        .unwrap();
    assert_eq!(finished.len(), 16);
    assert_eq!(store.results_for_bot("alice").await.unwrap().len(), 16);
    assert_eq!(db.count(SEAT_RESULTS).await, 32);
}

fn finish(id: &str, placings: &[u8], finished_at_ms: i64) -> MatchWrite {
    MatchWrite::Finish(FinishedMatch {
        id: id.to_owned(),
        log_json: format!(r#"{{"match":"{id}"}}"#),
        outcome: placed(placings),
        finished_at_ms,
        adjusted: None,
    })
}

/// A Zokken outcome with these placings, no penalties and no chips won.
fn placed(placings: &[u8]) -> Outcome {
    let n = placings.len();
    Outcome {
        placings: placings.to_vec(),
        loser: None,
        tokens: vec![0; n],
        halves_lost: vec![0; n],
        chips: vec![0; n],
        strikes: vec![0; n],
        timeouts: vec![0; n],
        forfeits: vec![None; n],
    }
}

fn abort(id: &str, finished_at_ms: i64) -> MatchWrite {
    MatchWrite::Abort(AbortedMatch {
        id: id.to_owned(),
        reason: "the arena shut down".to_owned(),
        log_json: None,
        finished_at_ms,
    })
}

/// A Schocken outcome: seat 2 forfeited after three strikes (two of them timeouts) and is
/// placed last; seat 0 lost the game as played.
fn schocken_forfeit() -> Outcome {
    Outcome {
        placings: vec![2, 1, 3],
        loser: Some(knobel_engine::Seat(0)),
        tokens: vec![13, 0, 0],
        halves_lost: vec![2, 0, 1],
        chips: vec![0, 0, 0],
        strikes: vec![1, 0, 3],
        timeouts: vec![0, 0, 2],
        forfeits: vec![None, None, Some(ForfeitReason::Strikes)],
    }
}

/// A Zokken outcome: seat 0 was gone before the match began.
fn zokken_absent() -> Outcome {
    Outcome {
        placings: vec![2, 1],
        loser: None,
        tokens: vec![0, 0],
        halves_lost: vec![0, 0],
        chips: vec![-7, 7],
        strikes: vec![0, 0],
        timeouts: vec![0, 0],
        forfeits: vec![Some(ForfeitReason::Absent), None],
    }
}

/// The stored outcome JSON of match `id`, as its fields' names.
async fn stored_outcome_fields(db: &TestDb, id: &str) -> Vec<String> {
    let json = with_conn!(db, conn => {
        sqlx::query_scalar::<_, String>("SELECT outcome_json FROM matches WHERE id = $1")
            .bind(id)
            .fetch_one(&mut conn)
            .await
            .unwrap()
    });
    let fields: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&json).unwrap();
    fields.keys().cloned().collect()
}

async fn outcomes_are_stored_without_zero_filled_fields(db: TestDb) {
    let store = db.store().await;
    let sjokken = Outcome {
        halves_lost: vec![0, 0, 0],
        ..schocken_forfeit()
    };
    let matches = [
        ("s", "schocken", schocken_forfeit()),
        ("j", "sjokken", sjokken),
        ("z", "zokken", zokken_absent()),
    ];
    for (id, game, outcome) in &matches {
        let seats = ["a", "b", "c"][..outcome.placings.len()].to_vec();
        store
            .insert_match(&new_match(id, game, &seats, 1_000))
            .await
            .unwrap();
        store.finish_match(id, "{}", outcome, 2_000).await.unwrap();
    }
    // RULES.md A.7: a value a game does not have is left out, never zero-filled.
    let expected = |id: &str| -> Vec<&str> {
        match id {
            "s" => vec![
                "halves_lost",
                "loser",
                "placings",
                "strikes",
                "timeouts",
                "tokens",
                "forfeits",
            ],
            "j" => vec![
                "loser", "placings", "strikes", "timeouts", "tokens", "forfeits",
            ],
            _ => vec!["chips", "placings", "forfeits"],
        }
    };
    let check = |id: &'static str, fields: Vec<String>| {
        let mut fields = fields;
        fields.sort();
        let mut want: Vec<String> = expected(id).into_iter().map(String::from).collect();
        want.sort();
        assert_eq!(fields, want, "match {id}");
    };
    for (id, _, outcome) in &matches {
        check(id, stored_outcome_fields(&db, id).await);
        let read = store.get_match(id).await.unwrap().unwrap();
        assert_eq!(read.summary.outcome.as_ref(), Some(outcome), "match {id}");
    }
    // Rows stored before migration 0011 (every list, zero-filled) are rewritten by it and
    // read the same: put the old form back, forget that 0011 ran, and open the store again.
    for (id, _, outcome) in &matches {
        let old = serde_json::to_string(outcome).unwrap();
        assert!(
            old.contains("\"chips\"") && old.contains("\"tokens\""),
            "{old}"
        );
        with_conn!(db, conn => {
            sqlx::query("UPDATE matches SET outcome_json = $1 WHERE id = $2")
                .bind(&old)
                .bind(*id)
                .execute(&mut conn)
                .await
                .unwrap();
        });
        let read = store.get_match(id).await.unwrap().unwrap();
        assert_eq!(
            read.summary.outcome.as_ref(),
            Some(outcome),
            "old form of {id}"
        );
    }
    store.close().await;
    db.execute("DELETE FROM _sqlx_migrations WHERE version = 11")
        .await;
    let store = db.store().await;
    for (id, _, outcome) in &matches {
        check(id, stored_outcome_fields(&db, id).await);
        let read = store.get_match(id).await.unwrap().unwrap();
        assert_eq!(
            read.summary.outcome.as_ref(),
            Some(outcome),
            "migrated {id}"
        );
    }
}

async fn full_outcomes_are_stored_and_listed(db: TestDb) {
    let store = db.store().await;
    store
        .insert_match(&new_match("s", "schocken", &["a", "b", "c"], 1_000))
        .await
        .unwrap();
    store
        .insert_match(&new_match("z", "zokken", &["a", "b"], 2_000))
        .await
        .unwrap();
    store
        .insert_match(&new_match("old", "sjokken", &["a", "b"], 500))
        .await
        .unwrap();
    // Both ends in one group commit.
    let writes = [
        MatchWrite::Finish(FinishedMatch {
            id: "s".into(),
            log_json: "{}".into(),
            outcome: schocken_forfeit(),
            finished_at_ms: 3_000,
            adjusted: None,
        }),
        MatchWrite::Finish(FinishedMatch {
            id: "z".into(),
            log_json: "{}".into(),
            outcome: zokken_absent(),
            finished_at_ms: 3_000,
            adjusted: None,
        }),
    ];
    for result in store.write_matches(&writes).await {
        result.unwrap();
    }
    store
        .finish_match("old", "{}", &placed(&[1, 2]), 3_000)
        .await
        .unwrap();
    // A match finished before the store kept outcomes: placings only.
    db.execute("UPDATE matches SET outcome_json = NULL WHERE id = 'old'")
        .await;

    let listed = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(ids(&listed), ["z", "s", "old"]);
    assert_eq!(listed[0].outcome, Some(zokken_absent()));
    assert_eq!(listed[0].placings, Some(vec![2, 1]));
    assert_eq!(listed[1].outcome, Some(schocken_forfeit()));
    assert_eq!(listed[2].outcome, None);
    assert_eq!(listed[2].placings, Some(vec![1, 2]));
    let record = store.get_match("s").await.unwrap().unwrap();
    assert_eq!(record.summary.outcome, Some(schocken_forfeit()));
    // A bot's totals over all its finished matches, summed in the store.
    assert_eq!(
        store.bot_totals("a").await.unwrap(),
        BotTotals {
            matches: 3,
            places: vec![(1, 1), (2, 2)],
            strikes: 1,
            timeouts: 0,
            forfeits: 1,
        }
    );
    assert_eq!(
        store.bot_totals("c").await.unwrap(),
        BotTotals {
            matches: 1,
            places: vec![(3, 1)],
            strikes: 3,
            timeouts: 2,
            forfeits: 1,
        }
    );
    assert_eq!(
        store.bot_totals("nobody").await.unwrap(),
        BotTotals::default()
    );

    let seats = store.seat_results("s").await.unwrap();
    assert_eq!(
        seats,
        [
            SeatResult {
                seat: 0,
                bot_name: "a".into(),
                place: 2,
                strikes: 1,
                timeouts: 0,
                forfeit: None,
                tokens: Some(13),
                chips: None,
            },
            SeatResult {
                seat: 1,
                bot_name: "b".into(),
                place: 1,
                strikes: 0,
                timeouts: 0,
                forfeit: None,
                tokens: Some(0),
                chips: None,
            },
            SeatResult {
                seat: 2,
                bot_name: "c".into(),
                place: 3,
                strikes: 3,
                timeouts: 2,
                forfeit: Some(ForfeitReason::Strikes),
                tokens: Some(0),
                chips: None,
            },
        ]
    );
    let seats = store.seat_results("z").await.unwrap();
    assert_eq!(seats.len(), 2);
    assert_eq!(seats[0].forfeit, Some(ForfeitReason::Absent));
    assert_eq!((seats[0].tokens, seats[0].chips), (None, Some(-7)));
    assert_eq!((seats[1].tokens, seats[1].chips), (None, Some(7)));
    assert!(store.seat_results("unknown").await.unwrap().is_empty());
    // The forfeit reason is stored by name, NULL for a seat that did not forfeit.
    assert_eq!(
        db.scalar(&format!(
            "SELECT COUNT(*) FROM {SEAT_RESULTS} WHERE forfeit_reason = 'strikes' AND seat = 2 \
             AND match_id = 's'"
        ))
        .await,
        1
    );
    assert_eq!(
        db.scalar(&format!(
            "SELECT COUNT(*) FROM {SEAT_RESULTS} WHERE forfeit_reason IS NULL"
        ))
        .await,
        2 + 1 + 2
    );
}

async fn outcomes_that_do_not_fit_are_refused(db: TestDb) {
    let store = db.store().await;
    store
        .insert_match(&new_match("m", "schocken", &["a", "b", "c"], 1_000))
        .await
        .unwrap();
    let mut outcome = schocken_forfeit();
    outcome.strikes.pop();
    let err = store
        .finish_match("m", "{}", &outcome, 2_000)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "match \"m\": the outcome's strikes has 2 entries, but it has 3 placings: give one per seat"
    );
    assert_eq!(status_of(&store, "m").await, Some(MatchStatus::Running));
    assert_eq!(db.count(SEAT_RESULTS).await, 0);
    // In a batch, the others are written.
    store
        .insert_match(&new_match("ok", "zokken", &["a", "b"], 1_000))
        .await
        .unwrap();
    let results = store
        .write_matches(&[
            MatchWrite::Finish(FinishedMatch {
                id: "m".into(),
                log_json: "{}".into(),
                outcome,
                finished_at_ms: 2_000,
                adjusted: None,
            }),
            MatchWrite::Finish(FinishedMatch {
                id: "ok".into(),
                log_json: "{}".into(),
                outcome: zokken_absent(),
                finished_at_ms: 2_000,
                adjusted: None,
            }),
        ])
        .await;
    assert!(matches!(
        &results[0],
        Err(StoreError::OutcomeMismatch {
            field: "strikes",
            len: 2,
            placings: 3,
            ..
        })
    ));
    assert!(results[1].is_ok(), "{results:?}");
    assert_eq!(status_of(&store, "ok").await, Some(MatchStatus::Finished));
}

async fn status_of(store: &Store, id: &str) -> Option<MatchStatus> {
    store.get_match(id).await.unwrap().map(|m| m.summary.status)
}

/// In one batch, writes that find nothing to do (a taken id, a match that is not running)
/// are refused on their own; the rest is committed, in order.
async fn batched_writes_refuse_alone(db: TestDb) {
    let store = db.store().await;
    store
        .insert_match(&new_match("old", "schocken", &["x", "y"], 1))
        .await
        .unwrap();
    let writes = [
        MatchWrite::Start(new_match("a", "schocken", &["alice", "bob"], 10)),
        MatchWrite::Start(new_match("b", "zokken", &["bob", "carol"], 11)),
        finish("a", &[2, 1], 20),
        MatchWrite::Start(new_match("a", "schocken", &["again"], 21)),
        MatchWrite::Start(new_match("old", "schocken", &["again"], 21)),
        finish("unknown", &[1, 2], 22),
        abort("b", 23),
        finish("b", &[1, 2], 24),
        abort("a", 25),
    ];
    let results = store.write_matches(&writes).await;
    assert_eq!(results.len(), writes.len());
    let described: Vec<String> = results
        .iter()
        .map(|r| match r {
            Ok(()) => "ok".to_owned(),
            Err(StoreError::MatchExists { id }) => format!("exists {id}"),
            Err(StoreError::MatchNotRunning { id }) => format!("not running {id}"),
            Err(other) => panic!("unexpected error {other:?}"),
        })
        .collect();
    assert_eq!(
        described,
        [
            "ok",
            "ok",
            "ok",
            "exists a",
            "exists old",
            "not running unknown",
            "ok",
            "not running b",
            "not running a",
        ]
    );
    let a = store.get_match("a").await.unwrap().unwrap().summary;
    assert_eq!(a.status, MatchStatus::Finished);
    assert_eq!(a.seat_names, ["alice", "bob"]);
    assert_eq!(a.placings, Some(vec![2, 1]));
    assert_eq!(a.finished_at_ms, Some(20));
    assert_eq!(
        store.match_log("a").await.unwrap(),
        Some((MatchStatus::Finished, Some(r#"{"match":"a"}"#.to_owned())))
    );
    let b = store.get_match("b").await.unwrap().unwrap().summary;
    assert_eq!(b.status, MatchStatus::Aborted);
    assert_eq!(b.abort_reason.as_deref(), Some("the arena shut down"));
    assert_eq!(status_of(&store, "old").await, Some(MatchStatus::Running));
    assert_eq!(db.count("matches").await, 3);
    // Only the finished match has seat results.
    assert_eq!(db.count(SEAT_RESULTS).await, 2);
    let bob = store.results_for_bot("bob").await.unwrap();
    assert_eq!(bob.len(), 1);
    assert_eq!((bob[0].match_id.as_str(), bob[0].place), ("a", 1));
    assert!(store.write_matches(&[]).await.is_empty());
}

/// A write that spoils its batch (placings that do not fit the seats) costs only itself:
/// the batch is rolled back and written again one write at a time.
async fn failed_batch_is_written_one_by_one(db: TestDb) {
    let store = db.store().await;
    for id in ["p", "q"] {
        store
            .insert_match(&new_match(id, "schocken", &["alice", "bob"], 1))
            .await
            .unwrap();
    }
    let writes = [
        finish("p", &[1, 2], 10),
        MatchWrite::Start(new_match("r", "sjokken", &["carol", "dave"], 11)),
        finish("q", &[1, 2, 3], 12),
        finish("r", &[2, 1], 13),
    ];
    let results = store.write_matches(&writes).await;
    assert!(results[0].is_ok(), "{:?}", results[0]);
    assert!(results[1].is_ok(), "{:?}", results[1]);
    assert!(
        matches!(
            &results[2],
            Err(StoreError::PlacingsMismatch { id, seats: 2, placings: 3 }) if id == "q"
        ),
        "{:?}",
        results[2]
    );
    assert!(results[3].is_ok(), "{:?}", results[3]);
    assert_eq!(status_of(&store, "p").await, Some(MatchStatus::Finished));
    assert_eq!(status_of(&store, "q").await, Some(MatchStatus::Running));
    assert_eq!(status_of(&store, "r").await, Some(MatchStatus::Finished));
    assert_eq!(
        store
            .get_match("q")
            .await
            .unwrap()
            .unwrap()
            .summary
            .placings,
        None
    );
    assert_eq!(db.count(SEAT_RESULTS).await, 4);
    assert_eq!(
        db.scalar(&format!(
            "SELECT COUNT(*) FROM {SEAT_RESULTS} WHERE match_id = 'q'"
        ))
        .await,
        0
    );
}

/// Many matches starting and ending at once through one recorder: every write is
/// committed and each caller gets its own answer.
async fn recorder_batches_concurrent_writes(db: TestDb) {
    let store = db.store().await;
    let recorder = Recorder::spawn(store.clone());
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200_i64 {
        let recorder = recorder.clone();
        tasks.spawn(async move {
            let id = format!("m-{i:03}");
            let seats = ["alice", "bob", "carol", "dave"];
            recorder
                .write(MatchWrite::Start(new_match(&id, "schocken", &seats, i)))
                .await?;
            // A second start of the same match is refused, and only for this caller.
            let again = recorder
                .write(MatchWrite::Start(new_match(&id, "schocken", &seats, i)))
                .await;
            assert!(
                matches!(&again, Err(StoreError::MatchExists { id: taken }) if *taken == id),
                "{again:?}"
            );
            if i % 4 == 0 {
                recorder.write(abort(&id, 1_000 + i)).await
            } else {
                recorder.write(finish(&id, &[4, 3, 2, 1], 1_000 + i)).await
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined.expect("task").expect("write");
    }
    drop(recorder);
    let finished = store
        .list_matches(&filter(None, Some(MatchStatus::Finished), 500))
        .await
        .unwrap();
    assert_eq!(finished.len(), 150);
    let aborted = store
        .list_matches(&filter(None, Some(MatchStatus::Aborted), 500))
        .await
        .unwrap();
    assert_eq!(aborted.len(), 50);
    assert_eq!(db.count(SEAT_RESULTS).await, 600);
    let dave = store.results_for_bot("dave").await.unwrap();
    assert_eq!(dave.len(), 150);
    assert!(
        dave.iter()
            .all(|r| r.place == 1 && r.seat == 3 && r.seats == 4)
    );
}

// ----------------------------------------------------------------------------------------------
// Backend-independent checks
// ----------------------------------------------------------------------------------------------

#[tokio::test]
async fn refuses_unsupported_and_in_memory_urls() {
    let err = Store::connect("mysql://root:hunter2@localhost/knobel")
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidUrl { .. }), "{err:?}");
    assert!(!err.to_string().contains("hunter2"), "{err}");
    assert_eq!(
        err.to_string(),
        "unsupported database url \"mysql://root:***@localhost/knobel\": expected a sqlite: or \
         postgres: url"
    );
    for url in [
        "sqlite::memory:",
        "sqlite://:memory:",
        "sqlite://x.db?mode=memory",
    ] {
        let err = Store::connect(url).await.unwrap_err();
        assert!(matches!(err, StoreError::InMemorySqlite), "{url}: {err:?}");
    }
}

#[tokio::test]
async fn connect_errors_hide_passwords() {
    // A Unix socket that does not exist: fails at once (a refused TCP connection would be
    // retried until the pool's acquire timeout).
    let err = Store::connect("postgres://knobel:hunter2@127.0.0.1:1/knobel?host=/nonexistent")
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Connect { .. }), "{err:?}");
    let message = format!("{err} / {:?}", std::error::Error::source(&err));
    assert!(!message.contains("hunter2"), "{message}");
    assert!(message.contains("knobel:***@127.0.0.1:1"), "{message}");
}

#[test]
fn postgres_url_with_other_database() {
    assert_eq!(
        with_database("postgres://postgres@127.0.0.1:5432/postgres", "t1"),
        "postgres://postgres@127.0.0.1:5432/t1"
    );
    assert_eq!(
        with_database("postgresql://u:p@h/db?sslmode=disable", "t2"),
        "postgresql://u:p@h/t2?sslmode=disable"
    );
    assert_eq!(with_database("postgres://h", "t3"), "postgres://h/t3");
}

async fn names_are_unique_up_to_case_and_look_alikes(db: TestDb) {
    let store = db.store().await;
    let add = |name: &'static str| {
        let store = store.clone();
        async move { store.add_bot(name, &hash_token(&generate_token())).await }
    };
    add("alice").await.unwrap();
    add("heur").await.unwrap();
    let err = add("ALICE").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::NameTaken { name, existing } if name == "ALICE" && existing == "alice"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "a bot named \"alice\" already exists, and \"ALICE\" counts as the same name (names are unique regardless of case and look-alike characters): choose another name"
    );
    // A Cyrillic е (U+0435).
    let err = add("h\u{0435}ur").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::NameTaken { existing, .. } if existing == "heur"),
        "{err:?}"
    );
    let err = add("alice").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "a bot named \"alice\" already exists: choose another name"
    );
    // Reserved names, bidi and zero-width characters are refused before the database.
    for bad in [
        "builtin-heuristic-1",
        "a\u{202E}b",
        "a\u{200D}b",
        "Wu\u{308}rfel",
    ] {
        let err = add(bad).await.unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidBotName(_)),
            "{bad:?}: {err:?}"
        );
    }
    assert_eq!(
        store
            .bot_by_name_key("aLiCe")
            .await
            .unwrap()
            .map(|b| b.name),
        Some("alice".to_owned())
    );
    assert_eq!(store.list_bots().await.unwrap().len(), 2);
}

async fn name_keys_are_filled_in_for_older_bots(db: TestDb) {
    // Bots registered before name keys were kept: simulated by clearing the keys, and by a
    // look-alike pair that the old rule let in.
    let store = db.store().await;
    store
        .add_bot("Carol", &hash_token(&generate_token()))
        .await
        .unwrap();
    store.close().await;
    db.execute("UPDATE bots SET name_key = NULL").await;
    db.execute(&format!(
        "INSERT INTO bots (name, token_hash, created_at_ms) VALUES ('carol', '{}', 1)",
        hash_token(&generate_token())
    ))
    .await;
    let store = db.store().await;
    // The older bot got the key; the younger look-alike keeps its name without one.
    assert_eq!(
        db.count("bots WHERE name_key IS NOT NULL").await,
        1,
        "one key filled in"
    );
    assert_eq!(
        store.bot_by_name_key("CAROL").await.unwrap().unwrap().name,
        "Carol"
    );
    let err = store
        .add_bot("cArol", &hash_token(&generate_token()))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NameTaken { .. }), "{err:?}");
    assert_eq!(store.list_bots().await.unwrap().len(), 2);
    // Connecting again changes nothing.
    store.close().await;
    let store = db.store().await;
    assert_eq!(db.count("bots WHERE name_key IS NOT NULL").await, 1);
    store.close().await;
}

async fn seat_results_carry_bot_ids(db: TestDb) {
    let store = db.store().await;
    let alice = store
        .add_bot("alice", &hash_token(&generate_token()))
        .await
        .unwrap();
    let mut new = new_match("m-1", "schocken", &["alice", "builtin-heuristic-1"], 1_000);
    new.seat_bot_ids = vec![Some(alice.id), None];
    store.insert_match(&new).await.unwrap();
    store
        .finish_match("m-1", "{}", &placed(&[2, 1]), 2_000)
        .await
        .unwrap();
    let mut rows = db.raw_rows(SEAT_RESULTS).await;
    rows.sort();
    // match, seat, bot, place, strikes, timeouts, forfeit, tokens, chips, bot id, adjusted
    // score
    assert_eq!(
        rows,
        [
            vec![
                "m-1".to_owned(),
                "0".into(),
                "alice".into(),
                "2".into(),
                "0".into(),
                "0".into(),
                String::new(),
                "0".into(),
                String::new(),
                alice.id.to_string(),
                String::new()
            ],
            vec![
                "m-1".to_owned(),
                "1".into(),
                "builtin-heuristic-1".into(),
                "1".into(),
                "0".into(),
                "0".into(),
                String::new(),
                "0".into(),
                String::new(),
                String::new(),
                String::new()
            ],
        ]
    );
    let results = store.results_for_bot_id(alice.id).await.unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!((results[0].seat, results[0].place), (0, 2));
    assert!(
        store
            .results_for_bot_id(alice.id + 1)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn revoked_among_finds_revoked_bots(db: TestDb) {
    let store = db.store().await;
    let mut ids = Vec::new();
    for name in ["a", "b", "c"] {
        ids.push(
            store
                .add_bot(name, &hash_token(&generate_token()))
                .await
                .unwrap()
                .id,
        );
    }
    assert!(store.revoked_among(&ids).await.unwrap().is_empty());
    assert!(store.revoked_among(&[]).await.unwrap().is_empty());
    store.revoke_bot("b").await.unwrap();
    store.revoke_bot("c").await.unwrap();
    let mut revoked = store.revoked_among(&ids[..2]).await.unwrap();
    revoked.sort();
    assert_eq!(revoked, [ids[1]]);
    let mut revoked = store.revoked_among(&ids).await.unwrap();
    revoked.sort();
    assert_eq!(revoked, [ids[1], ids[2]]);
}

// ----------------------------------------------------------------------------------------------
// Instances, leases, timeouts and retries
// ----------------------------------------------------------------------------------------------

/// Only the running matches of instances whose lease has run out (or that have no owner)
/// are orphans; a live instance's matches and finished matches are never touched.
/// The lead arena on a database is the oldest whose lease holds by the database's clock.
async fn the_oldest_live_arena_leads(db: TestDb) {
    let store = db.store().await;
    assert_eq!(store.oldest_live_instance().await.unwrap(), None);
    let now = store.db_now_ms().await.unwrap();
    let lease = Duration::from_secs(60);
    let id = |name: &str| InstanceId::new(name);
    store
        .renew_lease(&id("a"), lease, 1_000, now)
        .await
        .unwrap();
    // Older, but its lease ran out a minute ago.
    store
        .renew_lease(&id("gone"), Duration::from_secs(5), 500, now - 65_000)
        .await
        .unwrap();
    assert_eq!(store.oldest_live_instance().await.unwrap(), Some(id("a")));
    // An older live one leads; when it leaves, the next oldest.
    store.renew_lease(&id("b"), lease, 900, now).await.unwrap();
    assert_eq!(store.oldest_live_instance().await.unwrap(), Some(id("b")));
    assert!(store.release_lease(&id("b")).await.unwrap());
    assert_eq!(store.oldest_live_instance().await.unwrap(), Some(id("a")));
}

/// Leases and claims use the database's clock: unix milliseconds, here on the same machine
/// as the test's own clock, and never going back.
async fn the_database_clock_is_unix_milliseconds(db: TestDb) {
    let store = db.store().await;
    let before = now_ms();
    let first = store.db_now_ms().await.unwrap();
    let second = store.db_now_ms().await.unwrap();
    let after = now_ms();
    // Within a second of this machine's clock (the database may round to the millisecond).
    assert!(
        before - 1_000 <= first && second <= after + 1_000,
        "{before} <= {first} <= {second} <= {after}"
    );
    assert!(first <= second, "{first} then {second}");
}

async fn leases_decide_which_matches_are_orphans(db: TestDb) {
    let plain = db.store().await;
    let (a, b) = (InstanceId::new("aaaa"), InstanceId::new("bbbb"));
    let store_a = plain.clone().owned_by(a.clone());
    let store_b = plain.clone().owned_by(b.clone());
    assert_eq!(store_a.owner(), Some(&a));
    store_a
        .renew_lease(&a, Duration::from_secs(30), 900, 1_000)
        .await
        .unwrap();
    store_b
        .renew_lease(&b, Duration::from_secs(5), 950, 1_000)
        .await
        .unwrap();
    let lease_b = plain.lease(&b).await.unwrap().unwrap();
    assert_eq!(
        (
            lease_b.started_at_ms,
            lease_b.heartbeat_at_ms,
            lease_b.lease_ms
        ),
        (950, 1_000, 5_000)
    );
    assert!(!lease_b.expired_at(6_000) && lease_b.expired_at(6_001));
    assert_eq!(plain.lease(&InstanceId::new("none")).await.unwrap(), None);

    store_a
        .insert_match(&new_match("m-a", "schocken", &["x", "y"], 1))
        .await
        .unwrap();
    store_b
        .insert_match(&new_match("m-b", "schocken", &["x", "y"], 2))
        .await
        .unwrap();
    store_b
        .insert_match(&new_match("m-b-done", "schocken", &["x", "y"], 3))
        .await
        .unwrap();
    store_b
        .finish_match("m-b-done", "{}", &placed(&[1, 2]), 4)
        .await
        .unwrap();
    // A row from before owners were recorded.
    plain
        .insert_match(&new_match("m-old", "schocken", &["x", "y"], 0))
        .await
        .unwrap();
    assert_eq!(plain.match_owner("m-a").await.unwrap(), Some(a.clone()));
    assert_eq!(plain.match_owner("m-b").await.unwrap(), Some(b.clone()));
    assert_eq!(plain.match_owner("m-old").await.unwrap(), None);

    // Both leases hold: only the ownerless match is an orphan.
    assert_eq!(
        plain.abort_orphaned_matches("gone", 2_000).await.unwrap(),
        1
    );
    let old = plain.get_match("m-old").await.unwrap().unwrap().summary;
    assert_eq!(old.status, MatchStatus::Aborted);
    assert_eq!(old.abort_reason.as_deref(), Some("gone"));
    assert_eq!(old.finished_at_ms, Some(2_000));
    // At the last millisecond of b's lease its match is still its own.
    assert_eq!(
        plain.abort_orphaned_matches("gone", 6_000).await.unwrap(),
        0
    );
    assert_eq!(status_of(&plain, "m-b").await, Some(MatchStatus::Running));
    // Then b's lease has run out: its running match is aborted, a's is not.
    assert_eq!(
        plain.abort_orphaned_matches("gone", 6_001).await.unwrap(),
        1
    );
    assert_eq!(status_of(&plain, "m-b").await, Some(MatchStatus::Aborted));
    assert_eq!(
        status_of(&plain, "m-b-done").await,
        Some(MatchStatus::Finished)
    );
    assert_eq!(status_of(&plain, "m-a").await, Some(MatchStatus::Running));
    assert_eq!(db.count(SEAT_RESULTS).await, 2);
    // Renewing keeps a's matches its own as time goes on ...
    store_a
        .renew_lease(&a, Duration::from_secs(30), 900, 40_000)
        .await
        .unwrap();
    assert_eq!(
        plain.abort_orphaned_matches("gone", 70_000).await.unwrap(),
        0
    );
    assert_eq!(plain.lease(&a).await.unwrap().unwrap().started_at_ms, 900);
    // ... until it releases its lease: then they are orphans at once.
    assert!(plain.release_lease(&a).await.unwrap());
    assert!(!plain.release_lease(&a).await.unwrap());
    assert_eq!(
        plain.abort_orphaned_matches("gone", 70_001).await.unwrap(),
        1
    );
    assert_eq!(status_of(&plain, "m-a").await, Some(MatchStatus::Aborted));
    // A released lease can be taken again (an arena back after being cut off).
    store_a
        .renew_lease(&a, Duration::from_secs(30), 900, 80_000)
        .await
        .unwrap();
    assert_eq!(
        plain.lease(&a).await.unwrap().unwrap().heartbeat_at_ms,
        80_000
    );
}

/// A finish or abort written again with the same values (a retry of a write whose commit
/// was not confirmed) succeeds without writing anything twice; a different one is refused.
/// Counts the late results the recorder refused.
#[derive(Clone, Default)]
struct StaleResults(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl knobel_arena::store::StoreObserver for StaleResults {
    fn failed(&self, _: knobel_arena::store::StoreOperation) {}
    fn pending_writes(&self, _: usize) {}
    fn committed(&self, _: bool, _: Duration) {}
    fn stale_result_refused(&self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A result of a match that another arena has aborted meanwhile (its arena's lease ran
/// out: it was paused or cut off) is refused, never counted, and the observer is told; an
/// abort that finds its match over, or a result that goes through, is not a late result.
async fn a_late_result_of_an_aborted_match_is_refused_and_counted(db: TestDb) {
    let store = db.store().await;
    for id in ["late", "on-time", "twice"] {
        store
            .insert_match(&new_match(id, "zokken", &["alice", "bob"], 1))
            .await
            .unwrap();
    }
    // Another arena's sweep: the owner-less matches are aborted.
    store.abort_match("late", "swept", None, 5).await.unwrap();
    store.abort_match("twice", "swept", None, 5).await.unwrap();
    let stale = StaleResults::default();
    let recorder = Recorder::spawn_observed(store.clone(), stale.clone());
    let count = || stale.0.load(std::sync::atomic::Ordering::SeqCst);
    let recorded = recorder.record(finish("late", &[2, 1], 10)).await;
    assert!(
        matches!(recorded, Recorded::Refused(StoreError::MatchNotRunning { ref id }) if id == "late"),
        "{recorded:?}"
    );
    assert_eq!(count(), 1);
    assert_eq!(status_of(&store, "late").await, Some(MatchStatus::Aborted));
    assert!(store.seat_results("late").await.unwrap().is_empty());
    // Not late: an abort of a match already over, a result that goes through.
    let recorded = recorder.record(abort("twice", 11)).await;
    assert!(matches!(recorded, Recorded::Refused(_)), "{recorded:?}");
    let recorded = recorder.record(finish("on-time", &[1, 2], 12)).await;
    assert!(matches!(recorded, Recorded::Written), "{recorded:?}");
    assert_eq!(count(), 1);
}

async fn retried_writes_are_written_once(db: TestDb) {
    let store = db.store().await;
    for id in ["f", "g", "h"] {
        store
            .insert_match(&new_match(id, "schocken", &["alice", "bob", "carol"], 1))
            .await
            .unwrap();
    }
    store.write_matches(&[finish("f", &[1, 2, 3], 10)]).await[0]
        .as_ref()
        .unwrap();
    // The same finish again, alone and twice in one batch with another match's.
    let results = store
        .write_matches(&[
            finish("f", &[1, 2, 3], 10),
            finish("g", &[3, 2, 1], 11),
            finish("g", &[3, 2, 1], 11),
        ])
        .await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    store
        .finish_match("f", "{}", &placed(&[1, 2, 3]), 10)
        .await
        .unwrap();
    assert_eq!(db.count(SEAT_RESULTS).await, 6);
    assert_eq!(
        db.scalar(&format!(
            "SELECT COUNT(*) FROM {SEAT_RESULTS} WHERE match_id = 'f'"
        ))
        .await,
        3
    );
    // Not the same finish: refused.
    for (placings, at) in [(&[3u8, 2, 1][..], 10), (&[1, 2, 3][..], 12)] {
        let err = store
            .finish_match("f", "{}", &placed(placings), at)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::MatchNotRunning { .. }), "{err:?}");
    }
    let f = store.get_match("f").await.unwrap().unwrap().summary;
    assert_eq!(
        (f.placings, f.finished_at_ms),
        (Some(vec![1, 2, 3]), Some(10))
    );
    // A finished match is not aborted, even by a retry.
    let err = store
        .abort_match("f", "the arena shut down", None, 10)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MatchNotRunning { .. }), "{err:?}");
    // Aborts alike.
    store.write_matches(&[abort("h", 20)]).await[0]
        .as_ref()
        .unwrap();
    store.write_matches(&[abort("h", 20)]).await[0]
        .as_ref()
        .unwrap();
    let err = store
        .abort_match("h", "another reason", None, 20)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MatchNotRunning { .. }), "{err:?}");
    let err = store
        .finish_match("h", "{}", &placed(&[1, 2, 3]), 20)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MatchNotRunning { .. }), "{err:?}");
    let h = store.get_match("h").await.unwrap().unwrap().summary;
    assert_eq!(h.status, MatchStatus::Aborted);
    assert_eq!(h.finished_at_ms, Some(20));
    assert_eq!(db.count(SEAT_RESULTS).await, 6);
}

/// Holds the test database's write lock (and on PostgreSQL, every access to `matches`)
/// until the returned sender is dropped or sent to.
async fn lock_database(db: &TestDb) -> tokio::sync::oneshot::Sender<()> {
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let (locked, is_locked) = tokio::sync::oneshot::channel::<()>();
    let kind = db.kind;
    let url = db.url.clone();
    tokio::spawn(async move {
        let db = TestDb {
            kind,
            url,
            _dir: None,
        };
        with_conn!(db, conn => {
            let lock = match db.kind {
                Kind::Sqlite => "BEGIN EXCLUSIVE",
                Kind::Postgres => "BEGIN; LOCK TABLE matches IN ACCESS EXCLUSIVE MODE",
            };
            sqlx::raw_sql(lock).execute(&mut conn).await.unwrap();
            let _ = locked.send(());
            let _ = released.await;
            sqlx::raw_sql("ROLLBACK").execute(&mut conn).await.unwrap();
        })
    });
    is_locked.await.expect("the lock is taken");
    release
}

/// Waits (at most 20 s) until `$done` holds.
macro_rules! eventually {
    ($what:expr, $done:expr) => {{
        // Generous: on a loaded machine, draining a full backlog of 10 000 writes from
        // PostgreSQL has taken over 20 s.
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while !$done {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting: {}",
                $what
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }};
}

/// A result the database cannot take now is kept and retried until it can: written once.
async fn recorder_retries_until_the_database_answers(db: TestDb) {
    let store = db.store().await.with_timeout(Duration::from_millis(300));
    for id in ["r-1", "r-2"] {
        store
            .insert_match(&new_match(id, "schocken", &["alice", "bob"], 1))
            .await
            .unwrap();
    }
    let recorder = Recorder::spawn(store.clone());
    let release = lock_database(&db).await;
    let started = std::time::Instant::now();
    let recorded = recorder.record(finish("r-1", &[2, 1], 10)).await;
    assert!(matches!(recorded, Recorded::Pending), "{recorded:?}");
    let recorded = recorder.record(abort("r-2", 11)).await;
    assert!(matches!(recorded, Recorded::Pending), "{recorded:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the writes waited {:?} for a locked database",
        started.elapsed()
    );
    assert_eq!(recorder.pending(), 2);
    // Still locked: the retries keep failing, nothing is lost.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(recorder.pending(), 2);
    let _ = release.send(());
    eventually!("the kept writes are written", recorder.pending() == 0);
    assert_eq!(recorder.drain(Duration::from_secs(1)).await, 0);
    assert_eq!(status_of(&store, "r-1").await, Some(MatchStatus::Finished));
    assert_eq!(status_of(&store, "r-2").await, Some(MatchStatus::Aborted));
    assert_eq!(db.count(SEAT_RESULTS).await, 2);
    // A refusal is not retried.
    let recorded = recorder.record(finish("unknown", &[1, 2], 12)).await;
    assert!(
        matches!(
            recorded,
            Recorded::Refused(StoreError::MatchNotRunning { .. })
        ),
        "{recorded:?}"
    );
    assert_eq!(recorder.pending(), 0);
}

/// Every call gives up after the store's timeout with a typed error that says so.
async fn calls_time_out_on_a_locked_database(db: TestDb) {
    let store = db.store().await.with_timeout(Duration::from_millis(200));
    assert_eq!(store.timeout(), Duration::from_millis(200));
    store
        .insert_match(&new_match("t-1", "schocken", &["alice", "bob"], 1))
        .await
        .unwrap();
    let release = lock_database(&db).await;
    let started = std::time::Instant::now();
    let err = store
        .finish_match("t-1", "{}", &placed(&[1, 2]), 5)
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(err.is_unavailable() && err.maybe_written(), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("the store did not answer within 200 ms while "),
        "{err}"
    );
    if db.kind == Kind::Postgres {
        // PostgreSQL's lock keeps readers out too (SQLite's WAL readers go on).
        let started = std::time::Instant::now();
        let err = store
            .list_matches(&MatchFilter::default())
            .await
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert!(
            matches!(
                err,
                StoreError::Timeout {
                    context: "listing matches",
                    ms: 200
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "the store did not answer within 200 ms while listing matches"
        );
    }
    drop(release);
    // Once the lock is gone the store answers again.
    eventually!(
        "the store answers",
        store
            .finish_match("t-1", "{}", &placed(&[1, 2]), 5)
            .await
            .is_ok()
    );
    assert_eq!(db.count(SEAT_RESULTS).await, 2);
}

/// At `MAX_PENDING` kept writes the recorder says it is full (the lobby then starts no
/// match); once the database answers, the backlog drains and it is not full any more.
async fn the_retry_backlog_is_bounded(db: TestDb) {
    let store = db.store().await.with_timeout(Duration::from_millis(300));
    store
        .insert_match(&new_match("b-1", "schocken", &["alice", "bob"], 1))
        .await
        .unwrap();
    let recorder = Recorder::spawn(store.clone());
    let release = lock_database(&db).await;
    // The one real result, then aborts of starts that were never written (each a no-op).
    let recorded = recorder.record(finish("b-1", &[1, 2], 10)).await;
    assert!(matches!(recorded, Recorded::Pending), "{recorded:?}");
    for i in 1..MAX_PENDING {
        assert!(!recorder.is_full(), "full at {i}");
        recorder.retry_later(abort(&format!("never-{i}"), 20));
    }
    assert_eq!(recorder.pending(), MAX_PENDING);
    assert!(recorder.is_full());
    let _ = release.send(());
    eventually!("the backlog drains", recorder.pending() == 0);
    assert!(!recorder.is_full());
    assert_eq!(status_of(&store, "b-1").await, Some(MatchStatus::Finished));
    assert_eq!(db.count("matches").await, 1);
    assert_eq!(db.count(SEAT_RESULTS).await, 2);
}

// ----------------------------------------------------------------------------------------------
// Leagues
// ----------------------------------------------------------------------------------------------

const LEAGUE_FILE: &str = "name = \"l1\"\nbots = [\"ann\", \"ben\", \"cat\"]\n[games.zokken]\nsettings = { rounds = 5 }\n";

fn league_schedule() -> (Vec<String>, Vec<ScheduledMatch>, LeagueDice) {
    let config = LeagueConfig::from_toml(LEAGUE_FILE).unwrap();
    let bots: Vec<String> = ["ann", "ben", "cat"].map(String::from).to_vec();
    let dice = LeagueDice {
        secret: LeagueSecret::from_os(),
        mode: DiceMode::Independent,
    };
    let schedule = expand(&config, &bots, &dice).unwrap();
    (bots, schedule, dice)
}

/// Starts league match `m` as match `id` (its seats as in the schedule) and finishes it with
/// `placings` and chips.
async fn play_league_match(
    store: &Store,
    league_id: i64,
    m: &ScheduledMatch,
    id: &str,
    placings: &[u8],
) {
    play_league_match_adjusted(store, league_id, m, id, placings, None).await;
}

/// [`play_league_match`] with the seats' luck-adjusted scores `adjusted`.
async fn play_league_match_adjusted(
    store: &Store,
    league_id: i64,
    m: &ScheduledMatch,
    id: &str,
    placings: &[u8],
    adjusted: Option<Vec<f64>>,
) {
    let mut start = new_match(
        id,
        "zokken",
        &m.seats.iter().map(String::as_str).collect::<Vec<_>>(),
        1,
    );
    start.seed = m.seed as i64;
    start.league = Some(LeagueSlot {
        league_id,
        ordinal: m.ordinal,
    });
    store.insert_match(&start).await.unwrap();
    let mut outcome = placed(placings);
    outcome.chips = placings
        .iter()
        .map(|&p| if p == 1 { 3 } else { -3 })
        .collect();
    let finished = FinishedMatch {
        id: id.to_owned(),
        log_json: "{}".into(),
        outcome,
        finished_at_ms: 2,
        adjusted,
    };
    let slot = LeagueSlot {
        league_id,
        ordinal: m.ordinal,
    };
    let results = store
        .write_matches(&[MatchWrite::FinishLeague(finished, slot)])
        .await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
}

/// A stored league match whose rules cannot be played by its seats (a row edited by hand,
/// or rules a newer engine bounds more tightly) is read as corrupt, naming the match, not
/// handed to a referee that would fail only after the match's start was written.
async fn unplayable_league_matches_are_read_as_corrupt(db: TestDb) {
    let store = db.store().await;
    let (league, schedule) = created_league(&store, "edited").await;
    let open = async || store.open_league_matches(league.id, 100).await;
    assert_eq!(open().await.unwrap().len(), 6);
    for (edit, says) in [
        (r#"seats_json = '["ann"]'"#, "cannot seat 1 players"),
        (
            r#"rules_json = replace(rules_json, '"rounds":5', '"rounds":1000000')"#,
            "out of bounds",
        ),
    ] {
        db.execute(&format!(
            "UPDATE league_matches SET {edit} WHERE league_id = {} AND ordinal = 3",
            league.id
        ))
        .await;
        let error = open().await.unwrap_err();
        assert!(matches!(error, StoreError::Corrupt { .. }), "{error:?}");
        let text = error.to_string();
        assert!(text.contains("match 3") && text.contains(says), "{text}");
        // Back as scheduled.
        let m = &schedule[3];
        db.execute(&format!(
            "UPDATE league_matches SET seats_json = '{}', rules_json = '{}' \
             WHERE league_id = {} AND ordinal = 3",
            serde_json::to_string(&m.seats).unwrap(),
            serde_json::to_string(&m.rules).unwrap(),
            league.id
        ))
        .await;
        assert_eq!(open().await.unwrap().len(), 6);
    }
}

/// A league is created with its schedule once; its matches are claimed once each, and each
/// result counts once; the league is finished with its last match.
/// A league's matches playing now are counted from the database, whichever arena plays
/// them: claimed and started, until they end (every arena shows the same progress).
async fn a_leagues_playing_matches_are_counted_in_the_store(db: TestDb) {
    let store = db.store().await;
    let (league, schedule) = created_league(&store, "p").await;
    assert_eq!(league.playing, 0);
    assert!(store.running_leagues().await.unwrap().is_empty(), "created");
    assert!(
        store
            .set_league_status("p", &[LeagueStatus::Created], LeagueStatus::Running)
            .await
            .unwrap()
    );
    let playing = async || store.league("p").await.unwrap().unwrap().playing;
    // Three claims by two arenas; two of the matches start.
    for (m, arena) in schedule.iter().take(3).zip(["a", "b", "a"]) {
        let id = format!("p-{}", m.ordinal);
        let claimed = store
            .claim_league_match(league.id, m.ordinal, &id, Some(arena))
            .await
            .unwrap();
        assert!(claimed.is_some());
    }
    // Claimed, not started yet: about to start (its seats are being reserved).
    assert_eq!(playing().await, 3, "claimed, about to start");
    for m in schedule.iter().take(2) {
        let mut start = new_match(&format!("p-{}", m.ordinal), "zokken", &["x", "y"], 1);
        start.league = Some(LeagueSlot {
            league_id: league.id,
            ordinal: m.ordinal,
        });
        let arena = InstanceId::new(if m.ordinal == 0 { "a" } else { "b" });
        store
            .clone()
            .owned_by(arena)
            .insert_match(&start)
            .await
            .unwrap();
    }
    assert_eq!(playing().await, 3, "two running, one about to start");
    // The third is given back (its match could not start).
    store
        .release_league_match(
            league.id,
            schedule[2].ordinal,
            &format!("p-{}", schedule[2].ordinal),
        )
        .await
        .unwrap();
    assert_eq!(playing().await, 2);
    assert_eq!(store.list_leagues().await.unwrap()[0].playing, 2);
    let running = store.running_leagues().await.unwrap();
    assert_eq!((running.len(), running[0].playing), (1, 2));
    // One ends, one is aborted: none of them plays any more.
    let slot = LeagueSlot {
        league_id: league.id,
        ordinal: schedule[0].ordinal,
    };
    let finished = FinishedMatch {
        id: "p-0".into(),
        log_json: "{}".into(),
        outcome: placed(&[1, 2]),
        finished_at_ms: 2,
        adjusted: None,
    };
    for result in store
        .write_matches(&[MatchWrite::FinishLeague(finished, slot)])
        .await
    {
        result.unwrap();
    }
    assert_eq!(playing().await, 1);
    store.abort_match("p-1", "gone", None, 3).await.unwrap();
    assert_eq!(playing().await, 0);
}

/// A cancelled league's running matches play on, so its secret and its matches' logs stay
/// hidden while any match of it is in play: running, or claimed less than
/// `UNSTARTED_CLAIM_MS` ago and about to start. A bot still playing must not learn its
/// dice from the revealed secret or from a finished seat order of its set.
async fn a_cancelled_leagues_secret_waits_for_its_matches_in_play(db: TestDb) {
    let store = db.store().await;
    let (league, schedule) = created_league(&store, "c").await;
    assert!(
        store
            .set_league_status("c", &[LeagueStatus::Created], LeagueStatus::Running)
            .await
            .unwrap()
    );
    let id = |i: usize| format!("c-{}", schedule[i].ordinal);
    for (i, m) in schedule.iter().enumerate().take(3) {
        let claimed = store
            .claim_league_match(league.id, m.ordinal, &id(i), Some("a"))
            .await
            .unwrap();
        assert!(claimed.is_some());
    }
    // The first finishes, the second runs, the third is about to start; then the league is
    // cancelled.
    play_league_match(&store, league.id, &schedule[0], &id(0), &[1, 2]).await;
    let mut start = new_match(&id(1), "zokken", &["x", "y"], 1);
    start.league = Some(LeagueSlot {
        league_id: league.id,
        ordinal: schedule[1].ordinal,
    });
    store.insert_match(&start).await.unwrap();
    assert!(
        store
            .set_league_status("c", &[LeagueStatus::Running], LeagueStatus::Cancelled)
            .await
            .unwrap()
    );
    let hidden = async |why: &str, playing: u64| {
        let record = store.league("c").await.unwrap().unwrap();
        assert_eq!(
            (record.status, record.playing),
            (LeagueStatus::Cancelled, playing),
            "{why}"
        );
        assert!(!record.has_ended(), "{why}");
        assert_eq!(record.revealed_secret(), None, "{why}");
        assert_eq!(record.shown_dice().1, "", "{why}: no secret shown");
        let of = store.match_league(&id(0)).await.unwrap().unwrap();
        assert!(
            !of.has_ended(),
            "{why}: the finished match's log is not public yet"
        );
    };
    hidden("one running, one about to start", 2).await;
    // No match of a league that is not running is claimed any more.
    let claimed = store
        .claim_league_match(league.id, schedule[3].ordinal, "c-late", Some("a"))
        .await
        .unwrap();
    assert_eq!(claimed, None, "claimed in a cancelled league");
    store.abort_match(&id(1), "gone", None, 3).await.unwrap();
    hidden("one about to start", 1).await;
    // The edge: a claim that has not started after UNSTARTED_CLAIM_MS never will.
    let edge = |ms: i64| {
        format!(
            "UPDATE league_matches SET claimed_at_ms = claimed_at_ms - {ms} WHERE match_id = '{}'",
            id(2)
        )
    };
    db.execute(&edge(UNSTARTED_CLAIM_MS - 5_000)).await;
    hidden("claimed 55 s ago", 1).await;
    db.execute(&edge(10_000)).await;
    let record = store.league("c").await.unwrap().unwrap();
    assert_eq!(record.playing, 0);
    assert!(record.has_ended());
    assert!(record.revealed_secret().is_some());
    assert!(
        store
            .match_league(&id(0))
            .await
            .unwrap()
            .unwrap()
            .has_ended()
    );
}

/// A settled league ends before its schedule only when none of its matches is in play in
/// any arena (another arena may be playing one this arena does not know of), and then no
/// match of it is claimed any more.
async fn a_league_ends_early_only_with_no_match_in_play(db: TestDb) {
    let store = db.store().await;
    let (id, schedule) = running_league(&store).await;
    let claim = async |i: usize, match_id: &str| {
        store
            .claim_league_match(id, schedule[i].ordinal, match_id, Some("other"))
            .await
            .unwrap()
    };
    assert!(claim(0, "e-0").await.is_some());
    assert!(
        !store.finish_league_early(id).await.unwrap(),
        "one about to start"
    );
    let mut start = new_match("e-0", "zokken", &["x", "y"], 1);
    start.league = Some(LeagueSlot {
        league_id: id,
        ordinal: schedule[0].ordinal,
    });
    store.insert_match(&start).await.unwrap();
    assert!(!store.finish_league_early(id).await.unwrap(), "one running");
    store.abort_match("e-0", "gone", None, 3).await.unwrap();
    assert!(store.finish_league_early(id).await.unwrap());
    let league = store.league("l1").await.unwrap().unwrap();
    assert_eq!((league.status, league.playing), (LeagueStatus::Finished, 0));
    assert!(league.revealed_secret().is_some());
    assert_eq!(claim(1, "e-1").await, None, "claimed in a finished league");
    assert!(
        !store.finish_league_early(id).await.unwrap(),
        "only a running league"
    );
}

async fn league_lifecycle(db: TestDb) {
    let store = db.store().await;
    let (bots, schedule, dice) = league_schedule();
    assert_eq!(schedule.len(), 6, "3 tables of 2, both seat orders");
    let new = NewLeague {
        name: "l1",
        config_toml: LEAGUE_FILE,
        bots: &bots,
        schedule: &schedule,
        dice: &dice,
        seed_source: SeedSource::Secret,
    };
    let league = store.create_league(&new).await.unwrap();
    assert_eq!(
        (league.status, league.total_matches, league.finished_matches),
        (LeagueStatus::Created, 6, 0)
    );
    // The commitment is stored at creation; the secret is kept, and revealed only at the end.
    let stored = store.league("l1").await.unwrap().unwrap();
    assert_eq!(
        stored.commitment.as_deref(),
        Some(dice.secret.commitment(league.id, "l1").as_str())
    );
    assert_eq!(stored.commitment, league.commitment);
    assert_eq!(
        (stored.dice, stored.seed_source),
        (DiceMode::Independent, SeedSource::Secret)
    );
    assert_eq!(stored.dice(), Some(dice.clone()));
    assert_eq!(stored.revealed_secret(), None);
    // The same name again: refused, nothing written.
    let again = store.create_league(&new).await.unwrap_err();
    assert!(
        matches!(again, StoreError::LeagueExists { .. }),
        "{again:?}"
    );
    assert_eq!(
        again.to_string(),
        "a league named \"l1\" already exists: choose another name"
    );
    assert_eq!(db.count("leagues").await, 1);
    assert_eq!(db.count("league_matches").await, 6);
    assert!(
        store
            .set_league_status("l1", &[LeagueStatus::Created], LeagueStatus::Running)
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_league_status("l1", &[LeagueStatus::Created], LeagueStatus::Running)
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_league_status("nope", &[LeagueStatus::Created], LeagueStatus::Running)
            .await
            .unwrap()
    );
    let open = store.open_league_matches(league.id, 100).await.unwrap();
    assert_eq!(open.len(), 6);
    assert_eq!(open[0].seats, schedule[0].seats);
    assert_eq!(open[0].seed, schedule[0].seed);
    // One claim wins: the first attempt.
    assert_eq!(
        store
            .claim_league_match(league.id, 0, "m-0", Some("me"))
            .await
            .unwrap(),
        Some(1)
    );
    assert_eq!(
        store
            .claim_league_match(league.id, 0, "m-0b", Some("other"))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .open_league_matches(league.id, 100)
            .await
            .unwrap()
            .len(),
        5
    );
    for m in &schedule {
        let id = format!("m-{}", m.ordinal);
        if m.ordinal > 0 {
            assert!(
                store
                    .claim_league_match(league.id, m.ordinal, &id, Some("me"))
                    .await
                    .unwrap()
                    .is_some()
            );
        }
        // While the league runs, a match of it is known as the league's.
        if m.ordinal == 3 {
            let of = store.match_league("m-2").await.unwrap().unwrap();
            assert_eq!(
                (of.league.as_str(), of.status, of.set),
                ("l1", LeagueStatus::Running, 1)
            );
            assert!(!of.has_ended());
            assert_eq!(of.set_unfinished, 1, "the set's other seat order");
        }
        play_league_match(
            &store,
            league.id,
            m,
            &id,
            if m.rotation == 0 { &[1, 2] } else { &[2, 1] },
        )
        .await;
    }
    let league = store.league("l1").await.unwrap().unwrap();
    assert_eq!(
        (league.status, league.finished_matches),
        (LeagueStatus::Finished, 6)
    );
    assert_eq!(league.revealed_secret(), Some(&dice.secret));
    assert!(
        store
            .match_league("m-2")
            .await
            .unwrap()
            .unwrap()
            .has_ended()
    );
    assert_eq!(store.match_league("no-such").await.unwrap(), None);
    assert!(
        store
            .open_league_matches(league.id, 100)
            .await
            .unwrap()
            .is_empty()
    );
    let results = store.league_results(league.id).await.unwrap();
    assert_eq!(results.len(), 6);
    assert!(
        results
            .iter()
            .enumerate()
            .all(|(i, m)| m.ordinal as usize == i && m.rounds == 5)
    );
    assert_eq!(results[0].seats[0].bot, schedule[0].seats[0]);
    assert_eq!(results[0].seats[0].chips, Some(3));
    assert_eq!(store.list_leagues().await.unwrap().len(), 1);
    assert!(
        store.running_leagues().await.unwrap().is_empty(),
        "finished"
    );
}

/// A claim whose match was aborted is open again, and is played again as its next attempt; a
/// late result of the aborted attempt does not count.
async fn aborted_league_claims_are_claimed_again(db: TestDb) {
    let store = db.store().await;
    let (bots, schedule, dice) = league_schedule();
    let new = NewLeague {
        name: "l1",
        config_toml: LEAGUE_FILE,
        bots: &bots,
        schedule: &schedule,
        dice: &dice,
        seed_source: SeedSource::Secret,
    };
    let league = store.create_league(&new).await.unwrap();
    // Only a running league's matches are claimed.
    assert!(
        store
            .set_league_status("l1", &[LeagueStatus::Created], LeagueStatus::Running)
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .claim_league_match(league.id, 0, "first", Some("dead"))
            .await
            .unwrap(),
        Some(1)
    );
    // Claimed, not yet started: not open (until UNSTARTED_CLAIM_MS has passed).
    assert_eq!(
        store.open_league_matches(league.id, 100).await.unwrap()[0].ordinal,
        1
    );
    let mut start = new_match("first", "zokken", &["ann", "ben"], 1);
    start.seed = schedule[0].seed as i64;
    store.insert_match(&start).await.unwrap();
    assert_eq!(
        store
            .abort_orphaned_matches("its arena is gone", now_ms())
            .await
            .unwrap(),
        1
    );
    let open = store.open_league_matches(league.id, 100).await.unwrap();
    assert_eq!((open[0].ordinal, open[0].seed), (0, schedule[0].seed));
    // The second attempt: with independent dice, its own seed.
    assert_eq!(
        store
            .claim_league_match(league.id, 0, "second", Some("me"))
            .await
            .unwrap(),
        Some(2)
    );
    assert_ne!(dice.match_seed(0, 0, 2), dice.match_seed(0, 0, 1));
    play_league_match(&store, league.id, &schedule[0], "second", &[2, 1]).await;
    let ids = store.league_match_ids(league.id).await.unwrap();
    assert_eq!(
        ids[0],
        (0, "finished".to_owned(), Some("second".to_owned()))
    );
    // Released claims are open at once.
    assert!(
        store
            .claim_league_match(league.id, 1, "third", Some("me"))
            .await
            .unwrap()
            .is_some()
    );
    store
        .release_league_match(league.id, 1, "third")
        .await
        .unwrap();
    assert_eq!(
        store.open_league_matches(league.id, 100).await.unwrap()[0].ordinal,
        1
    );
    let results = store.league_results(league.id).await.unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].seats[1].place, 1);
}

const FAIR_FILE: &str = "name = \"fair\"\nbots = [\"ann\", \"ben\", \"cat\"]\n\
    [games.schocken]\ntable_size = 3\n[games.zokken]\nsettings = { rounds = 3 }\n";

/// Plays every match of league `league` (created from [`FAIR_FILE`] with `dice`) with the
/// engine's random players, as the arena would: claimed, started on the attempt's seed,
/// finished with its log and outcome.
async fn play_fair_league(
    store: &Store,
    league_id: i64,
    schedule: &[ScheduledMatch],
    dice: &LeagueDice,
) {
    use knobel_engine::policy::{by_name, play_out};
    for m in schedule {
        let id = format!("fair-{}", m.ordinal);
        let attempt = store
            .claim_league_match(league_id, m.ordinal, &id, Some("me"))
            .await
            .unwrap()
            .expect("claimed");
        let seed = dice.match_seed(m.ordinal, m.set, attempt);
        let mut game =
            knobel_engine::Match::new_with_log(m.rules.clone(), seed, m.seats.len()).unwrap();
        let mut players: Vec<_> = (0..m.seats.len())
            .map(|seat| by_name("random", seed ^ seat as u64).unwrap())
            .collect();
        play_out(&mut game, &mut players);
        let slot = LeagueSlot {
            league_id,
            ordinal: m.ordinal,
        };
        let mut start = new_match(
            &id,
            m.game.name(),
            &m.seats.iter().map(String::as_str).collect::<Vec<_>>(),
            1,
        );
        (start.seed, start.league) = (seed as i64, Some(slot));
        start.rules_json = serde_json::to_string(&m.rules).unwrap();
        store.insert_match(&start).await.unwrap();
        let finished = FinishedMatch {
            id,
            log_json: game.log().unwrap().to_json(),
            outcome: game.outcome().unwrap(),
            finished_at_ms: 2,
            adjusted: None,
        };
        let results = store
            .write_matches(&[MatchWrite::FinishLeague(finished, slot)])
            .await;
        assert!(results.iter().all(Result::is_ok), "{results:?}");
    }
}

/// An ended league's archive verifies: its commitment, its schedule recomputed from the
/// league file and the revealed secret, every seed, every log replayed. An altered log, or an
/// altered secret, is named; a league that has not ended has no archive yet.
async fn league_archives_verify_and_tampering_is_named(db: TestDb) {
    use knobel_arena::league::archive::{VerifyError, verify_lines};
    use knobel_arena::league::export::{ExportError, archive};
    let store = db.store().await;
    let config = LeagueConfig::from_toml(FAIR_FILE).unwrap();
    let bots: Vec<String> = ["ann", "ben", "cat"].map(String::from).to_vec();
    let (dice, seed_source) = LeagueDice::for_config(&config);
    assert_eq!(
        (seed_source, dice.mode),
        (SeedSource::Secret, DiceMode::Independent)
    );
    let schedule = expand(&config, &bots, &dice).unwrap();
    assert_eq!(schedule.len(), 6 + 6);
    let new = NewLeague {
        name: "fair",
        config_toml: FAIR_FILE,
        bots: &bots,
        schedule: &schedule,
        dice: &dice,
        seed_source,
    };
    let league = store.create_league(&new).await.unwrap();
    store
        .set_league_status("fair", &[LeagueStatus::Created], LeagueStatus::Running)
        .await
        .unwrap();
    // Before its end: no archive, no secret.
    let early = archive(&store, "fair").await.unwrap_err();
    assert!(matches!(early, ExportError::NotEnded { .. }), "{early:?}");
    assert!(
        early
            .to_string()
            .contains("once it has finished or been cancelled"),
        "{early}"
    );
    play_fair_league(&store, league.id, &schedule, &dice).await;
    let text = archive(&store, "fair").await.unwrap();
    assert!(text.contains(&dice.secret.to_hex()));
    let report = verify_lines(text.lines()).unwrap();
    assert_eq!((report.scheduled, report.replayed), (12, 12));
    assert!(report.throws > 12);
    // A cut-off archive is told.
    let cut: Vec<&str> = text.lines().take(5).collect();
    let error = verify_lines(cut.into_iter()).unwrap_err();
    assert!(error.to_string().contains("cut off"), "{error}");

    // One die of one stored log altered: the match is named.
    let victim = "fair-4";
    let (_, log) = store.match_log(victim).await.unwrap().unwrap();
    let mut log: serde_json::Value = serde_json::from_str(&log.unwrap()).unwrap();
    let throw = log["entries"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|e| e["kind"] == "throw")
        .unwrap();
    let die = throw["dice"][0].as_u64().unwrap();
    throw["dice"][0] = serde_json::json!(die % 6 + 1);
    let altered = serde_json::to_string(&log).unwrap();
    db.execute(&format!(
        "UPDATE matches SET log_lz4 = NULL, log_json = '{altered}' WHERE id = '{victim}'"
    ))
    .await;
    let error = verify_lines(archive(&store, "fair").await.unwrap().lines()).unwrap_err();
    assert!(
        matches!(&error, VerifyError::Match { ordinal: 4, match_id, .. } if match_id == victim),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("match fair-4 (ordinal 4): its log does not replay"),
        "{message}"
    );

    // The revealed secret altered: it no longer matches the commitment.
    let other = LeagueSecret::from_os().to_hex();
    db.execute(&format!(
        "UPDATE leagues SET dice_secret = '{other}' WHERE name = 'fair'"
    ))
    .await;
    let error = verify_lines(archive(&store, "fair").await.unwrap().lines()).unwrap_err();
    assert!(matches!(error, VerifyError::Commitment { .. }), "{error:?}");
    assert!(
        error.to_string().contains("does not match the commitment"),
        "{error}"
    );
}

// ----------------------------------------------------------------------------------------------
// The largest league
// ----------------------------------------------------------------------------------------------

/// The largest league the arena takes (`MAX_MATCHES`): five bots at Zokken tables of 2 (ten
/// tables, two seat orders each) in 10,000 repetitions.
const LARGEST_LEAGUE_FILE: &str = "name = \"big\"\nbots = [\"ann\", \"ben\", \"cat\", \"dan\", \"eve\"]\nrepetitions = 10000\n[games.zokken]\ntable_size = 2\n";

fn largest_league_schedule() -> (Vec<String>, Vec<ScheduledMatch>, LeagueDice) {
    let config = LeagueConfig::from_toml(LARGEST_LEAGUE_FILE).unwrap();
    let bots: Vec<String> = ["ann", "ben", "cat", "dan", "eve"]
        .map(String::from)
        .to_vec();
    let dice = LeagueDice {
        secret: LeagueSecret::from_os(),
        mode: DiceMode::Independent,
    };
    let schedule = expand(&config, &bots, &dice).unwrap();
    assert_eq!(schedule.len(), MAX_MATCHES);
    (bots, schedule, dice)
}

/// The arena's store, with the timeout `knobel serve` gives its calls by default.
async fn arena_store(db: &TestDb) -> Store {
    let timeout = Duration::from_millis(RawSettings::default().store_timeout_ms);
    db.store().await.with_timeout(timeout)
}

/// `store` with the smallest store timeout an operator can set (`--store-timeout-ms`).
fn quickest(store: &Store) -> Store {
    store
        .clone()
        .with_timeout(Duration::from_millis(STORE_TIMEOUT_MS.min))
}

/// A league of `MAX_MATCHES` matches is created, its whole schedule stored, with the store
/// timeout of `knobel serve`'s other calls: the creation is given time for its rows.
async fn the_largest_league_is_created(db: TestDb) {
    let store = arena_store(&db).await;
    let (bots, schedule, dice) = largest_league_schedule();
    let new = NewLeague {
        name: "big",
        config_toml: LARGEST_LEAGUE_FILE,
        bots: &bots,
        schedule: &schedule,
        dice: &dice,
        seed_source: SeedSource::Secret,
    };
    let started = std::time::Instant::now();
    let league = store
        .create_league(&new)
        .await
        .unwrap_or_else(|e| panic!("creating the largest league: {e}"));
    eprintln!(
        "{:?}: created a league of {} matches in {:?}",
        db.kind,
        schedule.len(),
        started.elapsed()
    );
    assert_eq!(league.total_matches, MAX_MATCHES as u64);
    let stored = store.league("big").await.unwrap().unwrap();
    assert_eq!(stored.total_matches, MAX_MATCHES as u64);
    assert_eq!(db.count("league_matches").await, MAX_MATCHES as i64);
    // The last match is stored as scheduled.
    let last = store
        .league_archive_page(league.id, MAX_MATCHES as u32 - 1, 10)
        .await
        .unwrap();
    assert_eq!(last.len(), 1);
    assert_eq!(&last[0].scheduled, schedule.last().unwrap());

    // With the smallest store timeout too: the creation's allowance is per match.
    let second = NewLeague {
        name: "big-2",
        ..new
    };
    let league = quickest(&store).create_league(&second).await.unwrap();
    assert_eq!(league.total_matches, MAX_MATCHES as u64);
    assert_eq!(db.count("league_matches").await, 2 * MAX_MATCHES as i64);
}

/// A creation that fails leaves nothing: a large schedule with a bad row at its end (two
/// matches with one ordinal) is refused with the database's error, not a timeout (even at
/// the smallest store timeout), and no league or schedule row of it is stored; a name clash
/// leaves the existing league as it was.
async fn a_failed_league_creation_leaves_nothing(db: TestDb) {
    // The creations with the smallest timeout; the reads with the default (they are not what
    // is tested, and a loaded machine may take 100 ms for one).
    let reader = db.store().await;
    let store = quickest(&reader);
    let (bots, mut schedule, dice) = largest_league_schedule();
    schedule.last_mut().unwrap().ordinal = 0;
    let new = NewLeague {
        name: "big",
        config_toml: LARGEST_LEAGUE_FILE,
        bots: &bots,
        schedule: &schedule,
        dice: &dice,
        seed_source: SeedSource::Secret,
    };
    let err = store.create_league(&new).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Database {
                context: "creating a league",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(reader.league("big").await.unwrap().is_none());
    assert_eq!(db.count("leagues").await, 0);
    assert_eq!(db.count("league_matches").await, 0);

    let (small_bots, small_schedule, small_dice) = league_schedule();
    let small = NewLeague {
        name: "big",
        config_toml: LEAGUE_FILE,
        bots: &small_bots,
        schedule: &small_schedule,
        dice: &small_dice,
        seed_source: SeedSource::Secret,
    };
    store.create_league(&small).await.unwrap();
    schedule.last_mut().unwrap().ordinal = MAX_MATCHES as u32 - 1;
    let clash = NewLeague {
        name: "big",
        config_toml: LARGEST_LEAGUE_FILE,
        bots: &bots,
        schedule: &schedule,
        dice: &dice,
        seed_source: SeedSource::Secret,
    };
    let err = store.create_league(&clash).await.unwrap_err();
    assert!(matches!(err, StoreError::LeagueExists { .. }), "{err:?}");
    let kept = reader.league("big").await.unwrap().unwrap();
    assert_eq!(kept.total_matches, small_schedule.len() as u64);
    assert_eq!(db.count("leagues").await, 1);
    assert_eq!(
        db.count("league_matches").await,
        small_schedule.len() as i64
    );
}

// ----------------------------------------------------------------------------------------------
// Luck-adjusted scores
// ----------------------------------------------------------------------------------------------

/// Creates league `name` of [`league_schedule`] (not started); it and its schedule.
async fn created_league(store: &Store, name: &str) -> (LeagueRecord, Vec<ScheduledMatch>) {
    let (bots, schedule, dice) = league_schedule();
    let new = NewLeague {
        name,
        config_toml: LEAGUE_FILE,
        bots: &bots,
        schedule: &schedule,
        dice: &dice,
        seed_source: SeedSource::Secret,
    };
    (store.create_league(&new).await.unwrap(), schedule)
}

/// Creates league "l1" of [`league_schedule`] and starts it; its id and schedule.
async fn running_league(store: &Store) -> (i64, Vec<ScheduledMatch>) {
    let (league, schedule) = created_league(store, "l1").await;
    assert!(
        store
            .set_league_status("l1", &[LeagueStatus::Created], LeagueStatus::Running)
            .await
            .unwrap()
    );
    (league.id, schedule)
}

/// Every seat's adjusted score in `league_id`'s results, match by match.
async fn adjusted_results(store: &Store, league_id: i64) -> Vec<Vec<Option<f64>>> {
    let results = store.league_results(league_id).await.unwrap();
    results
        .iter()
        .map(|m| m.seats.iter().map(|s| s.adjusted).collect())
        .collect()
}

/// A league is created with the arena's luck version; its recorded adjusted scores are read
/// back while its version is the arena's, and not at all under another version or none (a
/// league created before). Scores that do not fit the seats are left out, and the result is
/// recorded all the same.
async fn league_adjusted_scores_follow_the_luck_version(db: TestDb) {
    let store = db.store().await;
    let (league_id, schedule) = running_league(&store).await;
    let version = knobel_engine::LUCK_VERSION;
    assert_eq!(
        db.scalar(&format!(
            "SELECT COUNT(*) FROM leagues WHERE luck_version = '{version}'"
        ))
        .await,
        1
    );
    let scores = [Some(vec![0.25, -0.75]), None, Some(vec![1.0, 2.0, 3.0])];
    for (m, adjusted) in schedule.iter().zip(scores) {
        let id = format!("m-{}", m.ordinal);
        assert!(
            store
                .claim_league_match(league_id, m.ordinal, &id, Some("me"))
                .await
                .unwrap()
                .is_some()
        );
        play_league_match_adjusted(&store, league_id, m, &id, &[1, 2], adjusted).await;
    }
    let current = vec![
        vec![Some(0.25), Some(-0.75)],
        vec![None, None],
        vec![None, None],
    ];
    assert_eq!(adjusted_results(&store, league_id).await, current);
    let unadjusted = vec![vec![None, None]; 3];
    db.execute("UPDATE leagues SET luck_version = 'luck-0'")
        .await;
    assert_eq!(adjusted_results(&store, league_id).await, unadjusted);
    db.execute("UPDATE leagues SET luck_version = NULL").await;
    assert_eq!(adjusted_results(&store, league_id).await, unadjusted);
    db.execute(&format!("UPDATE leagues SET luck_version = '{version}'"))
        .await;
    assert_eq!(adjusted_results(&store, league_id).await, current);
    // Other matches' results have no adjusted score.
    store
        .insert_match(&new_match("pick-up", "zokken", &["ann", "ben"], 3))
        .await
        .unwrap();
    store
        .finish_match("pick-up", "{}", &placed(&[1, 2]), 4)
        .await
        .unwrap();
    assert_eq!(
        db.scalar(&format!(
            "SELECT COUNT(*) FROM {SEAT_RESULTS} WHERE adjusted_score IS NOT NULL"
        ))
        .await,
        2
    );
}

/// A league match played out in-process and recorded with the adjusted scores the lobby
/// computes ([`knobel_arena::league::luck::adjusted_scores_blocking`]) reads back the
/// engine's `match_luck` of its stored log, exactly.
async fn recorded_adjusted_scores_are_the_luck_of_the_stored_log(db: TestDb) {
    use knobel_arena::league::luck::adjusted_scores_blocking;
    use knobel_arena::league::simulate::play_match_with_log;
    let store = db.store().await;
    let (league_id, schedule) = running_league(&store).await;
    let heuristic = |_: &str, seed: u64| knobel_engine::policy::by_name("heuristic", seed).unwrap();
    for m in &schedule[..2] {
        let id = format!("m-{}", m.ordinal);
        let slot = LeagueSlot {
            league_id,
            ordinal: m.ordinal,
        };
        store
            .claim_league_match(league_id, m.ordinal, &id, Some("me"))
            .await
            .unwrap()
            .unwrap();
        let (_, log) = play_match_with_log(m, &heuristic);
        let outcome = log.replay().unwrap().outcome().unwrap();
        let mut start = new_match(&id, "zokken", &["ann", "ben"], 1);
        start.seat_names = m.seats.clone();
        start.league = Some(slot);
        store.insert_match(&start).await.unwrap();
        let finished = FinishedMatch {
            id: id.clone(),
            log_json: log.to_json(),
            outcome,
            finished_at_ms: 2,
            adjusted: adjusted_scores_blocking(&id, log).await,
        };
        let written = store
            .write_matches(&[MatchWrite::FinishLeague(finished, slot)])
            .await;
        assert!(written.iter().all(Result::is_ok), "{written:?}");
    }
    let results = store.league_results(league_id).await.unwrap();
    assert_eq!(results.len(), 2);
    for m in &results {
        let id = format!("m-{}", m.ordinal);
        let (_, stored) = store.match_log(&id).await.unwrap().unwrap();
        let log = knobel_engine::MatchLog::from_json(&stored.unwrap()).unwrap();
        let luck = knobel_engine::match_luck(&log).unwrap();
        let read: Vec<Option<f64>> = m.seats.iter().map(|s| s.adjusted).collect();
        assert_eq!(
            read,
            luck.adjusted.into_iter().map(Some).collect::<Vec<_>>()
        );
    }
}

/// The store reads a league's file once, for every caller (its stop rule, budget, games and
/// margins); a stored file that no longer reads is corrupt, naming the league, on every path
/// that reads the league, and a file that does not read is never stored.
async fn a_league_file_is_read_once_by_the_store(db: TestDb) {
    let store = db.store().await;
    let (bots, schedule, dice) = league_schedule();
    let settled = "name = \"l1\"\nbots = [\"ann\", \"ben\", \"cat\"]\nstop = \"settled\"\n\
                   budget = 40\nrepetitions = 100\n[games.zokken]\nsettings = { rounds = 5 }\n";
    let new = NewLeague {
        name: "l1",
        config_toml: settled,
        bots: &bots,
        schedule: &schedule,
        dice: &dice,
        seed_source: SeedSource::Secret,
    };
    let created = store.create_league(&new).await.unwrap();
    let stored = store.league("l1").await.unwrap().unwrap();
    for league in [&created, &stored] {
        assert_eq!(
            (league.config.stop, league.config.budget),
            (Stop::Settled, Some(40))
        );
        assert_eq!(league.config.games[0].game, Game::Zokken);
    }
    assert_eq!(*stored.config, LeagueConfig::from_toml(settled).unwrap());
    // A file without a stop rule: the fixed schedule, no budget.
    let (plain, _) = created_league(&store, "plain").await;
    assert_eq!(
        (plain.config.stop, plain.config.budget),
        (Stop::Fixed, None)
    );

    db.execute("UPDATE leagues SET config_toml = 'not a league file' WHERE name = 'l1'")
        .await;
    let error = store.league("l1").await.unwrap_err();
    assert!(matches!(error, StoreError::Corrupt { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("league \"l1\": its stored league file does not read"),
        "{error}"
    );
    let error = store.list_leagues().await.unwrap_err();
    assert!(matches!(error, StoreError::Corrupt { .. }), "{error:?}");

    let unreadable = NewLeague {
        name: "l2",
        config_toml: "not a league file",
        ..new
    };
    let error = store.create_league(&unreadable).await.unwrap_err();
    assert!(matches!(error, StoreError::Corrupt { .. }), "{error:?}");
    assert_eq!(
        db.scalar("SELECT COUNT(*) FROM leagues WHERE name = 'l2'")
            .await,
        0
    );
}
