//! Cluster mode with real processes: three `knobel serve --nats-url` arenas on one
//! PostgreSQL database (a fresh one on the shared server) and a `nats-server` of the test's
//! own, 24 bots with one stream each, bot i on arena i mod 3. A league of duplicate sets
//! is played across the arenas: every league match has one result, the standings are those
//! of the same league on a single arena, most matches seat bots of several arenas (their
//! seats relayed), no seat forfeits, and no bot is ever in two matches at once.
//!
//! Also the bad input of cluster mode: `--nats-url` with SQLite, an unreachable NATS, a
//! missing peer token and an advertised peer address that is not this arena stop the arena
//! with a message naming the flag.

use std::collections::BTreeMap;
use std::time::Duration;

use knobel_bots::{BotConfig, Game, Token, run_bot};
use knobel_e2e::nats::NatsServer;
use knobel_e2e::postgres::{self, SharedDatabase};
use knobel_e2e::{Arena, ArenaOptions, metric_sum, poll_every};
use knobel_proto::v1 as pb;

const ADMIN_TOKEN: &str = "cluster-admin-token-0123456789";
const PEER_TOKEN: &str = "cluster-peer-token-0123456789";
/// The bots: 12 (132 matches), or `KNOBEL_CLUSTER_BOTS` (24: 552 matches, the issue's
/// size, for a run by hand).
fn bots() -> usize {
    std::env::var("KNOBEL_CLUSTER_BOTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(12)
}

fn bot_name(i: usize) -> String {
    format!("bot{i:02}")
}

/// The bots at Schocken tables of 4, a balanced design (12 bots: 33 tables, every two bots
/// together at 3), duplicate sets of 4 seat orders (132 matches), 12 at a time (as many as
/// the bots' single streams allow).
fn league(name: &str) -> String {
    let bots: Vec<String> = (0..bots())
        .map(|i| format!("\"{}\"", bot_name(i)))
        .collect();
    format!(
        r#"
name = "{name}"
seed = 77
dice = "duplicate"
bots = [{}]
concurrency = 12
design = "balanced"

[time]
decision_ms = 60000

[games.schocken]
table_size = 4
"#,
        bots.join(", ")
    )
}

fn cluster_options(nats_url: &str) -> ArenaOptions {
    let mut options = ArenaOptions::default();
    options.args.extend(
        [
            "--seats",
            "10",
            "--nats-url",
            nats_url,
            "--peer-listen",
            "127.0.0.1:0",
            "--peer-token",
            PEER_TOKEN,
        ]
        .map(String::from),
    );
    options
}

async fn register(arena: &Arena) -> Vec<String> {
    let mut admin = arena.admin(ADMIN_TOKEN).await;
    let mut tokens = Vec::new();
    for i in 0..bots() {
        let token = admin
            .add_bot(pb::AddBotRequest { name: bot_name(i) })
            .await
            .unwrap()
            .into_inner()
            .token;
        tokens.push(token);
    }
    tokens
}

/// One stream per bot, bot i on `arenas[i % len]`.
fn play(
    arenas: &[&Arena],
    tokens: &[String],
) -> tokio::task::JoinSet<Result<knobel_bots::RunReport, knobel_bots::BotError>> {
    let mut bots = tokio::task::JoinSet::new();
    for (i, token) in tokens.iter().enumerate() {
        let arena = arenas[i % arenas.len()];
        let config = BotConfig::new(
            arena.url.clone(),
            Token::new(token.clone()),
            bot_name(i),
            vec![Game::Schocken],
        );
        let share = (i as u64 * 37) % 1000;
        bots.spawn(run_bot(config, knobel_e2e::deterministic_player(share)));
    }
    bots
}

async fn create_and_start(arena: &Arena, name: &str) -> u32 {
    arena
        .create_and_start_league(ADMIN_TOKEN, league(name))
        .await
}

async fn standings(arena: &Arena, name: &str) -> Option<pb::GetStandingsResponse> {
    let mut client = arena.client().await;
    client
        .get_standings(pb::GetStandingsRequest {
            league: name.into(),
        })
        .await
        .ok()
        .map(tonic::Response::into_inner)
}

/// Waits (at most `within`) until league `name` has finished on `arena`: its standings.
async fn finished(arena: &Arena, name: &str, within: Duration) -> pb::GetStandingsResponse {
    poll_every(
        Duration::from_millis(200),
        within,
        "the league has finished",
        || async {
            let s = standings(arena, name).await?;
            let status = s.league.as_ref()?.status;
            (status == pb::LeagueStatus::Finished as i32).then_some(s)
        },
    )
    .await
}

/// What the store holds of the league's matches, checked: every league match finished by
/// a match of its own, with a seat result per seat and no forfeit; no bot in two matches
/// at once. The matches, for more checks.
async fn check_stored(url: &str, name: &str, total: u32) -> Vec<knobel_arena::store::MatchSummary> {
    use knobel_arena::store::{MatchFilter, MatchStatus, Store};
    let store = Store::connect(url).await.unwrap();
    let league = store.league(name).await.unwrap().expect("the league");
    let rows = store.league_match_ids(league.id).await.unwrap();
    assert_eq!(rows.len(), total as usize);
    let all = store
        .list_matches(&MatchFilter {
            limit: 10_000,
            ..Default::default()
        })
        .await
        .unwrap();
    let by_id: BTreeMap<&str, &knobel_arena::store::MatchSummary> =
        all.iter().map(|m| (m.id.as_str(), m)).collect();
    let mut seat_results = 0;
    let mut ids = std::collections::BTreeSet::new();
    for (ordinal, status, id) in &rows {
        assert_eq!(status, "finished", "league match {ordinal}");
        let id = id.clone().expect("a match id");
        assert!(ids.insert(id.clone()), "match {id} counted twice");
        assert_eq!(by_id[id.as_str()].status, MatchStatus::Finished, "{id}");
        let seats = store.seat_results(&id).await.unwrap();
        assert!(seats.iter().all(|s| s.forfeit.is_none()), "{id}: {seats:?}");
        seat_results += seats.len();
    }
    assert_eq!(seat_results, total as usize * 4);
    no_double_seat(&all);
    store.close().await;
    all
}

/// No bot is in two matches at once: each bot's matches, by start, each start after the
/// end of the one before.
fn no_double_seat(all: &[knobel_arena::store::MatchSummary]) {
    let mut by_bot: BTreeMap<&str, Vec<(i64, i64, &str)>> = BTreeMap::new();
    for m in all {
        let end = m.finished_at_ms.unwrap_or(i64::MAX);
        for bot in &m.seat_names {
            by_bot
                .entry(bot.as_str())
                .or_default()
                .push((m.started_at_ms, end, &m.id));
        }
    }
    for (bot, mut spans) in by_bot {
        spans.sort();
        for pair in spans.windows(2) {
            assert!(
                pair[1].0 >= pair[0].1,
                "bot {bot} was in matches {} and {} at once",
                pair[0].2,
                pair[1].2
            );
        }
    }
}

#[cfg_attr(
    knobel_without_postgres,
    ignore = "built with KNOBEL_TEST_WITHOUT=postgres: needs PostgreSQL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_arenas_play_one_league_exactly_once_with_relayed_seats() {
    postgres::require();
    let nats = NatsServer::start();
    let db = SharedDatabase::create();
    let env = [("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)];
    // The reference: the same league on one arena of its own.
    let reference = Arena::start_with_env(ArenaOptions::default(), &env).await;
    let reference_tokens = register(&reference).await;
    let mut reference_bots = play(&[&reference], &reference_tokens);
    let total = create_and_start(&reference, "one").await;

    let mut arenas = Vec::new();
    for _ in 0..3 {
        arenas.push(Arena::start_on_with_env(cluster_options(&nats.url), &env, &db.url).await);
    }
    let tokens = register(&arenas[0]).await;
    let mut bots = play(&arenas.iter().collect::<Vec<_>>(), &tokens);
    assert_eq!(create_and_start(&arenas[0], "one").await, total);

    let within = Duration::from_secs(600);
    let clustered = finished(&arenas[0], "one", within).await;
    let alone = finished(&reference, "one", within).await;
    // Every arena answers the same.
    for arena in &arenas[1..] {
        let other = standings(arena, "one").await.expect("standings");
        assert_eq!(other.overall, clustered.overall);
        assert_eq!(other.league.unwrap().finished_matches, total);
    }
    assert_eq!(clustered.overall, alone.overall);
    assert_eq!(clustered.games, alone.games);

    let mut relayed = 0.0;
    for arena in &arenas {
        relayed += metric_sum(&arena.metrics_text().await, "knobel_relayed_seats_total");
    }
    bots.abort_all();
    reference_bots.abort_all();
    for arena in &mut arenas {
        assert!(arena.terminate().await.success());
    }
    let all = check_stored(&db.url, "one", total).await;
    // Bot i waited on arena i mod 3: a match of bots of several arenas had relayed seats.
    let arena_of = |name: &str| name[3..].parse::<usize>().unwrap() % 3;
    let spanning = all
        .iter()
        .filter(|m| {
            let first = arena_of(&m.seat_names[0]);
            m.seat_names.iter().any(|n| arena_of(n) != first)
        })
        .count();
    assert!(
        spanning * 2 >= total as usize,
        "{spanning} of {total} matches seated bots of several arenas"
    );
    assert!(relayed >= spanning as f64, "{relayed} relayed seats");
}

/// `knobel serve` with `args` (and the peer port on a free port) exits with an error
/// within 30 s: its stderr.
async fn refused(args: &[&str]) -> String {
    let run =
        knobel_e2e::serve_command(&[&["--peer-listen", "127.0.0.1:0"], args].concat()).output();
    let output = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("the arena stops within 30 s")
        .expect("run knobel serve");
    assert!(!output.status.success());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[cfg_attr(
    knobel_without_postgres,
    ignore = "built with KNOBEL_TEST_WITHOUT=postgres: needs PostgreSQL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_mode_refuses_bad_settings_naming_the_flag() {
    postgres::require();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite://{}", dir.path().join("a.db").display());
    let nats = NatsServer::start();
    let err = refused(&["--database-url", &sqlite, "--nats-url", &nats.url]).await;
    assert!(err.contains("--nats-url needs a PostgreSQL store"), "{err}");

    let db = SharedDatabase::create();
    let unreachable = format!("nats://127.0.0.1:{}", knobel_e2e::free_port());
    let token = ["--peer-token", PEER_TOKEN];
    let err = refused(
        &[
            &["--database-url", &db.url, "--nats-url", &unreachable],
            &token[..],
        ]
        .concat(),
    )
    .await;
    assert!(
        err.contains("cannot reach NATS at") && err.contains("(--nats-url)"),
        "{err}"
    );

    let err = refused(&["--database-url", &db.url, "--nats-url", &nats.url]).await;
    assert!(err.contains("--peer-token"), "{err}");

    // An advertised address where nothing (or something else) answers.
    let elsewhere = format!("127.0.0.1:{}", knobel_e2e::free_port());
    let err = refused(
        &[
            &["--database-url", &db.url, "--nats-url", &nats.url],
            &token[..],
            &["--peer-advertise", &elsewhere],
        ]
        .concat(),
    )
    .await;
    assert!(
        err.contains(&format!(
            "the peer address {elsewhere} (--peer-advertise) does not answer as this arena"
        )),
        "{err}"
    );
}
