//! A Rust client library for the Knobel arena, and the reference bot `knobel-bot`.
//!
//! A bot connects to the arena over gRPC (the contract is `proto/knobel/v1/arena.proto`),
//! says Hello, and answers every decision request with an action. This crate does the
//! talking; a bot supplies only the decisions, with engine types:
//!
//! ```no_run
//! use knobel_bots::{BotConfig, Game, run_bot};
//! use knobel_engine::{Action, Observation};
//!
//! # async fn example() -> Result<(), knobel_bots::BotError> {
//! let config = BotConfig::new("http://127.0.0.1:50051", "knb_...", "first-legal", [Game::Zokken]);
//! // Any closure over (observation, legal actions) is a policy; so are the engine's.
//! let report = run_bot(config, |_seen: &Observation, legal: &[Action]| legal[0]).await?;
//! # Ok(()) }
//! ```
//!
//! - [`connect`] opens an authenticated [`Client`] (the generated
//!   [`ArenaClient`](knobel_proto::v1::arena_client::ArenaClient) with the bearer token on
//!   every call), for the read-only RPCs or a hand-written Play loop.
//! - [`run_bot`] / [`Bot`] run the whole Play loop: Hello, decisions through a
//!   [`BotPolicy`], keep-alive Pings every 20 s, logging with `tracing`, a stop after
//!   [`BotConfig::max_matches`], and reconnects with exponential [`Backoff`] (none after a
//!   refused token).
//!
//! - [`ExecBot`] runs the same loop for a program in any language that reads and writes
//!   JSON lines on its stdin and stdout (`knobel-bot --exec CMD`, docs/stdio-bots.md).
//!
//! With the cargo feature `testing` (off by default), `misbehave` makes a bot misbehave on
//! purpose, for testing arenas: `BotConfig::misbehave` takes a `Misbehave` mode, and
//! `knobel-bot` gets its `--misbehave MODE` flag. Well-behaved bots never need it.
//!
//! The token is a secret: [`Token`] never shows it in `Debug` or `Display`, and nothing here
//! logs it. Connections are plaintext HTTP/2 (`http://`); put the arena behind a TLS
//! terminating proxy on untrusted networks.
#![warn(missing_docs)]

mod answer;
mod auth;
mod codec;
mod config;
mod error;
mod exec;
#[cfg(feature = "testing")]
pub mod misbehave;
#[cfg(not(feature = "testing"))]
mod misbehave;
mod policy;
mod session;
mod summary;

use std::time::Duration;

use knobel_proto::v1::arena_client::ArenaClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

pub use auth::{BearerAuth, Token};
pub use config::{Backoff, BotConfig, CLIENT_VERSION, PING_INTERVAL};
pub use error::{BotError, non_grpc_answer, wrong_port_message};
pub use exec::{EXIT_GRACE, ExecBot, MAX_LINE_BYTES, Program, STDIN_QUEUE_LINES};
pub use knobel_engine::{Action, Game, Observation};
#[cfg(feature = "testing")]
pub use misbehave::Misbehave;
pub use policy::{BotPolicy, EnginePolicy, STRATEGIES, strategy};
pub use session::{Bot, run_bot};
pub use summary::{MatchSummary, RunReport};

/// A channel that adds the bot's bearer token to every call.
pub type AuthChannel = InterceptedService<Channel, BearerAuth>;

/// The generated arena client on an authenticated channel.
pub type Client = ArenaClient<AuthChannel>;

/// How long connecting may take before it counts as failed.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The endpoint for `server`: `http://HOST:PORT`, or a bare `HOST:PORT` (`http://` is
/// added). `https://` is refused: this crate enables no TLS.
pub fn endpoint(server: &str) -> Result<Endpoint, BotError> {
    let invalid = |reason: String| BotError::InvalidServer {
        address: server.to_owned(),
        reason,
    };
    let address = if server.contains("://") {
        server.to_owned()
    } else {
        format!("http://{server}")
    };
    if !address.starts_with("http://") {
        return Err(invalid(
            "only plaintext http:// is supported (no TLS in this client)".to_owned(),
        ));
    }
    let endpoint = Endpoint::from_shared(address).map_err(|e| invalid(e.to_string()))?;
    Ok(endpoint
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(10)))
}

/// Connects to the arena at `server` (see [`endpoint`]) and returns a client that sends
/// `authorization: Bearer <token>` with every call.
///
/// Connecting does not check the token: the arena checks it when a Play stream opens.
pub async fn connect(server: &str, token: &str) -> Result<Client, BotError> {
    let auth = BearerAuth::new(&Token::new(token))?;
    let channel = endpoint(server)?.connect().await?;
    Ok(ArenaClient::with_interceptor(channel, auth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_addresses_get_a_scheme_and_https_is_refused() {
        assert_eq!(
            endpoint("127.0.0.1:5").unwrap().uri().to_string(),
            "http://127.0.0.1:5/"
        );
        assert!(endpoint("http://localhost:50051").is_ok());
        assert!(matches!(
            endpoint("https://example.invalid:443"),
            Err(BotError::InvalidServer { .. })
        ));
        assert!(endpoint("http://bad host").is_err());
    }
}
