//! `knobel league ...` and `knobel match show`: talk to a running arena over gRPC (Admin
//! for changes, with the admin token; the read-only Arena RPCs for status, standings and
//! match logs), so they work against a remote arena too.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use knobel_arena::league::confidence::MIN_OBSERVATIONS;
use knobel_arena::league::config::MAX_BOTS;
use knobel_arena::league::{BotSelection, LeagueConfig, scheduled_matches};
use knobel_bots::{BearerAuth, Token};
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use knobel_proto::v1::arena_client::ArenaClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

/// Where the arena is, and the admin token for changes.
#[derive(Args, Debug, Clone)]
pub struct ArenaArgs {
    /// The arena's gRPC address.
    #[arg(long, env = "KNOBEL_ARENA", default_value = DEFAULT_ARENA)]
    pub arena: String,
    /// The admin token (for create, start, pause, cancel).
    #[arg(long, env = "KNOBEL_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
}

/// How standings are printed.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns, for a terminal.
    Table,
    /// Comma-separated values, one row per game and bot.
    Csv,
    /// JSON, as GetStandings answers.
    Json,
}

/// `knobel league` subcommands.
#[derive(Subcommand, Debug)]
pub enum LeagueCommand {
    /// List the arena's leagues with their progress.
    List {
        #[command(flatten)]
        arena: ArenaArgs,
    },
    /// Create a league from a league file (docs/leagues.md).
    Create {
        /// The league file (TOML).
        file: std::path::PathBuf,
        #[command(flatten)]
        arena: ArenaArgs,
    },
    /// Start (or resume) a league.
    Start {
        /// The league's name.
        name: String,
        #[command(flatten)]
        arena: ArenaArgs,
    },
    /// Pause a league: no new matches start.
    Pause {
        /// The league's name.
        name: String,
        #[command(flatten)]
        arena: ArenaArgs,
    },
    /// Cancel a league for good.
    Cancel {
        /// The league's name.
        name: String,
        #[command(flatten)]
        arena: ArenaArgs,
    },
    /// Show a league's progress: matches done of total, time left, which bots it waits for.
    Status {
        /// The league's name.
        name: String,
        /// Keep showing it until the league is over.
        #[arg(long)]
        follow: bool,
        #[command(flatten)]
        arena: ArenaArgs,
    },
    /// Check an ended league: its dice secret against the commitment published at creation,
    /// every match's seed, every log replayed by the engine (docs/fair-play.md).
    Verify(super::fair_play::VerifyArgs),
    /// Save an ended league's archive (league file, dice secret, every log) to a file.
    Export(super::fair_play::ExportArgs),
    /// Print a league's standings.
    Standings {
        /// The league's name.
        name: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        #[command(flatten)]
        arena: ArenaArgs,
    },
}

/// `knobel match` subcommands.
#[derive(Subcommand, Debug)]
pub enum MatchCommand {
    /// Show a finished match: a readable, throw-by-throw account, or its log.
    Show {
        /// The match id.
        id: String,
        /// Print the match log (JSON, docs/match-log.schema.json) instead.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        arena: ArenaArgs,
    },
}

/// An authenticated Admin client.
pub type Admin = AdminClient<InterceptedService<Channel, BearerAuth>>;

async fn channel(arena: &ArenaArgs) -> Result<Channel> {
    Channel::from_shared(arena.arena.clone())
        .with_context(|| format!("invalid arena address {:?}", arena.arena))?
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .with_context(|| format!("cannot reach the arena at {}", arena.arena))
}

/// A read-only client of the arena.
pub async fn arena_client(arena: &ArenaArgs) -> Result<ArenaClient<Channel>> {
    Ok(ArenaClient::new(channel(arena).await?))
}

/// An Admin client of the arena, with the admin token.
pub async fn admin_client(arena: &ArenaArgs) -> Result<Admin> {
    let Some(token) = &arena.admin_token else {
        bail!("this needs the admin token: pass --admin-token or set KNOBEL_ADMIN_TOKEN");
    };
    let auth = BearerAuth::new(&Token::new(token.clone())).context("unusable admin token")?;
    Ok(AdminClient::with_interceptor(channel(arena).await?, auth))
}

