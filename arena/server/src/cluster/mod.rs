//! Cluster mode: several arenas on one PostgreSQL store play one league together
//! (docs/operations.md, "Several arenas").
//!
//! PostgreSQL stays the authority for matches, claims and leases (the store's claims,
//! `instance.rs`' fencing). NATS (core NATS, `async-nats`) carries control messages only:
//! - **presence** (`presence.rs`): each arena publishes which bots wait on it and with how
//!   many streams per game, as a versioned change on every change (only what changed) and
//!   a snapshot every second, which repairs a missed change; an arena not heard of for
//!   [`presence::PRESENCE_TTL`] holds nothing;
//! - **league starts** (`leagues.rs`): a league started through one arena is told to the
//!   others, which keep its bots' streams for league matches at once;
//! - **failed logins** (`logins.rs`): each arena tells the others the addresses of its
//!   failed logins, which their login throttles count too;
//! - **reservations** (`reserve.rs`): the referee of a league match asks the arena holding
//!   a seat's bot, by request-reply, for one of its waiting streams; the holder takes it out
//!   of its lobby and answers with a single-use ticket that expires after
//!   [`reserve::TICKET_TTL`] (the stream then waits again).
//!
//! The seat itself is linked over TCP (`relay.rs`, framed `knobel.peer.v1` messages:
//! `frames.rs`): the referee connects to the holder's peer port and opens the link with the
//! peer token and the ticket; the holder hands the referee's messages to the bot's stream
//! and its answers back. Deadlines
//! and time banks are kept at the referee. `pool.rs` is the league scheduler's
//! [`SeatPool`](crate::lobby::SeatPool) over all of it: this arena's lobby and the others'
//! presence, with a preferred referee for each match.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tracing::info;

mod frames;
mod leagues;
mod logins;
pub mod metrics;
mod pool;
pub mod presence;
mod relay;
pub mod reserve;

pub use metrics::ClusterMetrics;
pub use pool::ClusterPool;

use crate::lobby::Lobby;
use crate::net::AuthThrottle;
use crate::streams::StreamRegistry;

/// How long the arena waits for NATS at start-up, and for a reservation's answer.
pub const NATS_TIMEOUT: Duration = Duration::from_secs(3);

/// The subjects of one cluster's control messages start with this.
const SUBJECT_PREFIX: &str = "knobel.cluster";

/// What cluster mode is given (`knobel serve --nats-url ... --peer-listen ...`).
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// The NATS server(s), as async-nats takes them (`nats://host:4222`, comma-separated).
    pub nats_url: String,
    /// Where the peer port listens.
    pub peer_listen: SocketAddr,
    /// The address other arenas reach this one's peer port at (`host:port`); `None`: the
    /// bound address (fine when it is not a wildcard).
    pub peer_advertise: Option<String>,
    /// The token every peer link opens with.
    pub peer_token: String,
}

/// Why cluster mode cannot start. Each names the flag to fix.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// Cluster mode needs PostgreSQL.
    #[error(
        "--nats-url needs a PostgreSQL store (the cluster's authority), not {backend}: give --database-url postgres://..., or drop --nats-url to run one arena on SQLite"
    )]
    NotPostgres {
        /// The store's backend.
        backend: &'static str,
    },
    /// NATS cannot be reached.
    #[error(
        "cannot reach NATS at {url} (--nats-url) within {secs} s: {reason}; start the NATS server or fix the URL"
    )]
    Nats {
        /// The URL, bounded.
        url: String,
        /// The wait.
        secs: u64,
        /// Why.
        reason: String,
    },
    /// The peer port cannot listen.
    #[error("cannot listen for peers on {addr} (--peer-listen): {source}")]
    PeerListen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The advertised peer address does not reach this arena.
    #[error(
        "the peer address {advertised} (--peer-advertise) does not answer as this arena: {reason}; advertise an address of this host that other arenas can reach and that leads to --peer-listen"
    )]
    PeerAdvertise {
        /// The advertised address.
        advertised: String,
        /// What happened.
        reason: String,
    },
    /// The peer token is missing or too short.
    #[error(
        "--peer-token (KNOBEL_PEER_TOKEN) must be given in cluster mode, 16 to 256 visible ASCII characters (no spaces), the same on every arena; got {len} characters"
    )]
    PeerToken {
        /// Its length.
        len: usize,
    },
}

/// A running arena's part of the cluster: its identity, the broker and what it knows of the
/// other arenas.
pub struct Cluster {
    /// This arena's instance id.
    pub instance: String,
    /// Where other arenas reach this one's peer port.
    pub peer_address: String,
    token: Arc<str>,
    /// The peer token's hash, that links opened on the peer port are checked against.
    token_check: crate::auth::AdminToken,
    nats: async_nats::Client,
    presence: presence::Presence,
    tickets: reserve::Tickets,
    metrics: ClusterMetrics,
    /// The arena's shutdown signal.
    shutdown: watch::Receiver<bool>,
    /// How long after the shutdown signal a seat held for another arena's match is given up
    /// (before this arena's own streams close at the end of its grace).
    relay_grace: Duration,
}

