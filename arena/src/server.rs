//! The gRPC server: the `knobel.v1.Arena` service, health and reflection.
//!
//! One `Play` stream is one seat. The connection task of a stream authenticates the bot
//! (before any seat is taken), reads its Hello, then repeatedly joins the lobby and pumps
//! messages between the bot and the referee of its current match. Engine types become wire
//! types only here, through `knobel_proto::convert` (the one wire boundary).

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use knobel_engine::{ForfeitReason, Game, Seat};
use knobel_proto::outbound::arena_server::{Arena, ArenaServer};
use knobel_proto::outbound::{self, OutboundMessage};
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_server::{Admin, AdminServer};
use knobel_proto::{BotDecision, BotHello, convert};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::WaitForCancellationFutureOwned;
use tonic::{Request, Response, Status, Streaming};
use tracing::{info, warn};

use crate::auth;
use crate::lobby::{Handoff, Lobby, LobbyConfig};
use crate::metrics::Metrics;
use crate::net::{self, AuthThrottle, NetLimits, PeerCounter};
use crate::page_token;
use crate::referee::{BotLink, EventBatch, FromSeat, MAX_STRIKES, Problem, ToSeat};
use crate::store::{MatchCursor, MatchFilter, MatchStatus, Store, StoreError};
use crate::streams::{StreamRegistry, StreamSlot};

/// Largest message the arena accepts from a bot, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Largest message the arena sends, in bytes (encoded): GetMatchLog refuses a log that does
/// not fit, pointing to StreamMatchLog.
pub const MAX_SENT_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// Largest piece of a log StreamMatchLog sends, in bytes of its JSON text.
pub const LOG_CHUNK_BYTES: usize = 1024 * 1024;
/// Most match logs served at once (a log is held whole in memory while it is sent: a
/// Zokken match of 100 000 rounds has a log of about 470 MB); more are refused with
/// RESOURCE_EXHAUSTED.
pub const MAX_LOGS_IN_FLIGHT: usize = 4;
/// How long a new stream has to send its Hello, by default (see
/// [`NetLimits::hello_timeout`]).
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Pings a stream may send per minute before they are refused.
pub const MAX_PINGS_PER_MINUTE: u32 = 120;
/// How long a bot whose match could not start (the store is unavailable) waits before it
/// joins the lobby again.
const UNSTARTED_PAUSE: Duration = Duration::from_secs(1);
/// How long matches must have failed to start before a waiting bot is told
/// (`ERROR_CODE_ARENA_UNAVAILABLE`), and how often it is told again while it lasts.
const UNAVAILABLE_NOTICE_AFTER: Duration = Duration::from_secs(2);
const UNAVAILABLE_NOTICE_EVERY: Duration = Duration::from_secs(10);
/// Messages buffered towards one bot; a bot that lets this many pile up is not reading and
/// forfeits its seat.
const TO_BOT_BUFFER: usize = 4096;

/// Settings of the server.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// How matches are formed and timed.
    pub lobby: LobbyConfig,
    /// Most Play streams one bot may have open at once.
    pub max_streams_per_bot: usize,
    /// How long running matches get on shutdown before they are aborted.
    pub shutdown_grace: Duration,
    /// The admin token guarding the `Admin` service; `None` disables it.
    pub admin_token: Option<auth::AdminToken>,
    /// How long each renewal of this arena's lease holds (see [`crate::instance`]): if the
    /// arena stops renewing it (it crashed, or is cut off from the database), other arenas
    /// on the same database abort its running matches after this long.
    pub instance_lease: Duration,
    /// Connection bounds and timeouts, streams without Hello, failed logins.
    pub net: NetLimits,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            lobby: LobbyConfig::default(),
            max_streams_per_bot: 8,
            shutdown_grace: Duration::from_secs(5),
            admin_token: None,
            instance_lease: Duration::from_secs(30),
            net: NetLimits::default(),
        }
    }
}

