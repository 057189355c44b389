//! The expert's strength against the other built-in players: leagues of duplicate sets per
//! game, read with the league's statistics (standings, paired differences).
//!
//! Run: `cargo bench -p knobel-arena --bench expert_strength` (options after `--`:
//! `--reps N` duplicate sets per table of the field league, default 1000 for Schocken and
//! Sjokken, 40 for Zokken; `--duel-reps N` those of each duel, default 2000; `--games
//! schocken,zokken`; `--seed S`, default 13).
//!
//! Two league formats per game, both as a league file would set them up:
//! - **field**: `expert`, `heuristic`, `timid` and `random` in a round robin (4-seat tables
//!   for Schocken and Sjokken, so all four sit at every table; 2-seat tables for Zokken, 100
//!   rounds a match; the default presets);
//! - **duels** (Schocken and Sjokken): the expert against each other player alone, 2-seat
//!   tables (in Zokken the field is already made of duels).
//!
//! Every table is a duplicate set: its seat orders share the dice. The standings rank the
//! bots (mean place; Zokken: chips), and the paired difference of the expert against each
//! other bot (loss rate in percentage points for Schocken and Sjokken, lower is better; net
//! chips per 100 rounds for Zokken, higher is better) is printed with its 95% interval. A
//! game is `ok` when the expert ranks first in the field and, against every other player,
//! an interval excludes zero in its favour (the field's or the duel's; both are printed).

use std::time::Instant;

use knobel_engine::Game;

#[path = "support/strength.rs"]
mod strength;
#[path = "support/table.rs"]
mod table;
use strength::play_league;
use table::score_cell;

const BOTS: [&str; 4] = ["expert", "heuristic", "timid", "random"];

/// One league of `names` at tables of `table` seats: its standings of `game` printed, and
/// for every other bot whether the expert's paired interval excludes zero in its favour.
fn league(
    game: Game,
    names: &[&str],
    table: u32,
    reps: u32,
    seed: u64,
    title: &str,
) -> Vec<(String, bool)> {
    let started = Instant::now();
    let s = play_league(game, names, table, reps, seed, "");
    let g = &s.games[0];
    println!(
        "\n{} {title} ({} matches, {reps} duplicate sets per table of {table}, seed {seed}, {:.1} s)",
        game.name(),
        g.matches,
        started.elapsed().as_secs_f64()
    );
    println!("| place | player | conservative rating | score (95% CI) |");
    println!("|---|---|---|---|");
    for (i, b) in g.bots.iter().enumerate() {
        let score = score_cell(b);
        println!(
            "| {} | {} | {:.2} | {score} |",
            i + 1,
            b.bot,
            b.conservative
        );
    }
    let mut verdicts = vec![(
        "first".to_owned(),
        g.bots.first().is_some_and(|b| b.bot == "expert"),
    )];
    println!("| expert vs | paired difference (95% CI) | sets | excludes 0 in its favour |");
    println!("|---|---|---|---|");
    for other in names.iter().filter(|b| **b != "expert") {
        let p = g.pair("expert", other).expect("a pair");
        // Expert minus the other, in the game's score.
        let d = g.paired_difference("expert", other).expect("a pair");
        let (e, l, h) = (d.estimate, d.low, d.high);
        let zokken = game == Game::Zokken;
        let k = if zokken { 1.0 } else { 100.0 };
        let favour = if zokken { l > 0.0 } else { h < 0.0 };
        verdicts.push(((*other).to_owned(), favour));
        println!(
            "| {other} | {:+.1}{} ({:+.1}…{:+.1}) | {} | {} |",
            k * e,
            if zokken { " chips" } else { " pp" },
            k * l,
            k * h,
            p.sets,
            if favour { "yes" } else { "no" }
        );
    }
    verdicts
}

fn main() {
    let mut reps: Option<u32> = None;
    let mut duel_reps = 2000;
    let mut seed = 13u64;
    let mut games = Game::ALL.to_vec();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--reps" => reps = it.next().and_then(|v| v.parse().ok()),
            "--duel-reps" => duel_reps = it.next().and_then(|v| v.parse().ok()).expect("a number"),
            "--seed" => seed = it.next().and_then(|v| v.parse().ok()).expect("a seed"),
            "--games" => {
                games = it
                    .next()
                    .expect("games")
                    .split(',')
                    .map(|g| *Game::ALL.iter().find(|x| x.name() == g).expect("a game"))
                    .collect()
            }
            _ => {} // `cargo bench` passes `--bench`.
        }
    }
    let mut all_ok = true;
    for game in games {
        let zokken = game == Game::Zokken;
        let reps = reps.unwrap_or(if zokken { 40 } else { 1000 });
        let field = league(game, &BOTS, if zokken { 2 } else { 4 }, reps, seed, "field");
        let mut ok = field[0].1;
        for (other, in_field) in &field[1..] {
            let beaten = *in_field
                || (!zokken && league(game, &["expert", other], 2, duel_reps, seed, "duel")[1].1);
            ok &= beaten;
        }
        println!("{}: {}", game.name(), if ok { "ok" } else { "NOT MET" });
        all_ok &= ok;
    }
    println!("\nall games: {}", if all_ok { "ok" } else { "NOT MET" });
}
