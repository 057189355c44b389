//! Plays complete matches with four heuristic players (log off), for instruction counts:
//!
//! ```text
//! cargo build --release -p knobel-engine --example profile_matches
//! valgrind --tool=callgrind --toggle-collect='*play_all*' \
//!     target/release/examples/profile_matches schocken 200
//! ```
//!
//! Prints the rounds played (tie replays not counted, counted afterwards from logged
//! replays outside `play_all`), so instructions per round can be worked out.

use knobel_engine::policy::{HeuristicPolicy, play_out};
use knobel_engine::{Event, LogEntry, Match, Rules};

const SEATS: usize = 4;

fn main() {
    let mut args = std::env::args().skip(1);
    let preset = args.next().unwrap_or_else(|| "schocken".to_owned());
    let matches: u64 = args.next().map_or(200, |n| n.parse().expect("a number"));
    let rules = Rules::preset(&preset).expect("a preset");
    play_all(&rules, matches);
    let rounds: u64 = (0..matches).map(|seed| count_rounds(&rules, seed)).sum();
    println!("{preset}: {matches} matches, {rounds} rounds");
}

fn play(rules: &Rules, seed: u64, log: bool) -> Match {
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

/// The measured part: `matches` complete matches, log off.
#[inline(never)]
fn play_all(rules: &Rules, matches: u64) {
    for seed in 0..matches {
        std::hint::black_box(play(rules, seed, false));
    }
}

/// Rounds of the match played from `seed`, from a logged run.
fn count_rounds(rules: &Rules, seed: u64) -> u64 {
    let m = play(rules, seed, true);
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
