//! The table at every step, in every view, of scripted matches: a Schocken round whose dice
//! lie under the cup until the reveal, and a Zokken round with a reroll.

use knobel_engine::policy::{HeuristicPolicy, Policy, play_out};
use knobel_engine::{
    Action, DiceScript, DieMask, Event, LogEntry, Match, MatchLog, Observation, PRESETS, Rules,
    Seat,
};

use super::{Lie, SeatView, Sight, Step, full_steps, public_steps, seat_steps, steps};

const SEED: u64 = 4_711;

fn names() -> Vec<String> {
    ["ada", "bert", "cleo"].map(String::from).to_vec()
}

/// A match of `rules` with `script`'s dice, played out by `play`; its log.
fn scripted(rules: &Rules, script: &DiceScript, play: fn(&mut Match)) -> MatchLog {
    let mut m = Match::scripted(rules.clone(), SEED, 3, script.clone()).unwrap();
    play(&mut m);
    m.log().unwrap().clone()
}

/// In round 1 every seat throws all three dice a second time; otherwise every seat stops
/// as soon as it may (the default action).
fn twice_in_round_one(m: &mut Match) {
    let again = Action::reroll(DieMask::ALL);
    while let Some(seat) = m.to_act().iter().next() {
        let first = match m.observe(seat) {
            Observation::Shake(o) => o.round == 1 && o.turns[seat.index()].throws == 1,
            Observation::Zokken(_) => false,
        };
        let action = if first && m.legal_actions(seat).contains(&again) {
            again
        } else {
            m.default_action(seat).unwrap()
        };
        m.apply(seat, action).unwrap();
    }
}

fn by_heuristic(m: &mut Match) {
    let mut players: Vec<Box<dyn Policy>> = (0..3)
        .map(|_| Box::new(HeuristicPolicy) as Box<dyn Policy>)
        .collect();
    play_out(m, &mut players);
}

/// The public, full and per-seat steps of a scripted log.
struct Views {
    public: Vec<Step>,
    full: Vec<Step>,
    seats: Vec<Vec<Step>>,
}

fn views(log: &MatchLog, script: &DiceScript) -> Views {
    let seats = (0..3u8)
        .map(|seat| {
            let game = Match::scripted(log.rules.clone(), SEED, 3, script.clone()).unwrap();
            seat_steps(log, &names(), Seat(seat), game).unwrap()
        })
        .collect();
    Views {
        public: public_steps(&log.public_record(), &names()).unwrap(),
        full: full_steps(log, &names()),
        seats,
    }
}

fn faces(seat: &SeatView) -> [Option<u8>; 3] {
    seat.dice.map(|d| d.face)
}

fn lies(seat: &SeatView) -> [Lie; 3] {
    seat.dice.map(|d| d.lie)
}

/// Where the step of `text` (its start) first is in round `round`.
fn step_of(steps: &[Step], text: &str, round: u32) -> usize {
    steps
        .iter()
        .position(|s| s.text.starts_with(text) && s.table.round == round)
        .unwrap_or_else(|| panic!("no step {text:?} in round {round}"))
}

/// In every step of every view but the full one, no die under the cup shows a face to
/// anybody but its seat's own view; the full view shows every die thrown.
fn no_hidden_die_leaks(v: &Views) {
    for (i, step) in v.public.iter().enumerate() {
        for seat in &step.table.seats {
            for d in seat.dice {
                assert!(d.lie != Lie::Cup || d.face.is_none(), "public step {i}");
            }
        }
    }
    for (me, steps) in v.seats.iter().enumerate() {
        for (i, step) in steps.iter().enumerate() {
            for (other, seat) in step.table.seats.iter().enumerate() {
                for d in seat.dice {
                    if other != me && d.lie == Lie::Cup {
                        assert_eq!(d.face, None, "seat {me}'s view, step {i}: seat {other}");
                    }
                }
            }
        }
    }
    for step in &v.full {
        for seat in &step.table.seats {
            for d in seat.dice {
                assert_eq!(d.face.is_some(), d.lie != Lie::Empty, "{}", step.text);
            }
        }
    }
}

