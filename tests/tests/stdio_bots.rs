//! Bots without gRPC, through `knobel-bot --exec` (docs/stdio-bots.md), and the JavaScript
//! gRPC example, against a real arena process in practice mode: the starter kits in
//! `bots/stdio/` and `bots/js/` play every game, and the bridge's failure cases (a line
//! that is not JSON, an unknown action, a line over the limit, a program that exits in a
//! match, one that never answers) give their documented outcome while the arena plays on;
//! and every reference bot moves on to the next address of its list.
//!
//! Python 3 and Node 20 must be there: a missing one fails the test (build with
//! `KNOBEL_TEST_WITHOUT=python` or `node` to mark such tests ignored; refused in CI).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, finish, workspace};
use knobel_proto::v1 as pb;
use tokio::process::Command;

const GAMES: [&str; 3] = ["schocken", "sjokken", "zokken"];

/// An arena in practice mode: a lone bot plays with built-in players at once.
async fn practice_arena(extra: &[&str]) -> Arena {
    let mut args: Vec<String> = [
        "--practice",
        "--practice-wait-ms",
        "20",
        "--seats",
        "3",
        "--zokken-rounds",
        "5",
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|a| a.to_string()));
    Arena::start(ArenaOptions {
        args,
        log_file: None,
    })
    .await
}

/// A program that must be installed: fails the test, saying how to mark it ignored instead.
fn require(program: &str, version_arg: &str, needed_by: &str, without: &str) -> String {
    let runs = std::process::Command::new(program)
        .arg(version_arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        runs,
        "this test needs {program} ({needed_by}) on PATH: install it, or build the tests with \
         KNOBEL_TEST_WITHOUT={without} to mark it ignored (refused in CI)"
    );
    program.to_owned()
}

fn python() -> String {
    require("python3", "--version", "Python 3", "python")
}

fn node() -> String {
    let node = require("node", "--version", "Node 20 or newer", "node");
    let version = std::process::Command::new(&node)
        .arg("--version")
        .output()
        .expect("node --version");
    let text = String::from_utf8_lossy(&version.stdout);
    let major: u32 = text
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(
        major >= 20,
        "node is {text}: the examples need Node 20 or newer"
    );
    node
}

/// One `knobel-bot` summary line: `match <id> <game> place <p>/<n> requests <r> strikes <s>
/// forfeited <f> errors [<codes>]`.
#[derive(Debug)]
struct Summary {
    game: String,
    finished: bool,
    strikes: u32,
    forfeited: bool,
    errors: String,
}

fn summary(line: &str) -> Summary {
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!((words[0], words[3]), ("match", "place"), "{line}");
    let after = |key: &str| {
        let at = words.iter().position(|w| *w == key).expect(key);
        words[at + 1].to_owned()
    };
    Summary {
        game: words[2].to_owned(),
        finished: !line.contains(" aborted"),
        strikes: after("strikes").parse().expect("strikes"),
        forfeited: after("forfeited") == "true",
        errors: after("errors"),
    }
}

/// Runs `knobel-bot --exec PROGRAM...` for `matches` matches of `game`; its summary lines.
async fn exec_bot(
    arena: &Arena,
    token: &str,
    game: &str,
    matches: u32,
    program: &[&str],
) -> Vec<Summary> {
    let matches = matches.to_string();
    let mut args = vec!["--games", game, "--matches", &matches, "--exec"];
    args.extend_from_slice(program);
    let (status, lines) = finish(arena.bot(token, &args), Duration::from_secs(180)).await;
    assert!(
        status.success(),
        "knobel-bot --exec {program:?} failed: {lines:?}"
    );
    lines.iter().map(|line| summary(line)).collect()
}

/// A clean match of `game`: finished, no strike, no error.
fn assert_clean(summary: &Summary, game: &str) {
    assert_eq!(summary.game, game, "{summary:?}");
    assert!(
        summary.finished && summary.strikes == 0 && !summary.forfeited,
        "{summary:?}"
    );
    assert_eq!(summary.errors, "[]", "{summary:?}");
}

