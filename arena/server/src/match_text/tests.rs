use std::path::PathBuf;

use knobel_engine::policy::{HeuristicPolicy, Policy, RandomPolicy, play_out};
use knobel_engine::{
    Event, ForfeitReason, LogEntry, Match, MatchLog, PRESETS, ReplayError, Rules, Seat,
    StrikeReason,
};

use super::{MatchTextError, Sight, describe, steps};

const SEED: u64 = 20_261_129;

fn names() -> Vec<String> {
    ["ada", "bert", "cleo"].map(String::from).to_vec()
}

fn players() -> Vec<Box<dyn Policy>> {
    vec![
        Box::new(HeuristicPolicy),
        Box::new(RandomPolicy::new(SEED)),
        Box::new(HeuristicPolicy),
    ]
}

/// A match of `rules` played out by the built-in policies, and its log.
fn played(rules: Rules, seed: u64) -> MatchLog {
    let mut m = Match::new_with_log(rules, seed, 3).unwrap();
    play_out(&mut m, &mut players());
    m.log().unwrap().clone()
}

fn preset(name: &str) -> Rules {
    let mut rules = Rules::preset(name).unwrap();
    if name == "zokken" {
        rules.set_number("rounds", 6).unwrap();
    }
    rules
}

fn events(log: &MatchLog) -> impl Iterator<Item = &Event> {
    log.entries.iter().filter_map(|entry| match entry {
        LogEntry::Event { event } => Some(event),
        _ => None,
    })
}

/// The dice written after `verb` ("throws", "shows") on the account's lines, in order.
fn dice_after(text: &str, verb: &str) -> Vec<[u8; 3]> {
    let marker = format!(" {verb} ");
    text.lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once(&marker)?;
            let faces: Vec<u8> = rest
                .split(|c: char| !c.is_ascii_digit())
                .take(3)
                .map(|face| face.parse().ok())
                .collect::<Option<_>>()?;
            Some([faces[0], faces[1], faces[2]])
        })
        .collect()
}

#[test]
fn every_preset_is_described_with_its_seats_rounds_and_placings() {
    for name in PRESETS {
        let log = played(preset(name), SEED);
        let text = describe(&log, &names()).unwrap();
        let outcome = log.replay().unwrap().outcome().unwrap();
        for (seat, seat_name) in names().iter().enumerate() {
            assert!(
                text.contains(&format!("{seat_name} (seat {seat})")),
                "{name}"
            );
            let placing = format!("  {}. {seat_name}: ", outcome.placings[seat]);
            assert!(text.contains(&placing), "{name}: no {placing:?}\n{text}");
        }
        let mut rounds = 0;
        for event in events(&log) {
            if let Event::RoundStarted { round, replay, .. } = *event {
                let heading = match replay {
                    0 => format!("\nRound {round}"),
                    _ => format!("\nRound {round}, replay {replay}:"),
                };
                assert!(text.contains(&heading), "{name}: no {heading:?}");
                rounds += 1;
            }
        }
        assert!(rounds > 1, "{name}");
        assert!(text.contains("Final placings:"), "{name}");
        assert!(text.contains(&format!("seed {SEED}")), "{name}");
        assert!(
            text.contains(&format!("preset {name}")),
            "{name}: {}",
            &text[..80]
        );
    }
}

/// Every throw line of `text` shows the dice of the log's throws, and every hand the dice
/// of its reveal, in the log's order.
fn assert_dice_of_the_log(log: &MatchLog, text: &str, what: &str) {
    let thrown: Vec<[u8; 3]> = log
        .entries
        .iter()
        .filter_map(|entry| match *entry {
            LogEntry::Throw { dice, .. } => Some(dice),
            _ => None,
        })
        .collect();
    assert_eq!(dice_after(text, "throws"), thrown, "{what}");
    let shown: Vec<[u8; 3]> = events(log)
        .filter_map(|event| match *event {
            Event::Revealed { dice, .. } => Some(dice),
            _ => None,
        })
        .collect();
    assert_eq!(dice_after(text, "shows"), shown, "{what}");
}

