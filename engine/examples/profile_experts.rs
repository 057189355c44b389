//! Plays complete matches with four experts on seeds never played before, per game, and
//! prints rounds per second: for profiling the expert (`perf record`).
//!
//! ```text
//! cargo build --release -p knobel-engine --example profile_experts
//! target/release/examples/profile_experts zokken 32
//! ```

use knobel_engine::Rules;

#[path = "../benches/common/mod.rs"]
mod common;
use common::{expert_rounds, play_experts};

fn main() {
    let mut args = std::env::args().skip(1);
    let preset = args.next().unwrap_or_else(|| "schocken".to_owned());
    let matches: u64 = args.next().map_or(32, |n| n.parse().expect("a number"));
    let first: u64 = args.next().map_or(1000, |n| n.parse().expect("a number"));
    let rules = Rules::preset(&preset).expect("a preset");
    // Tables built on other seeds first.
    for seed in 0..32 {
        play_experts(&rules, seed);
    }
    let start = std::time::Instant::now();
    play_all(&rules, first, matches);
    let elapsed = start.elapsed();
    let rounds: u64 = (first..first + matches)
        .map(|seed| expert_rounds(&rules, seed))
        .sum();
    println!(
        "{preset}: {matches} matches from seed {first}, {rounds} rounds, {:.3} s, {:.0} rounds/s",
        elapsed.as_secs_f64(),
        rounds as f64 / elapsed.as_secs_f64()
    );
}

/// The measured part.
#[inline(never)]
fn play_all(rules: &Rules, first: u64, matches: u64) {
    for seed in first..first + matches {
        std::hint::black_box(play_experts(rules, seed));
    }
}
