//! Results that agree (issue 8): a match's result says, per seat, the placing, tokens or
//! chips, strikes, timeouts and whether and why it forfeited, and the wire (`MatchResult`,
//! the `MatchOver` event, ListMatches), the database and the match log say the same. Real
//! processes, real gRPC: the arena is `knobel serve`, the bot under test a raw gRPC client.

use std::time::Duration;

use knobel_arena::store::Store;
use knobel_e2e::{Arena, ArenaOptions, authorized};
mod log_schema;

use knobel_engine::{Event, ForfeitReason, LogEntry, MatchLog, Seat, StrikeReason};
use knobel_proto::v1 as pb;
use pb::arena_message::Kind;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// How the raw bot answers its `n`th decision request (from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// The request's default action.
    Default,
    /// A well-formed action of a kind the game never allows here.
    Illegal,
    /// A decision without an action.
    Malformed,
    /// No answer at all (a timeout).
    Silent,
}

/// What the raw bot received in its one match.
struct Played {
    seat: usize,
    result: pb::MatchResult,
    events: Vec<pb::Event>,
    errors: Vec<pb::ErrorEvent>,
}

/// Arena options: three seats filled by built-in players at once, a short time control and
/// short Zokken matches.
fn options() -> ArenaOptions {
    ArenaOptions {
        log_file: None,
        args: [
            "--practice",
            "--practice-wait-ms",
            "50",
            "--seats",
            "3",
            "--decision-ms",
            "100",
            "--time-bank-ms",
            "100",
            "--zokken-rounds",
            "6",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect(),
    }
}

fn game_number(game: &str) -> i32 {
    match game {
        "schocken" => pb::Game::Schocken as i32,
        "sjokken" => pb::Game::Sjokken as i32,
        "zokken" => pb::Game::Zokken as i32,
        _ => unreachable!("{game}"),
    }
}

/// Plays one match of `game` as a raw gRPC client answering by `answer`, and returns what
/// it received.
async fn play(arena: &Arena, token: &str, game: &str, answer: fn(usize) -> Answer) -> Played {
    let mut client = arena.client().await;
    let (tx, rx) = mpsc::channel(64);
    tx.send(pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Hello(pb::Hello {
            name: "raw".into(),
            games: vec![game_number(game)],
            client_version: "e2e".into(),
            preset: None,
            max_matches: 1,
        })),
    })
    .await
    .unwrap();
    let mut inbound = client
        .play(authorized(ReceiverStream::new(rx), token))
        .await
        .expect("the arena takes the stream")
        .into_inner();
    let illegal = match game {
        // Zokken has no stop; Schocken and Sjokken have no betting.
        "zokken" => pb::action::Kind::Stop(pb::Stop { turn: vec![] }),
        _ => pb::action::Kind::Check(pb::Check {}),
    };
    let (mut seat, mut requests) = (None, 0);
    let (mut events, mut errors) = (Vec::new(), Vec::new());
    let result = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let message = inbound
                .message()
                .await
                .expect("the stream stays healthy")
                .expect("the stream stays open until the result");
            events.extend(message.events);
            match message.kind {
                Some(Kind::MatchStart(start)) => seat = Some(start.your_seat as usize),
                Some(Kind::DecisionRequest(request)) => {
                    let action = match answer(requests) {
                        Answer::Default => request.default_action.clone(),
                        Answer::Illegal => Some(pb::Action {
                            kind: Some(illegal.clone()),
                        }),
                        Answer::Malformed => None,
                        Answer::Silent => {
                            requests += 1;
                            continue;
                        }
                    };
                    requests += 1;
                    let decision = pb::Decision {
                        request_id: request.request_id,
                        action,
                    };
                    tx.send(pb::BotMessage {
                        kind: Some(pb::bot_message::Kind::Decision(decision)),
                    })
                    .await
                    .unwrap();
                }
                Some(Kind::Error(error)) => errors.push(error),
                Some(Kind::MatchResult(result)) => return result,
                _ => {}
            }
        }
    })
    .await
    .expect("the match ended within 120 s");
    Played {
        seat: seat.expect("a MatchStart came first"),
        result,
        events,
        errors,
    }
}

/// The outcome ListMatches gives for `match_id`.
async fn listed(arena: &Arena, match_id: &str) -> pb::MatchSummary {
    arena
        .matches()
        .await
        .into_iter()
        .find(|m| m.match_id == match_id)
        .unwrap_or_else(|| panic!("match {match_id} is not listed"))
}

