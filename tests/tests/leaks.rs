//! Records every message a bot receives over real gRPC and checks it against the engine:
//! every decision request carries exactly the engine's observation for that seat, and every
//! event is exactly the engine's public event. Nothing hidden leaks.

use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, authorized};
mod log_schema;

use knobel_engine::{Action, Event, Match, MatchLog, Observation, Seat};
use knobel_proto::v1 as pb;
use pb::arena_message::Kind;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// Plays one practice match of `game` as a recording bot; returns what it received.
async fn record_match(arena: &Arena, token: &str, game: pb::Game) -> Vec<pb::ArenaMessage> {
    let mut client = arena.client().await;
    let (tx, rx) = mpsc::channel(64);
    tx.send(pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Hello(pb::Hello {
            name: "recorder".into(),
            games: vec![game as i32],
            client_version: "e2e".into(),
            preset: None,
            max_matches: 0,
        })),
    })
    .await
    .unwrap();
    let mut inbound = client
        .play(authorized(ReceiverStream::new(rx), token))
        .await
        .expect("play")
        .into_inner();
    let mut received = Vec::new();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(60), inbound.message())
            .await
            .expect("the match stalled")
            .expect("stream error")
            .expect("stream ended before the match result");
        let kind = message.kind.clone();
        received.push(message);
        match kind {
            Some(Kind::DecisionRequest(request)) => {
                // Answer with the last legal action: exercises rerolls, bets and raises.
                let action = request.legal_actions.last().cloned();
                tx.send(pb::BotMessage {
                    kind: Some(pb::bot_message::Kind::Decision(pb::Decision {
                        request_id: request.request_id,
                        action,
                    })),
                })
                .await
                .unwrap();
            }
            Some(Kind::MatchResult(_)) => break,
            _ => {}
        }
    }
    received
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_receives_exactly_its_observations_and_public_events() {
    let arena = Arena::start(ArenaOptions {
        log_file: None,
        args: vec![
            "--practice".into(),
            "--practice-wait-ms".into(),
            "0".into(),
            "--zokken-rounds".into(),
            "5".into(),
        ],
    })
    .await;
    let token = arena.add_bot("recorder").await;
    let mut checked_total = 0;
    for game in [pb::Game::Schocken, pb::Game::Sjokken, pb::Game::Zokken] {
        let received = record_match(&arena, &token, game).await;
        let start = received
            .iter()
            .find_map(|m| match &m.kind {
                Some(Kind::MatchStart(start)) => Some(start.clone()),
                _ => None,
            })
            .expect("a match start");
        let seat = Seat(start.your_seat as u8);
        let mut client = arena.client().await;
        let log = client
            .get_match_log(pb::GetMatchLogRequest {
                match_id: start.match_id.clone(),
            })
            .await
            .expect("the finished match's log")
            .into_inner();
        log_schema::assert_valid_log(&log.log_json, &start.match_id);
        let log = MatchLog::from_json(&log.log_json).expect("a valid log");
        log.replay().expect("the log replays");

        // Walk the match again, pairing this seat's decisions with the requests it got.
        // Each request with the number of events received before it.
        let mut events_so_far = 0;
        let mut requests = received
            .iter()
            .filter_map(|m| {
                events_so_far += m.events.len();
                match &m.kind {
                    Some(Kind::DecisionRequest(r)) => Some((r, events_so_far)),
                    _ => None,
                }
            })
            .collect::<Vec<_>>()
            .into_iter();
        let mut m = Match::new(log.rules.clone(), log.seed, log.seats as usize).unwrap();
        let mut expected_events: Vec<Event> = m.last_events().to_vec();
        let mut checked = 0;
        for entry in &log.entries {
            if let knobel_engine::LogEntry::Decision { seat: s, action } = *entry {
                if s == seat {
                    let (request, events_before) = requests
                        .next()
                        .expect("a request for every decision of this seat");
                    assert_eq!(
                        events_before,
                        expected_events.len(),
                        "a request must come after every event that happened before it"
                    );
                    let seen = Observation::try_from(
                        request.observation.as_ref().expect("an observation"),
                    )
                    .unwrap();
                    assert_eq!(
                        seen,
                        m.observe(seat),
                        "the wire observation differs from the engine's"
                    );
                    let legal: Vec<Action> = request
                        .legal_actions
                        .iter()
                        .map(|a| Action::try_from(a).unwrap())
                        .collect();
                    assert_eq!(legal, m.legal_actions(seat));
                    checked += 1;
                }
                m.apply(s, action).unwrap();
                expected_events.extend_from_slice(m.last_events());
            }
        }
        assert!(requests.next().is_none(), "more requests than decisions");
        // A Sjokken seat that never starts a round may never be asked; Zokken always asks.
        checked_total += checked;
        let events: Vec<Event> = received
            .iter()
            .flat_map(|m| {
                assert!(
                    m.kind.is_some() || !m.events.is_empty(),
                    "a message with neither events nor a kind"
                );
                m.events
                    .iter()
                    .map(|e| Event::try_from(e).unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(
            events, expected_events,
            "{game:?}: the bot's events differ from the engine's public events"
        );
    }
    assert!(checked_total > 0);
    assert!(arena.stop().await.success());
}
