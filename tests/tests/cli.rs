//! The `knobel` command line against a real arena process: `match show` for any stored
//! match, logs without colour codes in files.

use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, binaries, finish};

/// Runs `knobel ARGS`; its exit status, stdout and stderr.
async fn knobel(args: &[&str]) -> (bool, String, String) {
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(binaries().join("knobel"))
            .args(args)
            .env_remove("KNOBEL_ADMIN_TOKEN")
            .env_remove("KNOBEL_ARENA")
            .output(),
    )
    .await
    .expect("knobel did not finish within 120 s")
    .expect("cannot run knobel");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_show_tells_a_match_older_than_the_newest_hundred() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("arena.log");
    let arena = Arena::start_with_env(
        ArenaOptions {
            log_file: Some(log.clone()),
            args: ["--practice", "--practice-wait-ms", "0", "--seats", "2"]
                .into_iter()
                .chain(["--zokken-rounds", "1"])
                .map(String::from)
                .collect(),
        },
        &[("RUST_LOG", "info")],
    )
    .await;
    let token = arena.add_bot("veteran").await;
    let bot = arena.bot(&token, &["--games", "zokken", "--matches", "103"]);
    let (status, lines) = finish(bot, Duration::from_secs(600)).await;
    assert!(status.success(), "{lines:?}");
    let matches = arena.matches().await;
    assert!(matches.len() > 100, "{} matches", matches.len());
    let oldest = &matches.last().expect("a match").match_id;
    let (ok, out, err) = knobel(&["match", "show", oldest, "--arena", &arena.url]).await;
    assert!(ok, "knobel match show {oldest} failed: {err}");
    assert!(
        out.contains("Seats: veteran (seat 0), builtin-heuristic-1 (seat 1)"),
        "{out}"
    );

    // The arena's log went to a file: no colour codes in it.
    let text = std::fs::read_to_string(&log).expect("the arena's log");
    assert!(text.contains("match started"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "colour codes in a log file: {:?}",
        text.lines().next()
    );
    assert!(arena.stop().await.success());
}
