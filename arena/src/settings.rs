//! The arena's settings: one typed layer between the command line (`knobel serve` flags and
//! their environment variables) and the server.
//!
//! [`RawSettings`] holds the values as given; [`RawSettings::validate`] checks every one
//! against its [`Bound`] and builds the rules of every preset once (the engine's
//! [`RulesError`] is kept, never swallowed), giving [`Settings`], from which the
//! [`ServerConfig`] and [`LobbyConfig`] are built. An error names the flag (and its
//! environment variable), the bad value and the legal range, so `knobel serve` refuses to
//! start rather than run with a setting it cannot honour.
//!
//! To add a setting: a field in [`RawSettings`] (with its default in `Default`), a [`Bound`]
//! constant, a check in [`RawSettings::validate`], a field in [`Settings`] or the config it
//! feeds, and a flag in `main.rs` that takes the bound's `flag`, `env` and default.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use knobel_engine::{Game, MAX_SEATS, MIN_SEATS, PRESETS, Rules, RulesError};

use crate::auth::AdminToken;
use crate::lobby::LobbyConfig;
use crate::net::NetLimits;
use crate::referee::TimeControl;
use crate::server::ServerConfig;

/// The legal range of a numeric setting, and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// The command-line flag, e.g. `--decision-ms`.
    pub flag: &'static str,
    /// The environment variable that can give it instead, if any.
    pub env: Option<&'static str>,
    /// The smallest legal value.
    pub min: u64,
    /// The largest legal value.
    pub max: u64,
    /// The unit, for messages (e.g. "milliseconds"); empty for a plain count.
    pub unit: &'static str,
}

impl Bound {
    /// A help text: `what`, then the legal range from the bound itself (so the help always
    /// states what [`Bound::check`] applies).
    pub fn help(&self, what: &str) -> String {
        format!(
            "{what} ({}..={}{})",
            self.min,
            self.max,
            unit_suffix(self.unit)
        )
    }

    /// `value` if it is within the bound, else the error naming the flag and the range.
    pub fn check(&self, value: u64) -> Result<u64, SettingsError> {
        if (self.min..=self.max).contains(&value) {
            Ok(value)
        } else {
            Err(SettingsError::OutOfRange {
                setting: Source::of(self),
                value,
                min: self.min,
                max: self.max,
                unit: self.unit,
            })
        }
    }
}

/// Seats per match: the engine's [`MIN_SEATS`]`..=`[`MAX_SEATS`].
pub const SEATS: Bound = Bound {
    flag: "--seats",
    env: Some("KNOBEL_SEATS"),
    min: MIN_SEATS as u64,
    max: MAX_SEATS as u64,
    unit: "",
};
/// The deadline of one decision. The wire carries milliseconds as `u32`; an hour is far
/// below that (and lets a test keep streams idle in a match for as long as it likes).
pub const DECISION_MS: Bound = Bound {
    flag: "--decision-ms",
    env: Some("KNOBEL_DECISION_MS"),
    min: 1,
    max: 3_600_000,
    unit: "milliseconds",
};
/// The time bank of a seat per match (up to an hour; 0 for none).
pub const TIME_BANK_MS: Bound = Bound {
    flag: "--time-bank-ms",
    env: Some("KNOBEL_TIME_BANK_MS"),
    min: 0,
    max: 3_600_000,
    unit: "milliseconds",
};
/// How long a lone bot waits before practice mode fills its match (up to ten minutes).
pub const PRACTICE_WAIT_MS: Bound = Bound {
    flag: "--practice-wait-ms",
    env: Some("KNOBEL_PRACTICE_WAIT_MS"),
    min: 0,
    max: 600_000,
    unit: "milliseconds",
};
/// Open Play streams per bot (the memory benchmark holds thousands of idle streams of one
/// bot; the connection limits bound streams overall).
pub const MAX_STREAMS_PER_BOT: Bound = Bound {
    flag: "--max-streams-per-bot",
    env: Some("KNOBEL_MAX_STREAMS_PER_BOT"),
    min: 1,
    max: 100_000,
    unit: "",
};
/// The grace running matches get on shutdown (up to an hour).
pub const SHUTDOWN_GRACE_SECS: Bound = Bound {
    flag: "--shutdown-grace-secs",
    env: Some("KNOBEL_SHUTDOWN_GRACE_SECS"),
    min: 0,
    max: 3_600,
    unit: "seconds",
};
/// How long one renewal of this arena's lease in the database holds (renewed every third of
/// it): other arenas on the same database abort this one's running matches only once it has
/// not renewed its lease for this long. Up to a day.
pub const INSTANCE_LEASE_SECS: Bound = Bound {
    flag: "--instance-lease-secs",
    env: Some("KNOBEL_INSTANCE_LEASE_SECS"),
    min: 1,
    max: 86_400,
    unit: "seconds",
};
/// How long one store call (waiting for a connection included) may take before it fails:
/// what a client waits at most while the database is unavailable.
pub const STORE_TIMEOUT_MS: Bound = Bound {
    flag: "--store-timeout-ms",
    env: Some("KNOBEL_STORE_TIMEOUT_MS"),
    min: 100,
    max: 600_000,
    unit: "milliseconds",
};
/// The rounds of a Zokken match: bounded by the engine's rules (`Rules::set_number`).
pub const ZOKKEN_ROUNDS: Source = Source {
    flag: "--zokken-rounds",
    env: Some("KNOBEL_ZOKKEN_ROUNDS"),
};
/// The admin token: its length in characters (visible ASCII, as a bearer token).
pub const ADMIN_TOKEN_CHARS: Bound = Bound {
    flag: "--admin-token",
    env: Some("KNOBEL_ADMIN_TOKEN"),
    min: 16,
    max: crate::auth::MAX_TOKEN_LEN as u64,
    unit: "characters",
};

