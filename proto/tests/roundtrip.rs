//! Engine to wire and back, over real matches of every preset: every observation, legal
//! action, decision and event the arena would send goes through the wire types and the
//! encoded bytes, and comes back unchanged. A wire observation never shows a die that the
//! engine observation hides.

use knobel_engine::policy::{HeuristicPolicy, Policy, RandomPolicy, play_out};
use knobel_engine::{
    Action, Event, LogEntry, Match, Observation, Outcome, Rules, Seat, ShakeObservation,
};
use knobel_proto::convert::{decision_request, match_result, match_start};
use knobel_proto::{self as pb, BotDecision};
use prost::Message;

/// Encodes and decodes a message: what the other end of the stream gets.
fn over_the_wire<M: Message + Default + PartialEq + std::fmt::Debug>(message: &M) -> M {
    let decoded = M::decode(message.encode_to_vec().as_slice()).expect("own encoding decodes");
    assert_eq!(&decoded, message);
    decoded
}

fn rules(preset: &str, variants: &[&str]) -> Rules {
    let mut rules = Rules::preset(preset).unwrap();
    for variant in variants {
        rules.set_variant(variant, true).unwrap();
    }
    rules
}

/// The rule sets played: every preset, and the variants that change what is visible or
/// which events happen.
fn rule_sets() -> Vec<(String, Rules)> {
    let mut zokken_short = rules("zokken", &[]);
    zokken_short.set_number("rounds", 12).unwrap();
    let mut zokken_bet3 = rules("zokken", &["bet_after_last_throw"]);
    zokken_bet3.set_number("rounds", 12).unwrap();
    vec![
        ("schocken".into(), rules("schocken", &[])),
        (
            "schocken-typenclub".into(),
            rules("schocken-typenclub", &[]),
        ),
        (
            "schocken".into(),
            rules("schocken", &["open_dice", "jule", "single_half"]),
        ),
        (
            "schocken".into(),
            rules("schocken", &["straight_in_one_throw"]),
        ),
        ("sjokken".into(), rules("sjokken", &[])),
        ("zokken".into(), zokken_short),
        ("zokken".into(), zokken_bet3),
    ]
}

/// Checks that the wire view of a shake observation shows exactly the engine's dice.
fn check_dice_hidden(engine: &ShakeObservation, wire: &pb::ShakeObservation) {
    assert_eq!(engine.turns.len(), wire.turns.len());
    for (turn, wire_turn) in engine.turns.iter().zip(&wire.turns) {
        assert_eq!(wire_turn.dice.len(), 3, "every turn view has three dice");
        for (slot, (die, wire_die)) in turn.dice.iter().zip(&wire_turn.dice).enumerate() {
            assert_eq!(
                die.map(u32::from),
                wire_die.value,
                "slot {slot}: the wire must show a die exactly when the engine does"
            );
        }
        assert_eq!(turn.hand.is_some(), wire_turn.hand.is_some());
    }
}

/// Checks one observation both ways; returns the wire observation.
fn check_observation(observation: &Observation) -> pb::Observation {
    let wire = pb::Observation::from(observation);
    let wire = over_the_wire(&wire);
    match (observation, &wire.kind) {
        (Observation::Shake(o), Some(pb::observation::Kind::Shake(w))) => {
            check_dice_hidden(o, w);
            assert_eq!(w.tokens.len(), usize::from(o.seats));
            assert_eq!(w.decision.is_some(), o.decision.is_some());
        }
        (Observation::Zokken(o), Some(pb::observation::Kind::Zokken(w))) => {
            assert_eq!(w.seats.len(), o.seats.len());
            for (seat, wire_seat) in o.seats.iter().zip(&w.seats) {
                assert_eq!(wire_seat.dice.len(), 3);
                assert_eq!(
                    wire_seat.figure.as_ref().unwrap().name,
                    seat.figure.to_string()
                );
            }
        }
        other => panic!("observation kind changed on the wire: {other:?}"),
    }
    let back = Observation::try_from(&wire).expect("the arena's observations parse");
    assert_eq!(&back, observation);
    wire
}

