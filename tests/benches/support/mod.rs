//! What the benchmarks share: a bare server of the generated `Arena` service whose `Play`
//! the benchmark supplies (every other RPC is unimplemented), served with the arena's
//! transport settings, a DecisionRequest built from the engine, percentiles, runtimes.

use std::pin::Pin;

use std::path::PathBuf;

use knobel_arena::server::MAX_MESSAGE_BYTES;
use knobel_e2e::{authorized, workspace};
use knobel_engine::{Match, Rules};
use knobel_proto::v1 as pb;
use knobel_proto::v1::arena_client::ArenaClient;
use knobel_proto::v1::arena_server::{Arena, ArenaServer};
use pb::arena_message::Kind;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Response, Status, Streaming};

/// What the arena sends on a Play stream.
pub type PlayStream = Pin<Box<dyn Stream<Item = Result<pb::ArenaMessage, Status>> + Send>>;

/// The `Arena` service with `play` as its Play RPC and nothing else.
pub struct PlayOnly<F> {
    pub play: F,
}

#[tonic::async_trait]
impl<F> Arena for PlayOnly<F>
where
    F: Fn(Streaming<pb::BotMessage>) -> PlayStream + Send + Sync + 'static,
{
    type PlayStream = PlayStream;

    async fn play(
        &self,
        request: Request<Streaming<pb::BotMessage>>,
    ) -> Result<Response<PlayStream>, Status> {
        Ok(Response::new((self.play)(request.into_inner())))
    }

    async fn list_matches(
        &self,
        _request: Request<pb::ListMatchesRequest>,
    ) -> Result<Response<pb::ListMatchesResponse>, Status> {
        Err(Status::unimplemented("echo"))
    }

    async fn get_match_log(
        &self,
        _request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<pb::MatchLogResponse>, Status> {
        Err(Status::unimplemented("echo"))
    }

    async fn get_match_record(
        &self,
        _request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<pb::MatchRecordResponse>, Status> {
        Err(Status::unimplemented("echo"))
    }

    type ExportLeagueStream =
        Pin<Box<dyn Stream<Item = Result<pb::LeagueArchiveChunk, Status>> + Send>>;

    async fn export_league(
        &self,
        _request: Request<pb::ExportLeagueRequest>,
    ) -> Result<Response<Self::ExportLeagueStream>, Status> {
        Err(Status::unimplemented("no leagues here"))
    }

    type StreamMatchLogStream =
        Pin<Box<dyn Stream<Item = Result<pb::MatchLogChunk, Status>> + Send>>;

    async fn stream_match_log(
        &self,
        _request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<Self::StreamMatchLogStream>, Status> {
        Err(Status::unimplemented("echo"))
    }

    async fn get_standings(
        &self,
        _request: Request<pb::GetStandingsRequest>,
    ) -> Result<Response<pb::GetStandingsResponse>, Status> {
        Err(Status::unimplemented("no leagues here"))
    }

    async fn list_leagues(
        &self,
        _request: Request<pb::ListLeaguesRequest>,
    ) -> Result<Response<pb::ListLeaguesResponse>, Status> {
        Err(Status::unimplemented("no leagues here"))
    }
}

/// Serves `play` on `listener` with the arena's transport settings (TCP_NODELAY on, as a
/// tonic server should have it).
pub async fn serve_play<F>(
    listener: TcpListener,
    play: F,
    shutdown: impl Future<Output = ()> + Send,
) where
    F: Fn(Streaming<pb::BotMessage>) -> PlayStream + Send + Sync + 'static,
{
    let service = ArenaServer::new(PlayOnly { play })
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(4 * 1024 * 1024);
    tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(Duration::from_secs(30)))
        .http2_keepalive_timeout(Some(Duration::from_secs(10)))
        .add_service(service)
        .serve_with_incoming_shutdown(
            TcpIncoming::from(listener).with_nodelay(Some(true)),
            shutdown,
        )
        .await
        .expect("the echo server failed");
}

/// A DecisionRequest built from the engine: the first request of a two-seat Schocken match.
pub fn engine_request() -> pb::ArenaMessage {
    let rules = Rules::preset("schocken").expect("the schocken preset");
    let m = Match::new(rules, 7, 2).expect("a match");
    let seat = m.to_act().iter().next().expect("a seat to act");
    let request = knobel_proto::convert::decision_request(&m, seat, 1, 1000, 10_000)
        .expect("a decision request");
    pb::ArenaMessage::from(Kind::DecisionRequest(request))
}

/// The nearest-rank percentile `q` (0..=1) of unsorted samples, in microseconds.
pub fn percentile_us(samples: &[u64], q: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1000.0
}

/// A two-worker tokio runtime whose threads are named `name`.
pub fn runtime(name: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Six built-in players of clearly different strength, strongest first: the field of the
/// benchmarks that play a league over gRPC.
pub const LEAGUE_PLAYERS: [&str; 6] = [
    "heuristic",
    "heuristic-80",
    "heuristic-60",
    "heuristic-40",
    "heuristic-20",
    "random",
];

/// A built-in player that counts its decisions.
pub struct Counting {
    pub policy: Box<dyn knobel_engine::policy::Policy + Send>,
    pub decisions: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl knobel_bots::BotPolicy for Counting {
    fn begin_match(&mut self, rules: &Rules) {
        self.policy.begin_match(rules)
    }

    fn decide(
        &mut self,
        observation: &knobel_engine::Observation,
        legal: &[knobel_engine::Action],
    ) -> knobel_engine::Action {
        self.decisions
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.policy.decide(observation, legal)
    }
}

// Clients of the arena's Play stream, and the release binary.

/// A channel to `url` with TCP_NODELAY.
pub async fn connect(url: &str) -> Channel {
    Endpoint::from_shared(url.to_owned())
        .expect("valid url")
        .tcp_nodelay(true)
        .connect()
        .await
        .expect("connect")
}

/// A Hello for Schocken, asking for `max_matches` (0: no limit).
pub fn hello(max_matches: u32) -> pb::BotMessage {
    pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Hello(pb::Hello {
            name: "bench".into(),
            games: vec![pb::Game::Schocken as i32],
            client_version: "knobel-bench".into(),
            preset: None,
            max_matches,
        })),
    }
}

/// A Decision answering `request_id`.
pub fn decision(request_id: u64, action: Option<pb::Action>) -> pb::BotMessage {
    pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Decision(pb::Decision {
            request_id,
            action,
        })),
    }
}

