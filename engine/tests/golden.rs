//! Golden playthroughs, one per preset: every player's observation at every step, and the
//! public events, recorded as checked-in text. A change to what any player sees shows up
//! as a diff here; treat such a diff as a security change and review it line by line.
//!
//! Regenerate after an intended change: `UPDATE_GOLDEN=1 cargo test -p knobel-engine --test golden`

use std::fmt::Write as _;
use std::path::PathBuf;

use knobel_engine::policy::{HeuristicPolicy, Policy, RandomPolicy};
use knobel_engine::{Game, Match, PRESETS, Rules, Seat};

const SEATS: usize = 3;
const SEED: u64 = 20_261_129;

fn playthrough(preset: &str) -> String {
    let mut rules = Rules::preset(preset).unwrap();
    let mut out = String::new();
    writeln!(
        out,
        "# golden playthrough: preset {preset}, seed {SEED}, {SEATS} seats"
    )
    .unwrap();
    if rules.game() == Game::Zokken {
        // Keeps the file readable; every mechanic shows up within a few rounds.
        rules.set_number("rounds", 4).unwrap();
        writeln!(out, "# zokken shortened to 4 rounds").unwrap();
    }
    writeln!(out, "# seat 0 and 2: heuristic; seat 1: random").unwrap();
    let mut m = Match::new(rules, SEED, SEATS).unwrap();
    let mut players: Vec<Box<dyn Policy>> = vec![
        Box::new(HeuristicPolicy),
        Box::new(RandomPolicy::new(SEED)),
        Box::new(HeuristicPolicy),
    ];
    let mut step = 0;
    let record = |out: &mut String, m: &Match, step: usize, what: &str| {
        writeln!(out, "\n## step {step}: {what}").unwrap();
        for event in m.last_events() {
            writeln!(out, "event {}", serde_json::to_string(event).unwrap()).unwrap();
        }
        for seat in 0..SEATS as u8 {
            let observation = serde_json::to_string(&m.observe(Seat(seat))).unwrap();
            writeln!(out, "seat {seat} sees {observation}").unwrap();
        }
    };
    record(&mut out, &m, step, "start");
    while !m.is_over() {
        for seat in m.to_act().iter() {
            step += 1;
            let player = &mut players[seat.index()];
            let legal = m.legal_actions(seat);
            let action = player.decide(&m.observe(seat), &legal);
            let action = if legal.contains(&action) {
                action
            } else {
                m.default_action(seat).unwrap()
            };
            m.apply(seat, action).unwrap();
            record(&mut out, &m, step, &format!("{seat} plays {action}"));
        }
    }
    writeln!(
        out,
        "\n# outcome {}",
        serde_json::to_string(&m.outcome()).unwrap()
    )
    .unwrap();
    out
}

#[test]
fn golden_playthroughs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for preset in PRESETS {
        let actual = playthrough(preset);
        let path = dir.join(format!("{preset}.txt"));
        if update {
            std::fs::write(&path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "cannot read {}: {e} (run with UPDATE_GOLDEN=1)",
                path.display()
            )
        });
        if let Some((line, (want, got))) = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .find(|(_, (want, got))| want != got)
        {
            panic!(
                "{preset}: golden playthrough differs at line {}:\n  golden: {want}\n  now:    {got}\n(review the change; UPDATE_GOLDEN=1 rewrites the files)",
                line + 1
            );
        }
        assert_eq!(
            expected.lines().count(),
            actual.lines().count(),
            "{preset}: golden length differs"
        );
    }
}
