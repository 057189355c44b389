//! A small, deterministic version of the `expert_strength` bench (issue 13): a league of
//! duplicate sets of `expert`, `heuristic`, `timid` and `random`, read with the league's
//! statistics. It asserts what the bench measures at full size: the expert beats `timid`
//! and `random` in every game (paired 95% interval excluding zero in its favour), and
//! beats `heuristic` in Zokken. In Schocken and Sjokken the expert does not (yet) beat the
//! heuristic (docs/bots.md says why); that pair is not asserted.

use knobel_arena::league::simulate::play_schedule;
use knobel_arena::league::{LeagueConfig, expand, standings};
use knobel_engine::Game;
use knobel_engine::policy::{Policy, by_name};

const BOTS: [&str; 4] = ["expert", "heuristic", "timid", "random"];

fn builtin(name: &str, seed: u64) -> Box<dyn Policy + Send> {
    by_name(name, seed).expect("a built-in player")
}

/// The expert's paired difference against `other` (expert minus other), as (low, high).
fn league(game: Game, reps: u32, rounds: &str) -> Vec<(String, f64, f64)> {
    let table = if game == Game::Zokken { 2 } else { 4 };
    let bots: Vec<String> = BOTS.iter().map(|b| format!("\"{b}\"")).collect();
    let text = format!(
        "name = \"strength\"\nseed = 13\nbots = [{}]\nrepetitions = {reps}\n\
         [games.{}]\ntable_size = {table}\n{rounds}",
        bots.join(", "),
        game.name(),
    );
    let config = LeagueConfig::from_toml(&text).expect("a valid league file");
    let names: Vec<String> = BOTS.iter().map(|b| (*b).to_owned()).collect();
    let played = play_schedule(&expand(&config, &names).expect("a schedule"), &builtin);
    let s = standings(&played);
    let g = &s.games[0];
    BOTS[1..]
        .iter()
        .map(|other| {
            let d = g.paired_difference("expert", other).expect("a pair");
            ((*other).to_owned(), d.low, d.high)
        })
        .collect()
}

#[test]
fn the_expert_beats_timid_and_random_everywhere_and_heuristic_in_zokken() {
    for game in [Game::Schocken, Game::Sjokken] {
        for (other, _, high) in league(game, 30, "") {
            if other != "heuristic" {
                // Loss rate: lower is better.
                assert!(
                    high < 0.0,
                    "{}: expert vs {other}: high {high}",
                    game.name()
                );
            }
        }
    }
    for (other, low, _) in league(Game::Zokken, 4, "settings = { rounds = 40 }\n") {
        // Net chips: higher is better.
        assert!(low > 0.0, "zokken: expert vs {other}: low {low}");
    }
}
