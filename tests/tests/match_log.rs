//! The match log as a contract a stranger can implement:
//!
//! - every log validates against the documented JSON Schema (`docs/match-log.schema.json`),
//!   logs of engine matches of every preset (with strikes and forfeits) and logs served by
//!   a real arena alike, and the schema's `format_version` is the engine's;
//! - a stranger's implementation of the dice function of `docs/rules.md` (appendix A.8),
//!   `tests/stranger/recompute_dice.py` (Python 3, standard library only), recomputes every
//!   die of those logs from their seeds; the rule book's worked example is the engine's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, finish, workspace};
use knobel_engine::policy::{HeuristicPolicy, Policy, RandomPolicy};
use knobel_engine::{
    DiceSource, ForfeitReason, LOG_FORMAT_VERSION, LogEntry, MIWIN_FACES, Match, MatchLog, PRESETS,
    Rules, Seat, StrikeReason,
};
use knobel_proto::v1 as pb;
use serde_json::Value;

fn schema() -> Value {
    let text = std::fs::read_to_string(workspace().join("docs/match-log.schema.json"))
        .expect("docs/match-log.schema.json exists");
    serde_json::from_str(&text).expect("the schema is JSON")
}

fn validator() -> jsonschema::Validator {
    let schema = schema();
    jsonschema::meta::validate(&schema).expect("the schema is a valid JSON Schema");
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

/// Validates one log's JSON against the schema, with every error and where it is.
fn assert_valid(validator: &jsonschema::Validator, json: &str, what: &str) {
    let value: Value = serde_json::from_str(json).expect("a log is JSON");
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match the schema: {errors:#?}"
    );
}

/// Runs the stranger's Python implementation over the logs in `paths`; returns its output.
/// Without python3 the test fails under CI and says it skipped otherwise.
fn recompute_with_python(paths: &[PathBuf]) -> Option<String> {
    let script = workspace().join("tests/stranger/recompute_dice.py");
    let output = match std::process::Command::new("python3")
        .arg(&script)
        .args(paths)
        .output()
    {
        Ok(output) => output,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "python3 cannot be run ({e}): CI needs it for the stranger's dice test"
            );
            eprintln!("SKIPPED: python3 cannot be run ({e}): the dice were not recomputed");
            return None;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the stranger's dice function disagrees with a log:\n{}{}",
        stdout,
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        stdout.lines().filter(|l| l.ends_with("all equal")).count(),
        paths.len(),
        "{stdout}"
    );
    Some(stdout)
}

fn write_logs(dir: &Path, logs: &[(String, String)]) -> Vec<PathBuf> {
    logs.iter()
        .map(|(name, json)| {
            let path = dir.join(format!("{name}.json"));
            std::fs::write(&path, json).expect("write a log");
            path
        })
        .collect()
}

/// Plays one logged match: random or heuristic players, and (with `penalties`) strikes of
/// every reason and a forfeit at chosen decisions.
fn play(rules: &Rules, seed: u64, seats: usize, penalties: bool) -> MatchLog {
    let mut m = Match::new_with_log(rules.clone(), seed, seats).unwrap();
    let mut players: Vec<Box<dyn Policy>> = (0..seats)
        .map(|i| {
            if (seed as usize + i).is_multiple_of(2) {
                Box::new(RandomPolicy::new(seed ^ i as u64)) as Box<dyn Policy>
            } else {
                Box::new(HeuristicPolicy)
            }
        })
        .collect();
    let reasons = [
        StrikeReason::Timeout,
        StrikeReason::IllegalAction,
        StrikeReason::Malformed,
    ];
    let mut step = 0usize;
    while !m.is_over() {
        let seat = m.to_act().iter().next().unwrap();
        if penalties && m.forfeit_of(seat).is_none() {
            if step % 7 == 3 {
                m.strike(seat, reasons[step % 3]).unwrap();
            }
            if step == 40 {
                let reason = ForfeitReason::ALL[seed as usize % ForfeitReason::ALL.len()];
                m.forfeit(seat, reason).unwrap();
            }
        }
        if m.is_over() {
            break;
        }
        let action = if m.forfeit_of(seat).is_some() {
            m.default_action(seat).unwrap()
        } else {
            let legal = m.legal_actions(seat);
            let action = players[seat.index()].decide(&m.observe(seat), &legal);
            if legal.contains(&action) {
                action
            } else {
                m.default_action(seat).unwrap()
            }
        };
        m.apply(seat, action).unwrap();
        step += 1;
    }
    let log = m.log().unwrap().clone();
    log.replay().expect("a genuine log replays");
    log
}

