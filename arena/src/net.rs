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

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use prometheus::{IntCounterVec, IntGauge, Opts, Registry};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpConnectInfo};
use tracing::{debug, warn};

/// Open files kept free of connections for the database, logs, the metrics endpoint and
/// the process itself.
pub const RESERVED_FDS: u64 = 128;
/// The default connection bound never exceeds this, however high the open-file limit.
pub const DEFAULT_MAX_CONNECTIONS_CAP: usize = 16_384;
/// Bytes of the HTTP/2 client preface (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`): a connection
/// that has not sent this many within the handshake timeout is closed.
pub const HTTP2_PREFACE_BYTES: u64 = 24;
/// Refused connections are logged at most once per this interval (with how many were
/// refused since).
pub const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// The connection-level limits of the arena. Build with [`NetArgs::limits`] (the
/// `knobel serve` flags) or start from [`NetLimits::default`]; check with
/// [`NetLimits::validate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetLimits {
    /// Most TCP connections open at once (`--max-connections`).
    pub max_connections: usize,
    /// Most TCP connections open at once from one peer address
    /// (`--max-connections-per-peer`).
    pub max_connections_per_peer: usize,
    /// How long a new connection has to send the HTTP/2 preface
    /// (`--handshake-timeout-ms`).
    pub handshake_timeout: Duration,
    /// A connection that sends nothing (no frames, no ping acknowledgements) for this long
    /// is closed (`--idle-timeout-ms`).
    pub idle_timeout: Duration,
    /// The server pings a connection it has heard nothing from for this long
    /// (`--http2-keepalive-interval-ms`).
    pub keepalive_interval: Duration,
    /// ... and closes it if the ping is not acknowledged within this
    /// (`--http2-keepalive-timeout-ms`).
    pub keepalive_timeout: Duration,
    /// How long a new Play stream has to send its Hello (`--hello-timeout-ms`).
    pub hello_timeout: Duration,
    /// Most Play streams that have not sent their Hello, in all (`--max-pending-hello`).
    pub max_pending_hello: usize,
    /// Most Play streams that have not sent their Hello from one peer address
    /// (`--max-pending-hello-per-peer`).
    pub max_pending_hello_per_peer: usize,
    /// Failed logins a peer address may have within a window before it is refused
    /// without a lookup (`--max-auth-failures`).
    pub max_auth_failures: u32,
    /// The window of `max_auth_failures` (`--auth-failure-window-secs`): the allowance
    /// refills evenly over it.
    pub auth_failure_window: Duration,
}

impl Default for NetLimits {
    fn default() -> NetLimits {
        NetLimits {
            max_connections: 1024,
            max_connections_per_peer: 256,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            keepalive_interval: Duration::from_secs(30),
            keepalive_timeout: Duration::from_secs(10),
            hello_timeout: Duration::from_secs(10),
            max_pending_hello: 4096,
            max_pending_hello_per_peer: 1024,
            max_auth_failures: 10,
            auth_failure_window: Duration::from_secs(60),
        }
    }
}

