//! Metrics scrapes per second with 0 and with 100,000 stored matches, in one run
//! (docs/benchmarks.md, "Metrics scrapes"; issue 26: the ratio at least 0.8, and at least
//! 500 per second).
//!
//! Two arenas run in this process, as `knobel serve` runs (`server::serve` with a metrics
//! listener on 127.0.0.1:0, so the league refresh runs), each on a SQLite store of its own
//! in a temporary folder, on one two-worker runtime: one whose league `bench` has no match
//! yet (0 stored), one whose league `bench` is finished with [`STORED`] matches, written
//! straight into the database (matches, seats, results and league matches, as the
//! recorder writes them). Both leagues have the same [`BOTS`] entrants, so both arenas
//! export the same series. Once each shows its league, HTTP/1.1 clients on another
//! runtime scrape `/metrics` over keep-alive connections (as Prometheus does), as fast as
//! they are answered, in windows of [`WINDOW`] that alternate between the two arenas,
//! [`ROUNDS`] of each per number of clients ([`CLIENTS`]). A scrape counts when its whole
//! answer (status 200) has been read; any other end is counted as a failure.
//!
//! Run with `cargo bench -p knobel-arena --bench metrics_scrapes`. It exits with status 1
//! if a target is missed or a scrape failed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use knobel_arena::server::{ServerConfig, serve};
use knobel_arena::store::Store;
use knobel_engine::Rules;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// Matches stored in the second arena's database.
const STORED: u32 = 100_000;
/// The league's entrants (registered bots), unless `--bots N` says otherwise: as many as
/// have series of their own (`metrics::MAX_BOT_LABELS`), the most series a league and the
/// bots' counters can have. Every match seats three of them.
const BOTS: u32 = 200;
/// Scrapers at once.
const CLIENTS: [usize; 2] = [1, 40];
/// One measuring window.
const WINDOW: Duration = Duration::from_secs(2);
/// Windows per arena and number of clients, alternating (other users of the machine come
/// and go: both arenas see the same of them).
const ROUNDS: usize = 5;
/// Targets: scrapes per second, and the rate with [`STORED`] matches over that with none.
const MIN_RATE: f64 = 500.0;
const MIN_RATIO: f64 = 0.8;

fn runtime(name: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn league_file(bots: u32) -> String {
    let bots: Vec<String> = (0..bots).map(|i| format!("\"bot-{i}\"")).collect();
    format!(
        "name = \"bench\"\nseed = 1\nbots = [{}]\n\n[games.schocken]\ntable_size = 3\n",
        bots.join(", ")
    )
}

/// A store in `dir` with `bots` registered bots and league `bench` among them, finished
/// with `matches` stored results (or just created, for 0).
async fn store_with(dir: &std::path::Path, bots: u32, matches: u32) -> anyhow::Result<Store> {
    let url = format!("sqlite://{}", dir.join("knobel.db").display());
    let store = Store::connect(&url).await.context("opening the store")?;
    for i in 0..bots {
        store
            .add_bot(&format!("bot-{i}"), &format!("{i:064x}"))
            .await
            .context("adding a bot")?;
    }
    let pool = sqlx::SqlitePool::connect(&url).await?;
    let mut tx = pool.begin().await?;
    let names: Vec<String> = (0..bots).map(|i| format!("bot-{i}")).collect();
    let status = if matches == 0 { "created" } else { "finished" };
    let league_id: i64 = sqlx::query_scalar(
        "INSERT INTO leagues (name, config_toml, bots_json, status, created_at_ms, \
         total_matches, dice, seed_source) \
         VALUES ('bench', $1, $2, $3, 1, $4, 'duplicate', 'league-file') RETURNING id",
    )
    .bind(league_file(bots))
    .bind(serde_json::to_string(&names)?)
    .bind(status)
    .bind(i64::from(matches))
    .fetch_one(&mut *tx)
    .await
    .context("writing the league")?;
    let rules = serde_json::to_string(&Rules::preset("schocken")?)?;
    // Match i seats bots 3i, 3i+1, 3i+2 (mod bots), placed in a rotating order.
    let numbers = format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {matches}), \
         s(seat) AS (VALUES (0), (1), (2))"
    );
    let id = "printf('bench-%07d', n.i)";
    let bot = format!("'bot-' || ((n.i * 3 + s.seat) % {bots})");
    let place = |seat: &str| format!("((n.i / 7 + {seat}) % 3) + 1");
    let names = format!(
        "json_array('bot-' || ((n.i * 3) % {bots}), 'bot-' || ((n.i * 3 + 1) % {bots}), \
         'bot-' || ((n.i * 3 + 2) % {bots}))"
    );
    let statements = [
        format!(
            "{numbers} INSERT INTO matches (id, game, preset, rules_json, seed, \
             status, started_at_ms, finished_at_ms, league_id, league_ordinal) \
             SELECT {id}, 'schocken', 'schocken', $1, n.i, 'finished', \
             1000 + n.i, 1001 + n.i, {league_id}, n.i FROM n"
        ),
        format!(
            "{numbers} INSERT INTO match_seats (match_id, seat, bot_name, place, strikes, \
             timeouts) SELECT {id}, s.seat, {bot}, {}, 0, 0 FROM n, s",
            place("s.seat")
        ),
        format!(
            "{numbers} INSERT INTO league_matches (league_id, ordinal, game, preset, \
             rules_json, set_index, rotation, seats_json, seed, status, match_id) \
             SELECT {league_id}, n.i, 'schocken', 'schocken', $1, n.i, 0, {names}, n.i, \
             'finished', {id} FROM n"
        ),
    ];
    for sql in statements.into_iter().filter(|_| matches > 0) {
        let query = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()));
        let query = if sql.contains("$1") {
            query.bind(&rules)
        } else {
            query
        };
        query
            .execute(&mut *tx)
            .await
            .context("writing the matches")?;
    }
    tx.commit().await?;
    pool.close().await;
    Ok(store)
}

