//! The connection-level settings: the `knobel serve` flags of [`NetLimits`] ([`NetArgs`]),
//! the [`Bound`] of each, and their checks against each other and against the open-file
//! limit. [`crate::net`] only consumes the checked [`NetLimits`].

use std::time::Duration;

use super::{Bound, SettingsError};
pub use crate::net::NetLimits;

/// Open files kept free of connections for the database, logs, the metrics endpoint and
/// the process itself.
pub const RESERVED_FDS: u64 = 128;
/// The default connection bound never exceeds this, however high the open-file limit.
pub const DEFAULT_MAX_CONNECTIONS_CAP: usize = 16_384;

/// The most of any count of connections or streams.
const MAX_COUNT: u64 = 1 << 20;

/// A connection-level bound: a flag without an environment variable, and no unit in
/// messages (the flag's name carries it).
const fn flag(flag: &'static str, min: u64, max: u64) -> Bound {
    Bound {
        flag,
        env: None,
        min,
        max,
        unit: "",
    }
}

/// TCP connections open at once.
pub const MAX_CONNECTIONS: Bound = flag("--max-connections", 1, MAX_COUNT);
/// TCP connections open at once from one peer address: at most [`MAX_CONNECTIONS`]'s
/// value (see [`Bound::at_most`]).
pub const MAX_CONNECTIONS_PER_PEER: Bound = flag("--max-connections-per-peer", 1, MAX_COUNT);
/// The silence after which the server sends an HTTP/2 keepalive ping (up to an hour).
pub const HTTP2_KEEPALIVE_INTERVAL_MS: Bound =
    flag("--http2-keepalive-interval-ms", 100, 3_600_000);
/// How long a keepalive ping may go unacknowledged (up to ten minutes).
pub const HTTP2_KEEPALIVE_TIMEOUT_MS: Bound = flag("--http2-keepalive-timeout-ms", 100, 600_000);
/// The silence after which a connection is closed (up to a day); it must also exceed the
/// keepalive interval plus its timeout ([`SettingsError::IdleBelowKeepalive`]).
pub const IDLE_TIMEOUT_MS: Bound = flag("--idle-timeout-ms", 100, 86_400_000);
/// How long a new connection has to send the HTTP/2 preface: at most the idle timeout.
pub const HANDSHAKE_TIMEOUT_MS: Bound = flag("--handshake-timeout-ms", 100, 86_400_000);
/// How long a new Play stream has to send its Hello (up to a minute).
pub const HELLO_TIMEOUT_MS: Bound = flag("--hello-timeout-ms", 100, 60_000);
/// Play streams that have not sent their Hello, in all.
pub const MAX_PENDING_HELLO: Bound = flag("--max-pending-hello", 1, MAX_COUNT);
/// Play streams that have not sent their Hello from one peer address: at most
/// [`MAX_PENDING_HELLO`]'s value.
pub const MAX_PENDING_HELLO_PER_PEER: Bound = flag("--max-pending-hello-per-peer", 1, MAX_COUNT);
/// Failed logins per peer address and window.
pub const MAX_AUTH_FAILURES: Bound = flag("--max-auth-failures", 1, 10_000);
/// The window of [`MAX_AUTH_FAILURES`] (up to a day).
pub const AUTH_FAILURE_WINDOW_SECS: Bound = flag("--auth-failure-window-secs", 1, 86_400);

/// The errors of [`NetLimits::validate`] and [`NetArgs::limits`]: settings errors, under
/// the name the server's error wraps.
pub type NetLimitsError = SettingsError;

fn ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Connections the open-file limit `fd_limit` can carry.
pub fn connections_for_fd_limit(fd_limit: u64) -> usize {
    usize::try_from(fd_limit.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX)
}

impl NetLimits {
    /// Checks every limit against its [`Bound`] (in this order) and against the others;
    /// the first one out of range gives its error.
    pub fn validate(&self) -> Result<(), NetLimitsError> {
        let max_connections = MAX_CONNECTIONS.check(self.max_connections as u64)?;
        MAX_CONNECTIONS_PER_PEER
            .at_most(max_connections)
            .check(self.max_connections_per_peer as u64)?;
        let keepalive_interval_ms =
            HTTP2_KEEPALIVE_INTERVAL_MS.check(ms(self.keepalive_interval))?;
        let keepalive_timeout_ms = HTTP2_KEEPALIVE_TIMEOUT_MS.check(ms(self.keepalive_timeout))?;
        let idle_ms = IDLE_TIMEOUT_MS.check(ms(self.idle_timeout))?;
        let keepalive_ms = keepalive_interval_ms + keepalive_timeout_ms;
        if idle_ms <= keepalive_ms {
            return Err(SettingsError::IdleBelowKeepalive {
                idle_ms,
                keepalive_ms,
            });
        }
        HANDSHAKE_TIMEOUT_MS
            .at_most(idle_ms)
            .check(ms(self.handshake_timeout))?;
        HELLO_TIMEOUT_MS.check(ms(self.hello_timeout))?;
        let max_pending_hello = MAX_PENDING_HELLO.check(self.max_pending_hello as u64)?;
        MAX_PENDING_HELLO_PER_PEER
            .at_most(max_pending_hello)
            .check(self.max_pending_hello_per_peer as u64)?;
        MAX_AUTH_FAILURES.check(self.max_auth_failures.into())?;
        AUTH_FAILURE_WINDOW_SECS.check(self.auth_failure_window.as_secs())?;
        Ok(())
    }

    /// Checks that the open-file limit `fd_limit` can carry `max_connections`.
    pub fn check_fd_limit(&self, fd_limit: u64) -> Result<(), NetLimitsError> {
        let most = connections_for_fd_limit(fd_limit);
        if most == 0 {
            return Err(SettingsError::FdLimitTooLow { fd_limit });
        }
        if self.max_connections > most {
            return Err(SettingsError::OverFdLimit {
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

#[cfg(test)]
mod tests;
