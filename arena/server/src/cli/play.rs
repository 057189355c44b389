//! `knobel play`: a bot's first sparring, without a server to run or a bot to register. It
//! starts an arena of its own on 127.0.0.1 (a fresh SQLite file in a temporary folder,
//! practice mode seating the chosen built-in players at once), registers the bot, and
//! either runs the bot's program over the stdin/stdout bridge (`--exec CMD`, the protocol of
//! `knobel-bot --exec`, docs/stdio-bots.md) or prints the address and token for a gRPC bot
//! and waits for it (`--connect`). Then it prints each match's result, the bot's strikes
//! with what the arena said, and the first match throw by throw (`knobel match show`'s
//! account).

use std::ffi::OsString;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use knobel_arena::auth;
use knobel_arena::server::serve_with_web;
use knobel_arena::settings::{NetLimits, RawSettings};
use knobel_arena::store::{MatchFilter, MatchStatus, MatchSummary as StoredMatch, Store};
use knobel_bots::{BotConfig, ExecBot, MatchSummary, Program, Token};
use knobel_engine::policy::POLICY_NAMES;
use knobel_engine::{Game, LogEntry, MatchLog, PRESETS, Rules};
use tokio::net::TcpListener;

/// Options of `knobel play`.
#[derive(Args, Debug)]
pub struct PlayArgs {
    /// The preset to play: schocken, schocken-typenclub, sjokken or zokken.
    #[arg(long, default_value = "schocken", value_parser = clap::builder::PossibleValuesParser::new(PRESETS))]
    pub preset: String,
    /// The built-in players at the table, comma-separated, one seat each (any of
    /// random, timid, heuristic, expert and the ladders of docs/bots.md).
    #[arg(long, value_delimiter = ',', default_value = "heuristic", value_parser = clap::builder::PossibleValuesParser::new(POLICY_NAMES))]
    pub against: Vec<String>,
    /// How many matches to play (1..=1000).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub matches: u32,
    /// Which match to show throw by throw, counting from 1 (0: none).
    #[arg(long, default_value_t = 1)]
    pub show: u32,
    /// The bot's name (in the account and the results).
    #[arg(long, default_value = "my-bot")]
    pub name: String,
    /// Deadline of each decision, in milliseconds.
    #[arg(long, default_value_t = RawSettings::default().decision_ms)]
    pub decision_ms: u64,
    /// Time bank per seat and match, in milliseconds.
    #[arg(long, default_value_t = RawSettings::default().time_bank_ms)]
    pub time_bank_ms: u64,
    /// Rounds per Zokken match (default: the preset's).
    #[arg(long)]
    pub zokken_rounds: Option<u64>,
    /// With --connect: where the arena listens (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Start the arena and wait for a gRPC bot: prints its address and the bot's token.
    #[arg(long, conflicts_with = "exec")]
    pub connect: bool,
    /// The bot's program: it reads the arena's messages as JSON lines on its stdin and
    /// prints one Decision per line (docs/stdio-bots.md). The last option: every word after
    /// it is the program's command line.
    #[arg(long, num_args = 1.., allow_hyphen_values = true, value_name = "CMD [ARGS]...", required_unless_present = "connect")]
    pub exec: Vec<OsString>,
}

/// Refusals listed per match at most.
const MAX_REFUSALS: usize = 5;

/// How long `--connect` waits for the bot's matches.
const CONNECT_WAIT: Duration = Duration::from_secs(30 * 60);

/// An arena of `knobel play`'s own, on a temporary SQLite file.
struct Sparring {
    url: String,
    store: Store,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), knobel_arena::server::ServeError>>,
    _dir: tempfile::TempDir,
}

/// Runs `knobel play`.
pub async fn run(args: PlayArgs) -> Result<()> {
    let (arena, token) = start(&args).await?;
    let strikes: Arc<Mutex<Vec<MatchSummary>>> = Arc::default();
    if args.connect {
        println!("knobel arena listening on {}", arena.listen_addr());
        println!("bot name: {}", args.name);
        println!("bot token: {token}");
        println!(
            "waiting for the bot to play {} {} match{} (the arena seats it against {}); for example:",
            args.matches,
            args.preset,
            plural(args.matches as usize, "es"),
            args.against.join(", ")
        );
        println!(
            "  KNOBEL_TOKEN={token} cargo run --release -p knobel-bots --bin knobel-bot -- --arena {} --name {} --games {} --preset {}",
            arena.url,
            args.name,
            game_of(&args.preset)?,
            args.preset
        );
        wait_for_matches(&arena.store, &args.name, args.matches).await?;
    } else {
        let mut words = args.exec.iter().cloned();
        let program = Program {
            command: words.next().context("--exec needs the bot's command")?,
            args: words.collect(),
        };
        let rules = Rules::preset(&args.preset)?;
        let mut config = BotConfig::new(
            arena.url.clone(),
            Token::new(token),
            args.name.clone(),
            [rules.game()],
        );
        config.preset = Some(args.preset.clone());
        config.max_matches = Some(args.matches);
        config.max_attempts = Some(3);
        let kept = strikes.clone();
        let report = ExecBot::new(config, program)
            .on_match_end(move |summary| kept.lock().expect("summaries").push(summary.clone()))
            .run()
            .await
            .context("the bot stopped");
        if let Err(error) = report {
            arena.stop().await?;
            return Err(error);
        }
    }
    let summaries = strikes.lock().expect("summaries").clone();
    let report = report(&arena.store, &args, &summaries).await;
    arena.stop().await?;
    print!("{}", report?);
    Ok(())
}

