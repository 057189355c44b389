//! The web viewer under load, while a league runs (docs/benchmarks.md, "Web viewer"):
//!
//! - (a) the standings page: requests per second over keep-alive connections, with their
//!   p50 and p99 latency, while the league plays (the target: at least 500 per second);
//! - (b) live updates: the arena's decisions per second with [`SSE_CLIENTS`] live pages
//!   connected (server-sent events) against none, in alternating windows of the same run,
//!   each window with them against the mean of the windows without them around it (the
//!   target: at most 5% fewer with them).
//!
//! The arena runs in this process (`serve_with_web`, SQLite in a temporary folder) on its
//! own two-worker runtime; the bots (six built-in players, four Play streams each), the
//! page clients and the live pages run on another. Decisions are counted as the bots make
//! them. Run with `cargo bench -p knobel-e2e --bench web`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use knobel_arena::auth::{self, AdminToken};
use knobel_arena::server::{ServerConfig, serve_with_web};
use knobel_arena::store::Store;
use knobel_bots::{BearerAuth, Bot, BotConfig, Game, Token, strategy};
use knobel_e2e::http_request;
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

// The shared helpers; this bench uses the runtimes, percentiles and league players.
#[allow(dead_code)]
mod support;
use support::{Counting, LEAGUE_PLAYERS, percentile_us, runtime};

/// Live pages connected during the windows with live updates.
const SSE_CLIENTS: usize = 100;
/// Keep-alive connections asking for the standings page at once.
const PAGE_CONNECTIONS: usize = 8;
/// How long (a) asks for the page.
const PAGE_RUN: Duration = Duration::from_secs(10);
/// Each window of (b).
const WINDOW: Duration = Duration::from_secs(15);
/// Windows of (b) with live pages (one more without them), alternating.
const ROUNDS: usize = 4;
/// League matches finished before measuring (the standings have something to show).
const WARM_UP_MATCHES: u32 = 100;

const STREAMS_PER_BOT: usize = 4;

/// The league: Schocken at tables of 4 among [`LEAGUE_PLAYERS`], far longer than the bench.
fn league_file() -> String {
    let bots: Vec<String> = (0..LEAGUE_PLAYERS.len())
        .map(|i| format!("\"bot-{i}\""))
        .collect();
    format!(
        "name = \"bench\"\nseed = 3\nbots = [{}]\nrepetitions = 1000\nconcurrency = 6\n\n\
         [games.schocken]\ntable_size = 4\n",
        bots.join(", ")
    )
}

/// Decisions per second over `window`.
async fn decision_rate(decisions: &AtomicU64, window: Duration) -> f64 {
    let (start, before) = (Instant::now(), decisions.load(Ordering::Relaxed));
    tokio::time::sleep(window).await;
    let after = decisions.load(Ordering::Relaxed);
    (after - before) as f64 / start.elapsed().as_secs_f64()
}

/// A live page: the league's event stream, read (and counted) until dropped.
async fn live_page(host: String, events: Arc<AtomicU64>) {
    let mut stream = TcpStream::connect(&host).await.expect("connect");
    let request = format!(
        "GET /leagues/bench/events HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let seen = buf[..n]
                    .windows(17)
                    .filter(|w| w == b"event: standings\n")
                    .count();
                events.fetch_add(seen as u64, Ordering::Relaxed);
            }
        }
    }
}

