//! The built-in players that draw on a seed (the heuristic ladder and the expert) play only
//! legal actions, deterministically from their seed, in every game; the handicapped players
//! play only legal actions, deterministically from what they see.

use knobel_engine::policy::{
    ExpertPolicy, HANDICAP_LADDER, HEURISTIC_LADDER, HandicapPolicy, HeuristicPolicy,
    NoisyHeuristicPolicy, Policy, by_name,
};
use knobel_engine::{Action, Match, Rules};

/// Plays a match of `preset` (match seed `seed`) with `players[seat]` in each seat,
/// checking that every action is legal; the actions in order and the placings.
fn play(preset: &str, seed: u64, players: &mut [Box<dyn Policy>]) -> (Vec<Action>, Vec<u8>) {
    let rules = Rules::preset(preset).unwrap();
    let mut m = Match::new(rules.clone(), seed, players.len()).unwrap();
    for player in players.iter_mut() {
        player.begin_match(&rules);
    }
    let mut actions = Vec::new();
    while !m.is_over() {
        for seat in m.to_act().iter() {
            let legal = m.legal_actions(seat);
            let action = players[seat.index()].decide(&m.observe(seat), &legal);
            assert!(
                legal.contains(&action),
                "{preset}: {} played {action:?}, not legal",
                players[seat.index()].name()
            );
            m.apply(seat, action).expect("a legal action applies");
            actions.push(action);
        }
    }
    (actions, m.outcome().unwrap().placings)
}

/// A match of ladder player `name` in every seat (player seeds `seed ^ seat`, match seed 99).
fn ladder(preset: &str, seats: usize, name: &str, seed: u64) -> (Vec<Action>, Vec<u8>) {
    let mut players: Vec<Box<dyn Policy>> = (0..seats as u64)
        .map(|s| -> Box<dyn Policy> {
            Box::new(NoisyHeuristicPolicy::from_ladder(name, seed ^ s).unwrap())
        })
        .collect();
    play(preset, 99, &mut players)
}

/// A match of experts in every seat (player seeds `seed ^ seat`, match seed `seed`).
fn experts(preset: &str, seats: usize, seed: u64) -> Vec<Action> {
    let rules = Rules::preset(preset).unwrap();
    let mut players: Vec<Box<dyn Policy>> = (0..seats as u64)
        .map(|s| -> Box<dyn Policy> { Box::new(ExpertPolicy::for_rules(&rules, seed ^ s)) })
        .collect();
    play(preset, seed, &mut players).0
}

#[test]
fn ladder_players_play_only_legal_actions() {
    for (name, _) in HEURISTIC_LADDER {
        for (preset, seats) in [("schocken", 4), ("sjokken", 4), ("zokken", 2)] {
            for seed in 0..3 {
                ladder(preset, seats, name, seed);
            }
        }
    }
}

#[test]
fn ladder_players_are_deterministic_from_their_seed() {
    for (preset, seats) in [("schocken", 4), ("sjokken", 3), ("zokken", 2)] {
        let a = ladder(preset, seats, "heuristic-40", 7);
        assert_eq!(a, ladder(preset, seats, "heuristic-40", 7), "{preset}");
        assert_ne!(a.0, ladder(preset, seats, "heuristic-40", 8).0, "{preset}");
    }
}

#[test]
fn the_expert_plays_legal_actions_in_every_preset() {
    for preset in ["schocken", "schocken-typenclub", "sjokken", "zokken"] {
        for seed in 0..2 {
            let a = experts(preset, 4, seed);
            assert_eq!(a, experts(preset, 4, seed), "{preset} is deterministic");
        }
    }
}

/// A match of handicapped player `name` against the heuristic in every other seat (match
/// seed `seed`).
fn handicapped(preset: &str, seats: usize, name: &str, seed: u64) -> (Vec<Action>, Vec<u8>) {
    let mut players: Vec<Box<dyn Policy>> = (0..seats)
        .map(|s| -> Box<dyn Policy> {
            if s == 0 {
                Box::new(HandicapPolicy::by_name(name).unwrap())
            } else {
                Box::new(HeuristicPolicy)
            }
        })
        .collect();
    play(preset, seed, &mut players)
}

#[test]
fn handicapped_players_play_only_legal_actions() {
    for name in HANDICAP_LADDER {
        for (preset, seats) in [
            ("schocken", 4),
            ("schocken-typenclub", 3),
            ("sjokken", 4),
            ("zokken", 2),
            ("zokken", 4),
        ] {
            for seed in 0..3 {
                handicapped(preset, seats, name, seed);
            }
        }
    }
}

#[test]
fn handicapped_players_are_deterministic_and_need_no_seed() {
    for name in HANDICAP_LADDER {
        for (preset, seats) in [("schocken", 4), ("sjokken", 3), ("zokken", 2)] {
            let a = handicapped(preset, seats, name, 5);
            assert_eq!(a, handicapped(preset, seats, name, 5), "{name} in {preset}");
        }
        // `by_name` ignores the seed: two seeds decide alike on the same observation.
        let m = Match::new(Rules::preset("schocken").unwrap(), 5, 2).unwrap();
        let seat = m.to_act().iter().next().unwrap();
        let (o, legal) = (m.observe(seat), m.legal_actions(seat));
        let mut x = by_name(name, 1).unwrap();
        let mut y = by_name(name, 2).unwrap();
        assert_eq!(x.decide(&o, &legal), y.decide(&o, &legal), "{name}");
    }
}
