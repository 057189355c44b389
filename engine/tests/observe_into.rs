//! `Match::observe_into` reuses the buffers of any earlier observation (of another seat,
//! step, match, seat count or game); what it builds must equal a fresh `Match::observe`.

use knobel_engine::policy::{HeuristicPolicy, Policy, RandomPolicy};
use knobel_engine::{Match, PRESETS, Rules, Seat};

#[test]
fn reused_observations_equal_fresh_ones() {
    // One buffer for everything, so that its vectors come in every length.
    let first = Match::new(Rules::preset("schocken").unwrap(), 0, 2).unwrap();
    let mut reused = first.observe(Seat(0));
    let mut checked = 0;
    for (i, seats) in [5, 2, 10, 3, 4].into_iter().enumerate() {
        for preset in PRESETS {
            let mut rules = Rules::preset(preset).unwrap();
            if preset == "zokken" {
                rules.set_number("rounds", 3).unwrap();
            }
            let seed = 1000 + i as u64;
            let mut m = Match::new(rules, seed, seats).unwrap();
            let mut players: Vec<Box<dyn Policy>> = (0..seats)
                .map(|s| -> Box<dyn Policy> {
                    if s % 2 == 0 {
                        Box::new(HeuristicPolicy)
                    } else {
                        Box::new(RandomPolicy::new(seed + s as u64))
                    }
                })
                .collect();
            let mut steps = 0;
            while !m.is_over() && steps < 2_000 {
                for seat in m.to_act().iter() {
                    for observer in (0..seats as u8).rev() {
                        m.observe_into(Seat(observer), &mut reused);
                        assert_eq!(
                            reused,
                            m.observe(Seat(observer)),
                            "{preset}, seat {observer}"
                        );
                        checked += 1;
                    }
                    let legal = m.legal_actions(seat);
                    let action = players[seat.index()].decide(&m.observe(seat), &legal);
                    if m.apply(seat, action).is_err() {
                        m.apply(seat, m.default_action(seat).unwrap()).unwrap();
                    }
                    steps += 1;
                }
            }
            m.observe_into(Seat(0), &mut reused);
            assert_eq!(reused, m.observe(Seat(0)), "{preset}, over");
        }
    }
    assert!(checked > 5_000, "{checked} observations checked");
}
