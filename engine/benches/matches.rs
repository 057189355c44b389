//! Complete matches with four in-process heuristic players, per game, with the match log
//! off and on, and with four expert players (log off). Throughput is reported in rounds
//! (tie replays not counted).
//!
//! Run: `cargo bench -p knobel-engine --bench matches` (the expert case alone:
//! `cargo bench -p knobel-engine --bench matches -- experts`)

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use knobel_engine::{Match, Rules};

mod common;
use common::{expert_rounds, play, play_experts, rounds};

const SEEDS: std::ops::Range<u64> = 0..32;

fn matches(c: &mut Criterion) {
    eprintln!(
        "size of one match state: {} bytes (knobel_engine::Match, without its event buffer and log)",
        std::mem::size_of::<Match>()
    );
    for preset in ["schocken", "sjokken", "zokken"] {
        let rules = Rules::preset(preset).expect("preset");
        let mut group = c.benchmark_group(preset);
        group.throughput(Throughput::Elements(
            SEEDS.map(|seed| rounds(&rules, seed)).sum(),
        ));
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
        // Four experts: their tables are built on first use, before measuring. Then one
        // pass over seeds never played before, timed once: its turns mostly miss the cache
        // of solved decisions, which the measured (repeated) seeds below then hit.
        for seed in SEEDS {
            play_experts(&rules, seed);
        }
        let fresh = 1000..1000 + SEEDS.end;
        let start = std::time::Instant::now();
        for seed in fresh.clone() {
            std::hint::black_box(play_experts(&rules, seed));
        }
        let elapsed = start.elapsed();
        let fresh_rounds: u64 = fresh.map(|seed| expert_rounds(&rules, seed)).sum();
        eprintln!(
            "{preset}: four experts, {} matches on fresh seeds (once): {:.0} rounds/s",
            SEEDS.end,
            fresh_rounds as f64 / elapsed.as_secs_f64()
        );
        group.throughput(Throughput::Elements(
            SEEDS.map(|seed| expert_rounds(&rules, seed)).sum(),
        ));
        group.bench_function(
            BenchmarkId::new("experts_log_off", format!("{} matches", SEEDS.end)),
            |b| {
                b.iter(|| {
                    for seed in SEEDS {
                        std::hint::black_box(play_experts(&rules, seed));
                    }
                })
            },
        );
        group.finish();
    }
}

criterion_group!(benches, matches);
criterion_main!(benches);
