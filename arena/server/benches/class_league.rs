//! A class league with `stop = "settled"`: 30 bots of a known ladder, all three games, over
//! real gRPC on this machine. The figures: the time from StartLeague until the league
//! stops, the matches it played of its schedule, and per game whether its order agrees with
//! the ladder.
//!
//! Run: `cargo bench -p knobel-arena --bench class_league` (a few minutes, after the build).
//! Options after `--`: `--bots N` (default 30), `--streams S` (Play streams per bot, default
//! 2), `--concurrency C` (the league's, default 16), `--budget B` (default 60000), `--margins
//! shake,zokken` (the league file's margins, default `0.05,30`), `--backend sqlite|postgres`.
//!
//! **The ladder**: bot `i` of `N` (`s00` strongest) plays the heuristic except that each
//! decision is, with probability `i / (N - 1)`, a uniformly random legal action
//! (`NoisyHeuristicPolicy`): `s00` is the heuristic, the last bot plays at random. Strength
//! falls with the random share, so the ladder's order is the true order; neighbours differ
//! by little, so many are equivalent within the margin rather than separated.
//! **The league**: round robin, Schocken and Sjokken at tables of 4, Zokken at tables of 2
//! (20 rounds), 40 repetitions (174,000 matches scheduled: 100 would pass the 200,000-match
//! cap), independent secret dice, `stop = "settled"`. **Over gRPC**: the arena
//! in-process on 127.0.0.1:0 with a fresh store (luck-adjusted scores computed as each
//! result is recorded), each bot connected with S Play streams as a `knobel_bots::Bot`.
//! **Agreement**: per game, the standings' order (adjusted scores) against the ladder: the
//! number of neighbour pairs in the wrong order, and whether every such pair is judged
//! equivalent (an order the league does not claim to know); Spearman's rank correlation.

use std::time::{Duration, Instant};

use knobel_arena::auth::{AdminToken, generate_token};
use knobel_arena::league::{LeagueConfig, PairVerdict, standings_with};
use knobel_arena::server::{ServerConfig, serve};
use knobel_arena::store::Store;
use knobel_bots::{BearerAuth, Bot, BotConfig, Game, Token};
use knobel_engine::policy::{NoisyHeuristicPolicy, Policy};
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use knobel_proto::v1::arena_client::ArenaClient;

#[path = "support/fresh.rs"]
mod fresh;
use fresh::Fresh;

struct Options {
    bots: usize,
    streams: usize,
    concurrency: u32,
    budget: u32,
    margins: (f64, f64),
    backend: String,
}

