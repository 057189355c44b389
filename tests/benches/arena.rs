//! Arena benchmarks (the acceptance figures), each against a bare tonic echo of the
//! same generated `Arena` service:
//!
//! - (a) decision round trip over loopback, p50 and p99: one bot in two-seat Schocken
//!   practice matches against a built-in player, measured on the bot's side from sending its
//!   Decision to receiving its next DecisionRequest of the same match; the echo answers every
//!   BotMessage with one ArenaMessage, a real DecisionRequest captured from the arena.
//! - (b) decisions per second: 64 concurrent four-player Schocken matches of heuristic bots
//!   (256 streams in this process) against 256 echo streams doing ping-pong and 64 (as many
//!   requests in flight as the arena's 64 tables have). The echo's clients do the arena
//!   bots' own work on every reply (convert the observation, decide with the heuristic), so
//!   both sides run the same clients; tonic's echo with a bare client is measured too.
//!
//! In (a) and (b) the arena serves metrics, scraped every second, as it runs deployed.
//! - (c) server memory per idle Play stream: the `knobel` binary as a separate process,
//!   VmRSS before and after 1000 streams have been welcomed and seated, against this bench
//!   binary started as a separate echo server process.
//!
//! Arena and echo runs of (a) and (b) alternate in rounds so that both see the same load of
//! the shared machine. The servers run on their own two-worker tokio runtime, the clients on
//! another.
//!
//! - (metrics) the cost of metrics: decisions per second as in (b), an arena that serves
//!   metrics (scraped every second) against one that does not, alternating; then the same
//!   while each arena plays a league of built-in players (paused between its rounds); run
//!   only when asked for (`-- metrics`).
//!
//! Run with `cargo bench -p knobel-e2e --bench arena` (optionally followed by `--` and
//! `latency`, `rate`, `memory` and/or `metrics` to run only those parts). docs/benchmarks.md explains
//! the figures.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use knobel_arena::auth;
use knobel_arena::lobby::LobbyConfig;
use knobel_arena::server::{ServerConfig, serve};
use knobel_arena::store::Store;
use knobel_engine::Observation;
use knobel_engine::policy::{HeuristicPolicy, Policy};
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use knobel_proto::v1::arena_client::ArenaClient;
use pb::arena_message::Kind;
use prost::Message;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;
use tonic::transport::Channel;

mod support;
use support::{
    LEAGUE_PLAYERS, connect, decision, engine_request, nanos, open, percentile_us, release_knobel,
    runtime,
};

/// Arena and echo measurements alternate this many times in parts (a) and (b), so that both
/// see the same load of the shared machine; the samples of all rounds are pooled.
const ROUNDS: usize = 6;
/// Latency samples of the first part of a round are dropped (connection set-up).
const LATENCY_WARMUP: Duration = Duration::from_millis(200);
/// How long each latency round measures after its warm-up.
const LATENCY_RUN: Duration = Duration::from_secs(1);
/// Throughput: time for the matches of a round to start before counting.
const RATE_WARMUP: Duration = Duration::from_millis(500);
/// Throughput: the counting window of a round.
const RATE_RUN: Duration = Duration::from_secs(2);
/// Four-player matches played at once in the throughput part.
const RATE_MATCHES: usize = 64;
/// Seats of a throughput match.
const SEATS: u64 = 4;
/// Bot streams (and echo streams) in the throughput part.
const RATE_STREAMS: usize = RATE_MATCHES * SEATS as usize;
/// HTTP/2 connections the throughput streams share.
const RATE_CONNECTIONS: usize = 8;
/// DecisionRequest messages each bot keeps from the first arena round (16 × 256 = 4096 in
/// all), to pick the echo's reply.
const RATE_SAMPLES_PER_BOT: usize = 16;
/// Bots registered for the throughput part (the arena allows 8 streams per bot).
const RATE_BOTS: usize = RATE_STREAMS / 8;
/// Idle streams per memory measurement (two batches are opened).
const IDLE_STREAMS: usize = 1000;
/// HTTP/2 connections per batch of idle streams.
const IDLE_CONNECTIONS: usize = 10;
/// Seats per match in the memory part: every 10 idle streams fill one table.
const IDLE_SEATS: usize = 10;
/// Rounds of each load in the metrics part, alternating between the two arenas (more than
/// [`ROUNDS`]: the difference it looks for is small against the machine's noise).
const METRICS_ROUNDS: usize = 10;
/// How often the metrics part scrapes the arena that serves metrics.
const SCRAPE_EVERY: Duration = Duration::from_secs(1);
/// `arena` or `echo`: the throughput part measures only that side (for profiling).
const RATE_ONLY_ENV: &str = "KNOBEL_BENCH_RATE_ONLY";
/// Set in the environment of the bench binary when it runs as the echo server process.
const ECHO_CHILD_ENV: &str = "KNOBEL_BENCH_ECHO_SERVER";

fn main() {
    if std::env::var_os(ECHO_CHILD_ENV).is_some() {
        echo_child();
        return;
    }
    // `cargo bench` passes `--bench`; other words select parts.
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |part: &str| parts.is_empty() || parts.iter().any(|p| p == part);

    let load_before = uptime();
    println!("knobel arena benchmarks; load before: {load_before}");
    let servers = runtime("bench-server");
    let clients = runtime("bench-client");

    let mut reply = None;
    let mut latency = None;
    if run("latency") {
        let (arena, echo, message) = measure_latency(&servers, &clients);
        latency = Some((arena, echo, message.encoded_len()));
        reply = Some(message);
    }
    let reply = reply.unwrap_or_else(engine_request);
    let rate = run("rate").then(|| measure_rate(&servers, &clients, reply));
    let memory = run("memory").then(|| clients.block_on(measure_memory()));
    // Not part of the default run: `cargo bench -p knobel-e2e --bench arena -- metrics`.
    let metrics = parts
        .iter()
        .any(|p| p == "metrics")
        .then(|| measure_metrics_cost(&servers, &clients));
    let load_after = uptime();

    println!();
    println!("== Knobel arena vs bare tonic echo (loopback, 2 cores) ==");
    println!("load before: {load_before}");
    println!("load after:  {load_after}");
    if let Some((arena, echo, bytes)) = &latency {
        print_latency(arena, echo, *bytes);
    }
    if let Some(rates) = &rate {
        print_rate(rates);
    }
    if let Some(cost) = &metrics {
        print_metrics_cost(cost);
    }
    match &memory {
        Some(Ok((arena, echo))) => print_memory(arena, echo),
        Some(Err(error)) => println!("\n(c) memory per idle stream: not measured: {error}"),
        None => {}
    }
}

// ---------------------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------------------

