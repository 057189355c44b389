//! The arena's outbound messages, with events encoded once and shared, are byte for byte
//! the `ArenaMessage`s a bot expects: over real matches of every game, with events split
//! into runs as the arena batches them, and with every kind of message.

use knobel_engine::policy::{HeuristicPolicy, Policy};
use knobel_engine::{Event, Match, Rules, Seat};
use knobel_proto::convert::{arena_message, decision_request, match_result, match_start};
use knobel_proto::outbound::{OutboundMessage, encode_events};
use knobel_proto::v1 as pb;
use pb::arena_message::Kind;
use prost::Message;

/// Checks that the outbound form of (`runs` of events, `kind`) encodes to the bytes of the
/// plain `ArenaMessage`, decodes as it, and decodes back to itself.
fn check_same_bytes(runs: &[Vec<Event>], kind: Option<Kind>) {
    let all: Vec<Event> = runs.iter().flatten().copied().collect();
    let plain = arena_message(&all, kind.clone());
    let outbound = OutboundMessage {
        events: runs.iter().map(|run| encode_events(run)).collect(),
        kind,
    };
    let bytes = outbound.encode_to_vec();
    assert_eq!(outbound.encoded_len(), bytes.len());
    // MatchStart.settings is a map, which two equal messages may encode in different
    // orders: there the decoded messages are compared (below) instead of the bytes.
    if !matches!(plain.kind, Some(Kind::MatchStart(_))) {
        assert_eq!(
            bytes,
            plain.encode_to_vec(),
            "the same bytes as the plain message"
        );
    }
    assert_eq!(pb::ArenaMessage::decode(bytes.as_slice()).unwrap(), plain);
    let decoded = OutboundMessage::decode(bytes.as_slice()).unwrap();
    assert_eq!(
        pb::ArenaMessage::decode(decoded.encode_to_vec().as_slice()).unwrap(),
        plain
    );
    assert_eq!(decoded.kind, outbound.kind);
}

fn play(rules: Rules, seed: u64, seats: usize) -> usize {
    let mut m = Match::new(rules.clone(), seed, seats).unwrap();
    let names: Vec<String> = (0..seats).map(|s| format!("bot {s}")).collect();
    let start = match_start(
        "m-1",
        "preset",
        &rules,
        &names,
        Seat(0),
        pb::TimeControl::default(),
    );
    let mut runs = vec![m.last_events().to_vec()];
    check_same_bytes(&runs, Some(Kind::MatchStart(start)));
    let mut checked = 1;
    let mut request_id = 0;
    while !m.is_over() {
        for seat in m.to_act().iter() {
            request_id += 1;
            let request = decision_request(&m, seat, request_id, 1_000, 10_000).unwrap();
            check_same_bytes(&runs, Some(Kind::DecisionRequest(request)));
            // The same events on their own, as a flush sends them.
            check_same_bytes(&runs, None);
            checked += 2;
            if runs.len() > 5 {
                runs.clear();
            }
        }
        for seat in m.to_act().iter() {
            let action = HeuristicPolicy.decide(&m.observe(seat), &[]);
            m.apply(seat, action).unwrap();
            runs.push(m.last_events().to_vec());
        }
    }
    let outcome = m.outcome().unwrap();
    check_same_bytes(
        &runs,
        Some(Kind::MatchResult(match_result(
            "m-1",
            Some(&outcome),
            Seat(1),
        ))),
    );
    checked + 1
}

#[test]
fn outbound_messages_are_the_plain_messages_byte_for_byte() {
    let mut zokken = Rules::preset("zokken").unwrap();
    zokken.set_number("rounds", 6).unwrap();
    let mut checked = 0;
    for (rules, seats) in [
        (Rules::preset("schocken").unwrap(), 4),
        (Rules::preset("schocken-typenclub").unwrap(), 3),
        (Rules::preset("sjokken").unwrap(), 2),
        (zokken, 4),
    ] {
        for seed in 0..3 {
            checked += play(rules.clone(), seed, seats);
        }
    }
    assert!(checked > 500, "only {checked} messages checked");
}

#[test]
fn every_other_kind_and_no_events_encode_alike() {
    check_same_bytes(&[], None);
    check_same_bytes(&[], Some(Kind::Welcome(pb::Welcome::default())));
    check_same_bytes(
        &[],
        Some(Kind::Welcome(pb::Welcome {
            server_version: "1.0".into(),
            limits: Some(pb::Limits::default()),
            bot_name: "b".into(),
        })),
    );
    check_same_bytes(&[], Some(Kind::Pong(pb::Pong::default())));
    check_same_bytes(
        &[],
        Some(Kind::Error(pb::ErrorEvent {
            request_id: 7,
            code: pb::ErrorCode::IllegalAction as i32,
            message: "illegal".into(),
            applied: Some(pb::Action::from(knobel_engine::Action::STOP)),
            strikes: 1,
            forfeited: false,
        })),
    );
    check_same_bytes(
        &[],
        Some(Kind::MatchResult(match_result("m", None, Seat(0)))),
    );
}