#[test]
fn the_schema_is_of_the_engine_s_format_version() {
    let schema = schema();
    assert_eq!(
        schema["properties"]["format_version"]["const"],
        Value::from(LOG_FORMAT_VERSION),
        "docs/match-log.schema.json documents another format than the engine writes \
         (LOG_FORMAT_VERSION {LOG_FORMAT_VERSION}): update the schema with the layout"
    );
    assert!(
        schema["title"]
            .as_str()
            .unwrap()
            .ends_with(&format!("format {LOG_FORMAT_VERSION}"))
    );
    // The schema is not vacuous: a changed format_version, a missing one, an unknown entry
    // kind, an unknown reason or a die out of range are refused.
    let validator = validator();
    let json = play(&Rules::preset("schocken").unwrap(), 3, 3, true).to_json();
    assert_valid(&validator, &json, "a genuine log");
    let good: Value = serde_json::from_str(&json).unwrap();
    let kind_of = |kind: &str| {
        good["entries"]
            .as_array()
            .unwrap()
            .iter()
            .position(|e| e["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} entry"))
    };
    let (strike, throw) = (kind_of("strike"), kind_of("throw"));
    type Change = Box<dyn Fn(&mut Value)>;
    let changes: Vec<(&str, Change)> = vec![
        (
            "format_version 2",
            Box::new(|j| j["format_version"] = (LOG_FORMAT_VERSION + 1).into()),
        ),
        (
            "no format_version",
            Box::new(|j| {
                j.as_object_mut().unwrap().remove("format_version");
            }),
        ),
        (
            "an unknown kind",
            Box::new(move |j| j["entries"][strike]["kind"] = "penalty".into()),
        ),
        (
            "an unknown reason",
            Box::new(move |j| j["entries"][strike]["reason"] = "rudeness".into()),
        ),
        (
            "a die 0",
            Box::new(move |j| j["entries"][throw]["dice"][0] = 0.into()),
        ),
        (
            "a Schocken die 7",
            Box::new(move |j| j["entries"][throw]["dice"][2] = 7.into()),
        ),
        (
            "a revealed Schocken die 9",
            Box::new(move |j| {
                let revealed = j["entries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .position(|e| e["event"]["event"] == "revealed")
                    .expect("a revealed hand");
                j["entries"][revealed]["event"]["dice"][1] = 9.into();
            }),
        ),
        (
            "a slot 3",
            Box::new(move |j| j["entries"][throw]["rolled"] = vec![3].into()),
        ),
        ("tokens 0", Box::new(|j| j["rules"]["tokens"] = 0.into())),
        ("11 seats", Box::new(|j| j["seats"] = 11.into())),
    ];
    for (what, change) in changes {
        let mut bad = good.clone();
        change(&mut bad);
        assert!(
            !validator.is_valid(&bad),
            "the schema accepts a log with {what}"
        );
    }
}

#[test]
fn the_schema_allows_each_game_its_own_die_faces() {
    let validator = validator();
    let zokken = play(&Rules::preset("zokken").unwrap(), 5, 3, false).to_json();
    assert_valid(&validator, &zokken, "a genuine Zokken log");
    let good: Value = serde_json::from_str(&zokken).unwrap();
    let throw = good["entries"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e["kind"] == "throw")
        .expect("a throw");
    // Miwin's dice: III has no 3, IV no 2, V no 9; every face is legal on some die.
    for (slot, face) in [(0, 3), (1, 2), (2, 9)] {
        let mut bad = good.clone();
        bad["entries"][throw]["dice"][slot] = face.into();
        assert!(
            !validator.is_valid(&bad),
            "the schema accepts a Zokken die {face} in slot {slot}"
        );
    }
    // A 7 is a face of Zokken's dice III and V, never of Schocken's or Sjokken's.
    for (slot, face) in [(0, 7), (2, 7)] {
        let mut ok = good.clone();
        ok["entries"][throw]["dice"][slot] = face.into();
        assert!(validator.is_valid(&ok), "a Zokken {face} in slot {slot}");
    }
    let sjokken = play(&Rules::preset("sjokken").unwrap(), 5, 3, false).to_json();
    let mut bad: Value = serde_json::from_str(&sjokken).unwrap();
    assert!(validator.is_valid(&bad), "a genuine Sjokken log");
    let throw = bad["entries"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e["kind"] == "throw")
        .expect("a throw");
    bad["entries"][throw]["dice"][0] = 7.into();
    assert!(!validator.is_valid(&bad), "the schema accepts a Sjokken 7");
}

#[test]
fn engine_logs_of_every_preset_validate_and_their_dice_are_recomputed() {
    let validator = validator();
    let dir = tempfile::tempdir().unwrap();
    let mut logs = Vec::new();
    let (mut throw_off_rethrows, mut tie_replays, mut turned, mut penalties) = (0, 0, 0, 0);
    for preset in PRESETS {
        let mut rules = Rules::preset(preset).unwrap();
        if preset == "zokken" {
            rules.set_number("rounds", 25).unwrap();
        }
        for seed in 0..16u64 {
            let seats = 2 + (seed as usize % 5);
            let log = play(&rules, seed * 7919 + 1, seats, seed % 4 == 1);
            for entry in &log.entries {
                match entry {
                    LogEntry::Throw {
                        round: 0,
                        throw: 2..,
                        ..
                    } => throw_off_rethrows += 1,
                    LogEntry::Throw { throw: 4.., .. } if preset == "zokken" => tie_replays += 1,
                    LogEntry::Event {
                        event: knobel_engine::Event::Turned { .. },
                    } => turned += 1,
                    LogEntry::Strike { .. } | LogEntry::Forfeit { .. } => penalties += 1,
                    _ => {}
                }
            }
            let json = log.to_json();
            assert_valid(&validator, &json, &format!("{preset} seed {seed}"));
            logs.push((format!("{preset}-{seed}"), json));
        }
    }
    // The logs exercise every part of the numbering the rule book describes.
    assert!(throw_off_rethrows > 0, "no throw-off re-throw was logged");
    assert!(tie_replays > 0, "no zokken tie replay was logged");
    assert!(turned > 0, "no turned six was logged");
    assert!(penalties > 0, "no strike or forfeit was logged");
    if let Some(out) = recompute_with_python(&write_logs(dir.path(), &logs)) {
        assert!(out.contains("zokken") && out.contains("sjokken") && out.contains("schocken"));
    }
}

#[test]
fn the_worked_example_of_the_rule_book_is_the_engine_s() {
    let rules = std::fs::read_to_string(workspace().join("docs/rules.md")).unwrap();
    let section = rules
        .split_once("#### A.8.5 A worked example")
        .expect("the rule book has A.8.5")
        .1;
    let seed: u64 = 20261129;
    assert!(section.contains(&format!("Seed `{seed}`")));
    let mut rows = 0;
    for line in section.lines().filter(|l| {
        l.starts_with("| Schocken") || l.starts_with("| Zokken") || l.starts_with("| Sjokken")
    }) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let num = |i: usize| -> u64 { cells[i].parse().unwrap() };
        let (seat, round, throw) = (num(1) as u8, num(2) as u32, num(3) as u8);
        let list = |i: usize| -> Vec<u8> {
            cells[i]
                .split(',')
                .map(|v| v.trim().parse().unwrap())
                .collect()
        };
        let source = DiceSource::new(seed);
        let indices = source.throw_faces(Seat(seat), round, throw);
        assert_eq!(indices.to_vec(), list(7), "{line}");
        assert_eq!(
            num(6),
            indices[0] as u64 * 36 + indices[1] as u64 * 6 + indices[2] as u64,
            "{line}"
        );
        let key = u64::from_str_radix(cells[4].trim_matches('`').trim_start_matches("0x"), 16);
        assert_eq!(
            key.unwrap(),
            (round as u64) << 16 | (seat as u64) << 8 | throw as u64
        );
        let dice = if cells[0] == "Zokken" {
            source.throw(Seat(seat), round, throw, &MIWIN_FACES)
        } else {
            source.throw_d6(Seat(seat), round, throw)
        };
        assert_eq!(dice.to_vec(), list(8), "{line}");
        rows += 1;
    }
    assert_eq!(rows, 8, "the worked example's table has 8 rows");
    // And the stranger's implementation prints the same.
    let script = workspace().join("tests/stranger/recompute_dice.py");
    match std::process::Command::new("python3")
        .arg(script)
        .arg("--example")
        .output()
    {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout).to_ascii_uppercase();
            assert!(text.contains("BASE 3D7504A4B3E2EEE7"), "{text}");
            assert!(text.contains("WORD 45B724CCDADC9F44 OUTCOME 58"), "{text}");
            assert!(section.contains("`0x3D7504A4B3E2EEE7`"));
        }
        Err(e) => assert!(std::env::var_os("CI").is_none(), "python3: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_served_by_a_real_arena_validate_and_their_dice_are_recomputed() {
    let arena = Arena::start(ArenaOptions {
        log_file: None,
        args: [
            "--seats",
            "4",
            "--zokken-rounds",
            "8",
            "--decision-ms",
            "1000",
        ]
        .map(str::to_owned)
        .to_vec(),
    })
    .await;
    let mut tokens = Vec::new();
    for i in 0..4 {
        tokens.push(arena.add_bot(&format!("bot-{i}")).await);
    }
    for game in ["schocken", "sjokken", "zokken"] {
        let bots: Vec<_> = tokens
            .iter()
            .enumerate()
            .map(|(i, token)| {
                let mut args = vec!["--games", game, "--matches", "1"];
                // One seat answers illegally: strikes, then a forfeit, in the log.
                if i == 0 && game == "zokken" {
                    args.extend(["--misbehave", "illegal"]);
                } else {
                    args.extend(["--strategy", ["heuristic", "random", "timid"][i % 3]]);
                }
                arena.bot(token, &args)
            })
            .collect();
        for bot in bots {
            let _ = finish(bot, Duration::from_secs(180)).await;
        }
    }
    let matches = arena.matches().await;
    assert_eq!(matches.len(), 3, "{matches:?}");
    let validator = validator();
    let mut client = arena.client().await;
    let mut logs = Vec::new();
    let mut penalties = 0;
    for summary in &matches {
        let response = client
            .get_match_log(pb::GetMatchLogRequest {
                match_id: summary.match_id.clone(),
            })
            .await
            .expect("the log of a finished match is served")
            .into_inner();
        assert_valid(&validator, &response.log_json, &summary.match_id);
        let log = MatchLog::from_json(&response.log_json).expect("the log reads");
        assert_eq!(log.format_version, LOG_FORMAT_VERSION);
        log.replay().expect("a served log replays");
        penalties += log
            .entries
            .iter()
            .filter(|e| matches!(e, LogEntry::Strike { .. } | LogEntry::Forfeit { .. }))
            .count();
        logs.push((summary.match_id.clone(), response.log_json));
    }
    assert!(penalties > 0, "the illegal bot left no strike in the logs");
    let dir = tempfile::tempdir().unwrap();
    recompute_with_python(&write_logs(dir.path(), &logs));
    assert!(arena.stop().await.success());
}