fn options() -> Options {
    let mut o = Options {
        bots: 30,
        streams: 2,
        concurrency: 16,
        budget: 60_000,
        margins: (0.05, 30.0),
        backend: "sqlite".into(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--bots" => o.bots = value.parse().expect("--bots N"),
            "--streams" => o.streams = value.parse().expect("--streams S"),
            "--concurrency" => o.concurrency = value.parse().expect("--concurrency C"),
            "--budget" => o.budget = value.parse().expect("--budget B"),
            "--margins" => {
                let (s, z) = value.split_once(',').expect("--margins shake,zokken");
                o.margins = (s.parse().expect("a margin"), z.parse().expect("a margin"));
            }
            "--backend" => o.backend = value,
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    o
}

/// The bots' names, strongest first.
fn ladder(o: &Options) -> Vec<String> {
    (0..o.bots).map(|i| format!("s{i:02}")).collect()
}

/// Bot `i`'s random share.
fn share(o: &Options, i: usize) -> f64 {
    i as f64 / (o.bots - 1).max(1) as f64
}

fn league_file(o: &Options, bots: &[String]) -> String {
    let names: Vec<String> = bots.iter().map(|b| format!("\"{b}\"")).collect();
    let (shake, zokken) = o.margins;
    format!(
        "name = \"class\"\nbots = [{}]\nstop = \"settled\"\nbudget = {}\nrepetitions = 40\n\
         concurrency = {}\n[time]\ndecision_ms = 10000\n\
         [games.schocken]\nmargin = {shake}\n[games.sjokken]\nmargin = {shake}\n\
         [games.zokken]\nmargin = {zokken}\nsettings = {{ rounds = 20 }}\n",
        names.join(", "),
        o.budget,
        o.concurrency
    )
}

type Admin = AdminClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, BearerAuth>,
>;

/// Registers the bots and connects each with its streams.
async fn connect_bots(
    o: &Options,
    addr: &str,
    admin: &mut Admin,
    bots: &[String],
) -> tokio::task::JoinSet<Result<knobel_bots::RunReport, knobel_bots::BotError>> {
    let mut set = tokio::task::JoinSet::new();
    for (i, name) in bots.iter().enumerate() {
        let token = admin
            .add_bot(pb::AddBotRequest { name: name.clone() })
            .await
            .expect("add a bot")
            .into_inner()
            .token;
        for stream in 0..o.streams {
            let config =
                BotConfig::new(addr.to_owned(), Token::new(token.clone()), name, Game::ALL);
            let policy: Box<dyn Policy + Send> = Box::new(NoisyHeuristicPolicy::new(
                "ladder",
                share(o, i),
                (i * 64 + stream) as u64,
            ));
            set.spawn(Bot::new(config, policy).run());
        }
    }
    set
}

/// Plays the league; the time it took and its league info at the end.
async fn play(
    o: &Options,
    store: Store,
    file: &str,
    bots: &[String],
) -> (Duration, pb::LeagueInfo) {
    let admin_token = generate_token();
    let config = ServerConfig {
        admin_token: Some(AdminToken::new(&admin_token)),
        ..ServerConfig::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = format!("http://{}", listener.local_addr().expect("an address"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(config, store, listener, None, async {
        let _ = stopped.await;
    }));
    let channel = knobel_bots::endpoint(&addr)
        .expect("an address")
        .connect()
        .await
        .expect("connect to the arena");
    let auth = BearerAuth::new(&Token::new(admin_token)).expect("a token");
    let mut admin = AdminClient::with_interceptor(channel.clone(), auth);
    let mut arena = ArenaClient::new(channel);
    let mut clients = connect_bots(o, &addr, &mut admin, bots).await;
    let created = admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: file.to_owned(),
        })
        .await
        .expect("create the league")
        .into_inner()
        .league
        .expect("a league");
    println!("scheduled: {} matches", created.total_matches);
    let began = Instant::now();
    admin
        .start_league(pb::LeagueRequest {
            name: "class".into(),
        })
        .await
        .expect("start the league");
    let mut last_report = Instant::now();
    let info = loop {
        let info = arena
            .list_leagues(pb::ListLeaguesRequest {})
            .await
            .expect("leagues")
            .into_inner()
            .leagues
            .remove(0);
        if info.status == pb::LeagueStatus::Finished as i32 {
            break info;
        }
        if last_report.elapsed() > Duration::from_secs(30) {
            println!(
                "  {:>4.0} s: {} matches",
                began.elapsed().as_secs_f64(),
                info.finished_matches
            );
            last_report = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let took = began.elapsed();
    clients.abort_all();
    let _ = stop.send(());
    server.await.expect("the server task").expect("serve");
    (took, info)
}

/// Spearman's rank correlation of an order against the ladder (both permutations).
fn spearman(ranks: &[usize]) -> f64 {
    let n = ranks.len() as f64;
    let d2: f64 = ranks
        .iter()
        .enumerate()
        .map(|(i, &r)| (i as f64 - r as f64).powi(2))
        .sum();
    1.0 - 6.0 * d2 / (n * (n * n - 1.0))
}

/// Per game: the order against the ladder.
fn agreement(standings: &knobel_arena::league::Standings, bots: &[String]) {
    println!(
        "| game | matches | basis | neighbours separated / equivalent / open | wrong-order neighbours | of them not equivalent | Spearman |"
    );
    println!("|---|---|---|---|---|---|---|");
    for g in &standings.games {
        let ranks: Vec<usize> = g
            .bots
            .iter()
            .map(|b| bots.iter().position(|x| *x == b.bot).expect("a ladder bot"))
            .collect();
        let count = |v| g.neighbours.iter().filter(|n| n.verdict == v).count();
        let wrong: Vec<_> = g.neighbours.iter().filter(|n| n.above > n.below).collect();
        let claimed_wrong = wrong
            .iter()
            .filter(|n| n.verdict != PairVerdict::Equivalent)
            .count();
        println!(
            "| {} | {} | {} | {} / {} / {} | {} | {} | {:.3} |",
            g.game.name(),
            g.matches,
            g.basis.name(),
            count(PairVerdict::Separated),
            count(PairVerdict::Equivalent),
            count(PairVerdict::Open),
            wrong.len(),
            claimed_wrong,
            spearman(&ranks)
        );
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let o = options();
    let bots = ladder(&o);
    let file = league_file(&o, &bots);
    let config = LeagueConfig::from_toml(&file).expect("a valid league file");
    let (fresh, url) = Fresh::create(&o.backend, "class").await;
    let store = Store::connect(&url).await.expect("open the store");
    println!(
        "class league: {} bots, {} streams each, concurrency {}, budget {}, margins {:?}, {} store",
        o.bots, o.streams, o.concurrency, o.budget, o.margins, o.backend
    );
    let (took, info) = play(&o, store.clone(), &file, &bots).await;
    println!(
        "stopped after {:.1} s: {} of {} scheduled matches played",
        took.as_secs_f64(),
        info.finished_matches,
        info.total_matches
    );
    let league = store
        .league("class")
        .await
        .expect("read")
        .expect("the league");
    let results = store.league_results(league.id).await.expect("results");
    let standings = standings_with(&results, &config.margins());
    agreement(&standings, &bots);
    fresh.drop_it().await;
}
