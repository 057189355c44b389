//! Several arenas on one PostgreSQL database (a fresh one on the shared server): each
//! finishes its own matches and neither aborts the other's, also when one starts while
//! the other has a match running; after `kill -9` of one, the other aborts the dead one's
//! running matches only once its lease has run out.

use std::time::Duration;

use knobel_arena::store::{InstanceId, MatchFilter, MatchStatus, Store};
use knobel_e2e::postgres::{self, SharedDatabase};
use knobel_e2e::{Arena, ArenaOptions, finish, poll_every};

fn options(lease_secs: u64, extra: &[&str]) -> ArenaOptions {
    let mut args: Vec<String> = [
        "--seats",
        "2",
        "--instance-lease-secs",
        &lease_secs.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    ArenaOptions {
        args,
        log_file: None,
    }
}

/// Waits (at most `within`, looking every 50 ms) until a match is running on the database;
/// gives its id.
async fn running_match(store: &Store, within: Duration) -> String {
    poll_every(
        Duration::from_millis(50),
        within,
        "a match is running",
        || async {
            let running = store
                .list_matches(&MatchFilter {
                    status: Some(MatchStatus::Running),
                    ..MatchFilter::default()
                })
                .await
                .unwrap();
            running.first().map(|m| m.id.clone())
        },
    )
    .await
}

/// A league on the shared database: the lead arena `lead` (the older) exports its series,
/// the other none, so that a sum over both counts it once.
async fn one_arena_exports_the_league_series(store: &Store, lead: &Arena, other: &Arena) {
    use knobel_arena::league::service::{Leagues, NotPlayed};
    let leagues = Leagues::new(store.clone(), std::sync::Arc::new(NotPlayed));
    leagues
        .create(
            "name = \"shared\"\nseed = 1\n\
             bots = [\"a-slow\", \"a-quick\", \"b-one\", \"b-two\"]\n\
             [games.schocken]\ntable_size = 2\n",
        )
        .await
        .unwrap();
    let status = "knobel_league_status";
    poll_every(
        Duration::from_millis(50),
        Duration::from_secs(30),
        "the lead arena exports the league's series",
        || async { (lead.metric(status).await == 1.0).then_some(()) },
    )
    .await;
    // The other has taken at least one snapshot since (every 500 ms): still none.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let text = other.metrics_text().await;
    assert!(!text.contains("league=\"shared\""), "{text}");
}

#[cfg_attr(
    knobel_without_postgres,
    ignore = "built with KNOBEL_TEST_WITHOUT=postgres: needs PostgreSQL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_arenas_on_one_database_each_finish_their_matches() {
    postgres::require();
    let db = SharedDatabase::create();
    // A short lease, so that a wrong sweep would show within the test.
    let mut a = Arena::start_on(options(2, &["--decision-ms", "2000"]), &db.url).await;
    let store = Store::connect(&db.url).await.unwrap();
    let tokens: Vec<String> = {
        let mut tokens = Vec::new();
        for name in ["a-slow", "a-quick", "b-one", "b-two"] {
            tokens.push(a.add_bot(name).await);
        }
        tokens
    };
    // A's first match is slow (answers 300 ms late): it is running when B starts.
    let a_bots = [
        a.bot(
            &tokens[0],
            &[
                "--games",
                "schocken",
                "--matches",
                "2",
                "--misbehave",
                "late:300",
            ],
        ),
        a.bot(&tokens[1], &["--games", "schocken", "--matches", "2"]),
    ];
    let first = running_match(&store, Duration::from_secs(30)).await;
    let mut b = Arena::start_on(options(2, &[]), &db.url).await;
    let b_bots = [
        b.bot(&tokens[2], &["--games", "sjokken", "--matches", "2"]),
        b.bot(&tokens[3], &["--games", "sjokken", "--matches", "2"]),
    ];
    // Several leases and sweeps go by while both play.
    let mut lines = Vec::new();
    for bot in a_bots.into_iter().chain(b_bots) {
        let (status, out) = finish(bot, Duration::from_secs(120)).await;
        assert!(status.success(), "{out:?}");
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out.iter().all(|l| !l.contains("aborted")), "{out:?}");
        lines.extend(out);
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("match {first} "))),
        "{lines:?}"
    );
    let all = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(
        all.iter().all(|m| m.status == MatchStatus::Finished),
        "{all:?}"
    );
    // Each arena owns the matches of its own bots.
    let mut owners = std::collections::HashMap::<String, Vec<String>>::new();
    for m in &all {
        let owner = store.match_owner(&m.id).await.unwrap().expect("an owner");
        owners
            .entry(owner.to_string())
            .or_default()
            .push(m.game.clone());
    }
    assert_eq!(owners.len(), 2, "{owners:?}");
    for games in owners.values() {
        assert_eq!(games.len(), 2, "{owners:?}");
        assert!(games[0] == games[1], "{owners:?}");
    }
    one_arena_exports_the_league_series(&store, &a, &b).await;
    assert!(a.terminate().await.success());
    assert!(b.terminate().await.success());
    // A clean stop releases the lease.
    for owner in owners.keys() {
        assert_eq!(
            store.lease(&InstanceId::new(owner.as_str())).await.unwrap(),
            None
        );
    }
    store.close().await;
}

