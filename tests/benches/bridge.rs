//! The stdin/stdout bridge's added latency per decision (docs/benchmarks.md, "The
//! stdin/stdout bridge"): one trivial bot, answering every request with its first legal
//! action, played two ways against the same bare Play server:
//!
//! - **grpc**: in Rust over gRPC, `knobel_bots::Bot` with the policy `|_, legal| legal[0]`;
//! - **bridge**: `knobel_bots::ExecBot` (`knobel-bot --exec`) running this bench binary as a
//!   separate program (`bridge stdio-bot`) that reads the JSON lines with serde_json and
//!   prints `{"request_id": ..., "action": <legal_actions[0]>}`.
//!
//! The server sends a DecisionRequest (a real Schocken one, from the engine) and measures,
//! on its own side, the time until the matching Decision arrives; then it sends the next.
//! That is the time the arena would wait for the bot. The two ways alternate in rounds, so
//! that both see the same load of the shared machine; the samples of all rounds are pooled.
//! Target: p50(bridge) - p50(grpc) at most 200 µs.
//!
//! Run with `cargo bench -p knobel-e2e --bench bridge`.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use knobel_bots::{Action, Bot, BotConfig, ExecBot, Game, Observation, Program};
use knobel_proto::v1 as pb;
use pb::arena_message::Kind;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;

// The shared helpers; the league players are not used here.
#[allow(dead_code)]
mod support;
use support::{percentile_us, runtime};

/// Rounds of each way.
const ROUNDS: usize = 6;
/// Decisions per round, after the warm-up.
const DECISIONS: usize = 2000;
/// Decisions at the start of a round that are not counted (connection, program start).
const WARMUP: usize = 200;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("stdio-bot") {
        stdio_bot();
        return;
    }
    let servers = runtime("server");
    let clients = runtime("client");
    let (url, samples) = servers.block_on(start_server());
    let program = Program {
        command: std::env::current_exe().expect("the bench binary").into(),
        args: vec!["stdio-bot".into()],
    };
    println!("load before: {}", uptime());
    let (mut grpc, mut bridge) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        for way in ["grpc", "bridge"] {
            samples.lock().expect("samples").clear();
            let config = config(&url, way);
            let report = clients.block_on(async {
                match way {
                    "grpc" => {
                        Bot::new(config, |_: &Observation, legal: &[Action]| legal[0])
                            .run()
                            .await
                    }
                    _ => ExecBot::new(config, program.clone()).run().await,
                }
            });
            report.unwrap_or_else(|e| panic!("the {way} bot failed: {e}"));
            let taken = std::mem::take(&mut *samples.lock().expect("samples"));
            assert_eq!(taken.len(), WARMUP + DECISIONS, "{way} round {round}");
            let counted = &taken[WARMUP..];
            println!(
                "round {round} {way:>6}: p50 {:7.1} µs",
                percentile_us(counted, 0.5)
            );
            match way {
                "grpc" => grpc.extend_from_slice(counted),
                _ => bridge.extend_from_slice(counted),
            }
        }
    }
    println!("load after: {}", uptime());
    println!();
    println!("| way | decisions | p50 µs | p90 µs | p99 µs |");
    println!("|---|---|---|---|---|");
    for (way, samples) in [("gRPC, Rust", &grpc), ("stdin/stdout bridge", &bridge)] {
        println!(
            "| {way} | {} | {:.1} | {:.1} | {:.1} |",
            samples.len(),
            percentile_us(samples, 0.5),
            percentile_us(samples, 0.9),
            percentile_us(samples, 0.99)
        );
    }
    let added = percentile_us(&bridge, 0.5) - percentile_us(&grpc, 0.5);
    println!();
    println!(
        "added by the bridge, p50: {added:.1} µs (target: at most 200 µs): {}",
        if added <= 200.0 { "met" } else { "missed" }
    );
}

fn config(url: &str, way: &str) -> BotConfig {
    let mut config = BotConfig::new(url, "bench", format!("bench-{way}"), [Game::Schocken]);
    config.max_matches = Some(1);
    config.ping_interval = None;
    config
}

/// Starts the Play server on 127.0.0.1:0; its URL and the samples of the stream being
/// played, in nanoseconds.
async fn start_server() -> (String, Arc<Mutex<Vec<u64>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let samples = Arc::new(Mutex::new(Vec::new()));
    let shared = samples.clone();
    let play = move |inbound: Streaming<pb::BotMessage>| -> support::PlayStream {
        let (out, rx) = mpsc::channel(16);
        tokio::spawn(one_match(inbound, out, shared.clone()));
        Box::pin(ReceiverStream::new(rx))
    };
    tokio::spawn(support::serve_play(listener, play, std::future::pending()));
    (url, samples)
}

type Out = mpsc::Sender<Result<pb::ArenaMessage, tonic::Status>>;

/// One match of `WARMUP + DECISIONS` requests: Welcome and MatchStart after the Hello, then
/// a request, its decision timed, the next request, ...; a MatchResult after the last.
async fn one_match(
    mut inbound: Streaming<pb::BotMessage>,
    out: Out,
    samples: Arc<Mutex<Vec<u64>>>,
) {
    let send = |kind: Kind| pb::ArenaMessage::from(kind);
    let Some(Ok(_hello)) = inbound.next().await else {
        return;
    };
    let template = match support::engine_request().kind {
        Some(Kind::DecisionRequest(request)) => request,
        _ => unreachable!("engine_request is a DecisionRequest"),
    };
    let start = pb::MatchStart {
        match_id: "bench".into(),
        game: pb::Game::Schocken as i32,
        preset: "schocken".into(),
        seats: 2,
        seat_names: vec!["bench".into(), "builtin".into()],
        your_seat: 0,
        ..Default::default()
    };
    for message in [
        send(Kind::Welcome(pb::Welcome::default())),
        send(Kind::MatchStart(start)),
    ] {
        let _ = out.send(Ok(message)).await;
    }
    for request_id in 1..=(WARMUP + DECISIONS) as u64 {
        let request = pb::DecisionRequest {
            request_id,
            ..template.clone()
        };
        let sent = Instant::now();
        if out
            .send(Ok(send(Kind::DecisionRequest(request))))
            .await
            .is_err()
        {
            return;
        }
        loop {
            match inbound.next().await {
                Some(Ok(pb::BotMessage {
                    kind: Some(pb::bot_message::Kind::Decision(decision)),
                })) if decision.request_id == request_id => break,
                Some(Ok(_)) => continue,
                _ => return,
            }
        }
        let nanos = sent.elapsed().as_nanos() as u64;
        samples.lock().expect("samples").push(nanos);
    }
    let result = pb::MatchResult {
        match_id: "bench".into(),
        status: pb::MatchStatus::Finished as i32,
        your_place: 1,
        ..Default::default()
    };
    let _ = out.send(Ok(send(Kind::MatchResult(result)))).await;
    // Keep the stream open until the bot leaves.
    while let Some(Ok(_)) = inbound.next().await {}
}

/// The trivial stdin/stdout bot: the first legal action of every request.
fn stdio_bot() {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        let message: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        if let Some(request) = message.get("decision_request") {
            let answer = serde_json::json!({
                "request_id": request["request_id"],
                "action": request["legal_actions"][0],
            });
            if writeln!(stdout, "{answer}")
                .and_then(|_| stdout.flush())
                .is_err()
            {
                return;
            }
        }
    }
}

fn uptime() -> String {
    std::process::Command::new("uptime")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