fn check_event(event: &Event) {
    let wire = over_the_wire(&pb::Event::from(event));
    if let (Event::Thrown { dice, .. }, Some(pb::event::Kind::Thrown(thrown))) = (event, &wire.kind)
    {
        let shown: Vec<Option<u32>> = thrown.dice.iter().map(|d| d.value).collect();
        let engine: Vec<Option<u32>> = dice.iter().map(|d| d.map(u32::from)).collect();
        assert_eq!(
            shown, engine,
            "a thrown event shows exactly the public dice"
        );
    }
    let back = Event::try_from(&wire).expect("the arena's events parse");
    assert_eq!(&back, event);
}

fn check_action(action: Action) -> Action {
    let wire = over_the_wire(&pb::Action::from(action));
    let back = Action::try_from(&wire).expect("legal actions parse");
    assert_eq!(back, action);
    back
}

fn check_outcome(outcome: &Outcome) {
    let wire = over_the_wire(&pb::Outcome::from(outcome));
    assert_eq!(&Outcome::try_from(&wire).unwrap(), outcome);
}

#[derive(Default)]
struct Counts {
    observations: usize,
    hidden_dice: usize,
    events: usize,
    decisions: usize,
}

/// Plays one match step by step as the arena would, every message through the wire.
fn play_over_the_wire(preset: &str, rules: Rules, seed: u64, seats: usize, counts: &mut Counts) {
    let mut m = Match::new_with_log(rules.clone(), seed, seats).unwrap();
    let mut players: Vec<Box<dyn Policy>> = (0..seats)
        .map(|seat| -> Box<dyn Policy> {
            if seat == 0 {
                Box::new(RandomPolicy::new(seed))
            } else {
                Box::new(HeuristicPolicy)
            }
        })
        .collect();
    let names: Vec<String> = (0..seats).map(|s| format!("bot {s}")).collect();
    let time_control = pb::TimeControl {
        decision_ms: 1_000,
        time_bank_ms: 30_000,
    };
    for seat in 0..seats {
        let start = match_start(
            "m-1",
            preset,
            &rules,
            &names,
            Seat(seat as u8),
            time_control,
        );
        let start = over_the_wire(&start);
        assert_eq!(start.seats as usize, seats);
        assert_eq!(start.your_seat as usize, seat);
        assert_eq!(
            knobel_proto::convert::game_from_wire("game", start.game).unwrap(),
            rules.game()
        );
        let mut replayed = Rules::preset(preset).unwrap();
        for variant in &start.variants {
            replayed.set_variant(variant, true).unwrap();
        }
        for (name, value) in &start.settings {
            replayed.set_number(name, *value).unwrap();
        }
        assert_eq!(replayed, rules, "match start describes the rules exactly");
    }
    for event in m.last_events() {
        check_event(event);
    }

    let mut request_id = 0;
    while !m.is_over() {
        // Everybody's view, also of seats that need not act.
        for seat in 0..seats {
            let observation = m.observe(Seat(seat as u8));
            check_observation(&observation);
            counts.observations += 1;
            if let Observation::Shake(o) = &observation {
                counts.hidden_dice += o
                    .turns
                    .iter()
                    .flat_map(|t| t.dice)
                    .filter(Option::is_none)
                    .count();
            }
        }
        for seat in m.to_act().iter() {
            request_id += 1;
            let request = decision_request(&m, seat, request_id, 1_000, 30_000)
                .expect("a seat to act gets a request");
            let request = over_the_wire(&request);
            let legal: Vec<Action> = request
                .legal_actions
                .iter()
                .map(|a| a.try_into().unwrap())
                .collect();
            assert_eq!(legal, m.legal_actions(seat));
            for &action in &legal {
                check_action(action);
            }
            let default = Action::try_from(request.default_action.as_ref().unwrap()).unwrap();
            assert!(legal.contains(&default), "the default action is legal");
            let observation = Observation::try_from(request.observation.as_ref().unwrap()).unwrap();
            assert_eq!(observation, m.observe(seat));

            // The bot decides from the wire observation and answers over the wire.
            let chosen = players[seat.index()].decide(&observation, &legal);
            let answer = pb::BotMessage::from(pb::bot_message::Kind::Decision(
                BotDecision {
                    request_id,
                    action: chosen,
                }
                .into(),
            ));
            let Some(pb::bot_message::Kind::Decision(decision)) = over_the_wire(&answer).kind
            else {
                panic!("a decision stays a decision");
            };
            let decision = BotDecision::try_from(&decision).unwrap();
            assert_eq!(decision.request_id, request_id);
            assert_eq!(decision.action, chosen);
            let action = if legal.contains(&decision.action) {
                decision.action
            } else {
                default
            };
            counts.decisions += 1;
            for event in m.apply(seat, action).expect("a legal action applies") {
                check_event(event);
                counts.events += 1;
            }
        }
    }
    check_observation(&m.observe(Seat(0)));
    let outcome = m.outcome().expect("a finished match has an outcome");
    check_outcome(&outcome);
    for seat in 0..seats {
        let result = over_the_wire(&match_result("m-1", Some(&outcome), Seat(seat as u8)));
        assert_eq!(result.status, pb::MatchStatus::Finished as i32);
        assert_eq!(result.your_place, u32::from(outcome.placings[seat]));
    }

    // Every event in the log converts too (the same events, in one list).
    let log = m.log().unwrap();
    for entry in &log.entries {
        if let LogEntry::Event { event } = entry {
            check_event(event);
        }
    }
}