/// Why the server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The gRPC transport failed.
    #[error("grpc server failed: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The metrics endpoint failed.
    #[error("metrics endpoint failed: {0}")]
    Metrics(#[from] std::io::Error),
    /// The reflection service could not be built.
    #[error("cannot build the reflection service: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The arena could not register itself in the store (take its lease).
    #[error("cannot register the arena instance in the store: {0}")]
    Register(#[from] StoreError),
    /// A connection limit is out of its range.
    #[error(transparent)]
    Limits(#[from] net::NetLimitsError),
}

/// How long, after the running matches have ended, the arena waits on shutdown for the
/// results it could not write yet (the database being unavailable).
pub const RECORDS_DRAIN: Duration = Duration::from_secs(10);

/// Runs the arena on `listener` (and metrics on `metrics_listener`) until `shutdown`
/// resolves.
///
/// First the arena registers itself as an instance in the store (see
/// [`crate::instance`]), aborting the running matches of arenas that are gone, and keeps
/// its lease renewed while it runs. On `shutdown`: health turns NOT_SERVING at once; no new
/// match is seated and waiting bots are refused with UNAVAILABLE; running matches play on
/// (the server keeps serving their streams) for up to `config.shutdown_grace`, then the
/// rest are aborted and recorded as aborted; the results not yet written are given up to
/// [`RECORDS_DRAIN`]; then the listener closes and the lease is released.
pub async fn serve(
    config: ServerConfig,
    store: Store,
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    config.net.validate()?;
    let metrics = Metrics::new();
    let instance = crate::instance::Instance::register(&store, config.instance_lease).await?;
    let store = store.owned_by(instance.id.clone());
    let (stop_heartbeat, heartbeat_stopped) = watch::channel(false);
    let heartbeat = tokio::spawn(instance.clone().heartbeat(
        store.clone(),
        metrics.clone(),
        heartbeat_stopped,
    ));
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let lobby = Lobby::new(
        config.lobby.clone(),
        store.clone(),
        metrics.clone(),
        shutdown_rx.clone(),
    );
    let streams = StreamRegistry::default();
    // Bots revoked by another process (`knobel bot revoke`) lose their streams within
    // `streams::REVOKE_POLL`.
    tokio::spawn(
        streams
            .clone()
            .watch_revocations(store.clone(), shutdown_rx.clone()),
    );
    let throttle = Arc::new(AuthThrottle::from_limits(&config.net));
    let net_metrics = net::NetMetrics::new(metrics.registry());
    let admin = AdminService {
        store: store.clone(),
        token: config.admin_token.clone(),
        streams: streams.clone(),
        throttle: throttle.clone(),
    };
    let service = ArenaService {
        store: store.clone(),
        lobby: lobby.clone(),
        metrics: metrics.clone(),
        streams,
        max_streams_per_bot: config.max_streams_per_bot,
        shutdown: shutdown_rx.clone(),
        throttle,
        pending_hello: PeerCounter::with_gauge(
            config.net.max_pending_hello,
            config.net.max_pending_hello_per_peer,
            Some(net_metrics.pending_hello.clone()),
        ),
        hello_timeout: config.net.hello_timeout,
        logs_in_flight: Arc::new(tokio::sync::Semaphore::new(MAX_LOGS_IN_FLIGHT)),
    };

    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_serving::<ArenaServer<ArenaService>>()
        .await;
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(knobel_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(knobel_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;

    // One signal for everything: the caller's shutdown future flips the watch. Health
    // says NOT_SERVING first, before anything else stops.
    let mut signal = shutdown_rx.clone();
    let reporter = health_reporter.clone();
    tokio::spawn(async move {
        shutdown.await;
        reporter
            .set_not_serving::<ArenaServer<ArenaService>>()
            .await;
        reporter
            .set_service_status("", tonic_health::ServingStatus::NotServing)
            .await;
        let _ = shutdown_tx.send(true);
    });
    // Metrics are served until the arena has stopped.
    let metrics_task = metrics_listener.map(|listener| {
        tokio::spawn(
            metrics
                .clone()
                .serve(listener, std::future::pending::<()>()),
        )
    });
    let drain_lobby = lobby.clone();
    let grace = config.shutdown_grace;

    let arena = ArenaServer::new(service)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_SENT_MESSAGE_BYTES);
    // Connections within the bounds, closed when silent (see `net`); `net` sets
    // TCP_NODELAY, or Nagle's algorithm holds small messages back for the bot's delayed
    // ACK (~40 ms).
    let incoming = net::incoming(listener, &config.net, net_metrics);
    let result = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(config.net.keepalive_interval))
        .http2_keepalive_timeout(Some(config.net.keepalive_timeout))
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(arena)
        .add_service(AdminServer::new(admin).max_decoding_message_size(MAX_MESSAGE_BYTES))
        .serve_with_incoming_shutdown(incoming, async move {
            crate::referee::shutting_down(&mut signal).await;
            info!(
                grace_secs = grace.as_secs_f64(),
                "shutting down: no new matches; running matches may finish within the grace"
            );
            // The server keeps serving the running matches' streams meanwhile.
            drain_lobby.drain(grace, RECORDS_DRAIN).await;
        })
        .await;
    let _ = stop_heartbeat.send(true);
    let _ = heartbeat.await;
    match store.release_lease(&instance.id).await {
        Ok(_) => info!(instance = %instance.id, "the arena's lease is released"),
        Err(error) => {
            warn!(instance = %instance.id, error = %error, "cannot release the arena's lease: it runs out by itself")
        }
    }
    if let Some(task) = metrics_task {
        task.abort();
    }
    info!("arena stopped");
    result.map_err(ServeError::from)
}

/// The `knobel.v1.Arena` service.
struct ArenaService {
    store: Store,
    lobby: Arc<Lobby>,
    metrics: Metrics,
    /// Open Play streams per bot id.
    streams: StreamRegistry,
    max_streams_per_bot: usize,
    shutdown: watch::Receiver<bool>,
    /// Failed logins per peer address.
    throttle: Arc<AuthThrottle>,
    /// Streams that have not sent their Hello yet, in all and per peer address.
    pending_hello: PeerCounter,
    hello_timeout: Duration,
    /// Match logs being served (GetMatchLog, StreamMatchLog): each is held whole in memory
    /// while it is sent, so at most [`MAX_LOGS_IN_FLIGHT`] at once.
    logs_in_flight: Arc<tokio::sync::Semaphore>,
}

impl ArenaService {
    /// Reads and checks a new stream's first message, its Hello, within the Hello timeout;
    /// gives the Hello and the preset it plays.
    async fn read_hello(
        &self,
        inbound: &mut Streaming<pb::BotMessage>,
    ) -> Result<(BotHello, String), Status> {
        let mut shutdown = self.shutdown.clone();
        let first = tokio::select! {
            first = tokio::time::timeout(self.hello_timeout, inbound.message()) => first,
            _ = crate::referee::shutting_down(&mut shutdown) => {
                return Err(Status::unavailable("the arena is shutting down"));
            }
        };
        let hello = match first {
            Ok(Ok(Some(pb::BotMessage {
                kind: Some(pb::bot_message::Kind::Hello(hello)),
            }))) => hello,
            Ok(Ok(Some(_))) => {
                return Err(Status::failed_precondition(
                    "the first message must be a Hello",
                ));
            }
            Ok(Ok(None)) => {
                return Err(Status::failed_precondition(
                    "the stream ended before its Hello",
                ));
            }
            Ok(Err(status)) => {
                return Err(broken_stream(&status)
                    .unwrap_or_else(|| Status::cancelled("the stream ended before its Hello")));
            }
            Err(_) => {
                return Err(Status::deadline_exceeded(format!(
                    "no Hello within {} ms: send a Hello as the first message",
                    self.hello_timeout.as_millis()
                )));
            }
        };
        let hello =
            BotHello::try_from(&hello).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let preset = hello
            .preset
            .clone()
            .unwrap_or_else(|| hello.games[0].name().to_owned());
        if self.lobby.rules_for(&preset).is_none() {
            return Err(Status::invalid_argument(format!(
                "unknown preset {preset:?}: presets are {}",
                knobel_engine::PRESETS.join(", ")
            )));
        }
        Ok((hello, preset))
    }
}

/// The peer address of a request (from the connection), for the per-address bounds.
fn peer_of<T>(request: &Request<T>) -> IpAddr {
    request
        .remote_addr()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |addr| addr.ip())
}

/// Refuses a peer whose failed logins are over the throttle, before any lookup.
fn check_throttle(throttle: &AuthThrottle, peer: IpAddr) -> Result<(), Status> {
    throttle.check(peer).map_err(|wait| {
        throttle.log_refusal(peer, wait);
        Status::resource_exhausted(throttle.message(peer, wait))
    })
}

/// The status a broken stream ends with, from the status tonic's decoder gave: `None`
/// when the connection is gone (nobody to tell). The codes are the ones the gRPC spec
/// gives: RESOURCE_EXHAUSTED for a message over the size limit, INTERNAL for a request
/// that cannot be parsed (bad framing, bytes that are not a message); the message says
/// which it was, and the limit.
fn broken_stream(status: &Status) -> Option<Status> {
    let message = status.message();
    match status.code() {
        // The connection went away (the bot exited, reset the stream).
        tonic::Code::Unknown | tonic::Code::Cancelled => None,
        tonic::Code::OutOfRange | tonic::Code::ResourceExhausted => {
            // tonic: "... found {len} bytes, the limit is: {limit} bytes".
            let found = message
                .split_once("found ")
                .and_then(|(_, rest)| rest.split(' ').next())
                .and_then(|n| n.parse::<u64>().ok());
            Some(Status::resource_exhausted(match found {
                Some(len) => format!(
                    "message of {len} bytes is over the limit of {MAX_MESSAGE_BYTES} bytes: the stream is closed"
                ),
                None => format!(
                    "a message is over the limit of {MAX_MESSAGE_BYTES} bytes ({message}): the stream is closed"
                ),
            }))
        }
        _ if message.contains("protocol error") || message.contains("EOF") => {
            Some(Status::internal(format!(
                "bad gRPC framing ({message}): a frame is a compressed flag of 0 (the arena takes no compression), a 4-byte big-endian length of at most {MAX_MESSAGE_BYTES} and that many bytes of one BotMessage; the stream is closed"
            )))
        }
        _ if message.contains("decode") => Some(Status::internal(format!(
            "a frame that is not a BotMessage ({message}): the stream is closed"
        ))),
        _ => Some(Status::internal(format!(
            "the stream broke ({message}): the stream is closed"
        ))),
    }
}

/// The status for a failed store call: UNAVAILABLE (worth a retry) if the database is
/// unavailable, else "internal error" (the full error goes to the log only).
fn internal(error: StoreError) -> Status {
    warn!(error = %error, "store error");
    if error.is_unavailable() {
        Status::unavailable("the arena's database is unavailable: try again later")
    } else {
        Status::internal("internal error")
    }
}

impl ArenaService {
    /// [`internal`], counting an unavailable database in the metrics under `operation`.
    fn store_failed(&self, operation: &'static str) -> impl FnOnce(StoreError) -> Status {
        let metrics = self.metrics.clone();
        move |error| {
            if error.is_unavailable() {
                metrics.store_error(operation);
            }
            internal(error)
        }
    }
}

type PlayStream = Pin<Box<dyn Stream<Item = Result<OutboundMessage, Status>> + Send>>;

#[tonic::async_trait]
impl Arena for ArenaService {
    type PlayStream = PlayStream;

    async fn play(
        &self,
        request: Request<Streaming<pb::BotMessage>>,
    ) -> Result<Response<PlayStream>, Status> {
        let peer = peer_of(&request);
        check_throttle(&self.throttle, peer)?;
        let header = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let Some(token) = auth::bearer_token(header) else {
            return Err(Status::unauthenticated(
                "missing bot token: send metadata `authorization: Bearer <token>` (see `knobel bot add`)",
            ));
        };
        let bot = self
            .store
            .bot_by_token_hash(&auth::hash_token(token))
            .await
            .map_err(self.store_failed("auth"))?
            .ok_or_else(|| {
                self.throttle.failed(peer);
                Status::unauthenticated(
                    "unknown or revoked bot token: register the bot with `knobel bot add NAME`",
                )
            })?;
        if *self.shutdown.borrow() {
            return Err(Status::unavailable("the arena is shutting down"));
        }
        // The stream takes one of the bot's slots only once its Hello is read; until then
        // it counts against the (per-address) bound on streams without a Hello.
        let pending = self.pending_hello.acquire(peer).map_err(|over| {
            Status::resource_exhausted(over.message(
                "Play streams without a Hello",
                peer,
                "--max-pending-hello",
                "--max-pending-hello-per-peer",
            ))
        })?;
        let mut inbound = request.into_inner();
        let (hello, preset) = self.read_hello(&mut inbound).await?;
        drop(pending);
        let slot = self
            .streams
            .acquire(bot.id, self.max_streams_per_bot, &self.metrics)
            .map_err(|count| {
                Status::resource_exhausted(format!(
                    "bot {} already has {} open Play streams: at most {} are allowed",
                    bot.name, count, self.max_streams_per_bot
                ))
            })?;
        let (out, out_rx) = mpsc::channel(TO_BOT_BUFFER);
        let connection = Connection {
            bot_id: bot.id,
            bot_name: bot.name,
            lobby: self.lobby.clone(),
            metrics: self.metrics.clone(),
            shutdown: self.shutdown.clone(),
            hello_timeout: self.hello_timeout,
            slot,
        };
        // Every log line of the stream names the client as its Hello did (Hello.name).
        let span = tracing::info_span!("stream", client_name = %hello.name);
        tokio::spawn(tracing::Instrument::instrument(
            connection.run(inbound, hello, preset, out),
            span,
        ));
        Ok(Response::new(Box::pin(ReceiverStream::new(out_rx))))
    }

    async fn list_matches(
        &self,
        request: Request<pb::ListMatchesRequest>,
    ) -> Result<Response<pb::ListMatchesResponse>, Status> {
        let request = request.into_inner();
        let game = match request.game {
            0 => None,
            value => Some(
                convert::game_from_wire("game", value)
                    .map_err(|e| Status::invalid_argument(e.to_string()))?
                    .name()
                    .to_owned(),
            ),
        };
        let status = match pb::MatchStatus::try_from(request.status) {
            Ok(pb::MatchStatus::Unspecified) => None,
            Ok(pb::MatchStatus::Running) => Some(MatchStatus::Running),
            Ok(pb::MatchStatus::Finished) => Some(MatchStatus::Finished),
            Ok(pb::MatchStatus::Aborted) => Some(MatchStatus::Aborted),
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "status = {} is not a known value: legal values are 0..=3",
                    request.status
                )));
            }
        };
        let after = page_token::decode(&request.page_token)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let bot_name = match request.bot_name {
            name if name.is_empty() => None,
            name if name.len() > knobel_proto::names::MAX_NAME_BYTES => {
                return Err(Status::invalid_argument(format!(
                    "bot_name is {} bytes: names are at most {} bytes (empty: every bot)",
                    name.len(),
                    knobel_proto::names::MAX_NAME_BYTES
                )));
            }
            name => Some(name),
        };
        // 0: the default; over the cap: clamped to it (as the proto documents).
        let limit = match request.limit {
            0 => MatchFilter::DEFAULT_LIMIT,
            limit => limit.min(MatchFilter::MAX_LIMIT),
        };
        let filter = MatchFilter {
            game,
            status,
            bot_name,
            limit,
            after,
        };
        let (found, more) = self
            .store
            .list_matches_page(&filter)
            .await
            .map_err(self.store_failed("list_matches"))?;
        let next_page_token = match found.last() {
            Some(last) if more => page_token::encode(&MatchCursor::of(last)),
            _ => String::new(),
        };
        let matches = found
            .into_iter()
            .map(|m| pb::MatchSummary {
                match_id: m.id,
                game: m
                    .game
                    .parse::<Game>()
                    .map_or(0, |g| pb::Game::from(g) as i32),
                preset: m.preset,
                variants: serde_json::from_str::<knobel_engine::Rules>(&m.rules_json)
                    .map(|rules| rules.variants_on().into_iter().map(str::to_owned).collect())
                    .unwrap_or_default(),
                seat_names: m.seat_names,
                status: wire_status(m.status) as i32,
                // The full outcome; a match recorded before the store kept outcomes has its
                // placings only.
                outcome: match (m.outcome, m.placings) {
                    (Some(outcome), _) => Some(pb::Outcome::from(&outcome)),
                    (None, placings) => placings.map(|placings| pb::Outcome {
                        placings: placings.into_iter().map(u32::from).collect(),
                        ..pb::Outcome::default()
                    }),
                },
                started_unix_ms: m.started_at_ms.max(0) as u64,
                finished_unix_ms: m.finished_at_ms.map(|t| t.max(0) as u64),
            })
            .collect();
        Ok(Response::new(pb::ListMatchesResponse {
            matches,
            next_page_token,
        }))
    }

    async fn get_match_log(
        &self,
        request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<pb::MatchLogResponse>, Status> {
        let id = request.into_inner().match_id;
        let (log_json, _serving) = self.ended_log(&id).await?;
        let response = pb::MatchLogResponse {
            match_id: id,
            log_json,
        };
        let size = prost::Message::encoded_len(&response);
        if size > MAX_SENT_MESSAGE_BYTES {
            return Err(Status::resource_exhausted(format!(
                "the log of match {} is {size} bytes encoded, over GetMatchLog's limit of \
                 {MAX_SENT_MESSAGE_BYTES} bytes: use StreamMatchLog, which sends any log in \
                 chunks",
                response.match_id
            )));
        }
        Ok(Response::new(response))
    }

    type StreamMatchLogStream = LogChunks;

    async fn stream_match_log(
        &self,
        request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<LogChunks>, Status> {
        let id = request.into_inner().match_id;
        let (log, serving) = self.ended_log(&id).await?;
        let log = bytes::Bytes::from(log);
        let total_bytes = log.len() as u64;
        // Cut lazily, as the client reads: one chunk at a time is copied out of the log.
        // The log counts as in flight until the stream is done or dropped.
        let chunks = (0..log.len().div_ceil(LOG_CHUNK_BYTES).max(1)).map(move |i| {
            let _serving = &serving;
            let start = i * LOG_CHUNK_BYTES;
            let end = (start + LOG_CHUNK_BYTES).min(log.len());
            Ok(pb::MatchLogChunk {
                match_id: id.clone(),
                total_bytes,
                offset: start as u64,
                data: log.slice(start..end).to_vec(),
            })
        });
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }
}

/// The chunks of a StreamMatchLog call.
type LogChunks = Pin<Box<dyn Stream<Item = Result<pb::MatchLogChunk, Status>> + Send>>;

impl ArenaService {
    /// The log of the finished or aborted match `id` and its place among the logs in
    /// flight (hold it while the log is sent), or the status that says why there is none
    /// (GetMatchLog and StreamMatchLog).
    async fn ended_log(
        &self,
        id: &str,
    ) -> Result<(String, tokio::sync::OwnedSemaphorePermit), Status> {
        if id.is_empty() || id.len() > 64 {
            return Err(Status::invalid_argument(
                "match_id must be 1..=64 characters: see ListMatches",
            ));
        }
        let serving = self
            .logs_in_flight
            .clone()
            .try_acquire_owned()
            .map_err(|_| {
                Status::resource_exhausted(format!(
                    "{MAX_LOGS_IN_FLIGHT} match logs are being sent already, the most at once: \
                 retry in a moment"
                ))
            })?;
        let Some((status, log)) = self
            .store
            .match_log(id)
            .await
            .map_err(self.store_failed("get_match_log"))?
        else {
            return Err(Status::not_found(format!(
                "no match {id:?}: see ListMatches"
            )));
        };
        match (status, log) {
            (MatchStatus::Running, _) => Err(Status::failed_precondition(format!(
                "match {id} is still running: its log (with every hidden die) is available once it has ended"
            ))),
            (_, None) => Err(Status::not_found(format!("match {id} ended without a log"))),
            (_, Some(log_json)) => Ok((log_json, serving)),
        }
    }
}

fn wire_status(status: MatchStatus) -> pb::MatchStatus {
    match status {
        MatchStatus::Running => pb::MatchStatus::Running,
        MatchStatus::Finished => pb::MatchStatus::Finished,
        MatchStatus::Aborted => pb::MatchStatus::Aborted,
    }
}

/// The `knobel.v1.Admin` service: bot registration for the arena's organiser.
struct AdminService {
    store: Store,
    token: Option<auth::AdminToken>,
    /// To end a revoked bot's streams at once.
    streams: StreamRegistry,
    /// Failed logins per peer address (shared with the Arena service).
    throttle: Arc<AuthThrottle>,
}

impl AdminService {
    fn check<T>(&self, request: &Request<T>) -> Result<(), Status> {
        let Some(admin) = &self.token else {
            return Err(Status::permission_denied(
                "admin operations are disabled: start the arena with KNOBEL_ADMIN_TOKEN set",
            ));
        };
        let peer = peer_of(request);
        check_throttle(&self.throttle, peer)?;
        let header = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        match auth::bearer_token(header) {
            Some(token) if admin.verifies(token) => Ok(()),
            Some(_) => {
                self.throttle.failed(peer);
                Err(Status::unauthenticated(
                    "missing or wrong admin token: send `authorization: Bearer <admin token>`",
                ))
            }
            None => Err(Status::unauthenticated(
                "missing or wrong admin token: send `authorization: Bearer <admin token>`",
            )),
        }
    }
}

fn bot_info(bot: crate::store::BotRecord) -> pb::BotInfo {
    pb::BotInfo {
        name: bot.name,
        created_unix_ms: bot.created_at_ms.max(0) as u64,
        revoked_unix_ms: bot.revoked_at_ms.map(|t| t.max(0) as u64),
    }
}

#[tonic::async_trait]
impl Admin for AdminService {
    async fn add_bot(
        &self,
        request: Request<pb::AddBotRequest>,
    ) -> Result<Response<pb::AddBotResponse>, Status> {
        self.check(&request)?;
        let name = request.into_inner().name;
        auth::check_bot_name(&name).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let token = auth::generate_token();
        let bot = match self.store.add_bot(&name, &auth::hash_token(&token)).await {
            Ok(bot) => bot,
            Err(error @ StoreError::NameTaken { .. }) => {
                return Err(Status::already_exists(error.to_string()));
            }
            Err(error) => return Err(internal(error)),
        };
        info!(bot = %bot.name, "bot registered");
        Ok(Response::new(pb::AddBotResponse {
            bot: Some(bot_info(bot)),
            token,
        }))
    }

    async fn revoke_bot(
        &self,
        request: Request<pb::RevokeBotRequest>,
    ) -> Result<Response<pb::RevokeBotResponse>, Status> {
        self.check(&request)?;
        let name = request.into_inner().name;
        let revoked = self.store.revoke_bot(&name).await.map_err(internal)?;
        if revoked {
            // Its open streams end now (its running seats forfeit).
            let bot = self.store.bot_by_name(&name).await.map_err(internal)?;
            let bot_id = bot.map(|bot| bot.id);
            let streams = bot_id.map_or(0, |id| self.streams.revoke(id));
            info!(bot = %name, bot_id, streams, "bot revoked");
        }
        Ok(Response::new(pb::RevokeBotResponse { revoked }))
    }

    async fn list_bots(
        &self,
        request: Request<pb::ListBotsRequest>,
    ) -> Result<Response<pb::ListBotsResponse>, Status> {
        self.check(&request)?;
        let bots = self.store.list_bots().await.map_err(internal)?;
        Ok(Response::new(pb::ListBotsResponse {
            bots: bots.into_iter().map(bot_info).collect(),
        }))
    }
}

/// One Play stream: one seat, one match after another. The connection task reads the
/// stream while the bot waits for a match; during a match it lends the stream (a
/// [`StreamLink`]) to the match, whose referee reads and writes it directly.
struct Connection {
    bot_id: i64,
    bot_name: String,
    lobby: Arc<Lobby>,
    metrics: Metrics,
    shutdown: watch::Receiver<bool>,
    /// The bot's stream slot, freed when the connection ends; cancelled if it is revoked.
    slot: StreamSlot,
    hello_timeout: Duration,
}

/// How a match ended for a connection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum MatchEnd {
    /// Ready for the next match.
    Next,
    /// The stream is over.
    Closed,
}