#[test]
fn a_schocken_cup_is_covered_in_public_shown_in_full_and_to_its_own_seat_only() {
    let rules = Rules::preset("schocken").unwrap();
    let mut script = DiceScript::new();
    for seat in 0..3u8 {
        script.set(Seat(seat), 1, 1, &[0, 1, 2], [6, 5, seat + 1]);
        script.set(Seat(seat), 1, 2, &[0, 1, 2], [3, 3, seat + 1]);
    }
    let log = scripted(&rules, &script, twice_in_round_one);
    let v = views(&log, &script);
    let texts = |steps: &[Step]| steps.iter().map(|s| s.text.clone()).collect::<Vec<_>>();
    for seat in &v.seats {
        assert_eq!(
            texts(seat),
            texts(&v.public),
            "a seat's lines are the public ones"
        );
    }
    assert_eq!(v.full.len(), v.public.len());
    no_hidden_die_leaks(&v);

    // bert's first throw lies under the cup.
    let thrown = step_of(&v.public, "bert throws", 1);
    let bert_at = |steps: &[Step], at: usize| steps[at].table.seats[1].clone();
    let bert = |steps: &[Step]| bert_at(steps, thrown);
    assert_eq!(v.public[thrown].text, "bert throws ? ? ?, under the cup");
    assert_eq!(lies(&bert(&v.public)), [Lie::Cup; 3]);
    assert_eq!(faces(&bert(&v.public)), [None; 3]);
    assert_eq!(v.full[thrown].text, "bert throws 6 5 2");
    assert_eq!(faces(&bert(&v.full)), [Some(6), Some(5), Some(2)]);
    assert_eq!(
        faces(&bert(&v.seats[1])),
        [Some(6), Some(5), Some(2)],
        "bert sees his own"
    );
    assert_eq!(faces(&bert(&v.seats[0])), [None; 3], "ada does not");
    assert_eq!(faces(&bert(&v.seats[2])), [None; 3], "cleo does not");
    assert_eq!(v.public[thrown].table.actor, Some(Seat(1)));
    assert_eq!(bert(&v.public).throws, 1);

    // cleo started and threw twice: the limit is 2. ada's second throw ends her turn and
    // bert must decide: she has seen it (her observation), nobody else has.
    let ada_again = step_of(&v.public, "ada throws ? ? ? (rerolls 3 dice)", 1);
    let ada_at = |steps: &[Step]| faces(&steps[ada_again].table.seats[0]);
    assert_eq!(ada_at(&v.full), [Some(3), Some(3), Some(1)]);
    assert_eq!(ada_at(&v.seats[0]), [Some(3), Some(3), Some(1)]);
    assert_eq!(ada_at(&v.seats[1]), [None; 3]);
    assert_eq!(ada_at(&v.public), [None; 3]);
    // bert throws last: his second throw ends the round, and the reveal comes with it.
    // He never saw it before everybody did, so his view does not show it before.
    let again = thrown + 1 + step_of(&v.public[thrown + 1..], "bert throws", 1);
    assert_eq!(faces(&bert_at(&v.full, again)), [Some(3), Some(3), Some(2)]);
    assert_eq!(faces(&bert_at(&v.seats[1], again)), [None; 3]);
    assert_eq!(faces(&bert_at(&v.public, again)), [None; 3]);
    assert_eq!(bert_at(&v.public, again).throws, 2);

    // The reveal shows them to everybody, in every view.
    let shown = step_of(&v.public, "bert shows", 1);
    assert!(shown > again);
    for steps in [&v.public, &v.full, &v.seats[0], &v.seats[1], &v.seats[2]] {
        let seat = &steps[shown].table.seats[1];
        assert_eq!(
            faces(seat),
            [Some(3), Some(3), Some(2)],
            "{}",
            steps[shown].text
        );
        assert!(seat.dice.iter().all(|d| d.lie != Lie::Cup));
        assert!(seat.hand.is_some());
    }
    // The middle holds the preset's 13 mats until the first round is decided.
    assert_eq!(v.public[thrown].table.pot, 13);
    assert_eq!(v.public[thrown].table.half, 1);
}

