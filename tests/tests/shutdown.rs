//! Graceful shutdown: on SIGTERM a running match is aborted, its bots are told, and the
//! store holds it as aborted with its log, nothing half-written.

use std::time::Duration;

use knobel_arena::store::{MatchFilter, MatchStatus, Store};
use knobel_e2e::{Arena, ArenaOptions, finish};
use knobel_engine::MatchLog;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_aborts_running_matches_and_records_them() {
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
    // The slow bot never answers: the match is still running when the arena stops.
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
    let mut running = false;
    for _ in 0..100 {
        if !arena.matches().await.is_empty() {
            running = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(running, "the match did not start");
    // A running match's log holds hidden dice: it is not served.
    let id = arena.matches().await[0].match_id.clone();
    let status = arena
        .client()
        .await
        .get_match_log(knobel_proto::v1::GetMatchLogRequest { match_id: id })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    let started = std::time::Instant::now();
    assert!(
        arena.terminate().await.success(),
        "the arena must exit cleanly on SIGTERM"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "shutdown waited on a bot"
    );

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
    let (status, log) = store.match_log(&matches[0].id).await.unwrap().unwrap();
    assert_eq!(status, MatchStatus::Aborted);
    let log = MatchLog::from_json(&log.expect("an aborted match keeps its log")).unwrap();
    log.replay().expect("the partial log replays");
}
