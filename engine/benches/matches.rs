//! Complete matches with four in-process heuristic players, per game, with the match log
//! off and on. Throughput is reported in rounds (tie replays not counted).
//!
//! Run: `cargo bench -p knobel-engine --bench matches`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use knobel_engine::{Match, Rules};

mod common;
use common::{play, rounds};

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
        group.finish();
    }
}

criterion_group!(benches, matches);
criterion_main!(benches);
