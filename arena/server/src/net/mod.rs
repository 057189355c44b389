//! Defences at the connection level, against clients that misbehave before (or instead of)
//! playing: bounds on TCP connections, in all and per peer address; a handshake and an idle
//! timeout; the open-file limit; bounds on Play streams that have not sent their Hello; and
//! a throttle on failed logins per peer address.
//!
//! [`incoming`] is the accept loop the gRPC server is given: a connection over a bound is
//! closed at once (and logged, at most once per [`REFUSAL_LOG_INTERVAL`]); an admitted one
//! is a [`LimitedIo`], which closes itself when the client sends nothing for too long. A
//! bot that waits for a match sends nothing itself, but the server's HTTP/2 keepalive pings
//! (every [`NetLimits::keepalive_interval`]) make its client answer, which keeps it alive:
//! that is why the idle timeout must exceed the keepalive interval plus its timeout.
//!
//! Peer addresses are counted per IPv4 address and per IPv6 /64 prefix (one host usually
//! has a whole /64), see [`peer_key`].
//!
//! This file is the accept loop; `peers.rs` counts per peer address ([`PeerCounter`]),
//! `throttle.rs` throttles failed logins ([`AuthThrottle`]), `connection.rs` is the admitted
//! connection ([`LimitedIo`]), `metrics.rs` holds [`NetMetrics`] and the metrics endpoint's
//! [`MetricsListener`], `web.rs` the web viewer's [`WebListener`]. The limits themselves, their flags and their checks are settings:
//! the settings (`settings/net_limits.rs`), which check the [`NetLimits`] defined here.

mod connection;
mod limits;
mod metrics;
mod peers;
mod throttle;
mod web;

use std::io;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_stream::Stream;
use tracing::warn;

pub use self::connection::{HTTP2_PREFACE_BYTES, LimitedIo};
pub use self::limits::NetLimits;
pub use self::metrics::{METRICS_MAX_CONNECTIONS, MetricsListener, NetMetrics};
pub use self::peers::{Over, PeerCounter, Permit, peer_key};
pub use self::throttle::AuthThrottle;
pub use self::web::{
    USUAL_WEB_ADDR, WEB_IDLE_TIMEOUT, WEB_MAX_CONNECTIONS, WebBinding, WebListener, bind_web_viewer,
};

/// Refused connections are logged at most once per this interval (with how many were
/// refused since).
pub const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Raises the soft open-file limit to the hard limit and returns the soft limit now in
/// force.
pub fn raise_fd_limit() -> io::Result<u64> {
    rlimit::increase_nofile_limit(u64::MAX)
}

// ---------------------------------------------------------------------------------------
// Accepting
// ---------------------------------------------------------------------------------------

/// Logs a kind of event at most once per [`REFUSAL_LOG_INTERVAL`], with how many were not
/// logged since.
struct RateLimitedLog {
    last: Option<Instant>,
    suppressed: u64,
}

impl RateLimitedLog {
    fn new() -> RateLimitedLog {
        RateLimitedLog {
            last: None,
            suppressed: 0,
        }
    }

    /// `Some(suppressed since the last one)` if this event is to be logged.
    fn due(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < REFUSAL_LOG_INTERVAL)
        {
            self.suppressed += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.suppressed))
    }
}

/// Accepts the connections of a listener within bounds: the arena's ([`incoming`]) and
/// the metrics endpoint's ([`MetricsListener`]).
struct Acceptor {
    listener: TcpListener,
    connections: PeerCounter,
    limits: NetLimits,
    metrics: NetMetrics,
    /// Refusals over the bound in all and over the bound per peer, logged apart.
    refusals: [RateLimitedLog; 2],
    /// What is counted and the settings of its bounds, for the log.
    what: &'static str,
    flags: [&'static str; 2],
    accept_errors: RateLimitedLog,
}

impl Acceptor {
    /// Accepts from `listener` within `limits`; refusals name `what` is counted and the
    /// settings of its bounds, `flags` (in all, per peer).
    fn new(
        listener: TcpListener,
        limits: NetLimits,
        metrics: NetMetrics,
        what: &'static str,
        flags: [&'static str; 2],
    ) -> Acceptor {
        Acceptor {
            listener,
            connections: PeerCounter::new(limits.max_connections, limits.max_connections_per_peer),
            limits,
            metrics,
            refusals: [RateLimitedLog::new(), RateLimitedLog::new()],
            what,
            flags,
            accept_errors: RateLimitedLog::new(),
        }
    }

    /// The next connection within the bounds; those over them are closed at once. An
    /// error that leaves the listening socket unusable ([`listener_is_broken`]) is logged
    /// and retried like the others, every 50 ms.
    async fn next(&mut self) -> LimitedIo {
        loop {
            match self.next_or_broken().await {
                Ok(io) => return io,
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    /// [`Acceptor::next`], but an error that leaves the listening socket unusable is
    /// returned: retrying it cannot succeed.
    async fn next_or_broken(&mut self) -> io::Result<LimitedIo> {
        loop {
            let (stream, peer) = match self.listener.accept().await {
                Ok(accepted) => accepted,
                Err(error) if listener_is_broken(&error) => return Err(error),
                Err(error) => {
                    if let Some(suppressed) = self.accept_errors.due() {
                        warn!(%error, suppressed, "cannot accept a connection");
                    }
                    // Out of files or memory: the connection stays in the backlog; give
                    // the process a moment rather than spin.
                    if !matches!(
                        error.kind(),
                        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
                    ) {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    continue;
                }
            };
            match self.connections.acquire(peer.ip()) {
                Ok(permit) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(LimitedIo::new(
                        stream,
                        peer,
                        permit,
                        &self.limits,
                        &self.metrics,
                    ));
                }
                Err(over) => {
                    drop(stream);
                    let (bound, log) = match over {
                        Over::Total { .. } => ("total", &mut self.refusals[0]),
                        Over::Peer { .. } => ("peer", &mut self.refusals[1]),
                    };
                    self.metrics.refused.with_label_values(&[bound]).inc();
                    if let Some(suppressed) = log.due() {
                        warn!(
                            peer = %peer.ip(),
                            suppressed,
                            "connection refused: {}",
                            over.message(self.what, peer.ip(), self.flags[0], self.flags[1])
                        );
                    }
                }
            }
        }
    }
}

/// Whether an accept error means the listening socket itself is unusable (closed, shut
/// down, not a listening socket), so that no retry can succeed; other errors (out of files
/// or memory, an aborted handshake) pass.
fn listener_is_broken(error: &io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EBADF | libc::EINVAL | libc::ENOTSOCK | libc::EOPNOTSUPP)
    )
}

/// The connections of `listener` within `limits`: the incoming stream for
/// `Server::serve_with_incoming_shutdown`. Connections over a bound are closed at once and
/// logged (rate-limited); admitted ones close themselves when silent too long.
pub fn incoming(
    listener: TcpListener,
    limits: &NetLimits,
    metrics: NetMetrics,
) -> impl Stream<Item = io::Result<LimitedIo>> + Send + 'static {
    let acceptor = Acceptor::new(
        listener,
        limits.clone(),
        metrics,
        "connections",
        ["--max-connections", "--max-connections-per-peer"],
    );
    futures_util::stream::unfold(acceptor, |mut acceptor| async move {
        let io = acceptor.next().await;
        Some((Ok(io), acceptor))
    })
}

#[cfg(test)]
mod tests;