fn kit(path: &str) -> String {
    workspace().join(path).display().to_string()
}

/// A starter kit, run as `interpreter path` through the bridge, plays one clean match of
/// every game.
async fn starter_kit_plays_every_game(interpreter: &str, path: &str) {
    let arena = practice_arena(&[]).await;
    let token = arena.add_bot("starter").await;
    let bot = kit(path);
    for game in GAMES {
        let summaries = exec_bot(&arena, &token, game, 1, &[interpreter, &bot]).await;
        assert_eq!(summaries.len(), 1);
        assert_clean(&summaries[0], game);
    }
    assert!(arena.stop().await.success());
}

#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python: needs Python 3"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_starter_kit_plays_every_game() {
    starter_kit_plays_every_game(&python(), "bots/stdio/bot.py").await;
}

#[cfg_attr(
    knobel_without_node,
    ignore = "built with KNOBEL_TEST_WITHOUT=node: needs Node 20"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_starter_kit_plays_every_game() {
    starter_kit_plays_every_game(&node(), "bots/stdio/bot.js").await;
}

#[cfg_attr(
    knobel_without_node,
    ignore = "built with KNOBEL_TEST_WITHOUT=node: needs Node 20 and npm"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_grpc_example_plays_every_game() {
    let node = node();
    let dir = javascript_bot_dir().await;
    let arena = practice_arena(&[]).await;
    let token = arena.add_bot("grpc-js").await;
    let server = arena.url.trim_start_matches("http://").to_owned();
    for game in GAMES {
        let bot = Command::new(&node)
            .arg(dir.join("knobel_bot.js"))
            .args(["--server", &server, "--token", &token])
            .args(["--games", game, "--matches", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the JavaScript bot");
        let (status, lines) = finish(bot, Duration::from_secs(180)).await;
        assert!(status.success(), "the JavaScript bot failed: {lines:?}");
        assert_eq!(lines.len(), 1, "{lines:?}");
        let words: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!((words[0], words[2], words[3]), ("match", game, "place"));
    }
    // Every match finished, the JavaScript bot without a strike.
    let matches = arena.matches().await;
    assert_eq!(matches.len(), 3);
    for m in &matches {
        assert_eq!(m.status, pb::MatchStatus::Finished as i32, "{m:?}");
        let seat = m
            .seat_names
            .iter()
            .position(|n| n == "grpc-js")
            .expect("seated");
        assert_eq!(
            m.outcome.as_ref().expect("outcome").strikes[seat],
            0,
            "{m:?}"
        );
    }
    assert!(arena.stop().await.success());
}

/// `bots/js`, its packages installed.
async fn javascript_bot_dir() -> PathBuf {
    let dir = workspace().join("bots/js");
    if !dir.join("node_modules/@grpc/grpc-js").exists() {
        // `.ci/run` installs them first; a fresh clone gets them from the lock file here.
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .await
            .expect("this test needs npm to install bots/js (npm ci)");
        assert!(status.success(), "npm ci in bots/js failed");
    }
    dir
}

/// Each reference bot given two addresses, the first of them dead (a port nothing listens
/// on: the arena replica that was killed), connects to the first, fails, and moves on to
/// the second, where it plays its match.
#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python: needs Python 3 with grpcio"
)]
#[cfg_attr(
    knobel_without_node,
    ignore = "built with KNOBEL_TEST_WITHOUT=node: needs Node 20 and npm"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_reference_bot_moves_on_to_the_next_address_of_its_list() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .to_string();
    let (python, node, js) = (
        knobel_e2e::python_with_stubs().await,
        node(),
        javascript_bot_dir().await,
    );
    let arena = practice_arena(&[]).await;
    let list = format!("{dead},{}", arena.url.trim_start_matches("http://"));
    let mut bots = Vec::new();
    // Each bot: its program, the arguments before the list, and the list's flag.
    let programs: [(&str, PathBuf, Vec<PathBuf>, &str); 3] = [
        (
            "rust",
            knobel_e2e::binaries().join("knobel-bot"),
            vec![],
            "--arena",
        ),
        (
            "python",
            python,
            vec![workspace().join("bots/python/knobel_bot.py")],
            "--server",
        ),
        (
            "javascript",
            node.into(),
            vec![js.join("knobel_bot.js")],
            "--server",
        ),
    ];
    for (name, program, script, flag) in programs {
        let token = arena.add_bot(name).await;
        let mut command = Command::new(program);
        command
            .args(script)
            .args([flag, &list])
            .env("RUST_LOG", "warn");
        command
            .args(["--token", &token, "--name", name])
            .args(["--games", "zokken", "--matches", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("start a reference bot");
        let stderr = child.stderr.take().expect("piped stderr");
        let errors = tokio::spawn(async move {
            let mut text = String::new();
            let _ = tokio::io::AsyncReadExt::read_to_string(
                &mut tokio::io::BufReader::new(stderr),
                &mut text,
            )
            .await;
            text
        });
        bots.push((name, child, errors));
    }
    for (name, child, errors) in bots {
        let (status, lines) = finish(child, Duration::from_secs(180)).await;
        let errors = errors.await.expect("stderr");
        assert!(
            status.success(),
            "the {name} bot failed: {lines:?}\n{errors}"
        );
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("match ")).count(),
            1,
            "{name}: {lines:?}"
        );
        assert!(
            errors.contains(&dead),
            "the {name} bot did not try {dead} first:\n{errors}"
        );
    }
    // Each played where it got to (alone with built-in players, or with the others).
    let matches = arena.matches().await;
    assert!(
        matches
            .iter()
            .all(|m| m.status == pb::MatchStatus::Finished as i32)
    );
    for name in ["rust", "python", "javascript"] {
        let seated = |m: &&pb::MatchSummary| m.seat_names.iter().any(|n| n == name);
        assert_eq!(
            matches.iter().filter(seated).count(),
            1,
            "{name}: {matches:?}"
        );
    }
    assert!(arena.stop().await.success());
}

