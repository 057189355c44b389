//! Misbehaving bots, one test each, as real processes over real gRPC. Each test checks that
//! the match completes, the offender gets the specified outcome, and the other bots see
//! normal play (no errors, no strikes, a finished match).

use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, authorized, finish};
use knobel_proto::v1 as pb;
use pb::arena_message::Kind;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// One line a `knobel-bot` prints per match:
/// `match <id> <game> place <p>/<n>[ aborted] requests <r> strikes <s> forfeited <f> errors [..]`.
#[derive(Debug, Clone)]
struct Summary {
    match_id: String,
    place: u32,
    seats: u32,
    aborted: bool,
    requests: u32,
    strikes: u32,
    forfeited: bool,
    errors: Vec<String>,
}

fn parse(line: &str) -> Summary {
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[0], "match", "unexpected bot output: {line}");
    let (place, seats) = words[4].split_once('/').expect("place p/n");
    let aborted = words.contains(&"aborted");
    let after = |key: &str| {
        let i = words
            .iter()
            .position(|w| *w == key)
            .unwrap_or_else(|| panic!("no {key} in {line}"));
        words[i + 1]
    };
    let errors = line
        .rsplit_once("errors [")
        .map(|(_, rest)| rest.trim_end_matches(']'))
        .unwrap_or("")
        .split(',')
        .filter(|e| !e.is_empty())
        .map(str::to_owned)
        .collect();
    Summary {
        match_id: words[1].to_owned(),
        place: place.parse().unwrap(),
        seats: seats.parse().unwrap(),
        aborted,
        requests: after("requests").parse().unwrap(),
        strikes: after("strikes").parse().unwrap(),
        forfeited: after("forfeited") == "true",
        errors,
    }
}

/// The arena, one offender and three well-behaved heuristic bots at a four-seat table.
///
/// Most tests play Zokken: every seat acts several times in every round, so the offender is
/// sure to be asked (a Schocken or Sjokken seat that never starts a round may not be).
struct Table {
    arena: Arena,
    offender: String,
    good: Vec<String>,
}

async fn table(args: &[&str]) -> Table {
    let mut all = vec!["--seats", "4", "--zokken-rounds", "6"];
    all.extend_from_slice(args);
    let arena = Arena::start(ArenaOptions {
        log_file: None,
        args: all.into_iter().map(str::to_owned).collect(),
    })
    .await;
    let offender = arena.add_bot("offender").await;
    let mut good = Vec::new();
    for i in 0..3 {
        good.push(arena.add_bot(&format!("good-{i}")).await);
    }
    Table {
        arena,
        offender,
        good,
    }
}

impl Table {
    /// Plays: the offender with `misbehave` for `offender_matches`, the good bots for
    /// `good_matches`, all of `game`. Returns the summaries.
    async fn play(
        &self,
        game: &str,
        misbehave: &str,
        offender_matches: u32,
        good_matches: u32,
    ) -> (Vec<Summary>, Vec<Vec<Summary>>) {
        let within = Duration::from_secs(120);
        let offender = self.arena.bot(
            &self.offender,
            &[
                "--name",
                "offender",
                "--games",
                game,
                "--strategy",
                "heuristic",
                "--matches",
                &offender_matches.to_string(),
                "--misbehave",
                misbehave,
            ],
        );
        let good: Vec<_> = self
            .good
            .iter()
            .enumerate()
            .map(|(i, token)| {
                let strategy = ["heuristic", "random", "timid"][i];
                self.arena.bot(
                    token,
                    &[
                        "--name",
                        "good",
                        "--games",
                        game,
                        "--strategy",
                        strategy,
                        "--matches",
                        &good_matches.to_string(),
                    ],
                )
            })
            .collect();
        let (status, lines) = finish(offender, within).await;
        assert!(status.success(), "the offender failed: {lines:?}");
        let offender = lines.iter().map(|l| parse(l)).collect();
        let mut others = Vec::new();
        for bot in good {
            let (status, lines) = finish(bot, within).await;
            assert!(status.success(), "a good bot failed: {lines:?}");
            let summaries: Vec<Summary> = lines.iter().map(|l| parse(l)).collect();
            for s in &summaries {
                assert!(
                    !s.aborted && s.place >= 1,
                    "a good bot's match did not finish: {s:?}"
                );
                assert!(
                    s.errors.is_empty() && s.strikes == 0 && !s.forfeited,
                    "a good bot saw errors: {s:?}"
                );
            }
            others.push(summaries);
        }
        (offender, others)
    }

    /// The offender's place in a stored match, from the arena's list of matches.
    async fn stored_place(&self, match_index_oldest_first: usize) -> (u32, u32) {
        let (seat, outcome) = self.stored_outcome(match_index_oldest_first).await;
        (outcome.placings[seat], outcome.placings.len() as u32)
    }

