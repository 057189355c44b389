//! Complete matches with four in-process heuristic players, per game, with the match log
//! off and on. Throughput is reported in rounds (tie replays not counted).
//!
//! Run: `cargo bench -p knobel-engine --bench matches`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use knobel_engine::policy::{HeuristicPolicy, play_out};
use knobel_engine::{Event, Match, Rules};

const SEATS: usize = 4;
const SEEDS: std::ops::Range<u64> = 0..32;

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

/// Rounds played over all seeds (counted from a logged run).
fn rounds(rules: &Rules) -> u64 {
    SEEDS
        .map(|seed| {
            let m = play(rules, seed, true);
            let log = m.log().expect("logged");
            log.entries
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        knobel_engine::LogEntry::Event {
                            event: Event::RoundStarted { replay: 0, .. }
                        }
                    )
                })
                .count() as u64
        })
        .sum()
}

fn matches(c: &mut Criterion) {
    eprintln!(
        "size of one match state: {} bytes (knobel_engine::Match, without its event buffer and log)",
        std::mem::size_of::<Match>()
    );
    for preset in ["schocken", "sjokken", "zokken"] {
        let rules = Rules::preset(preset).expect("preset");
        let mut group = c.benchmark_group(preset);
        group.throughput(Throughput::Elements(rounds(&rules)));
        for log in [false, true] {
            let id = BenchmarkId::new(
                if log { "log_on" } else { "log_off" },
                format!("{} matches", SEEDS.end),
            );
            group.bench_function(id, |b| {
                b.iter(|| {
                    for seed in SEEDS {
                        std::hint::black_box(play(&rules, seed, log));
                    }
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, matches);
criterion_main!(benches);
