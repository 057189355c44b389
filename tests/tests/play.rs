//! `knobel play`: a bot plays built-in players on an arena of the command's own, with
//! nothing registered by hand: a stdio bot in Python and one in Perl (`--exec`) in every
//! game, and the grpcio example bot (`--connect`).

use std::process::Stdio;
use std::time::Duration;

use knobel_e2e::{binaries, python_with_stubs, workspace};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const PRESETS: [&str; 3] = ["schocken", "sjokken", "zokken"];

/// Runs `knobel play ARGS` to its end; its stdout.
async fn play(args: &[&str]) -> String {
    let output = tokio::time::timeout(
        Duration::from_secs(300),
        Command::new(binaries().join("knobel"))
            .current_dir(workspace())
            .arg("play")
            .args(args)
            .env("RUST_LOG", "warn")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("knobel play did not finish within 300 s")
    .expect("cannot run knobel play");
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
    assert!(
        output.status.success(),
        "knobel play {args:?} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Checks `knobel play`'s report: `count` finished matches of `preset` against expert and
/// heuristic, no refusal, and the first one told throw by throw.
fn check_report(out: &str, preset: &str, count: usize) {
    let heading = format!("my-bot against expert, heuristic: {count} {preset} matches");
    assert!(out.contains(&heading), "no {heading:?} in:\n{out}");
    let results: Vec<&str> = out
        .lines()
        .filter(|line| line.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .filter(|line| line.contains(" place "))
        .collect();
    assert_eq!(results.len(), count, "{out}");
    for line in &results {
        let place = line.split(" place ").nth(1).expect("a place");
        assert!(
            ["1/3", "2/3", "3/3"].iter().any(|p| place.starts_with(p)),
            "{line}"
        );
        assert!(
            !line.contains("strike") && !line.contains("forfeited"),
            "{line}"
        );
    }
    assert!(!out.contains("refused"), "{out}");
    assert!(
        out.contains("match 1 ("),
        "no account of match 1 in:\n{out}"
    );
    assert!(
        out.contains(
            "Seats: my-bot (seat 0), builtin-expert-1 (seat 1), builtin-heuristic-2 (seat 2)"
        ),
        "{out}"
    );
}

/// `knobel play --exec PROGRAM` in every game against expert and heuristic, two matches each.
async fn every_game_against_expert_and_heuristic(program: &[&str]) {
    for preset in PRESETS {
        let mut args = vec!["--preset", preset, "--against", "expert,heuristic"];
        args.extend(["--matches", "2", "--zokken-rounds", "10", "--exec"]);
        args.extend(program);
        check_report(&play(&args).await, preset, 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_stdio_bot_plays_every_game_against_expert_and_heuristic() {
    every_game_against_expert_and_heuristic(&["python3", "bots/stdio/bot.py"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_perl_stdio_bot_plays_every_game_against_expert_and_heuristic() {
    every_game_against_expert_and_heuristic(&["perl", "bots/stdio/bot.pl"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_breaks_the_rules_sees_its_strikes_with_the_arenas_messages() {
    // Folds in Schocken: illegal every time.
    let fold = r#"while read line; do case "$line" in *decision_request*) id=${line#*\"request_id\":}; id=${id%%,*}; echo "{\"request_id\": $id, \"action\": {\"fold\": {}}}";; esac; done"#;
    let out = play(&["--matches", "1", "--exec", "sh", "-c", fold]).await;
    assert!(out.contains("3 strikes, forfeited (strikes)"), "{out}");
    assert!(
        out.contains(
            "refused (ERROR_CODE_ILLEGAL_ACTION): illegal action fold: cannot fold now: legal actions are stop, reroll"
        ),
        "{out}"
    );
}

#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python: needs Python 3 with grpcio"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_grpcio_example_bot_plays_through_connect() {
    let python = python_with_stubs().await;
    let mut play = Command::new(binaries().join("knobel"))
        .args([
            "play",
            "--connect",
            "--preset",
            "zokken",
            "--zokken-rounds",
            "10",
        ])
        .args(["--against", "expert,heuristic", "--matches", "2"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start knobel play");
    let mut lines = BufReader::new(play.stdout.take().expect("piped")).lines();
    let (mut addr, mut token) = (None, None);
    while addr.is_none() || token.is_none() {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("no address and token within 60 s")
            .expect("read knobel play")
            .expect("knobel play ended before printing its address and token");
        if let Some(a) = line.strip_prefix("knobel arena listening on ") {
            addr = Some(a.to_owned());
        } else if let Some(t) = line.strip_prefix("bot token: ") {
            token = Some(t.to_owned());
        }
    }
    let (addr, token) = (addr.expect("address"), token.expect("token"));
    let mut bot = Command::new(&python)
        .arg(workspace().join("bots/python/knobel_bot.py"))
        .args(["--server", &addr, "--token", &token, "--name", "my-bot"])
        .args(["--games", "zokken", "--matches", "2"])
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the Python bot");
    let mut out = String::new();
    let read = async {
        while let Ok(Some(line)) = lines.next_line().await {
            out.push_str(&line);
            out.push('\n');
        }
    };
    tokio::time::timeout(Duration::from_secs(300), read)
        .await
        .expect("knobel play did not end within 300 s");
    let status = play.wait().await.expect("wait for knobel play");
    assert!(status.success(), "{out}");
    check_report(&out, "zokken", 2);
    let _ = tokio::time::timeout(Duration::from_secs(30), bot.wait()).await;
}
