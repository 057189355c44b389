//! The web viewer's bounded listener ([`WebListener`]): the arena's connection defences
//! with bounds of its own ([`WEB_MAX_CONNECTIONS`]) and an idle timeout long enough for a
//! live page's event stream ([`WEB_IDLE_TIMEOUT`]).

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
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

/// The web viewer's usual address: `knobel serve` without `--web-listen`, and the demo,
/// take it when it is free.
pub const USUAL_WEB_ADDR: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8080));

/// Where the web viewer was bound by [`bind_web_viewer`].
#[derive(Debug)]
pub struct WebBinding {
    /// The listener (none for `--web-listen off`).
    pub listener: Option<TcpListener>,
    /// Set when [`USUAL_WEB_ADDR`] was taken (say, by another arena on this host) and a
    /// free port was taken instead: a line for the operator saying so.
    pub notice: Option<String>,
}

/// Binds the web viewer's listener: at `given` (`Some(None)` is `--web-listen off`), or,
/// when no address was given, at [`USUAL_WEB_ADDR`] if it is free and else on a free port
/// of 127.0.0.1, with a [`WebBinding::notice`] saying so. Several arenas on one host thus
/// start without flags for the web viewer; an address that was given and is taken is an
/// error.
pub async fn bind_web_viewer(given: Option<Option<SocketAddr>>) -> io::Result<WebBinding> {
    let (listener, notice) = match given {
        Some(None) => (None, None),
        Some(Some(addr)) => (Some(TcpListener::bind(addr).await?), None),
        None => match TcpListener::bind(USUAL_WEB_ADDR).await {
            Ok(listener) => (Some(listener), None),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
                let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
                let notice = format!(
                    "the web viewer's usual address {USUAL_WEB_ADDR} is taken (another arena \
                     on this host?): it listens on http://{}/ instead; --web-listen ADDR \
                     chooses, --web-listen off turns it off",
                    listener.local_addr()?
                );
                (Some(listener), Some(notice))
            }
            Err(e) => return Err(e),
        },
    };
    Ok(WebBinding { listener, notice })
}

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
