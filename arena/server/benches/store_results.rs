//! Stored results per second, with their logs, on PostgreSQL and on SQLite.
//!
//! Run: `cargo bench -p knobel-arena --bench store_results` (PostgreSQL at
//! `KNOBEL_BENCH_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`: a
//! fresh database `knobel_bench_<random>` is created for every run and dropped after it;
//! SQLite in a temporary folder). Options after `--`: `--matches N` (default 4000),
//! `--concurrency 1,4,16,64`, `--backends postgres,sqlite`.
//!
//! What is measured: the end of league matches as the arena records it. A league of six
//! built-in players over Schocken, Sjokken and Zokken is expanded (`expand`) and stored
//! (`create_league`, started), and every scheduled match is played in-process with a log
//! (`Match::new_with_log`, the built-in heuristic in every seat): its real log and outcome.
//! Then, untimed, every match is claimed (`claim_league_match`) and its start recorded.
//! Timed: `C` tasks (C matches ending at once) each record one finished match after the
//! other through the arena's [`Recorder`] (group commit: the writes that queue up while a
//! transaction commits go into the next one), each as `MatchWrite::FinishLeague`: the
//! match row with its lz4-packed log, its seats' results, the league match marked finished
//! and the league finished with the last one, in one transaction (on PostgreSQL by
//! several writer tasks at once, `Store::writers`). The figure is results committed per
//! second. Afterwards the league must be finished with one result per match.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use knobel_arena::league::{LeagueConfig, LeagueDice, ScheduledMatch, expand};
use knobel_arena::store::{
    FinishedMatch, LeagueSlot, LeagueStatus, MatchWrite, NewLeague, NewMatch, Recorder, Store,
    now_ms,
};
use knobel_engine::Match;
use knobel_engine::policy::{HeuristicPolicy, Policy, play_out};

#[path = "support/fresh.rs"]
mod fresh;
use fresh::Fresh;

const BOTS: [&str; 6] = ["ann", "ben", "cat", "dan", "eve", "fay"];

/// One played match, ready to be recorded.
struct Played {
    start: NewMatch,
    finish: FinishedMatch,
    ordinal: u32,
}

struct Options {
    matches: usize,
    concurrency: Vec<usize>,
    backends: Vec<String>,
}

