//! The demo's closing instructions, run as printed: serve its store, register a bot, run
//! the reference bot, until the bot has played a match (and the printed `match show` and
//! `league standings` work on the served store).

use std::process::Stdio;
use std::time::Duration;

use knobel_e2e::{binaries, free_port};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{ChildStdout, Command};

/// The printed commands start with these; the binaries stand for them.
const KNOBEL: &str = "cargo run --release --";
const KNOBEL_BOT: &str = "cargo run --release -p knobel-bots --bin knobel-bot --";

/// The command a printed line runs (its comment cut off), with the ports of this test in
/// the environment (the printed commands use the default ports, which a shared machine may
/// have taken).
fn printed_command(line: &str, port: u16, token: &str) -> Command {
    let line = line.split(" # ").next().unwrap_or(line).trim();
    let (binary, rest) = if let Some(rest) = line.strip_prefix(KNOBEL_BOT) {
        ("knobel-bot", rest)
    } else {
        let rest = line.strip_prefix(KNOBEL).expect("a cargo run line");
        ("knobel", rest)
    };
    let mut command = Command::new(binaries().join(binary));
    command
        .args(rest.split_whitespace().map(|w| w.replace("<token>", token)))
        .env("KNOBEL_LISTEN", format!("127.0.0.1:{port}"))
        .env("KNOBEL_METRICS_LISTEN", "127.0.0.1:0")
        .env("KNOBEL_WEB_LISTEN", "127.0.0.1:0")
        .env("KNOBEL_SERVER", format!("http://127.0.0.1:{port}"))
        .env("KNOBEL_ARENA", format!("http://127.0.0.1:{port}"))
        .env_remove("KNOBEL_ADMIN_TOKEN")
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// The next line that starts with `prefix`, within `within`.
async fn line_starting(
    lines: &mut Lines<BufReader<ChildStdout>>,
    prefix: &str,
    within: u64,
) -> String {
    tokio::time::timeout(Duration::from_secs(within), async {
        loop {
            let line = lines
                .next_line()
                .await
                .expect("read")
                .unwrap_or_else(|| panic!("ended before a line starting with {prefix:?}"));
            if line.starts_with(prefix) {
                return line;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no line starting with {prefix:?} within {within} s"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demos_printed_instructions_get_a_bot_playing() {
    let dir = tempfile::tempdir().unwrap();
    let demo = tokio::time::timeout(
        Duration::from_secs(900),
        Command::new(binaries().join("knobel"))
            .current_dir(dir.path())
            .args(["demo", "--repetitions", "1", "--zokken-rounds", "2"])
            .env("RUST_LOG", "warn")
            .output(),
    )
    .await
    .expect("the demo did not finish within 900 s")
    .expect("run the demo");
    let out = String::from_utf8(demo.stdout).expect("utf-8");
    assert!(demo.status.success(), "{out}");
    // Every bot's strategy is printed with its name.
    assert!(
        out.contains("maven: expert, ace: heuristic, bold: heuristic-80"),
        "{out}"
    );
    let printed: Vec<&str> = out
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("cargo run"))
        .collect();
    let find = |what: &str| {
        *printed
            .iter()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no printed command with {what:?} in:\n{out}"))
    };

    let port = free_port();
    let mut serve = printed_command(find("-- serve"), port, "")
        .current_dir(dir.path())
        .spawn()
        .expect("serve");
    let mut serve_out = BufReader::new(serve.stdout.take().unwrap()).lines();
    line_starting(&mut serve_out, "knobel arena listening on", 60).await;

    for what in ["-- match show", "-- league standings"] {
        let output = printed_command(find(what), port, "")
            .current_dir(dir.path())
            .output()
            .await
            .expect("run a printed command");
        assert!(
            output.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    let added = printed_command(find("-- bot add"), port, "")
        .current_dir(dir.path())
        .output()
        .await
        .expect("bot add");
    let added_out = String::from_utf8(added.stdout).unwrap();
    assert!(added.status.success(), "{added_out}");
    let token = added_out
        .lines()
        .nth(1)
        .expect("the token line")
        .trim()
        .to_owned();

    let mut bot = printed_command(find("--bin knobel-bot"), port, &token)
        .current_dir(dir.path())
        .spawn()
        .expect("knobel-bot");
    let mut bot_out = BufReader::new(bot.stdout.take().unwrap()).lines();
    let result = line_starting(&mut bot_out, "match ", 120).await;
    assert!(result.contains(" place "), "{result}");
    let _ = bot.kill().await;
    let _ = serve.kill().await;
}