/// What handling one message from the bot came to.
enum Handled {
    /// A decision for a request this stream was sent.
    Decision(FromSeat),
    /// Answered or ignored; nothing for the referee.
    Done,
    /// The bot can no longer be written to.
    Gone,
}

/// A Play stream: its two directions and what the arena tracks about them.
struct StreamLink {
    bot_id: i64,
    bot_name: String,
    /// Ready once the bot is revoked: the link then reports the bot disconnected.
    revocation: Pin<Box<WaitForCancellationFutureOwned>>,
    inbound: Streaming<pb::BotMessage>,
    out: mpsc::Sender<Result<OutboundMessage, Status>>,
    metrics: Metrics,
    pings: PingLimiter,
    /// Requests sent and not yet answered, with when they were sent (for the metrics).
    open: HashMap<u64, Instant>,
    /// The current match.
    match_id: String,
    game: Game,
    seat: Seat,
    /// How the current match ended for this stream, once its last message is sent.
    ended: Option<MatchEnd>,
    /// The stream closed or broke.
    gone: bool,
    /// Why the bot can no longer play in the current match, when the link knows better than
    /// "disconnected" (see [`BotLink::gone_reason`]): a full queue sets `NotReading`; code
    /// that ends the stream for a reason of its own (a revoked token: `Revoked`) sets it
    /// before marking the link `gone`, and the seat forfeits for that reason.
    gone_reason: Option<ForfeitReason>,
    /// Where the link goes back after its match.
    back: Option<oneshot::Sender<StreamLink>>,
}

