//! Complete matches of four in-process heuristic (or expert) players: what the `matches`
//! benchmark measures and the `profile_matches` example counts instructions of.

#![allow(dead_code)]

use knobel_engine::policy::{ExpertPolicy, HeuristicPolicy, play_out};
use knobel_engine::{Event, LogEntry, Match, Rules};

/// Players at the table.
pub const SEATS: usize = 4;

/// The complete match played from `seed` by heuristic players, with the log on or off.
pub fn play(rules: &Rules, seed: u64, log: bool) -> Match {
    let mut m = if log {
        Match::new_with_log(rules.clone(), seed, SEATS)
    } else {
        Match::new(rules.clone(), seed, SEATS)
    }
    .expect("valid setup");
    let mut players: Vec<Box<HeuristicPolicy>> =
        (0..SEATS).map(|_| Box::new(HeuristicPolicy)).collect();
    play_out(&mut m, &mut players);
    m
}

/// The complete match played from `seed` by four experts (log off), seeded from `seed`.
pub fn play_experts(rules: &Rules, seed: u64) -> Match {
    experts(rules, seed, false)
}

fn experts(rules: &Rules, seed: u64, log: bool) -> Match {
    let mut m = if log {
        Match::new_with_log(rules.clone(), seed, SEATS)
    } else {
        Match::new(rules.clone(), seed, SEATS)
    }
    .expect("valid setup");
    let mut players: Vec<Box<ExpertPolicy>> = (0..SEATS as u64)
        .map(|s| Box::new(ExpertPolicy::new(seed ^ s << 32)))
        .collect();
    play_out(&mut m, &mut players);
    m
}

/// Rounds of the match played from `seed` (tie replays not counted), from a logged run.
pub fn rounds(rules: &Rules, seed: u64) -> u64 {
    count_rounds(&play(rules, seed, true))
}

/// Rounds of the expert match played from `seed` (tie replays not counted).
pub fn expert_rounds(rules: &Rules, seed: u64) -> u64 {
    count_rounds(&experts(rules, seed, true))
}

/// Rounds of a logged match (tie replays not counted).
pub fn count_rounds(m: &Match) -> u64 {
    m.log()
        .expect("logged")
        .entries
        .iter()
        .filter(|e| {
            matches!(
                e,
                LogEntry::Event {
                    event: Event::RoundStarted { replay: 0, .. }
                }
            )
        })
        .count() as u64
}