fn main() {
    let servers = runtime("arena");
    let clients = runtime("clients");
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let admin_token = auth::generate_token();
    let (store, listener, web_listener) = servers.block_on(async {
        let store = Store::connect(&url).await.expect("store");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let web = TcpListener::bind("127.0.0.1:0").await.unwrap();
        (store, listener, web)
    });
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let web_host = web_listener.local_addr().unwrap().to_string();
    let config = ServerConfig {
        admin_token: Some(AdminToken::new(&admin_token)),
        ..ServerConfig::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = servers.spawn(serve_with_web(
        config,
        store.clone(),
        listener,
        None,
        Some(web_listener),
        async {
            let _ = stopped.await;
        },
    ));

    clients.block_on(async {
        let channel = tonic::transport::Endpoint::from_shared(addr.clone())
            .unwrap()
            .connect()
            .await
            .expect("connect to the arena");
        let auth = BearerAuth::new(&Token::new(admin_token.clone())).unwrap();
        let mut admin = AdminClient::with_interceptor(channel, auth);
        let decisions = Arc::new(AtomicU64::new(0));
        let mut bots = tokio::task::JoinSet::new();
        for (i, strat) in LEAGUE_PLAYERS.iter().enumerate() {
            let name = format!("bot-{i}");
            let token = admin
                .add_bot(pb::AddBotRequest { name: name.clone() })
                .await
                .expect("add a bot")
                .into_inner()
                .token;
            for stream in 0..STREAMS_PER_BOT {
                let config = BotConfig::new(
                    addr.clone(),
                    Token::new(token.clone()),
                    name.clone(),
                    vec![Game::Schocken],
                );
                let policy = Counting {
                    policy: strategy(strat, (i * 16 + stream) as u64).unwrap(),
                    decisions: decisions.clone(),
                };
                bots.spawn(Bot::new(config, policy).run());
            }
        }
        admin
            .create_league(pb::CreateLeagueRequest {
                config_toml: league_file(),
            })
            .await
            .expect("create the league");
        admin
            .start_league(pb::LeagueRequest {
                name: "bench".into(),
            })
            .await
            .expect("start the league");
        let finished = || async {
            store
                .league("bench")
                .await
                .unwrap()
                .map_or(0, |l| l.finished_matches)
        };
        let deadline = Instant::now() + Duration::from_secs(600);
        while finished().await < u64::from(WARM_UP_MATCHES) {
            assert!(Instant::now() < deadline, "the league does not progress");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        // (a) The standings page, while the league plays.
        let before = (finished().await, decisions.load(Ordering::Relaxed));
        let start = Instant::now();
        let mut pages = tokio::task::JoinSet::new();
        for _ in 0..PAGE_CONNECTIONS {
            let host = web_host.clone();
            pages.spawn(async move {
                let mut stream = TcpStream::connect(&host).await.expect("connect");
                let mut latencies = Vec::new();
                let end = Instant::now() + PAGE_RUN;
                while Instant::now() < end {
                    let asked = Instant::now();
                    let (status, body) =
                        http_request(&mut stream, &host, "/leagues/bench", true).await;
                    assert_eq!(status, 200);
                    assert!(body.len() > 1000, "a whole page");
                    latencies.push(asked.elapsed().as_micros() as u64);
                }
                latencies
            });
        }
        let mut latencies = Vec::new();
        while let Some(done) = pages.join_next().await {
            latencies.extend(done.expect("a page client"));
        }
        let elapsed = start.elapsed().as_secs_f64();
        let after = (finished().await, decisions.load(Ordering::Relaxed));
        let rate = latencies.len() as f64 / elapsed;
        println!(
            "(a) standings page: {} requests in {elapsed:.1} s over {PAGE_CONNECTIONS} \
             connections: {rate:.0} per second (target >= 500: {}); p50 {:.2} ms, p99 {:.2} ms; \
             meanwhile {} league matches finished, {:.0} decisions per second",
            latencies.len(),
            if rate >= 500.0 { "met" } else { "NOT met" },
            percentile_us(&latencies, 0.5),
            percentile_us(&latencies, 0.99),
            after.0 - before.0,
            (after.1 - before.1) as f64 / elapsed,
        );

        // (b) Decisions per second without and with live pages, alternating: every window
        // with them is compared with the mean of the windows without them just before and
        // just after it, which cancels a steady drift of the rate (the league grows, other
        // users of the machine come and go).
        let events = Arc::new(AtomicU64::new(0));
        let mut without = vec![decision_rate(&decisions, WINDOW).await];
        let (mut with, mut ratios) = (Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            let mut live = tokio::task::JoinSet::new();
            for _ in 0..SSE_CLIENTS {
                live.spawn(live_page(web_host.clone(), events.clone()));
            }
            // Connected, and past their first update.
            tokio::time::sleep(Duration::from_secs(1)).await;
            let seen = events.load(Ordering::Relaxed);
            with.push(decision_rate(&decisions, WINDOW).await);
            let updates = events.load(Ordering::Relaxed) - seen;
            live.abort_all();
            while live.join_next().await.is_some() {}
            tokio::time::sleep(Duration::from_secs(1)).await;
            without.push(decision_rate(&decisions, WINDOW).await);
            let around = (without[round] + without[round + 1]) / 2.0;
            ratios.push(with[round] / around);
            println!(
                "(b) round {}: {:.0} decisions per second with {SSE_CLIENTS} live pages \
                 ({updates} updates received), {:.0} and {:.0} without them before and after: \
                 ratio {:.3}",
                round + 1,
                with[round],
                without[round],
                without[round + 1],
                ratios[round]
            );
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let ratio = mean(&ratios);
        println!(
            "(b) decisions per second: {:.0} without live pages, {:.0} with {SSE_CLIENTS}: \
             mean ratio {ratio:.3} (target >= 0.95: {})",
            mean(&without),
            mean(&with),
            if ratio >= 0.95 { "met" } else { "NOT met" }
        );
        let league = store.league("bench").await.unwrap().unwrap();
        println!(
            "league: {} of {} matches finished during the bench",
            league.finished_matches, league.total_matches
        );
        bots.abort_all();
    });
    let _ = stop.send(());
    servers.block_on(async {
        let _ = tokio::time::timeout(Duration::from_secs(30), server).await;
    });
}