/// One GET of `url` (`http://host:port/path`), its body read and dropped; false once the
/// server is gone.
async fn scrape(url: &str) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").expect("an http url");
    let (host, path) = rest.split_once('/').expect("a path");
    let Ok(mut stream) = tokio::net::TcpStream::connect(host).await else {
        return false;
    };
    let request = format!("GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).await.is_err() {
        return false;
    }
    let mut body = Vec::new();
    stream.read_to_end(&mut body).await.is_ok() && !body.is_empty()
}

/// An in-process server on 127.0.0.1, running on the server runtime.
struct Server {
    url: String,
    tokens: Vec<String>,
    /// The token of the Admin service (the arena only).
    admin_token: String,
    stop: oneshot::Sender<()>,
    done: JoinHandle<()>,
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    fn stop(self, servers: &Runtime) {
        let _ = self.stop.send(());
        servers.block_on(async {
            let _ = tokio::time::timeout(Duration::from_secs(10), self.done).await;
        });
    }
}

/// Starts the arena in-process with a fresh SQLite store and `bots` registered bots; with
/// `metrics`, it serves (and so counts) metrics on a port of its own, scraped every second
/// while it runs, as a Prometheus in a hurry would.
fn start_arena(servers: &Runtime, lobby: LobbyConfig, bots: usize, metrics: bool) -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let database_url = format!("sqlite://{}", dir.path().join("a.db").display());
    servers.block_on(async {
        let store = Store::connect(&database_url).await.expect("open the store");
        let mut tokens = Vec::new();
        for i in 0..bots {
            let token = auth::generate_token();
            store
                .add_bot(&format!("bench-{i}"), &auth::hash_token(&token))
                .await
                .expect("register a bot");
            tokens.push(token);
        }
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        let (stop, stopped) = oneshot::channel::<()>();
        let admin_token = auth::generate_token();
        let config = ServerConfig {
            lobby,
            shutdown_grace: Duration::from_secs(1),
            admin_token: Some(auth::AdminToken::new(&admin_token)),
            ..ServerConfig::default()
        };
        let metrics_listener = if metrics {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let url = format!("http://{}/metrics", listener.local_addr().expect("address"));
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(SCRAPE_EVERY).await;
                    if !scrape(&url).await {
                        return;
                    }
                }
            });
            Some(listener)
        } else {
            None
        };
        let done = tokio::spawn(async move {
            serve(config, store, listener, metrics_listener, async move {
                let _ = stopped.await;
            })
            .await
            .expect("the arena failed");
        });
        Server {
            url: format!("http://{addr}"),
            tokens,
            admin_token,
            stop,
            done,
            _dir: Some(dir),
        }
    })
}

/// How the bare echo answers a Play stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EchoStyle {
    /// tonic's own bidirectional echo (`examples/src/streaming/server.rs` in tonic): a task
    /// reads the inbound stream and sends each reply into an mpsc channel of 128 whose
    /// receiver is the response stream. tonic's example explains why a server needs the task
    /// and the channel: with the inbound stream mapped straight to the response, a broken
    /// connection is never seen by the server's code. The arena has the same shape: the
    /// match task reads the streams and sends into each stream's channel.
    Task,
    /// The response stream is the inbound stream mapped to replies, polled by hyper's
    /// stream task itself: no task and no channel of the server's own. The least a tonic
    /// server can do, and the stricter reference.
    Map,
}

/// Serves the bare echo on `listener`: every BotMessage is answered with `reply`. No lobby,
/// no referee, no store.
async fn serve_echo(
    listener: TcpListener,
    reply: pb::ArenaMessage,
    style: EchoStyle,
    shutdown: impl Future<Output = ()> + Send,
) {
    let reply = Arc::new(reply);
    let play = move |inbound: Streaming<pb::BotMessage>| -> support::PlayStream {
        let reply = reply.clone();
        match style {
            EchoStyle::Map => Box::pin(
                inbound.map(move |message| message.map(|_| pb::ArenaMessage::clone(&reply))),
            ),
            EchoStyle::Task => {
                let (tx, rx) = mpsc::channel(128);
                tokio::spawn(async move {
                    let mut inbound = inbound;
                    while let Some(message) = inbound.next().await {
                        let answer = message.map(|_| pb::ArenaMessage::clone(&reply));
                        if tx.send(answer).await.is_err() {
                            break;
                        }
                    }
                });
                Box::pin(ReceiverStream::new(rx))
            }
        }
    };
    support::serve_play(listener, play, shutdown).await;
}

fn start_echo(servers: &Runtime, reply: pb::ArenaMessage, style: EchoStyle) -> Server {
    servers.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        let (stop, stopped) = oneshot::channel::<()>();
        let done = tokio::spawn(serve_echo(listener, reply, style, async move {
            let _ = stopped.await;
        }));
        Server {
            url: format!("http://{addr}"),
            tokens: vec!["echo".to_owned()],
            admin_token: String::new(),
            stop,
            done,
            _dir: None,
        }
    })
}

/// The bench binary as a separate echo server process (for the memory part).
fn echo_child() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        println!("echo listening on {addr}");
        serve_echo(
            listener,
            engine_request(),
            EchoStyle::Map,
            std::future::pending(),
        )
        .await;
    });
}

/// The captured DecisionRequest of median encoded size.
fn median_request(requests: &[pb::ArenaMessage]) -> Option<pb::ArenaMessage> {
    let mut sized: Vec<&pb::ArenaMessage> = requests.iter().collect();
    sized.sort_by_key(|m| m.encoded_len());
    sized.get(sized.len() / 2).map(|m| (*m).clone())
}

// ---------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------

async fn connections(url: &str, n: usize) -> Vec<Channel> {
    let mut channels = Vec::with_capacity(n);
    for _ in 0..n {
        channels.push(connect(url).await);
    }
    channels
}

// ---------------------------------------------------------------------------------------
// (a) Decision round trip
// ---------------------------------------------------------------------------------------

/// What a latency client saw.
#[derive(Default)]
struct Latency {
    /// Decision sent -> next DecisionRequest received, in nanoseconds.
    round_trips: Vec<u64>,
    /// DecisionRequest received -> Decision sent (the bot's own time), in nanoseconds.
    think: Vec<u64>,
    /// DecisionRequests received (the first 10,000), to size the echo's reply.
    requests: Vec<pb::ArenaMessage>,
    /// All messages received during the measured round trips.
    messages_in_round_trips: u64,
    matches: u64,
}

impl Latency {
    fn extend(&mut self, other: Latency) {
        self.round_trips.extend(other.round_trips);
        self.think.extend(other.think);
        self.requests.extend(other.requests);
        self.messages_in_round_trips += other.messages_in_round_trips;
        self.matches += other.matches;
    }
}