/// A connection limit that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetLimitsError {
    /// A value outside its legal range.
    #[error("{flag} = {value} is out of range: it must be {range}")]
    OutOfRange {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: u64,
        /// The legal range, e.g. `1..=1024`.
        range: String,
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

fn ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn check_range(flag: &'static str, value: u64, low: u64, high: u64) -> Result<(), NetLimitsError> {
    if (low..=high).contains(&value) {
        Ok(())
    } else {
        Err(NetLimitsError::OutOfRange {
            flag,
            value,
            range: format!("{low}..={high}"),
        })
    }
}

/// Connections the open-file limit `fd_limit` can carry.
pub fn connections_for_fd_limit(fd_limit: u64) -> usize {
    usize::try_from(fd_limit.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX)
}

impl NetLimits {
    /// Checks every limit against its legal range and against the others.
    pub fn validate(&self) -> Result<(), NetLimitsError> {
        const MAX_COUNT: u64 = 1 << 20;
        check_range(
            "--max-connections",
            self.max_connections as u64,
            1,
            MAX_COUNT,
        )?;
        check_range(
            "--max-connections-per-peer",
            self.max_connections_per_peer as u64,
            1,
            self.max_connections as u64,
        )?;
        check_range(
            "--http2-keepalive-interval-ms",
            ms(self.keepalive_interval),
            100,
            3_600_000,
        )?;
        check_range(
            "--http2-keepalive-timeout-ms",
            ms(self.keepalive_timeout),
            100,
            600_000,
        )?;
        check_range("--idle-timeout-ms", ms(self.idle_timeout), 100, 86_400_000)?;
        let keepalive_ms = ms(self.keepalive_interval) + ms(self.keepalive_timeout);
        if ms(self.idle_timeout) <= keepalive_ms {
            return Err(NetLimitsError::IdleBelowKeepalive {
                idle_ms: ms(self.idle_timeout),
                keepalive_ms,
            });
        }
        check_range(
            "--handshake-timeout-ms",
            ms(self.handshake_timeout),
            100,
            ms(self.idle_timeout),
        )?;
        check_range("--hello-timeout-ms", ms(self.hello_timeout), 100, 60_000)?;
        check_range(
            "--max-pending-hello",
            self.max_pending_hello as u64,
            1,
            MAX_COUNT,
        )?;
        check_range(
            "--max-pending-hello-per-peer",
            self.max_pending_hello_per_peer as u64,
            1,
            self.max_pending_hello as u64,
        )?;
        check_range(
            "--max-auth-failures",
            self.max_auth_failures.into(),
            1,
            10_000,
        )?;
        check_range(
            "--auth-failure-window-secs",
            self.auth_failure_window.as_secs(),
            1,
            86_400,
        )?;
        Ok(())
    }

    /// Checks that the open-file limit `fd_limit` can carry `max_connections`.
    pub fn check_fd_limit(&self, fd_limit: u64) -> Result<(), NetLimitsError> {
        let most = connections_for_fd_limit(fd_limit);
        if most == 0 {
            return Err(NetLimitsError::FdLimitTooLow { fd_limit });
        }
        if self.max_connections > most {
            return Err(NetLimitsError::OverFdLimit {
                value: self.max_connections,
                fd_limit,
                most,
            });
        }
        Ok(())
    }
}

/// The `knobel serve` flags of [`NetLimits`].
#[derive(clap::Args, Clone, Debug)]
pub struct NetArgs {
    /// Most TCP connections open at once (default: what the open-file limit carries, less
    /// 128 kept for the database and files, at most 16384).
    #[arg(long)]
    pub max_connections: Option<usize>,
    /// Most TCP connections open at once from one address (an IPv6 /64 counts as one).
    #[arg(long, default_value_t = 256)]
    pub max_connections_per_peer: usize,
    /// Milliseconds a new connection has to send the HTTP/2 preface.
    #[arg(long, default_value_t = 10_000)]
    pub handshake_timeout_ms: u64,
    /// Milliseconds after which a connection that sent nothing (not even a keepalive ping
    /// acknowledgement) is closed; must exceed the keepalive interval plus its timeout.
    #[arg(long, default_value_t = 60_000)]
    pub idle_timeout_ms: u64,
    /// Milliseconds of silence after which the server sends an HTTP/2 keepalive ping.
    #[arg(long, default_value_t = 30_000)]
    pub http2_keepalive_interval_ms: u64,
    /// Milliseconds the client has to acknowledge a keepalive ping.
    #[arg(long, default_value_t = 10_000)]
    pub http2_keepalive_timeout_ms: u64,
    /// Milliseconds a new Play stream has to send its Hello.
    #[arg(long, default_value_t = 10_000)]
    pub hello_timeout_ms: u64,
    /// Most Play streams that have not sent their Hello yet, in all.
    #[arg(long, default_value_t = 4096)]
    pub max_pending_hello: usize,
    /// Most Play streams that have not sent their Hello yet, from one address.
    #[arg(long, default_value_t = 1024)]
    pub max_pending_hello_per_peer: usize,
    /// Failed logins (unknown tokens) one address may have within the window before it
    /// is refused at once.
    #[arg(long, default_value_t = 10)]
    pub max_auth_failures: u32,
    /// The window of --max-auth-failures, in seconds.
    #[arg(long, default_value_t = 60)]
    pub auth_failure_window_secs: u64,
}

impl NetArgs {
    /// The limits these flags give under the open-file limit `fd_limit`, validated.
    pub fn limits(&self, fd_limit: u64) -> Result<NetLimits, NetLimitsError> {
        let max_connections = match self.max_connections {
            Some(n) => n,
            None => connections_for_fd_limit(fd_limit).min(DEFAULT_MAX_CONNECTIONS_CAP),
        };
        let limits = NetLimits {
            max_connections,
            // The per-peer default follows a low total bound down.
            max_connections_per_peer: if self.max_connections.is_none() {
                self.max_connections_per_peer.min(max_connections)
            } else {
                self.max_connections_per_peer
            },
            handshake_timeout: Duration::from_millis(self.handshake_timeout_ms),
            idle_timeout: Duration::from_millis(self.idle_timeout_ms),
            keepalive_interval: Duration::from_millis(self.http2_keepalive_interval_ms),
            keepalive_timeout: Duration::from_millis(self.http2_keepalive_timeout_ms),
            hello_timeout: Duration::from_millis(self.hello_timeout_ms),
            max_pending_hello: self.max_pending_hello,
            max_pending_hello_per_peer: self.max_pending_hello_per_peer,
            max_auth_failures: self.max_auth_failures,
            auth_failure_window: Duration::from_secs(self.auth_failure_window_secs),
        };
        limits.check_fd_limit(fd_limit)?;
        limits.validate()?;
        Ok(limits)
    }
}

/// Raises the soft open-file limit to the hard limit and returns the soft limit now in
/// force.
pub fn raise_fd_limit() -> io::Result<u64> {
    rlimit::increase_nofile_limit(u64::MAX)
}

/// The key a peer address is counted under: an IPv4 address (also one mapped into IPv6)
/// as it is, an IPv6 address by its /64 prefix.
pub fn peer_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(bits))
            }
        },
    }
}

