//! Full matches of each game between bots running as separate processes: the Rust
//! reference bots, and the Python example bot on real grpcio against them.

use std::process::Stdio;
use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, finish, python_with_stubs, workspace};
use knobel_proto::v1 as pb;
use tokio::process::Command;

const GAMES: [&str; 3] = ["schocken", "sjokken", "zokken"];

/// Checks a bot's `match <id> <game> place <p>/<n> ...` lines: `count` finished matches of
/// `game`.
fn check_lines(lines: &[String], game: &str, count: usize) {
    assert_eq!(lines.len(), count, "{lines:?}");
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            (words[0], words[2], words[3]),
            ("match", game, "place"),
            "{line}"
        );
        let (place, seats) = words[4].split_once('/').unwrap();
        let (place, seats): (u32, u32) = (place.parse().unwrap(), seats.parse().unwrap());
        assert!((1..=seats).contains(&place) && seats == 4, "{line}");
        assert!(!line.contains("aborted"), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_bots_play_full_matches_of_every_game() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let mut tokens = Vec::new();
    for i in 0..4 {
        tokens.push(arena.add_bot(&format!("rust-{i}")).await);
    }
    for game in GAMES {
        let bots: Vec<_> = tokens
            .iter()
            .enumerate()
            .map(|(i, token)| {
                let strategy = ["heuristic", "random", "timid", "heuristic"][i];
                arena.bot(
                    token,
                    &["--games", game, "--strategy", strategy, "--matches", "1"],
                )
            })
            .collect();
        for bot in bots {
            let (status, lines) = finish(bot, Duration::from_secs(120)).await;
            assert!(status.success(), "{lines:?}");
            check_lines(&lines, game, 1);
        }
    }
    let matches = arena.matches().await;
    assert_eq!(matches.len(), 3);
    assert!(
        matches
            .iter()
            .all(|m| m.status == pb::MatchStatus::Finished as i32)
    );

    // The metrics endpoint counts them, labelled by game only.
    let metrics = knobel_e2e::scrape(&arena.metrics_url).await;
    for game in GAMES {
        let line = format!("knobel_matches_ended_total{{game=\"{game}\",status=\"finished\"}} 1");
        assert!(metrics.contains(&line), "no {line:?} in:\n{metrics}");
    }
    assert!(metrics.contains("knobel_decision_duration_seconds_bucket"));
    assert!(!metrics.contains("match_id"));
    assert!(arena.stop().await.success());
}

#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python: needs Python 3 with grpcio"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_bot_plays_every_game_against_the_rust_bots() {
    let python = python_with_stubs().await;
    let bot_dir = workspace().join("bots/python");
    let arena = Arena::start(ArenaOptions::default()).await;
    let py_token = arena.add_bot("python").await;
    let mut tokens = Vec::new();
    for i in 0..3 {
        tokens.push(arena.add_bot(&format!("rust-{i}")).await);
    }
    let server = arena.url.trim_start_matches("http://").to_owned();
    for game in GAMES {
        let py = Command::new(&python)
            .arg(bot_dir.join("knobel_bot.py"))
            .args([
                "--server", &server, "--token", &py_token, "--name", "python",
            ])
            .args(["--games", game, "--matches", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the Python bot");
        let rust: Vec<_> = tokens
            .iter()
            .map(|token| {
                arena.bot(
                    token,
                    &["--games", game, "--strategy", "heuristic", "--matches", "1"],
                )
            })
            .collect();
        let (status, lines) = finish(py, Duration::from_secs(180)).await;
        assert!(status.success(), "the Python bot failed: {lines:?}");
        check_lines(&lines, game, 1);
        for bot in rust {
            let (status, lines) = finish(bot, Duration::from_secs(120)).await;
            assert!(status.success(), "{lines:?}");
            check_lines(&lines, game, 1);
        }
    }
    // Every match had the Python bot in a seat, and finished.
    let matches = arena.matches().await;
    assert_eq!(matches.len(), 3);
    for m in &matches {
        assert_eq!(m.status, pb::MatchStatus::Finished as i32);
        assert!(m.seat_names.iter().any(|n| n == "python"), "{m:?}");
    }
    assert!(arena.stop().await.success());
}