fn options() -> Options {
    let mut options = Options {
        matches: 4000,
        concurrency: vec![1, 4, 16, 64],
        backends: vec!["postgres".into(), "sqlite".into()],
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--matches" => options.matches = value.parse().expect("--matches N"),
            "--concurrency" => {
                options.concurrency = value
                    .split(',')
                    .map(|c| c.parse().expect("--concurrency 1,4,16"))
                    .collect()
            }
            "--backends" => options.backends = value.split(',').map(str::to_owned).collect(),
            // `cargo bench` passes --bench.
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    options
}

/// A league file with enough repetitions for `matches` matches (150 per repetition).
fn league_file(matches: usize) -> String {
    let bots: Vec<String> = BOTS.iter().map(|b| format!("\"{b}\"")).collect();
    format!(
        "name = \"bench\"\nseed = 11\nbots = [{}]\nrepetitions = {}\n\
         [games.schocken]\n[games.sjokken]\n[games.zokken]\nsettings = {{ rounds = 20 }}\n",
        bots.join(", "),
        matches.div_ceil(150)
    )
}

fn schedule(file: &str, matches: usize) -> Vec<ScheduledMatch> {
    let config = LeagueConfig::from_toml(file).expect("a valid league file");
    let bots: Vec<String> = BOTS.iter().map(|b| (*b).to_owned()).collect();
    let mut schedule =
        expand(&config, &bots, &LeagueDice::for_config(&config).0).expect("a schedule");
    schedule.truncate(matches);
    schedule
}

/// Plays every scheduled match with a log.
fn play(schedule: &[ScheduledMatch], run: usize) -> Vec<Played> {
    schedule
        .iter()
        .map(|m| {
            let mut game = Match::new_with_log(m.rules.clone(), m.seed, m.seats.len())
                .expect("a scheduled match sets up");
            let mut players: Vec<Box<dyn Policy + Send>> = m
                .seats
                .iter()
                .map(|_| Box::new(HeuristicPolicy) as Box<dyn Policy + Send>)
                .collect();
            play_out(&mut game, &mut players);
            let outcome = game.outcome().expect("played out");
            let log_json = game.log().expect("a log").to_json();
            let id = format!("bench{run:04}{:019}", m.ordinal);
            Played {
                start: NewMatch {
                    id: id.clone(),
                    game: m.game.name().to_owned(),
                    preset: m.preset.clone(),
                    rules_json: serde_json::to_string(&m.rules).expect("rules serialize"),
                    seed: m.seed as i64,
                    seat_names: m.seats.clone(),
                    seat_bot_ids: Vec::new(),
                    started_at_ms: now_ms(),
                    league: None,
                },
                finish: FinishedMatch {
                    id,
                    log_json,
                    outcome,
                    finished_at_ms: now_ms(),
                    // Stored as a league match's are; computing them is not what is measured.
                    adjusted: Some(vec![0.5; m.seats.len()]),
                },
                ordinal: m.ordinal,
            }
        })
        .collect()
}

/// One run: results per second, and the mean size of a packed log.
async fn run(backend: &str, concurrency: usize, file: &str, played: Arc<Vec<Played>>) -> f64 {
    let (fresh, url) = Fresh::create(backend, &format!("results_{concurrency}")).await;
    let store = Store::connect(&url).await.expect("open the store");
    let schedule = schedule(file, played.len());
    let bots: Vec<String> = BOTS.iter().map(|b| (*b).to_owned()).collect();
    let league = store
        .create_league(&NewLeague {
            name: "bench",
            config_toml: file,
            bots: &bots,
            schedule: &schedule,
            dice: &LeagueDice::public(11, knobel_arena::league::DiceMode::Independent),
            seed_source: knobel_arena::league::SeedSource::LeagueFile,
        })
        .await
        .expect("create the league");
    assert!(
        store
            .set_league_status("bench", &[LeagueStatus::Created], LeagueStatus::Running)
            .await
            .unwrap()
    );
    // Untimed: claims and starts.
    for chunk in played.chunks(64) {
        for p in chunk {
            assert!(
                store
                    .claim_league_match(league.id, p.ordinal, &p.start.id, None)
                    .await
                    .unwrap()
                    .is_some()
            );
        }
        let starts: Vec<MatchWrite> = chunk
            .iter()
            .map(|p| MatchWrite::Start(p.start.clone()))
            .collect();
        for result in store.write_matches(&starts).await {
            result.expect("a start");
        }
    }
    let recorder = Recorder::spawn(store.clone());
    let next = Arc::new(AtomicUsize::new(0));
    let began = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (recorder, next, played) = (recorder.clone(), next.clone(), played.clone());
        let league_id = league.id;
        tasks.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = played.get(i) else { return };
                let slot = LeagueSlot {
                    league_id,
                    ordinal: p.ordinal,
                };
                recorder
                    .write(MatchWrite::FinishLeague(p.finish.clone(), slot))
                    .await
                    .expect("a result is stored");
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("a writer task");
    }
    let elapsed = began.elapsed();
    // Results committed at once may each have seen the other's match unfinished: the
    // scheduler's tick then finishes the league, as here.
    store.finish_league_if_done(league.id).await.unwrap();
    let league = store.league("bench").await.unwrap().unwrap();
    assert_eq!(league.status, LeagueStatus::Finished);
    assert_eq!(league.finished_matches, played.len() as u64);
    assert_eq!(
        store.league_results(league.id).await.unwrap().len(),
        played.len()
    );
    drop(recorder);
    store.close().await;
    fresh.drop_it().await;
    played.len() as f64
        / elapsed
            .as_secs_f64()
            .max(Duration::from_micros(1).as_secs_f64())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let options = options();
    let load = |when: &str| {
        let uptime = std::process::Command::new("uptime")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default();
        println!("load {when}: {uptime}");
    };
    load("before");
    let file = league_file(options.matches);
    let schedule = schedule(&file, options.matches);
    let began = Instant::now();
    let played = Arc::new(play(&schedule, 0));
    let log_bytes: usize = played.iter().map(|p| p.finish.log_json.len()).sum();
    let packed: usize = played
        .iter()
        .map(|p| lz4_flex::compress_prepend_size(p.finish.log_json.as_bytes()).len())
        .sum();
    println!(
        "{} matches played with logs in {:.1} s: log JSON {:.1} KB on average, {:.1} KB packed (lz4)",
        played.len(),
        began.elapsed().as_secs_f64(),
        log_bytes as f64 / played.len() as f64 / 1024.0,
        packed as f64 / played.len() as f64 / 1024.0
    );
    println!("| backend | concurrent writers | results/s |");
    println!("|---|---|---|");
    for backend in &options.backends {
        for &c in &options.concurrency {
            let rate = run(backend, c, &file, played.clone()).await;
            println!("| {backend} | {c} | {rate:.0} |");
        }
    }
    load("after");
}
