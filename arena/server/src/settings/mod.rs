//! The arena's settings: one typed layer between the command line (`knobel serve` flags and
//! their environment variables) and the server.
//!
//! [`RawSettings`] holds the values as given; [`RawSettings::validate`] checks every one
//! against its [`Bound`] and builds the rules of every preset once (the engine's
//! [`RulesError`] is kept, never swallowed), giving [`Settings`], from which the
//! [`ServerConfig`] and [`LobbyConfig`] are built. The connection-level flags ([`NetArgs`])
//! are checked the same way, against their bounds in [`net_limits`] and the open-file
//! limit, giving the [`NetLimits`] that [`crate::net`] consumes. An error names the flag
//! (and its environment variable), the bad value and the legal range, so `knobel serve`
//! refuses to start rather than run with a setting it cannot honour.
//!
//! To add a setting: a field in [`RawSettings`] (with its default in `Default`), a [`Bound`]
//! constant, a check in [`RawSettings::validate`], a field in [`Settings`] or the config it
//! feeds, and a flag in `main.rs` that takes the bound's `flag`, `env` and default. (A
//! connection-level one: a field in [`NetArgs`] and [`NetLimits`], its bound and check in
//! [`net_limits`].)

pub mod net_limits;

use std::fmt;
use std::time::Duration;

use knobel_engine::{MAX_SEATS, MIN_SEATS, RulesError};

use crate::auth::AdminToken;
use crate::config::ServerConfig;
use crate::lobby::{LobbyConfig, PresetRules};
use crate::referee::TimeControl;

use self::net_limits::RESERVED_FDS;
pub use self::net_limits::{NetArgs, NetLimits, NetLimitsError};

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

    /// This bound with its largest legal value lowered to `max` (for a bound that another
    /// setting caps, e.g. connections per peer by connections in all).
    pub const fn at_most(self, max: u64) -> Bound {
        Bound {
            max: if max < self.max { max } else { self.max },
            ..self
        }
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
    /// The idle timeout would close bots that answer every keepalive ping.
    #[error(
        "--idle-timeout-ms {idle_ms} is too short: it must exceed --http2-keepalive-interval-ms plus --http2-keepalive-timeout-ms ({keepalive_ms}), or bots waiting for a match would be closed"
    )]
    IdleBelowKeepalive {
        /// The idle timeout, in milliseconds.
        idle_ms: u64,
        /// The keepalive interval plus its timeout, in milliseconds.
        keepalive_ms: u64,
    },
    /// More connections than the open-file limit can carry.
    #[error(
        "--max-connections {value} is more than the open-file limit of {fd_limit} can carry: at most {most} (the limit less {RESERVED_FDS} kept for the database, logs and metrics); raise the hard limit (ulimit -Hn) or lower --max-connections"
    )]
    OverFdLimit {
        /// The bound given.
        value: usize,
        /// The open-file limit.
        fd_limit: u64,
        /// The most it can carry.
        most: usize,
    },
    /// An open-file limit too low for any connection.
    #[error(
        "the open-file limit of {fd_limit} leaves no room for connections: at least {} open files are needed; raise it with ulimit -n",
        RESERVED_FDS + 1
    )]
    FdLimitTooLow {
        /// The open-file limit.
        fd_limit: u64,
    },
}

fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
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
    /// The built-in player practice seats (one of `knobel_engine::policy::POLICY_NAMES`).
    pub practice_opponent: &'static str,
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
            practice_opponent: "heuristic",
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
                practice_opponents: vec![self.practice_opponent],
                time_control: TimeControl {
                    decision: Duration::from_millis(decision_ms),
                    time_bank: Duration::from_millis(time_bank_ms),
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
    /// [`NetArgs::limits`] against the open-file limit).
    pub fn server_config(&self, net: NetLimits) -> ServerConfig {
        ServerConfig {
            lobby: self.lobby.clone(),
            max_streams_per_bot: self.max_streams_per_bot,
            shutdown_grace: self.shutdown_grace,
            admin_token: self.admin_token.clone(),
            instance_lease: self.instance_lease,
            net,
            cluster: None,
        }
    }
}

#[cfg(test)]
mod tests;

/// `--web-listen`: the web viewer's address (port 0 picks a free port), or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebListen(pub Option<std::net::SocketAddr>);

/// A `--web-listen` value that is neither an address nor `off` (the value, quoted: a bounded
/// prefix of it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--web-listen {0} is not legal: give an address HOST:PORT (e.g. 127.0.0.1:8080; port 0 \
     picks a free port) or off"
)]
pub struct WebListenError(pub String);

impl std::str::FromStr for WebListen {
    type Err = WebListenError;

    fn from_str(s: &str) -> Result<WebListen, WebListenError> {
        if s == "off" {
            return Ok(WebListen(None));
        }
        s.parse()
            .map(|addr| WebListen(Some(addr)))
            .map_err(|_| WebListenError(knobel_engine::quoted(s)))
    }
}