/// One HTTP/1.1 keep-alive connection scraping `/metrics`.
struct Scraper {
    reader: BufReader<TcpStream>,
}

impl Scraper {
    async fn connect(addr: std::net::SocketAddr) -> std::io::Result<Scraper> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Scraper {
            reader: BufReader::new(stream),
        })
    }

    /// One scrape: its body, if the answer was a 200.
    async fn scrape(&mut self) -> anyhow::Result<String> {
        let request = b"GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n";
        self.reader.get_mut().write_all(request).await?;
        let mut line = String::new();
        self.reader.read_line(&mut line).await?;
        ensure!(line.starts_with("HTTP/1.1 200"), "answer {line:?}");
        let mut length = None;
        loop {
            line.clear();
            ensure!(self.reader.read_line(&mut line).await? > 0, "closed");
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = Some(value.trim().parse::<usize>()?);
            }
        }
        let mut body = vec![0; length.context("no content-length")?];
        self.reader.read_exact(&mut body).await?;
        Ok(String::from_utf8(body)?)
    }
}

/// Scrapes `addr` with `clients` connections for [`WINDOW`]: (scrapes answered, failed).
async fn window(addr: std::net::SocketAddr, clients: usize) -> (u64, u64) {
    let done = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (done, failed, stop) = (done.clone(), failed.clone(), stop.clone());
            tokio::spawn(async move {
                let mut scraper = None;
                while !stop.load(Ordering::Relaxed) {
                    if scraper.is_none() {
                        scraper = Scraper::connect(addr).await.ok();
                    }
                    let ok = match &mut scraper {
                        Some(s) => s.scrape().await.is_ok(),
                        None => false,
                    };
                    if ok {
                        done.fetch_add(1, Ordering::Relaxed);
                    } else {
                        failed.fetch_add(1, Ordering::Relaxed);
                        scraper = None;
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep(WINDOW).await;
    let counted = (done.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = task.await;
    }
    counted
}

/// Waits until a scrape of `addr` holds every one of `series` (the refresh has shown the
/// league).
async fn wait_for(addr: std::net::SocketAddr, series: &[String]) -> anyhow::Result<String> {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Ok(mut scraper) = Scraper::connect(addr).await
            && let Ok(text) = scraper.scrape().await
            && series
                .iter()
                .all(|s| text.lines().any(|l| l.starts_with(s.as_str())))
        {
            return Ok(text);
        }
        if Instant::now() > deadline {
            bail!("not all of {series:?} in 300 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// CPU seconds used so far by this process's threads whose names start with `prefix` (the
/// runtimes name their workers and blocking threads), from /proc.
fn cpu_seconds(prefix: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let ticks: u64 = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
        .filter_map(|stat| {
            // pid (comm) state ... utime stime: fields 14 and 15, counted after the comm.
            let (comm, rest) = stat.split_once('(')?.1.rsplit_once(')')?;
            comm.starts_with(prefix).then_some(())?;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
        })
        .sum();
    // Clock ticks of 1/100 s (USER_HZ on Linux).
    ticks as f64 / 100.0
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Starts an arena on `store` on `servers`: the address of its metrics.
fn start(servers: &tokio::runtime::Runtime, store: Store) -> anyhow::Result<std::net::SocketAddr> {
    servers.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let metrics = TcpListener::bind("127.0.0.1:0").await?;
        let addr = metrics.local_addr()?;
        let config = ServerConfig::default();
        tokio::spawn(async move {
            let stopped = std::future::pending::<()>();
            if let Err(error) = serve(config, store, listener, Some(metrics), stopped).await {
                eprintln!("the arena failed: {error}");
                std::process::exit(2);
            }
        });
        Ok(addr)
    })
}

/// `--bots N` among the arguments, else [`BOTS`].
fn bots() -> anyhow::Result<u32> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--bots") {
        Some(i) => {
            let n = args.get(i + 1).context("--bots needs a number")?;
            let n: u32 = n.parse().context("--bots needs a number")?;
            ensure!(n >= 3, "--bots needs at least 3 (tables of 3)");
            Ok(n)
        }
        None => Ok(BOTS),
    }
}

fn main() -> anyhow::Result<()> {
    let bots = bots()?;
    println!("load before: {}; {bots} bots", load());
    let servers = runtime("arenas");
    let clients = runtime("scrapers");
    let dirs = [tempfile::tempdir()?, tempfile::tempdir()?];
    let started = Instant::now();
    let mut addrs = Vec::new();
    for (dir, matches) in dirs.iter().zip([0, STORED]) {
        let store = servers.block_on(store_with(dir.path(), bots, matches))?;
        addrs.push(start(&servers, store)?);
    }
    println!("stores written: {:.1} s", started.elapsed().as_secs_f64());
    let rank = "knobel_league_rank{bot=\"bot-0\",game=\"overall\",league=\"bench\"}";
    let shown = [
        "knobel_league_status{league=\"bench\",status=\"created\"} 1".to_owned(),
        format!("knobel_league_matches{{league=\"bench\",state=\"done\"}} {STORED}"),
    ];
    for ((addr, series), stored) in addrs.iter().zip(shown).zip([0, STORED]) {
        let text = clients.block_on(wait_for(*addr, &[series, rank.to_owned()]))?;
        let lines = text.lines().filter(|l| !l.starts_with('#')).count();
        println!(
            "{stored} stored: {lines} series, {} bytes a scrape",
            text.len()
        );
    }
    println!(
        "league shown in both: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    println!(
        "| clients | 0 stored /s | {STORED} stored /s | ratio | failed | arenas' CPU µs/scrape | scrapers' CPU µs/scrape |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut met = true;
    for n in CLIENTS {
        let mut totals = [0u64; 2];
        let mut failed = 0;
        let cpu = (cpu_seconds("arenas"), cpu_seconds("scrapers"));
        for _ in 0..ROUNDS {
            for (i, addr) in addrs.iter().enumerate() {
                let (done, lost) = clients.block_on(window(*addr, n));
                totals[i] += done;
                failed += lost;
            }
        }
        let seconds = WINDOW.as_secs_f64() * ROUNDS as f64;
        let [none, many] = totals.map(|t| t as f64 / seconds);
        let ratio = many / none;
        let scrapes = (totals[0] + totals[1]).max(1) as f64;
        let per_scrape = |before: f64, prefix: &str| (cpu_seconds(prefix) - before) / scrapes * 1e6;
        let (arenas, scrapers) = (per_scrape(cpu.0, "arenas"), per_scrape(cpu.1, "scrapers"));
        println!(
            "| {n} | {none:.0} | {many:.0} | {ratio:.3} | {failed} | {arenas:.0} | {scrapers:.0} |"
        );
        met &= ratio >= MIN_RATIO && none.min(many) >= MIN_RATE && failed == 0;
    }
    println!("load after: {}", load());
    if !met {
        println!(
            "TARGET MISSED: at least {MIN_RATE}/s, a ratio of at least {MIN_RATIO}, no failure"
        );
        std::process::exit(1);
    }
    println!("targets met: at least {MIN_RATE}/s, ratio at least {MIN_RATIO}, no failure");
    Ok(())
}
