//! The machinery of the `league_efficiency` bench at small size: duplicate and independent
//! schedules of the deterministic field (`heuristic`, `handicap-1` … `handicap-3`, `timid`,
//! `handicap-4`), played and judged by the bench's own code (benches/support/efficiency.rs).

use knobel_engine::Game;
use knobel_engine::policy::{Policy, by_name};

#[path = "../benches/support/efficiency.rs"]
mod efficiency;
use efficiency::{Counts, HANDICAPPED, SCORES, Setup, add, independent, play, score, stats};

fn builtin(name: &str, seed: u64) -> Box<dyn Policy + Send> {
    by_name(name, seed).expect("a built-in player")
}

fn setup(game: Game) -> Setup<'static> {
    Setup {
        game,
        field: &HANDICAPPED,
        zokken_rounds: Some(10),
    }
}

#[test]
fn duplicate_sets_share_a_seed_and_independent_matches_do_not() {
    let s = setup(Game::Schocken).schedule(7, 2);
    // 15 tables of 4 among 6 bots, 4 rotations each, 2 repetitions.
    assert_eq!(s.len(), 2 * 15 * 4);
    let ind = independent(s.clone());
    for (d, i) in s.iter().zip(&ind) {
        assert_eq!((d.ordinal, d.set, &d.seats), (i.ordinal, i.set, &i.seats));
        let same_set: Vec<_> = s.iter().filter(|m| m.set == d.set).collect();
        assert!(same_set.iter().all(|m| m.seed == d.seed));
        assert_eq!(ind.iter().filter(|m| m.seed == i.seed).count(), 1);
    }
}

#[test]
fn the_measure_is_deterministic_and_longer_leagues_order_the_field() {
    for game in [Game::Schocken, Game::Zokken] {
        let setup = setup(game);
        let grid = [1, 16];
        let mut totals: Counts = vec![vec![vec![(0, 0); stats(game).len()]; grid.len()]; 2];
        for seed in 0..4 {
            let t = setup.tally(seed, &grid, &builtin);
            assert_eq!(
                t,
                setup.tally(seed, &grid, &builtin),
                "{game:?} deterministic"
            );
            add(&mut totals, &t);
        }
        for (mode, by_grid) in totals.iter().enumerate() {
            // Standings (mean score) at 16 sets per table: duplicate sets put all four leagues
            // fully in order; independent dice (luck not cancelled) at least three of them,
            // with at most one adjacent pair swapped.
            let (all, adjacent) = by_grid[1][0];
            match mode {
                0 => assert_eq!((all, adjacent), (4, 20), "{game:?} duplicate"),
                _ => assert!(
                    all >= 3 && adjacent >= 19,
                    "{game:?} independent: {all}, {adjacent}"
                ),
            }
            // Every count is within its bounds (4 leagues, 5 adjacent pairs each).
            for (all, adjacent) in by_grid.iter().flatten() {
                assert!(*all <= 4 && *adjacent <= 20 && *adjacent >= *all * 5);
            }
        }
    }
}

#[test]
fn the_finer_scores_count_every_round_of_the_log() {
    for game in [Game::Schocken, Game::Sjokken] {
        let setup = setup(game);
        let played = play(&setup.schedule(3, 1), &builtin);
        assert_eq!(
            stats(game).len(),
            3 + SCORES.len() - 1 - usize::from(game == Game::Sjokken)
        );
        for p in &played {
            let r = &p.rounds;
            assert_eq!(r.keys.len(), r.played as usize);
            // A round has one loser, but a SJOK1 round (or a void one) has none.
            let decided = r.keys.iter().filter(|k| k.2.is_some()).count();
            assert_eq!(r.lost.iter().sum::<u32>() as usize, decided, "{game:?}");
            assert!(
                r.taken.iter().sum::<u32>() >= decided as u32,
                "every loser takes a token"
            );
            let loser = p.result.seats.iter().position(|s| s.place == 4).unwrap();
            match game {
                // Two halves, and a final unless one seat lost both.
                Game::Schocken => {
                    let halves: u32 = r.halves.iter().sum();
                    assert!(halves == 2 || halves == 3);
                    assert_eq!(r.halves[loser], 2);
                }
                _ => assert!(r.halves.iter().all(|&h| h == 0)),
            }
            for i in 0..p.result.seats.len() {
                assert_eq!(score(1, p, i), f64::from(r.lost[i]));
                assert_eq!(score(0, p, i), f64::from(p.result.seats[i].place));
            }
        }
    }
}
