//! A NATS server of the test's own (Debian's `nats-server`, core NATS), on a free port of
//! 127.0.0.1: never the machine's shared one.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `nats-server`; killed when dropped.
pub struct NatsServer {
    child: Option<Child>,
    /// Its port.
    pub port: u16,
    /// `nats://127.0.0.1:PORT`.
    pub url: String,
}

/// Whether `nats-server` can be run here.
pub fn available() -> bool {
    Command::new("nats-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The `knobel serve` arguments of an arena in cluster mode on the NATS server at
/// `nats_url`: its peer port on a free port, and the cluster's peer token `peer_token` (its
/// store must be PostgreSQL).
pub fn cluster_args(nats_url: &str, peer_token: &str) -> Vec<String> {
    [
        "--nats-url",
        nats_url,
        "--peer-listen",
        "127.0.0.1:0",
        "--peer-token",
        peer_token,
    ]
    .map(String::from)
    .to_vec()
}

impl NatsServer {
    /// Starts a server on a free port and waits (at most 10 s) until it accepts connections.
    pub fn start() -> NatsServer {
        let port = crate::free_port();
        let mut server = NatsServer {
            child: None,
            port,
            url: format!("nats://127.0.0.1:{port}"),
        };
        server.start_again();
        server
    }

    /// Starts it again on the same port (after [`NatsServer::stop`]).
    pub fn start_again(&mut self) {
        let child = Command::new("nats-server")
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start nats-server");
        self.child = Some(child);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "nats-server did not listen on port {} within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops it (kill -9): an outage.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
    }
}
