//! Untrusted wire input: every bad value gives a `WireError` naming the field, the value and
//! what is legal, never a panic.

use knobel_engine::{Action, DieMask, Event, Game, Hand, Observation, Outcome};
use knobel_proto::convert::game_from_wire;
use knobel_proto::{self as pb, BotDecision, BotHello, WireError};

fn action(kind: pb::action::Kind) -> pb::Action {
    pb::Action { kind: Some(kind) }
}

fn reroll(dice: &[u32], turn: &[u32]) -> pb::Action {
    action(pb::action::Kind::Reroll(pb::Reroll {
        dice: dice.to_vec(),
        turn: turn.to_vec(),
    }))
}

fn action_error(wire: pb::Action) -> String {
    Action::try_from(&wire).unwrap_err().to_string()
}

#[test]
fn good_actions_parse() {
    assert_eq!(
        Action::try_from(reroll(&[2, 0], &[1])).unwrap(),
        Action::Reroll {
            dice: DieMask::from_slots(&[0, 2]).unwrap(),
            turn: DieMask::from_slots(&[1]).unwrap(),
        }
    );
    assert_eq!(
        Action::try_from(reroll(&[], &[])).unwrap(),
        Action::reroll(DieMask::EMPTY),
        "an empty reroll is well-formed (Zokken: keep all); legality is the engine's call"
    );
    let stop = action(pb::action::Kind::Stop(pb::Stop { turn: vec![] }));
    assert_eq!(Action::try_from(stop).unwrap(), Action::STOP);
    for (kind, want) in [
        (pb::action::Kind::Check(pb::Check {}), Action::Check),
        (pb::action::Kind::Bet(pb::Bet {}), Action::Bet),
        (pb::action::Kind::Call(pb::Call {}), Action::Call),
        (pb::action::Kind::Raise(pb::Raise {}), Action::Raise),
        (pb::action::Kind::Fold(pb::Fold {}), Action::Fold),
    ] {
        assert_eq!(Action::try_from(action(kind)).unwrap(), want);
    }
}

#[test]
fn action_without_kind() {
    assert_eq!(
        action_error(pb::Action { kind: None }),
        "action is missing: set one of stop, reroll, check, bet, call, raise, fold"
    );
}

#[test]
fn die_slot_out_of_range() {
    assert_eq!(
        action_error(reroll(&[3], &[])),
        "reroll.dice: cannot reroll die 3: dice are numbered 0..=2"
    );
    assert_eq!(
        action_error(reroll(&[0], &[u32::MAX])),
        "reroll.turn: cannot turn die 4294967295: dice are numbered 0..=2"
    );
    let stop = action(pb::action::Kind::Stop(pb::Stop { turn: vec![7] }));
    assert_eq!(
        action_error(stop),
        "stop.turn: cannot turn die 7: dice are numbered 0..=2"
    );
    let error = Action::try_from(reroll(&[5], &[])).unwrap_err();
    assert!(matches!(
        error,
        WireError::DieSlot {
            field: "reroll.dice",
            ..
        }
    ));
}

#[test]
fn die_slot_named_twice() {
    assert_eq!(
        action_error(reroll(&[1, 1], &[])),
        "reroll.dice: die 1 is named twice: name each die at most once"
    );
    // A huge list stops at the first repeat.
    let many = vec![0; 1_000_000];
    assert_eq!(
        action_error(reroll(&many, &[])),
        "reroll.dice: die 0 is named twice: name each die at most once"
    );
}

#[test]
fn decision_without_action() {
    let decision = pb::Decision {
        request_id: 7,
        action: None,
    };
    assert_eq!(
        BotDecision::try_from(&decision).unwrap_err().to_string(),
        "decision.action is missing: set one of stop, reroll, check, bet, call, raise, fold"
    );
    let decision = pb::Decision {
        request_id: 7,
        action: Some(reroll(&[0, 9], &[])),
    };
    assert_eq!(
        BotDecision::try_from(decision).unwrap_err().to_string(),
        "reroll.dice: cannot reroll die 9: dice are numbered 0..=2"
    );
}

#[test]
fn games() {
    assert_eq!(game_from_wire("game", 1).unwrap(), Game::Schocken);
    assert_eq!(game_from_wire("game", 3).unwrap(), Game::Zokken);
    assert_eq!(
        game_from_wire("game", 0).unwrap_err().to_string(),
        "game is GAME_UNSPECIFIED: name a game: 1 (schocken), 2 (sjokken), 3 (zokken)"
    );
    assert_eq!(
        game_from_wire("list_matches.game", 4)
            .unwrap_err()
            .to_string(),
        "list_matches.game = 4 is not a known value: legal values are 1 (schocken), 2 (sjokken), 3 (zokken)"
    );
    assert!(game_from_wire("game", -1).is_err());
    assert!(game_from_wire("game", i32::MIN).is_err());
    assert!(Game::try_from(pb::Game::Unspecified).is_err());
    for game in Game::ALL {
        assert_eq!(Game::try_from(pb::Game::from(game)).unwrap(), game);
    }
}