/// Alternates arena and echo rounds (so both see the same machine load) and pools their
/// samples. Returns the arena's, the echo's and the echo's reply.
fn measure_latency(servers: &Runtime, clients: &Runtime) -> (Latency, Latency, pb::ArenaMessage) {
    let lobby = LobbyConfig {
        seats: 2,
        practice: true,
        practice_wait: Duration::ZERO,
        ..LobbyConfig::default()
    };
    let arena_server = start_arena(servers, lobby, 1, true);
    let mut arena = Latency::default();
    let mut echo = Latency::default();
    let mut echo_server: Option<(Server, pb::ArenaMessage)> = None;
    for _ in 0..ROUNDS {
        arena.extend(clients.block_on(arena_latency_bot(
            &arena_server.url,
            &arena_server.tokens[0],
        )));
        let (server, _) = echo_server.get_or_insert_with(|| {
            let reply = median_request(&arena.requests).unwrap_or_else(engine_request);
            (start_echo(servers, reply.clone(), EchoStyle::Map), reply)
        });
        echo.extend(clients.block_on(echo_latency_client(&server.url)));
    }
    arena_server.stop(servers);
    let (server, reply) = echo_server.expect("at least one round");
    server.stop(servers);
    (arena, echo, reply)
}

/// One bot answering every request at once with its first legal action, for one round.
/// It plays one practice match per stream (Hello.max_matches = 1) and then opens a new
/// stream; only round trips within a match are measured.
async fn arena_latency_bot(url: &str, token: &str) -> Latency {
    let channel = connect(url).await;
    let warm = Instant::now() + LATENCY_WARMUP;
    let end = warm + LATENCY_RUN;
    let mut out = Latency::default();
    while Instant::now() < end {
        let (tx, mut inbound) = open(channel.clone(), token, 1).await;
        let mut sent: Option<Instant> = None;
        let mut messages = 0u64;
        loop {
            let message = tokio::time::timeout(Duration::from_secs(30), inbound.message())
                .await
                .expect("the arena stalled")
                .expect("stream error")
                .expect("stream ended");
            let received = Instant::now();
            messages += 1;
            match &message.kind {
                Some(Kind::DecisionRequest(request)) => {
                    if let Some(sent) = sent.take()
                        && sent >= warm
                        && received < end
                    {
                        out.round_trips.push(nanos(received - sent));
                        out.messages_in_round_trips += messages;
                    }
                    let action = request.legal_actions.first().cloned();
                    tx.send(decision(request.request_id, action))
                        .await
                        .expect("send a decision");
                    let answered = Instant::now();
                    out.think.push(nanos(answered - received));
                    sent = Some(answered);
                    messages = 0;
                    if out.requests.len() < 10_000 {
                        out.requests.push(message.clone());
                    }
                }
                Some(Kind::MatchResult(_)) => {
                    out.matches += 1;
                    break;
                }
                _ => {}
            }
        }
    }
    out
}

/// One echo stream doing request/response ping-pong for one round.
async fn echo_latency_client(url: &str) -> Latency {
    let (tx, mut inbound) = open(connect(url).await, "echo", 0).await;
    inbound.message().await.expect("echo").expect("a reply");
    let warm = Instant::now() + LATENCY_WARMUP;
    let end = warm + LATENCY_RUN;
    let stop = Some(pb::Action::from(knobel_engine::Action::STOP));
    let mut out = Latency::default();
    loop {
        tx.send(decision(1, stop.clone())).await.expect("send");
        let sent = Instant::now();
        inbound.message().await.expect("echo").expect("a reply");
        let received = Instant::now();
        if received >= end {
            return out;
        }
        if sent >= warm {
            out.round_trips.push(nanos(received - sent));
            out.messages_in_round_trips += 1;
        }
    }
}

/// What this process's threads have used so far, summed per group of thread names
/// ([`THREAD_GROUPS`]): servers (runtime threads named `bench-server`), store (sqlx's SQLite
/// worker threads, `sqlx-sqlite…`), clients (`bench-client`) and every other thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadUse {
    /// Time on a CPU (`/proc/self/task/*/schedstat`).
    pub cpu: Duration,
    /// Context switches, voluntary (the thread waited) and not (`/proc/self/task/*/status`).
    pub switches: u64,
}

/// The names of the groups of [`thread_use`], in its order.
pub const THREAD_GROUPS: [&str; 4] = ["servers", "store", "bots", "other"];

/// [`ThreadUse`] of each group of [`THREAD_GROUPS`]; zeros where `/proc` cannot be read.
pub fn thread_use() -> [ThreadUse; 4] {
    let mut groups = [ThreadUse::default(); 4];
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return groups;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let (Ok(comm), Ok(schedstat), Ok(status)) = (
            std::fs::read_to_string(path.join("comm")),
            std::fs::read_to_string(path.join("schedstat")),
            std::fs::read_to_string(path.join("status")),
        ) else {
            continue;
        };
        let ns = schedstat
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        let switches: u64 = status
            .lines()
            .filter(|line| line.contains("ctxt_switches:"))
            .filter_map(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum();
        let comm = comm.trim();
        let group = if comm.starts_with("bench-server") {
            0
        } else if comm.starts_with("sqlx-sqlite") {
            1
        } else if comm.starts_with("bench-client") {
            2
        } else {
            3
        };
        groups[group].cpu += Duration::from_nanos(ns);
        groups[group].switches += switches;
    }
    groups
}

// ---------------------------------------------------------------------------------------
// (b) Decisions per second
// ---------------------------------------------------------------------------------------

/// What the throughput part counted, over all rounds.
#[derive(Default)]
struct Rate {
    /// Decisions (or echo round trips) counted in each round's window, and its length.
    rounds: Vec<(u64, Duration)>,
    /// MatchResults the bots received (arena only): four per finished match.
    matches: u64,
    /// ErrorEvents received (should be 0: no timeouts, no refused decisions).
    errors: u64,
    /// Messages the bots received and decisions they sent over whole rounds (arena only).
    messages: u64,
    decisions: u64,
    /// Messages the bots received with events only (no request, start or result).
    events_only: u64,
    /// What each group of threads ([`THREAD_GROUPS`]) used over the counting windows.
    threads: [ThreadUse; 4],
}

impl Rate {
    /// CPU microseconds and context switches per counted decision (or round trip) of each
    /// group of threads.
    fn per_decision(&self) -> [(f64, f64); 4] {
        let count = self.rounds.iter().map(|(c, _)| c).sum::<u64>().max(1) as f64;
        self.threads
            .map(|t| (t.cpu.as_secs_f64() * 1e6 / count, t.switches as f64 / count))
    }

