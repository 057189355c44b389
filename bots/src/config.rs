//! How a bot connects and plays: [`BotConfig`] and the reconnect [`Backoff`].

use std::time::Duration;

use knobel_engine::Game;
use rand::RngExt;

use crate::auth::Token;
use crate::misbehave::Misbehave;

/// The client version a bot built on this library sends in its Hello.
pub const CLIENT_VERSION: &str = concat!("knobel-bots ", env!("CARGO_PKG_VERSION"));

/// How often a bot sends a Ping to keep idle proxies from closing its stream.
pub const PING_INTERVAL: Duration = Duration::from_secs(20);

/// Everything [`crate::run_bot`] needs to know. Build it with [`BotConfig::new`] and set
/// the public fields for the rest.
#[derive(Clone, Debug)]
pub struct BotConfig {
    /// The arena's address: `http://HOST:PORT` (a bare `HOST:PORT` gets `http://`); or
    /// the addresses of an arena cluster's replicas, separated by commas: the bot connects
    /// to the first and moves on to the next each time it has to reconnect
    /// ([`endpoints`](crate::endpoints)).
    pub server: String,
    /// The bot's token (`knobel bot add NAME` prints it). Never logged.
    pub token: Token,
    /// The display name sent in the Hello, by the arena's name rule (`knobel_proto::names`:
    /// 1 to 32 characters, nothing invisible, not `builtin-...`).
    pub name: String,
    /// The games the bot plays: at least one, each once.
    pub games: Vec<Game>,
    /// A preset the bot would like to play ("schocken", "schocken-typenclub", "sjokken",
    /// "zokken"); its game must be in `games`.
    pub preset: Option<String>,
    /// Stop after this many match results (finished or aborted); `None` plays forever.
    pub max_matches: Option<u32>,
    /// The client version sent in the Hello.
    pub client_version: String,
    /// How often to send a keep-alive Ping; `None` sends none.
    pub ping_interval: Option<Duration>,
    /// How long to wait between reconnect attempts.
    pub backoff: Backoff,
    /// Give up after this many failed connection attempts in a row; `None` retries forever.
    /// A refused token (UNAUTHENTICATED) or a refused Hello ends the bot at once anyway.
    pub max_attempts: Option<u32>,
    /// Misbehave on purpose, to test how an arena copes (see [`Misbehave`]). `None` for a
    /// well-behaved bot. Only with the feature `testing`.
    #[cfg(feature = "testing")]
    pub misbehave: Option<Misbehave>,
}

impl BotConfig {
    /// A configuration with the defaults: no preset wish, no match limit, a Ping every 20 s,
    /// backoff from 100 ms doubling to 10 s, retrying forever, behaving well.
    pub fn new(
        server: impl Into<String>,
        token: impl Into<Token>,
        name: impl Into<String>,
        games: impl IntoIterator<Item = Game>,
    ) -> BotConfig {
        BotConfig {
            server: server.into(),
            token: token.into(),
            name: name.into(),
            games: games.into_iter().collect(),
            preset: None,
            max_matches: None,
            client_version: CLIENT_VERSION.to_owned(),
            ping_interval: Some(PING_INTERVAL),
            backoff: Backoff::default(),
            max_attempts: None,
            #[cfg(feature = "testing")]
            misbehave: None,
        }
    }

    /// How the bot misbehaves: never without the feature `testing`.
    pub(crate) fn misbehave(&self) -> Option<Misbehave> {
        #[cfg(feature = "testing")]
        return self.misbehave;
        #[cfg(not(feature = "testing"))]
        return None;
    }
}

/// Exponential backoff with jitter: the first wait is about `initial`, each failure doubles
/// it up to `max`, and a successful Welcome starts over. Every wait is drawn uniformly from
/// the upper half of the current step, so that many bots restarted together do not all
/// reconnect at the same instant.
#[derive(Clone, Debug)]
pub struct Backoff {
    /// The first wait.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
    current: Duration,
}

impl Backoff {
    /// Backoff from `initial` doubling up to `max`.
    pub fn new(initial: Duration, max: Duration) -> Backoff {
        Backoff {
            initial,
            max,
            current: initial,
        }
    }

    /// The next wait, with jitter; doubles the step for the time after.
    pub fn next_delay(&mut self) -> Duration {
        let step = self.current.min(self.max);
        self.current = step.saturating_mul(2).min(self.max);
        let half = step / 2;
        let jitter_ms = half.as_millis() as u64;
        let jitter = if jitter_ms == 0 {
            0
        } else {
            rand::rng().random_range(0..=jitter_ms)
        };
        half + Duration::from_millis(jitter)
    }

    /// Starts over from `initial` (after a successful connection).
    pub fn reset(&mut self) {
        self.current = self.initial;
    }
}

impl Default for Backoff {
    /// 100 ms doubling to 10 s.
    fn default() -> Backoff {
        Backoff::new(Duration::from_millis(100), Duration::from_secs(10))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter_and_resets() {
        let mut backoff = Backoff::default();
        let mut steps = Vec::new();
        for _ in 0..10 {
            steps.push(backoff.next_delay());
        }
        // Each wait lies in [step / 2, step] for steps 100, 200, 400, ... capped at 10 s.
        let mut step = Duration::from_millis(100);
        for wait in &steps {
            assert!(
                *wait >= step / 2 && *wait <= step,
                "{wait:?} for step {step:?}"
            );
            step = (step * 2).min(Duration::from_secs(10));
        }
        assert!(steps[9] >= Duration::from_secs(5));
        backoff.reset();
        assert!(backoff.next_delay() <= Duration::from_millis(100));
    }

    #[test]
    fn the_default_client_version_names_the_library() {
        assert!(CLIENT_VERSION.starts_with("knobel-bots "));
        let config = BotConfig::new("http://x:1", "knb_t", "b", [Game::Zokken]);
        assert_eq!(config.client_version, CLIENT_VERSION);
        assert!(!format!("{config:?}").contains("knb_t"));
    }
}