fn hello(name: &str, games: &[pb::Game]) -> pb::Hello {
    pb::Hello {
        name: name.to_owned(),
        games: games.iter().map(|&g| g as i32).collect(),
        client_version: "knobel-test 0.1".to_owned(),
        preset: None,
        max_matches: 0,
    }
}

fn hello_error(hello: pb::Hello) -> String {
    BotHello::try_from(&hello).unwrap_err().to_string()
}

#[test]
fn good_hello() {
    let mut wire = hello("Würfel-Bot 🎲", &[pb::Game::Zokken, pb::Game::Schocken]);
    wire.preset = Some("schocken-typenclub".to_owned());
    let parsed = BotHello::try_from(&wire).unwrap();
    assert_eq!(parsed.name, "Würfel-Bot 🎲");
    assert_eq!(parsed.games, [Game::Zokken, Game::Schocken]);
    assert_eq!(parsed.preset.as_deref(), Some("schocken-typenclub"));
    assert_eq!(pb::Hello::from(&parsed), wire);

    let longest = "x".repeat(knobel_proto::names::MAX_NAME_CHARS);
    assert!(BotHello::try_from(hello(&longest, &[pb::Game::Sjokken])).is_ok());
    let mut empty_version = hello("a", &[pb::Game::Sjokken]);
    empty_version.client_version.clear();
    assert!(BotHello::try_from(empty_version).is_ok());
}

#[test]
fn hello_name() {
    assert_eq!(
        hello_error(hello("", &[pb::Game::Schocken])),
        "hello.name: a bot name cannot be empty: it has 1..=32 characters"
    );
    assert_eq!(
        hello_error(hello(&"é".repeat(33), &[pb::Game::Schocken])),
        "hello.name: a bot name has at most 32 characters: this one has 33"
    );
    assert_eq!(
        hello_error(hello("bell\u{7}", &[pb::Game::Schocken])),
        "hello.name: a bot name cannot contain a control character: character 4 is U+0007"
    );
    assert_eq!(
        hello_error(hello("line\nbreak", &[pb::Game::Schocken])),
        "hello.name: a bot name cannot contain a control character: character 4 is U+000A"
    );
    assert_eq!(
        hello_error(hello("evil\u{202E}tob", &[pb::Game::Schocken])),
        "hello.name: a bot name cannot contain a bidirectional control: character 4 is U+202E RIGHT-TO-LEFT OVERRIDE"
    );
    assert_eq!(
        hello_error(hello("zero\u{200B}width", &[pb::Game::Schocken])),
        "hello.name: a bot name cannot contain a zero-width character: character 4 is U+200B ZERO WIDTH SPACE"
    );
    assert_eq!(
        hello_error(hello("   ", &[pb::Game::Schocken])),
        "hello.name: a bot name cannot start or end with a space"
    );
    assert_eq!(
        hello_error(hello("builtin-heuristic-1", &[pb::Game::Schocken])),
        "hello.name: a bot name cannot start with \"builtin-\" (in any case or look-alike letters): such names are reserved for the arena's built-in players"
    );
    assert_eq!(
        hello_error(hello("Wu\u{308}rfel", &[pb::Game::Schocken])),
        "hello.name: a bot name must be in Unicode NFC (composed characters): write \"Würfel\" instead (character 1 is U+0075 LATIN SMALL LETTER U)"
    );
}

#[test]
fn hello_games() {
    assert_eq!(
        hello_error(hello("bot", &[])),
        "hello.games is empty: name the games the bot plays: 1 (schocken), 2 (sjokken), 3 (zokken)"
    );
    assert_eq!(
        hello_error(hello("bot", &[pb::Game::Sjokken, pb::Game::Unspecified])),
        "hello.games is GAME_UNSPECIFIED: name a game: 1 (schocken), 2 (sjokken), 3 (zokken)"
    );
    let mut unknown = hello("bot", &[]);
    unknown.games = vec![1, 42];
    assert_eq!(
        hello_error(unknown),
        "hello.games = 42 is not a known value: legal values are 1 (schocken), 2 (sjokken), 3 (zokken)"
    );
    assert_eq!(
        hello_error(hello(
            "bot",
            &[pb::Game::Schocken, pb::Game::Zokken, pb::Game::Schocken]
        )),
        "hello.games names schocken twice: name each game once"
    );
    // Four or more games always repeat one.
    let mut many = hello("bot", &[]);
    many.games = vec![1; 100_000];
    assert!(matches!(
        BotHello::try_from(many).unwrap_err(),
        WireError::RepeatedGame { .. }
    ));
}