/// Registers the bot `name` through the arena's Admin service; its token.
pub async fn add_bot(arena: &ArenaArgs, name: &str) -> Result<String> {
    Ok(admin_client(arena)
        .await?
        .add_bot(pb::AddBotRequest {
            name: name.to_owned(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("cannot register bot {name:?}: {}", call(s)))?
        .into_inner()
        .token)
}

/// A failed call, as the user reads it (an address that answered as a web page says so).
pub fn call(status: tonic::Status) -> anyhow::Error {
    match knobel_bots::non_grpc_answer(&status) {
        Some(http_status) => anyhow::anyhow!(knobel_bots::wrong_port_message(http_status)),
        None => anyhow::anyhow!("{}", status.message()),
    }
}

impl ArenaArgs {
    /// The flags to repeat in a hint for the next command: `--arena ADDRESS` when it is not
    /// the default (the admin token is never printed; it stays in KNOBEL_ADMIN_TOKEN or is
    /// passed again).
    pub fn flags_given(&self) -> String {
        if self.arena == DEFAULT_ARENA {
            String::new()
        } else {
            format!(" --arena {}", self.arena)
        }
    }
}

/// The arena's address when none is given.
pub const DEFAULT_ARENA: &str = "http://127.0.0.1:50051";

/// `knobel league list`: every league, one progress line each.
async fn list(arena: &ArenaArgs) -> Result<()> {
    let leagues = arena_client(arena)
        .await?
        .list_leagues(pb::ListLeaguesRequest {})
        .await
        .map_err(call)?
        .into_inner()
        .leagues;
    if leagues.is_empty() {
        println!(
            "no leagues yet: create one with `knobel league create FILE{}` (docs/leagues.md)",
            arena.flags_given()
        );
    }
    for league in &leagues {
        println!("{}", progress_line(league, None));
    }
    Ok(())
}

/// Leagues of at least this many matches are announced before `knobel league create`
/// asks the arena to create them: storing their schedule takes a moment (one to two
/// seconds per 100,000 matches, docs/leagues.md "Large leagues").
pub const LARGE_LEAGUE_MATCHES: u128 = 20_000;

/// Prints "creating league NAME: N matches, this takes a few seconds..." (to stderr) if the
/// league file `text` schedules at least [`LARGE_LEAGUE_MATCHES`] matches, counted here as
/// the arena will (for `bots = "all"`, with the bots the arena has registered). Says nothing
/// when the count cannot be made here: the arena then refuses the file or creates it.
async fn announce_large_league(text: &str, admin: &mut Admin) {
    let Ok(config) = LeagueConfig::from_toml(text) else {
        return;
    };
    let bots = match &config.bots {
        BotSelection::Listed(bots) => bots.len(),
        BotSelection::All => match admin.list_bots(pb::ListBotsRequest {}).await {
            Ok(answer) => answer
                .into_inner()
                .bots
                .iter()
                .filter(|bot| bot.revoked_unix_ms.is_none())
                .count(),
            Err(_) => return,
        },
    };
    if bots > MAX_BOTS {
        // The arena refuses the file: nothing to announce.
        return;
    }
    let name = config.name.clone();
    // A balanced design may take a moment to find: off the async threads.
    let matches = tokio::task::spawn_blocking(move || scheduled_matches(&config, bots)).await;
    if let Ok(Ok(matches)) = matches
        && matches >= LARGE_LEAGUE_MATCHES
    {
        eprintln!(
            "creating league {name}: {} matches, this takes a few seconds...",
            thousands(matches)
        );
    }
}

/// `n` with a comma between each group of three digits: 200000 is "200,000".
fn thousands(n: u128) -> String {
    let digits = n.to_string();
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// Runs a `knobel league` command.
pub async fn run(command: LeagueCommand) -> Result<()> {
    match command {
        LeagueCommand::List { arena } => list(&arena).await?,
        LeagueCommand::Create { file, arena } => create(&file, &arena).await?,
        LeagueCommand::Start { name, arena } => {
            let league = admin_client(&arena)
                .await?
                .start_league(pb::LeagueRequest { name })
                .await
                .map_err(call)?;
            print_status(&league.into_inner().league.unwrap_or_default(), None);
        }
        LeagueCommand::Pause { name, arena } => {
            let league = admin_client(&arena)
                .await?
                .pause_league(pb::LeagueRequest { name })
                .await
                .map_err(call)?;
            print_status(&league.into_inner().league.unwrap_or_default(), None);
        }
        LeagueCommand::Cancel { name, arena } => {
            let league = admin_client(&arena)
                .await?
                .cancel_league(pb::LeagueRequest { name })
                .await
                .map_err(call)?;
            print_status(&league.into_inner().league.unwrap_or_default(), None);
        }
        LeagueCommand::Status {
            name,
            follow,
            arena,
        } => status(&name, follow, &arena).await?,
        LeagueCommand::Standings {
            name,
            format,
            arena,
        } => {
            let mut client = arena_client(&arena).await?;
            let s = standings(&mut client, &name).await?;
            print!("{}", render(&s, format));
        }
        LeagueCommand::Verify(args) => super::fair_play::verify(args).await?,
        LeagueCommand::Export(args) => super::fair_play::export(args).await?,
    }
    Ok(())
}

/// `knobel league create`: creates the league of `file`.
async fn create(file: &std::path::Path, arena: &ArenaArgs) -> Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut admin = admin_client(arena).await?;
    announce_large_league(&text, &mut admin).await;
    let league = admin
        .create_league(pb::CreateLeagueRequest { config_toml: text })
        .await
        .map_err(|s| anyhow::anyhow!("{}: {}", file.display(), call(s)))?
        .into_inner()
        .league
        .context("the arena sent no league")?;
    println!(
        "created league {} with {} matches among {} bots; start it with `knobel league start {}{}`",
        league.name,
        league.total_matches,
        league.bots.len(),
        league.name,
        arena.flags_given()
    );
    Ok(())
}

/// `knobel league status`: league `name`'s progress, every second while it is active if
/// `follow` is set.
async fn status(name: &str, follow: bool, arena: &ArenaArgs) -> Result<()> {
    let mut client = arena_client(arena).await?;
    let started = std::time::Instant::now();
    let first_done = standings(&mut client, name)
        .await?
        .league
        .unwrap_or_default()
        .finished_matches;
    loop {
        let league = standings(&mut client, name)
            .await?
            .league
            .unwrap_or_default();
        print_status(&league, Some(pace_window(&league, started, first_done)));
        if !follow || !is_active(&league) {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Ok(())
}

/// Whether a league may still play matches.
pub fn is_active(league: &pb::LeagueInfo) -> bool {
    matches!(
        pb::LeagueStatus::try_from(league.status),
        Ok(pb::LeagueStatus::Created | pb::LeagueStatus::Running | pb::LeagueStatus::Paused)
    )
}

/// GetStandings of league `name`.
pub async fn standings(
    client: &mut ArenaClient<Channel>,
    name: &str,
) -> Result<pb::GetStandingsResponse> {
    Ok(client
        .get_standings(pb::GetStandingsRequest {
            league: name.to_owned(),
        })
        .await
        .map_err(call)?
        .into_inner())
}

fn status_name(status: i32) -> &'static str {
    match pb::LeagueStatus::try_from(status) {
        Ok(pb::LeagueStatus::Created) => "created",
        Ok(pb::LeagueStatus::Running) => "running",
        Ok(pb::LeagueStatus::Paused) => "paused",
        Ok(pb::LeagueStatus::Cancelled) => "cancelled",
        Ok(pb::LeagueStatus::Finished) => "finished",
        _ => "unknown",
    }
}

/// One line of progress: a bar, matches done of total, time left (from the rate since
/// `since`), what it waits for.
pub fn progress_line(league: &pb::LeagueInfo, since: Option<(Duration, u32)>) -> String {
    let (done, total) = (league.finished_matches, league.total_matches.max(1));
    let width = 30;
    let filled = (done as usize * width) / total as usize;
    let mut line = format!(
        "{} [{}{}] {done}/{} matches ({})",
        league.name,
        "#".repeat(filled),
        "-".repeat(width - filled),
        league.total_matches,
        status_name(league.status)
    );
    if let Some((elapsed, first_done)) = since {
        let rate = f64::from(done.saturating_sub(first_done)) / elapsed.as_secs_f64().max(0.001);
        let running = league.status == pb::LeagueStatus::Running as i32;
        if running && rate > 0.0 && done < league.total_matches {
            let _ = write!(
                line,
                ", about {:.0} s left",
                f64::from(league.total_matches - done) / rate
            );
        }
    }
    if league.playing > 0 {
        let _ = write!(line, ", {} playing", league.playing);
    }
    if !league.waiting_for.is_empty() {
        let _ = write!(line, ", waiting for {}", waiting_for(league));
    }
    if league.public_dice {
        line.push_str(", PUBLIC DICE");
    }
    line
}

/// The window the time left is estimated over: the matches finished while this command has
/// watched, once it has watched a few seconds and seen one finish; before that, every
/// match finished since the league was created.
fn pace_window(
    league: &pb::LeagueInfo,
    watching_since: std::time::Instant,
    done_then: u32,
) -> (Duration, u32) {
    let watched = watching_since.elapsed();
    if watched >= Duration::from_secs(5) && league.finished_matches > done_then {
        return (watched, done_then);
    }
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    (
        Duration::from_millis(now_ms.saturating_sub(league.created_unix_ms)),
        0,
    )
}

/// The bots a league waits for, each busy (connected, playing or waiting for other games)
/// or offline (no stream open).
fn waiting_for(league: &pb::LeagueInfo) -> String {
    league
        .waiting_for
        .iter()
        .map(|bot| {
            let state = if league.waiting_for_connected.contains(bot) {
                "busy"
            } else {
                "offline"
            };
            format!("{bot} ({state})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn print_status(league: &pb::LeagueInfo, since: Option<(Duration, u32)>) {
    println!("{}", progress_line(league, since));
    println!("  {}", super::fair_play::dice_line(league));
    if let Some(stop) = stop_line(league) {
        println!("{stop}");
    }
}

/// "  stop: settled, budget 400 matches": when the league ends (`None` from an arena that
/// does not say).
fn stop_line(league: &pb::LeagueInfo) -> Option<String> {
    let line = match (league.stop.as_str(), league.budget) {
        ("", _) => return None,
        ("fixed", _) => "fixed (every scheduled match is played)".to_owned(),
        (stop, Some(budget)) => format!(
            "{stop} (when every two neighbours are separated or equivalent), budget {budget} matches"
        ),
        (stop, None) => format!(
            "{stop} (when every two neighbours are separated or equivalent), no budget: at most the whole schedule"
        ),
    };
    Some(format!("  stop: {line}"))
}

fn game_name(game: i32) -> &'static str {
    knobel_proto::convert::game_from_wire("game", game).map_or("unknown", |g| g.name())
}

fn interval(i: &Option<pb::Interval>, percent: bool) -> String {
    match i {
        Some(i) if percent => format!(
            "{:.1}% [{:.1}, {:.1}]",
            100.0 * i.estimate,
            100.0 * i.low,
            100.0 * i.high
        ),
        Some(i) if i.low.is_finite() => {
            format!("{:+.1} [{:+.1}, {:+.1}]", i.estimate, i.low, i.high)
        }
        Some(i) => format!("{:+.1}", i.estimate),
        None => String::new(),
    }
}

/// Standings in `format`.
pub fn render(s: &pb::GetStandingsResponse, format: Format) -> String {
    match format {
        Format::Table => render_table(s),
        Format::Csv => render_csv(s),
        Format::Json => render_json(s),
    }
}

/// The name of a game's score basis ("adjusted", "raw"; "" from an arena that sends none).
fn basis_name(basis: i32) -> &'static str {
    match pb::ScoreBasis::try_from(basis) {
        Ok(pb::ScoreBasis::Adjusted) => "adjusted",
        Ok(pb::ScoreBasis::Raw) => "raw",
        _ => "",
    }
}

/// The name of a verdict: "separated", "equivalent" or "open".
fn verdict_name(verdict: i32) -> &'static str {
    match pb::PairVerdict::try_from(verdict) {
        Ok(pb::PairVerdict::Separated) => "separated",
        Ok(pb::PairVerdict::Equivalent) => "equivalent",
        Ok(pb::PairVerdict::Open) => "open",
        _ => "unknown",
    }
}

/// The standings as aligned columns: per game its bots and its neighbours, then overall.
fn render_table(s: &pb::GetStandingsResponse) -> String {
    let mut out = String::new();
    if let Some(league) = &s.league {
        let _ = writeln!(out, "{}", progress_line(league, None));
        if let Some(stop) = stop_line(league) {
            let _ = writeln!(out, "{stop}");
        }
        out.push('\n');
    }
    for g in &s.games {
        game_table(&mut out, g);
        neighbours_table(&mut out, g);
        out.push('\n');
    }
    if !s.overall.is_empty() {
        let _ = writeln!(out, "overall (one rating over every match)");
        for (i, b) in s.overall.iter().enumerate() {
            let _ = writeln!(
                out,
                "{:<4} {:<24} {:>7} {:>10.3} {:>14} {:>10.2}",
                i + 1,
                b.bot,
                b.matches,
                b.mean_place,
                format!("{:.1}±{:.1}", b.mu, b.sigma),
                b.conservative
            );
        }
    }
    out
}

/// A game's bots, best first: rating, mean place, the raw score and the adjusted one.
fn game_table(out: &mut String, g: &pb::GameStandings) {
    let zokken = game_name(g.game) == "zokken";
    let score = if zokken {
        "chips/100 rounds [95% CI]"
    } else {
        "loss rate [95% CI]"
    };
    let basis = match basis_name(g.score_basis) {
        "" => String::new(),
        name => format!(", ordered by {name} scores"),
    };
    let _ = writeln!(out, "{} ({} matches{basis})", game_name(g.game), g.matches);
    let _ = writeln!(
        out,
        "{:<4} {:<24} {:>7} {:>10} {:>14} {:>10}  {:<34}  adjusted [95% CI]",
        "rank", "bot", "matches", "mean place", "rating mu±sd", "mu-3sd", score
    );
    for (i, b) in g.bots.iter().enumerate() {
        let figure = if zokken {
            interval(&b.chips_per_100_rounds, false)
        } else {
            format!(
                "{} (average {:.1}%)",
                interval(&b.loss_rate, true),
                100.0 * b.average_loss_rate.unwrap_or_default()
            )
        };
        let adjusted = match &b.adjusted {
            Some(_) => interval(&b.adjusted, !zokken),
            None => "-".to_owned(),
        };
        let _ = writeln!(
            out,
            "{:<4} {:<24} {:>7} {:>10.3} {:>14} {:>10.2}  {:<34}  {}",
            i + 1,
            b.bot,
            b.matches,
            b.mean_place,
            format!("{:.1}±{:.1}", b.mu, b.sigma),
            b.conservative,
            figure,
            adjusted
        );
    }
}

/// A game's neighbours: each bot and the next below it, how much better the one above
/// scored, the confidence sequence on it and the verdict; with the margin.
fn neighbours_table(out: &mut String, g: &pb::GameStandings) {
    if g.neighbours.is_empty() {
        return;
    }
    // Loss rates in percentage points; chips as they are.
    let (scale, unit) = if game_name(g.game) == "zokken" {
        (1.0, "chips per 100 rounds")
    } else {
        (100.0, "percentage points of loss rate")
    };
    let settled = if g.settled { "settled" } else { "not settled" };
    let _ = writeln!(
        out,
        "neighbours (difference: how much better the one above scored, in {unit}; margin ±{:.1}; {settled})",
        scale * g.margin
    );
    let _ = writeln!(
        out,
        "  {:<24} {:<24} {:>5} {:>10}  {:<26} verdict",
        "above", "below", "sets", "difference", "95% sequence"
    );
    for n in &g.neighbours {
        let sequence = n.sequence.unwrap_or(pb::Bounds {
            low: f64::NEG_INFINITY,
            high: f64::INFINITY,
        });
        let _ = writeln!(
            out,
            "  {:<24} {:<24} {:>5} {:>10}  {:<26} {}",
            n.above,
            n.below,
            n.sets,
            signed_or_dash(scale * n.difference),
            sequence_text(sequence, scale),
            verdict_name(n.verdict)
        );
    }
}

/// A neighbours' confidence sequence, scaled: "[+1.0, +23.6]"; one unbounded at both ends
/// has drawn nothing yet (fewer than 16 sets): "none before 16 sets".
fn sequence_text(sequence: pb::Bounds, scale: f64) -> String {
    if sequence.low == f64::NEG_INFINITY && sequence.high == f64::INFINITY {
        return format!("none before {MIN_OBSERVATIONS} sets");
    }
    format!(
        "[{}, {}]",
        signed_or_dash(scale * sequence.low),
        signed_or_dash(scale * sequence.high)
    )
}

/// `x` with a sign and one decimal; "-inf" and "+inf" for the infinities, "-" for NaN.
fn signed_or_dash(x: f64) -> String {
    if x.is_nan() {
        "-".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "+inf" } else { "-inf" }.to_owned()
    } else {
        format!("{x:+.1}")
    }
}

/// The standings as CSV, one row per game and bot (the basis and the adjusted score last).
fn render_csv(s: &pb::GetStandingsResponse) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "game,rank,bot,matches,mu,sigma,conservative,mean_place,losses,loss_rate,loss_rate_low,loss_rate_high,chips_per_100_rounds,chips_low,chips_high,basis,adjusted,adjusted_low,adjusted_high"
    );
    let rows = s
        .games
        .iter()
        .map(|g| (game_name(g.game), basis_name(g.score_basis), &g.bots))
        .chain(std::iter::once(("overall", "", &s.overall)));
    let iv = |i: &Option<pb::Interval>| {
        i.as_ref().map_or(",,".to_owned(), |i| {
            format!("{},{},{}", i.estimate, i.low, i.high)
        })
    };
    for (game, basis, bots) in rows {
        for (i, b) in bots.iter().enumerate() {
            let _ = writeln!(
                out,
                "{game},{},{},{},{},{},{},{},{},{},{},{basis},{}",
                i + 1,
                b.bot,
                b.matches,
                b.mu,
                b.sigma,
                b.conservative,
                b.mean_place,
                b.losses.map(|l| l.to_string()).unwrap_or_default(),
                iv(&b.loss_rate),
                iv(&b.chips_per_100_rounds),
                iv(&b.adjusted)
            );
        }
    }
    out
}

