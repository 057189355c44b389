//! One decision of the expert: after one match that builds the expert's tables (seed 100),
//! every decision of four experts playing 8 matches of each preset (2 of Zokken) is timed as
//! it is made, on seeds not played before (p50, p99, max printed: what a decision costs on
//! first sight, the decision cache holding only what earlier decisions put in it), and
//! recorded; criterion then measures the mean over the recorded set (repeated observations:
//! cache hits for Schocken and Sjokken).
//!
//! Run: `cargo bench -p knobel-engine --bench expert_decision`

use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use knobel_engine::policy::{ExpertPolicy, Policy};
use knobel_engine::{Match, Observation, Rules};

/// The observations of every decision of four experts in `matches` matches of `preset`
/// (match seeds `first..`), with the time each decision took (µs).
fn record(preset: &str, first: u64, matches: u64) -> (Vec<Observation>, Vec<f64>) {
    let rules = Rules::preset(preset).expect("preset");
    let mut out = Vec::new();
    let mut times = Vec::new();
    for seed in first..first + matches {
        let mut m = Match::new(rules.clone(), seed, 4).expect("setup");
        let mut players: Vec<ExpertPolicy> =
            (0..4).map(|s| ExpertPolicy::for_rules(&rules, s)).collect();
        while !m.is_over() {
            for seat in m.to_act().iter() {
                let o = m.observe(seat);
                let t = Instant::now();
                let action = players[seat.index()].decide(&o, &[]);
                times.push(t.elapsed().as_secs_f64() * 1e6);
                out.push(o);
                m.apply(seat, action).expect("legal");
            }
        }
    }
    (out, times)
}

fn decisions(c: &mut Criterion) {
    for preset in ["schocken", "sjokken", "zokken"] {
        let rules = Rules::preset(preset).expect("preset");
        record(preset, 100, 1);
        let (observations, mut times) = record(preset, 0, if preset == "zokken" { 2 } else { 8 });
        let mut expert = ExpertPolicy::for_rules(&rules, 1);
        times.sort_by(f64::total_cmp);
        let q = |p: f64| times[((times.len() - 1) as f64 * p) as usize];
        eprintln!(
            "{preset}: {} decisions on first sight, p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
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