#[test]
fn hello_client_version() {
    let mut wire = hello("bot", &[pb::Game::Zokken]);
    wire.client_version = "v".repeat(65);
    assert_eq!(
        hello_error(wire.clone()),
        "hello.client_version has 65 characters: at most 64 are allowed"
    );
    wire.client_version = "1.0\r".to_owned();
    assert_eq!(
        hello_error(wire),
        "hello.client_version has the unprintable character U+000D at position 3: use printable characters only"
    );
}

#[test]
fn hello_preset() {
    let mut wire = hello("bot", &[pb::Game::Zokken]);
    wire.preset = Some("poker".to_owned());
    assert_eq!(
        hello_error(wire.clone()),
        "hello.preset \"poker\" is not a preset: presets are schocken, schocken-typenclub, sjokken, zokken"
    );
    wire.preset = Some("p".repeat(10_000));
    let message = hello_error(wire.clone());
    assert!(message.len() < 200, "long input is shortened: {message}");
    wire.preset = Some("sjokken".to_owned());
    assert_eq!(
        hello_error(wire),
        "hello.preset \"sjokken\" is a sjokken preset, but hello.games does not name sjokken: add sjokken or wish for another preset"
    );
}

fn wire_hand(kind: pb::HandKind, values: &[u32]) -> pb::Hand {
    pb::Hand {
        kind: kind as i32,
        values: values.to_vec(),
        name: String::new(),
        strength: 0,
    }
}

#[test]
fn hands() {
    use pb::HandKind as K;
    assert_eq!(
        Hand::try_from(&wire_hand(K::Straight, &[4])).unwrap(),
        Hand::Straight(4)
    );
    assert_eq!(
        Hand::try_from(&wire_hand(K::Number, &[653])).unwrap(),
        Hand::Number(653)
    );
    assert_eq!(
        Hand::try_from(&wire_hand(K::Tinn, &[6, 3, 3])).unwrap(),
        Hand::Tinn([6, 3, 3])
    );
    let bad = |kind, values: &[u32]| {
        Hand::try_from(&wire_hand(kind, values))
            .unwrap_err()
            .to_string()
    };
    // Would underflow in the engine's display ("straight 0-1-2").
    assert_eq!(
        bad(K::Straight, &[0]),
        "hand: straight with values [0] is not a hand: its top die, 3..=6"
    );
    assert_eq!(
        bad(K::Schock, &[]),
        "hand: schock with values [] is not a hand: one die, 2..=6"
    );
    assert_eq!(
        bad(K::Kelm, &[9, 3, 3]),
        "hand: kelm with values [9, 3, 3] is not a hand: no values"
    );
    assert_eq!(
        bad(K::Number, &[611]),
        "hand: number with values [611] is not a hand: a number of three dice (1..=6) high to low, not a higher hand"
    );
    assert!(Hand::try_from(&wire_hand(K::Number, &[356])).is_err());
    assert!(Hand::try_from(&wire_hand(K::Number, &[u32::MAX])).is_err());
    assert_eq!(
        bad(K::Plus, &[6, 3, 3]),
        "hand: plus with values [6, 3, 3] is not a hand: three Miwin dice (1..=9) high to low that make this figure"
    );
    assert!(Hand::try_from(&wire_hand(K::Sonst, &[1, 2, 9])).is_err());
    assert!(Hand::try_from(&wire_hand(K::Pasch, &[1, 2, 3, 4, 5, 6, 7])).is_err());
    assert_eq!(
        bad(K::Unspecified, &[]),
        "hand = 0 is not a known value: legal values are 1..=17 (HandKind)"
    );
    let mut unknown = wire_hand(K::Kelm, &[]);
    unknown.kind = 99;
    assert!(Hand::try_from(&unknown).is_err());
}

