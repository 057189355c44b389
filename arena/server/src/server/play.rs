//! Play streams: the Play RPC (the bot's token, its Hello, its stream slot) and the
//! connection task of each stream, which waits in the lobby and lends the stream (a
//! [`StreamLink`]) to each match the bot is seated in.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use knobel_engine::Seat;
use knobel_proto::BotHello;
use knobel_proto::outbound::OutboundMessage;
use knobel_proto::v1 as pb;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};
use tracing::info;

use super::status::{self, bearer_token_of, broken_stream, check_throttle, peer_of};
use super::stream_link::StreamLink;
use super::{ArenaService, MAX_MESSAGE_BYTES, MAX_PINGS_PER_MINUTE};
use crate::auth;
use crate::lobby::{Handoff, Lobby};
use crate::referee::{FromSeat, MAX_STRIKES};
use crate::store::StoreOperation;
use crate::streams::StreamSlot;
use crate::wire::wire_ms;

/// How long a bot whose match could not start (the store is unavailable) waits before it
/// joins the lobby again.
const UNSTARTED_PAUSE: Duration = Duration::from_secs(1);
/// How long matches must have failed to start before a waiting bot is told
/// (`ERROR_CODE_ARENA_UNAVAILABLE`), and how often it is told again while it lasts.
const UNAVAILABLE_NOTICE_AFTER: Duration = Duration::from_secs(2);
const UNAVAILABLE_NOTICE_EVERY: Duration = Duration::from_secs(10);
/// Messages buffered towards one bot; a bot that lets this many pile up is not reading and
/// forfeits its seat.
/// How long a stream waits in the lobby before it is told why (a `Waiting` message), and
/// how often it is told again while it keeps waiting.
pub const WAITING_NOTICE_AFTER: Duration = Duration::from_secs(5);
const WAITING_NOTICE_EVERY: Duration = Duration::from_secs(60);

const TO_BOT_BUFFER: usize = 4096;

/// The response stream of a Play call: what the arena sends the bot.
pub(super) type PlayStream = Pin<Box<dyn Stream<Item = Result<OutboundMessage, Status>> + Send>>;

/// The Play RPC: authenticates the bot, reads its Hello, takes one of its stream slots and
/// starts the stream's [`Connection`].
pub(super) async fn play(
    service: &ArenaService,
    request: Request<Streaming<pb::BotMessage>>,
) -> Result<Response<PlayStream>, Status> {
    let peer = peer_of(&request);
    check_throttle(&service.throttle, peer)?;
    let Some(token) = bearer_token_of(&request) else {
        return Err(Status::unauthenticated(
            "missing bot token: send metadata `authorization: Bearer <token>` (see `knobel bot add`)",
        ));
    };
    let bot = service
        .store_for(StoreOperation::Auth)
        .bot_by_token_hash(&auth::hash_token(token))
        .await
        .map_err(status::internal)?
        .ok_or_else(|| {
            service.throttle.failed(peer);
            Status::unauthenticated(
                "unknown or revoked bot token: register the bot with `knobel bot add NAME`",
            )
        })?;
    if *service.shutdown.borrow() {
        return Err(Status::unavailable("the arena is shutting down"));
    }
    // The stream takes one of the bot's slots only once its Hello is read; until then
    // it counts against the (per-address) bound on streams without a Hello.
    let pending = service.pending_hello.acquire(peer).map_err(|over| {
        Status::resource_exhausted(over.message(
            "Play streams without a Hello",
            peer,
            "--max-pending-hello",
            "--max-pending-hello-per-peer",
        ))
    })?;
    let mut inbound = request.into_inner();
    let (hello, preset) = service.read_hello(&mut inbound).await?;
    drop(pending);
    // In cluster mode the bound counts the bot's streams on every arena (the others' as
    // their presence last said).
    let elsewhere = service
        .cluster
        .as_ref()
        .map_or(0, |cluster| cluster.streams_elsewhere(&bot.name));
    let max = service.max_streams_per_bot;
    let slot = service
        .streams
        .acquire(bot.id, &bot.name, (max, elsewhere), &service.metrics)
        .map_err(|here| {
            let open = match elsewhere {
                0 => format!("{here} open Play streams"),
                _ => format!(
                    "{} open Play streams ({here} here, {elsewhere} on other arenas of the cluster)",
                    here + elsewhere
                ),
            };
            Status::resource_exhausted(format!(
                "bot {} already has {open}: at most {max} are allowed",
                bot.name
            ))
        })?;
    let (out, out_rx) = mpsc::channel(TO_BOT_BUFFER);
    let connection = Connection {
        bot_id: bot.id,
        bot_name: bot.name,
        lobby: service.lobby.clone(),
        shutdown: service.shutdown.clone(),
        hello_timeout: service.hello_timeout,
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
            _ = crate::shutdown::requested(&mut shutdown) => {
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
            return Err(Status::invalid_argument(
                knobel_engine::RulesError::UnknownPreset { name: preset }.to_string(),
            ));
        }
        Ok((hello, preset))
    }
}

