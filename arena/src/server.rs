//! The gRPC server: the `knobel.v1.Arena` service, health and reflection.
//!
//! One `Play` stream is one seat. The connection task of a stream authenticates the bot
//! (before any seat is taken), reads its Hello, then repeatedly joins the lobby and pumps
//! messages between the bot and the referee of its current match. Engine types become wire
//! types only here, through `knobel_proto::convert` (the one wire boundary).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
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
use tonic::{Request, Response, Status, Streaming};
use tracing::{info, warn};

use crate::auth;
use crate::lobby::{Handoff, Lobby, LobbyConfig};
use crate::metrics::Metrics;
use crate::referee::{BotLink, EventBatch, FromSeat, MAX_STRIKES, Problem, ToSeat};
use crate::store::{MatchFilter, MatchStatus, Store, StoreError};

/// Largest message the arena accepts from a bot, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// How long a new stream has to send its Hello.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Pings a stream may send per minute before they are refused.
pub const MAX_PINGS_PER_MINUTE: u32 = 120;
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
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            lobby: LobbyConfig::default(),
            max_streams_per_bot: 8,
            shutdown_grace: Duration::from_secs(5),
            admin_token: None,
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
}

/// Runs the arena on `listener` (and metrics on `metrics_listener`) until `shutdown`
/// resolves; then stops taking streams, lets running matches end or marks them aborted.
pub async fn serve(
    config: ServerConfig,
    store: Store,
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let metrics = Metrics::new();
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let lobby = Lobby::new(
        config.lobby.clone(),
        store.clone(),
        metrics.clone(),
        shutdown_rx.clone(),
    );
    let admin = AdminService {
        store: store.clone(),
        token: config.admin_token.clone(),
    };
    let service = ArenaService {
        store,
        lobby: lobby.clone(),
        metrics: metrics.clone(),
        streams: Arc::new(Mutex::new(HashMap::new())),
        max_streams_per_bot: config.max_streams_per_bot,
        shutdown: shutdown_rx.clone(),
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

    // One signal for everything: the caller's shutdown future flips the watch.
    let mut signal = shutdown_rx.clone();
    tokio::spawn(async move {
        shutdown.await;
        let _ = shutdown_tx.send(true);
    });
    let metrics_task = metrics_listener.map(|listener| {
        let mut signal = shutdown_rx.clone();
        tokio::spawn(metrics.clone().serve(listener, async move {
            crate::referee::shutting_down(&mut signal).await;
        }))
    });

    let arena = ArenaServer::new(service)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(4 * 1024 * 1024);
    // `Server::tcp_nodelay` does not apply to incoming streams we bring: set it here, or
    // Nagle's algorithm holds small messages back for the bot's delayed ACK (~40 ms).
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let result = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(Duration::from_secs(30)))
        .http2_keepalive_timeout(Some(Duration::from_secs(10)))
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(arena)
        .add_service(AdminServer::new(admin).max_decoding_message_size(MAX_MESSAGE_BYTES))
        .serve_with_incoming_shutdown(incoming, async move {
            crate::referee::shutting_down(&mut signal).await;
        })
        .await;
    health_reporter
        .set_not_serving::<ArenaServer<ArenaService>>()
        .await;
    lobby.drain(config.shutdown_grace).await;
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
    streams: Arc<Mutex<HashMap<i64, usize>>>,
    max_streams_per_bot: usize,
    shutdown: watch::Receiver<bool>,
}

/// Holds one of a bot's stream slots; frees it when dropped.
struct StreamSlot {
    streams: Arc<Mutex<HashMap<i64, usize>>>,
    bot_id: i64,
    metrics: Metrics,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut streams = self.streams.lock().expect("streams lock");
        if let Some(count) = streams.get_mut(&self.bot_id) {
            *count -= 1;
            if *count == 0 {
                streams.remove(&self.bot_id);
            }
        }
        self.metrics.stream_delta(-1);
    }
}

fn internal(error: StoreError) -> Status {
    warn!(error = %error, "store error");
    Status::internal("internal error")
}

type PlayStream = Pin<Box<dyn Stream<Item = Result<OutboundMessage, Status>> + Send>>;

#[tonic::async_trait]
impl Arena for ArenaService {
    type PlayStream = PlayStream;

