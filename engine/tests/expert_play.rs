//! The expert plays only legal actions, deterministically from its seed, in every game.

use knobel_engine::policy::{ExpertPolicy, Policy};
use knobel_engine::{Action, Match, Rules};

fn play(preset: &str, seats: usize, seed: u64) -> Vec<Action> {
    let rules = Rules::preset(preset).unwrap();
    let mut m = Match::new(rules.clone(), seed, seats).unwrap();
    let mut players: Vec<ExpertPolicy> = (0..seats as u64)
        .map(|s| ExpertPolicy::for_rules(&rules, seed ^ s))
        .collect();
    let mut actions = Vec::new();
    while !m.is_over() {
        for seat in m.to_act().iter() {
            let legal = m.legal_actions(seat);
            let action = players[seat.index()].decide(&m.observe(seat), &legal);
            assert!(legal.contains(&action), "{preset}: {action:?} is not legal");
            m.apply(seat, action).unwrap();
            actions.push(action);
        }
    }
    actions
}

#[test]
fn the_expert_plays_legal_actions_in_every_preset() {
    for preset in ["schocken", "schocken-typenclub", "sjokken", "zokken"] {
        for seed in 0..2 {
            let a = play(preset, 4, seed);
            assert_eq!(a, play(preset, 4, seed), "{preset} is deterministic");
        }
    }
}
