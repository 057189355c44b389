//! Metrics of the connection defences ([`NetMetrics`]), and the metrics endpoint's own
//! bounded listener ([`MetricsListener`]).

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use prometheus::{IntCounterVec, IntGauge, Opts, Registry};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::{Acceptor, LimitedIo, NetLimits};

/// Metrics of the connection defences (in the arena's registry).
#[derive(Clone)]
pub struct NetMetrics {
    pub(super) connections: IntGauge,
    /// Play streams that have not sent their Hello yet.
    pub pending_hello: IntGauge,
    pub(super) refused: IntCounterVec,
    pub(super) timed_out: IntCounterVec,
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

/// Connections the metrics endpoint holds open at once, in all and per peer address. A
/// Prometheus server holds one connection; the bound per address leaves room for several
/// servers, or a load test, behind one address (40 scrapers at once from 127.0.0.1 are all
/// answered). A connection over a bound is closed at once: its client sees a reset.
pub const METRICS_MAX_CONNECTIONS: (usize, usize) = (256, 64);

/// The metrics endpoint's listener: the same defences as the arena's, with small bounds
/// ([`METRICS_MAX_CONNECTIONS`]) and the default timeouts (a scrape sends its request at
/// once).
pub struct MetricsListener {
    acceptor: Acceptor,
    /// Where the error goes that leaves the listening socket unusable (see
    /// [`MetricsListener::failure`]).
    failed: Option<oneshot::Sender<io::Error>>,
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
            acceptor: Acceptor::new(
                listener,
                limits,
                NetMetrics::unregistered(),
                "connections to the metrics endpoint",
                ["the endpoint's fixed bound", "the endpoint's fixed bound"],
            ),
            failed: None,
        }
    }

    /// Receives the error that leaves the listening socket unusable (it was closed or shut
    /// down): from then on the listener accepts nothing, and the endpoint has failed.
    /// Without a receiver such an error is retried every 50 ms, like any other.
    pub fn failure(&mut self) -> oneshot::Receiver<io::Error> {
        let (failed, failure) = oneshot::channel();
        self.failed = Some(failed);
        failure
    }
}

impl axum::serve::Listener for MetricsListener {
    type Io = LimitedIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (LimitedIo, SocketAddr) {
        loop {
            match self.acceptor.next_or_broken().await {
                Ok(io) => {
                    let peer = io.peer;
                    return (io, peer);
                }
                Err(error) => match self.failed.take() {
                    Some(failed) => {
                        let _ = failed.send(error);
                        std::future::pending::<()>().await;
                    }
                    None => tokio::time::sleep(Duration::from_millis(50)).await,
                },
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.acceptor.listener.local_addr()
    }
}