    fn per_second(&self) -> f64 {
        let count: u64 = self.rounds.iter().map(|(c, _)| c).sum();
        let time: Duration = self.rounds.iter().map(|(_, t)| *t).sum();
        count as f64 / time.as_secs_f64()
    }

    fn round_per_second(&self, round: usize) -> f64 {
        let (count, time) = self.rounds[round];
        count as f64 / time.as_secs_f64()
    }
}

#[derive(Default)]
struct Counters {
    decisions: AtomicU64,
    messages: AtomicU64,
    /// Messages with events only.
    events_only: AtomicU64,
    matches: AtomicU64,
    errors: AtomicU64,
}

/// What an echo client does with each reply before it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EchoClient {
    /// The arena's bots' own work: converts the reply's observation to the engine's
    /// (`Observation::try_from`) and decides with `HeuristicPolicy`, then sends that action.
    /// With it, both sides of (b) run the very same clients and the ratio compares servers.
    Heuristic,
    /// Answers at once with a fixed action (the echo client before 2026-12-03): the arena's
    /// bots think, this one does not, and the bots' thinking is charged to the arena.
    Bare,
}

/// One echo configuration of the throughput part and what it measured.
struct EchoRate {
    style: EchoStyle,
    client: EchoClient,
    /// Ping-pong streams: [`RATE_STREAMS`], as many as the arena has bots, or
    /// [`RATE_MATCHES`], as many requests in flight as the arena has (one seat acts per table
    /// at a time).
    streams: usize,
    rate: Rate,
}

/// What the throughput part measured.
struct Rates {
    /// Encoded size of the echo's reply: the median DecisionRequest message of the arena
    /// in this part.
    reply_bytes: usize,
    /// The arena with `RATE_STREAMS` bot streams at `RATE_MATCHES` tables.
    arena: Rate,
    /// The echoes, tonic's own ([`EchoStyle::Task`]: the target's reference) first.
    echoes: Vec<EchoRate>,
}

impl Rates {
    /// The best echo rate with `client`s, of `style` (any if `None`), at `streams` streams
    /// (either count if `None`).
    fn best_echo(
        &self,
        style: Option<EchoStyle>,
        client: EchoClient,
        streams: Option<usize>,
    ) -> Option<&EchoRate> {
        self.echoes
            .iter()
            .filter(|e| {
                style.is_none_or(|s| e.style == s)
                    && e.client == client
                    && streams.is_none_or(|n| e.streams == n)
            })
            .max_by(|a, b| a.rate.per_second().total_cmp(&b.rate.per_second()))
    }
}

/// Alternates arena and echo rounds: the arena, then each echo style at both stream
/// counts, in every round.
///
/// The echo answers with the median-sized DecisionRequest message the bots received in the
/// first arena round (`fallback` if there was none): the same message sizes as the arena's.
fn measure_rate(servers: &Runtime, clients: &Runtime, fallback: pb::ArenaMessage) -> Rates {
    let lobby = LobbyConfig {
        seats: SEATS as usize,
        practice: false,
        ..LobbyConfig::default()
    };
    let arena_server = start_arena(servers, lobby, RATE_BOTS, true);
    let styles = [EchoStyle::Task, EchoStyle::Map];
    let mut echo_servers: Vec<Server> = Vec::new();
    let mut reply_bytes = 0;
    let mut arena = Rate::default();
    // Both styles at both stream counts with the arena's own clients, and tonic's echo with
    // the bare client of earlier runs (for comparison).
    let mut echoes: Vec<EchoRate> = styles
        .iter()
        .flat_map(|&style| {
            [RATE_STREAMS, RATE_MATCHES].map(|streams| EchoRate {
                style,
                client: EchoClient::Heuristic,
                streams,
                rate: Rate::default(),
            })
        })
        .chain([RATE_STREAMS, RATE_MATCHES].map(|streams| EchoRate {
            style: EchoStyle::Task,
            client: EchoClient::Bare,
            streams,
            rate: Rate::default(),
        }))
        .collect();
    // For profiling one side: `KNOBEL_BENCH_RATE_ONLY=arena` (or `echo`) skips the others.
    let only = std::env::var(RATE_ONLY_ENV).ok();
    let side = |name: &str| only.as_deref().is_none_or(|only| only == name);
    for _ in 0..ROUNDS {
        let mut samples = Vec::new();
        if side("arena") || echo_servers.is_empty() {
            let sample = echo_servers.is_empty();
            samples = clients.block_on(arena_rate_round(&arena_server, sample, &mut arena));
        }
        if echo_servers.is_empty() {
            let reply = median_request(&samples).unwrap_or_else(|| fallback.clone());
            reply_bytes = reply.encoded_len();
            echo_servers = styles
                .iter()
                .map(|&style| start_echo(servers, reply.clone(), style))
                .collect();
        }
        if side("echo") {
            for echo in &mut echoes {
                let server = &echo_servers[styles
                    .iter()
                    .position(|&s| s == echo.style)
                    .expect("a style")];
                clients.block_on(echo_rate_round(
                    server,
                    echo.streams,
                    echo.client,
                    &mut echo.rate,
                ));
            }
        }
    }
    arena_server.stop(servers);
    for server in echo_servers {
        server.stop(servers);
    }
    Rates {
        reply_bytes,
        arena,
        echoes,
    }
}

/// The cost of metrics, measured twice against two arenas, one that serves metrics
/// (scraped every [`SCRAPE_EVERY`]) and one that does not (and so counts nothing), in
/// alternating rounds: under the throughput part's pick-up load, then while each arena
/// plays a league (so that the league series are refreshed and served too).
fn measure_metrics_cost(servers: &Runtime, clients: &Runtime) -> MetricsCost {
    let lobby = || LobbyConfig {
        seats: SEATS as usize,
        practice: false,
        ..LobbyConfig::default()
    };
    let with = start_arena(servers, lobby(), RATE_BOTS, true);
    let without = start_arena(servers, lobby(), RATE_BOTS, false);
    let (mut on, mut off) = (Rate::default(), Rate::default());
    alternate(
        || clients.block_on(arena_rate_round(&with, false, &mut on)),
        || clients.block_on(arena_rate_round(&without, false, &mut off)),
    );
    with.stop(servers);
    without.stop(servers);
    // Arenas of their own for the league: pick-up tables of more seats than the league has
    // players, so that its players, idle while it is paused, never start pick-up matches
    // among themselves (which would run into the other arena's round).
    let league_lobby = || LobbyConfig {
        seats: LEAGUE_PLAYERS.len() + 1,
        practice: false,
        ..LobbyConfig::default()
    };
    let with = start_arena(servers, league_lobby(), LEAGUE_PLAYERS.len(), true);
    let without = start_arena(servers, league_lobby(), LEAGUE_PLAYERS.len(), false);
    let mut league_with = clients.block_on(LeagueLoad::start(&with));
    let mut league_without = clients.block_on(LeagueLoad::start(&without));
    let (mut league_on, mut league_off) = (Rate::default(), Rate::default());
    alternate(
        || clients.block_on(league_with.round(&mut league_on)),
        || clients.block_on(league_without.round(&mut league_off)),
    );
    let league_matches = [&league_with, &league_without].map(|l| clients.block_on(l.finished()));
    for league in [league_with, league_without] {
        clients.block_on(league.stop());
    }
    with.stop(servers);
    without.stop(servers);
    MetricsCost {
        pick_up: (on, off),
        league: (league_on, league_off),
        league_matches,
    }
}

