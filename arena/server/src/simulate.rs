//! `knobel simulate`: a league of the built-in policies, played in-process.
//!
//! Every match is played as a *duplicate* set: the same seed once for each rotation of the
//! players through the seats, so each policy meets the same dice from every seat
//! (RULES.md §6). Standings show the mean placing (lower is better) and, per game, the
//! losses (Schocken, Sjokken) or the net chips (Zokken).

use std::fmt::Write as _;

use anyhow::{Context, Result, bail, ensure};
use clap::Args;
use knobel_engine::policy::{POLICY_NAMES, Policy, by_name, play_out};
use knobel_engine::{Game, Match, Rules};

/// Options of `knobel simulate`.
#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// Presets to play, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = ["schocken".to_owned(), "sjokken".to_owned(), "zokken".to_owned()])]
    presets: Vec<String>,
    /// The players, one per seat, comma separated: random, timid, heuristic, expert, or the graded
    /// heuristic-80, heuristic-60, heuristic-40, heuristic-20, or the deterministic handicap-1 …
    /// handicap-4 (docs/bots.md).
    #[arg(long, value_delimiter = ',', default_values_t = ["heuristic".to_owned(), "random".to_owned(), "timid".to_owned(), "heuristic".to_owned()])]
    players: Vec<String>,
    /// Duplicate sets per preset (each set is one match per seat rotation).
    #[arg(long, default_value_t = 50)]
    sets: u64,
    /// Rounds per Zokken match.
    #[arg(long, default_value_t = 100)]
    zokken_rounds: u32,
    /// The league seed: the same seed gives the same standings.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// One player's results in one preset.
#[derive(Clone, Debug, Default)]
struct Standing {
    name: String,
    matches: u64,
    placing_sum: u64,
    losses: u64,
    chips: i64,
}

pub fn run(args: &SimulateArgs) -> Result<()> {
    let seats = args.players.len();
    ensure!(
        (knobel_engine::MIN_SEATS..=knobel_engine::MAX_SEATS).contains(&seats),
        "cannot seat {seats} players: a match has {}..={} seats",
        knobel_engine::MIN_SEATS,
        knobel_engine::MAX_SEATS
    );
    for name in &args.players {
        if by_name(name, 0).is_none() {
            bail!(
                "unknown player {name:?}: built-in players are {}",
                POLICY_NAMES.join(", ")
            );
        }
    }
    for preset in &args.presets {
        let mut rules =
            Rules::preset(preset).with_context(|| format!("cannot simulate {preset:?}"))?;
        if rules.game() == Game::Zokken {
            rules
                .set_number("rounds", args.zokken_rounds)
                .context("invalid --zokken-rounds")?;
        }
        let table = league(&rules, args)?;
        println!("{}", render(preset, rules.game(), &table));
    }
    Ok(())
}

fn league(rules: &Rules, args: &SimulateArgs) -> Result<Vec<Standing>> {
    let seats = args.players.len();
    let mut table: Vec<Standing> = args
        .players
        .iter()
        .enumerate()
        .map(|(i, name)| Standing {
            name: format!("{name}#{i}"),
            ..Standing::default()
        })
        .collect();
    for set in 0..args.sets {
        let seed = args.seed.wrapping_mul(1_000_003).wrapping_add(set);
        for rotation in 0..seats {
            // Player p sits in seat (p + rotation) % seats.
            let player_at = |seat: usize| (seat + seats - rotation) % seats;
            let mut policies: Vec<Box<dyn Policy + Send>> = (0..seats)
                .map(|seat| by_name(&args.players[player_at(seat)], seed ^ (seat as u64) << 32))
                .collect::<Option<_>>()
                .context("unknown player")?;
            let mut m =
                Match::new(rules.clone(), seed, seats).context("cannot set up the match")?;
            play_out(&mut m, &mut policies);
            let outcome = m.outcome().context("a played-out match has an outcome")?;
            for seat in 0..seats {
                let standing = &mut table[player_at(seat)];
                standing.matches += 1;
                standing.placing_sum += outcome.placings[seat] as u64;
                standing.losses += (outcome.placings[seat] as usize == seats) as u64;
                standing.chips += outcome.chips[seat];
            }
        }
    }
    table.sort_by(|a, b| {
        (a.placing_sum * b.matches)
            .cmp(&(b.placing_sum * a.matches))
            .then(b.chips.cmp(&a.chips))
    });
    Ok(table)
}

fn render(preset: &str, game: Game, table: &[Standing]) -> String {
    let mut out = String::new();
    let last = if game == Game::Zokken {
        "net chips"
    } else {
        "losses"
    };
    let _ = writeln!(out, "{preset}");
    let _ = writeln!(
        out,
        "{:<4} {:<14} {:>8} {:>12} {:>10}",
        "rank", "player", "matches", "mean place", last
    );
    for (rank, s) in table.iter().enumerate() {
        let mean = s.placing_sum as f64 / s.matches.max(1) as f64;
        let score = if game == Game::Zokken {
            s.chips.to_string()
        } else {
            s.losses.to_string()
        };
        let _ = writeln!(
            out,
            "{:<4} {:<14} {:>8} {:>12.3} {:>10}",
            rank + 1,
            s.name,
            s.matches,
            mean,
            score
        );
    }
    out
}