impl StreamLink {
    /// Queues a message without waiting; false if the bot is gone or does not read.
    fn push(&mut self, kind: pb::arena_message::Kind) -> bool {
        self.queue(OutboundMessage::from(kind))
    }

    /// Queues a message without waiting; false if the bot is gone or does not read.
    fn queue(&mut self, message: OutboundMessage) -> bool {
        if self.gone {
            return false;
        }
        match self.out.try_send(Ok(message)) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.gone_reason.get_or_insert(ForfeitReason::NotReading);
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Ends the call: the bot was revoked. The link is gone from now on, so a match it plays
    /// in sees the bot disconnected and forfeits its seat.
    fn end_revoked(&mut self) {
        self.gone = true;
        self.gone_reason = Some(ForfeitReason::Revoked);
        info!(bot = %self.bot_name, bot_id = self.bot_id, match_id = %self.match_id, "bot revoked: its stream ends");
        let _ = self.out.try_send(Err(Status::permission_denied(format!(
            "bot {} was revoked",
            self.bot_name
        ))));
    }

    /// Ends the call: the arena is shutting down.
    fn refuse_shutting_down(&mut self) {
        let _ = self
            .out
            .try_send(Err(Status::unavailable("the arena is shutting down")));
    }

    fn error(&mut self, request_id: u64, code: pb::ErrorCode, message: String) -> bool {
        self.push(pb::arena_message::Kind::Error(pb::ErrorEvent {
            request_id,
            code: code as i32,
            message,
            applied: None,
            strikes: 0,
            forfeited: false,
        }))
    }

    /// The wire form of a referee's message (the one place they are converted).
    fn wire(&mut self, message: ToSeat) -> pb::arena_message::Kind {
        match message {
            ToSeat::Start { info, seat } => {
                self.seat = seat;
                self.gone_reason = None;
                self.match_id = info.match_id.clone();
                self.game = info.rules.game();
                self.open.clear();
                let time_control = pb::TimeControl {
                    decision_ms: wire_ms(info.time_control.decision),
                    time_bank_ms: wire_ms(info.time_control.bank),
                };
                pb::arena_message::Kind::MatchStart(convert::match_start(
                    &info.match_id,
                    &info.preset,
                    &info.rules,
                    &info.seat_names,
                    seat,
                    time_control,
                ))
            }
            ToSeat::Request(request) => {
                self.open.insert(request.request_id, Instant::now());
                pb::arena_message::Kind::DecisionRequest(convert::decision_request_from(
                    request.request_id,
                    &request.observation,
                    &request.legal_actions,
                    request.default_action,
                    wire_ms(request.deadline),
                    wire_ms(request.time_bank),
                ))
            }
            ToSeat::Notice(notice) => pb::arena_message::Kind::Error(pb::ErrorEvent {
                request_id: notice.request_id,
                code: wire_code(&notice.problem) as i32,
                message: notice.message,
                applied: notice.applied.map(pb::Action::from),
                strikes: notice.strikes.into(),
                forfeited: notice.forfeited,
            }),
            ToSeat::Result { outcome } => {
                self.ended = Some(MatchEnd::Next);
                pb::arena_message::Kind::MatchResult(convert::match_result(
                    &self.match_id,
                    Some(&outcome),
                    self.seat,
                ))
            }
            ToSeat::Aborted { .. } => {
                self.ended = Some(MatchEnd::Closed);
                pb::arena_message::Kind::MatchResult(convert::match_result(
                    &self.match_id,
                    None,
                    self.seat,
                ))
            }
        }
    }

    /// Handles one message from the bot: decisions for open requests go to the referee,
    /// everything else is answered here.
    fn handle(&mut self, message: pb::BotMessage) -> Handled {
        let sent = match message.kind {
            Some(pb::bot_message::Kind::Decision(decision)) => {
                let request_id = decision.request_id;
                let Some(asked) = self.open.remove(&request_id) else {
                    // Not a request this stream was sent (another seat's, an answered one,
                    // a made-up id): refused here, the seat's referee never sees it.
                    return if self.error(
                        request_id,
                        pb::ErrorCode::StaleRequest,
                        format!(
                            "request {request_id} is not open on this stream: answer only the requests this stream received; this answer is ignored"
                        ),
                    ) {
                        Handled::Done
                    } else {
                        Handled::Gone
                    };
                };
                self.metrics
                    .decision_answered(self.game, asked.elapsed().as_secs_f64());
                let action = BotDecision::try_from(&decision)
                    .map(|d| d.action)
                    .map_err(|e| e.to_string());
                return Handled::Decision(FromSeat::Decision { request_id, action });
            }
            Some(pb::bot_message::Kind::Ping(ping)) => {
                if self.pings.allow() {
                    self.push(pb::arena_message::Kind::Pong(pb::Pong {
                        nonce: ping.nonce,
                        server_time_unix_ms: crate::store::now_ms().max(0) as u64,
                    }))
                } else {
                    self.error(
                        0,
                        pb::ErrorCode::RateLimited,
                        format!("too many pings: at most {MAX_PINGS_PER_MINUTE} a minute"),
                    )
                }
            }
            Some(pb::bot_message::Kind::Hello(_)) => self.error(
                0,
                pb::ErrorCode::UnexpectedMessage,
                "a second Hello is ignored: send Hello once, as the first message".to_owned(),
            ),
            None => self.error(
                0,
                pb::ErrorCode::Malformed,
                "an empty BotMessage is ignored: set hello, decision or ping".to_owned(),
            ),
        };
        if sent { Handled::Done } else { Handled::Gone }
    }

    /// The next message from the bot, or `None` once the stream has ended or broken (bytes
    /// that are not a message, an oversized message, a lost connection).
    fn poll_message(&mut self, cx: &mut Context<'_>) -> Poll<Option<pb::BotMessage>> {
        if self.gone {
            return Poll::Ready(None);
        }
        // A revoked bot is gone at once, in the lobby and during a match (its seat
        // forfeits); polling the revocation first also registers `cx` to be woken by it.
        if self.revocation.as_mut().poll(cx).is_ready() {
            self.end_revoked();
            return Poll::Ready(None);
        }
        match ready!(Pin::new(&mut self.inbound).poll_next(cx)) {
            Some(Ok(message)) => return Poll::Ready(Some(message)),
            None => info!(bot = %self.bot_name, bot_id = self.bot_id, "bot closed its stream"),
            Some(Err(status)) => match broken_stream(&status) {
                None => {
                    info!(bot = %self.bot_name, bot_id = self.bot_id, error = %status.message(), "bot connection lost")
                }
                Some(reply) => {
                    warn!(bot = %self.bot_name, bot_id = self.bot_id, code = ?reply.code(), error = %reply.message(), "bot stream broken");
                    // The call ends with this status (not OK); during a match the seat
                    // forfeits as for a disconnect.
                    let _ = self.out.try_send(Err(reply));
                }
            },
        }
        self.gone = true;
        Poll::Ready(None)
    }

    async fn next_message(&mut self) -> Option<pb::BotMessage> {
        std::future::poll_fn(|cx| self.poll_message(cx)).await
    }
}

impl BotLink for StreamLink {
    fn send(&mut self, events: &[Arc<EventBatch>], message: Option<ToSeat>) -> bool {
        let kind = message.map(|message| self.wire(message));
        let events = events
            .iter()
            .map(|batch| batch.wire(outbound::encode_events))
            .collect();
        self.queue(OutboundMessage { events, kind })
    }

