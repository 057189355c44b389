//! A league survives its arena and its database, with real processes: the arena binary,
//! bots as real gRPC clients.
//!
//! - **kill -9 of the arena mid-league** (SQLite): the arena is killed while some but not
//!   all of the league's matches are done and some are playing, started again on the same
//!   database, and the league finishes: every scheduled match has exactly one result, the
//!   killed arena's running matches were aborted and played again, and the standings
//!   (ratings included) equal those of the same league played without interruption on an
//!   arena of its own. The bots' play is a function of what they see (no seeded generator
//!   whose state depends on which match a stream happened to get), so the same schedule
//!   gives the same results.
//! - **a PostgreSQL outage mid-league**, on a server of the test's own, stopped with an
//!   immediate shutdown while league matches play and started again: no finished result is
//!   lost (every match the arena finished is stored, and counted for the league once), every
//!   scheduled match has exactly one result, and the league goes on and finishes.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use knobel_bots::{BotConfig, Game, Token, run_bot};
use knobel_e2e::postgres::{self, PrivateServer};
use knobel_e2e::{Arena, ArenaOptions, metric_with, poll_every, poll_until};
use knobel_proto::v1 as pb;
use knobel_proto::v1::arena_client::ArenaClient;

const ADMIN_TOKEN: &str = "league-faults-admin-token-0123456789";

/// The bots, strongest first: the share (per mille) of decisions each plays "at random"
/// (a function of what it sees), the rest as the heuristic.
const BOTS: [(&str, u64); 5] = [
    ("ada", 0),
    ("bert", 200),
    ("cleo", 450),
    ("dora", 700),
    ("emil", 1000),
];

/// 10 tables of 3 x 6 seat orders (Schocken), 10 x 2 (Sjokken, tables of 2), 10 x 2
/// (Zokken): 100 matches. Deadlines far beyond any decision: no timeout changes a result.
/// Duplicate dice: a match cut short is played again on the same seed (with independent dice
/// each attempt has its own, docs/fair-play.md), so the league's results equal those of the
/// same league played without interruption.
fn league(name: &str) -> String {
    format!(
        r#"
name = "{name}"
seed = 4242
dice = "duplicate"
bots = ["ada", "bert", "cleo", "dora", "emil"]
concurrency = 4

[time]
decision_ms = 60000

[games.schocken]
table_size = 3

[games.sjokken]
table_size = 2

[games.zokken]
settings = {{ rounds = 10 }}
"#
    )
}

const TOTAL: u32 = 100;

/// The arena's options: pick-up tables of 8, which five bots never fill (once the league
/// is over, its bots would otherwise play pick-up matches).
fn arena_options(extra: &[&str]) -> ArenaOptions {
    let mut options = ArenaOptions::default();
    options.args.extend(["--seats".to_owned(), "8".to_owned()]);
    options.args.extend(extra.iter().map(|s| s.to_string()));
    options
}

/// Registers the bots (through the arena's Admin service); their tokens.
async fn register(arena: &Arena) -> BTreeMap<&'static str, String> {
    let mut admin = arena.admin(ADMIN_TOKEN).await;
    let mut tokens = BTreeMap::new();
    for (name, _) in BOTS {
        let token = admin
            .add_bot(pb::AddBotRequest { name: name.into() })
            .await
            .unwrap()
            .into_inner()
            .token;
        tokens.insert(name, token);
    }
    tokens
}

/// Two Play streams per bot, every game, against `arena`; with `late`, every decision is
/// answered that late (matches last long enough to be cut).
fn play(
    arena: &Arena,
    tokens: &BTreeMap<&'static str, String>,
    late: Option<Duration>,
) -> tokio::task::JoinSet<Result<knobel_bots::RunReport, knobel_bots::BotError>> {
    let mut bots = tokio::task::JoinSet::new();
    for (name, share) in BOTS {
        for _ in 0..2 {
            let mut config = BotConfig::new(
                arena.url.clone(),
                Token::new(tokens[name].clone()),
                name,
                Game::ALL,
            );
            config.misbehave = late.map(knobel_bots::Misbehave::Late);
            bots.spawn(run_bot(config, knobel_e2e::deterministic_player(share)));
        }
    }
    bots
}

