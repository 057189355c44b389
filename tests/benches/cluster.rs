//! Cluster mode's benchmarks (docs/benchmarks.md, "Cluster mode"), with the release `knobel`
//! as separate processes on a fresh PostgreSQL database of the shared server and a
//! `nats-server` of the bench's own:
//!
//! - (a) **decision round trip of a relayed seat against a local one**, in the same run,
//!   measured on the bot's side (Decision sent -> next DecisionRequest received, within a
//!   match). Two arenas A and B in cluster mode play two leagues of two-seat Schocken at
//!   once: league `local`, bots L1 and L2 both on A (both seats local); league `relayed`,
//!   bot R1 on A and R2 on B. A `relayed` match is refereed by the arena with the smaller
//!   instance id (its preferred referee: one seat each), so the bot on the other arena
//!   plays through the seat link, against a local opponent, like L1. Every bot answers at
//!   once with its first legal action.
//! - (b) **arena CPU seconds per league match**: one league of 12 bots (one stream each,
//!   answering at once), balanced Schocken tables of 4 in duplicate sets (132 matches), on
//!   one arena and on three in cluster mode (bot i on arena i mod 3); the arenas' user and
//!   system CPU time (`/proc/PID/stat`) from the moment a fifth of the league is played to
//!   its end, per match played meanwhile (what every process does once, such as building
//!   the luck model's reference tables on its first league match, is behind it by then; the
//!   figure over the whole league is printed beside it).
//!
//! Run with `cargo bench -p knobel-e2e --bench cluster` (optionally `-- latency` or
//! `-- cpu`, and `--rounds N` for (b) to play its two leagues N times instead of twice).
//! `--no-relay` connects all of (b)'s bots to the first arena: the three arenas then play
//! no relayed seat, which measures what cluster mode costs besides the seat link (presence,
//! three schedulers, claims and leases). Needs PostgreSQL and `nats-server`.

use std::path::Path;
use std::time::{Duration, Instant};

use knobel_e2e::nats::{NatsServer, cluster_args};
use knobel_e2e::postgres::SharedDatabase;
use knobel_e2e::{Arena, ArenaOptions};
use knobel_proto::v1 as pb;
use pb::arena_message::Kind;

#[allow(dead_code)]
mod support;
use support::{connect, decision, nanos, open, percentile_us, release_knobel};

const ADMIN_TOKEN: &str = "cluster-bench-admin-token-0123456789";
const PEER_TOKEN: &str = "cluster-bench-peer-token-0123456789";
/// How long (a) measures, after its warm-up.
const LATENCY_RUN: Duration = Duration::from_secs(30);
const LATENCY_WARMUP: Duration = Duration::from_secs(3);

fn main() {
    let Arguments {
        parts,
        rounds,
        no_relay,
    } = arguments(std::env::args().skip(1));
    let wants = |part: &str| parts.is_empty() || parts.iter().any(|p| p == part);
    knobel_e2e::postgres::require();
    let knobel = release_knobel().expect("the release knobel binary");
    let clients = support::runtime("bench-client");
    if wants("latency") {
        clients.block_on(latency(&knobel));
    }
    if wants("cpu") {
        clients.block_on(cpu(&knobel, rounds, no_relay));
    }
}

/// What the command line asks for.
struct Arguments {
    /// The parts (`latency`, `cpu`; none: both).
    parts: Vec<String>,
    /// `--rounds N` (default 2): how many times (b) plays its league on one arena and on
    /// three, alternately.
    rounds: usize,
    /// `--no-relay`: (b)'s bots all on the first arena.
    no_relay: bool,
}

/// The command line's [`Arguments`]; other flags (cargo's `--bench`) are ignored.
fn arguments(mut args: impl Iterator<Item = String>) -> Arguments {
    let (mut parts, mut rounds, mut no_relay) = (Vec::new(), 2, false);
    while let Some(arg) = args.next() {
        if arg == "--no-relay" {
            no_relay = true;
        } else if arg == "--rounds" {
            let n = args.next().unwrap_or_default();
            rounds = n
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .unwrap_or_else(|| panic!("--rounds takes a number of at least 1, not {n:?}"));
        } else if !arg.starts_with('-') {
            parts.push(arg);
        }
    }
    Arguments {
        parts,
        rounds,
        no_relay,
    }
}

fn options(nats: Option<&str>) -> ArenaOptions {
    let mut options = ArenaOptions::default();
    options.args.extend(["--seats", "10"].map(String::from));
    if let Some(url) = nats {
        options.args.extend(cluster_args(url, PEER_TOKEN));
    }
    options
}