/// [`METRICS_ROUNDS`] rounds of `with` and of `without`, which of the two goes first
/// swapped every round.
fn alternate<T>(mut with: impl FnMut() -> T, mut without: impl FnMut() -> T) {
    for round in 0..METRICS_ROUNDS {
        if round % 2 == 0 {
            with();
            without();
        } else {
            without();
            with();
        }
    }
}

/// What [`measure_metrics_cost`] measured: (with metrics, without) under each load.
struct MetricsCost {
    pick_up: (Rate, Rate),
    league: (Rate, Rate),
    /// League matches finished in each arena (with metrics, without) by the end.
    league_matches: [u32; 2],
}

/// The league of the metrics part: Schocken at tables of 4 among [`LEAGUE_PLAYERS`], each
/// with [`LEAGUE_STREAMS`] Play streams, 100 repetitions (far more than a run plays).
fn league_file() -> String {
    let bots: Vec<String> = (0..LEAGUE_PLAYERS.len())
        .map(|i| format!("\"bench-{i}\""))
        .collect();
    format!(
        "name = \"{LEAGUE}\"\nseed = 5\nbots = [{}]\nrepetitions = 100\nconcurrency = 6\n\n\
         [games.schocken]\ntable_size = 4\n",
        bots.join(", ")
    )
}

/// The name of the metrics part's league.
const LEAGUE: &str = "bench";

/// A request naming [`LEAGUE`].
fn league_request() -> pb::LeagueRequest {
    pb::LeagueRequest {
        name: LEAGUE.into(),
    }
}

/// Play streams per league player.
const LEAGUE_STREAMS: usize = 4;
/// League matches finished before the league rounds are measured.
const LEAGUE_WARM_UP_MATCHES: u32 = 100;

type Admin =
    AdminClient<tonic::service::interceptor::InterceptedService<Channel, knobel_bots::BearerAuth>>;

/// A league played over gRPC by built-in players ([`knobel_bots::Bot`]), paused between
/// the rounds that measure it.
struct LeagueLoad {
    admin: Admin,
    arena: ArenaClient<Channel>,
    /// The players' decisions.
    decisions: Arc<AtomicU64>,
    players: tokio::task::JoinSet<Result<knobel_bots::RunReport, knobel_bots::BotError>>,
}

