//! PostgreSQL for end-to-end tests: a fresh database on the shared server
//! ([`SharedDatabase`]), or a server of the test's own that it may stop and start
//! ([`PrivateServer`]), and reading the arena's metrics.
//!
//! Tests that need PostgreSQL call [`require`] (shared server) or [`require_binaries`]
//! (private server) first: without it they fail, saying what is missing (a test never
//! passes without having run). Built with `KNOBEL_TEST_WITHOUT=postgres` they are marked
//! ignored instead (`#[cfg_attr(knobel_without_postgres, ignore = ...)]`; see
//! `arena/server/build.rs`, also the build script of this crate).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Arena;

/// Where PostgreSQL 15's programs are (`KNOBEL_PG_BIN` overrides).
pub fn bin_dir() -> PathBuf {
    std::env::var_os("KNOBEL_PG_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"))
}

/// The shared server's admin URL (`KNOBEL_TEST_POSTGRES_URL`, default
/// `postgres://postgres@127.0.0.1:5432/postgres`).
pub fn shared_admin_url() -> String {
    std::env::var("KNOBEL_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// Whether this run is CI's, where skipping is not allowed.
pub fn in_ci() -> bool {
    std::env::var("CI")
        .map(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
        .unwrap_or(false)
}

/// Fails the test: `why` PostgreSQL cannot be used.
fn missing(why: &str) -> ! {
    panic!(
        "{why}: this test needs PostgreSQL. Install PostgreSQL 15 and start it (see \
         .ci/run), or build the tests with KNOBEL_TEST_WITHOUT=postgres to mark the tests \
         that need it ignored (refused in CI)"
    );
}

/// Fails the test unless PostgreSQL's programs (initdb, pg_ctl, createdb, ...) are
/// installed.
pub fn require_binaries() {
    let missing_programs: Vec<&str> = ["initdb", "pg_ctl", "createdb", "dropdb", "pg_isready"]
        .into_iter()
        .filter(|name| !bin_dir().join(name).exists())
        .collect();
    if !missing_programs.is_empty() {
        missing(&format!(
            "PostgreSQL programs {missing_programs:?} not found in {} (set KNOBEL_PG_BIN)",
            bin_dir().display()
        ));
    }
}

/// Fails the test unless the shared PostgreSQL server answers (see [`shared_admin_url`]).
pub fn require() {
    require_binaries();
    let (host, port) = host_port(&shared_admin_url());
    let ready = Command::new(bin_dir().join("pg_isready"))
        .args(["-h", &host, "-p", &port.to_string(), "-t", "10"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ready {
        missing(&format!(
            "PostgreSQL does not answer at {host}:{port} (set KNOBEL_TEST_POSTGRES_URL)"
        ));
    }
}

/// The host and port of a `postgres://user@host:port/db` URL.
fn host_port(url: &str) -> (String, u16) {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    match host_port.rsplit_once(':') {
        Some((host, port)) => (host.to_owned(), port.parse().expect("a port number")),
        None => (host_port.to_owned(), 5432),
    }
}

fn run(command: &mut Command) {
    let output = command.output().expect("cannot run a PostgreSQL program");
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A fresh database on the shared server, dropped when this is dropped.
pub struct SharedDatabase {
    name: String,
    /// Its URL.
    pub url: String,
}

impl SharedDatabase {
    /// Creates `knobel_e2e_<random>`.
    pub fn create() -> SharedDatabase {
        let admin = shared_admin_url();
        let (host, port) = host_port(&admin);
        let random: u64 = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            ^ u64::from(std::process::id()) << 32;
        let name = format!("knobel_e2e_{random:016x}");
        run(Command::new(bin_dir().join("createdb")).args([
            "-h",
            &host,
            "-p",
            &port.to_string(),
            "-U",
            "postgres",
            &name,
        ]));
        SharedDatabase {
            url: format!("postgres://postgres@{host}:{port}/{name}"),
            name,
        }
    }
}

impl Drop for SharedDatabase {
    fn drop(&mut self) {
        let (host, port) = host_port(&self.url);
        let _ = Command::new(bin_dir().join("dropdb"))
            .args([
                "--force",
                "-h",
                &host,
                "-p",
                &port.to_string(),
                "-U",
                "postgres",
            ])
            .arg(&self.name)
            .output();
    }
}

/// A PostgreSQL server of the test's own, in a temporary folder on a free port: it can be
/// stopped and started. As root, its programs run as the `postgres` user (PostgreSQL
/// refuses to run as root). Stopped when dropped.
pub struct PrivateServer {
    dir: tempfile::TempDir,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The URL of its database `knobel`.
    pub url: String,
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

impl PrivateServer {
    /// Creates the cluster (initdb), starts it and creates the database `knobel`.
    pub fn start() -> PrivateServer {
        let dir = tempfile::tempdir().expect("temp dir");
        if is_root() {
            run(Command::new("chown")
                .arg("-R")
                .arg("postgres:")
                .arg(dir.path()));
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let server = PrivateServer {
            url: format!("postgres://postgres@127.0.0.1:{port}/knobel"),
            dir,
            port,
        };
        run(server
            .command("initdb")
            .args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
                "-D",
            ])
            .arg(server.data()));
        server.start_again();
        run(server.command("createdb").args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "postgres",
            "knobel",
        ]));
        server
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The folder of the server's files (its log is `server.log` there).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A PostgreSQL program, run as `postgres` when we are root.
    fn command(&self, program: &str) -> Command {
        let path = bin_dir().join(program);
        if is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        }
    }

    /// Starts the (stopped) server and waits until it accepts connections.
    pub fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        run(self
            .command("pg_ctl")
            .args(["-w", "-t", "60", "-D"])
            .arg(self.data())
            .args(["-o", &options, "-l"])
            .arg(self.dir.path().join("server.log"))
            .arg("start"));
    }

    /// Stops the server with an immediate shutdown (like a crash: connections are cut, no
    /// checkpoint).
    pub fn stop_immediately(&self) {
        run(self
            .command("pg_ctl")
            .args(["-w", "-t", "60", "-m", "immediate", "-D"])
            .arg(self.data())
            .arg("stop"));
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["-w", "-m", "immediate", "-D"])
            .arg(self.data())
            .arg("stop")
            .output();
    }
}

impl Arena {
    /// The arena's metrics, in Prometheus' text format.
    pub async fn metrics_text(&self) -> String {
        crate::scrape(&self.metrics_url).await
    }

    /// The sum of the samples of metric `name` (over all its labels); 0 if it has none.
    pub async fn metric(&self, name: &str) -> f64 {
        crate::metric_sum(&self.metrics_text().await, name)
    }
}
