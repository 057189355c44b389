//! One league of built-in players played in-process, for the expert's strength (the
//! `expert_strength` bench and `arena/server/tests/expert_strength.rs`).

use knobel_arena::league::simulate::play_schedule;
use knobel_arena::league::{LeagueConfig, LeagueDice, Standings, expand, standings};
use knobel_engine::Game;
use knobel_engine::policy::{Policy, by_name};

fn builtin(name: &str, seed: u64) -> Box<dyn Policy + Send> {
    by_name(name, seed).expect("a built-in player")
}

/// The standings of a round robin of `game` among the built-in players `bots` at tables of
/// `table` seats, `reps` duplicate sets per table, league seed `seed`; `settings` is the
/// game's extra TOML (e.g. `settings = { rounds = 40 }\n`).
pub fn play_league(
    game: Game,
    bots: &[&str],
    table: u32,
    reps: u32,
    seed: u64,
    settings: &str,
) -> Standings {
    let quoted: Vec<String> = bots.iter().map(|b| format!("\"{b}\"")).collect();
    let text = format!(
        "name = \"strength\"\nseed = {seed}\ndice = \"duplicate\"\nbots = [{}]\nrepetitions = {reps}\n\
         [games.{}]\ntable_size = {table}\n{settings}",
        quoted.join(", "),
        game.name(),
    );
    let config = LeagueConfig::from_toml(&text).expect("a valid league file");
    let names: Vec<String> = bots.iter().map(|b| (*b).to_owned()).collect();
    let schedule = expand(&config, &names, &LeagueDice::for_config(&config).0).expect("a schedule");
    standings(&play_schedule(&schedule, &builtin))
}