    /// Reads until a decision for an open request arrives or the bot is gone; everything
    /// else (pings, stale answers, a second hello) is answered here.
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<FromSeat> {
        loop {
            let Some(message) = ready!(self.poll_message(cx)) else {
                return Poll::Ready(FromSeat::Disconnected);
            };
            match self.handle(message) {
                Handled::Decision(decision) => return Poll::Ready(decision),
                Handled::Done => {}
                Handled::Gone => {
                    self.gone = true;
                    return Poll::Ready(FromSeat::Disconnected);
                }
            }
        }
    }

    fn release(mut self: Box<Self>) {
        if let Some(back) = self.back.take() {
            let _ = back.send(*self);
        }
    }

    fn gone_reason(&self) -> ForfeitReason {
        self.gone_reason.unwrap_or(ForfeitReason::Disconnected)
    }
}

impl Connection {
    async fn run(
        self,
        inbound: Streaming<pb::BotMessage>,
        hello: BotHello,
        preset: String,
        out: mpsc::Sender<Result<OutboundMessage, Status>>,
    ) {
        let welcome = pb::Welcome {
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            limits: Some(pb::Limits {
                max_message_bytes: MAX_MESSAGE_BYTES as u32,
                max_strikes: MAX_STRIKES.into(),
                max_pings_per_minute: MAX_PINGS_PER_MINUTE,
                hello_timeout_ms: wire_ms(self.hello_timeout),
            }),
            bot_name: self.bot_name.clone(),
        };
        let mut link = StreamLink {
            bot_id: self.bot_id,
            bot_name: self.bot_name.clone(),
            revocation: Box::pin(self.slot.revoked().clone().cancelled_owned()),
            inbound,
            out,
            metrics: self.metrics.clone(),
            pings: PingLimiter::default(),
            open: HashMap::new(),
            match_id: String::new(),
            game: hello.games[0],
            seat: Seat(0),
            ended: None,
            gone: false,
            gone_reason: None,
            back: None,
        };
        if !link.push(pb::arena_message::Kind::Welcome(welcome)) {
            return;
        }
        info!(bot = %self.bot_name, bot_id = self.bot_id, %preset, client = %hello.client_version, "bot connected");
        let mut played = 0u32;
        // While matches cannot start (the store is unavailable): since when, and when the
        // bot was last told.
        let mut unstarted: Option<Instant> = None;
        let mut told: Option<Instant> = None;
        loop {
            if *self.shutdown.borrow() {
                link.refuse_shutting_down();
                return;
            }
            let (claim, claimed) = oneshot::channel();
            self.lobby
                .join(self.bot_id, self.bot_name.clone(), preset.clone(), claim);
            let Some(give) = self.wait_for_match(&mut link, claimed).await else {
                return;
            };
            // Lend the stream to the match; it comes back after the match's last message.
            let (back, returned) = oneshot::channel();
            link.back = Some(back);
            link.ended = None;
            if give.send(Box::new(link)).is_err() {
                return;
            }
            link = match returned.await {
                Ok(link) => link,
                Err(_) => return,
            };
            if !link.gone && link.ended.is_none() {
                // The match did not start (it could not be recorded): nothing was sent on
                // the stream. Back to the lobby, after a pause; the bot is told why if this
                // lasts.
                let since = *unstarted.get_or_insert_with(Instant::now);
                if since.elapsed() >= UNAVAILABLE_NOTICE_AFTER
                    && told.is_none_or(|at| at.elapsed() >= UNAVAILABLE_NOTICE_EVERY)
                {
                    told = Some(Instant::now());
                    link.error(
                        0,
                        pb::ErrorCode::ArenaUnavailable,
                        format!(
                            "the arena cannot record matches for now (its database has been unavailable for {} s): not a strike; you stay in the lobby and are seated once it is back",
                            since.elapsed().as_secs()
                        ),
                    );
                }
                if !self.pause(&mut link, UNSTARTED_PAUSE).await {
                    return;
                }
                continue;
            }
            (unstarted, told) = (None, None);
            // Requests of the match still unanswered are closed with it: a late answer
            // gets STALE_REQUEST (and the stream plays on).
            link.open.clear();
            if link.gone || link.ended != Some(MatchEnd::Next) {
                return;
            }
            played += 1;
            if hello.max_matches.is_some_and(|max| played >= max) {
                info!(bot = %self.bot_name, bot_id = self.bot_id, matches = played, "stream played the matches it asked for");
                return;
            }
        }
    }

