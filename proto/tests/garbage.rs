//! Garbage on the wire: decoding returns an error instead of panicking, and whatever does
//! decode goes through the conversions without a panic.

use knobel_engine::{Action, Event, Hand, Match, Observation, Outcome, Rules};
use knobel_proto::convert::{decision_request, game_from_wire};
use knobel_proto::{self as pb, BotDecision, BotHello};
use prost::Message;

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Bytes(u64);

impl Bytes {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn fill(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// Runs every conversion a decoded message may go through; none may panic.
fn convert_bot_message(message: &pb::BotMessage) {
    match &message.kind {
        Some(pb::bot_message::Kind::Hello(hello)) => {
            let _ = BotHello::try_from(hello);
        }
        Some(pb::bot_message::Kind::Decision(decision)) => {
            let _ = BotDecision::try_from(decision);
        }
        Some(pb::bot_message::Kind::Ping(_)) | None => {}
    }
}

fn convert_arena_message(message: &pb::ArenaMessage) {
    use pb::arena_message::Kind;
    for event in &message.events {
        if let Ok(event) = Event::try_from(event) {
            let _ = pb::Event::from(event);
        }
    }
    match &message.kind {
        Some(Kind::DecisionRequest(request)) => {
            if let Some(o) = &request.observation
                && let Ok(observation) = Observation::try_from(o)
            {
                // What parses converts back without a panic.
                let _ = pb::Observation::from(&observation);
            }
            for action in &request.legal_actions {
                let _ = Action::try_from(action);
            }
        }
        Some(Kind::MatchResult(result)) => {
            if let Some(outcome) = &result.outcome {
                let _ = Outcome::try_from(outcome);
            }
        }
        Some(Kind::MatchStart(start)) => {
            let _ = game_from_wire("match_start.game", start.game);
        }
        _ => {}
    }
}

fn convert_observation(o: &pb::Observation) {
    if let Ok(observation) = Observation::try_from(o) {
        let _ = pb::Observation::from(&observation);
        // Hands that parse display without a panic.
        if let Observation::Zokken(z) = &observation {
            for seat in &z.seats {
                let _ = seat.figure.to_string();
            }
        }
    }
}

fn convert_hand(h: &pb::Hand) {
    if let Ok(hand) = Hand::try_from(h) {
        let _ = hand.to_string();
        let _ = pb::Hand::from(hand);
    }
}

/// Decodes `bytes` as every message a peer may send; none may panic.
fn decode_all(bytes: &[u8]) -> usize {
    let mut decoded = 0;
    if let Ok(m) = pb::BotMessage::decode(bytes) {
        convert_bot_message(&m);
        decoded += 1;
    }
    if let Ok(m) = pb::ArenaMessage::decode(bytes) {
        convert_arena_message(&m);
        decoded += 1;
    }
    if let Ok(m) = pb::Observation::decode(bytes) {
        convert_observation(&m);
        decoded += 1;
    }
    if let Ok(m) = pb::Hand::decode(bytes) {
        convert_hand(&m);
        decoded += 1;
    }
    if let Ok(m) = pb::Action::decode(bytes) {
        let _ = Action::try_from(&m);
        decoded += 1;
    }
    if let Ok(m) = pb::Event::decode(bytes) {
        let _ = Event::try_from(&m);
        decoded += 1;
    }
    decoded += usize::from(pb::ListMatchesRequest::decode(bytes).is_ok());
    decoded += usize::from(pb::MatchLogResponse::decode(bytes).is_ok());
    decoded
}

#[test]
fn malformed_encodings_are_errors() {
    let cases: &[(&str, &[u8])] = &[
        ("a truncated varint", &[0x08, 0xFF]),
        (
            "an over-long varint",
            &[
                0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
            ],
        ),
        ("a length beyond the buffer", &[0x0A, 0x7F, 0x00]),
        ("wire type 7", &[0x0F]),
        ("field number 0", &[0x00, 0x00]),
        ("an end group without a start", &[0x0C]),
    ];
    for (what, bytes) in cases {
        assert!(
            pb::BotMessage::decode(*bytes).is_err(),
            "bot message with {what}"
        );
        assert!(
            pb::ArenaMessage::decode(*bytes).is_err(),
            "arena message with {what}"
        );
    }
    // A Hello whose name is not UTF-8.
    let mut hello = pb::BotMessage::from(pb::bot_message::Kind::Hello(pb::Hello {
        name: "ab".into(),
        ..Default::default()
    }))
    .encode_to_vec();
    let at = hello.iter().position(|&b| b == b'a').unwrap();
    hello[at] = 0xFF;
    assert!(pb::BotMessage::decode(hello.as_slice()).is_err());
}

#[test]
fn random_bytes_never_panic() {
    let mut random = Bytes(0x9E37_79B9_7F4A_7C15);
    let mut decoded = 0;
    for round in 0..20_000 {
        let len = (round % 64) + (random.next() % 8) as usize;
        decoded += decode_all(&random.fill(len));
    }
    assert!(
        decoded > 0,
        "some garbage happens to decode and was converted"
    );
}

/// Valid messages with bytes flipped, cut or spliced: most still decode, deep inside.
#[test]
fn damaged_messages_never_panic() {
    let mut samples = Vec::new();
    for game in ["schocken", "sjokken", "zokken"] {
        let mut m = Match::new(Rules::preset(game).unwrap(), 3, 4).unwrap();
        for _ in 0..40 {
            let Some(seat) = m.to_act().iter().next() else {
                break;
            };
            let request = decision_request(&m, seat, 1, 10, 10).unwrap();
            samples.push(
                pb::ArenaMessage::from(pb::arena_message::Kind::DecisionRequest(request))
                    .encode_to_vec(),
            );
            let action = m.default_action(seat).unwrap();
            let events = m.apply(seat, action).unwrap();
            // (A Zokken reroll choice shows nothing until every seat has chosen.)
            if !events.is_empty() {
                samples.push(knobel_proto::convert::arena_message(events, None).encode_to_vec());
            }
        }
    }
    let mut random = Bytes(42);
    let mut decoded = 0;
    for sample in &samples {
        for _ in 0..30 {
            let mut bytes = sample.clone();
            match random.next() % 3 {
                0 => {
                    for _ in 0..=(random.next() % 3) {
                        let at = (random.next() as usize) % bytes.len();
                        bytes[at] ^= 1 << (random.next() % 8);
                    }
                }
                1 => bytes.truncate((random.next() as usize) % bytes.len()),
                _ => {
                    let at = (random.next() as usize) % bytes.len();
                    let extra = random.fill(4);
                    bytes.splice(at..at, extra);
                }
            }
            decoded += decode_all(&bytes);
        }
    }
    assert!(
        decoded > samples.len(),
        "damaged messages were converted: {decoded}"
    );
}
