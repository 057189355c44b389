//! The cost of the luck correction (`knobel_engine::match_luck`): per game, the luck terms
//! of 16 complete matches of four heuristic players, computed from their logs as the arena
//! computes them when a result is recorded. Throughput is reported in matches. The first
//! pass (printed before the criterion figure) also builds the tables the value functions
//! share in the process (reference turns, the expert's Zokken model).
//!
//! Run: `cargo bench -p knobel-engine --bench luck`. The variance the correction removes
//! is measured by `cargo test --release -p knobel-engine --test luck -- --ignored
//! --nocapture` (docs/luck.md).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use knobel_engine::{MatchLog, Rules, match_luck};

mod common;
use common::play;

const SEEDS: std::ops::Range<u64> = 0..16;

fn luck(c: &mut Criterion) {
    for preset in ["schocken", "sjokken", "zokken"] {
        let rules = Rules::preset(preset).expect("preset");
        let logs: Vec<MatchLog> = SEEDS
            .map(|seed| play(&rules, seed, true).log().expect("logged").clone())
            .collect();
        let start = std::time::Instant::now();
        let throws: usize = logs
            .iter()
            .map(|log| match_luck(log).expect("luck").throws.len())
            .sum();
        eprintln!(
            "{preset}: first pass (tables built) {:.1} ms per match, {} throws per match",
            start.elapsed().as_secs_f64() * 1e3 / logs.len() as f64,
            throws / logs.len()
        );
        let mut group = c.benchmark_group(format!("luck_{preset}"));
        group.throughput(Throughput::Elements(logs.len() as u64));
        group.sample_size(10);
        group.bench_function(
            BenchmarkId::new("match_luck", format!("{} matches", logs.len())),
            |b| {
                b.iter(|| {
                    for log in &logs {
                        std::hint::black_box(match_luck(log).expect("luck"));
                    }
                })
            },
        );
        group.finish();
    }
}

criterion_group!(benches, luck);
criterion_main!(benches);
