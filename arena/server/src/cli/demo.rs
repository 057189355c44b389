//! `knobel demo`: the README's first command. On a fresh SQLite file it starts the arena,
//! registers the built-in bots over Admin, runs each as a real gRPC client (several
//! streams each), plays a round-robin league across Schocken, Sjokken and Zokken with a
//! progress line, prints the standings per game with ratings and confidence intervals, and
//! says how to look at a match and how to point a bot of your own at the arena.

use std::io::{IsTerminal, Write as _};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use knobel_arena::auth::{self, AdminToken};
use knobel_arena::lobby::LobbyConfig;
use knobel_arena::server::{ServeError, ServerConfig, serve_with_web};
use knobel_arena::store::Store;
use knobel_bots::{Bot, BotConfig, BotError, Game, RunReport, Token, strategy};
use knobel_engine::policy::HEURISTIC_LADDER;
use knobel_proto::v1 as pb;
use knobel_proto::v1::arena_client::ArenaClient;
use tokio::net::TcpListener;
use tonic::transport::Channel;

use super::league::{self, ArenaArgs, Format};

/// The demo's bots: name and built-in strategy, strongest first.
pub const DEMO_BOTS: [(&str, &str); 7] = [
    ("maven", "expert"),
    ("ace", "heuristic"),
    ("bold", HEURISTIC_LADDER[0].0),
    ("canny", HEURISTIC_LADDER[1].0),
    ("dicey", HEURISTIC_LADDER[2].0),
    ("erratic", HEURISTIC_LADDER[3].0),
    ("fumble", "random"),
];

/// The demo's own SQLite file, replaced on every run.
pub const DEFAULT_DATABASE: &str = "sqlite://knobel-demo.db";

/// Streams each demo bot keeps open: how many league matches it can play at once.
const STREAMS_PER_BOT: usize = 4;

/// Options of `knobel demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// The SQLite file to keep everything in. The default file is the demo's own: it is
    /// replaced on every run.
    #[arg(long, default_value = DEFAULT_DATABASE)]
    pub database_url: String,
    /// Where the arena listens (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Duplicate sets per table.
    #[arg(long, default_value_t = 8)]
    pub repetitions: u32,
    /// Rounds per Zokken match.
    #[arg(long, default_value_t = 30)]
    pub zokken_rounds: u32,
    /// A league seed, to play the same dice again (a public-dice league); without it the
    /// league's dice come from a secret of the operating system's random source.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Keep the arena running after the league (until Ctrl-C), to look around.
    #[arg(long)]
    pub serve: bool,
}

/// The league file the demo plays.
pub fn league_file(args: &DemoArgs) -> String {
    let bots: Vec<String> = DEMO_BOTS
        .iter()
        .map(|(name, _)| format!("{name:?}"))
        .collect();
    // Duplicate sets: the demo's bots are built-in players, which remember nothing across
    // matches (docs/fair-play.md: never for a field of outside bots).
    let seed = args
        .seed
        .map(|s| format!("seed = {s}\n"))
        .unwrap_or_default();
    format!(
        "# The demo league: every bot against every other, in every game.\n\
         name = \"demo\"\n{seed}dice = \"duplicate\"\nbots = [{bots}]\nrepetitions = {reps}\nconcurrency = 8\n\n\
         [time]\ndecision_ms = 2000\ntime_bank_ms = 10000\n\n\
         [games.schocken]\ntable_size = 4\n\n[games.sjokken]\ntable_size = 4\n\n\
         [games.zokken]\ntable_size = 2\nsettings = {{ rounds = {rounds} }}\n",
        bots = bots.join(", "),
        reps = args.repetitions,
        rounds = args.zokken_rounds,
    )
}

/// Runs the demo.
pub async fn run(args: DemoArgs) -> Result<()> {
    let started = Instant::now();
    let database_url = args.database_url.clone();
    if database_url == DEFAULT_DATABASE {
        remove_demo_database()?;
    }
    let demo = start_arena(&args, &database_url).await?;
    prepare_expert_tables().await?;
    // The bots: registered over Admin, each a real gRPC client with a few streams.
    let mut admin = wait_for_admin(&demo.arena).await?;
    let mut bots = start_bots(&mut admin, &demo.url, args.seed).await?;
    start_league(&mut admin, &args).await?;

    let mut client = league::arena_client(&demo.arena).await?;
    let league_started = Instant::now();
    let standings = follow_league(&mut client, &mut bots, league_started).await?;
    let info = standings.league.clone().unwrap_or_default();
    println!(
        "\nThe demo league: {} matches in {:.1} s ({:.0} matches/s) over gRPC, {:.1} s in all.\n",
        info.finished_matches,
        league_started.elapsed().as_secs_f64(),
        f64::from(info.finished_matches) / league_started.elapsed().as_secs_f64().max(0.001),
        started.elapsed().as_secs_f64()
    );
    print!("{}", league::render(&standings, Format::Table));
    let example = client
        .list_matches(pb::ListMatchesRequest {
            limit: 1,
            ..Default::default()
        })
        .await
        .ok()
        .and_then(|r| r.into_inner().matches.into_iter().next())
        .map(|m| m.match_id);
    print_reading_notes();
    let id = example.unwrap_or_else(|| "<match id>".to_owned());
    print_next_steps(args.serve, &demo, &database_url, &id);
    if args.serve {
        println!(
            "\nThe arena keeps running at {} (admin token: {}); Ctrl-C stops it.",
            demo.url, demo.admin_token
        );
        let _ = tokio::signal::ctrl_c().await;
    }
    bots.abort_all();
    let _ = demo.stop.send(());
    demo.server
        .await
        .context("the arena task failed")?
        .context("the arena failed")?;
    Ok(())
}

