//! `knobel`: the Knobel command line.

mod cli;
mod simulate;

use std::io::IsTerminal;
use std::net::SocketAddr;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use knobel_arena::auth;
use knobel_arena::net;
use knobel_arena::server::serve_with_web;
use knobel_arena::settings::{self, NetArgs, RawSettings};
use knobel_arena::store::Store;
use tokio::net::TcpListener;
use tracing::{info, warn};

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
    Serve(Box<ServeArgs>),
    /// Register, list and revoke bots.
    #[command(subcommand)]
    Bot(BotCommand),
    /// Play your bot against built-in players, on an arena of its own: no server to run,
    /// nothing to register (`--exec CMD` for a stdin/stdout program, `--connect` for a gRPC
    /// bot). Prints each match's result, the bot's strikes and the first match throw by
    /// throw.
    Play(Box<cli::play::PlayArgs>),
    /// Play a league of the built-in policies in-process and print standings per game.
    Simulate(simulate::SimulateArgs),
    /// The demo: an arena on a fresh SQLite file, seven built-in bots as gRPC clients, a
    /// round-robin league over the three games, its standings.
    Demo(cli::demo::DemoArgs),
    /// Create, start, pause, cancel leagues; show their progress and standings.
    #[command(subcommand)]
    League(cli::league::LeagueCommand),
    /// Show a match.
    #[command(subcommand)]
    Match(cli::league::MatchCommand),
    /// Ask an arena's gRPC health service whether it serves: exit status 0 if it does, 1 if
    /// not (for container health checks).
    Health(cli::health::HealthArgs),
}

#[derive(Args, Debug)]
struct DatabaseArgs {
    /// The store: an SQLite file (default) or a PostgreSQL URL.
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://knobel.db")]
    database_url: String,
}

/// `knobel bot add`'s way to a running arena.
#[derive(Args, Debug)]
struct RemoteArgs {
    /// Register through this running arena's Admin service (its gRPC address, as its
    /// `knobel arena listening on` line says) instead of writing to a database file.
    #[arg(long)]
    arena: Option<String>,
    /// The arena's admin token (with --arena).
    #[arg(
        long,
        env = "KNOBEL_ADMIN_TOKEN",
        hide_env_values = true,
        requires = "arena"
    )]
    admin_token: Option<String>,
}

