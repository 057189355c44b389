//! Graceful shutdown. On SIGTERM health turns NOT_SERVING first and no new match is seated
//! (waiting bots and new streams get UNAVAILABLE); running matches play on for up to
//! `--shutdown-grace-secs` (the server keeps serving their streams) and are recorded as
//! finished; those still running after the grace are aborted, their bots told, and the
//! store holds them as aborted with their log, nothing half-written. Only then does the
//! listener close.

use std::time::{Duration, Instant};

use knobel_arena::store::{MatchFilter, MatchStatus, Store};
use knobel_e2e::{Arena, ArenaOptions, authorized, finish, http_get, poll_every, poll_until};
mod log_schema;

use knobel_engine::MatchLog;
use knobel_proto::v1 as pb;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// Waits (at most 30 s) until the arena lists a match; gives its id.
async fn first_match(arena: &Arena) -> String {
    poll_until(Duration::from_secs(30), "a match has started", || async {
        arena.matches().await.first().map(|m| m.match_id.clone())
    })
    .await
}

fn send_sigterm(arena: &Arena) {
    let pid = arena.child.id().expect("the arena runs");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}

/// With a grace shorter than the match, SIGTERM aborts it after the grace (not at once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_aborts_matches_still_running_after_the_grace_and_records_them() {
    let mut arena = Arena::start(ArenaOptions {
        log_file: None,
        args: vec![
            "--seats".into(),
            "2".into(),
            "--decision-ms".into(),
            "30000".into(),
            "--shutdown-grace-secs".into(),
            "2".into(),
        ],
    })
    .await;
    let slow = arena.add_bot("slow").await;
    let quick = arena.add_bot("quick").await;
    // The slow bot never answers: the match is still running when the grace is over.
    let slow_bot = arena.bot(
        &slow,
        &[
            "--games",
            "schocken",
            "--matches",
            "1",
            "--misbehave",
            "never-answer",
        ],
    );
    let quick_bot = arena.bot(&quick, &["--games", "schocken", "--matches", "1"]);
    let id = first_match(&arena).await;
    // A running match's log holds hidden dice: it is not served.
    let status = arena
        .client()
        .await
        .get_match_log(pb::GetMatchLogRequest { match_id: id })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    let started = Instant::now();
    assert!(
        arena.terminate().await.success(),
        "the arena must exit cleanly on SIGTERM"
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(2),
        "the match was aborted after {took:?}, before its grace of 2 s"
    );
    assert!(took < Duration::from_secs(10), "shutdown waited on a bot");

    // Both bots were told the match was aborted.
    for bot in [slow_bot, quick_bot] {
        let (status, lines) = finish(bot, Duration::from_secs(30)).await;
        assert!(status.success(), "{lines:?}");
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("aborted"), "{lines:?}");
    }

    // The store holds the match as aborted, with a complete, replayable log.
    let store = Store::connect(&arena.database_url).await.unwrap();
    let matches = store.list_matches(&MatchFilter::default()).await.unwrap();
    assert_eq!(matches.len(), 1);
    assert_eq!(matches[0].status, MatchStatus::Aborted);
    assert_eq!(
        matches[0].abort_reason.as_deref(),
        Some("the arena shut down")
    );
    let (status, log) = store.match_log(&matches[0].id).await.unwrap().unwrap();
    assert_eq!(status, MatchStatus::Aborted);
    let log = log.expect("an aborted match keeps its log");
    log_schema::assert_valid_log(&log, "the aborted match's log");
    let log = MatchLog::from_json(&log).unwrap();
    log.replay().expect("the partial log replays");
}

