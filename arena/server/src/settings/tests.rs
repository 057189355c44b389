use super::*;
use knobel_engine::{PRESETS, Rules};

fn refused(raw: RawSettings) -> String {
    raw.validate().expect_err("out of range").to_string()
}

#[test]
fn defaults_are_valid_and_match_the_server_defaults() {
    let settings = RawSettings::default().validate().unwrap();
    let config = settings.server_config(NetLimits::default());
    let default = ServerConfig::default();
    assert_eq!(config.lobby.seats, default.lobby.seats);
    assert_eq!(config.lobby.time_control, default.lobby.time_control);
    assert_eq!(config.lobby.practice_wait, default.lobby.practice_wait);
    assert_eq!(config.max_streams_per_bot, default.max_streams_per_bot);
    assert_eq!(config.shutdown_grace, default.shutdown_grace);
    assert!(config.admin_token.is_none());
}

#[test]
fn help_texts_state_the_bounds() {
    assert_eq!(
        DECISION_MS.help("deadline of each decision"),
        "deadline of each decision (1..=3600000 milliseconds)"
    );
    assert_eq!(SEATS.help("seats per match"), "seats per match (2..=10)");
}

#[test]
fn seats_are_the_engines() {
    for seats in [2, 10] {
        let raw = RawSettings {
            seats,
            ..RawSettings::default()
        };
        assert_eq!(raw.validate().unwrap().lobby.seats, seats as usize);
    }
    for seats in [0, 1, 11, u64::MAX] {
        assert_eq!(
            refused(RawSettings {
                seats,
                ..RawSettings::default()
            }),
            format!("--seats (env KNOBEL_SEATS) = {seats} is out of range: it must be 2..=10")
        );
    }
}

#[test]
fn decision_ms_is_bounded() {
    assert_eq!(
        refused(RawSettings {
            decision_ms: 0,
            ..RawSettings::default()
        }),
        "--decision-ms (env KNOBEL_DECISION_MS) = 0 is out of range: it must be 1..=3600000 milliseconds"
    );
    // Values that would truncate to u32 on the wire, or overflow a deadline.
    for decision_ms in [3_600_001, u64::from(u32::MAX) + 1, u64::MAX] {
        assert_eq!(
            refused(RawSettings {
                decision_ms,
                ..RawSettings::default()
            }),
            format!(
                "--decision-ms (env KNOBEL_DECISION_MS) = {decision_ms} is out of range: it must be 1..=3600000 milliseconds"
            )
        );
    }
    let raw = RawSettings {
        decision_ms: 3_600_000,
        ..RawSettings::default()
    };
    assert_eq!(
        raw.validate().unwrap().lobby.time_control.decision,
        Duration::from_secs(3_600)
    );
}

#[test]
fn time_bank_is_bounded() {
    assert_eq!(
        refused(RawSettings {
            time_bank_ms: 3_600_001,
            ..RawSettings::default()
        }),
        "--time-bank-ms (env KNOBEL_TIME_BANK_MS) = 3600001 is out of range: it must be 0..=3600000 milliseconds"
    );
    for time_bank_ms in [0, 3_600_000] {
        let raw = RawSettings {
            time_bank_ms,
            ..RawSettings::default()
        };
        assert!(raw.validate().is_ok());
    }
}

#[test]
fn practice_wait_is_bounded() {
    assert_eq!(
        refused(RawSettings {
            practice_wait_ms: 600_001,
            ..RawSettings::default()
        }),
        "--practice-wait-ms (env KNOBEL_PRACTICE_WAIT_MS) = 600001 is out of range: it must be 0..=600000 milliseconds"
    );
}

#[test]
fn streams_per_bot_are_bounded() {
    for max_streams_per_bot in [0, 100_001] {
        assert_eq!(
            refused(RawSettings {
                max_streams_per_bot,
                ..RawSettings::default()
            }),
            format!(
                "--max-streams-per-bot (env KNOBEL_MAX_STREAMS_PER_BOT) = {max_streams_per_bot} is out of range: it must be 1..=100000"
            )
        );
    }
}

#[test]
fn shutdown_grace_is_bounded() {
    assert_eq!(
        refused(RawSettings {
            shutdown_grace_secs: 3_601,
            ..RawSettings::default()
        }),
        "--shutdown-grace-secs (env KNOBEL_SHUTDOWN_GRACE_SECS) = 3601 is out of range: it must be 0..=3600 seconds"
    );
}

