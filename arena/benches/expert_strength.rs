//! The expert's strength against the other built-in players: a league of duplicate sets per
//! game, read with the league's statistics (standings, paired differences).
//!
//! Run: `cargo bench -p knobel-arena --bench expert_strength` (options after `--`:
//! `--reps N` duplicate sets per table, default 250 for Schocken and Sjokken, 40 for Zokken;
//! `--games schocken,zokken`; `--seed S`, default 13).
//!
//! Method: `expert`, `heuristic`, `timid` and `random` play a round robin of each game
//! (4-seat tables for Schocken and Sjokken, so all four sit at every table; 2-seat tables
//! for Zokken, 100 rounds a match; the default presets). Every table is a duplicate set:
//! its seat orders share the dice. The standings rank the bots (mean place; Zokken: chips), and
//! the paired difference of the expert against each other bot (loss rate in percentage
//! points for Schocken and Sjokken, lower is better; net chips per 100 rounds for Zokken,
//! higher is better) is printed with its 95% interval. The bench says `ok` for a game when
//! the expert ranks first and every interval excludes zero in its favour.

use std::time::Instant;

use knobel_arena::league::simulate::play_schedule;
use knobel_arena::league::{LeagueConfig, expand, standings};
use knobel_engine::Game;
use knobel_engine::policy::{Policy, by_name};

#[path = "support/table.rs"]
mod table;
use table::score_cell;

const BOTS: [&str; 4] = ["expert", "heuristic", "timid", "random"];

fn builtin(name: &str, seed: u64) -> Box<dyn Policy + Send> {
    by_name(name, seed).expect("a built-in player")
}

fn main() {
    let mut reps: Option<u32> = None;
    let mut seed = 13u64;
    let mut games = Game::ALL.to_vec();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--reps" => reps = it.next().and_then(|v| v.parse().ok()),
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
        let reps = reps.unwrap_or(if game == Game::Zokken { 40 } else { 250 });
        let started = Instant::now();
        let table = if game == Game::Zokken { 2 } else { 4 };
        let bots: Vec<String> = BOTS.iter().map(|b| format!("\"{b}\"")).collect();
        let text = format!(
            "name = \"strength\"\nseed = {seed}\nbots = [{}]\nrepetitions = {reps}\n\
             [games.{}]\ntable_size = {table}\n",
            bots.join(", "),
            game.name(),
        );
        let config = LeagueConfig::from_toml(&text).expect("a valid league file");
        let names: Vec<String> = BOTS.iter().map(|b| (*b).to_owned()).collect();
        let schedule = expand(&config, &names).expect("a schedule");
        let played = play_schedule(&schedule, &builtin);
        let s = standings(&played);
        let g = &s.games[0];
        println!(
            "\n{} ({} matches, {reps} duplicate sets per table, seed {seed}, {:.1} s)",
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
        let mut ok = g.bots.first().is_some_and(|b| b.bot == "expert");
        println!("| expert vs | paired difference (95% CI) | sets | excludes 0 in its favour |");
        println!("|---|---|---|---|");
        for other in &BOTS[1..] {
            let p = g.pair("expert", other).expect("a pair");
            // Expert minus the other, in the game's score.
            let d = g.paired_difference("expert", other).expect("a pair");
            let (e, l, h) = (d.estimate, d.low, d.high);
            let zokken = game == Game::Zokken;
            let k = if zokken { 1.0 } else { 100.0 };
            let favour = if zokken { l > 0.0 } else { h < 0.0 };
            ok &= favour;
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
        println!("{}: {}", game.name(), if ok { "ok" } else { "NOT MET" });
        all_ok &= ok;
    }
    println!("\nall games: {}", if all_ok { "ok" } else { "NOT MET" });
}