fn plural(n: usize, suffix: &'static str) -> &'static str {
    if n == 1 { "" } else { suffix }
}

fn game_of(preset: &str) -> Result<&'static str> {
    Ok(Rules::preset(preset)?.game().name())
}

/// Starts the arena: practice mode seats `args.against` at once; returns it and the bot's
/// token.
async fn start(args: &PlayArgs) -> Result<(Sparring, String)> {
    let seats = 1 + args.against.len() as u64;
    let opponents: Vec<&'static str> = args
        .against
        .iter()
        .filter_map(|name| POLICY_NAMES.into_iter().find(|p| p == name))
        .collect();
    let settings = RawSettings {
        seats,
        practice: true,
        practice_wait_ms: 0,
        decision_ms: args.decision_ms,
        time_bank_ms: args.time_bank_ms,
        zokken_rounds: args.zokken_rounds,
        ..RawSettings::default()
    }
    .validate()
    .context("invalid settings for knobel play (--against names one seat each)")?;
    let mut config = settings.server_config(NetLimits::default());
    config.lobby.practice_opponents = opponents;
    let lobby = config.lobby.clone();
    tokio::task::spawn_blocking(move || lobby.prepare_builtins())
        .await
        .context("preparing the built-in players failed")?;
    let dir = tempfile::tempdir().context("cannot create a temporary folder for the store")?;
    let database_url = format!("sqlite://{}", dir.path().join("play.db").display());
    let store = Store::connect(&database_url)
        .await
        .with_context(|| format!("cannot create the store at {database_url}"))?;
    let token = auth::generate_token();
    store
        .add_bot(&args.name, &auth::hash_token(&token))
        .await
        .with_context(|| format!("cannot register the bot {:?}", args.name))?;
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr().context("no local address")?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_with_web(
        config,
        store.clone(),
        listener,
        None,
        None,
        async {
            let _ = stopped.await;
        },
    ));
    let arena = Sparring {
        url: format!("http://{addr}"),
        store,
        stop,
        server,
        _dir: dir,
    };
    Ok((arena, token))
}

impl Sparring {
    fn listen_addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    async fn stop(self) -> Result<()> {
        let _ = self.stop.send(());
        self.server
            .await
            .context("the arena task failed")?
            .context("the arena failed")
    }
}

/// The bot's ended matches, oldest first.
async fn bot_matches(store: &Store, name: &str) -> Result<Vec<StoredMatch>> {
    let mut matches = store
        .list_matches(&MatchFilter {
            bot_name: Some(name.to_owned()),
            limit: MatchFilter::MAX_LIMIT,
            ..MatchFilter::default()
        })
        .await
        .context("cannot list the matches")?;
    matches.retain(|m| m.status != MatchStatus::Running);
    matches.reverse();
    Ok(matches)
}

