//! The web viewer's bounded listener ([`WebListener`]): the arena's connection defences
//! with bounds of its own ([`WEB_MAX_CONNECTIONS`]) and an idle timeout long enough for a
//! live page's event stream ([`WEB_IDLE_TIMEOUT`]).

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use futures_util::FutureExt;
use tokio::net::TcpListener;

use super::{Acceptor, LimitedIo, NetLimits, NetMetrics};

/// Connections the web viewer holds open at once, in all and per peer address (a browser
/// opens a few per page, and one more per live page).
pub const WEB_MAX_CONNECTIONS: (usize, usize) = (512, 128);

/// How long a web connection may send nothing before it is closed. A live page's event
/// stream sends nothing after its request: the browser's `EventSource` opens it again
/// when it is closed, so this bounds how long an abandoned stream holds its connection.
pub const WEB_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// The web viewer's listener (see the module docs).
pub struct WebListener {
    inner: Acceptor,
}

impl WebListener {
    /// Bounds the connections of `listener`.
    pub fn new(listener: TcpListener) -> WebListener {
        let limits = NetLimits {
            max_connections: WEB_MAX_CONNECTIONS.0,
            max_connections_per_peer: WEB_MAX_CONNECTIONS.1,
            idle_timeout: WEB_IDLE_TIMEOUT,
            ..NetLimits::default()
        };
        let inner = Acceptor::new(
            listener,
            limits,
            NetMetrics::unregistered(),
            "connections to the web viewer",
            ["the web viewer's fixed bound"; 2],
        );
        WebListener { inner }
    }
}

impl axum::serve::Listener for WebListener {
    type Io = LimitedIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (LimitedIo, SocketAddr) {
        self.inner
            .next()
            .map(|io| (io.peer, io))
            .map(|(peer, io)| (io, peer))
            .await
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.listener.local_addr()
    }
}
