//! One decision of the expert: every decision of four experts playing 8 matches of each
//! preset is recorded (observation), then timed one by one (p50, p99, max printed), and
//! criterion measures the mean over the recorded set.
//!
//! Run: `cargo bench -p knobel-engine --bench expert_decision`

use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use knobel_engine::policy::{ExpertPolicy, Policy};
use knobel_engine::{Match, Observation, Rules};

/// The observations of every decision of four experts in `matches` matches of `preset`.
fn record(preset: &str, matches: u64) -> Vec<Observation> {
    let rules = Rules::preset(preset).expect("preset");
    let mut out = Vec::new();
    for seed in 0..matches {
        let mut m = Match::new(rules.clone(), seed, 4).expect("setup");
        let mut players: Vec<ExpertPolicy> =
            (0..4).map(|s| ExpertPolicy::for_rules(&rules, s)).collect();
        while !m.is_over() {
            for seat in m.to_act().iter() {
                let o = m.observe(seat);
                let action = players[seat.index()].decide(&o, &[]);
                out.push(o);
                m.apply(seat, action).expect("legal");
            }
        }
    }
    out
}

fn decisions(c: &mut Criterion) {
    for preset in ["schocken", "sjokken", "zokken"] {
        let rules = Rules::preset(preset).expect("preset");
        let observations = record(preset, if preset == "zokken" { 2 } else { 8 });
        let mut expert = ExpertPolicy::for_rules(&rules, 1);
        let mut times: Vec<f64> = observations
            .iter()
            .map(|o| {
                let t = Instant::now();
                std::hint::black_box(expert.decide(o, &[]));
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let q = |p: f64| times[((times.len() - 1) as f64 * p) as usize];
        eprintln!(
            "{preset}: {} decisions, p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
            times.len(),
            q(0.5),
            q(0.99),
            q(1.0)
        );
        let mut i = 0;
        c.bench_function(&format!("{preset}/one expert decision"), |b| {
            b.iter(|| {
                i = (i + 1) % observations.len();
                std::hint::black_box(expert.decide(&observations[i], &[]))
            })
        });
    }
}

criterion_group!(benches, decisions);
criterion_main!(benches);