/// An interval as JSON (unbounded ends are null).
fn json_interval(i: &Option<pb::Interval>) -> Option<serde_json::Value> {
    i.as_ref().map(|i| {
        serde_json::json!({"estimate": finite(i.estimate), "low": finite(i.low), "high": finite(i.high)})
    })
}

/// Bounds as JSON (unbounded ends are null).
fn json_bounds(b: &Option<pb::Bounds>) -> Option<serde_json::Value> {
    b.as_ref()
        .map(|b| serde_json::json!({"low": finite(b.low), "high": finite(b.high)}))
}

fn json_bot(b: &pb::BotStanding) -> serde_json::Value {
    serde_json::json!({
        "bot": b.bot, "matches": b.matches, "mu": b.mu, "sigma": b.sigma,
        "conservative": b.conservative, "mean_place": b.mean_place, "losses": b.losses,
        "loss_rate": json_interval(&b.loss_rate), "average_loss_rate": b.average_loss_rate,
        "chips_per_100_rounds": json_interval(&b.chips_per_100_rounds),
        "adjusted": json_interval(&b.adjusted),
    })
}

fn json_game(g: &pb::GameStandings) -> serde_json::Value {
    serde_json::json!({
        "game": game_name(g.game), "matches": g.matches,
        "score_basis": basis_name(g.score_basis), "margin": g.margin, "settled": g.settled,
        "bots": g.bots.iter().map(json_bot).collect::<Vec<_>>(),
        "pairs": g.pairs.iter().map(|p| serde_json::json!({
            "a": p.a, "b": p.b, "matches": p.matches, "a_above": p.a_above,
            "b_above": p.b_above, "sets": p.sets,
            "paired_difference": json_interval(&p.paired_difference),
            "sequence": json_bounds(&p.sequence),
        })).collect::<Vec<_>>(),
        "neighbours": g.neighbours.iter().map(|n| serde_json::json!({
            "above": n.above, "below": n.below, "sets": n.sets,
            "difference": finite(n.difference), "sequence": json_bounds(&n.sequence),
            "verdict": verdict_name(n.verdict),
        })).collect::<Vec<_>>(),
    })
}