#[test]
fn observations_and_events() {
    let missing = pb::Observation { kind: None };
    assert_eq!(
        Observation::try_from(&missing).unwrap_err().to_string(),
        "observation is missing: set shake or zokken"
    );
    let shake = pb::ShakeObservation {
        game: pb::Game::Zokken as i32,
        ..Default::default()
    };
    let wrong_game = pb::Observation {
        kind: Some(pb::observation::Kind::Shake(shake.clone())),
    };
    assert_eq!(
        Observation::try_from(&wrong_game).unwrap_err().to_string(),
        "shake.game is zokken: it must be schocken or sjokken"
    );
    let few_tokens = pb::Observation {
        kind: Some(pb::observation::Kind::Shake(pb::ShakeObservation {
            game: pb::Game::Schocken as i32,
            seats: 3,
            tokens: vec![0, 1],
            ..shake
        })),
    };
    assert_eq!(
        Observation::try_from(&few_tokens).unwrap_err().to_string(),
        "shake.tokens has 2 entries: it must have one per seat (3)"
    );
    let zokken = pb::Observation {
        kind: Some(pb::observation::Kind::Zokken(
            pb::ZokkenObservation::default(),
        )),
    };
    assert_eq!(
        Observation::try_from(&zokken).unwrap_err().to_string(),
        "zokken.phase is missing: set the phase"
    );

    let event = |kind| pb::Event { kind: Some(kind) };
    assert_eq!(
        Event::try_from(&pb::Event { kind: None })
            .unwrap_err()
            .to_string(),
        "event is missing: set one of the event kinds"
    );
    let far_seat = event(pb::event::Kind::SeatOut(pb::SeatOut { seat: 10 }));
    assert_eq!(
        Event::try_from(&far_seat).unwrap_err().to_string(),
        "seat_out.seat = 10 is out of range: it must be 0..=9"
    );
    let two_dice = event(pb::event::Kind::Thrown(pb::Thrown {
        seat: 0,
        throw_number: 1,
        rolled: vec![0, 1, 2],
        dice: vec![pb::Die { value: Some(1) }; 2],
    }));
    assert_eq!(
        Event::try_from(&two_dice).unwrap_err().to_string(),
        "thrown.dice has 2 entries: it must have 3"
    );
    let big_die = event(pb::event::Kind::Revealed(pb::Revealed {
        seat: 0,
        dice: vec![1, 2, 256],
        hand: None,
    }));
    assert_eq!(
        Event::try_from(&big_die).unwrap_err().to_string(),
        "revealed.dice = 256 is out of range: it must be 0..=255"
    );
    let bet_without_action = event(pb::event::Kind::Betting(pb::Betting::default()));
    assert_eq!(
        Event::try_from(&bet_without_action)
            .unwrap_err()
            .to_string(),
        "betting.action is missing: set one of stop, reroll, check, bet, call, raise, fold"
    );
    let placings = event(pb::event::Kind::MatchOver(pb::MatchOver {
        placings: vec![1; 11],
    }));
    assert_eq!(
        Event::try_from(&placings).unwrap_err().to_string(),
        "match_over.placings has 11 entries: it must have at most 10"
    );

    let outcome = pb::Outcome {
        placings: vec![1, 2],
        loser: Some(99),
        ..Default::default()
    };
    assert_eq!(
        Outcome::try_from(&outcome).unwrap_err().to_string(),
        "outcome.loser = 99 is out of range: it must be 0..=9"
    );
}

#[test]
fn bad_forfeits_and_penalty_lists_are_refused() {
    let forfeited = pb::Event {
        kind: Some(pb::event::Kind::Forfeited(pb::Forfeited {
            seat: 1,
            reason: 0,
        })),
    };
    assert_eq!(
        Event::try_from(&forfeited).unwrap_err().to_string(),
        "forfeited.reason = 0 is not a known value: legal values are 1 (strikes), 2 (disconnected), 3 (not reading), 4 (revoked), 5 (absent)"
    );
    let outcome = pb::Outcome {
        placings: vec![1, 2],
        forfeits: vec![0, 9],
        ..Default::default()
    };
    assert_eq!(
        Outcome::try_from(&outcome).unwrap_err().to_string(),
        "outcome.forfeits = 9 is not a known value: legal values are 1 (strikes), 2 (disconnected), 3 (not reading), 4 (revoked), 5 (absent)"
    );
    let outcome = pb::Outcome {
        placings: vec![1, 2],
        strikes: vec![0, 1, 2],
        ..Default::default()
    };
    assert_eq!(
        Outcome::try_from(&outcome).unwrap_err().to_string(),
        "outcome.strikes has 3 entries: it must have 2"
    );
    // An arena that sends no penalties: none.
    let outcome = Outcome::try_from(&pb::Outcome {
        placings: vec![1, 2],
        chips: vec![3, -3],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(outcome.strikes, [0, 0]);
    assert_eq!(outcome.forfeits, [None, None]);
    assert_eq!(outcome.tokens, [0, 0]);
}
