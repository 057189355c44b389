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
use knobel_arena::server::{ServerConfig, serve_with_web};
use knobel_arena::store::Store;
use knobel_bots::{Bot, BotConfig, Game, Token, strategy};
use knobel_engine::policy::HEURISTIC_LADDER;
use knobel_proto::v1 as pb;
use tokio::net::TcpListener;

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
        for suffix in ["", "-wal", "-shm"] {
            let file = format!("knobel-demo.db{suffix}");
            match std::fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("cannot replace {file}")),
            }
        }
    }
    let store = Store::connect(&database_url)
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

    // The expert's tables, before its first decision (see ExpertPolicy::prepare).
    tokio::task::spawn_blocking(|| {
        for preset in knobel_engine::PRESETS {
            if let Ok(rules) = knobel_engine::Rules::preset(preset) {
                knobel_engine::policy::ExpertPolicy::prepare(&rules, 4);
            }
        }
    })
    .await
    .context("preparing the expert's tables failed")?;
    // The bots: registered over Admin, each a real gRPC client with a few streams.
    let mut admin = wait_for_admin(&arena).await?;
    let mut bots = tokio::task::JoinSet::new();
    // The bots' own randomness: from the seed when one is given (a rerun plays the same).
    let bot_seed = args.seed.unwrap_or_else(rand::random);
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
            let config = BotConfig::new(url.clone(), Token::new(token.clone()), *name, Game::ALL);
            bots.spawn(Bot::new(config, policy).run());
        }
    }
    eprintln!(
        "registered {} bots ({}), {} streams each",
        DEMO_BOTS.len(),
        bot_strategies(),
        STREAMS_PER_BOT
    );

    let created = admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: league_file(&args),
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

    let mut client = league::arena_client(&arena).await?;
    let league_started = Instant::now();
    let terminal = std::io::stderr().is_terminal();
    let mut last_print = Instant::now() - Duration::from_secs(10);
    let standings = loop {
        let s = league::standings(&mut client, "demo").await?;
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
    let id = example.unwrap_or_else(|| "<match id>".to_owned());
    if args.serve {
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
    if args.serve {
        println!(
            "\nThe arena keeps running at {url} (admin token: {admin_token}); Ctrl-C stops it."
        );
        let _ = tokio::signal::ctrl_c().await;
    }
    bots.abort_all();
    let _ = stop.send(());
    server
        .await
        .context("the arena task failed")?
        .context("the arena failed")?;
    Ok(())
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