/// Removes the demo's own SQLite file (and its WAL files): every run starts afresh.
fn remove_demo_database() -> Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let file = format!("knobel-demo.db{suffix}");
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot replace {file}")),
        }
    }
    Ok(())
}

/// The demo's running arena.
struct DemoArena {
    /// Its gRPC address, `http://...`.
    url: String,
    /// The web viewer's page of the demo league.
    web: String,
    /// The admin token it was started with.
    admin_token: String,
    /// How the CLI's league commands reach it.
    arena: ArenaArgs,
    /// Stops it.
    stop: tokio::sync::oneshot::Sender<()>,
    /// The task serving it.
    server: tokio::task::JoinHandle<Result<(), ServeError>>,
}

/// Opens the store at `database_url` and starts the arena on `args.listen`, with the web
/// viewer (on its usual port if it is free) and a fresh admin token.
async fn start_arena(args: &DemoArgs, database_url: &str) -> Result<DemoArena> {
    let store = Store::connect(database_url)
        .await
        .with_context(|| format!("cannot open the store at {database_url}"))?;
    let admin_token = auth::generate_token();
    let config = ServerConfig {
        admin_token: Some(AdminToken::new(&admin_token)),
        max_streams_per_bot: STREAMS_PER_BOT,
        lobby: LobbyConfig {
            seats: 4,
            ..LobbyConfig::default()
        },
        ..ServerConfig::default()
    };
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr().context("no local address")?;
    // The web viewer, to watch the league live: on its usual port if it is free.
    let web_listener = knobel_arena::net::bind_web_viewer(None)
        .await
        .context("cannot listen for the web viewer")?
        .listener
        .context("the web viewer has a listener unless it is off")?;
    let web = format!(
        "http://{}/leagues/demo",
        web_listener.local_addr().context("no local address")?
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_with_web(
        config,
        store,
        listener,
        None,
        Some(web_listener),
        async {
            let _ = stopped.await;
        },
    ));
    let url = format!("http://{addr}");
    let arena = ArenaArgs {
        arena: url.clone(),
        admin_token: Some(admin_token.clone()),
    };
    eprintln!("knobel demo: arena at {url}, store {database_url}");
    eprintln!("watch it live in a browser: {web}");
    Ok(DemoArena {
        url,
        web,
        admin_token,
        arena,
        stop,
        server,
    })
}

/// The expert's tables, before its first decision (see ExpertPolicy::prepare).
async fn prepare_expert_tables() -> Result<()> {
    tokio::task::spawn_blocking(|| {
        for preset in knobel_engine::PRESETS {
            if let Ok(rules) = knobel_engine::Rules::preset(preset) {
                knobel_engine::policy::ExpertPolicy::prepare(&rules, 4);
            }
        }
    })
    .await
    .context("preparing the expert's tables failed")
}

/// Registers the demo bots over Admin and runs each as a gRPC client of the arena at
/// `url` with [`STREAMS_PER_BOT`] streams. Their randomness comes from `seed` when one is
/// given (a rerun plays the same).
async fn start_bots(
    admin: &mut league::Admin,
    url: &str,
    seed: Option<u64>,
) -> Result<tokio::task::JoinSet<Result<RunReport, BotError>>> {
    let mut bots = tokio::task::JoinSet::new();
    // The bots' own randomness: from the seed when one is given (a rerun plays the same).
    let bot_seed = seed.unwrap_or_else(rand::random);
    for (i, (name, strat)) in DEMO_BOTS.iter().enumerate() {
        let token = admin
            .add_bot(pb::AddBotRequest {
                name: (*name).to_owned(),
            })
            .await
            .map_err(|s| anyhow::anyhow!("cannot register {name}: {}", s.message()))?
            .into_inner()
            .token;
        for stream in 0..STREAMS_PER_BOT {
            let policy = strategy(strat, bot_seed ^ ((i * 16 + stream) as u64))
                .with_context(|| format!("unknown strategy {strat}"))?;
            let config =
                BotConfig::new(url.to_owned(), Token::new(token.clone()), *name, Game::ALL);
            bots.spawn(Bot::new(config, policy).run());
        }
    }
    eprintln!(
        "registered {} bots ({}), {} streams each",
        DEMO_BOTS.len(),
        bot_strategies(),
        STREAMS_PER_BOT
    );
    Ok(bots)
}

