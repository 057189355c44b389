//! Every decision of the expert, pinned: four (three, two) experts play matches of every
//! preset and of Schocken variants, and a hash of all their actions in order must equal the
//! one recorded before the expert was made faster. The decision cache, the precomputed
//! tables and the faster solvers must choose exactly what the plain solver chose. Forced
//! moves (a single legal action) are left out of the hash: they are no decision.

use knobel_engine::policy::{ExpertPolicy, Policy};
use knobel_engine::{Match, Rules};

/// FNV-1a over the debug text of every action of `matches` matches of `rules` (match seeds
/// `first..`, expert seeds `seed ^ seat << 32`), with `seats` experts.
fn fingerprint(rules: &Rules, seats: usize, first: u64, matches: u64) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for seed in first..first + matches {
        let mut m = Match::new(rules.clone(), seed, seats).unwrap();
        let mut players: Vec<ExpertPolicy> = (0..seats as u64)
            .map(|s| ExpertPolicy::for_rules(rules, seed ^ s << 32))
            .collect();
        while !m.is_over() {
            for seat in m.to_act().iter() {
                let action = players[seat.index()].decide(&m.observe(seat), &[]);
                // A forced move (one legal action: stopping after a last throw under the
                // cup with no six to turn) is no choice of the expert's.
                if m.legal_actions(seat).len() > 1 {
                    for byte in format!("{action:?}").bytes() {
                        hash = (hash ^ byte as u64).wrapping_mul(0x100_0000_01b3);
                    }
                }
                m.apply(seat, action).unwrap();
            }
        }
    }
    hash
}

fn schocken(bits: u8) -> Rules {
    let mut rules = Rules::preset("schocken").unwrap();
    if let Rules::Schocken(r) = &mut rules {
        r.jule = bits & 1 != 0;
        r.straight_in_one_throw = bits & 2 != 0;
        r.tie_later_loses = bits & 4 != 0;
        r.turn_on_last_throw = bits & 8 != 0;
    }
    rules
}

fn check(name: &str, rules: &Rules, seats: usize, matches: u64, expected: u64) -> Option<String> {
    let got = fingerprint(rules, seats, 500, matches);
    (got != expected).then(|| format!("{name}, {seats} seats: {got:#x}, expected {expected:#x}"))
}

#[test]
fn the_expert_decides_as_before_in_every_preset() {
    let wrong = [
        ("schocken", 4, 24, 0x2aa5_9b31_7dc1_eeb8u64),
        ("schocken", 3, 12, 0x520f_66c0_1ec9_5e72),
        ("schocken-typenclub", 4, 12, 0xa09d_26e2_728f_722b),
        ("sjokken", 4, 24, 0x1d79_72a7_cdc7_149f),
        ("sjokken", 2, 12, 0xb541_851d_e3f6_2a68),
        ("zokken", 4, 6, 0xec96_1a9b_a8f6_f9a4),
        ("zokken", 2, 6, 0x7a81_6564_26a5_a9c6),
    ]
    .into_iter()
    .filter_map(|(preset, seats, matches, expected)| {
        check(
            preset,
            &Rules::preset(preset).unwrap(),
            seats,
            matches,
            expected,
        )
    })
    .collect::<Vec<_>>();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_expert_decides_as_before_in_schocken_variants() {
    let wrong = [
        (1u8, 0x6408_cd84_15e2_a9a8u64),
        (2, 0x7339_cc37_c9d9_b7e2),
        (4, 0xbe58_9015_8530_7f72),
        (8, 0x5155_dcd3_3f3b_8622),
        (15, 0x30ea_e0d5_921c_c92e),
    ]
    .into_iter()
    .filter_map(|(bits, expected)| {
        check(
            &format!("schocken variant {bits}"),
            &schocken(bits),
            4,
            8,
            expected,
        )
    })
    .collect::<Vec<_>>();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_expert_decides_as_before_in_zokken_with_the_other_last_throw_rule() {
    let mut rules = Rules::preset("zokken").unwrap();
    if let Rules::Zokken(r) = &mut rules {
        r.bet_after_last_throw = !r.bet_after_last_throw;
    }
    let wrong = check(
        "zokken, bet_after_last_throw flipped",
        &rules,
        4,
        6,
        0xe655_72cc_a964_d4d2,
    );
    assert!(wrong.is_none(), "{wrong:?}");
}
