//! What the benchmarks share: a bare server of the generated `Arena` service whose `Play`
//! the benchmark supplies (every other RPC is unimplemented), served with the arena's
//! transport settings, a DecisionRequest built from the engine, percentiles, runtimes.

use std::pin::Pin;

use knobel_arena::server::MAX_MESSAGE_BYTES;
use knobel_engine::{Match, Rules};
use knobel_proto::v1 as pb;
use knobel_proto::v1::arena_server::{Arena, ArenaServer};
use pb::arena_message::Kind;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_stream::Stream;
use tonic::transport::server::TcpIncoming;
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
