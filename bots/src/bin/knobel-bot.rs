//! `knobel-bot`: a reference bot for the Knobel arena.
//!
//! Plays with one of the engine's built-in strategies and prints one line per match on
//! stdout: `match <id> <game> place <p>/<n> requests <r> strikes <s> forfeited <bool>
//! errors [<codes>]` (with ` aborted` after the place when the match was aborted). Logs go to stderr (`RUST_LOG`, default `info`). With `--exec CMD [ARGS...]`
//! a program decides instead, over JSON lines on its stdin and stdout (docs/stdio-bots.md).
//! Built with the feature
//! `testing`, it takes `--misbehave MODE` to break the rules on purpose, for testing arenas.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use knobel_bots::{Bot, BotConfig, ExecBot, Game, Program, STRATEGIES, Token, strategy};
#[cfg(feature = "testing")]
use knobel_bots::{Misbehave, misbehave};
use knobel_engine::RulesError;
use tracing::info;

/// A reference bot for the Knobel arena: plays Schocken, Sjokken and Zokken with a built-in
/// strategy, printing `match <id> <game> place <p>/<n> requests <r> strikes <s> forfeited
/// <bool> errors [<codes>]` per match.
#[derive(Parser, Debug)]
#[command(name = "knobel-bot", version)]
struct Cli {
    #[arg(long, default_value = "heuristic", help = strategy_help(), value_parser = clap::builder::PossibleValuesParser::new(STRATEGIES))]
    strategy: String,
    /// The arena's gRPC address, http://HOST:PORT (as its `knobel arena listening on` line
    /// says; `--server` is an older name for it). Replicas of an arena cluster without a
    /// load balancer: their addresses separated by commas, tried in turn on each reconnect.
    #[arg(
        long = "arena",
        alias = "server",
        env = "KNOBEL_SERVER",
        default_value = "http://127.0.0.1:50051"
    )]
    server: String,
    /// The bot's token, as `knobel bot add NAME` printed it. Prefer the environment
    /// variable: a command line is visible to other users of the machine.
    #[arg(long, env = "KNOBEL_TOKEN", hide_env_values = true)]
    token: String,
    /// The display name sent in the Hello (default: knobel-bot-<strategy>).
    #[arg(long)]
    name: Option<String>,
    /// The games to play, comma-separated. Without --preset the arena seats the bot in
    /// matches of the first game's preset.
    #[arg(long, value_delimiter = ',', default_value = "schocken,sjokken,zokken", value_parser = parse_game)]
    games: Vec<Game>,
    /// A preset to ask for: schocken, schocken-typenclub, sjokken or zokken.
    #[arg(long)]
    preset: Option<String>,
    /// Stop after this many matches (default: play until interrupted).
    #[arg(long)]
    matches: Option<u32>,
    /// Seed of the random strategy (default: drawn at random).
    #[arg(long)]
    seed: Option<u64>,
    /// Give up after this many failed connection attempts in a row (default: never).
    #[arg(long)]
    max_attempts: Option<u32>,
    /// Seconds between keep-alive pings (0: none).
    #[arg(long, default_value_t = 20)]
    ping_secs: u64,
    /// Misbehave on purpose, to test the arena: never-answer, late:<ms>, illegal, stale,
    /// disconnect-after:<n>, garbage, oversized.
    #[cfg(feature = "testing")]
    #[arg(long, value_parser = parse_misbehave)]
    misbehave: Option<Misbehave>,
    /// Let a program decide instead of a strategy: it reads the arena's messages as JSON
    /// lines on its stdin and prints one Decision per line (docs/stdio-bots.md). The last
    /// option: every word after it is the program's command line.
    #[arg(long, num_args = 1.., allow_hyphen_values = true, value_name = "CMD [ARGS]...")]
    exec: Vec<OsString>,
}

/// `--strategy`'s help: every strategy it takes.
fn strategy_help() -> String {
    format!(
        "The strategy: one of {} (docs/bots.md describes them)",
        STRATEGIES.join(", ")
    )
}

fn parse_game(text: &str) -> Result<Game, String> {
    text.trim().parse().map_err(|_| {
        RulesError::UnknownGame {
            name: text.to_owned(),
        }
        .to_string()
    })
}

#[cfg(feature = "testing")]
fn parse_misbehave(text: &str) -> Result<Misbehave, String> {
    text.parse()
        .map_err(|e: misbehave::UnknownMode| e.to_string())
}

fn main() -> ExitCode {
    match try_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // `{:#}` prints the causes on one line, without a backtrace.
            eprintln!("knobel-bot: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn try_main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(run(cli))
}

async fn run(cli: Cli) -> Result<()> {
    let seed = cli.seed.unwrap_or_else(rand::random);
    let policy = strategy(&cli.strategy, seed).context("unknown strategy")?;
    let exec = !cli.exec.is_empty();
    let name = cli.name.unwrap_or_else(|| {
        if exec {
            "knobel-bot-exec".to_owned()
        } else {
            format!("knobel-bot-{}", cli.strategy)
        }
    });
    if cli.strategy == "expert" && !exec {
        prepare_expert(&cli.games, cli.preset.as_deref()).await?;
    }
    let mut config = BotConfig::new(cli.server, Token::new(cli.token), name, cli.games);
    config.preset = cli.preset;
    config.max_matches = cli.matches;
    config.max_attempts = cli.max_attempts;
    config.ping_interval = (cli.ping_secs > 0).then(|| Duration::from_secs(cli.ping_secs));
    #[cfg(feature = "testing")]
    {
        config.misbehave = cli.misbehave;
        if let Some(mode) = config.misbehave {
            info!(%mode, "misbehaving on purpose");
        }
    }
    let print = |summary: &knobel_bots::MatchSummary| println!("{summary}");
    let play = if exec {
        let mut words = cli.exec.into_iter();
        let program = Program {
            command: words.next().expect("--exec takes at least one word"),
            args: words.collect(),
        };
        info!(program = %program.display(), "a program decides (stdin/stdout bridge)");
        Box::pin(ExecBot::new(config, program).on_match_end(print).run())
            as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>>
    } else {
        Box::pin(Bot::new(config, policy).on_match_end(print).run())
    };
    tokio::select! {
        report = play => {
            let report = report.context("the bot stopped")?;
            info!(matches = report.matches.len(), connections = report.connections, "done");
            Ok(())
        }
        _ = shutdown_signal() => {
            info!("interrupted; leaving");
            Ok(())
        }
    }
}

/// Builds the expert's tables for `games` (the preset asked for, else each game's default)
/// before the bot says Hello: building them on its first decision can take longer than the
/// deadline.
async fn prepare_expert(games: &[Game], preset: Option<&str>) -> Result<()> {
    let mut rules = Vec::new();
    for game in games {
        let name = preset
            .filter(|p| knobel_engine::Rules::preset(p).is_ok_and(|r| r.game() == *game))
            .unwrap_or(game.name());
        rules.push(knobel_engine::Rules::preset(name)?);
    }
    let started = std::time::Instant::now();
    tokio::task::spawn_blocking(move || {
        for rules in &rules {
            // The arena's default table: four seats (a model built for more players
            // after a seat covers fewer).
            knobel_engine::policy::ExpertPolicy::prepare(rules, 4);
        }
    })
    .await
    .context("preparing the expert's tables failed")?;
    info!(
        ms = started.elapsed().as_millis() as u64,
        "the expert's tables are ready"
    );
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