/// With a grace long enough, a match running at SIGTERM plays to its end and is recorded
/// finished; meanwhile health says NOT_SERVING (while the port still answers), a bot
/// waiting in the lobby and a new stream are refused with UNAVAILABLE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_running_matches_finish_within_the_grace() {
    let mut arena = Arena::start(ArenaOptions {
        log_file: None,
        args: vec![
            "--seats".into(),
            "2".into(),
            "--decision-ms".into(),
            "5000".into(),
            "--shutdown-grace-secs".into(),
            "120".into(),
        ],
    })
    .await;
    let slowish = arena.add_bot("slowish").await;
    let quick = arena.add_bot("quick").await;
    let waiting = arena.add_bot("waiting").await;
    // Every answer of one bot comes 400 ms late (within its deadline): the match lasts some
    // seconds, and is still running when SIGTERM comes.
    let slow_bot = arena.bot(
        &slowish,
        &[
            "--games",
            "sjokken",
            "--matches",
            "1",
            "--misbehave",
            "late:400",
        ],
    );
    let quick_bot = arena.bot(&quick, &["--games", "sjokken", "--matches", "1"]);
    let id = first_match(&arena).await;

    let channel = tonic::transport::Channel::from_shared(arena.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let health = HealthClient::new(channel.clone());
    let check = |mut health: HealthClient<tonic::transport::Channel>, service: &'static str| async move {
        health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .map(|r| r.into_inner().status)
    };
    assert_eq!(
        check(health.clone(), "knobel.v1.Arena").await.unwrap(),
        ServingStatus::Serving as i32
    );
    // A third bot waits alone in the lobby (two seats, both taken).
    let mut arena_client = arena.client().await;
    let (to_arena, from_bot) = tokio::sync::mpsc::channel::<pb::BotMessage>(4);
    to_arena
        .send(pb::BotMessage {
            kind: Some(pb::bot_message::Kind::Hello(pb::Hello {
                name: "waiting".into(),
                games: vec![pb::Game::Sjokken as i32],
                ..Default::default()
            })),
        })
        .await
        .unwrap();
    let mut waiting_stream = arena_client
        .play(authorized(
            tokio_stream::wrappers::ReceiverStream::new(from_bot),
            &waiting,
        ))
        .await
        .expect("the waiting bot's stream opens")
        .into_inner();
    let welcome = waiting_stream.message().await.unwrap().unwrap();
    assert!(
        matches!(welcome.kind, Some(pb::arena_message::Kind::Welcome(_))),
        "{welcome:?}"
    );

    send_sigterm(&arena);
    // Health turns NOT_SERVING while the server still answers.
    poll_every(
        Duration::from_millis(20),
        Duration::from_secs(20),
        "health is NOT_SERVING",
        || async {
            let status = check(health.clone(), "knobel.v1.Arena")
                .await
                .expect("the server answers health checks during shutdown");
            if status == ServingStatus::NotServing as i32 {
                Ok(())
            } else {
                Err(format!("{:?}", ServingStatus::try_from(status)))
            }
        },
    )
    .await;
    assert_eq!(
        check(health.clone(), "").await.unwrap(),
        ServingStatus::NotServing as i32
    );
    // The waiting bot is refused: no match for it.
    let refused = loop {
        match waiting_stream.message().await {
            Ok(Some(message)) => assert!(
                !matches!(message.kind, Some(pb::arena_message::Kind::MatchStart(_))),
                "a waiting bot was seated during shutdown: {message:?}"
            ),
            Ok(None) => panic!("the waiting bot's stream ended without a status"),
            Err(status) => break status,
        }
    };
    assert_eq!(refused.code(), tonic::Code::Unavailable, "{refused:?}");
    assert!(refused.message().contains("shutting down"), "{refused:?}");
    // A new stream is refused too.
    let new_stream = arena_client
        .play(authorized(
            tokio_stream::pending::<pb::BotMessage>(),
            &waiting,
        ))
        .await;
    let status = new_stream.expect_err("a new stream during shutdown is refused");
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    // The match is still running, and the port still answers, until it is over.
    assert_eq!(
        check(health.clone(), "knobel.v1.Arena").await.unwrap(),
        ServingStatus::NotServing as i32
    );
    let listed = arena.matches().await;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].status,
        pb::MatchStatus::Running as i32,
        "{listed:?}"
    );
    // The web viewer serves through the grace: the running match's page answers.
    let (status, body) = http_get(&format!("{}matches/{id}", arena.web_url)).await;
    assert_eq!(status, 200, "{body}");

    // Both bots played it to its end.
    for bot in [slow_bot, quick_bot] {
        let (status, lines) = finish(bot, Duration::from_secs(120)).await;
        assert!(status.success(), "{lines:?}");
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with(&format!("match {id} sjokken place ")),
            "{lines:?}"
        );
        assert!(!lines[0].contains("aborted"), "{lines:?}");
    }
    // Then the arena stops by itself, cleanly, and its port is closed.
    let status = tokio::time::timeout(Duration::from_secs(30), arena.child.wait())
        .await
        .expect("the arena stops once its matches are over")
        .unwrap();
    assert!(status.success());
    drop(health);
    let after = check(HealthClient::new(channel), "").await;
    assert!(after.is_err(), "the port still answers: {after:?}");
    let url = arena.url.clone();
    assert!(
        tonic::transport::Channel::from_shared(url)
            .unwrap()
            .connect()
            .await
            .is_err(),
        "the listener is still open"
    );
    // The web viewer stopped with the arena.
    let web = arena
        .web_url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    assert!(
        tokio::net::TcpStream::connect(web).await.is_err(),
        "the web viewer still listens at {web}"
    );

    // The store holds the match as finished, with its results.
    let store = Store::connect(&arena.database_url).await.unwrap();
    let record = store.get_match(&id).await.unwrap().unwrap().summary;
    assert_eq!(record.status, MatchStatus::Finished, "{record:?}");
    assert_eq!(record.placings.as_ref().map(Vec::len), Some(2));
    for bot in ["slowish", "quick"] {
        let results = store.results_for_bot(bot).await.unwrap();
        assert_eq!(results.len(), 1, "{bot}: {results:?}");
        assert_eq!(results[0].match_id, id);
    }
}