#[test]
fn a_zokken_reroll_sets_the_kept_dice_aside_and_every_view_sees_the_same_table() {
    let mut rules = Rules::preset("zokken").unwrap();
    rules.set_number("rounds", 2).unwrap();
    let mut script = DiceScript::new();
    for seat in 0..3u8 {
        // Miwin's dice III, IV and V: a poor first throw, worth a reroll.
        script.set(Seat(seat), 1, 1, &[0, 1, 2], [1, 1, 2]);
    }
    let log = scripted(&rules, &script, by_heuristic);
    let v = views(&log, &script);
    no_hidden_die_leaks(&v);
    for seat in &v.seats {
        assert_eq!(seat, &v.public, "everything in Zokken is public");
    }
    assert_eq!(v.full.len(), v.public.len());
    for (full, public) in v.full.iter().zip(&v.public) {
        assert_eq!(full.table, public.table, "{}", full.text);
    }
    // The first throw: the scripted dice, all rolled.
    let first = step_of(&v.public, "ada throws", 1);
    let ada = &v.public[first].table.seats[0];
    assert_eq!(faces(ada), [Some(1), Some(1), Some(2)]);
    assert_eq!(lies(ada), [Lie::Rolled; 3]);
    // The first reroll of the log: the dice thrown again are rolled, the others set aside.
    let (seat, rolled, dice) = log
        .entries
        .iter()
        .find_map(|e| match *e {
            LogEntry::Throw {
                seat,
                throw: 2,
                rolled,
                dice,
                ..
            } if rolled != DieMask::ALL && !rolled.is_empty() => Some((seat, rolled, dice)),
            _ => None,
        })
        .expect("a reroll of some dice");
    let events_before = log
        .entries
        .iter()
        .take_while(|e| !matches!(e, LogEntry::Throw { seat: s, throw: 2, rolled: r, .. } if *s == seat && *r == rolled))
        .filter(|e| matches!(e, LogEntry::Event { .. }))
        .count();
    let step = v
        .public
        .iter()
        .find(|s| s.table.events == events_before + 1)
        .expect("the reroll's step");
    assert!(step.text.contains("rerolls"), "{}", step.text);
    let table_seat = &step.table.seats[seat.index()];
    assert_eq!(faces(table_seat), dice.map(Some));
    for slot in 0..3 {
        let lie = if rolled.contains(slot) {
            Lie::Rolled
        } else {
            Lie::Held
        };
        assert_eq!(table_seat.dice[slot].lie, lie, "slot {slot}");
    }
    assert_eq!(table_seat.throws, 2);
    assert!(step.table.pot > 0, "the antes are in the pot");
    assert!(matches!(
        log.entries.iter().rev().find_map(|e| match e {
            LogEntry::Event { event } => Some(*event),
            _ => None,
        }),
        Some(Event::MatchOver { .. })
    ));
}

#[test]
fn every_preset_in_every_view_shows_no_hidden_die_but_a_seats_own_as_they_lie() {
    for name in PRESETS {
        let mut rules = Rules::preset(name).unwrap();
        if name == "zokken" {
            rules.set_number("rounds", 6).unwrap();
        }
        let mut m = Match::new_with_log(rules, SEED, 3).unwrap();
        by_heuristic(&mut m);
        let log = m.log().unwrap().clone();
        let view = |sight| steps(&log, &names(), sight).unwrap();
        let v = Views {
            public: view(Sight::Public),
            full: view(Sight::Full),
            seats: (0..3).map(|s| view(Sight::Seat(Seat(s)))).collect(),
        };
        no_hidden_die_leaks(&v);
        let mut own_seen = 0;
        for (me, steps) in v.seats.iter().enumerate() {
            assert_eq!(steps.len(), v.full.len(), "{name}");
            for (i, step) in steps.iter().enumerate() {
                let mine = &step.table.seats[me];
                let truth = &v.full[i].table.seats[me];
                assert_eq!(lies(mine), lies(truth), "{name} step {i}");
                for slot in 0..3 {
                    if let Some(face) = mine.dice[slot].face {
                        assert_eq!(Some(face), truth.dice[slot].face, "{name} step {i}");
                        own_seen += u32::from(mine.dice[slot].lie == Lie::Cup);
                    }
                }
            }
        }
        if name.starts_with("schocken") && !rules_open(&log) {
            assert!(
                own_seen > 0,
                "{name}: a seat sees its own dice under the cup"
            );
        }
    }
}

/// Whether every die of the log's match lies open (no cup).
fn rules_open(log: &MatchLog) -> bool {
    log.rules.variants_on().contains(&"open_dice")
}