#[test]
fn matches_of_every_preset_cross_the_wire_unchanged() {
    let mut counts = Counts::default();
    for (preset, rules) in rule_sets() {
        for (seed, seats) in [(1, 2), (2, 3), (3, 4), (4, 5)] {
            play_over_the_wire(&preset, rules.clone(), seed, seats, &mut counts);
        }
    }
    assert!(
        counts.observations > 1_000,
        "{} observations",
        counts.observations
    );
    assert!(counts.decisions > 500, "{} decisions", counts.decisions);
    assert!(counts.events > 1_000, "{} events", counts.events);
    assert!(
        counts.hidden_dice > 100,
        "hidden dice were exercised: {}",
        counts.hidden_dice
    );
}

/// The name of a wire event's kind, as the .proto calls it.
fn kind_name(event: &pb::Event) -> String {
    let debug = format!("{:?}", event.kind.as_ref().expect("events have a kind"));
    debug[..debug.find('(').unwrap_or(debug.len())].to_owned()
}

#[test]
fn events_of_played_out_matches_convert() {
    let mut kinds = std::collections::BTreeSet::new();
    for (_, rules) in rule_sets() {
        for (seed, seats) in [(10, 2), (11, 3), (12, 4), (13, 6), (14, 10)] {
            let mut m = Match::new_with_log(rules.clone(), seed, seats).unwrap();
            let mut players: Vec<Box<HeuristicPolicy>> =
                (0..seats).map(|_| Box::new(HeuristicPolicy)).collect();
            play_out(&mut m, &mut players);
            for entry in &m.log().unwrap().entries {
                if let LogEntry::Event { event } = entry {
                    check_event(event);
                    kinds.insert(kind_name(&pb::Event::from(event)));
                }
            }
            check_outcome(&m.outcome().unwrap());
        }
    }
    // Every kind of event the contract has, except the rare Zokken tie replay, happened.
    let all = [
        "OpeningThrow",
        "StarterChosen",
        "HalfStarted",
        "RoundStarted",
        "Thrown",
        "Turned",
        "Rerolled",
        "Stopped",
        "ThrowLimitSet",
        "Revealed",
        "RoundDecided",
        "TokensMoved",
        "SeatOut",
        "Sjok1",
        "HalfLost",
        "Ante",
        "RerollChosen",
        "Betting",
        "PotWon",
        "MatchOver",
    ];
    let missing: Vec<&str> = all.into_iter().filter(|k| !kinds.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "never converted: {missing:?}; seen {kinds:?}"
    );
}

