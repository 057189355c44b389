//! Harness for end-to-end tests: builds the `knobel` and `knobel-bot` binaries, starts the
//! arena as a real process on 127.0.0.1:0 with a fresh SQLite store, registers bots, starts
//! bot processes and talks to the arena over real gRPC.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use knobel_proto::v1::arena_client::ArenaClient;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

pub mod nats;
pub mod poll;
pub mod postgres;

pub use poll::{poll_every, poll_until};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_owned()
}

/// Builds the binaries once per test process and returns the directory they are in.
pub fn binaries() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        // The workspace's binaries as `cargo test --workspace` builds them (its features
        // unified over every package and its tests: `knobel-bot` with its `--misbehave`
        // modes, the feature `testing` that this crate asks for). After `cargo test
        // --workspace` has built the tests, nothing is left to build; building one package
        // alone would resolve other features and build every dependency again.
        let status = std::process::Command::new(&cargo)
            .current_dir(workspace())
            .args(["build", "--quiet", "--workspace", "--bins", "--tests"])
            .status()
            .expect("cannot run cargo build");
        assert!(status.success(), "building the binaries failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace().join("target"));
        target.join("debug")
    })
}

/// A running arena process with its own store.
pub struct Arena {
    /// The arena process.
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The metrics URL.
    pub metrics_url: String,
    /// The web viewer's URL, `http://127.0.0.1:PORT/`.
    pub web_url: String,
    /// The store's database URL.
    pub database_url: String,
    /// What the arena printed on stdout up to its last address line.
    pub start_up_lines: Vec<String>,
    _dir: Option<tempfile::TempDir>,
}

/// Options for [`Arena::start`].
#[derive(Clone, Debug)]
pub struct ArenaOptions {
    /// Extra `knobel serve` arguments.
    pub args: Vec<String>,
    /// Write the arena's log (stderr) to this file instead of the test's stderr.
    pub log_file: Option<PathBuf>,
}

impl Default for ArenaOptions {
    fn default() -> ArenaOptions {
        ArenaOptions {
            log_file: None,
            args: vec![
                "--decision-ms".into(),
                "1000".into(),
                "--zokken-rounds".into(),
                "10".into(),
            ],
        }
    }
}

impl Arena {
    /// Starts `knobel serve` on 127.0.0.1:0 with a fresh SQLite store.
    pub async fn start(options: ArenaOptions) -> Arena {
        Arena::start_with_env(options, &[]).await
    }

    /// Like [`Arena::start`], with extra environment variables for the arena process.
    pub async fn start_with_env(options: ArenaOptions, env: &[(&str, &str)]) -> Arena {
        Arena::start_with_limits(options, env, None).await
    }

    /// Like [`Arena::start_with_env`]; with `Some(n)`, the arena process starts with a soft
    /// and hard open-file limit of `n` (set in the child before it runs `knobel`).
    pub async fn start_with_limits(
        options: ArenaOptions,
        env: &[(&str, &str)],
        nofile: Option<u64>,
    ) -> Arena {
        let dir = tempfile::tempdir().expect("temp dir");
        let database_url = format!("sqlite://{}", dir.path().join("arena.db").display());
        Arena::launch(
            &binaries().join("knobel"),
            options,
            env,
            database_url,
            Some(dir),
            nofile,
        )
        .await
    }

    /// Like [`Arena::start`], on the database at `database_url` (e.g. one of
    /// [`postgres::SharedDatabase`] or [`postgres::PrivateServer`]).
    pub async fn start_on(options: ArenaOptions, database_url: &str) -> Arena {
        Arena::start_on_with_env(options, &[], database_url).await
    }

    /// Like [`Arena::start_on`], with extra environment variables for the arena process
    /// (e.g. `KNOBEL_ADMIN_TOKEN`); also to start an arena again on the database of one that
    /// stopped (keep the stopped [`Arena`] alive: it holds a SQLite store's folder).
    pub async fn start_on_with_env(
        options: ArenaOptions,
        env: &[(&str, &str)],
        database_url: &str,
    ) -> Arena {
        Arena::launch(
            &binaries().join("knobel"),
            options,
            env,
            database_url.to_owned(),
            None,
            None,
        )
        .await
    }

    /// Like [`Arena::start_on_with_env`], running the `knobel` binary at `knobel` (e.g. a
    /// release build, for benchmarks).
    pub async fn start_binary_on(
        knobel: &Path,
        options: ArenaOptions,
        env: &[(&str, &str)],
        database_url: &str,
    ) -> Arena {
        Arena::launch(knobel, options, env, database_url.to_owned(), None, None).await
    }

