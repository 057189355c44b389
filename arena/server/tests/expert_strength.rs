//! A deterministic version of the `expert_strength` bench (issue 13): leagues of duplicate
//! sets of `expert`, `heuristic`, `timid` and `random`, read with the league's statistics.
//! It asserts what the bench measures: the expert beats `timid` and `random` in every game
//! (paired 95% interval excluding zero in its favour) and `heuristic` too: in Zokken and in
//! the Sjokken field of four, and in Schocken duels (in a Schocken field of four the two
//! rarely lose and their difference is within noise; docs/bots.md).

use knobel_engine::Game;

#[path = "../benches/support/strength.rs"]
mod strength;
use strength::play_league;

const BOTS: [&str; 4] = ["expert", "heuristic", "timid", "random"];

/// The expert's paired difference against each other bot of `bots` (expert minus other),
/// as (other, low, high), in a league of `game` at tables of `table` seats.
fn league(
    game: Game,
    bots: &[&str],
    table: u32,
    reps: u32,
    rounds: &str,
) -> Vec<(String, f64, f64)> {
    let s = play_league(game, bots, table, reps, 13, rounds);
    let g = &s.games[0];
    bots.iter()
        .filter(|b| **b != "expert")
        .map(|other| {
            let d = g.paired_difference("expert", other).expect("a pair");
            ((*other).to_owned(), d.low, d.high)
        })
        .collect()
}

#[test]
fn the_expert_beats_every_other_built_in_player_in_every_game() {
    for game in [Game::Schocken, Game::Sjokken] {
        for (other, _, high) in league(game, &BOTS, 4, 30, "") {
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
    let (_, _, high) = &league(Game::Sjokken, &BOTS, 4, 1000, "")[0];
    assert!(
        *high < 0.0,
        "sjokken field: expert vs heuristic: high {high}"
    );
    let (_, _, high) = &league(Game::Schocken, &["expert", "heuristic"], 2, 1000, "")[0];
    assert!(
        *high < 0.0,
        "schocken duel: expert vs heuristic: high {high}"
    );
    for (other, low, _) in league(Game::Zokken, &BOTS, 2, 4, "settings = { rounds = 40 }\n") {
        // Net chips: higher is better.
        assert!(low > 0.0, "zokken: expert vs {other}: low {low}");
    }
}
