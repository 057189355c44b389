//! The match log as a versioned format: `format_version` is written, an unversioned
//! (format 0) log is read as the current format, a newer one is refused naming both
//! versions, and a hand-altered log whose seats or rules are out of the bounds of the
//! settings is refused (when read and when replayed) naming the field, value and range.

use knobel_engine::policy::{Policy, RandomPolicy, play_out};
use knobel_engine::{
    LOG_FORMAT_VERSION, LogError, Match, MatchLog, ReplayError, Rules, RulesError, SetupError,
};
use serde_json::Value;

fn logged_match(preset: &str, seed: u64) -> MatchLog {
    let mut rules = Rules::preset(preset).unwrap();
    if preset == "zokken" {
        rules.set_number("rounds", 5).unwrap();
    }
    let mut m = Match::new_with_log(rules, seed, 3).unwrap();
    let mut players: Vec<Box<dyn Policy>> = (0..3)
        .map(|i| Box::new(RandomPolicy::new(seed + i)) as Box<dyn Policy>)
        .collect();
    play_out(&mut m, &mut players);
    m.log().unwrap().clone()
}

fn altered(log: &MatchLog, change: impl FnOnce(&mut Value)) -> String {
    let mut json: Value = serde_json::from_str(&log.to_json()).unwrap();
    change(&mut json);
    json.to_string()
}

#[test]
fn the_log_carries_its_format_version_first() {
    assert_eq!(LOG_FORMAT_VERSION, 1);
    let log = logged_match("schocken", 1);
    assert_eq!(log.format_version, LOG_FORMAT_VERSION);
    let json = log.to_json();
    assert!(
        json.starts_with(&format!("{{\"format_version\":{LOG_FORMAT_VERSION},")),
        "{}",
        &json[..60]
    );
    assert_eq!(MatchLog::format_of(&json).unwrap(), LOG_FORMAT_VERSION);
}

#[test]
fn an_unversioned_log_is_read_as_format_0_and_upgraded() {
    for preset in knobel_engine::PRESETS {
        let log = logged_match(preset, 7);
        let old = altered(&log, |j| {
            j.as_object_mut().unwrap().remove("format_version");
        });
        assert!(!old.contains("format_version"));
        assert_eq!(MatchLog::format_of(&old).unwrap(), 0);
        let read = MatchLog::from_json(&old).expect("a format-0 log is read");
        assert_eq!(read, log, "{preset}");
        read.replay().expect("a format-0 log replays");
        let upgraded = MatchLog::upgrade_json(&old).unwrap();
        assert_eq!(MatchLog::format_of(&upgraded).unwrap(), LOG_FORMAT_VERSION);
        assert_eq!(MatchLog::from_json(&upgraded).unwrap(), log);
        // A current log is passed through untouched.
        let current = log.to_json();
        assert!(matches!(
            MatchLog::upgrade_json(&current).unwrap(),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}

#[test]
fn a_newer_format_is_refused_naming_both_versions() {
    let log = logged_match("sjokken", 3);
    let newer = altered(&log, |j| j["format_version"] = 2.into());
    let err = MatchLog::from_json(&newer).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::UnsupportedFormat {
                found: 2,
                supported: 1
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "match log format 2 is not supported: this engine reads format 1 (and the unversioned format 0)"
    );
    // Through serde as well (a log inside another document).
    let err = serde_json::from_str::<MatchLog>(&newer).unwrap_err();
    assert!(err.to_string().contains("match log format 2"), "{err}");
    assert!(MatchLog::upgrade_json(&newer).is_err());
}

#[test]
fn hand_altered_rules_out_of_bounds_are_refused_when_read_and_replayed() {
    let log = logged_match("zokken", 11);
    for (field, value, range) in [
        ("rounds", 0u64, "1..=100000"),
        ("rounds", 100_001, "1..=100000"),
        ("max_bets", 11, "1..=10"),
        ("max_replays", 21, "0..=20"),
        ("ante", 1_001, "0..=1000"),
        ("small_bet", 0, "1..=1000"),
        ("big_bet", 5_000, "1..=1000"),
    ] {
        let json = altered(&log, |j| j["rules"][field] = value.into());
        let err = MatchLog::from_json(&json).unwrap_err();
        let LogError::Setup(SetupError::Rules(RulesError::OutOfRange {
            name,
            value: got,
            min,
            max,
        })) = &err
        else {
            panic!("{field} = {value}: {err:?}");
        };
        assert_eq!((name.as_str(), *got as u64), (field, value));
        assert_eq!(format!("{min}..={max}"), range);
        let message = err.to_string();
        assert!(
            message.contains(&format!(
                "{field} = {value} is out of range: it must be {range}"
            )),
            "{message}"
        );
        // A log built in code with the same rules does not replay either.
        let mut in_code = log.clone();
        let Rules::Zokken(r) = &mut in_code.rules else {
            unreachable!()
        };
        match field {
            "rounds" => r.rounds = value as u32,
            "max_bets" => r.max_bets = value as u8,
            "max_replays" => r.max_replays = value as u8,
            "ante" => r.ante = value as u32,
            "small_bet" => r.small_bet = value as u32,
            _ => r.big_bet = value as u32,
        }
        let err = in_code.replay().unwrap_err();
        assert!(
            matches!(err, ReplayError::Setup(SetupError::Rules(_))),
            "{err:?}"
        );
    }
    for preset in ["schocken", "sjokken"] {
        let log = logged_match(preset, 5);
        let json = altered(&log, |j| j["rules"]["tokens"] = 0.into());
        let err = MatchLog::from_json(&json).unwrap_err().to_string();
        assert!(
            err.contains("tokens = 0 is out of range: it must be 1..=99"),
            "{err}"
        );
    }
}

#[test]
fn hand_altered_seats_are_refused() {
    let log = logged_match("schocken", 2);
    for seats in [0u64, 1, 11, 255] {
        let json = altered(&log, |j| j["seats"] = seats.into());
        let err = MatchLog::from_json(&json).unwrap_err();
        assert!(
            matches!(err, LogError::Setup(SetupError::Seats { .. })),
            "{seats}: {err:?}"
        );
        assert!(
            err.to_string()
                .contains(&format!("cannot seat {seats} players"))
        );
    }
    // Rules built in code out of bounds cannot start a match at all.
    let mut rules = Rules::preset("zokken").unwrap();
    if let Rules::Zokken(r) = &mut rules {
        r.max_bets = 0;
    }
    assert!(matches!(
        Match::new(rules, 1, 3),
        Err(SetupError::Rules(RulesError::OutOfRange { .. }))
    ));
}
