//! `knobel league ...` and `knobel match show`: talk to a running arena over gRPC (Admin
//! for changes, with the admin token; the read-only Arena RPCs for status, standings and
//! match logs), so they work against a remote arena too.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
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
        LeagueCommand::Create { file, arena } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let mut admin = admin_client(&arena).await?;
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
        }
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
        } => {
            let mut client = arena_client(&arena).await?;
            let started = std::time::Instant::now();
            let first_done = standings(&mut client, &name)
                .await?
                .league
                .unwrap_or_default()
                .finished_matches;
            loop {
                let league = standings(&mut client, &name)
                    .await?
                    .league
                    .unwrap_or_default();
                print_status(&league, Some(pace_window(&league, started, first_done)));
                if !follow || !is_active(&league) {
                    break;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
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
    let mut out = String::new();
    match format {
        Format::Table => {
            if let Some(league) = &s.league {
                let _ = writeln!(out, "{}\n", progress_line(league, None));
            }
            for g in &s.games {
                let zokken = game_name(g.game) == "zokken";
                let score = if zokken {
                    "chips/100 rounds [95% CI]"
                } else {
                    "loss rate [95% CI]"
                };
                let _ = writeln!(out, "{} ({} matches)", game_name(g.game), g.matches);
                let _ = writeln!(
                    out,
                    "{:<4} {:<24} {:>7} {:>10} {:>14} {:>10}  {}",
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
                    let _ = writeln!(
                        out,
                        "{:<4} {:<24} {:>7} {:>10.3} {:>14} {:>10.2}  {}",
                        i + 1,
                        b.bot,
                        b.matches,
                        b.mean_place,
                        format!("{:.1}±{:.1}", b.mu, b.sigma),
                        b.conservative,
                        figure
                    );
                }
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
        }
        Format::Csv => {
            let _ = writeln!(
                out,
                "game,rank,bot,matches,mu,sigma,conservative,mean_place,losses,loss_rate,loss_rate_low,loss_rate_high,chips_per_100_rounds,chips_low,chips_high"
            );
            let rows = s
                .games
                .iter()
                .map(|g| (game_name(g.game), &g.bots))
                .chain(std::iter::once(("overall", &s.overall)));
            for (game, bots) in rows {
                for (i, b) in bots.iter().enumerate() {
                    let iv = |i: &Option<pb::Interval>| {
                        i.as_ref().map_or(",,".to_owned(), |i| {
                            format!("{},{},{}", i.estimate, i.low, i.high)
                        })
                    };
                    let _ = writeln!(
                        out,
                        "{game},{},{},{},{},{},{},{},{},{},{}",
                        i + 1,
                        b.bot,
                        b.matches,
                        b.mu,
                        b.sigma,
                        b.conservative,
                        b.mean_place,
                        b.losses.map(|l| l.to_string()).unwrap_or_default(),
                        iv(&b.loss_rate),
                        iv(&b.chips_per_100_rounds)
                    );
                }
            }
        }
        Format::Json => {
            let iv = |i: &Option<pb::Interval>| {
                i.as_ref().map(|i| serde_json::json!({"estimate": finite(i.estimate), "low": finite(i.low), "high": finite(i.high)}))
            };
            let bot = |b: &pb::BotStanding| {
                serde_json::json!({
                    "bot": b.bot, "matches": b.matches, "mu": b.mu, "sigma": b.sigma,
                    "conservative": b.conservative, "mean_place": b.mean_place, "losses": b.losses,
                    "loss_rate": iv(&b.loss_rate), "average_loss_rate": b.average_loss_rate,
                    "chips_per_100_rounds": iv(&b.chips_per_100_rounds),
                })
            };
            let league = s.league.as_ref().map(|l| {
                serde_json::json!({"name": l.name, "status": status_name(l.status), "bots": l.bots,
                    "total_matches": l.total_matches, "finished_matches": l.finished_matches,
                    "dice": l.dice, "public_dice": l.public_dice,
                    "dice_commitment": l.dice_commitment, "dice_secret": l.dice_secret})
            });
            let games: Vec<_> = s
                .games
                .iter()
                .map(|g| {
                    serde_json::json!({
                        "game": game_name(g.game), "matches": g.matches,
                        "bots": g.bots.iter().map(bot).collect::<Vec<_>>(),
                        "pairs": g.pairs.iter().map(|p| serde_json::json!({
                            "a": p.a, "b": p.b, "matches": p.matches, "a_above": p.a_above,
                            "b_above": p.b_above, "sets": p.sets,
                            "paired_difference": iv(&p.paired_difference),
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let value = serde_json::json!({"league": league, "games": games, "overall": s.overall.iter().map(bot).collect::<Vec<_>>()});
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&value).expect("JSON values serialize")
            );
        }
    }
    out
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