/// Where a setting comes from: its flag and environment variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// The command-line flag.
    pub flag: &'static str,
    /// The environment variable, if any.
    pub env: Option<&'static str>,
}

impl Source {
    fn of(bound: &Bound) -> Source {
        Source {
            flag: bound.flag,
            env: bound.env,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.env {
            Some(env) => write!(f, "{} (env {env})", self.flag),
            None => f.write_str(self.flag),
        }
    }
}

/// A setting that cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A number out of its range.
    #[error(
        "{setting} = {value} is out of range: it must be {min}..={max}{}",
        unit_suffix(unit)
    )]
    OutOfRange {
        /// The setting.
        setting: Source,
        /// The value given.
        value: u64,
        /// The smallest legal value.
        min: u64,
        /// The largest legal value.
        max: u64,
        /// Its unit.
        unit: &'static str,
    },
    /// The engine refuses the rules a setting makes for a preset.
    #[error("{setting} = {value} cannot be played: preset {preset}: {reason}")]
    Rules {
        /// The setting.
        setting: Source,
        /// The value given.
        value: u64,
        /// The preset whose rules refuse it.
        preset: &'static str,
        /// The engine's reason.
        reason: RulesError,
    },
    /// A text setting that is not acceptable; its value is not repeated (it may be secret).
    #[error("{setting} is not acceptable: {reason} (the value is not shown)")]
    Text {
        /// The setting.
        setting: Source,
        /// Why, with the legal form.
        reason: String,
    },
}

fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

/// The rules of every preset, as this arena plays them: built and checked once, at
/// start-up, so that looking one up cannot fail later. Cheap to clone.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetRules {
    rules: Arc<BTreeMap<&'static str, Rules>>,
}

impl Default for PresetRules {
    /// The engine's presets, unchanged.
    fn default() -> PresetRules {
        PresetRules::new(None).expect("the engine's presets are valid")
    }
}

impl PresetRules {
    /// The engine's presets, with Zokken matches of `zokken_rounds` rounds if given
    /// (else the preset's). The engine's [`RulesError`] if it refuses them.
    pub fn new(zokken_rounds: Option<u32>) -> Result<PresetRules, (&'static str, RulesError)> {
        let mut rules = BTreeMap::new();
        for preset in PRESETS {
            let mut preset_rules = Rules::preset(preset).map_err(|e| (preset, e))?;
            if let (Game::Zokken, Some(rounds)) = (preset_rules.game(), zokken_rounds) {
                preset_rules
                    .set_number("rounds", rounds)
                    .map_err(|e| (preset, e))?;
            }
            rules.insert(preset, preset_rules);
        }
        Ok(PresetRules {
            rules: Arc::new(rules),
        })
    }

    /// The rules of `preset`; `None` only for a name that is not a preset.
    pub fn get(&self, preset: &str) -> Option<&Rules> {
        self.rules.get(preset)
    }
}

/// The `knobel serve` settings as given, not yet checked. `Default` holds the defaults of
/// the flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSettings {
    /// Seats per match.
    pub seats: u64,
    /// Seat lone bots against built-in players.
    pub practice: bool,
    /// Practice mode's wait, in milliseconds.
    pub practice_wait_ms: u64,
    /// The decision deadline, in milliseconds.
    pub decision_ms: u64,
    /// The time bank, in milliseconds.
    pub time_bank_ms: u64,
    /// Rounds per Zokken match (`None`: the preset's).
    pub zokken_rounds: Option<u64>,
    /// Open Play streams per bot.
    pub max_streams_per_bot: u64,
    /// Shutdown grace, in seconds.
    pub shutdown_grace_secs: u64,
    /// The instance lease, in seconds.
    pub instance_lease_secs: u64,
    /// The store call timeout, in milliseconds.
    pub store_timeout_ms: u64,
    /// The admin token (`None` disables the Admin service).
    pub admin_token: Option<String>,
}