/// One Play stream: one seat, one match after another. The connection task reads the
/// stream while the bot waits for a match; during a match it lends the stream (a
/// [`StreamLink`]) to the match, whose referee reads and writes it directly.
struct Connection {
    bot_id: i64,
    bot_name: String,
    lobby: Arc<Lobby>,
    shutdown: watch::Receiver<bool>,
    /// The bot's stream slot, freed when the connection ends; cancelled if it is revoked.
    slot: StreamSlot,
    hello_timeout: Duration,
}

/// How a match ended for a connection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum MatchEnd {
    /// Ready for the next match.
    Next,
    /// The stream is over.
    Closed,
}

/// What handling one message from the bot came to.
pub(super) enum Handled {
    /// A decision for a request this stream was sent.
    Decision(FromSeat),
    /// Answered or ignored; nothing for the referee.
    Done,
    /// The bot can no longer be written to.
    Gone,
}

impl Connection {
    async fn run(
        self,
        inbound: Streaming<pb::BotMessage>,
        hello: BotHello,
        preset: String,
        out: mpsc::Sender<Result<OutboundMessage, Status>>,
    ) {
        let welcome = self.welcome();
        let mut link = self.link(inbound, out);
        if !link.push(pb::arena_message::Kind::Welcome(welcome)) {
            return;
        }
        info!(bot = %self.bot_name, bot_id = self.bot_id, %preset, client = %hello.client_version, "bot connected");
        let presets = self.presets(&hello, preset);
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
                .join_any(self.bot_id, self.bot_name.clone(), presets.clone(), claim);
            let Some(give) = self.wait_for_match(&mut link, claimed, &presets[0]).await else {
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
                if !self.not_started(&mut link, &mut unstarted, &mut told).await {
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

    /// The Welcome of this stream: the arena's version and limits.
    fn welcome(&self) -> pb::Welcome {
        pb::Welcome {
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            limits: Some(pb::Limits {
                max_message_bytes: MAX_MESSAGE_BYTES as u32,
                max_strikes: MAX_STRIKES.into(),
                max_pings_per_minute: MAX_PINGS_PER_MINUTE,
                hello_timeout_ms: wire_ms(self.hello_timeout),
            }),
            bot_name: self.bot_name.clone(),
        }
    }

    /// The link of this stream to its matches, in none yet.
    fn link(
        &self,
        inbound: Streaming<pb::BotMessage>,
        out: mpsc::Sender<Result<OutboundMessage, Status>>,
    ) -> StreamLink {
        StreamLink {
            bot_id: self.bot_id,
            bot_name: self.bot_name.clone(),
            revocation: Box::pin(self.slot.revoked().clone().cancelled_owned()),
            inbound,
            out,
            pings: PingLimiter::default(),
            open: HashSet::new(),
            match_id: String::new(),
            seat: Seat(0),
            ended: None,
            gone: false,
            gone_reason: None,
            back: None,
        }
    }

    /// The presets the stream plays: its `preset` and, for the other games it names, their
    /// default presets: it can be seated in a match of any of them.
    fn presets(&self, hello: &BotHello, preset: String) -> Vec<String> {
        std::iter::once(preset.clone())
            .chain(
                hello
                    .games
                    .iter()
                    .map(|game| game.name().to_owned())
                    .filter(|default| {
                        self.lobby.rules_for(default).is_some_and(|rules| {
                            rules.game()
                                != self
                                    .lobby
                                    .rules_for(&preset)
                                    .map_or(rules.game(), |r| r.game())
                        })
                    }),
            )
            .collect()
    }

    /// After a match that did not start: tells the bot why if matches have not started
    /// since `unstarted` for a while (at most every so often, `told` keeping when), then
    /// pauses. False if the stream ended meanwhile or the arena is shutting down.
    async fn not_started(
        &self,
        link: &mut StreamLink,
        unstarted: &mut Option<Instant>,
        told: &mut Option<Instant>,
    ) -> bool {
        let since = *unstarted.get_or_insert_with(Instant::now);
        if since.elapsed() >= UNAVAILABLE_NOTICE_AFTER
            && told.is_none_or(|at| at.elapsed() >= UNAVAILABLE_NOTICE_EVERY)
        {
            *told = Some(Instant::now());
            link.error(
                0,
                pb::ErrorCode::ArenaUnavailable,
                format!(
                    "the arena cannot record matches for now (its database has been unavailable for {} s): not a strike; you stay in the lobby and are seated once it is back",
                    since.elapsed().as_secs()
                ),
            );
        }
        self.pause(link, UNSTARTED_PAUSE).await
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
                _ = crate::shutdown::requested(&mut shutdown) => {
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
        preset: &str,
    ) -> Option<Handoff> {
        let mut shutdown = self.shutdown.clone();
        let since = Instant::now();
        let mut notice =
            tokio::time::interval_at(since + WAITING_NOTICE_AFTER, WAITING_NOTICE_EVERY);
        loop {
            tokio::select! {
                _ = notice.tick() => {
                    if !link.push(pb::arena_message::Kind::Waiting(self.waiting(preset, since))) {
                        return None;
                    }
                }
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
                _ = crate::shutdown::requested(&mut shutdown) => {
                    link.refuse_shutting_down();
                    return None;
                }
            }
        }
    }
}

impl Connection {
    /// Why this stream still waits for a match of `preset`, which it has waited for since
    /// `since`.
    fn waiting(&self, preset: &str, since: Instant) -> pb::Waiting {
        let config = self.lobby.config();
        let (waiting_bots, league) = self.lobby.waiting_for(&self.bot_name, preset);
        let seats = config.seats;
        let reason = if league {
            format!(
                "{} is in a running league: it waits for the league's next match with it (the league's other bots may be busy or offline: `knobel league status NAME` says which)",
                self.bot_name
            )
        } else if config.practice {
            format!(
                "practice mode is on, yet no table of preset {preset} has started: the arena is busy"
            )
        } else {
            format!(
                "the lobby seats {seats} bots per match and {waiting_bots} bot{} waits for preset {preset}; practice mode is off (knobel serve --practice seats built-in players after a short wait)",
                if waiting_bots == 1 { "" } else { "s" }
            )
        };
        pb::Waiting {
            reason,
            waited_secs: u32::try_from(since.elapsed().as_secs()).unwrap_or(u32::MAX),
            preset: preset.to_owned(),
            seats: u32::try_from(seats).unwrap_or(u32::MAX),
            waiting_bots: u32::try_from(waiting_bots).unwrap_or(u32::MAX),
            practice: config.practice,
            league,
        }
    }
}

/// Allows `MAX_PINGS_PER_MINUTE` pings per rolling minute window.
#[derive(Default)]
pub(super) struct PingLimiter {
    window_start: Option<tokio::time::Instant>,
    count: u32,
}

impl PingLimiter {
    pub(super) fn allow(&mut self) -> bool {
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