/// `knobel serve` flags. Each numeric flag can also be given by its environment variable;
/// the values are checked by `settings::RawSettings::validate` (bounds in `settings`).
#[derive(Args, Debug)]
struct ServeArgs {
    #[command(flatten)]
    database: DatabaseArgs,
    /// Address of the gRPC server (port 0 picks a free port).
    #[arg(long, env = "KNOBEL_LISTEN", default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Address of the Prometheus metrics endpoint (`/metrics`).
    #[arg(long, env = "KNOBEL_METRICS_LISTEN", default_value = "127.0.0.1:9464")]
    metrics_listen: SocketAddr,
    /// Address of the web viewer (leagues, live standings, matches; docs/web.md), or `off`
    /// for none (port 0 picks a free port). Default: 127.0.0.1:8080, or a free port when
    /// another program (say, another arena) has it.
    #[arg(long, env = "KNOBEL_WEB_LISTEN")]
    web_listen: Option<settings::WebListen>,
    /// Seat a bot that finds no opponents against built-in players (practice mode).
    #[arg(long)]
    practice: bool,
    #[arg(long, env = settings::PRACTICE_WAIT_MS.env, help = settings::PRACTICE_WAIT_MS.help("How long a bot waits for other bots before practice mode fills its match"), default_value_t = RawSettings::default().practice_wait_ms)]
    practice_wait_ms: u64,
    /// The built-in player practice mode seats: heuristic, or expert for the strongest (any
    /// built-in player name).
    #[arg(long, default_value = "heuristic", value_parser = clap::builder::PossibleValuesParser::new(knobel_engine::policy::POLICY_NAMES))]
    practice_opponent: String,
    #[arg(long, env = settings::SEATS.env, help = settings::SEATS.help("Seats per match"), default_value_t = RawSettings::default().seats)]
    seats: u64,
    #[arg(long, env = settings::DECISION_MS.env, help = settings::DECISION_MS.help("Deadline of each decision"), default_value_t = RawSettings::default().decision_ms)]
    decision_ms: u64,
    #[arg(long, env = settings::TIME_BANK_MS.env, help = settings::TIME_BANK_MS.help("Time bank per seat and match"), default_value_t = RawSettings::default().time_bank_ms)]
    time_bank_ms: u64,
    /// Rounds per Zokken match (default: the preset's); checked against the engine's rules
    /// at start-up, which name the legal range if it is out of it.
    #[arg(long, env = settings::ZOKKEN_ROUNDS.env)]
    zokken_rounds: Option<u64>,
    #[arg(long, env = settings::MAX_STREAMS_PER_BOT.env, help = settings::MAX_STREAMS_PER_BOT.help("Most Play streams one bot may have open at once"), default_value_t = RawSettings::default().max_streams_per_bot)]
    max_streams_per_bot: u64,
    #[arg(long, env = settings::SHUTDOWN_GRACE_SECS.env, help = settings::SHUTDOWN_GRACE_SECS.help("How long running matches get to finish on shutdown before they are aborted"), default_value_t = RawSettings::default().shutdown_grace_secs)]
    shutdown_grace_secs: u64,
    #[arg(long, env = settings::INSTANCE_LEASE_SECS.env, help = settings::INSTANCE_LEASE_SECS.help("How long each renewal of this arena's lease in the database holds (renewed every third of it): other arenas on the same database abort this one's running matches only once it has not renewed its lease for this long"), default_value_t = RawSettings::default().instance_lease_secs)]
    instance_lease_secs: u64,
    #[arg(long, env = settings::STORE_TIMEOUT_MS.env, help = settings::STORE_TIMEOUT_MS.help("How long a store call (waiting for a connection included) may take before it fails: what a client waits at most while the database is unavailable"), default_value_t = RawSettings::default().store_timeout_ms)]
    store_timeout_ms: u64,
    /// The admin token for the Admin service (bot registration over gRPC), 16..=256 visible
    /// ASCII characters; unset disables it.
    #[arg(long, env = "KNOBEL_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    #[command(flatten)]
    net: NetArgs,
    #[command(flatten)]
    cluster: ClusterArgs,
}

/// Cluster mode: several arenas on one PostgreSQL play one league (docs/operations.md,
/// "Several arenas").
#[derive(Args, Debug)]
struct ClusterArgs {
    /// Cluster mode: the NATS server (core NATS, e.g. nats://nats:4222) that carries the
    /// arenas' presence and seat reservations. Needs a PostgreSQL --database-url.
    #[arg(long, env = "KNOBEL_NATS_URL")]
    nats_url: Option<String>,
    /// Cluster mode: address of the peer port, where other arenas link the seats of bots
    /// waiting here (port 0 picks a free port). Expose it to arenas only.
    #[arg(long, env = "KNOBEL_PEER_LISTEN", default_value = "127.0.0.1:50052")]
    peer_listen: SocketAddr,
    /// Cluster mode: the address other arenas reach this arena's peer port at (host:port);
    /// default: the bound --peer-listen address. Checked at start-up.
    #[arg(long, env = "KNOBEL_PEER_ADVERTISE")]
    peer_advertise: Option<String>,
    /// Cluster mode: the token every call between arenas carries, the same on every arena
    /// (16..=256 visible ASCII characters).
    #[arg(long, env = "KNOBEL_PEER_TOKEN", hide_env_values = true)]
    peer_token: Option<String>,
}

impl ClusterArgs {
    /// The cluster's configuration, if cluster mode is asked for.
    fn config(&self) -> Option<knobel_arena::cluster::ClusterConfig> {
        let nats_url = self.nats_url.clone()?;
        Some(knobel_arena::cluster::ClusterConfig {
            nats_url,
            peer_listen: self.peer_listen,
            peer_advertise: self.peer_advertise.clone(),
            peer_token: self.peer_token.clone().unwrap_or_default(),
        })
    }
}

