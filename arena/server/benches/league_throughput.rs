//! League throughput: matches per second of one league played over gRPC by built-in bots,
//! against the same league played in-process by `simulate`'s `play_schedule`, in the same
//! run. The ratio (gRPC / in-process) is the figure.
//!
//! Run: `cargo bench -p knobel-arena --bench league_throughput` (about a minute). Options
//! after `--`: `--repetitions N` (default 2: 2 x 150 = 300 matches), `--streams S` (Play
//! streams per bot, default 4), `--concurrency C` (the league's, default 8), `--backend
//! sqlite|postgres` (default sqlite in a temporary folder; postgres creates and drops a
//! database on `KNOBEL_BENCH_POSTGRES_URL`, default the shared server).
//!
//! The league: six built-in players (`heuristic`, the four ladder steps, `random`) in a
//! round robin of Schocken (tables of 4), Sjokken (4) and Zokken (2, 20 rounds), their
//! default presets: 15 tables x 4 rotations + 15 x 4 + 15 x 2 = 150 matches per repetition.
//! **Over gRPC**: the arena server runs in-process (`serve` on 127.0.0.1:0, its store in a
//! fresh database), each player connects `S` Play streams (`knobel_bots::Bot`, the same
//! engine policy deciding on the client side), the league is created and started over
//! Admin, and the time runs from `StartLeague` until `GetStandings` says finished (polled
//! every 20 ms). **In-process**: `play_schedule` plays the very same schedule on one thread
//! with the same policies (no network, no referee deadlines, no store), over and over for
//! a second. Both share one
//! two-worker tokio runtime and the machine's cores.

use std::time::{Duration, Instant};

use knobel_arena::auth::{AdminToken, generate_token};
use knobel_arena::league::simulate::play_schedule;
use knobel_arena::league::{LeagueConfig, LeagueDice, expand};
use knobel_arena::server::{ServerConfig, serve};
use knobel_arena::store::Store;
use knobel_bots::{BearerAuth, Bot, BotConfig, Game, Token, strategy};
use knobel_engine::policy::{Policy, by_name};
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use knobel_proto::v1::arena_client::ArenaClient;

#[path = "support/fresh.rs"]
mod fresh;
use fresh::Fresh;

#[path = "support/ladder.rs"]
mod ladder;
use ladder::LADDER as PLAYERS;

struct Options {
    repetitions: u32,
    streams: usize,
    concurrency: u32,
    backend: String,
}

fn options() -> Options {
    let mut o = Options {
        repetitions: 2,
        streams: 4,
        concurrency: 8,
        backend: "sqlite".into(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--repetitions" => o.repetitions = value.parse().expect("--repetitions N"),
            "--streams" => o.streams = value.parse().expect("--streams S"),
            "--concurrency" => o.concurrency = value.parse().expect("--concurrency C"),
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

/// The league file: the players' names are the bots' names.
fn league_file(o: &Options) -> String {
    let bots: Vec<String> = PLAYERS.iter().map(|b| format!("\"{b}\"")).collect();
    format!(
        "name = \"throughput\"\nseed = 5\nbots = [{}]\nrepetitions = {}\nconcurrency = {}\n\
         [time]\ndecision_ms = 10000\n\
         [games.schocken]\n[games.sjokken]\n[games.zokken]\nsettings = {{ rounds = 20 }}\n",
        bots.join(", "),
        o.repetitions,
        o.concurrency
    )
}

fn builtin(name: &str, seed: u64) -> Box<dyn Policy + Send> {
    by_name(name, seed).expect("a built-in player")
}

/// Plays the league over gRPC; its matches per second.
async fn over_grpc(o: &Options, file: &str) -> (f64, usize) {
    let (fresh, url) = Fresh::create(&o.backend, "league").await;
    let store = Store::connect(&url).await.expect("open the store");
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
    // The listener is bound before the server runs: the connection waits for it.
    let channel = knobel_bots::endpoint(&addr)
        .expect("an address")
        .connect()
        .await
        .expect("connect to the arena");
    let auth = BearerAuth::new(&Token::new(admin_token)).expect("a token");
    let mut admin = AdminClient::with_interceptor(channel.clone(), auth);
    let mut arena = ArenaClient::new(channel);
    let mut bots = tokio::task::JoinSet::new();
    for (i, name) in PLAYERS.iter().enumerate() {
        let token = admin
            .add_bot(pb::AddBotRequest {
                name: (*name).into(),
            })
            .await
            .expect("add a bot")
            .into_inner()
            .token;
        for stream in 0..o.streams {
            let config = BotConfig::new(addr.clone(), Token::new(token.clone()), *name, Game::ALL);
            let policy = strategy(name, (i * 64 + stream) as u64).expect("a strategy");
            bots.spawn(Bot::new(config, policy).run());
        }
    }
    let total = admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: file.to_owned(),
        })
        .await
        .expect("create the league")
        .into_inner()
        .league
        .expect("a league")
        .total_matches as usize;
    let began = Instant::now();
    admin
        .start_league(pb::LeagueRequest {
            name: "throughput".into(),
        })
        .await
        .expect("start the league");
    loop {
        let s = arena
            .get_standings(pb::GetStandingsRequest {
                league: "throughput".into(),
            })
            .await
            .expect("standings")
            .into_inner();
        if s.league.expect("a league").status == pb::LeagueStatus::Finished as i32 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = began.elapsed();
    bots.abort_all();
    let _ = stop.send(());
    server.await.expect("the server task").expect("serve");
    fresh.drop_it().await;
    (total as f64 / elapsed.as_secs_f64(), total)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let o = options();
    let uptime = || {
        std::process::Command::new("uptime")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    println!("load before: {}", uptime());
    let file = league_file(&o);
    let config = LeagueConfig::from_toml(&file).expect("a valid league file");
    let bots: Vec<String> = PLAYERS.iter().map(|b| (*b).to_owned()).collect();
    let schedule = expand(&config, &bots, &LeagueDice::for_config(&config).0).expect("a schedule");
    let (grpc, total) = over_grpc(&o, &file).await;
    assert_eq!(total, schedule.len());
    // In-process: the schedule again and again for at least a second (one pass takes a few
    // milliseconds), the same results each time.
    let began = Instant::now();
    let mut played = 0;
    while began.elapsed() < Duration::from_secs(1) {
        let results = play_schedule(&schedule, &builtin);
        assert_eq!(results.len(), schedule.len());
        played += results.len();
    }
    let local = played as f64 / began.elapsed().as_secs_f64();
    println!(
        "league of {total} matches ({} backend, {} streams per bot, concurrency {}):",
        o.backend, o.streams, o.concurrency
    );
    println!("| how | matches/s |");
    println!("|---|---|");
    println!("| over gRPC (arena, bots as clients) | {grpc:.1} |");
    println!("| in-process (play_schedule, one thread) | {local:.1} |");
    println!("ratio gRPC / in-process: {:.3}", grpc / local);
    println!("load after: {}", uptime());
}