async fn create_and_start(arena: &Arena, name: &str) {
    let total = arena
        .create_and_start_league(ADMIN_TOKEN, league(name))
        .await;
    assert_eq!(total, TOTAL);
}

async fn standings(arena: &Arena, name: &str) -> Result<pb::GetStandingsResponse, tonic::Status> {
    let mut client: ArenaClient<_> = arena.client().await;
    client
        .get_standings(pb::GetStandingsRequest {
            league: name.into(),
        })
        .await
        .map(tonic::Response::into_inner)
}

/// Waits (at most `within`) until `done` holds for the league's progress (`what`); its
/// standings. Looks every 50 ms: some states it waits for are passing ones.
async fn wait_for(
    arena: &Arena,
    name: &str,
    within: Duration,
    what: &str,
    done: impl Fn(&pb::LeagueInfo) -> bool,
) -> pb::GetStandingsResponse {
    let last = RefCell::new(None);
    poll_every(Duration::from_millis(50), within, what, || async {
        if let Ok(s) = standings(arena, name).await {
            let info = s.league.clone().unwrap();
            if done(&info) {
                return Ok(s);
            }
            last.replace(Some(info));
        }
        Err(format!("{:?}", last.borrow()))
    })
    .await
}

fn finished(info: &pb::LeagueInfo) -> bool {
    info.status == pb::LeagueStatus::Finished as i32
}