async fn match_log(arena: &Arena, match_id: &str) -> MatchLog {
    let mut client = arena.client().await;
    let response = client
        .get_match_log(pb::GetMatchLogRequest {
            match_id: match_id.to_owned(),
        })
        .await
        .expect("the log of an ended match")
        .into_inner();
    log_schema::assert_valid_log(&response.log_json, match_id);
    MatchLog::from_json(&response.log_json).expect("the log parses")
}

/// The placings of the last MatchOver among `events`.
fn match_over(events: &[pb::Event]) -> Vec<u32> {
    let over: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(pb::event::Kind::MatchOver(over)) => Some(over.placings.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(over.len(), 1, "exactly one MatchOver event");
    over[0].clone()
}

/// A bot that answers illegally, then malformed, then not at all: three strikes (one a
/// timeout), then its seat is forfeited. The database (ListMatches and the seats' results
/// table), the match log, the MatchResult the bot received and the MatchOver event it
/// received all agree, in every game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strikes_timeouts_and_the_forfeit_agree_everywhere() {
    let arena = Arena::start(options()).await;
    let token = arena.add_bot("offender").await;
    let store = Store::connect(&arena.database_url)
        .await
        .expect("the arena's database opens");
    for game in ["schocken", "sjokken", "zokken"] {
        // The match's seed is the arena's: a short match may end before the bot's third
        // request. Play until one lasts long enough for the forfeit (nearly always the first).
        let mut tries = 0;
        let played = loop {
            let played = play(&arena, &token, game, |n| match n {
                0 => Answer::Illegal,
                1 => Answer::Malformed,
                _ => Answer::Silent,
            })
            .await;
            if played.errors.iter().any(|e| e.forfeited) {
                break played;
            }
            tries += 1;
            assert!(
                tries < 10,
                "{game}: ten matches ended before a third request"
            );
        };
        let seat = played.seat;
        let result = &played.result;
        assert_eq!(result.status, pb::MatchStatus::Finished as i32, "{game}");
        let outcome = result.outcome.clone().expect("a finished match's outcome");
        let n = outcome.placings.len();
        assert_eq!(n, 3, "{game}");

        // MatchResult, as the bot received it.
        let mut strikes = vec![0; n];
        strikes[seat] = 3;
        let mut timeouts = vec![0; n];
        timeouts[seat] = 1;
        let none = pb::ForfeitReason::None as i32;
        let mut forfeits = vec![none; n];
        forfeits[seat] = pb::ForfeitReason::Strikes as i32;
        assert_eq!(outcome.strikes, strikes, "{game}: {outcome:?}");
        assert_eq!(outcome.timeouts, timeouts, "{game}: {outcome:?}");
        assert_eq!(outcome.forfeits, forfeits, "{game}: {outcome:?}");
        assert_eq!(
            outcome.placings[seat], 3,
            "{game}: a forfeited seat is last"
        );
        assert_eq!(result.your_place, 3, "{game}");
        let codes: Vec<i32> = played.errors.iter().map(|e| e.code).collect();
        assert_eq!(
            codes,
            [
                pb::ErrorCode::IllegalAction as i32,
                pb::ErrorCode::Malformed as i32,
                pb::ErrorCode::Timeout as i32
            ],
            "{game}"
        );
        let told: Vec<(u32, bool)> = played
            .errors
            .iter()
            .map(|e| (e.strikes, e.forfeited))
            .collect();
        assert_eq!(told, [(1, false), (2, false), (3, true)], "{game}");

        // The events the bot received: its forfeit, and a MatchOver with the same placings.
        assert_eq!(match_over(&played.events), outcome.placings, "{game}");
        let forfeited: Vec<_> = played
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                Some(pb::event::Kind::Forfeited(f)) => Some((f.seat, f.reason)),
                _ => None,
            })
            .collect();
        assert_eq!(
            forfeited,
            [(seat as u32, pb::ForfeitReason::Strikes as i32)],
            "{game}"
        );

        // ListMatches, read from the database: the same outcome, field for field.
        let summary = listed(&arena, &result.match_id).await;
        assert_eq!(summary.outcome.as_ref(), Some(&outcome), "{game}");

        // The seats' results in the arena's database (Store::seat_results).
        let seats = store.seat_results(&result.match_id).await.unwrap();
        assert_eq!(seats.len(), n, "{game}");
        for (i, s) in seats.iter().enumerate() {
            assert_eq!(s.seat as usize, i);
            assert_eq!(u32::from(s.place), outcome.placings[i], "{game}");
            assert_eq!(s.strikes, outcome.strikes[i], "{game}");
            assert_eq!(s.timeouts, outcome.timeouts[i], "{game}");
            let expected = (i == seat).then_some(ForfeitReason::Strikes);
            assert_eq!(s.forfeit, expected, "{game}");
            match game {
                "zokken" => {
                    assert_eq!(s.tokens, None);
                    assert_eq!(s.chips, Some(outcome.chips[i]));
                }
                _ => {
                    assert_eq!(s.tokens, Some(outcome.tokens[i]));
                    assert_eq!(s.chips, None);
                }
            }
        }
        assert_eq!(seats[seat].bot_name, "offender");

        // The match log: the strikes and the forfeit where they happened, the final
        // MatchOver, and a replay that gives the same outcome.
        let log = match_log(&arena, &result.match_id).await;
        let me = Seat(seat as u8);
        let penalties: Vec<&LogEntry> = log
            .entries
            .iter()
            .filter(|e| matches!(e, LogEntry::Strike { .. } | LogEntry::Forfeit { .. }))
            .collect();
        assert_eq!(
            penalties,
            [
                &LogEntry::Strike {
                    seat: me,
                    reason: StrikeReason::IllegalAction
                },
                &LogEntry::Strike {
                    seat: me,
                    reason: StrikeReason::Malformed
                },
                &LogEntry::Strike {
                    seat: me,
                    reason: StrikeReason::Timeout
                },
                &LogEntry::Forfeit {
                    seat: me,
                    reason: ForfeitReason::Strikes
                },
            ],
            "{game}"
        );
        let logged_over: Vec<Vec<u32>> = log
            .entries
            .iter()
            .filter_map(|e| match e {
                LogEntry::Event {
                    event: Event::MatchOver { placings },
                } => Some(placings.iter().map(|&p| u32::from(p)).collect()),
                _ => None,
            })
            .collect();
        assert_eq!(
            logged_over,
            std::slice::from_ref(&outcome.placings),
            "{game}"
        );
        let replayed = log.replay().expect("the stored log replays");
        let replayed = pb::Outcome::from(replayed.outcome().expect("over"));
        assert_eq!(replayed, outcome, "{game}");
    }
    store.close().await;
    assert!(arena.stop().await.success());
}