    async fn play(
        &self,
        request: Request<Streaming<pb::BotMessage>>,
    ) -> Result<Response<PlayStream>, Status> {
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
            .map_err(internal)?
            .ok_or_else(|| {
                Status::unauthenticated(
                    "unknown or revoked bot token: register the bot with `knobel bot add NAME`",
                )
            })?;
        if *self.shutdown.borrow() {
            return Err(Status::unavailable("the arena is shutting down"));
        }
        let slot = {
            let mut streams = self.streams.lock().expect("streams lock");
            let count = streams.entry(bot.id).or_insert(0);
            if *count >= self.max_streams_per_bot {
                return Err(Status::resource_exhausted(format!(
                    "bot {} already has {} open Play streams: at most {} are allowed",
                    bot.name, count, self.max_streams_per_bot
                )));
            }
            *count += 1;
            self.metrics.stream_delta(1);
            StreamSlot {
                streams: self.streams.clone(),
                bot_id: bot.id,
                metrics: self.metrics.clone(),
            }
        };
        let (out, out_rx) = mpsc::channel(TO_BOT_BUFFER);
        let connection = Connection {
            bot_name: bot.name,
            lobby: self.lobby.clone(),
            metrics: self.metrics.clone(),
            shutdown: self.shutdown.clone(),
            _slot: slot,
        };
        tokio::spawn(connection.run(request.into_inner(), out));
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
        let offset: u32 = if request.page_token.is_empty() {
            0
        } else {
            request.page_token.parse().map_err(|_| {
                Status::invalid_argument(
                    "page_token is not one this server gave: pass next_page_token unchanged",
                )
            })?
        };
        let limit = if request.limit == 0 {
            100
        } else {
            request.limit.min(500)
        };
        let filter = MatchFilter {
            game,
            status,
            limit,
            offset,
        };
        let found = self.store.list_matches(&filter).await.map_err(internal)?;
        let next_page_token = if found.len() as u32 == limit {
            (offset + limit).to_string()
        } else {
            String::new()
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
        if id.is_empty() || id.len() > 64 {
            return Err(Status::invalid_argument(
                "match_id must be 1..=64 characters: see ListMatches",
            ));
        }
        let Some((status, log)) = self.store.match_log(&id).await.map_err(internal)? else {
            return Err(Status::not_found(format!(
                "no match {id:?}: see ListMatches"
            )));
        };
        match (status, log) {
            (MatchStatus::Running, _) => Err(Status::failed_precondition(format!(
                "match {id} is still running: its log (with every hidden die) is available once it has ended"
            ))),
            (_, None) => Err(Status::not_found(format!("match {id} ended without a log"))),
            (_, Some(log_json)) => Ok(Response::new(pb::MatchLogResponse {
                match_id: id,
                log_json,
            })),
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
}

impl AdminService {
    fn check<T>(&self, request: &Request<T>) -> Result<(), Status> {
        let Some(admin) = &self.token else {
            return Err(Status::permission_denied(
                "admin operations are disabled: start the arena with KNOBEL_ADMIN_TOKEN set",
            ));
        };
        let header = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        match auth::bearer_token(header) {
            Some(token) if admin.verifies(token) => Ok(()),
            _ => Err(Status::unauthenticated(
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
            info!(bot = %name, "bot revoked");
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
    bot_name: String,
    lobby: Arc<Lobby>,
    metrics: Metrics,
    shutdown: watch::Receiver<bool>,
    _slot: StreamSlot,
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
    bot_name: String,
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
                    decision_ms: info.time_control.decision.as_millis() as u32,
                    time_bank_ms: info.time_control.bank.as_millis() as u32,
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
                    request.deadline.as_millis() as u32,
                    request.time_bank.as_millis() as u32,
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
        match ready!(Pin::new(&mut self.inbound).poll_next(cx)) {
            Some(Ok(message)) => return Poll::Ready(Some(message)),
            None => info!(bot = %self.bot_name, "bot closed its stream"),
            // Unknown/Cancelled: the connection went away (the bot exited); anything else
            // is a refused frame (not a message, too large).
            Some(Err(status))
                if matches!(status.code(), tonic::Code::Unknown | tonic::Code::Cancelled) =>
            {
                info!(bot = %self.bot_name, error = %status.message(), "bot connection lost");
            }
            Some(Err(status)) => {
                warn!(bot = %self.bot_name, code = ?status.code(), error = %status.message(), "bot stream refused");
            }
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
        mut inbound: Streaming<pb::BotMessage>,
        out: mpsc::Sender<Result<OutboundMessage, Status>>,
    ) {
        let refuse = |status: Status| {
            let out = out.clone();
            async move {
                let _ = out.send(Err(status)).await;
            }
        };
        let hello = match tokio::time::timeout(HELLO_TIMEOUT, inbound.message()).await {
            Ok(Ok(Some(pb::BotMessage {
                kind: Some(pb::bot_message::Kind::Hello(hello)),
            }))) => hello,
            Ok(Ok(Some(_))) => {
                return refuse(Status::failed_precondition(
                    "the first message must be a Hello",
                ))
                .await;
            }
            Ok(Ok(None)) | Ok(Err(_)) => return,
            Err(_) => {
                return refuse(Status::deadline_exceeded(format!(
                    "no Hello within {} s: send a Hello first",
                    HELLO_TIMEOUT.as_secs()
                )))
                .await;
            }
        };
        let hello = match BotHello::try_from(&hello) {
            Ok(hello) => hello,
            Err(error) => return refuse(Status::invalid_argument(error.to_string())).await,
        };
        let preset = hello
            .preset
            .clone()
            .unwrap_or_else(|| hello.games[0].name().to_owned());
        if self.lobby.rules_for(&preset).is_none() {
            return refuse(Status::invalid_argument(format!(
                "unknown preset {preset:?}: presets are {}",
                knobel_engine::PRESETS.join(", ")
            )))
            .await;
        }
        let welcome = pb::Welcome {
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            limits: Some(pb::Limits {
                max_message_bytes: MAX_MESSAGE_BYTES as u32,
                max_strikes: MAX_STRIKES.into(),
                max_pings_per_minute: MAX_PINGS_PER_MINUTE,
                hello_timeout_ms: HELLO_TIMEOUT.as_millis() as u32,
            }),
            bot_name: self.bot_name.clone(),
        };
        let mut link = StreamLink {
            bot_name: self.bot_name.clone(),
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
        info!(bot = %self.bot_name, %preset, client = %hello.client_version, "bot connected");
        let mut played = 0u32;
        loop {
            if *self.shutdown.borrow() {
                return;
            }
            let (claim, claimed) = oneshot::channel();
            self.lobby
                .join(self.bot_name.clone(), preset.clone(), claim);
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
            if link.gone || link.ended != Some(MatchEnd::Next) {
                return;
            }
            played += 1;
            if hello.max_matches.is_some_and(|max| played >= max) {
                info!(bot = %self.bot_name, matches = played, "stream played the matches it asked for");
                return;
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
                        Handled::Decision(_) | Handled::Gone => return None,
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