#[test]
fn instance_lease_is_bounded() {
    for (secs, message) in [
        (
            0,
            "--instance-lease-secs (env KNOBEL_INSTANCE_LEASE_SECS) = 0 is out of range: it must be 1..=86400 seconds",
        ),
        (
            86_401,
            "--instance-lease-secs (env KNOBEL_INSTANCE_LEASE_SECS) = 86401 is out of range: it must be 1..=86400 seconds",
        ),
    ] {
        let raw = RawSettings {
            instance_lease_secs: secs,
            ..RawSettings::default()
        };
        assert_eq!(refused(raw), message);
    }
}

#[test]
fn store_timeout_is_bounded() {
    for (ms, message) in [
        (
            99,
            "--store-timeout-ms (env KNOBEL_STORE_TIMEOUT_MS) = 99 is out of range: it must be 100..=600000 milliseconds",
        ),
        (
            600_001,
            "--store-timeout-ms (env KNOBEL_STORE_TIMEOUT_MS) = 600001 is out of range: it must be 100..=600000 milliseconds",
        ),
    ] {
        let raw = RawSettings {
            store_timeout_ms: ms,
            ..RawSettings::default()
        };
        assert_eq!(refused(raw), message);
    }
    let settings = RawSettings::default().validate().unwrap();
    assert_eq!(settings.store_timeout, Duration::from_secs(2));
    assert_eq!(settings.instance_lease, Duration::from_secs(30));
}

#[test]
fn zokken_rounds_keep_the_engines_error() {
    assert_eq!(
        refused(RawSettings {
            zokken_rounds: Some(0),
            ..RawSettings::default()
        }),
        "--zokken-rounds (env KNOBEL_ZOKKEN_ROUNDS) = 0 cannot be played: preset zokken: rounds = 0 is out of range: it must be 1..=100000"
    );
    assert_eq!(
        refused(RawSettings {
            zokken_rounds: Some(u64::from(u32::MAX) + 7),
            ..RawSettings::default()
        }),
        "--zokken-rounds (env KNOBEL_ZOKKEN_ROUNDS) = 4294967302 cannot be played: preset zokken: rounds = 4294967295 is out of range: it must be 1..=100000"
    );
    let settings = RawSettings {
        zokken_rounds: Some(7),
        ..RawSettings::default()
    }
    .validate()
    .unwrap();
    let zokken = settings.lobby.presets.get("zokken").unwrap();
    assert_eq!(zokken, &{
        let mut rules = Rules::preset("zokken").unwrap();
        rules.set_number("rounds", 7).unwrap();
        rules
    });
    // Every preset is there, and only presets.
    for preset in PRESETS {
        assert!(settings.lobby.presets.get(preset).is_some(), "{preset}");
    }
    assert!(settings.lobby.presets.get("poker").is_none());
}

#[test]
fn admin_token_is_checked_without_showing_it() {
    for token in [
        "",
        "short",
        "with space in the token",
        "tab\tin-the-token-xxxx",
    ] {
        let message = refused(RawSettings {
            admin_token: Some(token.to_owned()),
            ..RawSettings::default()
        });
        assert_eq!(
            message,
            format!(
                "--admin-token (env KNOBEL_ADMIN_TOKEN) is not acceptable: it has {} characters: it must be 16..=256 visible ASCII characters (no spaces); leave it unset to disable the Admin service (the value is not shown)",
                token.chars().count()
            )
        );
        if !token.is_empty() {
            assert!(!message.contains(token));
        }
    }
    let raw = RawSettings {
        admin_token: Some("a-long-enough-admin-token".to_owned()),
        ..RawSettings::default()
    };
    assert!(
        raw.validate()
            .unwrap()
            .admin_token
            .unwrap()
            .verifies("a-long-enough-admin-token")
    );
}

#[test]
fn web_listen_is_an_address_or_off() {
    use super::{WebListen, WebListenError};
    assert_eq!("off".parse::<WebListen>(), Ok(WebListen(None)));
    assert_eq!(
        "127.0.0.1:0".parse::<WebListen>(),
        Ok(WebListen(Some("127.0.0.1:0".parse().unwrap())))
    );
    let err = "localhost".parse::<WebListen>().unwrap_err();
    assert_eq!(err, WebListenError("\"localhost\"".to_owned()));
    assert_eq!(
        err.to_string(),
        "--web-listen \"localhost\" is not legal: give an address HOST:PORT (e.g. \
         127.0.0.1:8080; port 0 picks a free port) or off"
    );
}