#[test]
fn every_throw_and_hand_shows_the_dice_of_the_log() {
    for name in PRESETS {
        let log = played(preset(name), SEED + 1);
        let text = describe(&log, &names()).unwrap();
        assert_dice_of_the_log(&log, &text, name);
    }
}

/// A short Schocken match: five mats, one half (a seed whose match turns sixes, keeps dice
/// and passes mats).
fn short_schocken() -> MatchLog {
    let mut rules = Rules::preset("schocken").unwrap();
    rules.set_number("tokens", 5).unwrap();
    rules.set_variant("single_half", true).unwrap();
    played(rules, 17)
}

#[test]
fn a_short_schocken_match_reads_as_its_golden_text() {
    let log = short_schocken();
    let text = describe(&log, &names()).unwrap();
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/match-text-schocken.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap();
    assert_dice_of_the_log(&log, &golden, "golden");
    assert_eq!(
        text, golden,
        "regenerate with UPDATE_GOLDEN=1 if the change is intended"
    );
}

#[test]
fn strikes_and_forfeits_are_told() {
    let mut m = Match::new_with_log(preset("schocken"), SEED, 3).unwrap();
    m.strike(Seat(1), StrikeReason::Timeout).unwrap();
    m.forfeit(Seat(1), ForfeitReason::Disconnected).unwrap();
    play_out(&mut m, &mut players());
    let text = describe(m.log().unwrap(), &names()).unwrap();
    assert!(
        text.contains("  referee: strike 1 for bert (timeout)\n"),
        "{text}"
    );
    assert!(
        text.contains("  referee: bert forfeits (disconnected)"),
        "{text}"
    );
    assert!(
        text.contains("\n  3. bert: "),
        "a forfeited seat is placed last: {text}"
    );
    assert!(
        text.contains("; 1 strike (1 timeout); forfeited (disconnected)\n"),
        "{text}"
    );
}

#[test]
fn a_corrupted_log_is_refused_with_a_typed_error() {
    let mut log = short_schocken();
    let index = log
        .entries
        .iter()
        .position(|entry| matches!(entry, LogEntry::Throw { round: 1, .. }))
        .unwrap();
    let LogEntry::Throw { dice, .. } = &mut log.entries[index] else {
        unreachable!()
    };
    dice[0] = dice[0] % 6 + 1;
    let err = describe(&log, &names()).unwrap_err();
    assert!(
        matches!(err, MatchTextError::Replay(ReplayError::Mismatch { index: i, .. }) if i == index),
        "{err}"
    );
}

#[test]
fn an_unfinished_match_or_wrong_names_are_refused() {
    let mut log = short_schocken();
    let last_decision = log
        .entries
        .iter()
        .rposition(|entry| matches!(entry, LogEntry::Decision { .. }))
        .unwrap();
    assert!(matches!(
        describe(&log, &names()[..2]),
        Err(MatchTextError::SeatNames { seats: 3, names: 2 })
    ));
    log.entries.truncate(last_decision);
    assert!(matches!(
        describe(&log, &names()),
        Err(MatchTextError::Unfinished)
    ));
}

#[test]
fn the_steps_are_the_account_line_by_line_with_every_throw_and_its_dice() {
    for name in PRESETS {
        let log = played(preset(name), SEED);
        let steps = steps(&log, &names(), Sight::Full).unwrap();
        let account = describe(&log, &names()).unwrap();
        let lines: Vec<&str> = account
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let texts: Vec<&str> = steps.iter().map(|s| s.text.as_str()).collect();
        let start = lines.iter().position(|l| *l == texts[0]).unwrap();
        assert_eq!(&lines[start..start + texts.len()], &texts[..], "{name}");
        let thrown: Vec<(Seat, [u8; 3])> = steps
            .iter()
            .filter_map(|s| {
                s.dice
                    .filter(|d| d.throw)
                    .map(|d| (d.seat, d.dice.map(Option::unwrap)))
            })
            .collect();
        let logged: Vec<(Seat, [u8; 3])> = log
            .entries
            .iter()
            .filter_map(|e| match *e {
                LogEntry::Throw { seat, dice, .. } => Some((seat, dice)),
                _ => None,
            })
            .collect();
        assert_eq!(thrown, logged, "{name}: every throw, in order");
    }
}