impl Default for RawSettings {
    fn default() -> RawSettings {
        RawSettings {
            seats: 4,
            practice: false,
            practice_wait_ms: 500,
            decision_ms: 1_000,
            time_bank_ms: 10_000,
            zokken_rounds: None,
            max_streams_per_bot: 8,
            shutdown_grace_secs: 5,
            instance_lease_secs: 30,
            store_timeout_ms: 2_000,
            admin_token: None,
        }
    }
}

/// Checked settings: every value within its bound, the rules of every preset built.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How matches are formed and timed (with the rules of every preset).
    pub lobby: LobbyConfig,
    /// Open Play streams per bot.
    pub max_streams_per_bot: usize,
    /// How long running matches get on shutdown.
    pub shutdown_grace: Duration,
    /// How long one renewal of this arena's lease holds.
    pub instance_lease: Duration,
    /// How long one store call may take.
    pub store_timeout: Duration,
    /// The admin token, if the Admin service is on.
    pub admin_token: Option<AdminToken>,
}

impl RawSettings {
    /// Checks every setting (see the bounds in this module); the first one that is out of
    /// range gives its error.
    pub fn validate(&self) -> Result<Settings, SettingsError> {
        let seats = SEATS.check(self.seats)?;
        let practice_wait_ms = PRACTICE_WAIT_MS.check(self.practice_wait_ms)?;
        let decision_ms = DECISION_MS.check(self.decision_ms)?;
        let time_bank_ms = TIME_BANK_MS.check(self.time_bank_ms)?;
        let max_streams_per_bot = MAX_STREAMS_PER_BOT.check(self.max_streams_per_bot)?;
        let shutdown_grace_secs = SHUTDOWN_GRACE_SECS.check(self.shutdown_grace_secs)?;
        let instance_lease_secs = INSTANCE_LEASE_SECS.check(self.instance_lease_secs)?;
        let store_timeout_ms = STORE_TIMEOUT_MS.check(self.store_timeout_ms)?;
        let presets = match self.zokken_rounds {
            None => PresetRules::default(),
            Some(rounds) => {
                let refused = |preset, reason| SettingsError::Rules {
                    setting: ZOKKEN_ROUNDS,
                    value: rounds,
                    preset,
                    reason,
                };
                // A value beyond u32 is beyond the rules' bound too (1..=100000): the
                // engine names its range, for u32::MAX.
                let wide = u32::try_from(rounds).unwrap_or(u32::MAX);
                PresetRules::new(Some(wide)).map_err(|(preset, e)| refused(preset, e))?
            }
        };
        let admin_token = match &self.admin_token {
            None => None,
            Some(token) => {
                let chars = token.chars().count() as u64;
                let bound = ADMIN_TOKEN_CHARS;
                if !(bound.min..=bound.max).contains(&chars)
                    || !token.bytes().all(|b| b.is_ascii_graphic())
                {
                    return Err(SettingsError::Text {
                        setting: Source::of(&bound),
                        reason: format!(
                            "it has {chars} characters: it must be {}..={} visible ASCII characters (no spaces); leave it unset to disable the Admin service",
                            bound.min, bound.max
                        ),
                    });
                }
                Some(AdminToken::new(token))
            }
        };
        Ok(Settings {
            lobby: LobbyConfig {
                seats: seats as usize,
                practice: self.practice,
                practice_wait: Duration::from_millis(practice_wait_ms),
                time_control: TimeControl {
                    decision: Duration::from_millis(decision_ms),
                    bank: Duration::from_millis(time_bank_ms),
                },
                presets,
            },
            max_streams_per_bot: max_streams_per_bot as usize,
            shutdown_grace: Duration::from_secs(shutdown_grace_secs),
            instance_lease: Duration::from_secs(instance_lease_secs),
            store_timeout: Duration::from_millis(store_timeout_ms),
            admin_token,
        })
    }
}

impl Settings {
    /// The server's configuration, with the connection bounds `net` (checked by
    /// [`crate::net::NetArgs::limits`] against the open-file limit).
    pub fn server_config(&self, net: NetLimits) -> ServerConfig {
        ServerConfig {
            lobby: self.lobby.clone(),
            max_streams_per_bot: self.max_streams_per_bot,
            shutdown_grace: self.shutdown_grace,
            admin_token: self.admin_token.clone(),
            instance_lease: self.instance_lease,
            net,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
