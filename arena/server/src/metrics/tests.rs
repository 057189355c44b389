use std::time::Duration;

use knobel_engine::{ForfeitReason, Match, Rules};

use super::*;
use crate::referee::{MatchInfo, MatchReport, SeatDecisions, TimeControl};

fn info(seat_names: &[&str], seat_bot_ids: Vec<Option<i64>>) -> MatchInfo {
    MatchInfo {
        match_id: "m1".to_owned(),
        preset: "schocken".to_owned(),
        rules: Rules::preset("schocken").unwrap(),
        seat_names: seat_names.iter().map(|s| s.to_string()).collect(),
        seat_bot_ids,
        time_control: TimeControl::default(),
    }
}

fn report(seats: Vec<SeatDecisions>, forfeit_reasons: Vec<Option<ForfeitReason>>) -> MatchReport {
    let m = Match::new_with_log(Rules::preset("schocken").unwrap(), 1, seats.len()).unwrap();
    MatchReport {
        log: m.log().unwrap().clone(),
        outcome: None,
        decisions: 0,
        timeouts: 0,
        forfeits: 0,
        forfeit_reasons,
        seats,
    }
}

/// The value of the one series `name{labels}` in `text`, if it is there.
pub(crate) fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn decision_buckets_reach_past_the_deadline_and_the_bank() {
    let time = TimeControl {
        decision: Duration::from_millis(200),
        time_bank: Duration::from_secs(2),
    };
    let buckets = decision_buckets(time);
    for bound in [0.2, 0.4, 2.2, 60.0] {
        assert!(buckets.contains(&bound), "{bound} in {buckets:?}");
    }
    assert!(buckets.windows(2).all(|w| w[0] < w[1]), "{buckets:?}");
    let default = decision_buckets(TimeControl::default());
    for bound in [1.0, 2.0, 11.0] {
        assert!(default.contains(&bound), "{bound} in {default:?}");
    }
}