async fn start(knobel: &Path, db: &str, nats: Option<&str>) -> Arena {
    let env = [("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)];
    Arena::start_binary_on(knobel, options(nats), &env, db).await
}

async fn register(arena: &Arena, names: &[String]) -> Vec<String> {
    let mut admin = arena.admin(ADMIN_TOKEN).await;
    let mut tokens = Vec::new();
    for name in names {
        let added = admin
            .add_bot(pb::AddBotRequest { name: name.clone() })
            .await;
        tokens.push(added.expect("add a bot").into_inner().token);
    }
    tokens
}

/// A bot answering every request at once with its first legal action, on one stream,
/// until `end`: its round trips (nanoseconds) after `warm`, within matches.
async fn instant_bot(url: String, token: String, warm: Instant, end: Instant) -> Vec<u64> {
    let (tx, mut inbound) = open(connect(&url).await, &token, 0).await;
    let mut sent: Option<Instant> = None;
    let mut round_trips = Vec::new();
    while Instant::now() < end {
        let Ok(Ok(Some(message))) =
            tokio::time::timeout(Duration::from_secs(1), inbound.message()).await
        else {
            continue;
        };
        let received = Instant::now();
        match &message.kind {
            Some(Kind::DecisionRequest(request)) => {
                if let Some(sent) = sent.take()
                    && sent >= warm
                    && received < end
                {
                    round_trips.push(nanos(received - sent));
                }
                let action = request.legal_actions.first().cloned();
                if tx.send(decision(request.request_id, action)).await.is_err() {
                    break;
                }
                sent = Some(Instant::now());
            }
            Some(Kind::MatchResult(_)) => sent = None,
            _ => {}
        }
    }
    round_trips
}

fn duel(name: &str, bots: [&str; 2]) -> String {
    format!(
        "name = \"{name}\"\nseed = 5\nbots = [\"{}\", \"{}\"]\nrepetitions = 5000\n\
         concurrency = 1\n[games.schocken]\ntable_size = 2\n",
        bots[0], bots[1]
    )
}

/// The instance ids of the arenas on database `url`, oldest first.
async fn instance_ids(url: &str) -> Vec<String> {
    let pool = sqlx::PgPool::connect(url).await.expect("connect");
    let ids: Vec<(String,)> =
        sqlx::query_as("SELECT id FROM arena_instances ORDER BY started_at_ms, id")
            .fetch_all(&pool)
            .await
            .expect("instances");
    pool.close().await;
    ids.into_iter().map(|(id,)| id).collect()
}

async fn latency(knobel: &Path) {
    let nats = NatsServer::start();
    let db = SharedDatabase::create();
    let a = start(knobel, &db.url, Some(&nats.url)).await;
    let b = start(knobel, &db.url, Some(&nats.url)).await;
    let names: Vec<String> = ["l1", "l2", "r1", "r2"].map(String::from).to_vec();
    let tokens = register(&a, &names).await;
    let ids = instance_ids(&db.url).await;
    // The relayed league's referee is the arena with the smaller id: the other one's bot
    // is relayed.
    let relayed_bot = if ids[0] < ids[1] { 3 } else { 2 };
    let warm = Instant::now() + LATENCY_WARMUP;
    let end = warm + LATENCY_RUN;
    let on = [&a, &a, &a, &b];
    let bots: Vec<_> = (0..4)
        .map(|i| tokio::spawn(instant_bot(on[i].url.clone(), tokens[i].clone(), warm, end)))
        .collect();
    a.create_and_start_league(ADMIN_TOKEN, duel("local", ["l1", "l2"]))
        .await;
    a.create_and_start_league(ADMIN_TOKEN, duel("relayed", ["r1", "r2"]))
        .await;
    let mut samples = Vec::new();
    for bot in bots {
        samples.push(bot.await.expect("a bot"));
    }
    let (local, relayed) = (&samples[0], &samples[relayed_bot]);
    println!(
        "(a) decision round trip, bot side, {} s, same run (two-seat Schocken, answers at once)",
        LATENCY_RUN.as_secs()
    );
    for (what, s) in [("local seat", local), ("relayed seat", relayed)] {
        println!(
            "    {what:13} {:>7} round trips  p50 {:>8.1} µs  p99 {:>8.1} µs",
            s.len(),
            percentile_us(s, 0.5),
            percentile_us(s, 0.99)
        );
    }
    println!(
        "    relayed / local: p50 {:.2}x (target at most 1.5x), p99 {:.2}x (target at most 2x)",
        percentile_us(relayed, 0.5) / percentile_us(local, 0.5),
        percentile_us(relayed, 0.99) / percentile_us(local, 0.99)
    );
    for mut arena in [a, b] {
        arena.terminate().await;
    }
}

/// CPU seconds (user and system) process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc stat");
    // Fields after the command name (which ends with ')'): utime is the 12th, stime 13th.
    let rest = &stat[stat.rfind(')').expect("a command name") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// League `name`'s finished matches on `arena`.
async fn finished_matches(arena: &Arena, name: &str) -> u32 {
    let mut client = arena.client().await;
    let request = pb::GetStandingsRequest {
        league: name.to_owned(),
    };
    let standings = client.get_standings(request).await.expect("GetStandings");
    standings
        .into_inner()
        .league
        .map_or(0, |l| l.finished_matches)
}

/// CPU seconds the arenas `pids` have used.
fn arenas_cpu(pids: &[u32]) -> f64 {
    pids.iter().map(|&p| cpu_seconds(p)).sum()
}

/// The transactions committed in database `url` so far (PostgreSQL's statistics, which lag
/// by up to a second).
async fn transactions(url: &str) -> i64 {
    let pool = sqlx::PgPool::connect(url).await.expect("connect");
    let (n,): (i64,) = sqlx::query_as(
        "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
    )
    .fetch_one(&pool)
    .await
    .expect("pg_stat_database");
    pool.close().await;
    n
}

/// What (b) measured of one league.
struct LeagueCpu {
    /// CPU seconds per match over the whole league.
    whole: f64,
    /// CPU seconds per match once a fifth of the league was played (every arena has played
    /// league matches by then: what each process does once, such as building the luck
    /// model's reference tables, is behind it).
    steady: f64,
    total: u32,
    took: Duration,
    /// Database transactions per match, over the whole league.
    transactions: f64,
}

/// The league of (b) on `arenas` (bot i on arena i mod n, or all on the first with
/// `no_relay`).
async fn league_cpu(arenas: &[Arena], no_relay: bool) -> LeagueCpu {
    let names: Vec<String> = (0..12).map(|i| format!("bot{i:02}")).collect();
    let tokens = register(&arenas[0], &names).await;
    let end = Instant::now() + Duration::from_secs(3600);
    let bots: Vec<_> = (0..12)
        .map(|i| {
            let on = if no_relay { 0 } else { i % arenas.len() };
            let url = arenas[on].url.clone();
            tokio::spawn(instant_bot(url, tokens[i].clone(), end, end))
        })
        .collect();
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    let league = format!(
        "name = \"cpu\"\nseed = 9\ndice = \"duplicate\"\ndesign = \"balanced\"\n\
         bots = [{}]\nconcurrency = 12\n[games.schocken]\ntable_size = 4\n",
        quoted.join(", ")
    );
    let pids: Vec<u32> = arenas.iter().map(|a| a.child.id().expect("pid")).collect();
    let transactions_before = transactions(&arenas[0].database_url).await;
    let before = arenas_cpu(&pids);
    let started = Instant::now();
    let total = arenas[0].create_and_start_league(ADMIN_TOKEN, league).await;
    let (steady_from, steady_before) = loop {
        let done = finished_matches(&arenas[0], "cpu").await;
        if done >= total / 5 {
            break (done, arenas_cpu(&pids));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut client = arenas[0].client().await;
    knobel_e2e::league_over(&mut client, "cpu", Duration::from_secs(1800)).await;
    let took = started.elapsed();
    let after = arenas_cpu(&pids);
    bots.iter().for_each(tokio::task::JoinHandle::abort);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let transactions = transactions(&arenas[0].database_url).await - transactions_before;
    LeagueCpu {
        transactions: transactions as f64 / f64::from(total),
        whole: (after - before) / f64::from(total),
        steady: (after - steady_before) / f64::from(total - steady_from),
        total,
        took,
    }
}

async fn cpu(knobel: &Path, rounds: usize, no_relay: bool) {
    let nats = NatsServer::start();
    let mut rows = Vec::new();
    for replicas in std::iter::repeat_n([1usize, 3], rounds).flatten() {
        let db = SharedDatabase::create();
        let mut arenas = Vec::new();
        for _ in 0..replicas {
            let cluster = (replicas > 1).then_some(nats.url.as_str());
            arenas.push(start(knobel, &db.url, cluster).await);
        }
        let run = league_cpu(&arenas, no_relay).await;
        println!(
            "    {replicas} arena(s): {} matches in {:.1} s, {:.1} ms CPU per match ({:.1} ms over the whole league), {:.0} database transactions per match",
            run.total,
            run.took.as_secs_f64(),
            run.steady * 1000.0,
            run.whole * 1000.0,
            run.transactions
        );
        rows.push((replicas, run.steady, run.whole));
        for mut arena in arenas {
            arena.terminate().await;
        }
    }
    let mean = |n: usize, whole: bool| {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.0 == n)
            .map(|r| if whole { r.2 } else { r.1 })
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    // Each round's own ratio, for the spread between rounds.
    let mut per_round: Vec<f64> = rows.chunks(2).map(|r| r[1].1 / r[0].1).collect();
    per_round.sort_by(f64::total_cmp);
    println!(
        "(b) arena CPU per league match after the first fifth, {rounds} alternating rounds{}: three arenas / one = {:.2}x ({}); over whole leagues {:.2}x; per round {:.2}x to {:.2}x, median {:.2}x",
        if no_relay {
            " (--no-relay: every bot on the first arena)"
        } else {
            ""
        },
        mean(3, false) / mean(1, false),
        if no_relay {
            "cluster mode without relayed seats: not the target's figure"
        } else {
            "target at most 1.25x"
        },
        mean(3, true) / mean(1, true),
        per_round[0],
        per_round[per_round.len() - 1],
        (per_round[(per_round.len() - 1) / 2] + per_round[per_round.len() / 2]) / 2.0
    );
}