#[test]
fn hidden_dice_are_absent_on_the_wire() {
    // Schocken with dice under the cup: after seat 0's first throw, the others see none
    // of its dice, and seat 0 sees all three.
    let m = Match::new(Rules::preset("schocken").unwrap(), 5, 3).unwrap();
    let thrower = m.to_act().iter().next().unwrap();
    for seat in 0..3u8 {
        let wire = pb::Observation::from(m.observe(Seat(seat)));
        let Some(pb::observation::Kind::Shake(shake)) = wire.kind else {
            panic!("schocken is a shake game");
        };
        let dice = &shake.turns[thrower.index()].dice;
        if Seat(seat) == thrower {
            assert!(
                dice.iter().all(|d| d.value.is_some()),
                "the thrower sees its dice"
            );
        } else {
            assert!(
                dice.iter().all(|d| d.value.is_none()),
                "{dice:?} hidden from seat {seat}"
            );
            assert!(shake.turns[thrower.index()].hand.is_none());
        }
        // Hidden dice are absent from the encoding too, not sent as zeros.
        let die = pb::Die { value: None };
        assert!(die.encode_to_vec().is_empty());
    }
    for event in m.last_events() {
        if let Event::Thrown { seat, dice, .. } = event {
            assert_eq!(*seat, thrower);
            assert_eq!(dice, &[None, None, None]);
            let wire = pb::Event::from(event);
            let Some(pb::event::Kind::Thrown(thrown)) = wire.kind else {
                panic!("thrown stays thrown");
            };
            assert!(thrown.dice.iter().all(|d| d.value.is_none()));
        }
    }
}

#[test]
fn an_aborted_match_has_no_outcome() {
    let result = match_result("m-2", None, Seat(1));
    assert_eq!(result.status, pb::MatchStatus::Aborted as i32);
    assert_eq!(result.outcome, None);
    assert_eq!(result.your_place, 0);
}

#[test]
fn hand_built_events_round_trip() {
    use knobel_engine::{DieMask, Hand, Placings, Seats};
    let seats = |list: &[u8]| {
        let mut set = Seats::EMPTY;
        for &s in list {
            set.insert(Seat(s));
        }
        set
    };
    let events = [
        Event::TieReplay {
            seats: seats(&[0, 9]),
            replay: 5,
        },
        Event::Betting {
            seat: Seat(3),
            action: Action::Raise,
            chips: 8,
        },
        Event::TokensMoved {
            from: Some(Seat(2)),
            to: Seat(1),
            count: 13,
        },
        Event::Thrown {
            seat: Seat(9),
            throw: 6,
            rolled: DieMask::EMPTY,
            dice: [Some(9), Some(1), Some(8)],
        },
        Event::Revealed {
            seat: Seat(0),
            dice: [7, 5, 2],
            hand: Hand::Plus([7, 5, 2]),
        },
        Event::MatchOver {
            placings: Placings::from_slice(&[1, 1, 3, 2, 5, 6, 7, 8, 9, 10]),
        },
        Event::RoundStarted {
            round: u32::MAX,
            replay: 0,
            seats: Seats::EMPTY,
            starter: None,
        },
    ];
    for event in &events {
        check_event(event);
    }
    let schlumpf = pb::Hand::from(Hand::Plus([7, 5, 2]));
    assert_eq!(schlumpf.name, "schlumpf 7-5-2");
    assert_eq!(schlumpf.values, [7, 5, 2]);
}