/// The misbehaving program of `tests/stdio/misbehaving_bot.py` in `mode`, with its state
/// folder; the command line for `--exec`.
fn misbehaving(python: &str, mode: &str, dir: &Path) -> Vec<String> {
    vec![
        python.to_owned(),
        kit("tests/stdio/misbehaving_bot.py"),
        mode.to_owned(),
        dir.display().to_string(),
    ]
}

/// The JSON lines run `run` of the misbehaving program received.
fn received(dir: &Path, run: u32) -> Vec<serde_json::Value> {
    let path: PathBuf = dir.join(format!("received-{run}.jsonl"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).expect("the bridge writes JSON lines"))
        .collect()
}

fn starts(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("starts"))
        .expect("starts")
        .trim()
        .parse()
        .expect("a count")
}

/// A bad line: an error line naming the problem and the request it counts against, then
/// the arena's MALFORMED strike for that request; the match goes on with the default
/// action, and the next match plays without a strike.
async fn bad_line(mode: &str, expected: &str) {
    let python = python();
    let arena = practice_arena(&[]).await;
    let token = arena.add_bot(mode).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let program = misbehaving(&python, mode, dir.path());
    let program: Vec<&str> = program.iter().map(String::as_str).collect();
    let summaries = exec_bot(&arena, &token, "zokken", 2, &program).await;
    assert_eq!(summaries.len(), 2, "{summaries:?}");
    let first = &summaries[0];
    assert!(
        first.finished && first.strikes == 1 && !first.forfeited,
        "{first:?}"
    );
    assert_eq!(first.errors, "[ERROR_CODE_MALFORMED]", "{first:?}");
    assert_clean(&summaries[1], "zokken");
    assert_eq!(
        starts(dir.path()),
        1,
        "a bad line does not restart the program"
    );

    let lines = received(dir.path(), 1);
    let request_id = lines
        .iter()
        .find_map(|m| m["decision_request"]["request_id"].as_u64())
        .expect("a decision request");
    let error_line = lines
        .iter()
        .position(|m| m.get("line_error").is_some())
        .expect("a line_error line");
    let line_error = &lines[error_line]["line_error"];
    assert_eq!(line_error["request_id"], request_id, "{line_error}");
    let message = line_error["message"].as_str().expect("a message");
    assert!(
        message.contains(expected),
        "{message:?} does not say {expected:?}"
    );
    let strike = lines[error_line..]
        .iter()
        .find_map(|m| m.get("error"))
        .expect("the arena's error event");
    assert_eq!(strike["code"], "ERROR_CODE_MALFORMED", "{strike}");
    assert_eq!(strike["request_id"], request_id, "{strike}");
    assert_eq!(strike["strikes"], 1, "{strike}");
    assert!(strike["applied"].is_object(), "{strike}");
    assert!(arena.stop().await.success());
}