/// Creates and starts the league "demo" over Admin.
async fn start_league(admin: &mut league::Admin, args: &DemoArgs) -> Result<()> {
    let created = admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: league_file(args),
        })
        .await
        .map_err(|s| anyhow::anyhow!("cannot create the demo league: {}", s.message()))?
        .into_inner();
    let total = created.league.map_or(0, |l| l.total_matches);
    admin
        .start_league(pb::LeagueRequest {
            name: "demo".to_owned(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("cannot start the demo league: {}", s.message()))?;
    eprintln!(
        "league \"demo\": {total} matches (duplicate sets, every seat order), round robin over schocken, sjokken, zokken"
    );
    eprintln!(
        "(duplicate sets share their dice across seat orders: fine for the demo's built-in bots, which remember nothing between matches; leagues of outside bots play independent dice, docs/fair-play.md)"
    );
    Ok(())
}

/// Follows the demo league with a progress line until it ends: its final standings. Fails
/// if it takes over 10 minutes or a bot stops.
async fn follow_league(
    client: &mut ArenaClient<Channel>,
    bots: &mut tokio::task::JoinSet<Result<RunReport, BotError>>,
    league_started: Instant,
) -> Result<pb::GetStandingsResponse> {
    let terminal = std::io::stderr().is_terminal();
    let mut last_print = Instant::now() - Duration::from_secs(10);
    let standings = loop {
        let s = league::standings(client, "demo").await?;
        let info = s.league.clone().unwrap_or_default();
        let done = !league::is_active(&info);
        if terminal || last_print.elapsed() >= Duration::from_secs(5) || done {
            let line = league::progress_line(&info, Some((league_started.elapsed(), 0)));
            if terminal {
                eprint!("\r{line}\x1b[K");
            } else {
                eprintln!("{line}");
            }
            let _ = std::io::stderr().flush();
            last_print = Instant::now();
        }
        if done {
            break s;
        }
        if league_started.elapsed() > Duration::from_secs(600) {
            bail!("the demo league did not finish within 10 minutes");
        }
        if bots.is_empty()
            || bots
                .try_join_next()
                .is_some_and(|r| r.is_ok_and(|r| r.is_err()))
        {
            bail!("a demo bot stopped: see the log above");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    if terminal {
        eprintln!();
    }
    Ok(standings)
}

/// How to read the standings.
fn print_reading_notes() {
    println!(
        "\nRanked by the luck-adjusted score where every match has one (docs/luck.md), else by mean"
    );
    println!("place (Zokken: by chips per 100 rounds); ratings are Weng-Lin (mu ± sd),");
    println!(
        "computed in schedule order; intervals are 95%. Luck is shared: each table played the"
    );
    println!(
        "same dice in every seat order (dice = \"duplicate\": the demo's bots are built-in players,"
    );
    println!("which remember nothing between matches; outside bots play independent dice).");
    println!("The bots and their built-in strategies (docs/bots.md):");
    println!("  {}\n", bot_strategies());
}

/// How to look around after the demo, with match `id` as the example: at the running
/// arena (`serve`) or by serving the stored demo again.
fn print_next_steps(serve: bool, demo: &DemoArena, database_url: &str, id: &str) {
    let (url, web, admin_token) = (&demo.url, &demo.web, &demo.admin_token);
    if serve {
        println!("Look around (the arena keeps running):");
        println!("  {web}   # the standings, and every match, in a browser");
        println!(
            "  cargo run --release -- match show {id} --arena {url}   # a match, throw by throw"
        );
        println!("  cargo run --release -- league standings demo --arena {url} --format csv");
        println!("Point a bot of your own at it:");
        println!(
            "  cargo run --release -- bot add my-bot --arena {url} --admin-token {admin_token}   # prints its token"
        );
        println!(
            "  cargo run --release -p knobel-bots --bin knobel-bot -- --arena {url} --token <token> --name my-bot"
        );
    } else {
        println!(
            "Everything is stored in {database_url}. To look around, serve it (practice mode: a bot of yours"
        );
        println!("plays built-in players at once):");
        println!("  cargo run --release -- serve --practice --database-url {database_url}");
        println!(
            "and open http://127.0.0.1:8080/leagues/demo in a browser, or in another terminal:"
        );
        println!("  cargo run --release -- match show {id}   # a match, throw by throw");
        println!("  cargo run --release -- league standings demo --format csv");
        println!("Point a bot of your own at the same arena:");
        println!(
            "  cargo run --release -- bot add my-bot --database-url {database_url}   # prints its token"
        );
        println!(
            "  cargo run --release -p knobel-bots --bin knobel-bot -- --token <token> --name my-bot"
        );
    }
    println!(
        "  (any language: docs/writing-a-bot.md; the contract is proto/knobel/v1/arena.proto)"
    );
}

/// "maven: expert, ace: heuristic, ...": which built-in player each demo bot is.
fn bot_strategies() -> String {
    DEMO_BOTS
        .iter()
        .map(|(name, strategy)| format!("{name}: {strategy}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An Admin client, once the arena answers.
async fn wait_for_admin(
    arena: &ArenaArgs,
) -> Result<impl std::ops::DerefMut<Target = league::Admin>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match league::admin_client(arena).await {
            Ok(client) => return Ok(Box::new(client)),
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}
