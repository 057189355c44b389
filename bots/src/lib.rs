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

/// The most addresses a bot's list may name ([`endpoints`]).
pub const MAX_SERVERS: usize = 64;

/// The longest prefix of a bad address an error repeats.
const SHOWN_ADDRESS_CHARS: usize = 100;

/// The endpoint for `server`: `http://HOST:PORT`, or a bare `HOST:PORT` (`http://` is
/// added). `https://` is refused: this crate enables no TLS.
pub fn endpoint(server: &str) -> Result<Endpoint, BotError> {
    let invalid = |reason: String| invalid_server(server, reason);
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

/// [`BotError::InvalidServer`] for `address` (a bounded prefix of it) and `reason`.
fn invalid_server(address: &str, reason: String) -> BotError {
    BotError::InvalidServer {
        address: address.chars().take(SHOWN_ADDRESS_CHARS).collect(),
        reason,
    }
}

/// The endpoints of `servers`: one address (see [`endpoint`]) or several separated by
/// commas, the replicas of one arena cluster without a load balancer in front
/// (`http://a:50051,http://b:50051`). A bot connects to the first and, each time it has to
/// connect again, to the next, after the last to the first. At most [`MAX_SERVERS`]; an
/// empty entry is refused.
pub fn endpoints(servers: &str) -> Result<Vec<Endpoint>, BotError> {
    let list: Vec<&str> = servers.split(',').map(str::trim).collect();
    if list.len() > MAX_SERVERS {
        let reason = format!(
            "{} addresses, at most {MAX_SERVERS} may be listed",
            list.len()
        );
        return Err(invalid_server(servers, reason));
    }
    list.into_iter()
        .map(|server| match server {
            "" => Err(invalid_server(
                servers,
                "an empty address in the list (separate addresses by single commas)".to_owned(),
            )),
            server => endpoint(server),
        })
        .collect()
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

    #[test]
    fn a_list_of_servers_is_checked_whole_and_bounded() {
        let uris = |servers: &str| -> Vec<String> {
            endpoints(servers)
                .unwrap()
                .iter()
                .map(|e| e.uri().to_string())
                .collect()
        };
        assert_eq!(uris("127.0.0.1:5"), ["http://127.0.0.1:5/"]);
        assert_eq!(
            uris("127.0.0.1:5, http://10.0.0.2:6"),
            ["http://127.0.0.1:5/", "http://10.0.0.2:6/"]
        );
        for bad in ["", "127.0.0.1:5,", "127.0.0.1:5,,127.0.0.1:6"] {
            let error = endpoints(bad).unwrap_err().to_string();
            assert!(error.contains("an empty address in the list"), "{error}");
        }
        // One bad entry refuses the list, naming that entry.
        let error = endpoints("127.0.0.1:5,https://b:6")
            .unwrap_err()
            .to_string();
        assert!(error.contains("\"https://b:6\""), "{error}");
        // The edge: 64 addresses are taken, 65 are not, and the error repeats a prefix.
        let list = |n: usize| vec!["127.0.0.1:5"; n].join(",");
        assert_eq!(endpoints(&list(MAX_SERVERS)).unwrap().len(), MAX_SERVERS);
        let error = endpoints(&list(MAX_SERVERS + 1)).unwrap_err().to_string();
        assert!(error.contains("65 addresses, at most 64"), "{error}");
        assert!(error.len() < 300, "{error}");
        let long = format!("https://{}:5", "a".repeat(10_000));
        assert!(endpoint(&long).unwrap_err().to_string().len() < 300);
    }
}
