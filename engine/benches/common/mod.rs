//! Complete matches of four in-process heuristic players: what the `matches` benchmark
//! measures and the `profile_matches` example counts instructions of.

use knobel_engine::policy::{HeuristicPolicy, play_out};
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

/// Rounds of the match played from `seed` (tie replays not counted), from a logged run.
pub fn rounds(rules: &Rules, seed: u64) -> u64 {
    play(rules, seed, true)
        .log()
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