impl Cluster {
    /// Joins the cluster: connects to NATS (or fails naming `--nats-url`), serves the peer
    /// port until `shutdown`, checks that the advertised address answers as this arena, and
    /// starts presence (the waiting streams of `lobby` and the open `streams` of each bot),
    /// reservations and the tickets' expiry, and shares the failed logins of `throttle`
    /// with the other arenas. Seats held here for other arenas' matches are
    /// given up (those matches abort) within `shutdown_grace` after the shutdown signal.
    pub async fn join(
        config: &ClusterConfig,
        instance: String,
        (lobby, streams, throttle): (Arc<Lobby>, StreamRegistry, Arc<AuthThrottle>),
        metrics: ClusterMetrics,
        (shutdown, shutdown_grace): (watch::Receiver<bool>, Duration),
    ) -> Result<Arc<Cluster>, ClusterError> {
        check_token(&config.peer_token)?;
        let nats = connect_nats(&config.nats_url).await?;
        let peer_listener = tokio::net::TcpListener::bind(config.peer_listen)
            .await
            .map_err(|source| ClusterError::PeerListen {
                addr: config.peer_listen,
                source,
            })?;
        let bound = peer_listener
            .local_addr()
            .map_err(|source| ClusterError::PeerListen {
                addr: config.peer_listen,
                source,
            })?;
        let peer_address = config
            .peer_advertise
            .clone()
            .unwrap_or_else(|| bound.to_string());
        let cluster = Arc::new(Cluster {
            instance,
            peer_address,
            token: config.peer_token.as_str().into(),
            token_check: crate::auth::AdminToken::new(&config.peer_token),
            nats,
            presence: presence::Presence::default(),
            tickets: reserve::Tickets::default(),
            metrics,
            shutdown: shutdown.clone(),
            relay_grace: shutdown_grace.mul_f64(0.8),
        });
        relay::serve_peers(
            cluster.clone(),
            lobby.clone(),
            peer_listener,
            shutdown.clone(),
        );
        relay::check_advertised(&cluster).await?;
        presence::start(cluster.clone(), (lobby.clone(), streams), shutdown.clone()).await;
        reserve::start(cluster.clone(), lobby, shutdown).await;
        logins::share(cluster.clone(), throttle).await;
        // The subscriptions are with the server before the arena serves (async-nats sends
        // them with its next flush otherwise, and what others publish meanwhile is missed).
        let _ = tokio::time::timeout(NATS_TIMEOUT, cluster.nats.flush()).await;
        info!(instance = %cluster.instance, peer = %cluster.peer_address, "joined the cluster");
        Ok(cluster)
    }

    fn subject(&self, kind: &str, instance: &str) -> String {
        format!("{SUBJECT_PREFIX}.{kind}.{instance}")
    }

    /// The Play streams bot `bot` has open on the other arenas, as their presence last said.
    pub fn streams_elsewhere(&self, bot: &str) -> usize {
        self.presence.open_streams(bot)
    }

    /// Whether NATS is connected now (while it is not, nothing is asked of other arenas).
    fn nats_connected(&self) -> bool {
        self.nats.connection_state() == async_nats::connection::State::Connected
    }
}

/// The peer token: 16 to 256 visible ASCII characters (a bearer token).
fn check_token(token: &str) -> Result<(), ClusterError> {
    let len = token.chars().count();
    if !(16..=256).contains(&len) || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ClusterError::PeerToken { len });
    }
    Ok(())
}

/// Connects to NATS within [`NATS_TIMEOUT`], reconnecting by itself afterwards.
async fn connect_nats(url: &str) -> Result<async_nats::Client, ClusterError> {
    let failed = |reason: String| ClusterError::Nats {
        url: url.chars().take(200).collect(),
        secs: NATS_TIMEOUT.as_secs(),
        reason,
    };
    let options = async_nats::ConnectOptions::new()
        .request_timeout(Some(NATS_TIMEOUT))
        .connection_timeout(NATS_TIMEOUT)
        // Back within a second of the server's return (presence follows within another).
        .reconnect_delay_callback(|attempts| Duration::from_millis(100 * attempts.min(10) as u64))
        .name("knobel-arena");
    match tokio::time::timeout(NATS_TIMEOUT, options.connect(url)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(error)) => Err(failed(error.to_string())),
        Err(_) => Err(failed("no answer".to_owned())),
    }
}
