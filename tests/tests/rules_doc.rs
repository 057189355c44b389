//! `docs/rules.md` is the project's rule book (`../shared/RULES.md`, next to the repository)
//! byte for byte, followed by the arena's fair-play appendix.

use knobel_e2e::workspace;

const APPENDIX: &str = "\n---\n\n## Appendix: the arena's fair-play rules\n";

#[test]
fn docs_rules_starts_with_the_rule_book_byte_for_byte() {
    let root = workspace();
    let book_path = root.join("../shared/RULES.md");
    let docs = std::fs::read(root.join("docs/rules.md")).expect("docs/rules.md exists");
    let Ok(book) = std::fs::read(&book_path) else {
        // The rule book lives next to the repository in CI: there it must be found.
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing: CI needs the rule book next to the repository",
            book_path.display()
        );
        eprintln!(
            "skipped: {} is not next to the repository",
            book_path.display()
        );
        return;
    };
    assert!(
        docs.starts_with(&book),
        "docs/rules.md does not start with {} byte for byte: copy it again, then the appendix",
        book_path.display()
    );
    let rest = std::str::from_utf8(&docs[book.len()..]).expect("the appendix is UTF-8");
    assert!(
        rest.starts_with(APPENDIX),
        "the rule book is followed by the appendix heading {APPENDIX:?}, not {:?}",
        &rest[..rest.len().min(80)]
    );
    for topic in [
        "### A.1 Time control",
        "### A.3 Strikes",
        "### A.4 Forfeits",
        "### A.5 How a forfeit ranks",
        "### A.6 Tokens and chips of a forfeited seat",
        "### A.8 The dice function",
        "#### A.8.5 A worked example",
    ] {
        assert!(rest.contains(topic), "the appendix has no {topic:?}");
    }
}