// ---------------------------------------------------------------------------------------
// Counting per peer
// ---------------------------------------------------------------------------------------

/// Which bound a new connection or stream is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    /// The bound in all: `open` are open, at most `max` allowed.
    Total {
        /// Open now.
        open: usize,
        /// The bound.
        max: usize,
    },
    /// The bound per peer address.
    Peer {
        /// Open now from that address.
        open: usize,
        /// The bound.
        max: usize,
    },
}

impl Over {
    /// A message: "`what` from `peer`: ..." naming the bound and its flag.
    pub fn message(&self, what: &str, peer: IpAddr, flag_total: &str, flag_peer: &str) -> String {
        match *self {
            Over::Total { open, max } => format!(
                "too many {what}: {open} are open, at most {max} are allowed ({flag_total}); try again later"
            ),
            Over::Peer { open, max } => format!(
                "too many {what} from {peer}: {open} are open, at most {max} are allowed per address ({flag_peer}); try again later"
            ),
        }
    }
}

#[derive(Default)]
struct Counts {
    total: usize,
    per_peer: HashMap<IpAddr, usize>,
}

/// Counts things held open (connections, streams waiting for their Hello), in all and per
/// peer address, within bounds.
#[derive(Clone)]
pub struct PeerCounter {
    inner: Arc<CounterInner>,
}

struct CounterInner {
    max_total: usize,
    max_per_peer: usize,
    counts: Mutex<Counts>,
    /// Follows the count in all, if set.
    gauge: Option<IntGauge>,
}

/// One counted thing; uncounted when dropped.
pub struct Permit {
    inner: Arc<CounterInner>,
    peer: IpAddr,
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").field("peer", &self.peer).finish()
    }
}

impl PeerCounter {
    /// A counter allowing `max_total` in all and `max_per_peer` per peer address.
    pub fn new(max_total: usize, max_per_peer: usize) -> PeerCounter {
        PeerCounter::with_gauge(max_total, max_per_peer, None)
    }

    /// Like [`PeerCounter::new`], with a gauge that follows the count in all.
    pub fn with_gauge(
        max_total: usize,
        max_per_peer: usize,
        gauge: Option<IntGauge>,
    ) -> PeerCounter {
        PeerCounter {
            inner: Arc::new(CounterInner {
                max_total,
                max_per_peer,
                counts: Mutex::new(Counts::default()),
                gauge,
            }),
        }
    }

    /// Counts one more for `peer` (keyed by [`peer_key`]), or says which bound it is over.
    pub fn acquire(&self, peer: IpAddr) -> Result<Permit, Over> {
        let peer = peer_key(peer);
        let mut counts = self.inner.counts.lock().expect("counts lock");
        if counts.total >= self.inner.max_total {
            return Err(Over::Total {
                open: counts.total,
                max: self.inner.max_total,
            });
        }
        let open = counts.per_peer.get(&peer).copied().unwrap_or(0);
        if open >= self.inner.max_per_peer {
            return Err(Over::Peer {
                open,
                max: self.inner.max_per_peer,
            });
        }
        counts.total += 1;
        counts.per_peer.insert(peer, open + 1);
        if let Some(gauge) = &self.inner.gauge {
            gauge.inc();
        }
        Ok(Permit {
            inner: self.inner.clone(),
            peer,
        })
    }