#[test]
fn the_stranger_s_check_catches_an_altered_die_or_a_kept_die_that_moved() {
    let script = workspace().join("tests/stranger/recompute_dice.py");
    let log = play(&Rules::preset("zokken").unwrap(), 5, 3, false);
    let good: Value = serde_json::from_str(&log.to_json()).unwrap();
    let entries = good["entries"].as_array().unwrap();
    let first = entries.iter().position(|e| e["kind"] == "throw").unwrap();
    let kept = entries
        .iter()
        .position(|e| e["kind"] == "throw" && e["rolled"].as_array().is_some_and(|r| r.len() < 3))
        .expect("a throw that keeps a die");
    let kept_slot = (0..3u64)
        .find(|s| {
            !entries[kept]["rolled"]
                .as_array()
                .unwrap()
                .contains(&(*s).into())
        })
        .unwrap() as usize;
    let dir = tempfile::tempdir().unwrap();
    for (name, index, slot) in [("rolled", first, 0), ("kept", kept, kept_slot)] {
        let mut bad = good.clone();
        let die = bad["entries"][index]["dice"][slot].as_u64().unwrap();
        // Another face of the same Miwin die, so only the dice function can tell.
        let other = MIWIN_FACES[slot]
            .iter()
            .find(|&&f| f as u64 != die)
            .copied()
            .unwrap();
        bad["entries"][index]["dice"][slot] = other.into();
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, bad.to_string()).unwrap();
        match std::process::Command::new("python3")
            .arg(&script)
            .arg(&path)
            .output()
        {
            Ok(out) => {
                assert!(!out.status.success(), "{name}: the altered die passed");
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    err.contains(&format!("entry {index} ")) && err.contains("MISMATCH"),
                    "{name}: {err}"
                );
            }
            Err(e) => assert!(std::env::var_os("CI").is_none(), "python3: {e}"),
        }
    }
}