    /// Waits `pause`, answering the bot. False if the stream ended meanwhile, or the arena is
    /// shutting down (the bot is told).
    async fn pause(&self, link: &mut StreamLink, pause: Duration) -> bool {
        let mut shutdown = self.shutdown.clone();
        let sleep = tokio::time::sleep(pause);
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                _ = &mut sleep => return true,
                message = link.next_message() => {
                    let Some(message) = message else { return false };
                    match link.handle(message) {
                        Handled::Done => {}
                        Handled::Decision(_) | Handled::Gone => return false,
                    }
                }
                _ = crate::referee::shutting_down(&mut shutdown) => {
                    link.refuse_shutting_down();
                    return false;
                }
            }
        }
    }

    /// Waits in the lobby, answering the bot, until a match claims the stream. `None` if
    /// the stream ended, or the arena is shutting down (the bot is told).
    async fn wait_for_match(
        &self,
        link: &mut StreamLink,
        mut claimed: oneshot::Receiver<Handoff>,
    ) -> Option<Handoff> {
        let mut shutdown = self.shutdown.clone();
        loop {
            tokio::select! {
                give = &mut claimed => {
                    if give.is_err() && *self.shutdown.borrow() {
                        // The lobby let go of its waiting bots: the arena is shutting down.
                        link.refuse_shutting_down();
                    }
                    return give.ok();
                }
                message = link.next_message() => {
                    // No request is open while waiting: decisions are stale.
                    match link.handle(message?) {
                        Handled::Done => {}
                        Handled::Decision(FromSeat::Decision { request_id, .. }) => {
                            let told = link.error(
                                request_id,
                                pb::ErrorCode::StaleRequest,
                                format!("request {request_id} is no longer open: its match has ended; this answer is ignored"),
                            );
                            if !told {
                                return None;
                            }
                        }
                        Handled::Decision(FromSeat::Disconnected) | Handled::Gone => return None,
                    }
                }
                _ = crate::referee::shutting_down(&mut shutdown) => {
                    link.refuse_shutting_down();
                    return None;
                }
            }
        }
    }
}