    /// How many are open in all.
    pub fn open(&self) -> usize {
        self.inner.counts.lock().expect("counts lock").total
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut counts = self.inner.counts.lock().expect("counts lock");
        counts.total -= 1;
        if let Some(gauge) = &self.inner.gauge {
            gauge.dec();
        }
        if let Some(open) = counts.per_peer.get_mut(&self.peer) {
            *open -= 1;
            if *open == 0 {
                counts.per_peer.remove(&self.peer);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Failed logins
// ---------------------------------------------------------------------------------------

/// Throttles failed logins per peer address: a leaky bucket per address that fills by one
/// per failure and drains `max_failures` per window. An address whose bucket is full is
/// refused before any lookup until it has drained enough for one more attempt.
pub struct AuthThrottle {
    max_failures: u32,
    window: Duration,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
    /// The size at which drained buckets are swept next.
    prune_at: Mutex<usize>,
    refusals: Mutex<RateLimitedLog>,
}

#[derive(Clone, Copy)]
struct Bucket {
    level: f64,
    at: std::time::Instant,
}

/// Buckets kept before drained ones are dropped.
const AUTH_BUCKETS_PRUNE_AT: usize = 4096;
/// Most buckets kept at all: past this, the emptiest is dropped for a new one.
const AUTH_BUCKETS_MAX: usize = 65_536;

impl AuthThrottle {
    /// A throttle allowing `max_failures` failures per `window` and address.
    pub fn new(max_failures: u32, window: Duration) -> AuthThrottle {
        AuthThrottle {
            max_failures,
            window,
            buckets: Mutex::new(HashMap::new()),
            prune_at: Mutex::new(AUTH_BUCKETS_PRUNE_AT),
            refusals: Mutex::new(RateLimitedLog::new()),
        }
    }

    /// Logs a refused login (at most once per [`REFUSAL_LOG_INTERVAL`]).
    pub fn log_refusal(&self, peer: IpAddr, wait: Duration) {
        if let Some(suppressed) = self.refusals.lock().expect("log lock").due() {
            warn!(
                %peer,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                suppressed,
                "login refused: too many failed logins from this address"
            );
        }
    }

    /// The throttle of `limits`.
    pub fn from_limits(limits: &NetLimits) -> AuthThrottle {
        AuthThrottle::new(limits.max_auth_failures, limits.auth_failure_window)
    }

    fn drain_rate(&self) -> f64 {
        f64::from(self.max_failures) / self.window.as_secs_f64()
    }

    fn level(&self, bucket: &Bucket, now: std::time::Instant) -> f64 {
        let drained = now.saturating_duration_since(bucket.at).as_secs_f64() * self.drain_rate();
        (bucket.level - drained).max(0.0)
    }

    /// `Err(wait)` if `peer` must wait this long before it may try to log in again.
    pub fn check(&self, peer: IpAddr) -> Result<(), Duration> {
        self.check_at(peer, std::time::Instant::now())
    }

    /// [`AuthThrottle::check`] at `now`.
    pub fn check_at(&self, peer: IpAddr, now: std::time::Instant) -> Result<(), Duration> {
        let buckets = self.buckets.lock().expect("buckets lock");
        let Some(bucket) = buckets.get(&peer_key(peer)) else {
            return Ok(());
        };
        let level = self.level(bucket, now);
        let room = f64::from(self.max_failures) - 1.0;
        if level <= room {
            Ok(())
        } else {
            Err(Duration::from_secs_f64((level - room) / self.drain_rate()))
        }
    }

    /// Counts a failed login of `peer`.
    pub fn failed(&self, peer: IpAddr) {
        self.failed_at(peer, std::time::Instant::now());
    }

    /// [`AuthThrottle::failed`] at `now`.
    pub fn failed_at(&self, peer: IpAddr, now: std::time::Instant) {
        let mut buckets = self.buckets.lock().expect("buckets lock");
        let key = peer_key(peer);
        let mut prune_at = self.prune_at.lock().expect("prune lock");
        if buckets.len() >= *prune_at && !buckets.contains_key(&key) {
            // Drained buckets go; the next sweep waits until the map has doubled again, so
            // sweeps cost O(1) per failure on average.
            buckets.retain(|_, bucket| self.level(bucket, now) > 0.0);
            *prune_at = (2 * buckets.len()).max(AUTH_BUCKETS_PRUNE_AT);
        }
        if buckets.len() >= AUTH_BUCKETS_MAX && !buckets.contains_key(&key) {
            // Full of live buckets (failures from very many addresses): one goes.
            let any = buckets.keys().next().copied();
            if let Some(any) = any {
                buckets.remove(&any);
            }
        }
        drop(prune_at);
        let level = buckets
            .get(&key)
            .map_or(0.0, |bucket| self.level(bucket, now));
        buckets.insert(
            key,
            Bucket {
                level: level + 1.0,
                at: now,
            },
        );
    }

    /// The message for a refused peer that must wait `wait`.
    pub fn message(&self, peer: IpAddr, wait: Duration) -> String {
        format!(
            "too many failed logins from {peer}: try again in {:.1} s (at most {} failures per {} s and address)",
            wait.as_secs_f64().max(0.1),
            self.max_failures,
            self.window.as_secs()
        )
    }
}

// ---------------------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------------------

/// Metrics of the connection defences (in the arena's registry).
#[derive(Clone)]
pub struct NetMetrics {
    connections: IntGauge,
    /// Play streams that have not sent their Hello yet.
    pub pending_hello: IntGauge,
    refused: IntCounterVec,
    timed_out: IntCounterVec,
}

impl NetMetrics {
    /// Registers the metrics in `registry`.
    pub fn new(registry: &Registry) -> NetMetrics {
        let connections =
            IntGauge::new("tcp_connections", "Open TCP connections.").expect("valid metric");
        let pending_hello = IntGauge::new(
            "play_streams_without_hello",
            "Play streams that have not sent their Hello yet.",
        )
        .expect("valid metric");
        let refused = IntCounterVec::new(
            Opts::new(
                "tcp_connections_refused_total",
                "TCP connections closed at once, by the bound they were over (total or peer).",
            ),
            &["bound"],
        )
        .expect("valid metric");
        let timed_out = IntCounterVec::new(
            Opts::new(
                "tcp_connections_timed_out_total",
                "TCP connections closed for silence, by phase (handshake or idle).",
            ),
            &["phase"],
        )
        .expect("valid metric");
        for metric in [
            Box::new(connections.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(pending_hello.clone()),
            Box::new(refused.clone()),
            Box::new(timed_out.clone()),
        ] {
            registry.register(metric).expect("unique metric");
        }
        NetMetrics {
            connections,
            pending_hello,
            refused,
            timed_out,
        }
    }

    /// Metrics in a registry of their own (for tests).
    pub fn unregistered() -> NetMetrics {
        NetMetrics::new(&Registry::new())
    }
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
    /// The next connection within the bounds; those over them are closed at once.
    async fn next(&mut self) -> LimitedIo {
        loop {
            let (stream, peer) = match self.listener.accept().await {
                Ok(accepted) => accepted,
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
                    return LimitedIo::new(stream, peer, permit, &self.limits, &self.metrics);
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

/// The connections of `listener` within `limits`: the incoming stream for
/// `Server::serve_with_incoming_shutdown`. Connections over a bound are closed at once and
/// logged (rate-limited); admitted ones close themselves when silent too long.
pub fn incoming(
    listener: TcpListener,
    limits: &NetLimits,
    metrics: NetMetrics,
) -> impl Stream<Item = io::Result<LimitedIo>> + Send + 'static {
    let acceptor = Acceptor {
        listener,
        connections: PeerCounter::new(limits.max_connections, limits.max_connections_per_peer),
        limits: limits.clone(),
        metrics,
        refusals: [RateLimitedLog::new(), RateLimitedLog::new()],
        what: "connections",
        flags: ["--max-connections", "--max-connections-per-peer"],
        accept_errors: RateLimitedLog::new(),
    };
    futures_util::stream::unfold(acceptor, |mut acceptor| async move {
        let io = acceptor.next().await;
        Some((Ok(io), acceptor))
    })
}

/// Connections the metrics endpoint holds open at once, in all and per peer address.
pub const METRICS_MAX_CONNECTIONS: (usize, usize) = (64, 16);

/// The metrics endpoint's listener: the same defences as the arena's, with small bounds
/// ([`METRICS_MAX_CONNECTIONS`]) and the default timeouts (a scrape sends its request at
/// once).
pub struct MetricsListener {
    acceptor: Acceptor,
}

impl MetricsListener {
    /// Bounds the connections of `listener`.
    pub fn new(listener: TcpListener) -> MetricsListener {
        let (max_connections, max_connections_per_peer) = METRICS_MAX_CONNECTIONS;
        let limits = NetLimits {
            max_connections,
            max_connections_per_peer,
            ..NetLimits::default()
        };
        MetricsListener {
            acceptor: Acceptor {
                listener,
                connections: PeerCounter::new(max_connections, max_connections_per_peer),
                limits,
                metrics: NetMetrics::unregistered(),
                refusals: [RateLimitedLog::new(), RateLimitedLog::new()],
                what: "connections to the metrics endpoint",
                flags: ["the endpoint's fixed bound", "the endpoint's fixed bound"],
                accept_errors: RateLimitedLog::new(),
            },
        }
    }
}

impl axum::serve::Listener for MetricsListener {
    type Io = LimitedIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (LimitedIo, SocketAddr) {
        let io = self.acceptor.next().await;
        let peer = io.peer;
        (io, peer)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.acceptor.listener.local_addr()
    }
}

/// An admitted TCP connection: counted while open, and closed (its reads fail) when the
/// client has not sent the HTTP/2 preface within the handshake timeout or has sent nothing
/// for the idle timeout.
pub struct LimitedIo {
    stream: TcpStream,
    peer: SocketAddr,
    local: Option<SocketAddr>,
    _permit: Permit,
    metrics: NetMetrics,
    accepted: Instant,
    last_read: Instant,
    bytes_read: u64,
    handshake_timeout: Duration,
    idle_timeout: Duration,
    /// Set no later than the deadline; moved on only when it fires (not on every read).
    timer: Pin<Box<Sleep>>,
}

impl LimitedIo {
    fn new(
        stream: TcpStream,
        peer: SocketAddr,
        permit: Permit,
        limits: &NetLimits,
        metrics: &NetMetrics,
    ) -> LimitedIo {
        let now = Instant::now();
        metrics.connections.inc();
        LimitedIo {
            local: stream.local_addr().ok(),
            stream,
            peer,
            _permit: permit,
            metrics: metrics.clone(),
            accepted: now,
            last_read: now,
            bytes_read: 0,
            handshake_timeout: limits.handshake_timeout,
            idle_timeout: limits.idle_timeout,
            timer: Box::pin(tokio::time::sleep_until(now + limits.handshake_timeout)),
        }
    }

    fn in_handshake(&self) -> bool {
        self.bytes_read < HTTP2_PREFACE_BYTES
    }

    fn deadline(&self) -> Instant {
        if self.in_handshake() {
            self.accepted + self.handshake_timeout
        } else {
            self.last_read + self.idle_timeout
        }
    }

    /// Pending until the deadline; then the error that closes the connection.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let deadline = self.deadline();
            if self.timer.deadline() > deadline {
                self.timer.as_mut().reset(deadline);
            }
            if self.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if Instant::now() < deadline {
                self.timer.as_mut().reset(deadline);
                continue;
            }
            let (phase, message) = if self.in_handshake() {
                (
                    "handshake",
                    format!(
                        "no HTTP/2 preface within {} ms (--handshake-timeout-ms)",
                        self.handshake_timeout.as_millis()
                    ),
                )
            } else {
                (
                    "idle",
                    format!(
                        "nothing received for {} ms (--idle-timeout-ms)",
                        self.idle_timeout.as_millis()
                    ),
                )
            };
            self.metrics.timed_out.with_label_values(&[phase]).inc();
            debug!(peer = %self.peer, "connection closed: {message}");
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, message)));
        }
    }
}

impl Drop for LimitedIo {
    fn drop(&mut self) {
        self.metrics.connections.dec();
    }
}

impl Connected for LimitedIo {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        TcpConnectInfo {
            local_addr: self.local,
            remote_addr: Some(self.peer),
        }
    }
}

impl AsyncRead for LimitedIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let read = (buf.filled().len() - before) as u64;
                if read > 0 {
                    this.bytes_read = this.bytes_read.saturating_add(read);
                    this.last_read = Instant::now();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => this.poll_deadline(cx),
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
        }
    }
}