/// Plays a match of `preset` with the built-in heuristic, seat 1 forfeited (after a strike)
/// when `forfeit` is set.
fn played(preset: &str, forfeit: bool) -> Outcome {
    let mut rules = rules(preset, &[]);
    if preset == "zokken" {
        rules.set_number("rounds", 6).unwrap();
    }
    let mut m = Match::new_with_log(rules, 17, 3).unwrap();
    let mut step = 0;
    while !m.is_over() {
        if forfeit && step == 4 {
            m.strike(Seat(1), knobel_engine::StrikeReason::Timeout)
                .unwrap();
            let events = m
                .forfeit(Seat(1), knobel_engine::ForfeitReason::NotReading)
                .unwrap();
            for event in events {
                check_event(event);
            }
        }
        let seat = m.to_act().iter().next().unwrap();
        let action = m.default_action(seat).unwrap();
        m.apply(seat, action).unwrap();
        step += 1;
    }
    m.outcome().unwrap()
}

/// The proto leaves empty what a game does not have: tokens in Zokken, halves lost in
/// Sjokken and Zokken, chips in Schocken and Sjokken; a loser only in Schocken and Sjokken.
/// Strikes, timeouts and forfeits are there for every seat in every game.
#[test]
fn outcome_fields_a_game_does_not_have_are_empty_on_the_wire() {
    for preset in knobel_engine::PRESETS {
        for forfeit in [false, true] {
            let outcome = played(preset, forfeit);
            let wire = over_the_wire(&pb::Outcome::from(&outcome));
            let game = Rules::preset(preset).unwrap().game();
            let n = 3;
            assert_eq!(wire.placings.len(), n, "{preset}");
            match game {
                knobel_engine::Game::Schocken => {
                    assert!(wire.loser.is_some());
                    assert_eq!(wire.tokens.len(), n);
                    assert_eq!(wire.halves_lost.len(), n);
                    assert!(wire.chips.is_empty(), "{preset}: {wire:?}");
                }
                knobel_engine::Game::Sjokken => {
                    assert!(wire.loser.is_some());
                    assert_eq!(wire.tokens.len(), n);
                    assert!(wire.halves_lost.is_empty(), "{preset}: {wire:?}");
                    assert!(wire.chips.is_empty(), "{preset}: {wire:?}");
                }
                knobel_engine::Game::Zokken => {
                    assert!(wire.loser.is_none());
                    assert!(wire.tokens.is_empty(), "{preset}: {wire:?}");
                    assert!(wire.halves_lost.is_empty(), "{preset}: {wire:?}");
                    assert_eq!(wire.chips.len(), n);
                }
            }
            let none = pb::ForfeitReason::None as i32;
            if forfeit {
                assert_eq!(wire.strikes, [0, 1, 0]);
                assert_eq!(wire.timeouts, [0, 1, 0]);
                assert_eq!(
                    wire.forfeits,
                    [none, pb::ForfeitReason::NotReading as i32, none]
                );
                assert_eq!(wire.placings[1], 3, "{preset}: the forfeited seat is last");
            } else {
                assert_eq!(wire.strikes, [0; 3]);
                assert_eq!(wire.timeouts, [0; 3]);
                assert_eq!(wire.forfeits, [none; 3]);
            }
            // And back: the engine's zeros where the wire is empty.
            assert_eq!(Outcome::try_from(&wire).unwrap(), outcome, "{preset}");
            let result = over_the_wire(&match_result("m", Some(&outcome), Seat(1)));
            assert_eq!(result.your_place, u32::from(outcome.placings[1]));
        }
    }
}

#[test]
fn a_forfeited_event_round_trips() {
    for reason in knobel_engine::ForfeitReason::ALL {
        check_event(&Event::Forfeited {
            seat: Seat(2),
            reason,
        });
    }
}