/// A match without penalties: every seat has 0 strikes, 0 timeouts and no forfeit, and the
/// lists the game does not have are empty (not lists of zeros), in the MatchResult and in
/// ListMatches alike; the MatchOver event has the outcome's placings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outcome_fields_a_game_does_not_have_are_empty() {
    let arena = Arena::start(options()).await;
    let token = arena.add_bot("polite").await;
    for game in ["schocken", "sjokken", "zokken"] {
        let played = play(&arena, &token, game, |_| Answer::Default).await;
        assert!(played.errors.is_empty(), "{game}: {:?}", played.errors);
        let outcome = played.result.outcome.clone().expect("an outcome");
        let n = outcome.placings.len();
        assert_eq!(n, 3);
        assert_eq!(outcome.strikes, [0; 3], "{game}");
        assert_eq!(outcome.timeouts, [0; 3], "{game}");
        assert_eq!(
            outcome.forfeits,
            [pb::ForfeitReason::None as i32; 3],
            "{game}"
        );
        match game {
            "schocken" => {
                assert!(outcome.loser.is_some());
                assert_eq!(outcome.tokens.len(), n);
                assert_eq!(outcome.halves_lost.len(), n);
                assert!(outcome.chips.is_empty(), "{outcome:?}");
            }
            "sjokken" => {
                assert!(outcome.loser.is_some());
                assert_eq!(outcome.tokens.len(), n);
                assert!(outcome.halves_lost.is_empty(), "{outcome:?}");
                assert!(outcome.chips.is_empty(), "{outcome:?}");
            }
            _ => {
                assert!(outcome.loser.is_none());
                assert!(outcome.tokens.is_empty(), "{outcome:?}");
                assert!(outcome.halves_lost.is_empty(), "{outcome:?}");
                assert_eq!(outcome.chips.len(), n);
                assert_eq!(outcome.chips.iter().sum::<i64>(), 0);
            }
        }
        assert_eq!(match_over(&played.events), outcome.placings, "{game}");
        let summary = listed(&arena, &played.result.match_id).await;
        assert_eq!(summary.outcome.as_ref(), Some(&outcome), "{game}");
    }
    assert!(arena.stop().await.success());
}