/// A write that cannot go on (the client does not read) still ends at the deadline: the
/// connection may not be polled for reading meanwhile.
fn or_deadline<T>(
    io: &mut LimitedIo,
    cx: &mut Context<'_>,
    poll: Poll<io::Result<T>>,
) -> Poll<io::Result<T>> {
    match poll {
        Poll::Pending => match io.poll_deadline(cx) {
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            _ => Poll::Pending,
        },
        ready => ready,
    }
}

impl AsyncWrite for LimitedIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write(cx, buf);
        or_deadline(this, cx, poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        or_deadline(this, cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn args() -> NetArgs {
        NetArgs {
            max_connections: None,
            max_connections_per_peer: 256,
            handshake_timeout_ms: 10_000,
            idle_timeout_ms: 60_000,
            http2_keepalive_interval_ms: 30_000,
            http2_keepalive_timeout_ms: 10_000,
            hello_timeout_ms: 10_000,
            max_pending_hello: 4096,
            max_pending_hello_per_peer: 1024,
            max_auth_failures: 10,
            auth_failure_window_secs: 60,
        }
    }

    #[test]
    fn the_default_bound_follows_the_open_file_limit() {
        let limits = args().limits(512).unwrap();
        assert_eq!(limits.max_connections, 512 - RESERVED_FDS as usize);
        assert_eq!(limits.max_connections_per_peer, 256);
        let limits = args().limits(200).unwrap();
        assert_eq!(limits.max_connections, 72);
        assert_eq!(limits.max_connections_per_peer, 72);
        let limits = args().limits(1 << 20).unwrap();
        assert_eq!(limits.max_connections, DEFAULT_MAX_CONNECTIONS_CAP);
        assert!(NetLimits::default().validate().is_ok());
    }

    #[test]
    fn a_bound_the_open_file_limit_cannot_carry_is_refused() {
        let mut a = args();
        a.max_connections = Some(5000);
        let error = a.limits(512).unwrap_err();
        assert_eq!(
            error,
            NetLimitsError::OverFdLimit {
                value: 5000,
                fd_limit: 512,
                most: 384
            }
        );
        let text = error.to_string();
        assert!(text.contains("--max-connections 5000"), "{text}");
        assert!(text.contains("at most 384"), "{text}");
        assert!(text.contains("limit of 512"), "{text}");
        a.max_connections = Some(384);
        assert!(a.limits(512).is_ok());
        let error = args().limits(100).unwrap_err();
        assert_eq!(error, NetLimitsError::FdLimitTooLow { fd_limit: 100 });
        assert!(error.to_string().contains("at least 129"), "{error}");
    }

    #[test]
    fn every_bound_names_its_flag_value_and_range() {
        type Case = (fn(&mut NetArgs), &'static str);
        let cases: [Case; 11] = [
            (
                |a| a.max_connections = Some(0),
                "--max-connections = 0 is out of range: it must be 1..=1048576",
            ),
            (
                |a| a.max_connections_per_peer = 0,
                "--max-connections-per-peer = 0 is out of range: it must be 1..=384",
            ),
            (
                |a| a.max_connections_per_peer = 385,
                "--max-connections-per-peer = 385 is out of range: it must be 1..=384",
            ),
            (
                |a| a.handshake_timeout_ms = 50,
                "--handshake-timeout-ms = 50 is out of range: it must be 100..=60000",
            ),
            (
                |a| a.handshake_timeout_ms = 60_001,
                "--handshake-timeout-ms = 60001 is out of range: it must be 100..=60000",
            ),
            (
                |a| a.http2_keepalive_interval_ms = 99,
                "--http2-keepalive-interval-ms = 99 is out of range: it must be 100..=3600000",
            ),
            (
                |a| a.http2_keepalive_timeout_ms = 600_001,
                "--http2-keepalive-timeout-ms = 600001 is out of range: it must be 100..=600000",
            ),
            (
                |a| a.hello_timeout_ms = 60_001,
                "--hello-timeout-ms = 60001 is out of range: it must be 100..=60000",
            ),
            (
                |a| a.max_pending_hello_per_peer = 5000,
                "--max-pending-hello-per-peer = 5000 is out of range: it must be 1..=4096",
            ),
            (
                |a| a.max_auth_failures = 0,
                "--max-auth-failures = 0 is out of range: it must be 1..=10000",
            ),
            (
                |a| a.auth_failure_window_secs = 0,
                "--auth-failure-window-secs = 0 is out of range: it must be 1..=86400",
            ),
        ];
        for (change, expected) in cases {
            let mut a = args();
            if expected.starts_with("--max-connections-per-peer") {
                a.max_connections = Some(384);
            }
            change(&mut a);
            let error = a.limits(512).unwrap_err();
            assert_eq!(error.to_string(), expected);
        }
        let mut a = args();
        a.max_pending_hello = 0;
        a.max_pending_hello_per_peer = 0;
        assert_eq!(
            a.limits(512).unwrap_err().to_string(),
            "--max-pending-hello = 0 is out of range: it must be 1..=1048576"
        );
        let mut a = args();
        a.idle_timeout_ms = 40_000;
        assert_eq!(
            a.limits(512).unwrap_err().to_string(),
            "--idle-timeout-ms 40000 is too short: it must exceed --http2-keepalive-interval-ms plus --http2-keepalive-timeout-ms (40000), or bots waiting for a match would be closed"
        );
        a.idle_timeout_ms = 40_001;
        a.handshake_timeout_ms = 40_001;
        assert!(a.limits(512).is_ok());
    }

    #[test]
    fn ipv6_peers_count_by_their_64_prefix() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(peer_key(a), peer_key(b));
        assert_ne!(peer_key(a), peer_key(c));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(peer_key(mapped), IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)));
    }

    #[test]
    fn the_counter_bounds_in_all_and_per_peer() {
        let counter = PeerCounter::new(3, 2);
        let one = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let two = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        let a = counter.acquire(one).unwrap();
        let _b = counter.acquire(one).unwrap();
        assert_eq!(
            counter.acquire(one).unwrap_err(),
            Over::Peer { open: 2, max: 2 }
        );
        let _c = counter.acquire(two).unwrap();
        assert_eq!(
            counter.acquire(two).unwrap_err(),
            Over::Total { open: 3, max: 3 }
        );
        drop(a);
        assert_eq!(counter.open(), 2);
        let _d = counter.acquire(one).unwrap();
        let text = Over::Peer { open: 2, max: 2 }.message("streams", one, "--a", "--b");
        assert!(
            text.contains("from 10.0.0.1") && text.contains("at most 2") && text.contains("--b"),
            "{text}"
        );
    }

    #[test]
    fn failed_logins_are_throttled_per_peer_and_drain_over_the_window() {
        let throttle = AuthThrottle::new(3, Duration::from_secs(60));
        let peer = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let other = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        let t0 = std::time::Instant::now();
        for _ in 0..3 {
            assert!(throttle.check_at(peer, t0).is_ok());
            throttle.failed_at(peer, t0);
        }
        // Full: one failure drains in 20 s.
        let wait = throttle.check_at(peer, t0).unwrap_err();
        assert!((wait.as_secs_f64() - 20.0).abs() < 0.01, "{wait:?}");
        assert!(throttle.check_at(other, t0).is_ok());
        let t1 = t0 + Duration::from_secs(10);
        let wait = throttle.check_at(peer, t1).unwrap_err();
        assert!((wait.as_secs_f64() - 10.0).abs() < 0.01, "{wait:?}");
        let t2 = t0 + Duration::from_secs(20);
        assert!(throttle.check_at(peer, t2).is_ok());
        throttle.failed_at(peer, t2);
        assert!(throttle.check_at(peer, t2).is_err());
        // Drained buckets are swept; the map stays bounded.
        let many = AuthThrottle::new(1, Duration::from_secs(1));
        for i in 0..AUTH_BUCKETS_PRUNE_AT as u32 {
            many.failed_at(IpAddr::V4(Ipv4Addr::from(i)), t0);
        }
        assert_eq!(many.buckets.lock().unwrap().len(), AUTH_BUCKETS_PRUNE_AT);
        many.failed_at(peer, t0 + Duration::from_secs(5));
        assert_eq!(many.buckets.lock().unwrap().len(), 1);
        assert!(many.check_at(peer, t0 + Duration::from_secs(5)).is_err());
        let text = throttle.message(peer, Duration::from_secs(20));
        assert!(
            text.contains("try again in 20.0 s") && text.contains("at most 3 failures per 60 s"),
            "{text}"
        );
    }

    async fn arena_like(limits: NetLimits) -> (SocketAddr, tokio::task::JoinHandle<()>) {
        use tokio_stream::StreamExt;
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let mut incoming = Box::pin(incoming(listener, &limits, NetMetrics::unregistered()));
            while let Some(Ok(mut io)) = incoming.next().await {
                assert_eq!(io.connect_info().remote_addr().unwrap().ip(), io.peer.ip());
                // An echo that stops at the first error (a timeout).
                tokio::spawn(async move {
                    let mut buf = [0u8; 64];
                    while let Ok(n) = io.read(&mut buf).await {
                        if n == 0 || io.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        (addr, task)
    }

    async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
        let mut buf = [0u8; 64];
        loop {
            match tokio::time::timeout(within, stream.read(&mut buf)).await {
                Err(_) => return false,
                Ok(Ok(0)) | Ok(Err(_)) => return true,
                Ok(Ok(_)) => {}
            }
        }
    }

    #[tokio::test]
    async fn connections_over_the_bound_are_closed_at_once() {
        let limits = NetLimits {
            max_connections: 4,
            max_connections_per_peer: 2,
            ..NetLimits::default()
        };
        let (addr, task) = arena_like(limits).await;
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(b"ping").await.unwrap();
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf).await.unwrap();
            held.push(s);
        }
        let mut third = TcpStream::connect(addr).await.unwrap();
        assert!(closed_within(&mut third, Duration::from_secs(10)).await);
        // The held ones are open.
        for s in &mut held {
            assert!(!closed_within(s, Duration::from_millis(100)).await);
        }
        drop(held.pop());
        // A slot is free again (the server sees the close asynchronously).
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(b"ping").await.unwrap();
            let mut buf = [0u8; 4];
            if tokio::time::timeout(Duration::from_secs(1), s.read_exact(&mut buf))
                .await
                .is_ok_and(|r| r.is_ok())
            {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the freed slot was never reused"
            );
        }
        task.abort();
    }

    #[tokio::test]
    async fn silent_connections_are_closed_after_the_handshake_or_idle_timeout() {
        let limits = NetLimits {
            handshake_timeout: Duration::from_millis(200),
            idle_timeout: Duration::from_millis(600),
            keepalive_interval: Duration::from_millis(100),
            keepalive_timeout: Duration::from_millis(100),
            ..NetLimits::default()
        };
        let (addr, task) = arena_like(limits).await;
        // Nothing sent: closed after the handshake timeout.
        let started = std::time::Instant::now();
        let mut silent = TcpStream::connect(addr).await.unwrap();
        assert!(closed_within(&mut silent, Duration::from_secs(10)).await);
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(180), "{took:?}");
        // Fewer bytes than the preface: also closed after the handshake timeout.
        let mut trickle = TcpStream::connect(addr).await.unwrap();
        trickle.write_all(b"PRI * HTTP").await.unwrap();
        assert!(closed_within(&mut trickle, Duration::from_secs(10)).await);
        // A connection that keeps sending lives past both timeouts...
        let mut live = TcpStream::connect(addr).await.unwrap();
        live.write_all(&[b'x'; 24]).await.unwrap();
        let started = std::time::Instant::now();
        let mut buf = [0u8; 64];
        while started.elapsed() < Duration::from_millis(1500) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            live.write_all(b"ping").await.unwrap();
            let n = live.read(&mut buf).await.unwrap();
            assert!(n > 0, "a live connection was closed");
        }
        // ...and is closed once it falls silent.
        let silent_since = std::time::Instant::now();
        assert!(closed_within(&mut live, Duration::from_secs(10)).await);
        assert!(silent_since.elapsed() >= Duration::from_millis(400));
        task.abort();
    }
}