/// The league's schedule as stored: (ordinal, status, match id), and for every match id
/// its status and number of seat results.
async fn stored(
    url: &str,
    name: &str,
) -> (
    Vec<(u32, String, Option<String>)>,
    BTreeMap<String, (knobel_arena::store::MatchStatus, usize)>,
    Vec<knobel_arena::store::MatchSummary>,
) {
    let store = knobel_arena::store::Store::connect(url).await.unwrap();
    let league = store.league(name).await.unwrap().expect("the league");
    let rows = store.league_match_ids(league.id).await.unwrap();
    let all = store
        .list_matches(&knobel_arena::store::MatchFilter {
            limit: 1000,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut matches = BTreeMap::new();
    for m in &all {
        let seats = store.seat_results(&m.id).await.unwrap().len();
        matches.insert(m.id.clone(), (m.status, seats));
    }
    store.close().await;
    (rows, matches, all)
}

/// Every scheduled match has exactly one result: each league match is finished by a match
/// of its own that is finished, with one seat result per seat.
fn one_result_each(
    rows: &[(u32, String, Option<String>)],
    matches: &BTreeMap<String, (knobel_arena::store::MatchStatus, usize)>,
) {
    assert_eq!(rows.len(), TOTAL as usize);
    let mut ids = std::collections::BTreeSet::new();
    for (ordinal, status, id) in rows {
        assert_eq!(status, "finished", "league match {ordinal}");
        let id = id.clone().expect("a match id");
        let (match_status, seats) = matches[&id];
        assert_eq!(
            match_status,
            knobel_arena::store::MatchStatus::Finished,
            "{id}"
        );
        assert!(seats >= 2, "match {id} has {seats} seat results");
        assert!(ids.insert(id.clone()), "match {id} counted twice");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_killed_mid_way_finishes_with_the_ratings_of_an_uninterrupted_run() {
    let env = [("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)];
    // A short lease: the killed arena's running matches are aborted soon after the restart.
    let options = arena_options(&["--instance-lease-secs", "2"]);
    // The uninterrupted run, on an arena of its own, at the same time.
    let mut reference = Arena::start_with_env(options.clone(), &env).await;
    let reference_tokens = register(&reference).await;
    let mut reference_bots = play(&reference, &reference_tokens, None);
    create_and_start(&reference, "crash").await;

    let mut first = Arena::start_with_env(options.clone(), &env).await;
    let tokens = register(&first).await;
    // Late answers: the matches playing when the kill comes are still playing when it lands.
    let mut bots = play(&first, &tokens, Some(Duration::from_millis(15)));
    create_and_start(&first, "crash").await;
    // Some but not all done, and some playing: kill -9.
    let before = wait_for(
        &first,
        "crash",
        Duration::from_secs(300),
        "the league is under way",
        |i| i.finished_matches >= 15 && i.finished_matches < TOTAL - 20 && i.playing > 0,
    )
    .await;
    first.child.kill().await.expect("kill -9 the arena");
    bots.abort_all();
    let done_before = before.league.unwrap().finished_matches;

    // Again, on the same database (the killed arena's folder is kept).
    let second = Arena::start_on_with_env(options, &env, &first.database_url).await;
    let mut bots = play(&second, &tokens, None);
    let after = wait_for(
        &second,
        "crash",
        Duration::from_secs(600),
        "the league has finished after the restart",
        finished,
    )
    .await;
    let uninterrupted = wait_for(
        &reference,
        "crash",
        Duration::from_secs(600),
        "the uninterrupted league has finished",
        finished,
    )
    .await;
    bots.abort_all();
    reference_bots.abort_all();
    assert!(second.stop().await.success());
    assert!(reference.terminate().await.success());

    let (rows, matches, all) = stored(&first.database_url, "crash").await;
    one_result_each(&rows, &matches);
    // The killed arena's running matches were aborted, and played again.
    let aborted: Vec<_> = all
        .iter()
        .filter(|m| m.status == knobel_arena::store::MatchStatus::Aborted)
        .collect();
    assert!(!aborted.is_empty(), "no match was cut by the kill");
    assert!(
        aborted
            .iter()
            .all(|m| m.abort_reason.as_deref() == Some(knobel_arena::instance::ORPHAN_REASON)),
        "{aborted:?}"
    );
    assert!(rows.iter().filter(|r| r.1 == "finished").count() > done_before as usize);
    let (reference_rows, reference_matches, _) = stored(&reference.database_url, "crash").await;
    one_result_each(&reference_rows, &reference_matches);

    // The same standings, figure by figure: ratings in schedule order, statistics, pairs.
    assert_eq!(after.overall, uninterrupted.overall);
    assert_eq!(after.games, uninterrupted.games);
    assert_eq!(after.games.len(), 3);
    assert_eq!(after.league.unwrap().finished_matches, TOTAL);
}

#[cfg_attr(
    knobel_without_postgres,
    ignore = "built with KNOBEL_TEST_WITHOUT=postgres: needs PostgreSQL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_outage_mid_league_loses_no_result_and_the_league_finishes() {
    postgres::require_binaries();
    let server = PrivateServer::start();
    let env = [("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)];
    let arena = Arena::start_on_with_env(
        arena_options(&["--store-timeout-ms", "1000", "--instance-lease-secs", "3"]),
        &env,
        &server.url,
    )
    .await;
    let tokens = register(&arena).await;
    let mut bots = play(&arena, &tokens, Some(Duration::from_millis(15)));
    create_and_start(&arena, "outage").await;
    wait_for(
        &arena,
        "outage",
        Duration::from_secs(300),
        "the league is under way",
        |i| i.finished_matches >= 10 && i.finished_matches < TOTAL - 30 && i.playing > 0,
    )
    .await;
    let (rows_before, _, _) = stored(&server.url, "outage").await;

    server.stop_immediately();
    // Matches that were playing end while the database is down: their results are kept.
    // The outage lasts until one is, and the arena's lease (3 s) has run out.
    let outage = Instant::now();
    let within = Duration::from_secs(120);
    let heartbeat = "knobel_store_errors_total{operation=\"heartbeat\"}";
    let held = Cell::new(false);
    poll_every(
        Duration::from_millis(50),
        within,
        "a result is held while the database is down (else the outage tested nothing) and \
         the lease has run out",
        || async {
            if arena.metric("knobel_store_pending_writes").await >= 1.0 {
                held.set(true);
            }
            let failed = arena.metric(heartbeat).await;
            if held.get() && failed >= 3.0 {
                Ok(())
            } else {
                Err(format!(
                    "held a result: {}; {heartbeat} {failed}",
                    held.get()
                ))
            }
        },
    )
    .await;
    // Standings cannot be read meanwhile.
    let err = standings(&arena, "outage").await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unavailable, "{err:?}");
    // Every path that met the outage counted it: GetStandings, the league scheduler and
    // the league snapshot that the metrics read (each its own operation).
    // (Within what is left of the 2 minutes.)
    for operation in ["standings", "league_scheduler", "league_snapshot"] {
        let series = format!("knobel_store_errors_total{{operation=\"{operation}\"}}");
        poll_every(
            Duration::from_millis(50),
            within.saturating_sub(outage.elapsed()),
            &format!("{series} counts the outage"),
            || async { arena.metric(&series).await >= 1.0 },
        )
        .await;
    }
    server.start_again();

    wait_for(
        &arena,
        "outage",
        Duration::from_secs(600),
        "the league has finished after the outage",
        finished,
    )
    .await;
    poll_until(Duration::from_secs(60), "no result is pending", || async {
        let pending = arena.metric("knobel_store_pending_writes").await;
        if pending <= 0.0 {
            Ok(())
        } else {
            Err(format!("{pending} pending"))
        }
    })
    .await;
    bots.abort_all();
    let metrics = arena.metrics_text().await;
    let finished_here = metric_with(
        &metrics,
        "knobel_matches_ended_total",
        "status=\"finished\"",
    );
    assert!(arena.stop().await.success());

    let (rows, matches, all) = stored(&server.url, "outage").await;
    one_result_each(&rows, &matches);
    // What was finished before the outage is still there, with the same match.
    for (before, after) in rows_before.iter().zip(&rows) {
        if before.1 == "finished" {
            assert_eq!(before, after);
        }
    }
    // Every match the arena finished is stored finished, and is the result of its league
    // match: none lost, none counted twice, none stored beside the count.
    let stored_finished = all
        .iter()
        .filter(|m| m.status == knobel_arena::store::MatchStatus::Finished)
        .count();
    let not_finished: Vec<_> = all
        .iter()
        .filter(|m| m.status != knobel_arena::store::MatchStatus::Finished)
        .collect();
    assert_eq!(
        finished_here as usize, stored_finished,
        "matches not finished: {not_finished:#?}"
    );
    assert_eq!(stored_finished, TOTAL as usize);
}

/// A stored league match that cannot be played as stored (its row edited to seat one bot)
/// pauses its league, with the match named in the arena's log. Before, the referee panicked
/// after the match's start was written, and the league match stayed claimed until the arena
/// restarted. The arena plays on: the league's other matches that started are recorded, and
/// no match is left running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_match_that_cannot_be_played_as_stored_pauses_its_league() {
    let env = [("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)];
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut options = arena_options(&[]);
    options.log_file = Some(log.path().to_owned());
    let arena = Arena::start_with_env(options, &env).await;
    let tokens = register(&arena).await;
    let mut admin = arena.admin(ADMIN_TOKEN).await;
    admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: league("edited"),
        })
        .await
        .unwrap();
    let db = sqlx::SqlitePool::connect(&arena.database_url)
        .await
        .unwrap();
    let edited = sqlx::query(
        "UPDATE league_matches SET seats_json = '[\"ada\"]' WHERE ordinal = 5 \
         AND league_id = (SELECT id FROM leagues WHERE name = 'edited')",
    )
    .execute(&db)
    .await
    .unwrap();
    assert_eq!(edited.rows_affected(), 1);
    db.close().await;
    admin
        .start_league(pb::LeagueRequest {
            name: "edited".into(),
        })
        .await
        .unwrap();
    let mut bots = play(&arena, &tokens, None);
    let paused = wait_for(
        &arena,
        "edited",
        Duration::from_secs(60),
        "the league is paused",
        |i| i.status == pb::LeagueStatus::Paused as i32,
    )
    .await;
    let info = paused.league.unwrap();
    assert!(info.finished_matches < TOTAL, "{info:?}");
    // Whatever had started ends and is recorded: nothing stays playing.
    wait_for(
        &arena,
        "edited",
        Duration::from_secs(60),
        "no match is playing after the pause",
        |i| i.playing == 0,
    )
    .await;
    bots.abort_all();
    // Stopped, its folder (and database) kept.
    let mut arena = arena;
    assert!(arena.terminate().await.success());
    let url = arena.database_url.clone();
    let text = std::fs::read_to_string(log.path()).unwrap();
    assert!(
        text.contains("cannot be played: the league is paused") && text.contains("match 5"),
        "{text}"
    );
    assert!(!text.contains("panicked"), "{text}");
    let (rows, _, all) = stored(&url, "edited").await;
    let fifth = rows.iter().find(|r| r.0 == 5).unwrap();
    assert_eq!((fifth.1.as_str(), &fifth.2), ("pending", &None), "{rows:?}");
    assert!(
        all.iter()
            .all(|m| m.status != knobel_arena::store::MatchStatus::Running),
        "{all:?}"
    );
}