/// A log stored before logs had a `format_version` (written here straight into the store's
/// database, as an older arena left it) is served by a real arena in the current format.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unversioned_log_in_the_database_is_served_with_its_format_version() {
    use knobel_arena::store::{NewMatch, Store};
    let rules = Rules::preset("sjokken").unwrap();
    let log = play(&rules, 77, 3, true);
    let outcome = log.replay().unwrap().outcome().expect("the match is over");
    let mut old: Value = serde_json::from_str(&log.to_json()).unwrap();
    old.as_object_mut().unwrap().remove("format_version");
    let old = old.to_string();

    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("old.db").display());
    let store = Store::connect(&url).await.expect("a fresh store");
    store
        .insert_match(&NewMatch {
            id: "old-match".into(),
            game: "sjokken".into(),
            preset: "sjokken".into(),
            rules_json: serde_json::to_string(&rules).unwrap(),
            seed: 77,
            seat_names: vec!["a".into(), "b".into(), "c".into()],
            seat_bot_ids: Vec::new(),
            started_at_ms: 1_000,
            league: None,
        })
        .await
        .unwrap();
    store
        .finish_match("old-match", &old, &outcome, 2_000)
        .await
        .unwrap();
    store.close().await;

    let arena = Arena::start_on(ArenaOptions::default(), &url).await;
    let served = arena
        .client()
        .await
        .get_match_log(pb::GetMatchLogRequest {
            match_id: "old-match".into(),
        })
        .await
        .expect("an old log is served")
        .into_inner()
        .log_json;
    assert_valid(&validator(), &served, "the old log as served");
    assert_eq!(MatchLog::format_of(&served).unwrap(), LOG_FORMAT_VERSION);
    assert_eq!(MatchLog::from_json(&served).unwrap(), log);
    assert!(arena.stop().await.success());
}
