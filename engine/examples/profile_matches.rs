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

use knobel_engine::Rules;

#[path = "../benches/common/mod.rs"]
mod common;
use common::{play, rounds};

fn main() {
    let mut args = std::env::args().skip(1);
    let preset = args.next().unwrap_or_else(|| "schocken".to_owned());
    let matches: u64 = args.next().map_or(200, |n| n.parse().expect("a number"));
    let rules = Rules::preset(&preset).expect("a preset");
    play_all(&rules, matches);
    let rounds: u64 = (0..matches).map(|seed| rounds(&rules, seed)).sum();
    println!("{preset}: {matches} matches, {rounds} rounds");
}

/// The measured part: `matches` complete matches, log off.
#[inline(never)]
fn play_all(rules: &Rules, matches: u64) {
    for seed in 0..matches {
        std::hint::black_box(play(rules, seed, false));
    }
}
