//! Leagues with `stop = "settled"` end to end: an arena (in-process, on a fresh SQLite
//! file) and built-in bots as real gRPC clients. A field of clearly different strength stops
//! long before its schedule is played, with every two neighbours of its standings separated
//! or equivalent; two bots of identical play never separate and stop at the budget. In
//! both, every table's seat orders were played complete (adaptive scheduling never leaves a
//! set half played) and the stored results are the standings' whole input.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use knobel_arena::auth::{AdminToken, generate_token};
use knobel_arena::league::{LeagueConfig, PairVerdict, standings_with};
use knobel_arena::server::{ServerConfig, serve};
use knobel_arena::store::Store;
use knobel_bots::{BearerAuth, Bot, BotConfig, Game, Token, strategy};
use knobel_e2e::poll_until;
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use knobel_proto::v1::arena_client::ArenaClient;

/// Three bots far apart in Zokken (chips per 100 rounds: about +340, 0 and -600 in a
/// field like this one).
const APART: &str = r#"
name = "apart"
bots = ["ace", "bold", "fumble"]
repetitions = 200
stop = "settled"
concurrency = 6

[games.zokken]
settings = { rounds = 10 }
"#;

/// Two bots that play alike: only the budget ends it.
const ALIKE: &str = r#"
name = "alike"
bots = ["ace", "twin"]
repetitions = 100
stop = "settled"
budget = 40
concurrency = 4

[games.zokken]
settings = { rounds = 10 }
"#;

const BOTS: [(&str, &str); 4] = [
    ("ace", "heuristic"),
    ("bold", "heuristic-40"),
    ("fumble", "random"),
    ("twin", "heuristic"),
];

struct Arena {
    store: Store,
    admin: Admin,
    arena: ArenaClient<tonic::transport::Channel>,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), knobel_arena::server::ServeError>>,
    bots: tokio::task::JoinSet<Result<knobel_bots::RunReport, knobel_bots::BotError>>,
    _dir: tempfile::TempDir,
}

type Admin = AdminClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, BearerAuth>,
>;

async fn start() -> Arena {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("league.db").display());
    let store = Store::connect(&url).await.unwrap();
    let admin_token = generate_token();
    let config = ServerConfig {
        admin_token: Some(AdminToken::new(&admin_token)),
        ..ServerConfig::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(config, store.clone(), listener, None, async {
        let _ = stopped.await;
    }));
    let channel = tonic::transport::Endpoint::from_shared(addr.clone())
        .unwrap()
        .connect_lazy();
    let auth = BearerAuth::new(&Token::new(admin_token)).unwrap();
    let admin = AdminClient::with_interceptor(channel.clone(), auth);
    let mut tokens = BTreeMap::new();
    // The server may not listen yet: each bot is added once it does, all within 30 s.
    let started = Instant::now();
    for (name, _) in BOTS {
        let token = poll_until(
            Duration::from_secs(30).saturating_sub(started.elapsed()),
            &format!("the arena has added {name}"),
            || {
                let mut admin = admin.clone();
                async move {
                    admin
                        .add_bot(pb::AddBotRequest { name: name.into() })
                        .await
                        .map(|added| added.into_inner().token)
                        .map_err(|e| format!("cannot reach the arena: {e}"))
                }
            },
        )
        .await;
        tokens.insert(name, token);
    }
    let mut bots = tokio::task::JoinSet::new();
    for (i, (name, strat)) in BOTS.iter().enumerate() {
        for stream in 0..3 {
            let config = BotConfig::new(
                addr.clone(),
                Token::new(tokens[name].clone()),
                *name,
                Game::ALL,
            );
            let policy = strategy(strat, (i * 8 + stream) as u64).unwrap();
            bots.spawn(Bot::new(config, policy).run());
        }
    }
    Arena {
        store,
        admin,
        arena: ArenaClient::new(channel),
        stop,
        server,
        bots,
        _dir: dir,
    }
}

impl Arena {
    /// Creates and starts league `file`, and waits until it is finished.
    async fn play(&mut self, file: &str) -> pb::LeagueInfo {
        let created = self
            .admin
            .create_league(pb::CreateLeagueRequest {
                config_toml: file.into(),
            })
            .await
            .unwrap()
            .into_inner()
            .league
            .unwrap();
        self.admin
            .start_league(pb::LeagueRequest {
                name: created.name.clone(),
            })
            .await
            .unwrap();
        poll_until(
            Duration::from_secs(600),
            &format!("league {} has finished", created.name),
            || {
                let mut arena = self.arena.clone();
                let league = created.name.clone();
                async move {
                    let info = arena
                        .get_standings(pb::GetStandingsRequest { league })
                        .await
                        .unwrap()
                        .into_inner()
                        .league
                        .unwrap();
                    if info.status == pb::LeagueStatus::Finished as i32 {
                        Ok(info)
                    } else {
                        Err(format!("not finished: {info:?}"))
                    }
                }
            },
        )
        .await
    }

    async fn shut(mut self) {
        self.bots.abort_all();
        let _ = self.stop.send(());
        self.server.await.unwrap().unwrap();
    }
}

/// The finished matches of league `name` per set: every set is complete (2 seat orders).
async fn assert_sets_complete(store: &Store, name: &str) -> usize {
    let league = store.league(name).await.unwrap().unwrap();
    let results = store.league_results(league.id).await.unwrap();
    let mut per_set: BTreeMap<u32, usize> = BTreeMap::new();
    for m in &results {
        *per_set.entry(m.set).or_default() += 1;
    }
    assert!(
        per_set.values().all(|&n| n == 2),
        "a set was left half played: {per_set:?}"
    );
    results.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settled_league_stops_when_its_order_is_known_or_at_its_budget() {
    let mut arena = start().await;

    let info = arena.play(APART).await;
    // 3 tables x 2 seat orders x 200 repetitions scheduled; far fewer played.
    assert_eq!(info.total_matches, 1_200);
    assert!(
        info.finished_matches < 600,
        "it played {} of 1,200 matches",
        info.finished_matches
    );
    let played = assert_sets_complete(&arena.store, "apart").await;
    assert_eq!(played as u32, info.finished_matches);
    // The standings of the stored results: settled, in the order of strength.
    let league = arena.store.league("apart").await.unwrap().unwrap();
    let config = LeagueConfig::from_toml(&league.config_toml).unwrap();
    let results = arena.store.league_results(league.id).await.unwrap();
    let standings = standings_with(&results, &config.margins());
    let zokken = &standings.games[0];
    assert!(zokken.settled(), "{:?}", zokken.neighbours);
    let order: Vec<&str> = zokken.bots.iter().map(|b| b.bot.as_str()).collect();
    assert_eq!(order, ["ace", "bold", "fumble"]);
    assert!(
        zokken
            .neighbours
            .iter()
            .all(|n| n.verdict == PairVerdict::Separated),
        "{:?}",
        zokken.neighbours
    );

    let info = arena.play(ALIKE).await;
    assert_eq!(info.total_matches, 200);
    // Identical play never separates, and 10 chips per 100 rounds is too fine a margin
    // for 40 matches: it ends at its budget exactly (20 sets of 2).
    assert_eq!(info.finished_matches, 40);
    assert_eq!(assert_sets_complete(&arena.store, "alike").await, 40);
    let league = arena.store.league("alike").await.unwrap().unwrap();
    let results = arena.store.league_results(league.id).await.unwrap();
    let standings = standings_with(&results, &LeagueConfig::from_toml(ALIKE).unwrap().margins());
    assert_eq!(standings.games[0].neighbours[0].verdict, PairVerdict::Open);
    arena.shut().await;
}
