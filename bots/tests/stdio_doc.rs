//! docs/stdio-bots.md tells the truth: every example line reads as the message it should be,
//! and every line to the program is exactly what the bridge writes for that message today.

use knobel_proto::{json, v1 as pb};

/// The fenced blocks of a Markdown text: (info string, lines).
fn blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) => current = Some((info.trim().to_owned(), Vec::new())),
            (Some(_), Some(_)) => blocks.push(current.take().expect("a block")),
            (Some((_, lines)), None) => lines.push(line.to_owned()),
            (None, None) => {}
        }
    }
    blocks
}

/// Checks one JSON text the program may read: an ArenaMessage, or the bridge's line_error.
fn check_to_program(text: &str, exact: bool) -> Option<pb::ArenaMessage> {
    let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
    if let Some(error) = value.get("line_error") {
        assert!(error["message"].is_string(), "{text}");
        return None;
    }
    let message =
        json::from_json::<pb::ArenaMessage>(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    if exact {
        // The same JSON (object keys in any order: `settings` is a map).
        let written: serde_json::Value =
            serde_json::from_str(&json::to_json(&message)).expect("JSON");
        assert_eq!(
            written, value,
            "the bridge writes this line otherwise: {text}"
        );
    }
    Some(message)
}

fn check_from_program(text: &str) -> pb::Decision {
    let decision = json::from_json::<pb::Decision>(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert!(decision.action.is_some(), "{text}");
    decision
}

#[test]
fn the_example_lines_are_messages_the_bridge_writes_and_reads() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/stdio-bots.md");
    let text = std::fs::read_to_string(path).expect("docs/stdio-bots.md");
    let mut games = Vec::new();
    let (mut to_program, mut from_program) = (0, 0);
    for (info, lines) in blocks(&text) {
        match info.as_str() {
            // A whole JSON value, perhaps indented: to the program or from it.
            "json" => {
                let joined = lines.join("\n");
                let value: serde_json::Value = serde_json::from_str(&joined).expect("JSON");
                if value.get("action").is_some() {
                    check_from_program(&joined);
                } else {
                    check_to_program(&joined, false);
                }
            }
            // An exchange: `< ` lines to the program, `> ` lines from it, `…` for lines left out.
            "text" => {
                for line in &lines {
                    if let Some(message) = line.strip_prefix("< ") {
                        to_program += 1;
                        if let Some(pb::ArenaMessage {
                            kind: Some(pb::arena_message::Kind::MatchStart(start)),
                            ..
                        }) = check_to_program(message, true)
                        {
                            games.push(start.game);
                        }
                    } else if let Some(answer) = line.strip_prefix("> ") {
                        from_program += 1;
                        check_from_program(answer);
                    }
                }
            }
            _ => {}
        }
    }
    games.sort_unstable();
    let every_game = [pb::Game::Schocken, pb::Game::Sjokken, pb::Game::Zokken].map(|g| g as i32);
    assert_eq!(games, every_game, "an example exchange for each game");
    assert!(
        to_program >= 20 && from_program >= 8,
        "{to_program} {from_program}"
    );
}