    async fn launch(
        knobel: &Path,
        options: ArenaOptions,
        env: &[(&str, &str)],
        database_url: String,
        dir: Option<tempfile::TempDir>,
        nofile: Option<u64>,
    ) -> Arena {
        let mut command = Command::new(knobel);
        if let Some(limit) = nofile {
            // SAFETY: only the setrlimit system call runs between fork and exec.
            unsafe {
                command.pre_exec(move || rlimit::setrlimit(rlimit::Resource::NOFILE, limit, limit));
            }
        }
        let mut child = command
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--metrics-listen",
                "127.0.0.1:0",
                "--web-listen",
                "127.0.0.1:0",
            ])
            .args(["--database-url", &database_url])
            .args(&options.args)
            .env(
                "RUST_LOG",
                std::env::var("KNOBEL_E2E_LOG").unwrap_or_else(|_| "warn".to_owned()),
            )
            .env_remove("KNOBEL_ADMIN_TOKEN")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(match &options.log_file {
                Some(path) => {
                    Stdio::from(std::fs::File::create(path).expect("create the log file"))
                }
                None => Stdio::inherit(),
            })
            .kill_on_drop(true)
            .spawn()
            .expect("cannot start knobel serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut url = None;
        let mut metrics_url = None;
        let mut web_url = None;
        let mut start_up_lines = Vec::new();
        while url.is_none() || metrics_url.is_none() || web_url.is_none() {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("the arena did not start within 30 s")
                .expect("read arena output")
                .expect("the arena exited before listening");
            if let Some(addr) = line.strip_prefix("knobel arena listening on ") {
                url = Some(format!("http://{addr}"));
            } else if let Some(metrics) = line.strip_prefix("knobel metrics on ") {
                metrics_url = Some(metrics.to_owned());
            } else if let Some(web) = line.strip_prefix("knobel web on ") {
                web_url = Some(web.to_owned());
            }
            start_up_lines.push(line);
        }
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Arena {
            child,
            url: url.expect("url"),
            metrics_url: metrics_url.expect("metrics url"),
            web_url: web_url.expect("web url"),
            database_url,
            start_up_lines,
            _dir: dir,
        }
    }

    /// Registers a bot with `knobel bot add` and returns its token.
    pub async fn add_bot(&self, name: &str) -> String {
        let output = Command::new(binaries().join("knobel"))
            .args(["bot", "add", name, "--database-url", &self.database_url])
            .output()
            .await
            .expect("cannot run knobel bot add");
        assert!(
            output.status.success(),
            "knobel bot add failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8(output.stdout).expect("utf-8");
        stdout
            .lines()
            .nth(1)
            .expect("the token line")
            .trim()
            .to_owned()
    }

    /// A gRPC client, authenticated with `token` if given.
    pub async fn client(&self) -> ArenaClient<Channel> {
        let channel = Channel::from_shared(self.url.clone())
            .expect("valid url")
            .connect()
            .await
            .expect("connect to the arena");
        ArenaClient::new(channel)
    }

    /// An Admin client, authenticated with the admin token `token` (the arena's
    /// `KNOBEL_ADMIN_TOKEN`).
    pub async fn admin(&self, token: &str) -> AdminClient<InterceptedService<Channel, Bearer>> {
        let channel = Channel::from_shared(self.url.clone())
            .expect("valid url")
            .connect()
            .await
            .expect("connect to the arena");
        let value = format!("Bearer {token}").parse().expect("ascii token");
        AdminClient::with_interceptor(channel, Bearer(value))
    }

    /// Starts a `knobel-bot` process.
    pub fn bot(&self, token: &str, args: &[&str]) -> Child {
        self.bot_command(token, args)
            .spawn()
            .expect("cannot start knobel-bot")
    }

    /// The command [`Arena::bot`] starts: `knobel-bot` against this arena with `args`,
    /// logging warnings to the inherited stderr, its stdout piped.
    pub fn bot_command(&self, token: &str, args: &[&str]) -> Command {
        let mut command = Command::new(binaries().join("knobel-bot"));
        command
            .args(["--server", &self.url, "--token", token])
            .args(args)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        command
    }

    /// Sends SIGTERM and waits for a clean exit.
    pub async fn stop(mut self) -> std::process::ExitStatus {
        self.terminate().await
    }

    /// Sends SIGTERM and waits for a clean exit, keeping the store for inspection.
    pub async fn terminate(&mut self) -> std::process::ExitStatus {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
        tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("the arena did not stop within 30 s after SIGTERM")
            .expect("wait for the arena")
    }

    /// Creates the league of `config_toml` through the Admin service (with `admin_token`) and
    /// starts it: its scheduled matches.
    pub async fn create_and_start_league(&self, admin_token: &str, config_toml: String) -> u32 {
        let mut admin = self.admin(admin_token).await;
        let created = admin
            .create_league(pb::CreateLeagueRequest { config_toml })
            .await
            .expect("create the league")
            .into_inner()
            .league
            .expect("the created league");
        admin
            .start_league(pb::LeagueRequest {
                name: created.name.clone(),
            })
            .await
            .expect("start the league");
        created.total_matches
    }

    /// Every stored match, newest first (every page of ListMatches).
    pub async fn matches(&self) -> Vec<pb::MatchSummary> {
        every_match(&mut self.client().await, pb::ListMatchesRequest::default()).await
    }

    /// Plays [`SETTLED_DUEL`] on this arena (started with `KNOBEL_ADMIN_TOKEN` =
    /// `admin_token`): registers `ace` and `fumble`, creates and starts the league, runs
    /// each bot with two streams and waits (at most `within`) until the league is over. Its
    /// standings then, and the bot processes (killed when dropped).
    pub async fn play_settled_duel(
        &self,
        admin_token: &str,
        within: Duration,
    ) -> (pb::GetStandingsResponse, Vec<Child>) {
        let mut bots = Vec::new();
        for (name, strategy) in [("ace", "heuristic"), ("fumble", "random")] {
            let token = self.add_bot(name).await;
            for _ in 0..2 {
                let args = ["--strategy", strategy, "--games", "zokken"];
                bots.push(self.bot(&token, &args));
            }
        }
        let mut admin = self.admin(admin_token).await;
        admin
            .create_league(pb::CreateLeagueRequest {
                config_toml: SETTLED_DUEL.to_owned(),
            })
            .await
            .expect("create the league");
        admin
            .start_league(pb::LeagueRequest {
                name: "duel".to_owned(),
            })
            .await
            .expect("start the league");
        let standings = league_over(&mut self.client().await, "duel", within).await;
        (standings, bots)
    }
}