/// A duration as the wire's `u32` milliseconds. The settings bound every time limit far
/// below `u32::MAX` ms (about 49 days; see `settings::DECISION_MS`, `TIME_BANK_MS`), so this
/// saturates only for a configuration built around them.
fn wire_ms(duration: Duration) -> u32 {
    u32::try_from(duration.as_millis()).unwrap_or(u32::MAX)
}

fn wire_code(problem: &Problem) -> pb::ErrorCode {
    match problem {
        Problem::Timeout => pb::ErrorCode::Timeout,
        Problem::IllegalAction => pb::ErrorCode::IllegalAction,
        Problem::Malformed => pb::ErrorCode::Malformed,
        Problem::StaleRequest => pb::ErrorCode::StaleRequest,
    }
}

/// Allows `MAX_PINGS_PER_MINUTE` pings per rolling minute window.
#[derive(Default)]
struct PingLimiter {
    window_start: Option<tokio::time::Instant>,
    count: u32,
}

impl PingLimiter {
    fn allow(&mut self) -> bool {
        let now = tokio::time::Instant::now();
        match self.window_start {
            Some(start) if now.duration_since(start) < Duration::from_secs(60) => {}
            _ => {
                self.window_start = Some(now);
                self.count = 0;
            }
        }
        self.count += 1;
        self.count <= MAX_PINGS_PER_MINUTE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_streams_get_a_status_naming_the_problem_and_the_limit() {
        // The statuses tonic's decoder gives (tonic 0.14), and a lost connection.
        let oversized = Status::out_of_range(
            "Error, decoded message length too large: found 70005 bytes, the limit is: 65536 bytes",
        );
        let reply = broken_stream(&oversized).unwrap();
        assert_eq!(reply.code(), tonic::Code::ResourceExhausted);
        assert!(
            reply
                .message()
                .starts_with("message of 70005 bytes is over the limit of 65536 bytes"),
            "{}",
            reply.message()
        );
        let garbage =
            Status::internal("failed to decode Protobuf message: invalid wire type value: 7");
        let reply = broken_stream(&garbage).unwrap();
        assert_eq!(reply.code(), tonic::Code::Internal);
        assert!(
            reply.message().contains("not a BotMessage"),
            "{}",
            reply.message()
        );
        for framing in [
            "protocol error: received message with invalid compression flag: 2 (valid flags are 0 and 1), while sending request",
            "protocol error: received message with compressed-flag but no grpc-encoding was specified",
            "Unexpected EOF decoding stream.",
        ] {
            let reply = broken_stream(&Status::internal(framing)).unwrap();
            assert_eq!(reply.code(), tonic::Code::Internal);
            assert!(
                reply.message().contains("bad gRPC framing"),
                "{}",
                reply.message()
            );
            assert!(reply.message().contains("65536"), "{}", reply.message());
        }
        assert!(broken_stream(&Status::cancelled("reset")).is_none());
        assert!(broken_stream(&Status::unknown("h2 error")).is_none());
    }
}