#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_is_not_json_is_a_malformed_answer() {
    bad_line("not-json", "not a knobel.v1.Decision: expected ident").await;
}

#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_action_is_a_malformed_answer() {
    bad_line("unknown-action", "jump").await;
}

#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_over_long_line_is_a_malformed_answer() {
    bad_line(
        "too-long",
        "a line of 100000 bytes is over the limit of 65536 bytes",
    )
    .await;
}

#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_without_an_action_is_a_malformed_answer() {
    bad_line("no-action", "the decision has no action").await;
}

/// The seat of bot `name` in match `m`, and why it forfeited.
fn forfeit_of(m: &pb::MatchSummary, name: &str) -> i32 {
    let seat = m.seat_names.iter().position(|n| n == name).expect("seated");
    m.outcome.as_ref().expect("finished").forfeits[seat]
}

#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_exits_in_a_match_forfeits_it_and_plays_the_next_one() {
    let python = python();
    let arena = practice_arena(&[]).await;
    let token = arena.add_bot("exits").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let program = misbehaving(&python, "exit-mid-match", dir.path());
    let program: Vec<&str> = program.iter().map(String::as_str).collect();
    // The left match has no result for the bridge: the one line is the next match's.
    let summaries = exec_bot(&arena, &token, "zokken", 1, &program).await;
    assert_eq!(summaries.len(), 1, "{summaries:?}");
    assert_clean(&summaries[0], "zokken");
    assert_eq!(starts(dir.path()), 2, "restarted once");
    // The arena finished both: the first with the seat forfeited when the bridge left.
    let mut matches = arena.matches().await;
    matches.reverse();
    assert_eq!(matches.len(), 2, "{matches:?}");
    assert!(
        matches
            .iter()
            .all(|m| m.status == pb::MatchStatus::Finished as i32)
    );
    assert_eq!(
        forfeit_of(&matches[0], "exits"),
        pb::ForfeitReason::Disconnected as i32
    );
    assert_eq!(
        forfeit_of(&matches[1], "exits"),
        pb::ForfeitReason::None as i32
    );
    // The new run saw the next match only: nothing of the left match reached it.
    let match_ids = |run| {
        received(dir.path(), run)
            .iter()
            .filter_map(|m| m.pointer("/match_start/match_id").cloned())
            .collect::<Vec<_>>()
    };
    assert_eq!(match_ids(1), [serde_json::json!(matches[0].match_id)]);
    assert_eq!(match_ids(2), [serde_json::json!(matches[1].match_id)]);
    let left = serde_json::json!(matches[0].match_id).to_string();
    assert!(
        received(dir.path(), 2)
            .iter()
            .all(|m| !m.to_string().contains(&left)),
        "run 2 read a line of the match run 1 left"
    );
    assert!(arena.stop().await.success());
}