/// A `stop = "settled"` league of Zokken (10 rounds) between `ace` (heuristic) and `fumble`
/// (random): far apart, so it stops once their neighbours are separated (16 sets at the
/// least), long before its budget of 200 matches ([`Arena::play_settled_duel`]).
pub const SETTLED_DUEL: &str = r#"
name = "duel"
bots = ["ace", "fumble"]
repetitions = 200
stop = "settled"
budget = 200
concurrency = 4

[games.zokken]
settings = { rounds = 10 }
"#;

/// Waits until league `name` is over (finished or cancelled), reading GetStandings (see
/// [`poll_until`]) for at most `within`: its standings then.
pub async fn league_over(
    client: &mut ArenaClient<Channel>,
    name: &str,
    within: Duration,
) -> pb::GetStandingsResponse {
    poll_until(within, &format!("league {name} is over"), || {
        let mut client = client.clone();
        async move {
            let standings = client
                .get_standings(pb::GetStandingsRequest {
                    league: name.to_owned(),
                })
                .await
                .expect("GetStandings")
                .into_inner();
            let status = standings.league.as_ref().map_or(0, |l| l.status);
            if status == pb::LeagueStatus::Finished as i32
                || status == pb::LeagueStatus::Cancelled as i32
            {
                Ok(standings)
            } else {
                Err(format!("{:?}", standings.league))
            }
        }
    })
    .await
}

/// Every match ListMatches lists with the filters of `filter`, newest first: every page, 500
/// at a time.
pub async fn every_match(
    client: &mut ArenaClient<Channel>,
    filter: pb::ListMatchesRequest,
) -> Vec<pb::MatchSummary> {
    let mut matches = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = client
            .list_matches(pb::ListMatchesRequest {
                limit: 500,
                page_token,
                ..filter.clone()
            })
            .await
            .expect("list matches")
            .into_inner();
        matches.extend(page.matches);
        if page.next_page_token.is_empty() {
            return matches;
        }
        page_token = page.next_page_token;
    }
}

