//! The connection-level limits the accept loop, the connections and the Play streams keep
//! (docs/hostile-clients.md). `knobel serve`'s flags set them and check them against their
//! bounds (`settings/net_limits.rs`); the network layer only reads them.

use std::time::Duration;

/// The connection-level limits of the arena. Build with `NetArgs::limits` (the
/// `knobel serve` flags, in `settings/net_limits.rs`) or start from [`NetLimits::default`]; check
/// with `NetLimits::validate` (there too).
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