/// The standings as JSON, as GetStandings answers (enums by name, infinities null).
fn render_json(s: &pb::GetStandingsResponse) -> String {
    let league = s.league.as_ref().map(|l| {
        serde_json::json!({"name": l.name, "status": status_name(l.status), "bots": l.bots,
            "total_matches": l.total_matches, "finished_matches": l.finished_matches,
            "dice": l.dice, "public_dice": l.public_dice,
            "dice_commitment": l.dice_commitment, "dice_secret": l.dice_secret,
            "stop": l.stop, "budget": l.budget})
    });
    let games: Vec<_> = s.games.iter().map(json_game).collect();
    let overall: Vec<_> = s.overall.iter().map(json_bot).collect();
    let value = serde_json::json!({"league": league, "games": games, "overall": overall});
    format!(
        "{}\n",
        serde_json::to_string_pretty(&value).expect("JSON values serialize")
    )
}

/// JSON has no infinities: an unbounded interval end is null.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Runs a `knobel match` command.
pub async fn run_match(command: MatchCommand) -> Result<()> {
    let MatchCommand::Show { id, json, arena } = command;
    let mut client = arena_client(&arena).await?;
    let log = client
        .get_match_log(pb::GetMatchLogRequest {
            match_id: id.clone(),
        })
        .await
        .map_err(call)?
        .into_inner();
    if json {
        println!("{}", log.log_json);
        return Ok(());
    }
    let parsed = knobel_engine::MatchLog::from_json(&log.log_json)
        .with_context(|| format!("the log of match {id} does not read"))?;
    // An arena older than MatchLogResponse.seat_names sends none: the seats by number.
    let names = if log.seat_names.len() == parsed.seats as usize {
        log.seat_names
    } else {
        (0..parsed.seats)
            .map(|seat| format!("seat {seat}"))
            .collect()
    };
    print!("{}", knobel_arena::match_text::describe(&parsed, &names)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standings() -> pb::GetStandingsResponse {
        let interval = |estimate: f64, low: f64, high: f64| {
            Some(pb::Interval {
                estimate,
                low,
                high,
            })
        };
        let bot = |name: &str, adjusted: Option<pb::Interval>| pb::BotStanding {
            bot: name.to_owned(),
            matches: 40,
            loss_rate: interval(0.25, 0.1, 0.4),
            average_loss_rate: Some(0.5),
            adjusted,
            ..Default::default()
        };
        pb::GetStandingsResponse {
            league: Some(pb::LeagueInfo {
                name: "cup".to_owned(),
                stop: "settled".to_owned(),
                budget: Some(400),
                ..Default::default()
            }),
            games: vec![pb::GameStandings {
                game: pb::Game::Schocken as i32,
                matches: 40,
                bots: vec![
                    bot("ada", interval(0.2, 0.1, 0.3)),
                    bot("bob", interval(0.7, 0.6, 0.8)),
                    bot("cleo", None),
                ],
                score_basis: pb::ScoreBasis::Raw as i32,
                margin: 0.02,
                settled: false,
                neighbours: vec![
                    pb::Neighbours {
                        above: "ada".to_owned(),
                        below: "bob".to_owned(),
                        sets: 20,
                        difference: 0.5,
                        sequence: Some(pb::Bounds {
                            low: 0.25,
                            high: 0.75,
                        }),
                        verdict: pb::PairVerdict::Separated as i32,
                    },
                    pb::Neighbours {
                        above: "bob".to_owned(),
                        below: "cleo".to_owned(),
                        sets: 3,
                        difference: 0.0,
                        sequence: Some(pb::Bounds {
                            low: f64::NEG_INFINITY,
                            high: f64::INFINITY,
                        }),
                        verdict: pb::PairVerdict::Open as i32,
                    },
                ],
                ..Default::default()
            }],
            overall: Vec::new(),
        }
    }

    #[test]
    fn the_table_shows_the_adjusted_score_the_basis_the_neighbours_and_the_stop() {
        let text = render(&standings(), Format::Table);
        assert!(
            text.contains("  stop: settled (when every two neighbours are separated or equivalent), budget 400 matches"),
            "{text}"
        );
        assert!(
            text.contains("schocken (40 matches, ordered by raw scores)"),
            "{text}"
        );
        let line = |bot: &str| {
            text.lines()
                .find(|l| l.split_whitespace().nth(1) == Some(bot))
                .unwrap_or_else(|| panic!("no line of {bot} in {text}"))
        };
        assert!(line("ada").ends_with("  20.0% [10.0, 30.0]"), "{text}");
        assert!(line("cleo").ends_with("  -"), "{text}");
        assert!(
            text.contains("in percentage points of loss rate; margin ±2.0; not settled)"),
            "{text}"
        );
        let pair = text
            .lines()
            .find(|l| l.trim_start().starts_with("ada "))
            .expect("the pair ada, bob");
        let words: Vec<&str> = pair.split_whitespace().collect();
        assert_eq!(
            words,
            [
                "ada",
                "bob",
                "20",
                "+50.0",
                "[+25.0,",
                "+75.0]",
                "separated"
            ]
        );
        assert!(
            text.contains("none before 16 sets") && text.trim_end().ends_with("open"),
            "{text}"
        );
    }

    #[test]
    fn csv_and_json_carry_the_basis_adjusted_scores_and_verdicts() {
        let s = standings();
        let csv = render(&s, Format::Csv);
        assert!(
            csv.lines()
                .next()
                .unwrap()
                .ends_with(",basis,adjusted,adjusted_low,adjusted_high")
        );
        assert!(csv.contains(",raw,0.2,0.1,0.3\n"), "{csv}");
        assert!(csv.contains(",raw,,,\n"), "cleo has none: {csv}");
        let json: serde_json::Value = serde_json::from_str(&render(&s, Format::Json)).unwrap();
        let game = &json["games"][0];
        assert_eq!(game["score_basis"], "raw");
        assert_eq!(game["neighbours"][0]["verdict"], "separated");
        assert_eq!(
            game["neighbours"][1]["sequence"]["low"],
            serde_json::Value::Null
        );
        assert_eq!(game["bots"][2]["adjusted"], serde_json::Value::Null);
        assert_eq!(json["league"]["stop"], "settled");
        assert_eq!(json["league"]["budget"], 400);
    }
}
