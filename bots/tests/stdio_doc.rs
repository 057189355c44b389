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

/// What one exchange holds: the games of its MatchStart lines, and how many lines went each
/// way.
#[derive(Default)]
struct Exchange {
    games: Vec<i32>,
    to_program: usize,
    from_program: usize,
}

/// Checks the `< ` and `> ` lines of one exchange (`…` stands for lines left out). A
/// `complete` exchange is a whole match: Welcome, MatchStart, every request answered on the
/// very next line by its `request_id`, and a finished match's MatchResult last.
fn check_exchange(lines: &[String], complete: bool, exchange: &mut Exchange) {
    use pb::arena_message::Kind;
    let mut kinds = Vec::new();
    let mut open: Option<u64> = None;
    for line in lines {
        if let Some(message) = line.strip_prefix("< ") {
            exchange.to_program += 1;
            assert!(
                !complete || open.is_none(),
                "request {open:?} is not answered before: {message}"
            );
            let Some(message) = check_to_program(message, true) else {
                continue;
            };
            match &message.kind {
                Some(Kind::MatchStart(start)) => exchange.games.push(start.game),
                Some(Kind::DecisionRequest(request)) => open = Some(request.request_id),
                _ => {}
            }
            kinds.push(message.kind);
        } else if let Some(answer) = line.strip_prefix("> ") {
            exchange.from_program += 1;
            let decision = check_from_program(answer);
            if complete {
                assert_eq!(open.take(), Some(decision.request_id), "{answer}");
            }
        } else {
            assert!(!complete, "a complete exchange leaves nothing out: {line}");
        }
    }
    if complete {
        assert!(open.is_none(), "request {open:?} is never answered");
        assert!(matches!(kinds.first(), Some(Some(Kind::Welcome(_)))));
        assert!(matches!(kinds.get(1), Some(Some(Kind::MatchStart(_)))));
        let Some(Some(Kind::MatchResult(result))) = kinds.last() else {
            panic!("a complete exchange ends with the MatchResult");
        };
        assert_eq!(result.status, pb::MatchStatus::Finished as i32);
        assert_eq!(exchange.games.len(), 1, "one match");
    }
}

#[test]
fn the_example_lines_are_messages_the_bridge_writes_and_reads() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/stdio-bots.md");
    let text = std::fs::read_to_string(path).expect("docs/stdio-bots.md");
    let mut exchange = Exchange::default();
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
            "text" => check_exchange(&lines, false, &mut exchange),
            _ => {}
        }
    }
    let Exchange {
        mut games,
        to_program,
        from_program,
    } = exchange;
    games.sort_unstable();
    let every_game = [pb::Game::Schocken, pb::Game::Sjokken, pb::Game::Zokken].map(|g| g as i32);
    assert_eq!(games, every_game, "an example exchange for each game");
    assert!(
        to_program >= 20 && from_program >= 8,
        "{to_program} {from_program}"
    );
}

#[test]
fn the_whole_matches_are_complete_exchanges_of_each_game() {
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/");
    let text = std::fs::read_to_string(format!("{docs}stdio-bots.md")).expect("docs");
    // Zokken's whole match is in the page itself: the one match (from Welcome on) without
    // `…`.
    let zokken = blocks(&text)
        .into_iter()
        .filter(|(info, lines)| {
            info == "text"
                && lines
                    .first()
                    .is_some_and(|l| l.starts_with("< {\"welcome\""))
                && !lines.iter().any(|l| l == "…")
        })
        .map(|(_, lines)| lines)
        .collect::<Vec<_>>();
    assert_eq!(zokken.len(), 1, "one whole match in the page");
    let mut whole = vec![(pb::Game::Zokken, zokken[0].clone())];
    for (game, file) in [
        (pb::Game::Schocken, "schocken.txt"),
        (pb::Game::Sjokken, "sjokken.txt"),
    ] {
        assert!(
            text.contains(&format!("(stdio-examples/{file})")),
            "{file} is linked"
        );
        let lines = std::fs::read_to_string(format!("{docs}stdio-examples/{file}"))
            .expect(file)
            .lines()
            .map(str::to_owned)
            .collect();
        whole.push((game, lines));
    }
    for (game, lines) in whole {
        let mut exchange = Exchange::default();
        check_exchange(&lines, true, &mut exchange);
        assert_eq!(exchange.games, [game as i32]);
        assert!(
            exchange.from_program >= 4,
            "{game:?}: {}",
            exchange.from_program
        );
    }
}