/// Opens a Play stream that has sent its Hello (asking for `max_matches`, 0: no limit).
///
/// A bot's streams of the previous round may still count against its stream limit for a
/// moment after they closed (the server sees them end asynchronously): it tries again then.
pub async fn open(
    channel: Channel,
    token: &str,
    max_matches: u32,
) -> (mpsc::Sender<pb::BotMessage>, Streaming<pb::ArenaMessage>) {
    let mut attempts = 0;
    loop {
        let (tx, rx) = mpsc::channel(16);
        tx.send(hello(max_matches)).await.expect("queue the hello");
        match ArenaClient::new(channel.clone())
            .play(authorized(ReceiverStream::new(rx), token))
            .await
        {
            Ok(response) => return (tx, response.into_inner()),
            Err(status) if status.code() == tonic::Code::ResourceExhausted && attempts < 200 => {
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(status) => panic!("play: {status:?}"),
        }
    }
}

/// `d` in nanoseconds.
pub fn nanos(d: Duration) -> u64 {
    d.as_nanos().try_into().unwrap_or(u64::MAX)
}

/// Where cargo builds (`CARGO_TARGET_DIR`, else the workspace's `target`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
}

/// Builds the release `knobel` binary (a no-op when it is up to date).
pub fn release_knobel() -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    println!("building the release knobel binary (cargo build --release -p knobel-arena)...");
    let status = std::process::Command::new(cargo)
        .current_dir(workspace())
        .args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "knobel-arena",
            "--bin",
            "knobel",
        ])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("cargo build --release -p knobel-arena failed".to_owned());
    }
    Ok(target_dir().join("release").join("knobel"))
}