impl ServeArgs {
    /// The settings as given, to be checked.
    fn raw_settings(&self) -> RawSettings {
        RawSettings {
            seats: self.seats,
            practice: self.practice,
            practice_wait_ms: self.practice_wait_ms,
            practice_opponent: knobel_engine::policy::POLICY_NAMES
                .into_iter()
                .find(|&name| name == self.practice_opponent)
                .unwrap_or("heuristic"),
            decision_ms: self.decision_ms,
            time_bank_ms: self.time_bank_ms,
            zokken_rounds: self.zokken_rounds,
            max_streams_per_bot: self.max_streams_per_bot,
            shutdown_grace_secs: self.shutdown_grace_secs,
            instance_lease_secs: self.instance_lease_secs,
            store_timeout_ms: self.store_timeout_ms,
            admin_token: self.admin_token.clone(),
        }
    }
}

#[derive(Subcommand, Debug)]
enum BotCommand {
    /// Register a bot and print its token (shown only this once).
    Add {
        /// The bot's name. The rule (the same for names in Hello): see below.
        #[arg(long_help = bot_name_help())]
        name: String,
        #[command(flatten)]
        database: DatabaseArgs,
        /// Create the SQLite file if there is none (else a missing file is an error: an
        /// arena's store is created by `knobel serve` or `knobel demo`).
        #[arg(long)]
        create: bool,
        #[command(flatten)]
        remote: RemoteArgs,
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

/// `knobel bot add NAME`'s help: exactly the rule `knobel_proto::names::check_name` applies.
fn bot_name_help() -> String {
    format!("The bot's name: {}.", knobel_proto::names::rule())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    // The demo prints its own progress: only warnings from the arena it runs.
    let default_filter = match cli.command {
        Command::Demo(_) | Command::Play(_) => "warn",
        _ => "info,sqlx=warn",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| default_filter.into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    match cli.command {
        Command::Simulate(args) => simulate::run(&args),
        Command::Serve(args) => runtime()?.block_on(run_serve(*args)),
        Command::Bot(command) => runtime()?.block_on(run_bot(command)),
        Command::Demo(args) => runtime()?.block_on(cli::demo::run(args)),
        Command::Play(args) => runtime()?.block_on(cli::play::run(*args)),
        Command::League(command) => runtime()?.block_on(cli::league::run(command)),
        Command::Match(command) => runtime()?.block_on(cli::league::run_match(command)),
        Command::Health(args) => runtime()?.block_on(cli::health::run(args)),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The file of an `sqlite:` URL (without its query), `None` for other stores.
fn sqlite_file(url: &str) -> Option<&str> {
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    Some(path.split('?').next().unwrap_or(path))
}

/// The store of `knobel bot ...`: an existing one, unless `create` says to make it.
async fn open_existing_store(database: &DatabaseArgs, create: bool) -> Result<Store> {
    if let Some(file) = sqlite_file(&database.database_url)
        && !create
        && !std::path::Path::new(file).exists()
    {
        bail!(
            "there is no store at {file} (in {}): `knobel serve` and `knobel demo` create an arena's store; run this in the arena's folder or give its --database-url, register through the running arena with --arena ADDRESS --admin-token TOKEN, or pass --create to start a new store here",
            std::env::current_dir()
                .map_or_else(|_| "this folder".to_owned(), |d| d.display().to_string())
        );
    }
    open_store(database).await
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
        BotCommand::Add {
            name,
            database,
            create,
            remote,
        } => {
            auth::check_bot_name(&name)?;
            let (token, place) = match remote.arena {
                Some(arena) => {
                    let token = cli::league::add_bot(
                        &cli::league::ArenaArgs {
                            arena: arena.clone(),
                            admin_token: remote.admin_token,
                        },
                        &name,
                    )
                    .await?;
                    (token, format!("with the arena at {arena}"))
                }
                None => {
                    let store = open_existing_store(&database, create).await?;
                    let token = auth::generate_token();
                    store
                        .add_bot(&name, &auth::hash_token(&token))
                        .await
                        .with_context(|| {
                            format!("cannot register bot {}", knobel_engine::quoted(&name))
                        })?;
                    (
                        token,
                        format!("in the store {}", redact(&database.database_url)),
                    )
                }
            };
            println!("registered bot {name} {place}; its token (shown only now, keep it secret):");
            println!("{token}");
        }
        BotCommand::List { database } => {
            let store = open_existing_store(&database, false).await?;
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
            let store = open_existing_store(&database, false).await?;
            let revoked = store
                .revoke_bot(&name)
                .await
                .with_context(|| format!("cannot revoke bot {}", knobel_engine::quoted(&name)))?;
            anyhow::ensure!(
                revoked,
                "no active bot named {}: see `knobel bot list`",
                knobel_engine::quoted(&name)
            );
            // A running arena on this database ends the bot's open streams within
            // `streams::REVOKE_POLL` (its running seats forfeit).
            println!(
                "revoked bot {name}; a running arena ends its open streams within {} s",
                knobel_arena::streams::REVOKE_POLL.as_secs()
            );
        }
    }
    Ok(())
}

async fn run_serve(args: ServeArgs) -> Result<()> {
    // Every setting is checked before anything starts. Every connection is a file: the
    // soft open-file limit is raised to the hard one and connections are bounded by what it
    // carries. Matches of an earlier run are aborted by `serve` once their arena's lease has
    // run out (never those of another arena that is alive).
    let settings = args
        .raw_settings()
        .validate()
        .context("invalid settings for knobel serve")?;
    if args.cluster.nats_url.is_some() && sqlite_file(&args.database.database_url).is_some() {
        bail!(
            "--nats-url needs a PostgreSQL store (the cluster's authority), not SQLite: give --database-url postgres://..., or drop --nats-url to run one arena on SQLite"
        );
    }
    let fd_limit = net::raise_fd_limit().context("cannot read or raise the open-file limit")?;
    let net_limits = args
        .net
        .limits(fd_limit)
        .context("invalid settings for knobel serve")?;
    info!(
        fd_limit,
        max_connections = net_limits.max_connections,
        max_connections_per_peer = net_limits.max_connections_per_peer,
        "connection bounds"
    );
    let store = open_store(&args.database)
        .await?
        .with_timeout(settings.store_timeout);
    let shutdown = shutdown_signal()?;
    let listener = bind(args.listen, "--listen", "").await?;
    let metrics_listener = bind(args.metrics_listen, "--metrics-listen", " for metrics").await?;
    let web = net::bind_web_viewer(args.web_listen.map(|web| web.0))
        .await
        .map_err(|e| {
            let addr = args.web_listen.and_then(|web| web.0);
            listen_error(e, addr, "--web-listen", " for the web viewer")
        })?;
    let addr = listener.local_addr().context("no local address")?;
    let metrics_addr = metrics_listener.local_addr().context("no local address")?;
    if let Some(notice) = &web.notice {
        warn!("{notice}");
    }
    // Machine-readable first lines, for scripts and tests that bind port 0.
    println!("knobel arena listening on {addr}");
    println!("knobel metrics on http://{metrics_addr}/metrics");
    if let Some(web) = &web.listener {
        let web_addr = web.local_addr().context("no local address")?;
        println!("knobel web on http://{web_addr}/");
    }
    let mut config = settings.server_config(net_limits);
    config.cluster = args.cluster.config();
    let lobby = config.lobby.clone();
    tokio::task::spawn_blocking(move || lobby.prepare_builtins())
        .await
        .context("preparing the built-in players failed")?;
    serve_with_web(
        config,
        store,
        listener,
        Some(metrics_listener),
        web.listener,
        shutdown,
    )
    .await
    .context("the arena failed")
}

/// Binds `addr`, given as `flag` (`what` names the endpoint for the message).
async fn bind(addr: SocketAddr, flag: &str, what: &str) -> Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| listen_error(e, Some(addr), flag, what))
}

/// Why an address could not be bound; an address in use says how to run another arena
/// beside the one that has it.
fn listen_error(
    e: std::io::Error,
    addr: Option<SocketAddr>,
    flag: &str,
    what: &str,
) -> anyhow::Error {
    let at = addr.map(|addr| format!(" on {addr}")).unwrap_or_default();
    let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
        let off = if flag == "--web-listen" {
            " or off"
        } else {
            ""
        };
        format!(
            " (the address is taken, perhaps by another arena on this host: give {flag} \
             127.0.0.1:0 for a free port{off}; docs/operations.md, \"Several arenas on one host\")"
        )
    } else {
        String::new()
    };
    anyhow::Error::new(e).context(format!("cannot listen{what}{at}{hint}"))
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
