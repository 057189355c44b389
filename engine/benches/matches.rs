//! Complete matches with four in-process heuristic players, per game, with the match log
//! off and on, and with four expert players (log off). Throughput is reported in rounds
//! (tie replays not counted). For the experts it first prints, per game, their rounds per
//! second on seeds never played before, cold and in steady state (see `unseen`); the
//! criterion figure that follows repeats 32 seeds (every decision a cache hit after the
//! first pass).
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
        // Four experts on seeds never played before (see `unseen`), then the repeated seeds
        // below (criterion: after the first pass every decision is a cache hit).
        unseen(&rules, preset);
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

/// Matches of unseen seeds timed once in each figure.
const UNSEEN: u64 = 200;

/// Matches played on other seeds before the steady-state figure.
const WARM_UP: u64 = 1000;

/// Rounds per second of four experts over `UNSEEN` matches from seed `first` (seeds no
/// other pass of this benchmark plays), timed once.
fn time_unseen(rules: &knobel_engine::Rules, first: u64) -> f64 {
    let seeds = first..first + UNSEEN;
    let start = std::time::Instant::now();
    for seed in seeds.clone() {
        std::hint::black_box(play_experts(rules, seed));
    }
    let elapsed = start.elapsed();
    let rounds: u64 = seeds.map(|seed| expert_rounds(rules, seed)).sum();
    rounds as f64 / elapsed.as_secs_f64()
}

/// The expert figures on unseen seeds, printed per game:
/// - tables: the one-time cost of the expert's tables (the first match, which builds them,
///   and 31 more on seeds 0..32, timed together);
/// - cold: right after that, `UNSEEN` matches of seeds never played before (the decision
///   cache holds only what those 32 matches put in it);
/// - steady state: after `WARM_UP` more matches on other seeds (a long-running arena,
///   whose decision cache has filled), five blocks of `UNSEEN` further matches of seeds
///   never played before, each timed once (the lowest, median and highest printed: a
///   block of Sjokken lasts a few tens of milliseconds, so one block alone is noisy on a
///   shared machine).
fn unseen(rules: &knobel_engine::Rules, preset: &str) {
    let start = std::time::Instant::now();
    for seed in SEEDS {
        play_experts(rules, seed);
    }
    let tables = start.elapsed();
    let cold = time_unseen(rules, 1_000_000);
    for seed in 2_000_000..2_000_000 + WARM_UP {
        play_experts(rules, seed);
    }
    let mut warm: Vec<f64> = (0..5)
        .map(|block| time_unseen(rules, 3_000_000 + block * UNSEEN))
        .collect();
    warm.sort_by(f64::total_cmp);
    eprintln!(
        "{preset}: four experts, {UNSEEN} matches of unseen seeds, timed once: cold {cold:.0} \
         rounds/s; steady state (after {WARM_UP} matches on other seeds, five blocks) \
         {:.0} / {:.0} / {:.0} rounds/s (lowest / median / highest); tables and the first {} \
         matches: {:.2} s",
        warm[0],
        warm[2],
        warm[4],
        SEEDS.end,
        tables.as_secs_f64()
    );
}

criterion_group!(benches, matches);
criterion_main!(benches);