#[cfg_attr(
    knobel_without_postgres,
    ignore = "built with KNOBEL_TEST_WITHOUT=postgres: needs PostgreSQL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_arenas_matches_are_aborted_only_after_its_lease_runs_out() {
    postgres::require();
    let db = SharedDatabase::create();
    let lease = Duration::from_secs(4);
    let mut a = Arena::start_on(options(4, &["--decision-ms", "60000"]), &db.url).await;
    let b = Arena::start_on(options(4, &[]), &db.url).await;
    let store = Store::connect(&db.url).await.unwrap();
    let stuck = a.add_bot("stuck").await;
    let other = a.add_bot("other").await;
    // A match on A that cannot end soon: one bot never answers (60 s deadline).
    let _bots = [
        a.bot(
            &stuck,
            &[
                "--games",
                "schocken",
                "--matches",
                "1",
                "--misbehave",
                "never-answer",
            ],
        ),
        a.bot(&other, &["--games", "schocken", "--matches", "1"]),
    ];
    let id = running_match(&store, Duration::from_secs(30)).await;
    let owner = store.match_owner(&id).await.unwrap().expect("an owner");
    // While A lives, B's sweeps (every lease/3) leave its match alone, for more than a lease.
    tokio::time::sleep(lease + Duration::from_secs(2)).await;
    let record = store.get_match(&id).await.unwrap().unwrap().summary;
    assert_eq!(record.status, MatchStatus::Running, "{record:?}");

    a.child.kill().await.expect("kill -9 the arena");
    let killed_ms = knobel_arena::store::now_ms();
    let last = store
        .lease(&owner)
        .await
        .unwrap()
        .expect("A's lease is left");
    let expires_ms = last.heartbeat_at_ms + last.lease_ms;
    assert!(last.lease_ms == 4_000, "{last:?}");
    // B aborts it, but not before A's lease has run out.
    let aborted = poll_every(
        Duration::from_millis(50),
        Duration::from_secs(30),
        "the dead arena's match is aborted",
        || async {
            let record = store.get_match(&id).await.unwrap().unwrap().summary;
            if record.status != MatchStatus::Running {
                return Ok(record);
            }
            let now = knobel_arena::store::now_ms();
            assert!(now < expires_ms + 30_000);
            Err(format!("{record:?}"))
        },
    )
    .await;
    assert_eq!(aborted.status, MatchStatus::Aborted, "{aborted:?}");
    let at = aborted.finished_at_ms.expect("an end time");
    assert!(
        at > expires_ms,
        "aborted at {at}, before the lease ran out at {expires_ms} (killed at {killed_ms})"
    );
    assert!(
        aborted
            .abort_reason
            .as_deref()
            .is_some_and(|r| r.contains("lease")),
        "{aborted:?}"
    );
    assert!(b.stop().await.success());
    store.close().await;
}

/// A Zokken league of two bots that stops when settled: with two sets it cannot settle, so
/// it ends when its schedule is played. Matches of the preset's 100 rounds last long enough
/// for the other arena's scheduler (a look every 50 ms) to see the last one being played
/// (with 10 rounds the old fault went unseen).
const SETTLED_LAST: &str = r#"
name = "last"
bots = ["ace", "deuce"]
repetitions = 2
stop = "settled"

[games.zokken]
"#;

const ADMIN_TOKEN: &str = "replicas-admin-token-0123456789abcdef";

/// A settled league ends only when no arena plays a match of it. Arena B holds none of its
/// bots: during the league's last match, played on arena A, B sees no match left to start
/// and none playing of its own. It used to end the league then, which shows the league's
/// secret while that match still played.
#[cfg_attr(
    knobel_without_postgres,
    ignore = "built with KNOBEL_TEST_WITHOUT=postgres: needs PostgreSQL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settled_league_is_not_ended_while_another_arena_plays_its_last_match() {
    use knobel_arena::store::LeagueStatus;
    postgres::require();
    let db = SharedDatabase::create();
    let env = [("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)];
    let mut a = Arena::start_on_with_env(options(10, &[]), &env, &db.url).await;
    let mut b = Arena::start_on_with_env(options(10, &[]), &env, &db.url).await;
    let mut bots = Vec::new();
    for name in ["ace", "deuce"] {
        let token = a.add_bot(name).await;
        bots.push(a.bot(&token, &["--games", "zokken"]));
    }
    let total = a
        .create_and_start_league(ADMIN_TOKEN, SETTLED_LAST.to_owned())
        .await;
    let store = Store::connect(&db.url).await.unwrap();
    let over = poll_every(
        Duration::from_millis(10),
        Duration::from_secs(300),
        "the league is over",
        || async {
            let league = store.league("last").await.unwrap().expect("the league");
            assert!(
                league.status != LeagueStatus::Finished || league.playing == 0,
                "the league ended with {} of its matches playing: {league:?}",
                league.playing
            );
            (league.status == LeagueStatus::Finished).then_some(league)
        },
    )
    .await;
    assert_eq!(over.finished_matches, u64::from(total), "{over:?}");
    assert!(over.revealed_secret().is_some());
    drop(bots);
    assert!(a.terminate().await.success());
    assert!(b.terminate().await.success());
    store.close().await;
}