#[test]
fn series_known_at_start_up_exist_at_zero() {
    let metrics = Metrics::new(TimeControl::default());
    metrics.bot_registered("alice");
    let text = metrics.render();
    for series in [
        r#"knobel_matches_started_total{game="zokken"}"#,
        r#"knobel_matches_ended_total{game="sjokken",status="aborted"}"#,
        r#"knobel_decisions_total{bot="alice",game="schocken",outcome="timeout"}"#,
        r#"knobel_decisions_total{bot="alice",game="zokken",outcome="forfeited"}"#,
        r#"knobel_decision_duration_seconds_count{bot="alice",game="sjokken"}"#,
        r#"knobel_strikes_total{bot="alice",game="schocken",reason="illegal_action"}"#,
        r#"knobel_forfeits_total{bot="alice",game="schocken",reason="not_reading"}"#,
        r#"knobel_play_streams{bot="alice"}"#,
        r#"knobel_store_errors_total{operation="finish"}"#,
        r#"knobel_store_commit_duration_seconds_count{result="ok"}"#,
        "knobel_store_pending_writes",
    ] {
        assert_eq!(value(&text, series), Some(0.0), "{series} in\n{text}");
    }
    let version = format!(
        r#"knobel_build_info{{version="{}"}}"#,
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(value(&text, &version), Some(1.0));
    // Every metric has help text.
    for line in text.lines().filter(|l| l.starts_with("# HELP")) {
        assert!(line.split(' ').count() > 3, "no help: {line}");
    }
}

#[test]
fn a_match_counts_each_bot_seat_by_outcome_and_skips_built_in_players() {
    let metrics = Metrics::new(TimeControl::default());
    let mut alice = SeatDecisions::default();
    alice.add(DecisionOutcome::Ok);
    alice.add(DecisionOutcome::Ok);
    alice.add(DecisionOutcome::Late);
    alice.add(DecisionOutcome::Timeout);
    alice.seconds = vec![0.002, 0.003, 1.5, 11.0];
    let mut bob = SeatDecisions::default();
    bob.add(DecisionOutcome::Illegal);
    bob.add(DecisionOutcome::Malformed);
    bob.add(DecisionOutcome::Illegal);
    let info = info(
        &["alice", "bob", "builtin-heuristic"],
        vec![Some(1), Some(2), None],
    );
    let report = report(
        vec![alice, bob, SeatDecisions::default()],
        vec![None, Some(ForfeitReason::Strikes), None],
    );
    metrics.match_ended(&info, &report);
    let text = metrics.render();
    let get = |series: &str| value(&text, series).unwrap_or_else(|| panic!("{series}\n{text}"));
    assert_eq!(
        get(r#"knobel_matches_ended_total{game="schocken",status="aborted"}"#),
        1.0
    );
    assert_eq!(
        get(r#"knobel_decisions_total{bot="alice",game="schocken",outcome="ok"}"#),
        2.0
    );
    assert_eq!(
        get(r#"knobel_decisions_total{bot="alice",game="schocken",outcome="late"}"#),
        1.0
    );
    assert_eq!(
        get(r#"knobel_strikes_total{bot="alice",game="schocken",reason="timeout"}"#),
        1.0
    );
    assert_eq!(
        get(r#"knobel_decision_duration_seconds_count{bot="alice",game="schocken"}"#),
        4.0
    );
    // The timeout is in the histogram, past the deadline.
    assert_eq!(
        get(r#"knobel_decision_duration_seconds_bucket{bot="alice",game="schocken",le="2"}"#),
        3.0
    );
    assert_eq!(
        get(r#"knobel_strikes_total{bot="bob",game="schocken",reason="illegal_action"}"#),
        2.0
    );
    assert_eq!(
        get(r#"knobel_strikes_total{bot="bob",game="schocken",reason="malformed"}"#),
        1.0
    );
    assert_eq!(
        get(r#"knobel_forfeits_total{bot="bob",game="schocken",reason="strikes"}"#),
        1.0
    );
    assert!(!text.contains("builtin-heuristic"), "{text}");
    assert!(!text.contains("m1"), "never a match id:\n{text}");
}

#[test]
fn bots_beyond_the_cap_share_one_label() {
    let metrics = Metrics::new(TimeControl::default());
    for i in 0..MAX_BOT_LABELS {
        metrics.bot_registered(&format!("bot-{i}"));
    }
    let late = metrics.stream_opened("latecomer");
    let first = metrics.stream_opened("bot-0");
    let text = metrics.render();
    assert_eq!(
        value(&text, r#"knobel_play_streams{bot="(other)"}"#),
        Some(1.0)
    );
    assert_eq!(
        value(&text, r#"knobel_play_streams{bot="bot-0"}"#),
        Some(1.0)
    );
    assert!(!text.contains("latecomer"));
    drop((late, first));
    let text = metrics.render();
    assert_eq!(
        value(&text, r#"knobel_play_streams{bot="(other)"}"#),
        Some(0.0)
    );
    assert_eq!(
        value(&text, r#"knobel_play_streams{bot="bot-0"}"#),
        Some(0.0)
    );
}

#[test]
fn disabled_metrics_count_nothing() {
    let metrics = Metrics::disabled();
    metrics.bot_registered("alice");
    metrics.match_started(knobel_engine::Game::Schocken);
    let _stream = metrics.stream_opened("alice");
    metrics.failed(crate::store::StoreOperation::Finish);
    assert!(!metrics.render().contains("alice"));
    assert_eq!(
        value(
            &metrics.render(),
            r#"knobel_matches_started_total{game="schocken"}"#
        ),
        Some(0.0)
    );
    assert!(metrics.leagues().is_none());
}

/// `metrics` served on a fresh port of 127.0.0.1, as `knobel serve` serves them.
async fn served(metrics: &Metrics) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        metrics
            .clone()
            .serve(listener, std::future::pending::<()>()),
    );
    addr
}

/// Sends `GET /metrics` on `stream` (closing after the answer) and reads the answer: its
/// status (`None` if the connection was closed or reset without one) and body.
async fn get_metrics(mut stream: tokio::net::TcpStream) -> Option<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let request = b"GET /metrics HTTP/1.1\r\nHost: knobel\r\nConnection: close\r\n\r\n";
    stream.write_all(request).await.ok()?;
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut answer))
        .await
        .expect("an answer or a close within 60 s")
        .ok()?;
    let answer = String::from_utf8(answer).ok()?;
    let status = answer.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()?;
    let (_, body) = answer.split_once("\r\n\r\n")?;
    Some((status, body.to_owned()))
}

/// Opens `n` connections to `addr` one after the other (all open at once).
async fn connections(addr: std::net::SocketAddr, n: usize) -> Vec<tokio::net::TcpStream> {
    let mut open = Vec::new();
    for _ in 0..n {
        open.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    open
}

#[test]
fn refused_late_results_are_counted() {
    let metrics = Metrics::default();
    let series = "knobel_stale_results_refused_total";
    assert_eq!(value(&metrics.render(), series), Some(0.0));
    metrics.stale_result_refused();
    metrics.stale_result_refused();
    assert_eq!(value(&metrics.render(), series), Some(2.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_scrapers_at_once_from_one_address_are_all_answered() {
    let metrics = Metrics::default();
    let addr = served(&metrics).await;
    // All 40 connections are open before any asks.
    let scrapers = connections(addr, 40).await;
    let answers = futures_util::future::join_all(scrapers.into_iter().map(get_metrics)).await;
    for (i, answer) in answers.into_iter().enumerate() {
        let (status, body) = answer.unwrap_or_else(|| panic!("scraper {i}: no answer"));
        assert_eq!(status, 200, "scraper {i}");
        assert!(body.contains("knobel_build_info"), "scraper {i}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_port_holds_its_bound_per_address_and_no_more() {
    let (_, per_peer) = crate::net::METRICS_MAX_CONNECTIONS;
    let metrics = Metrics::default();
    let addr = served(&metrics).await;
    let held = connections(addr, per_peer).await;
    // One more from the same address is closed at once, without an answer.
    let over = tokio::net::TcpStream::connect(addr).await.unwrap();
    assert_eq!(get_metrics(over).await, None, "over the bound");
    // Those within it are answered.
    let answers = futures_util::future::join_all(held.into_iter().map(get_metrics)).await;
    let answered = answers
        .iter()
        .filter(|a| a.as_ref().is_some_and(|(status, _)| *status == 200))
        .count();
    assert_eq!(answered, per_peer);
}

#[tokio::test]
async fn scrapes_within_the_reuse_time_get_the_same_rendering() {
    let metrics = Metrics::reusing_scrapes_for(Duration::from_secs(3600), 0);
    let started = r#"knobel_matches_started_total{game="schocken"}"#;
    let text = |bytes: Bytes| String::from_utf8(bytes.to_vec()).unwrap();
    let first = metrics.scrape_shared().await;
    assert_eq!(value(&text(first.clone()), started), Some(0.0));
    metrics.match_started(Game::Schocken);
    // Within the hour: the same text, not rendered again.
    let again = metrics.scrape_shared().await;
    assert_eq!(again, first);
    assert_eq!(metrics.renders(), 1);
    // Many scrapers at once: one rendering for them all.
    let addr = served(&metrics).await;
    let scrapers = connections(addr, 40).await;
    let answers = futures_util::future::join_all(scrapers.into_iter().map(get_metrics)).await;
    assert!(
        answers
            .iter()
            .all(|a| a.as_ref().is_some_and(|(s, _)| *s == 200))
    );
    assert_eq!(metrics.renders(), 1);
    // Without reuse, every scrape renders what is now.
    let live = Metrics::reusing_scrapes_for(Duration::ZERO, 0);
    live.match_started(Game::Schocken);
    assert_eq!(value(&text(live.scrape_shared().await), started), Some(1.0));
    live.match_started(Game::Schocken);
    assert_eq!(value(&text(live.scrape_shared().await), started), Some(2.0));
    assert_eq!(live.renders(), 2);
    // A rendering that took long is reused for that many times as long (here: forever).
    let slow = Metrics::reusing_scrapes_for(Duration::ZERO, u32::MAX);
    let first = slow.scrape_shared().await;
    slow.match_started(Game::Schocken);
    assert_eq!(slow.scrape_shared().await, first);
    assert_eq!(slow.renders(), 1);
}
