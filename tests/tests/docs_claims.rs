//! What the documentation claims, checked against the repository and the programs: every
//! file a doc names exists, the counts it states are the program's, the strategies
//! `knobel-bot --help` lists are the ones it takes, and the lines it quotes are the lines
//! the programs print. The first rows are the disagreements issue 27 found.

use std::path::{Path, PathBuf};

use knobel_e2e::{Arena, ArenaOptions, binaries, workspace};

/// The documents a bot author or an operator reads.
fn documents() -> Vec<PathBuf> {
    let root = workspace();
    let mut docs: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "bots/README.md"]
        .iter()
        .map(|p| root.join(p))
        .chain([root.join("proto/knobel/v1/arena.proto")])
        .collect();
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let path = entry.expect("a docs/ entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    docs.sort();
    docs
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file of the repository, as paths relative to its root (build output, dependencies
/// and generated stubs left out).
fn repository_files() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("a readable folder").flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if ![".git", "target", "node_modules", ".venv", "gen"].contains(&name.as_str()) {
                    walk(&path, root, out);
                }
            } else if let Ok(relative) = path.strip_prefix(root) {
                out.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    let root = workspace();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out
}

/// Names in `text` that look like files: a path of word characters ending in one of the
/// repository's extensions, not part of a URL.
fn file_names(text: &str) -> Vec<String> {
    const EXTENSIONS: [&str; 12] = [
        "md", "proto", "py", "js", "pl", "rs", "toml", "json", "yml", "yaml", "sh", "txt",
    ];
    let is_name = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(is_name) {
        let before = &text[..text.len() - rest.len() + start];
        let len = rest[start..]
            .find(|c| !is_name(c))
            .unwrap_or(rest.len() - start);
        let word = rest[start..start + len].trim_end_matches('.');
        rest = &rest[start + len..];
        let in_url = before.ends_with(':') || before.ends_with("//");
        let extension = word.rsplit_once('.').map(|(_, e)| e);
        if !in_url
            && word.contains('.')
            && extension.is_some_and(|e| EXTENSIONS.contains(&e))
            && (word.starts_with(|c: char| c.is_ascii_alphanumeric())
                || word.starts_with("./")
                || word.starts_with("../"))
        {
            names.push(word.to_owned());
        }
    }
    names
}

/// Files a doc names on purpose that are not in the repository: examples of the reader's
/// own files, and another project's.
const NOT_OURS: [&str; 2] = ["class.toml", "examples/src/streaming/server.rs"];

#[test]
fn every_file_a_doc_names_exists() {
    let root = workspace();
    let files = repository_files();
    let mut missing = Vec::new();
    for doc in documents() {
        let dir = doc.parent().expect("a folder");
        for name in file_names(&read(&doc)) {
            let bare = name.trim_start_matches("./");
            let found = NOT_OURS.contains(&bare)
                || root.join(bare).exists()
                || dir.join(bare).exists()
                // A name given relative to its part of the tree ("stdio/bot.py", "mod.rs").
                || files
                    .iter()
                    .any(|f| f == bare || f.ends_with(&format!("/{bare}")));
            if !found {
                missing.push(format!("{}: {name}", doc.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs name files that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_rules_are_named_where_they_are() {
    // The proto and the bot guide once pointed to a RULES.md that is not in the repository.
    for doc in ["proto/knobel/v1/arena.proto", "docs/writing-a-bot.md"] {
        let text = read(&workspace().join(doc));
        assert!(!text.contains("RULES.md"), "{doc} names RULES.md");
        assert!(
            text.contains("docs/rules.md") || text.contains("(rules.md)"),
            "{doc}"
        );
    }
    assert!(file_names("see RULES.md, §2").contains(&"RULES.md".to_owned()));
}

/// `one`..`twelve` as numbers.
fn number_word(word: &str) -> Option<usize> {
    let words = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    words
        .iter()
        .position(|w| word.eq_ignore_ascii_case(w))
        .map(|i| i + 1)
        .or_else(|| word.parse().ok())
}

/// The numbers in `text` right before `noun` ("seven" of "seven built-in bots").
fn counts_before(text: &str, noun: &str) -> Vec<(String, usize)> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.match_indices(&format!(" {noun}"))
        .filter_map(|(at, _)| {
            let word = flat[..at].rsplit(' ').next().unwrap_or("").to_owned();
            number_word(&word).map(|n| (word, n))
        })
        .collect()
}

/// How many bots the demo plays: the length of `DEMO_BOTS` in its source.
fn demo_bots() -> usize {
    let source = read(&workspace().join("arena/server/src/cli/demo.rs"));
    let declared = source
        .split("pub const DEMO_BOTS: [(&str, &str); ")
        .nth(1)
        .expect("DEMO_BOTS is declared");
    declared[..declared.find(']').expect("its length")]
        .parse()
        .expect("a length")
}

#[test]
fn the_demo_bots_are_counted_as_the_demo_has_them() {
    let bots = demo_bots();
    let help = std::process::Command::new(binaries().join("knobel"))
        .arg("--help")
        .output()
        .expect("knobel --help");
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let texts = [
        ("README.md", read(&workspace().join("README.md"))),
        (
            "docs/leagues.md",
            read(&workspace().join("docs/leagues.md")),
        ),
        ("knobel --help", help),
    ];
    for (name, text) in &texts {
        let counts: Vec<_> = ["built-in bots", "bots over the Admin service"]
            .iter()
            .flat_map(|noun| counts_before(text, noun))
            .collect();
        assert!(!counts.is_empty(), "{name} does not count the demo's bots");
        for (word, n) in counts {
            assert_eq!(
                n, bots,
                "{name} says {word:?} demo bots; the demo has {bots}"
            );
        }
    }
}

#[test]
fn knobel_bot_help_lists_every_strategy_it_takes() {
    let output = std::process::Command::new(binaries().join("knobel-bot"))
        .arg("--help")
        .output()
        .expect("knobel-bot --help");
    let help = String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let strategy = help
        .split("--strategy")
        .nth(1)
        .expect("a --strategy option")
        .split(" --")
        .next()
        .unwrap_or_default()
        .to_owned();
    for name in knobel_engine::policy::POLICY_NAMES {
        assert!(
            strategy.contains(&format!(" {name},")) || strategy.contains(&format!(" {name} ")),
            "--strategy's help does not name {name}: {strategy}"
        );
    }
}

#[test]
fn the_result_line_of_knobel_bot_is_quoted_as_printed() {
    let summary = knobel_bots::MatchSummary {
        match_id: "01a2289584ccdeae4201f04c8a09".to_owned(),
        game: Some(knobel_engine::Game::Zokken),
        seats: 4,
        place: 2,
        finished: true,
        requests: 31,
        ..Default::default()
    };
    let printed = summary.to_string();
    let guide = read(&workspace().join("docs/writing-a-bot.md"));
    assert!(
        guide.lines().any(|line| line == printed),
        "docs/writing-a-bot.md does not quote knobel-bot's line as printed: {printed}"
    );
    let readme = read(&workspace().join("bots/README.md"));
    let template = "match <id> <game> place <p>/<n> requests <r> strikes <s> forfeited <bool> errors [<codes>]";
    assert!(readme.contains(template), "bots/README.md");
    let words: Vec<&str> = template.split(' ').collect();
    let shown: Vec<&str> = printed.split(' ').collect();
    assert_eq!(words.len(), shown.len(), "{printed}");
    for (w, s) in words.iter().zip(&shown) {
        assert!(
            w.starts_with('<') || w.starts_with('[') || w == s,
            "{w} vs {s}"
        );
    }
}

#[test]
fn the_env_example_counts_its_secrets() {
    let example = read(&workspace().join("deploy/.env.example"));
    let secrets = example
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('='))
        .count();
    for (name, text) in [
        ("deploy/.env.example", example.clone()),
        ("README.md", read(&workspace().join("README.md"))),
    ] {
        let counts = counts_before(&text, "secrets");
        assert!(!counts.is_empty(), "{name} does not count the secrets");
        for (word, n) in counts {
            assert_eq!(
                n, secrets,
                "{name} says {word:?} secrets; there are {secrets}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_up_lines_in_the_bot_guide_are_what_serve_prints() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let printed = arena.start_up_lines.clone();
    assert!(arena.stop().await.success());
    // Each line up to its port: the guide's default ports are not these.
    let shape = |line: &str| {
        line.rsplit_once(':')
            .map(|(a, _)| a.to_owned())
            .unwrap_or_default()
    };
    let guide = read(&workspace().join("docs/writing-a-bot.md"));
    let block = guide
        .split("The arena prints where it listens")
        .nth(1)
        .and_then(|rest| rest.split("```text\n").nth(1))
        .and_then(|rest| rest.split("```").next())
        .expect("the guide's block of start-up lines");
    let quoted: Vec<String> = block.lines().map(shape).collect();
    let actual: Vec<String> = printed.iter().map(|l| shape(l)).collect();
    assert_eq!(
        quoted, actual,
        "the guide quotes\n{block}\nserve prints\n{printed:?}"
    );
}