    /// The offender's seat and the outcome of a stored match, from the arena's list of
    /// matches.
    async fn stored_outcome(&self, match_index_oldest_first: usize) -> (usize, pb::Outcome) {
        let mut matches = self.arena.matches().await;
        matches.reverse();
        let m = &matches[match_index_oldest_first];
        assert_eq!(m.status, pb::MatchStatus::Finished as i32, "{m:?}");
        let seat = m
            .seat_names
            .iter()
            .position(|n| n == "offender")
            .expect("the offender played");
        (seat, m.outcome.clone().expect("an outcome"))
    }

    async fn stop(self) {
        assert!(self.arena.stop().await.success());
    }
}

fn assert_forfeited_last(s: &Summary, code: &str) {
    assert!(!s.aborted, "{s:?}");
    assert!(s.forfeited, "{s:?}");
    assert_eq!(s.strikes, 3, "{s:?}");
    assert_eq!(s.place, s.seats, "a forfeited seat is placed last: {s:?}");
    assert!(
        s.errors.iter().filter(|e| e.as_str() == code).count() >= 3,
        "{s:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_never_answers_times_out_three_times_and_is_forfeited() {
    let table = table(&["--decision-ms", "100", "--time-bank-ms", "300"]).await;
    let (offender, _) = table.play("zokken", "never-answer", 1, 1).await;
    assert_eq!(offender.len(), 1);
    assert_forfeited_last(&offender[0], "ERROR_CODE_TIMEOUT");
    // After the forfeit no more requests: exactly the three that timed out.
    assert_eq!(offender[0].requests, 3, "{:?}", offender[0]);
    // The stored result says so too.
    let (seat, outcome) = table.stored_outcome(0).await;
    assert_eq!(outcome.strikes[seat], 3, "{outcome:?}");
    assert_eq!(outcome.timeouts[seat], 3, "{outcome:?}");
    assert_eq!(
        outcome.forfeits[seat],
        pb::ForfeitReason::Strikes as i32,
        "{outcome:?}"
    );
    table.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_answers_late_but_within_its_bank_plays_normally() {
    let table = table(&["--decision-ms", "20", "--time-bank-ms", "20000"]).await;
    let (offender, _) = table.play("zokken", "late:45", 1, 1).await;
    let s = &offender[0];
    assert!(
        !s.aborted && !s.forfeited && s.strikes == 0 && s.errors.is_empty(),
        "{s:?}"
    );
    assert!(s.requests > 0);
    table.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_exhausts_its_bank_times_out_and_is_forfeited() {
    let table = table(&["--decision-ms", "20", "--time-bank-ms", "400"]).await;
    let (offender, _) = table.play("zokken", "late:150", 1, 1).await;
    let s = &offender[0];
    assert_forfeited_last(s, "ERROR_CODE_TIMEOUT");
    // The bank paid for some answers before it ran out.
    assert!(s.requests > 3, "{s:?}");
    table.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_sends_illegal_actions_is_struck_and_forfeited_in_every_game() {
    let table = table(&[]).await;
    for game in ["schocken", "sjokken", "zokken"] {
        // A Sjokken seat that never starts a round may get no request in a whole match,
        // so two matches are played; every request is answered illegally.
        let (offender, _) = table.play(game, "illegal", 2, 2).await;
        for s in &offender {
            assert_eq!(s.strikes, s.requests.min(3), "{game}: {s:?}");
            assert_eq!(s.forfeited, s.requests >= 3, "{game}: {s:?}");
            assert_eq!(s.errors.len() as u32, s.strikes, "{game}: {s:?}");
            assert!(
                s.errors.iter().all(|e| e == "ERROR_CODE_ILLEGAL_ACTION"),
                "{s:?}"
            );
        }
        let forfeited = offender
            .iter()
            .find(|s| s.forfeited)
            .expect("a forfeit in two matches");
        assert_forfeited_last(forfeited, "ERROR_CODE_ILLEGAL_ACTION");
    }
    table.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_answers_a_stale_request_id_is_told_and_not_struck() {
    let table = table(&[]).await;
    let (offender, _) = table.play("zokken", "stale", 1, 1).await;
    let s = &offender[0];
    assert!(!s.aborted && !s.forfeited && s.strikes == 0, "{s:?}");
    assert!(!s.errors.is_empty(), "{s:?}");
    assert!(
        s.errors.iter().all(|e| e == "ERROR_CODE_STALE_REQUEST"),
        "{s:?}"
    );
    table.stop().await;
}

/// The offender's stream breaks in its first match (it forfeits, placed last); it
/// reconnects and plays the second match normally.
async fn breaks_then_reconnects(misbehave: &str) {
    let table = table(&[]).await;
    let (offender, others) = table.play("zokken", misbehave, 1, 2).await;
    assert_eq!(offender.len(), 1, "{offender:?}");
    let second = &offender[0];
    assert!(
        !second.aborted && !second.forfeited && second.errors.is_empty(),
        "{second:?}"
    );
    assert!(others.iter().all(|o| o.len() == 2));
    let (place, seats) = table.stored_place(0).await;
    assert_eq!(
        place, seats,
        "the broken seat is placed last in the first match"
    );
    let (seat, outcome) = table.stored_outcome(0).await;
    assert_eq!(
        outcome.forfeits[seat],
        pb::ForfeitReason::Disconnected as i32,
        "{outcome:?}"
    );
    let (_, second_outcome) = table.stored_outcome(1).await;
    assert!(
        second_outcome
            .forfeits
            .iter()
            .all(|&f| f == pb::ForfeitReason::None as i32),
        "{second_outcome:?}"
    );
    assert_eq!(others[0][1].match_id, second.match_id);
    table.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_sends_bytes_that_are_not_a_message_forfeits_its_seat() {
    breaks_then_reconnects("garbage").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_sends_an_oversized_message_forfeits_its_seat() {
    breaks_then_reconnects("oversized").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_disconnects_mid_match_and_reconnects_plays_on() {
    breaks_then_reconnects("disconnect-after:2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_with_a_wrong_token_is_refused_before_any_seat() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let bot = arena.bot(
        "knb_not_a_registered_token",
        &[
            "--name",
            "intruder",
            "--games",
            "schocken",
            "--matches",
            "1",
        ],
    );
    let (status, lines) = finish(bot, Duration::from_secs(60)).await;
    assert!(
        !status.success(),
        "a bot with a wrong token must fail: {lines:?}"
    );
    assert!(lines.is_empty());
    assert!(arena.matches().await.is_empty(), "nobody was seated");
    assert!(arena.stop().await.success());
}

/// Two streams of one bot (never seated in one match: in practice mode each plays its own
/// against a built-in player): stream B answers stream A's requests. B is told the requests
/// are not its own; A's seat plays on unaffected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_streams_of_one_bot_cannot_act_for_the_same_seat() {
    let arena = Arena::start(ArenaOptions {
        log_file: None,
        args: vec![
            "--seats".into(),
            "2".into(),
            "--practice".into(),
            "--practice-wait-ms".into(),
            "50".into(),
        ],
    })
    .await;
    let token = arena.add_bot("twin").await;
    let hello = pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Hello(pb::Hello {
            name: "twin".into(),
            games: vec![pb::Game::Sjokken as i32],
            client_version: "e2e".into(),
            preset: None,
            max_matches: 0,
        })),
    };
    let mut streams = Vec::new();
    let mut senders = Vec::new();
    for _ in 0..2 {
        let mut client = arena.client().await;
        let (tx, rx) = mpsc::channel(64);
        tx.send(hello.clone()).await.unwrap();
        let inbound = client
            .play(authorized(ReceiverStream::new(rx), &token))
            .await
            .unwrap()
            .into_inner();
        streams.push(inbound);
        senders.push(tx);
    }
    let (mut a, mut b) = {
        let b = streams.pop().unwrap();
        (streams.pop().unwrap(), b)
    };
    let decide = |request: &pb::DecisionRequest| pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Decision(pb::Decision {
            request_id: request.request_id,
            action: request.legal_actions.first().cloned(),
        })),
    };
    let (mut a_errors, mut b_stale, mut hijacked) = (0, 0, Vec::new());
    let (mut a_done, mut b_done) = (false, false);
    while !(a_done && b_done) {
        tokio::select! {
            message = a.message(), if !a_done => {
                let Some(kind) = message.unwrap().expect("stream A open").kind else {
                    continue; // events only
                };
                match kind {
                    Kind::DecisionRequest(request) => {
                        // B tries to act for A's seat first, then A answers.
                        senders[1].send(decide(&request)).await.unwrap();
                        hijacked.push(request.request_id);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        senders[0].send(decide(&request)).await.unwrap();
                    }
                    Kind::Error(_) => a_errors += 1,
                    Kind::MatchResult(result) => {
                        assert_eq!(result.status, pb::MatchStatus::Finished as i32);
                        // A seat may have no decision in a whole match (a throw limit of
                        // one set before its turn every round): play on until B has tried.
                        a_done = !hijacked.is_empty();
                    }
                    _ => {}
                }
            }
            message = b.message(), if !b_done => {
                let Some(kind) = message.unwrap().expect("stream B open").kind else {
                    continue; // events only
                };
                match kind {
                    Kind::DecisionRequest(request) => senders[1].send(decide(&request)).await.unwrap(),
                    Kind::Error(error) => {
                        assert_eq!(error.code, pb::ErrorCode::StaleRequest as i32, "{error:?}");
                        assert!(hijacked.contains(&error.request_id), "{error:?}");
                        assert_eq!(error.strikes, 0);
                        b_stale += 1;
                    }
                    Kind::MatchResult(_) => b_done = b_stale > 0,
                    _ => {}
                }
            }
            _ = tokio::time::sleep(Duration::from_secs(60)) => panic!("the match stalled"),
        }
    }
    assert_eq!(a_errors, 0, "stream A's seat must be unaffected");
    assert!(
        !hijacked.is_empty() && b_stale > 0,
        "B was never told: {b_stale} of {}",
        hijacked.len()
    );
    assert!(arena.stop().await.success());
}