impl LeagueLoad {
    /// Connects the players to `server`, creates and starts the league, waits for
    /// [`LEAGUE_WARM_UP_MATCHES`] of its matches, and pauses it.
    async fn start(server: &Server) -> LeagueLoad {
        use knobel_bots::{Bot, BotConfig, Game, Token};
        let channel = connect(&server.url).await;
        let auth = knobel_bots::BearerAuth::new(&Token::new(server.admin_token.clone()))
            .expect("admin token");
        let admin = AdminClient::with_interceptor(channel.clone(), auth);
        let arena = ArenaClient::new(channel);
        let decisions = Arc::new(AtomicU64::new(0));
        let mut players = tokio::task::JoinSet::new();
        for (i, name) in LEAGUE_PLAYERS.iter().enumerate() {
            for stream in 0..LEAGUE_STREAMS {
                let config = BotConfig::new(
                    server.url.clone(),
                    Token::new(server.tokens[i].clone()),
                    format!("bench-{i}"),
                    vec![Game::Schocken],
                );
                let policy = support::Counting {
                    policy: knobel_bots::strategy(name, (i * 16 + stream) as u64)
                        .expect("a built-in player"),
                    decisions: decisions.clone(),
                };
                players.spawn(Bot::new(config, policy).run());
            }
        }
        let mut load = LeagueLoad {
            admin,
            arena,
            decisions,
            players,
        };
        load.admin
            .create_league(pb::CreateLeagueRequest {
                config_toml: league_file(),
            })
            .await
            .expect("create the league");
        load.resume().await;
        let deadline = Instant::now() + Duration::from_secs(300);
        while load.finished().await < LEAGUE_WARM_UP_MATCHES {
            assert!(Instant::now() < deadline, "the league does not progress");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        load.pause().await;
        load
    }

    /// The league as the arena reports it (the read-only ListLeagues).
    async fn info(&self) -> pb::LeagueInfo {
        let mut arena = self.arena.clone();
        let leagues = arena
            .list_leagues(pb::ListLeaguesRequest {})
            .await
            .expect("list the leagues")
            .into_inner()
            .leagues;
        leagues
            .into_iter()
            .find(|l| l.name == LEAGUE)
            .expect("the league")
    }

    async fn finished(&self) -> u32 {
        self.info().await.finished_matches
    }

    async fn resume(&mut self) {
        self.admin
            .start_league(league_request())
            .await
            .expect("start the league");
    }

    /// Pauses the league and waits until its last running match has ended, so that the
    /// other arena's round runs alone.
    async fn pause(&mut self) {
        self.admin
            .pause_league(league_request())
            .await
            .expect("pause the league");
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.info().await.playing > 0 {
            assert!(Instant::now() < deadline, "league matches do not end");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// One round: the league resumed, its decisions counted over a window, paused again.
    async fn round(&mut self, rate: &mut Rate) {
        self.resume().await;
        count_window(&self.decisions, rate).await;
        self.pause().await;
    }

    async fn stop(mut self) {
        self.admin
            .cancel_league(league_request())
            .await
            .expect("cancel the league");
        self.players.abort_all();
        while self.players.join_next().await.is_some() {}
    }
}

/// One round of 256 heuristic bots: counts decisions over the window, then lets every bot
/// finish its match and leave. With `sample`, returns the first DecisionRequest messages
/// each bot received (to size the echo's reply like the arena's messages in this part: four
/// seats and their events).
async fn arena_rate_round(server: &Server, sample: bool, rate: &mut Rate) -> Vec<pb::ArenaMessage> {
    let channels = connections(&server.url, RATE_CONNECTIONS).await;
    let counters = Arc::new(Counters::default());
    let (stop, stopped) = watch::channel(false);
    let bots: Vec<_> = (0..RATE_STREAMS)
        .map(|i| {
            tokio::spawn(heuristic_bot(
                channels[i % channels.len()].clone(),
                server.tokens[i % server.tokens.len()].clone(),
                counters.clone(),
                stopped.clone(),
                if sample { RATE_SAMPLES_PER_BOT } else { 0 },
            ))
        })
        .collect();
    count_window(&counters.decisions, rate).await;
    let _ = stop.send(true);
    let mut samples = Vec::new();
    for bot in bots {
        if let Ok(Ok(kept)) = tokio::time::timeout(Duration::from_secs(10), bot).await {
            samples.extend(kept);
        }
    }
    rate.matches += counters.matches.load(Ordering::Relaxed);
    rate.errors += counters.errors.load(Ordering::Relaxed);
    rate.messages += counters.messages.load(Ordering::Relaxed);
    rate.events_only += counters.events_only.load(Ordering::Relaxed);
    rate.decisions += counters.decisions.load(Ordering::Relaxed);
    samples
}

/// A Rust heuristic bot: converts every observation to the engine's and decides with
/// HeuristicPolicy. Once `stop` is set it leaves after its current match. Returns the first
/// `samples` messages with a DecisionRequest it received.
async fn heuristic_bot(
    channel: Channel,
    token: String,
    counters: Arc<Counters>,
    mut stop: watch::Receiver<bool>,
    samples: usize,
) -> Vec<pb::ArenaMessage> {
    let mut kept = Vec::with_capacity(samples);
    let (tx, mut inbound) = open(channel, &token, 0).await;
    let mut playing = false;
    loop {
        let message = if playing {
            inbound.message().await
        } else {
            // Between matches: leave once `stop` is set.
            tokio::select! {
                _ = stop.wait_for(|&s| s) => return kept,
                message = inbound.message() => message,
            }
        };
        let Ok(Some(message)) = message else {
            return kept;
        };
        counters.messages.fetch_add(1, Ordering::Relaxed);
        if message.kind.is_none() {
            counters.events_only.fetch_add(1, Ordering::Relaxed);
        }
        if kept.len() < samples && matches!(message.kind, Some(Kind::DecisionRequest(_))) {
            kept.push(message.clone());
        }
        match message.kind {
            Some(Kind::DecisionRequest(request)) => {
                let action = heuristic_action(&request);
                if tx
                    .send(decision(request.request_id, Some(action)))
                    .await
                    .is_err()
                {
                    return kept;
                }
                counters.decisions.fetch_add(1, Ordering::Relaxed);
            }
            Some(Kind::MatchStart(_)) => playing = true,
            Some(Kind::MatchResult(_)) => {
                playing = false;
                counters.matches.fetch_add(1, Ordering::Relaxed);
            }
            Some(Kind::Error(_)) => {
                counters.errors.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }
}

/// What a heuristic bot answers to `request`: its observation converted to the engine's,
/// and `HeuristicPolicy`'s action (the per-decision work of every client in part (b)).
fn heuristic_action(request: &pb::DecisionRequest) -> pb::Action {
    let observation = Observation::try_from(request.observation.as_ref().expect("an observation"))
        .expect("a valid observation");
    pb::Action::from(HeuristicPolicy.decide(&observation, &[]))
}

/// Counts `counter`'s increments over the window after the warm-up, and adds the CPU time
/// each group of threads ran in the window to `rate.cpu`.
async fn count_window(counter: &AtomicU64, rate: &mut Rate) {
    tokio::time::sleep(RATE_WARMUP).await;
    let (c0, t0, cpu0) = (
        counter.load(Ordering::Relaxed),
        Instant::now(),
        thread_use(),
    );
    tokio::time::sleep(RATE_RUN).await;
    let (c1, t1, cpu1) = (
        counter.load(Ordering::Relaxed),
        Instant::now(),
        thread_use(),
    );
    for (total, (before, after)) in rate.threads.iter_mut().zip(cpu0.iter().zip(cpu1)) {
        total.cpu += after.cpu.saturating_sub(before.cpu);
        total.switches += after.switches.saturating_sub(before.switches);
    }
    rate.rounds.push((c1 - c0, t1 - t0));
}

/// One round of `streams` echo streams doing ping-pong, each a `client`.
async fn echo_rate_round(server: &Server, streams: usize, client: EchoClient, rate: &mut Rate) {
    let channels = connections(&server.url, RATE_CONNECTIONS).await;
    let counter = Arc::new(AtomicU64::new(0));
    let (stop, stopped) = watch::channel(false);
    let clients: Vec<_> = (0..streams)
        .map(|i| {
            tokio::spawn(echo_ping_pong(
                channels[i % channels.len()].clone(),
                client,
                counter.clone(),
                stopped.clone(),
            ))
        })
        .collect();
    count_window(&counter, rate).await;
    let _ = stop.send(true);
    for client in clients {
        let _ = client.await;
    }
}

/// An echo client: answers every reply, as `client` says, until `stop` is set.
async fn echo_ping_pong(
    channel: Channel,
    client: EchoClient,
    counter: Arc<AtomicU64>,
    mut stop: watch::Receiver<bool>,
) {
    let (tx, mut inbound) = open(channel, "echo", 0).await;
    let fixed = Some(pb::Action::from(knobel_engine::Action::STOP));
    let play = async {
        while let Ok(Some(message)) = inbound.message().await {
            let action = match (client, message.kind) {
                // The same work as `heuristic_bot` per DecisionRequest.
                (EchoClient::Heuristic, Some(Kind::DecisionRequest(request))) => {
                    Some(heuristic_action(&request))
                }
                _ => fixed.clone(),
            };
            if tx.send(decision(1, action)).await.is_err() {
                return;
            }
            counter.fetch_add(1, Ordering::Relaxed);
        }
    };
    tokio::select! {
        _ = stop.wait_for(|&s| s) => {}
        _ = play => {}
    }
}

// ---------------------------------------------------------------------------------------
// (c) Memory per idle stream
// ---------------------------------------------------------------------------------------

/// VmRSS of a server process, in KiB: fresh, after one batch of idle streams, after two.
struct Memory {
    pid: u32,
    fresh: u64,
    first: u64,
    second: u64,
}

impl Memory {
    /// (after the first batch - fresh) / streams: one-time costs included.
    fn per_stream(&self) -> f64 {
        (self.first as f64 - self.fresh as f64) / IDLE_STREAMS as f64
    }

    /// (after the second batch - after the first) / streams: one-time costs excluded.
    fn marginal(&self) -> f64 {
        (self.second as f64 - self.first as f64) / IDLE_STREAMS as f64
    }
}

fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line")
}

/// Starts `command` (stdout piped) and returns it with the address it prints after
/// `prefix`.
async fn spawn_server(
    mut command: tokio::process::Command,
    prefix: &str,
) -> Result<(tokio::process::Child, String), String> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .map_err(|_| "the server did not start within 30 s".to_owned())?
            .map_err(|e| format!("cannot read the server's output: {e}"))?
            .ok_or("the server exited before listening")?;
        if let Some(addr) = line.strip_prefix(prefix) {
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return Ok((child, format!("http://{addr}")));
        }
    }
}

async fn measure_memory() -> Result<(Memory, Memory), String> {
    let knobel = tokio::task::spawn_blocking(release_knobel)
        .await
        .expect("build task")?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let database_url = format!("sqlite://{}", dir.path().join("b.db").display());
    // One bot per seat: a match never seats one bot twice, so a table needs 10 bots.
    let mut tokens = Vec::new();
    for i in 0..IDLE_SEATS {
        let output = tokio::process::Command::new(&knobel)
            .args([
                "bot",
                "add",
                &format!("idle-{i}"),
                "--database-url",
                &database_url,
                // Before the arena runs: a new store.
                "--create",
            ])
            .output()
            .await
            .map_err(|e| format!("cannot run knobel bot add: {e}"))?;
        let token = String::from_utf8_lossy(&output.stdout)
            .lines()
            .nth(1)
            .ok_or("knobel bot add printed no token")?
            .trim()
            .to_owned();
        tokens.push(token);
    }

    // Without practice, with 10 seats a match starts for every 10 waiting bots; the bots
    // never answer and the 1-hour deadline keeps every table stalled at its first decision,
    // so each stream stays connected and idle.
    let mut arena = tokio::process::Command::new(&knobel);
    arena
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(["--metrics-listen", "127.0.0.1:0", "--web-listen", "off"])
        .args(["--database-url", &database_url])
        .args(["--seats", &IDLE_SEATS.to_string()])
        .args(["--max-streams-per-bot", "10000"])
        .args(["--decision-ms", "3600000", "--time-bank-ms", "0"])
        .env("RUST_LOG", "warn");
    let (child, url) = spawn_server(arena, "knobel arena listening on ").await?;
    let arena = idle_streams(child, &url, &tokens, true).await;

    let mut echo = tokio::process::Command::new(
        std::env::current_exe().map_err(|e| format!("no bench binary path: {e}"))?,
    );
    echo.env(ECHO_CHILD_ENV, "1");
    let (child, url) = spawn_server(echo, "echo listening on ").await?;
    let echo = idle_streams(child, &url, &["echo".to_owned()], false).await;
    Ok((arena, echo))
}

/// Opens two batches of idle streams against a server process and reads its VmRSS.
async fn idle_streams(
    mut child: tokio::process::Child,
    url: &str,
    tokens: &[String],
    seated: bool,
) -> Memory {
    let pid = child.id().expect("a running server");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let fresh = vm_rss_kib(pid);
    let (stop, stopped) = watch::channel(false);
    let mut streams = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..2 {
        let channels = connections(url, IDLE_CONNECTIONS).await;
        let ready = Arc::new(AtomicUsize::new(0));
        for i in 0..IDLE_STREAMS {
            streams.push(tokio::spawn(idle_stream(
                channels[i % channels.len()].clone(),
                tokens[i % tokens.len()].clone(),
                seated,
                ready.clone(),
                stopped.clone(),
            )));
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while ready.load(Ordering::Relaxed) < IDLE_STREAMS {
            assert!(
                Instant::now() < deadline,
                "only {} of {IDLE_STREAMS} idle streams were ready within 60 s",
                ready.load(Ordering::Relaxed)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        rss.push(vm_rss_kib(pid));
    }
    let _ = stop.send(true);
    let _ = child.kill().await;
    for stream in streams {
        let _ = stream.await;
    }
    Memory {
        pid,
        fresh,
        first: rss[0],
        second: rss[1],
    }
}

/// One idle stream: sends its Hello, counts itself ready once welcomed (and, for the arena,
/// seated), then only reads.
async fn idle_stream(
    channel: Channel,
    token: String,
    seated: bool,
    ready: Arc<AtomicUsize>,
    mut stop: watch::Receiver<bool>,
) {
    let (_tx, mut inbound) = open(channel, &token, 0).await;
    let read = async {
        let mut counted = false;
        while let Ok(Some(message)) = inbound.message().await {
            let now_ready = !seated || matches!(message.kind, Some(Kind::MatchStart(_)));
            if now_ready && !counted {
                counted = true;
                ready.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    tokio::select! {
        _ = stop.wait_for(|&s| s) => {}
        _ = read => {}
    }
}

// ---------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------

fn uptime() -> String {
    std::process::Command::new("uptime")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|s| !s.is_empty())
        .or_else(|| std::fs::read_to_string("/proc/loadavg").ok())
        .unwrap_or_default()
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

fn print_latency(arena: &Latency, echo: &Latency, bytes: usize) {
    let (a50, a99) = (
        percentile_us(&arena.round_trips, 0.50),
        percentile_us(&arena.round_trips, 0.99),
    );
    let (e50, e99) = (
        percentile_us(&echo.round_trips, 0.50),
        percentile_us(&echo.round_trips, 0.99),
    );
    let (r50, r99) = (a50 / e50, a99 / e99);
    println!();
    println!("(a) decision round trip, bot side: Decision sent -> next DecisionRequest received");
    println!(
        "    arena: 1 bot + 1 built-in heuristic, 2 seats, Schocken practice; echo reply {bytes} B;"
    );
    println!(
        "    {ROUNDS} alternating rounds of {:.1} s each",
        LATENCY_RUN.as_secs_f64()
    );
    println!(
        "    {:<10} {:>10} {:>10} {:>10} {:>12}",
        "", "p50 µs", "p99 µs", "samples", "msgs/trip"
    );
    for (name, l, p50, p99) in [("arena", arena, a50, a99), ("echo", echo, e50, e99)] {
        println!(
            "    {:<10} {:>10.1} {:>10.1} {:>10} {:>12.2}",
            name,
            p50,
            p99,
            l.round_trips.len(),
            l.messages_in_round_trips as f64 / l.round_trips.len().max(1) as f64
        );
    }
    println!(
        "    {:<10} {:>9.2}x {:>9.2}x   targets: p50 <= 1.5x {}, p99 <= 2x {}",
        "ratio",
        r50,
        r99,
        verdict(r50 <= 1.5),
        verdict(r99 <= 2.0)
    );
    println!(
        "    (bot's own time per decision p50 {:.1} µs; {} arena matches played)",
        percentile_us(&arena.think, 0.5),
        arena.matches
    );
}

fn echo_name(echo: &EchoRate) -> String {
    let style = match echo.style {
        EchoStyle::Task => "tonic's echo (task + channel)",
        EchoStyle::Map => "mapped echo (no task)",
    };
    let client = match echo.client {
        EchoClient::Heuristic => "",
        EchoClient::Bare => ", bare client",
    };
    format!("{style}{client}: {} streams", echo.streams)
}

fn print_rate(rates: &Rates) {
    let Rates {
        reply_bytes,
        arena,
        echoes,
    } = rates;
    println!();
    println!(
        "(b) throughput over {RATE_CONNECTIONS} connections, {ROUNDS} alternating rounds of {:.1} s; echo reply {reply_bytes} B (the arena's median DecisionRequest here)",
        RATE_RUN.as_secs_f64()
    );
    println!("    {:<56} {:>10} {:>24}", "", "per second", "rounds");
    let arena_name =
        format!("arena: {RATE_MATCHES} 4-player matches, {RATE_STREAMS} heuristic bots");
    let rows: Vec<(String, &Rate)> = std::iter::once((arena_name, arena))
        .chain(echoes.iter().map(|e| (echo_name(e), &e.rate)))
        .collect();
    for (name, rate) in &rows {
        let rounds: Vec<String> = (0..rate.rounds.len())
            .map(|r| format!("{:.0}", rate.round_per_second(r)))
            .collect();
        println!(
            "    {:<56} {:>10.0} {:>24}",
            name,
            rate.per_second(),
            rounds.join(" ")
        );
    }
    println!("    per decision (echo: per round trip), CPU µs / context switches, by thread group");
    println!(
        "      {:<44} {:>14} {:>14} {:>14} {:>14} {:>14}",
        "", THREAD_GROUPS[0], THREAD_GROUPS[1], THREAD_GROUPS[2], THREAD_GROUPS[3], "total"
    );
    for (name, rate) in &rows {
        let groups = rate.per_decision();
        let total = groups
            .iter()
            .fold((0.0, 0.0), |(c, s), (gc, gs)| (c + gc, s + gs));
        let cells: Vec<String> = groups
            .iter()
            .chain(std::iter::once(&total))
            .map(|(cpu, switches)| format!("{cpu:6.1} / {switches:5.2}"))
            .collect();
        let short: String = name.chars().take(44).collect();
        println!(
            "      {short:<44} {:>14} {:>14} {:>14} {:>14} {:>14}",
            cells[0], cells[1], cells[2], cells[3], cells[4]
        );
    }
    let ratio = |echo: &EchoRate| arena.per_second() / echo.rate.per_second();
    if let Some(same) = rates.best_echo(None, EchoClient::Heuristic, Some(RATE_MATCHES)) {
        println!(
            "    ratio arena / best echo at the same concurrency ({RATE_MATCHES} requests in flight), same clients ({}) {:.2}   target >= 0.5: {}",
            echo_name(same),
            ratio(same),
            verdict(ratio(same) >= 0.5)
        );
    }
    if let Some(best) = rates.best_echo(None, EchoClient::Heuristic, None) {
        println!(
            "    ratio arena / best echo at either stream count, same clients ({}) {:.2}   (stricter)",
            echo_name(best),
            ratio(best)
        );
    }
    if let Some(bare) = rates.best_echo(Some(EchoStyle::Task), EchoClient::Bare, None) {
        println!(
            "    ratio arena / best of tonic's echo with a bare client ({}) {:.2}   (the reference of 2026-12-02: the bots' thinking charged to the arena)",
            echo_name(bare),
            ratio(bare)
        );
    }
    println!(
        "    ({} arena matches finished, {:.1} decisions per match, {:.2} messages received per decision sent ({:.2} with events only), {} error events)",
        arena.matches / SEATS,
        arena.decisions as f64 / (arena.matches / SEATS).max(1) as f64,
        arena.messages as f64 / arena.decisions.max(1) as f64,
        arena.events_only as f64 / arena.decisions.max(1) as f64,
        arena.errors
    );
}

fn print_metrics_cost(cost: &MetricsCost) {
    println!();
    println!(
        "(metrics) decisions per second with metrics served (scraped every {} s) and without, {METRICS_ROUNDS} alternating rounds of {:.1} s",
        SCRAPE_EVERY.as_secs(),
        RATE_RUN.as_secs_f64()
    );
    let loads = [
        ("pick-up matches (part (b)'s load)", &cost.pick_up),
        (
            "a league of six built-in players (4 streams each, Schocken, tables of 4)",
            &cost.league,
        ),
    ];
    for (load, (on, off)) in loads {
        println!("  {load}:");
        let ratio = on.per_second() / off.per_second();
        for (name, rate) in [("metrics on", on), ("metrics off", off)] {
            let rounds: Vec<String> = (0..rate.rounds.len())
                .map(|r| format!("{:.0}", rate.round_per_second(r)))
                .collect();
            println!(
                "    {name:<12} {:>10.0} per second   rounds {}",
                rate.per_second(),
                rounds.join(" ")
            );
        }
        println!(
            "    on/off {ratio:.3}: metrics cost {:.1} %   target <= 5 %: {}",
            (1.0 - ratio) * 100.0,
            verdict(ratio >= 0.95)
        );
    }
    println!(
        "  league matches finished by the end: {} with metrics, {} without",
        cost.league_matches[0], cost.league_matches[1]
    );
}

fn print_memory(arena: &Memory, echo: &Memory) {
    println!();
    println!(
        "(c) server VmRSS per idle Play stream, separate process, {IDLE_STREAMS} streams per batch over {IDLE_CONNECTIONS} connections"
    );
    println!(
        "    {:<8} {:>10} {:>12} {:>12} {:>16} {:>16}",
        "", "fresh KiB", "+1000 KiB", "+2000 KiB", "per stream KiB", "marginal KiB"
    );
    for (name, m) in [("arena", arena), ("echo", echo)] {
        println!(
            "    {:<8} {:>10} {:>12} {:>12} {:>16.1} {:>16.1}",
            name,
            m.fresh,
            m.first,
            m.second,
            m.per_stream(),
            m.marginal()
        );
    }
    println!(
        "    arena per stream {:.1} KiB, target <= 64 KiB: {}   (arena streams welcomed and seated at stalled {IDLE_SEATS}-seat tables; pids {} / {})",
        arena.per_stream(),
        verdict(arena.per_stream() <= 64.0),
        arena.pid,
        echo.pid
    );
}
