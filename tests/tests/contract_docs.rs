//! What the contract's documentation promises, checked against the programs: `knobel bot
//! add --help` states the name rule the code applies, and Hello.name is shown on the
//! arena's log lines of the stream (as `client_name`).

use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, binaries};

/// `text` without ANSI colour codes, its whitespace runs made single spaces.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ ... letter
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn bot_add_help_states_the_rule_the_code_applies() {
    let output = std::process::Command::new(binaries().join("knobel"))
        .args(["bot", "add", "--help"])
        .output()
        .expect("run knobel bot add --help");
    assert!(output.status.success());
    let help = plain(&String::from_utf8(output.stdout).unwrap());
    let rule = plain(&knobel_proto::names::rule());
    assert!(help.contains(&rule), "{help}\ndoes not state\n{rule}");
    // The numbers it states are the ones check_name applies.
    let longest = "x".repeat(knobel_proto::names::MAX_NAME_CHARS);
    assert!(knobel_proto::names::check_name(&longest).is_ok());
    assert!(knobel_proto::names::check_name(&format!("{longest}x")).is_err());
    assert!(help.contains(&format!(
        "1..={} characters and at most {} bytes",
        knobel_proto::names::MAX_NAME_CHARS,
        knobel_proto::names::MAX_NAME_BYTES
    )));
    assert!(knobel_proto::names::check_name("builtin-x").is_err());
    assert!(help.contains("\"builtin-\" are reserved"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello_name_is_on_the_streams_log_lines() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("arena.log");
    let mut arena = Arena::start_with_env(
        ArenaOptions {
            log_file: Some(log.clone()),
            args: vec!["--practice".into(), "--practice-wait-ms".into(), "0".into()],
        },
        &[("RUST_LOG", "info")],
    )
    .await;
    let token = arena.add_bot("registered-name").await;
    let bot = arena.bot(
        &token,
        &[
            "--games",
            "sjokken",
            "--matches",
            "1",
            "--name",
            "client-ö-7",
        ],
    );
    let (status, _) = knobel_e2e::finish(bot, Duration::from_secs(60)).await;
    assert!(status.success());
    assert!(arena.terminate().await.success());
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<String> = text.lines().map(plain).collect();
    let connected = lines
        .iter()
        .find(|line| line.contains("bot connected"))
        .expect("a bot connected line");
    assert!(
        connected.contains("client_name=client-ö-7") && connected.contains("registered-name"),
        "{connected}"
    );
    let ended = lines
        .iter()
        .find(|line| line.contains("stream played the matches it asked for"))
        .expect("the stream's last line");
    assert!(ended.contains("client_name=client-ö-7"), "{ended}");
}