/// Waits until the bot has ended `count` matches.
async fn wait_for_matches(store: &Store, name: &str, count: u32) -> Result<()> {
    let started = Instant::now();
    let mut seen = 0;
    loop {
        let ended = bot_matches(store, name).await?.len();
        if ended > seen {
            println!("{ended} of {count} matches played");
            seen = ended;
        }
        if ended >= count as usize {
            return Ok(());
        }
        if started.elapsed() > CONNECT_WAIT {
            bail!(
                "the bot played {ended} of {count} matches within {} minutes",
                CONNECT_WAIT.as_secs() / 60
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The results, the strikes and the account of the match to show.
async fn report(store: &Store, args: &PlayArgs, summaries: &[MatchSummary]) -> Result<String> {
    use std::fmt::Write as _;
    let matches = bot_matches(store, &args.name).await?;
    let mut out = String::new();
    let mut places = Vec::new();
    let _ = writeln!(
        out,
        "\n{} against {}: {} {} match{}",
        args.name,
        args.against.join(", "),
        matches.len(),
        args.preset,
        plural(matches.len(), "es")
    );
    let mut shown = None;
    for (i, m) in matches.iter().enumerate() {
        let seat = m.seat_names.iter().position(|n| *n == args.name);
        let log = stored_log(store, &m.id).await?;
        let line = result_line(m, seat);
        let _ = writeln!(out, "{:>3}. {} {line}", i + 1, m.id);
        if let (Some(seat), Some(outcome)) = (seat, &m.outcome) {
            places.push(outcome.placings.get(seat).copied().unwrap_or(0));
        }
        let said = summaries.iter().find(|s| s.match_id == m.id);
        for refusal in refusals(log.as_ref(), seat, said) {
            let _ = writeln!(out, "       {refusal}");
        }
        if i + 1 == args.show as usize {
            shown = log.map(|log| (m.id.clone(), log, m.seat_names.clone()));
        }
    }
    if !places.is_empty() {
        let mean = places.iter().map(|&p| f64::from(p)).sum::<f64>() / places.len() as f64;
        let _ = writeln!(
            out,
            "mean place {mean:.2} of {} seats over {} matches",
            1 + args.against.len(),
            places.len()
        );
    }
    if let Some((id, log, names)) = shown {
        let _ = writeln!(out, "\nmatch {} ({id}), throw by throw:", args.show);
        out.push_str(
            &knobel_arena::match_text::describe(&log, &names)
                .with_context(|| format!("cannot describe match {id}"))?,
        );
    }
    Ok(out)
}

async fn stored_log(store: &Store, id: &str) -> Result<Option<MatchLog>> {
    let stored = store
        .match_log(id)
        .await
        .context("cannot read a match log")?;
    match stored.and_then(|(_, log)| log) {
        Some(json) => {
            Ok(Some(MatchLog::from_json(&json).with_context(|| {
                format!("the log of match {id} does not read")
            })?))
        }
        None => Ok(None),
    }
}

/// "place 2/3 (tokens 4)", or why the match was aborted.
fn result_line(m: &StoredMatch, seat: Option<usize>) -> String {
    let (Some(outcome), Some(seat)) = (&m.outcome, seat) else {
        return format!(
            "aborted: {}",
            m.abort_reason.as_deref().unwrap_or("no reason given")
        );
    };
    let mut line = format!(
        "place {}/{}",
        outcome.placings.get(seat).copied().unwrap_or(0),
        outcome.placings.len()
    );
    if m.game == Game::Zokken.name() {
        if let Some(chips) = outcome.chips.get(seat) {
            line.push_str(&format!(", {chips:+} chips"));
        }
    } else if let Some(tokens) = outcome.tokens.get(seat) {
        line.push_str(&format!(", {tokens} tokens"));
    }
    if let Some(&strikes) = outcome.strikes.get(seat).filter(|&&s| s > 0) {
        line.push_str(&format!(
            ", {strikes} strike{}",
            plural(strikes as usize, "s")
        ));
    }
    if let Some(Some(reason)) = outcome.forfeits.get(seat) {
        line.push_str(&format!(", forfeited ({})", reason.name()));
    }
    line
}

/// What the arena refused of the bot in one match, at most [`MAX_REFUSALS`] lines: the
/// error events it sent the bot, with their messages (with `--exec`), else the strikes the
/// log records.
fn refusals(
    log: Option<&MatchLog>,
    seat: Option<usize>,
    said: Option<&MatchSummary>,
) -> Vec<String> {
    let lines: Vec<String> = match said {
        Some(summary) if !summary.error_messages.is_empty() => summary
            .errors
            .iter()
            .zip(&summary.error_messages)
            .map(|(code, message)| format!("refused ({}): {message}", code.as_str_name()))
            .collect(),
        _ => log
            .into_iter()
            .flat_map(|log| &log.entries)
            .filter_map(|entry| match entry {
                LogEntry::Strike { seat: s, reason } if Some(s.index()) == seat => {
                    Some(format!("strike: {}", reason.name()))
                }
                _ => None,
            })
            .collect(),
    };
    // The same refusal again and again is one line with its count.
    let mut counted: Vec<(String, usize)> = Vec::new();
    for line in lines {
        match counted.iter_mut().find(|(seen, _)| *seen == line) {
            Some((_, n)) => *n += 1,
            None => counted.push((line, 1)),
        }
    }
    let mut lines: Vec<String> = counted
        .into_iter()
        .map(|(line, n)| {
            if n == 1 {
                line
            } else {
                format!("{line} ({n} times)")
            }
        })
        .collect();
    if lines.len() > MAX_REFUSALS {
        let more = lines.len() - MAX_REFUSALS;
        lines.truncate(MAX_REFUSALS);
        lines.push(format!("... and {more} more"));
    }
    lines
}
