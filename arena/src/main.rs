//! `knobel`: the Knobel command line.

mod simulate;

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use knobel_arena::auth;
use knobel_arena::lobby::LobbyConfig;
use knobel_arena::net::{self, NetArgs};
use knobel_arena::referee::TimeControl;
use knobel_arena::server::{ServerConfig, serve};
use knobel_arena::store::Store;
use tokio::net::TcpListener;
use tracing::info;

/// Knobel: a tournament arena for bots playing Schocken, Sjokken and Zokken.
#[derive(Parser, Debug)]
#[command(name = "knobel", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the arena: bots connect over gRPC and play refereed matches.
    Serve(ServeArgs),
    /// Register, list and revoke bots.
    #[command(subcommand)]
    Bot(BotCommand),
    /// Play a league of the built-in policies in-process and print standings per game.
    Simulate(simulate::SimulateArgs),
}

#[derive(Args, Debug)]
struct DatabaseArgs {
    /// The store: an SQLite file (default) or a PostgreSQL URL.
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://knobel.db")]
    database_url: String,
}

#[derive(Args, Debug)]
struct ServeArgs {
    #[command(flatten)]
    database: DatabaseArgs,
    /// Address of the gRPC server (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Address of the Prometheus metrics endpoint (`/metrics`).
    #[arg(long, default_value = "127.0.0.1:9464")]
    metrics_listen: SocketAddr,
    /// Seat a bot that finds no opponents against built-in players (practice mode).
    #[arg(long)]
    practice: bool,
    /// How long a bot waits for other bots before practice mode fills its match.
    #[arg(long, default_value_t = 500)]
    practice_wait_ms: u64,
    /// Seats per match.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(2..=10))]
    seats: u8,
    /// Deadline of each decision, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    decision_ms: u64,
    /// Time bank per seat and match, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    time_bank_ms: u64,
    /// Rounds per Zokken match (default: the preset's 100).
    #[arg(long)]
    zokken_rounds: Option<u32>,
    /// Most Play streams one bot may have open at once.
    #[arg(long, default_value_t = 8)]
    max_streams_per_bot: usize,
    /// Seconds running matches get to finish on shutdown before they are aborted.
    #[arg(long, default_value_t = 5)]
    shutdown_grace_secs: u64,
    /// The admin token for the Admin service (bot registration over gRPC); unset disables it.
    #[arg(long, env = "KNOBEL_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    #[command(flatten)]
    net: NetArgs,
}

#[derive(Subcommand, Debug)]
enum BotCommand {
    /// Register a bot and print its token (shown only this once).
    Add {
        /// The bot's name: 1..=64 letters, digits, '-', '_' or '.'.
        name: String,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// List registered bots.
    List {
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Revoke a bot's token; it can no longer connect.
    Revoke {
        /// The bot's name.
        name: String,
        #[command(flatten)]
        database: DatabaseArgs,
    },
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,sqlx=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Simulate(args) => simulate::run(&args),
        Command::Serve(args) => runtime()?.block_on(run_serve(args)),
        Command::Bot(command) => runtime()?.block_on(run_bot(command)),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

async fn open_store(database: &DatabaseArgs) -> Result<Store> {
    Store::connect(&database.database_url)
        .await
        .with_context(|| {
            format!(
                "cannot open the store at {}",
                redact(&database.database_url)
            )
        })
}

/// A database URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://***@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

async fn run_bot(command: BotCommand) -> Result<()> {
    match command {
        BotCommand::Add { name, database } => {
            auth::check_bot_name(&name)?;
            let store = open_store(&database).await?;
            let token = auth::generate_token();
            store
                .add_bot(&name, &auth::hash_token(&token))
                .await
                .with_context(|| format!("cannot register bot {name:?}"))?;
            println!("registered bot {name}; its token (shown only now, keep it secret):");
            println!("{token}");
        }
        BotCommand::List { database } => {
            let store = open_store(&database).await?;
            let bots = store.list_bots().await.context("cannot list bots")?;
            println!("{:<32} {:<10}", "name", "status");
            for bot in bots {
                let status = if bot.revoked_at_ms.is_some() {
                    "revoked"
                } else {
                    "active"
                };
                println!("{:<32} {:<10}", bot.name, status);
            }
        }
        BotCommand::Revoke { name, database } => {
            let store = open_store(&database).await?;
            let revoked = store
                .revoke_bot(&name)
                .await
                .with_context(|| format!("cannot revoke bot {name:?}"))?;
            anyhow::ensure!(
                revoked,
                "no active bot named {name:?}: see `knobel bot list`"
            );
            println!("revoked bot {name}");
        }
    }
    Ok(())
}

async fn run_serve(args: ServeArgs) -> Result<()> {
    // Every connection is a file: raise the soft open-file limit to the hard one and bound
    // connections by what it carries.
    let fd_limit = net::raise_fd_limit().context("cannot read or raise the open-file limit")?;
    let net_limits = args.net.limits(fd_limit)?;
    info!(
        fd_limit,
        max_connections = net_limits.max_connections,
        max_connections_per_peer = net_limits.max_connections_per_peer,
        "connection bounds"
    );
    let store = open_store(&args.database).await?;
    let aborted = store
        .mark_running_as_aborted("the arena stopped while the match was running")
        .await
        .context("cannot clean up matches of an earlier run")?;
    if aborted > 0 {
        info!(aborted, "matches of an earlier run marked aborted");
    }
    let shutdown = shutdown_signal()?;
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let metrics_listener = TcpListener::bind(args.metrics_listen)
        .await
        .with_context(|| format!("cannot listen for metrics on {}", args.metrics_listen))?;
    let addr = listener.local_addr().context("no local address")?;
    let metrics_addr = metrics_listener.local_addr().context("no local address")?;
    // Machine-readable first lines, for scripts and tests that bind port 0.
    println!("knobel arena listening on {addr}");
    println!("knobel metrics on http://{metrics_addr}/metrics");
    let config = ServerConfig {
        lobby: LobbyConfig {
            seats: args.seats as usize,
            practice: args.practice,
            practice_wait: Duration::from_millis(args.practice_wait_ms),
            time_control: TimeControl {
                decision: Duration::from_millis(args.decision_ms),
                bank: Duration::from_millis(args.time_bank_ms),
            },
            zokken_rounds: args.zokken_rounds,
        },
        max_streams_per_bot: args.max_streams_per_bot,
        shutdown_grace: Duration::from_secs(args.shutdown_grace_secs),
        admin_token: args.admin_token.as_deref().map(auth::AdminToken::new),
        net: net_limits,
    };
    serve(config, store, listener, Some(metrics_listener), shutdown)
        .await
        .context("the arena failed")
}

/// Installs the SIGINT and SIGTERM handlers now and returns a future that resolves on
/// either. Installing them before the listening lines are printed matters: a script (or a
/// test) may send SIGTERM as soon as it sees them, and a handler that is only installed when
/// the future is first polled would let that signal kill the process.
fn shutdown_signal() -> Result<impl Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    let signal = {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt =
            signal(SignalKind::interrupt()).context("cannot install the SIGINT handler")?;
        let mut terminate =
            signal(SignalKind::terminate()).context("cannot install the SIGTERM handler")?;
        async move {
            tokio::select! {
                _ = interrupt.recv() => {},
                _ = terminate.recv() => {},
            }
        }
    };
    #[cfg(not(unix))]
    let signal = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    Ok(async move {
        signal.await;
        info!("shutting down");
    })
}