/// Every die a match log says was thrown (each rolled slot of its throw entries), by key.
pub fn thrown_dice(log: &knobel_engine::MatchLog) -> HashMap<knobel_engine::DiceKey, u8> {
    let mut dice = HashMap::new();
    for entry in &log.entries {
        if let knobel_engine::LogEntry::Throw {
            seat,
            round,
            throw,
            rolled,
            dice: faces,
        } = entry
        {
            for slot in rolled.slots() {
                let key = knobel_engine::DiceKey {
                    seat: *seat,
                    round: *round,
                    throw: *throw,
                    slot: slot as u8,
                };
                dice.insert(key, faces[slot]);
            }
        }
    }
    dice
}

/// Raises this process's soft open-file limit to its hard limit and returns it (tests that
/// open many connections need more than the usual 1024).
pub fn raise_own_fd_limit() -> u64 {
    rlimit::increase_nofile_limit(u64::MAX).expect("raise the open-file limit")
}

/// Scrapes the Prometheus text of a metrics URL (`http://host:port/metrics`): a plain
/// HTTP/1.1 GET over loopback, connecting within 10 s; returns the body.
pub async fn scrape(url: &str) -> String {
    let (status, body) = http_get(url).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// `knobel serve` on free ports of 127.0.0.1, without the web viewer, with `args`: for an
/// arena that is expected to stop at start-up (its output is read whole).
pub fn serve_command(args: &[&str]) -> Command {
    let mut command = Command::new(binaries().join("knobel"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--metrics-listen"])
        .args(["127.0.0.1:0", "--web-listen", "off"])
        .args(args)
        .env("RUST_LOG", "warn")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .kill_on_drop(true);
    command
}

/// A free TCP port on 127.0.0.1 for a program that takes a port number (chromedriver,
/// Prometheus): bound, read and released, so the program binds it next. Another process
/// may take it in between: a caller that cannot afford that starts the program again on
/// another port when it exits.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port on 127.0.0.1")
        .port()
}

/// A plain HTTP/1.1 GET of `url` (`http://host:port/path`) over loopback, connecting within
/// 10 s: the status code and the body.
pub async fn http_get(url: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://").expect("an http url");
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut stream = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::net::TcpStream::connect(host),
    )
    .await
    .expect("the endpoint answers")
    .expect("connect to the endpoint");
    let (status, body) = http_request(&mut stream, host, &format!("/{path}"), false).await;
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// One HTTP/1.1 GET of `path` from `host` on `stream`, keeping the connection open for the
/// next if `keep_alive`: the status code and the body (read by its Content-Length, else to
/// the end).
pub async fn http_request(
    stream: &mut tokio::net::TcpStream,
    host: &str,
    path: &str,
    keep_alive: bool,
) -> (u16, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let connection = if keep_alive { "keep-alive" } else { "close" };
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: {connection}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut response = Vec::new();
    let mut buf = [0u8; 16384];
    let (head, mut body) = loop {
        let n = stream.read(&mut buf).await.expect("read");
        response.extend_from_slice(&buf[..n]);
        if let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&response[..end]).into_owned();
            break (head, response[end + 4..].to_vec());
        }
        assert!(n > 0, "the connection closed within the headers");
    };
    let length = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())
            .flatten()
    });
    match length {
        Some(length) => {
            while body.len() < length {
                let n = stream.read(&mut buf).await.expect("read");
                assert!(n > 0, "the connection closed within the body");
                body.extend_from_slice(&buf[..n]);
            }
        }
        None => {
            stream.read_to_end(&mut body).await.expect("read");
        }
    }
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {head}"));
    (status, body)
}

/// The value of the metric line starting with `name` (name and labels, e.g.
/// `knobel_tcp_connections`), 0 if absent.
pub fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| {
            let (key, value) = line.rsplit_once(' ')?;
            (key == name).then(|| value.parse().ok()).flatten()
        })
        .unwrap_or(0.0)
}

/// The sum of every series of metric `name` in Prometheus text `text`, whatever its labels
/// (0 if it has none).
pub fn metric_sum(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|line| {
            line.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with([' ', '{']))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The sum of the series of metric `name` in Prometheus text `text` whose labels contain
/// `label` (e.g. `status="finished"`).
pub fn metric_with(text: &str, name: &str, label: &str) -> f64 {
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{'))
                && l.contains(label)
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Adds `authorization: Bearer <token>` to every request of a client ([`Arena::admin`]).
#[derive(Clone)]
pub struct Bearer(MetadataValue<tonic::metadata::Ascii>);

impl tonic::service::Interceptor for Bearer {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        request
            .metadata_mut()
            .insert("authorization", self.0.clone());
        Ok(request)
    }
}

/// The Hello of a probe stream: Schocken, no preset, no match limit.
pub fn probe_hello() -> pb::BotMessage {
    pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Hello(pb::Hello {
            name: "probe".into(),
            games: vec![pb::Game::Schocken as i32],
            client_version: "e2e".into(),
            preset: None,
            max_matches: 0,
        })),
    }
}