#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_keeps_exiting_is_restarted_with_backoff_and_its_stderr_is_logged() {
    let python = python();
    let arena = practice_arena(&[]).await;
    let token = arena.add_bot("crashes").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let program = misbehaving(&python, "crash-then-one-match", dir.path());
    // Two match results: run 6's (it exits after it), then run 7's.
    let mut args = vec!["--games", "zokken", "--matches", "2", "--exec"];
    args.extend(program.iter().map(String::as_str));
    // Its log at level info (the program's stderr is logged at info), read by the test.
    let bot = arena
        .bot_command(&token, &args)
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .expect("start knobel-bot");
    let output = tokio::time::timeout(Duration::from_secs(180), bot.wait_with_output())
        .await
        .expect("knobel-bot did not finish in time")
        .expect("knobel-bot");
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{log}");
    assert_eq!(starts(dir.path()), 7, "{log}");
    // The program's stderr is in the bot's log, one line per start, marked as the program's.
    for run in 1..=7 {
        let line = format!("misbehaving bot: run {run} starting");
        assert!(
            log.lines()
                .any(|l| l.contains(&line) && l.contains("program")),
            "{line} is not in the log: {log}"
        );
    }
    // The backoff waits half to all of a step of 200 ms, doubling: at least 0.1, 0.2, 0.4,
    // 0.8 and 1.6 s between the starts of the runs that exited at once (a gap also holds
    // the run's start-up and the bridge's connection). Run 6 played a whole match, which
    // starts the backoff over: run 7 follows its exit within 0.1 to 0.2 s and a start-up,
    // not after the 3.2 to 6.4 s that would have come next.
    let times = |file: &str| -> Vec<f64> {
        std::fs::read_to_string(dir.path().join(file))
            .expect(file)
            .lines()
            .map(|t| t.parse().expect("a time"))
            .collect()
    };
    let started = times("started");
    let gaps: Vec<f64> = started.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps.len(), 6, "{gaps:?}");
    for (gap, at_least) in gaps.iter().zip([0.1, 0.2, 0.4, 0.8, 1.6]) {
        assert!(gap >= &at_least, "{gaps:?}");
    }
    let after_exit = started[6] - times("exited")[0];
    assert!(
        (0.1..3.2).contains(&after_exit),
        "run 7 started {after_exit} s after run 6 exited: the backoff was not reset"
    );
    // Both match results are the played matches, clean.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summaries: Vec<Summary> = stdout.lines().map(summary).collect();
    assert_eq!(summaries.len(), 2, "{stdout}");
    for summary in &summaries {
        assert_clean(summary, "zokken");
    }
    assert!(arena.stop().await.success());
}

#[cfg_attr(
    knobel_without_python,
    ignore = "built with KNOBEL_TEST_WITHOUT=python"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_never_answers_times_out_and_is_restarted_after_the_match() {
    let python = python();
    // Three timeouts within about nine seconds (2 s each, the 3 s bank spent by the first);
    // the healthy run after the restart has that much for a decision too, on a busy machine
    // (a 1 s deadline without a bank timed the restarted Python program out once in CI).
    let arena = practice_arena(&["--decision-ms", "2000", "--time-bank-ms", "3000"]).await;
    let token = arena.add_bot("silent").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let program = misbehaving(&python, "never-answer", dir.path());
    let program: Vec<&str> = program.iter().map(String::as_str).collect();
    let summaries = exec_bot(&arena, &token, "zokken", 2, &program).await;
    assert_eq!(summaries.len(), 2, "{summaries:?}");
    let first = &summaries[0];
    assert!(
        first.finished && first.strikes == 3 && first.forfeited,
        "{first:?}"
    );
    assert_eq!(
        first.errors,
        "[ERROR_CODE_TIMEOUT,ERROR_CODE_TIMEOUT,ERROR_CODE_TIMEOUT]"
    );
    assert_clean(&summaries[1], "zokken");
    assert_eq!(starts(dir.path()), 2, "restarted between the matches");
    // The silent run saw its whole match, the result included; the new run the next one.
    assert!(
        received(dir.path(), 1)
            .iter()
            .any(|m| m.get("match_result").is_some())
    );
    assert!(
        received(dir.path(), 2)
            .iter()
            .any(|m| m.get("match_start").is_some())
    );
    assert!(arena.stop().await.success());
}