impl Arena {
    /// Opens a Play stream with `token` and a [`probe_hello`]: the call's status, or its
    /// first message and the sender that keeps the stream open (dropping it ends the
    /// stream). What the arena sends later is read and dropped.
    pub async fn open_stream(
        &self,
        token: &str,
    ) -> Result<(pb::ArenaMessage, tokio::sync::mpsc::Sender<pb::BotMessage>), tonic::Status> {
        let mut client = self.client().await;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tx.send(probe_hello())
            .await
            .expect("a new channel takes the Hello");
        let mut inbound = client
            .play(authorized(
                tokio_stream::wrappers::ReceiverStream::new(rx),
                token,
            ))
            .await?
            .into_inner();
        let first = tokio::time::timeout(Duration::from_secs(10), inbound.message())
            .await
            .expect("an answer within 10 s")?
            .expect("a message");
        tokio::spawn(async move { while let Ok(Some(_)) = inbound.message().await {} });
        Ok((first, tx))
    }
}

/// Adds `authorization: Bearer <token>` to a request.
pub fn authorized<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let value: MetadataValue<_> = format!("Bearer {token}").parse().expect("ascii token");
    request.metadata_mut().insert("authorization", value);
    request
}

/// Waits for a bot process to exit and returns its stdout lines.
pub async fn finish(mut child: Child, within: Duration) -> (std::process::ExitStatus, Vec<String>) {
    let stdout = child.stdout.take().expect("piped stdout");
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        let mut out = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            out.push(line);
        }
        out
    });
    let status = tokio::time::timeout(within, child.wait())
        .await
        .expect("the bot did not finish in time")
        .expect("wait for the bot");
    (status, reader.await.expect("reader"))
}

/// The Python interpreter with grpcio installed: `KNOBEL_PYTHON` (`.ci/run` makes one),
/// else `python3` if it has grpcio and protobuf. Fails the test if there is none: a test
/// never passes without having run (build with `KNOBEL_TEST_WITHOUT=python` to mark it
/// ignored instead; see `arena/server/build.rs`, the build script of this crate too).
pub fn python() -> PathBuf {
    if let Some(path) = std::env::var_os("KNOBEL_PYTHON") {
        return PathBuf::from(path);
    }
    let has_grpcio = std::process::Command::new("python3")
        .args(["-c", "import grpc, google.protobuf"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        has_grpcio,
        "this test needs Python 3 with grpcio and protobuf: set KNOBEL_PYTHON to one (python3 \
         -m venv .venv && .venv/bin/pip install -r bots/python/requirements.txt, as .ci/run \
         does), or build the tests with KNOBEL_TEST_WITHOUT=python to mark it ignored \
         (refused in CI)"
    );
    PathBuf::from("python3")
}

/// [`python`], with the Python example bot's gRPC stubs generated (`bots/python/gen/`) if
/// they are not there yet.
pub async fn python_with_stubs() -> PathBuf {
    let python = python();
    let bot_dir = workspace().join("bots/python");
    if !bot_dir.join("gen/knobel/v1/arena_pb2.py").exists() {
        let status = Command::new("sh")
            .arg(bot_dir.join("generate.sh"))
            .env("PYTHON", &python)
            .status()
            .await
            .expect("run generate.sh");
        assert!(status.success(), "generating the Python stubs failed");
    }
    python
}

/// A player whose every decision is a function of its observation (and `share_per_mille`,
/// the share of decisions it plays "at random", the rest as the heuristic): the same
/// schedule gives the same results whichever stream and arena play it.
pub fn deterministic_player(
    share_per_mille: u64,
) -> impl FnMut(&knobel_engine::Observation, &[knobel_engine::Action]) -> knobel_engine::Action + Send
{
    use knobel_engine::policy::{HeuristicPolicy, Policy};
    use std::hash::{Hash, Hasher};
    move |seen, legal| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        serde_json::to_string(seen)
            .expect("an observation serializes")
            .hash(&mut hasher);
        let h = hasher.finish();
        if h % 1000 < share_per_mille {
            legal[((h >> 16) % legal.len() as u64) as usize]
        } else {
            HeuristicPolicy.decide(seen, legal)
        }
    }
}
