//! The seat link between arenas: the peer port's `knobel.peer.v1.Peer` service (the
//! holder's side of a relayed seat) and [`RelayLink`], the referee's side, a [`BotLink`]
//! like a local stream.
//!
//! The referee encodes each of its messages for the seat exactly as for a local seat (the
//! public events before it, each batch encoded once for every seat of the match, and the
//! message), and the holder forwards those bytes as they are to the bot's own stream
//! ([`BotLink::send_encoded`]), which keeps the match's state (open requests, the end) from
//! the message's note: the bot sees exactly what a local seat sees, and pings, stale
//! answers and a bot that stops reading are handled where the bot is. Deadlines and time
//! banks are the referee's. A link that breaks during the match trips its [`MatchFault`]:
//! the referee aborts the match, and the holder tells the bot the match was aborted.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::Bytes;
use knobel_engine::{ForfeitReason, Seat};
use knobel_proto::peer::peer_client::PeerClient;
use knobel_proto::peer::peer_server::{Peer, PeerServer};
use knobel_proto::peer::{self as pp, seat_message::Note, to_holder, to_referee};
use prost::Message;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tokio_stream::{Stream, StreamExt};
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Response, Status, Streaming};
use tracing::{debug, info, warn};

use super::reserve::Reservation;
use super::{Cluster, ClusterError};
use crate::lobby::{HeldStream, Lobby, MatchFault};
use crate::referee::{BotLink, EncodedToSeat, EventBatch, FromSeat, SeatNote, ToSeat};

/// How long linking a reserved seat may take (the holder claims the stream meanwhile).
const LINK_TIMEOUT: Duration = Duration::from_secs(3);
/// Messages queued towards the other arena per seat; a link that falls this far behind is
/// broken.
const RELAY_QUEUE: usize = 1024;
/// The largest peer message (a referee's message with its events is a few kilobytes).
const MAX_PEER_MESSAGE: usize = 1 << 20;

/// The peer form of a referee's message for a relayed seat: its bytes for the bot, and what
/// it is.
fn seat_message(arena_message: Bytes, note: SeatNote) -> pp::SeatMessage {
    let mut message = pp::SeatMessage {
        arena_message,
        ..pp::SeatMessage::default()
    };
    let kind = match note {
        SeatNote::Events => Note::Events,
        SeatNote::Start { match_id, seat } => {
            message.match_id = match_id;
            message.seat = seat.0.into();
            Note::Start
        }
        SeatNote::Request { request_id } => {
            message.request_id = request_id;
            Note::Request
        }
        SeatNote::Notice => Note::Notice,
        SeatNote::Result => Note::Result,
        SeatNote::Aborted => Note::Aborted,
    };
    message.set_note(kind);
    message
}

/// What the holder makes of a referee's message: `None` if it is not one of this version's.
fn encoded_to_seat(message: pp::SeatMessage) -> Option<EncodedToSeat> {
    let note = match Note::try_from(message.note).ok()? {
        Note::Events => SeatNote::Events,
        Note::Start => SeatNote::Start {
            seat: Seat(u8::try_from(message.seat).ok()?),
            match_id: message.match_id,
        },
        Note::Request => SeatNote::Request {
            request_id: message.request_id,
        },
        Note::Notice => SeatNote::Notice,
        Note::Result => SeatNote::Result,
        Note::Aborted => SeatNote::Aborted,
    };
    Some(EncodedToSeat {
        bytes: message.arena_message,
        note,
    })
}

/// What a relayed seat's bot sent.
#[derive(Debug, Serialize, Deserialize)]
struct SeatAnswer {
    from: FromSeat,
    /// Why the bot is gone, with [`FromSeat::Disconnected`].
    gone_reason: Option<ForfeitReason>,
    /// For a decision: how long the bot took, as the holder saw it (microseconds).
    bot_us: u64,
}

/// Clients of the other arenas' peer ports, by address (connected on first use).
#[derive(Default)]
pub(super) struct PeerChannels {
    channels: Mutex<HashMap<String, Channel>>,
}

impl PeerChannels {
    fn client(&self, peer: &str) -> Result<PeerClient<Channel>, Status> {
        let mut channels = self.channels.lock().expect("peers lock");
        if let Some(channel) = channels.get(peer) {
            return Ok(client(channel.clone()));
        }
        let endpoint = Endpoint::from_shared(format!("http://{peer}"))
            .map_err(|e| Status::invalid_argument(format!("peer address {peer}: {e}")))?
            .connect_timeout(LINK_TIMEOUT)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(5))
            .keep_alive_timeout(Duration::from_secs(5));
        let channel = endpoint.connect_lazy();
        channels.insert(peer.to_owned(), channel.clone());
        Ok(client(channel))
    }
}

fn client(channel: Channel) -> PeerClient<Channel> {
    PeerClient::new(channel)
        .max_decoding_message_size(MAX_PEER_MESSAGE)
        .max_encoding_message_size(MAX_PEER_MESSAGE)
}

/// A request carrying the peer token.
fn authorized<T>(cluster: &Cluster, message: T) -> Request<T> {
    let mut request = Request::new(message);
    if let Ok(value) = format!("Bearer {}", cluster.token).parse() {
        request.metadata_mut().insert("authorization", value);
    }
    request
}

/// Serves the peer port on `listener` until `shutdown`.
pub(super) fn serve_peers(
    cluster: Arc<Cluster>,
    lobby: Arc<Lobby>,
    listener: TcpListener,
    mut shutdown: watch::Receiver<bool>,
) {
    let service = PeerServer::new(PeerService { cluster, lobby })
        .max_decoding_message_size(MAX_PEER_MESSAGE)
        .max_encoding_message_size(MAX_PEER_MESSAGE);
    tokio::spawn(async move {
        let stopped = async move {
            crate::shutdown::requested(&mut shutdown).await;
            // Relayed matches finish within the grace, as local ones do.
            std::future::pending::<()>().await;
        };
        let incoming = peer_connections(listener);
        let served = tonic::transport::Server::builder()
            .http2_keepalive_interval(Some(Duration::from_secs(5)))
            .http2_keepalive_timeout(Some(Duration::from_secs(5)))
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, stopped)
            .await;
        if let Err(error) = served {
            warn!(%error, "the peer port failed");
        }
    });
}

/// The connections accepted on the peer port, each with `TCP_NODELAY` (tonic's builder flag
/// applies only to listeners it binds itself): a relayed message is small, and must not
/// wait for Nagle's algorithm.
fn peer_connections(
    listener: TcpListener,
) -> impl Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    TcpListenerStream::new(listener).map(|accepted| {
        if let Ok(stream) = &accepted {
            let _ = stream.set_nodelay(true);
        }
        accepted
    })
}

/// Calls this arena's advertised peer address: it must answer as this arena.
pub(super) async fn check_advertised(cluster: &Cluster) -> Result<(), ClusterError> {
    let failed = |reason: String| ClusterError::PeerAdvertise {
        advertised: cluster.peer_address.chars().take(200).collect(),
        reason,
    };
    let mut client = cluster
        .peers
        .client(&cluster.peer_address)
        .map_err(|s| failed(s.message().to_owned()))?;
    let call = client.identify(authorized(cluster, pp::IdentifyRequest {}));
    match tokio::time::timeout(LINK_TIMEOUT, call).await {
        Ok(Ok(reply)) if reply.get_ref().instance == cluster.instance => Ok(()),
        Ok(Ok(reply)) => Err(failed(format!(
            "arena {} answered there",
            reply
                .get_ref()
                .instance
                .chars()
                .take(64)
                .collect::<String>()
        ))),
        Ok(Err(status)) => Err(failed(status.message().to_owned())),
        Err(_) => Err(failed(format!(
            "no answer within {} s",
            LINK_TIMEOUT.as_secs()
        ))),
    }
}

/// The holder's side: the peer port's service.
struct PeerService {
    cluster: Arc<Cluster>,
    lobby: Arc<Lobby>,
}

impl PeerService {
    fn check_token<T>(&self, request: &Request<T>) -> Result<(), Status> {
        // The project's one bearer parser, and a hashed constant-time comparison.
        let given = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(crate::auth::bearer_token);
        if given.is_some_and(|token| self.cluster.token_check.verifies(token)) {
            Ok(())
        } else {
            Err(Status::unauthenticated(
                "the peer port takes calls of arenas with the cluster's peer token only",
            ))
        }
    }
}

type ToReferee = Result<pp::ToReferee, Status>;

#[tonic::async_trait]
impl Peer for PeerService {
    async fn identify(
        &self,
        request: Request<pp::IdentifyRequest>,
    ) -> Result<Response<pp::IdentifyReply>, Status> {
        self.check_token(&request)?;
        Ok(Response::new(pp::IdentifyReply {
            instance: self.cluster.instance.clone(),
        }))
    }

    type RelayStream = ReceiverStream<ToReferee>;

    async fn relay(
        &self,
        request: Request<Streaming<pp::ToHolder>>,
    ) -> Result<Response<Self::RelayStream>, Status> {
        self.check_token(&request)?;
        let mut inbound = request.into_inner();
        let first = tokio::time::timeout(LINK_TIMEOUT, inbound.message())
            .await
            .map_err(|_| Status::deadline_exceeded("no ticket: send the ticket first"))??;
        let Some(pp::ToHolder {
            kind: Some(to_holder::Kind::Ticket(ticket)),
        }) = first
        else {
            return Err(Status::invalid_argument(
                "the first message must be the ticket",
            ));
        };
        let Some(held) = self.cluster.tickets.redeem(&ticket) else {
            return Err(Status::not_found(format!(
                "ticket {} is unknown, used or expired (tickets hold {} s)",
                ticket.chars().take(32).collect::<String>(),
                super::reserve::TICKET_TTL.as_secs()
            )));
        };
        let bot = held.bot_name().to_owned();
        let Some(link) = held.claim().await else {
            return Err(Status::unavailable(format!(
                "the stream of bot {bot} is gone"
            )));
        };
        let (out, rx) = mpsc::channel(RELAY_QUEUE);
        let linked = pp::ToReferee {
            kind: Some(to_referee::Kind::Linked(true)),
        };
        let _ = out.try_send(Ok(linked));
        let seat = HeldSeat {
            link,
            bot,
            bot_gone: false,
            sent_any: false,
            asked_at: None,
        };
        let mut shutdown = self.cluster.shutdown.clone();
        let grace = self.cluster.relay_grace;
        let stopping = async move {
            crate::shutdown::requested(&mut shutdown).await;
            tokio::time::sleep(grace).await;
        };
        let broken = self.cluster.metrics.links_broken.clone();
        let lobby = self.lobby.clone();
        tokio::spawn(hold_seat(seat, inbound, out, lobby, (stopping, broken)));
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

/// A relayed seat on the holder: the bot's link and what the relay knows of it.
struct HeldSeat {
    link: Box<dyn BotLink>,
    bot: String,
    /// The bot is gone (the referee was told).
    bot_gone: bool,
    /// Something of the match was sent to the bot.
    sent_any: bool,
    /// When its open request was handed to it.
    asked_at: Option<Instant>,
}

/// What one message of the referee came to.
enum Relayed {
    /// Handed to the bot; maybe an answer for the referee (the bot is gone).
    Sent(Option<SeatAnswer>),
    /// The match's result or abort was handed over: the relay is over.
    Over,
    /// The link broke (or ended) before the match's end.
    Broken,
}

impl HeldSeat {
    fn hand_to_bot(&mut self, message: Result<Option<pp::ToHolder>, Status>) -> Relayed {
        let message = match message {
            Ok(Some(pp::ToHolder {
                kind: Some(to_holder::Kind::SeatMessage(message)),
            })) => encoded_to_seat(message),
            _ => None,
        };
        let Some(message) = message else {
            return Relayed::Broken;
        };
        let last = message.note.ends_match();
        if let SeatNote::Request { .. } = message.note {
            self.asked_at = Some(Instant::now());
        }
        self.sent_any = true;
        if !self.bot_gone && !self.link.send_encoded(message) {
            self.bot_gone = true;
            return Relayed::Sent(Some(gone(self.link.as_ref())));
        }
        if last {
            Relayed::Over
        } else {
            Relayed::Sent(None)
        }
    }

    fn answer_of(&mut self, from: FromSeat) -> SeatAnswer {
        if let FromSeat::Disconnected = from {
            self.bot_gone = true;
            return gone(self.link.as_ref());
        }
        let bot_us = self
            .asked_at
            .take()
            .map_or(0, |t| t.elapsed().as_micros() as u64);
        SeatAnswer {
            from,
            gone_reason: None,
            bot_us,
        }
    }

    /// The match ends here without its result (the link broke, or this arena stops): the
    /// bot is told it was aborted, if it had started.
    fn abort(&mut self, why: &str) {
        if self.sent_any {
            info!(bot = %self.bot, why, "a relayed match is aborted");
            let aborted = ToSeat::Aborted {
                reason: why.to_owned(),
            };
            self.link.send(&[], Some(aborted));
        }
    }
}

/// Plays a relayed seat on the holder: the referee's messages to the bot's link, the bot's
/// answers back, until the match's result or abort. If the link breaks, or this arena stops
/// (`stopping`: its shutdown grace is nearly over), the bot is told the match was aborted,
/// and the call ends, so the referee aborts it too. The stream goes back to its connection.
async fn hold_seat(
    mut seat: HeldSeat,
    mut inbound: Streaming<pp::ToHolder>,
    out: mpsc::Sender<ToReferee>,
    lobby: Arc<Lobby>,
    (stopping, links_broken): (
        impl std::future::Future<Output = ()>,
        prometheus::IntCounter,
    ),
) {
    let mut stopping = std::pin::pin!(stopping);
    loop {
        let answer = tokio::select! {
            message = inbound.message() => match seat.hand_to_bot(message) {
                Relayed::Sent(answer) => answer,
                Relayed::Over => break,
                Relayed::Broken => {
                    links_broken.inc();
                    seat.abort("a link between arenas broke");
                    break;
                }
            },
            from = std::future::poll_fn(|cx| seat.link.poll_recv(cx)), if !seat.bot_gone => {
                Some(seat.answer_of(from))
            }
            () = &mut stopping => {
                seat.abort("the arena holding the bot's stream is shutting down");
                break;
            }
        };
        if let Some(answer) = answer {
            let bytes = serde_json::to_vec(&answer).unwrap_or_default();
            let message = pp::ToReferee {
                kind: Some(to_referee::Kind::FromSeat(bytes)),
            };
            if out.try_send(Ok(message)).is_err() {
                debug!(bot = %seat.bot, "the referee's arena does not read its relayed seat");
            }
        }
    }
    seat.link.release();
    HeldStream::ended(&lobby, &seat.bot);
}

fn gone(link: &dyn BotLink) -> SeatAnswer {
    SeatAnswer {
        from: FromSeat::Disconnected,
        gone_reason: Some(link.gone_reason()),
        bot_us: 0,
    }
}

/// The referee's side of a relayed seat.
pub(super) struct RelayLink {
    to_holder: mpsc::Sender<pp::ToHolder>,
    from_holder: Streaming<pp::ToReferee>,
    fault: MatchFault,
    gone_reason: Option<ForfeitReason>,
    broken: bool,
    asked_at: Option<Instant>,
    /// The match and the seat, from the match's start (for the messages' wire form).
    match_id: String,
    seat: Seat,
    cluster: Arc<Cluster>,
}

impl Cluster {
    /// Links a reserved seat for a match whose abort `fault` trips: its link, or `None`.
    pub(super) async fn link(
        self: &Arc<Self>,
        reservation: &Reservation,
        fault: MatchFault,
    ) -> Option<RelayLink> {
        let mut client = self.peers.client(&reservation.peer).ok()?;
        let (to_holder, rx) = mpsc::channel(RELAY_QUEUE);
        let ticket = pp::ToHolder {
            kind: Some(to_holder::Kind::Ticket(reservation.ticket.clone())),
        };
        to_holder.try_send(ticket).ok()?;
        let call = client.relay(authorized(self, ReceiverStream::new(rx)));
        let linked = async {
            let mut from_holder = call.await.ok()?.into_inner();
            match from_holder.message().await {
                Ok(Some(pp::ToReferee {
                    kind: Some(to_referee::Kind::Linked(true)),
                })) => Some(from_holder),
                _ => None,
            }
        };
        match tokio::time::timeout(LINK_TIMEOUT, linked).await {
            Ok(Some(from_holder)) => Some(RelayLink {
                to_holder,
                from_holder,
                fault,
                gone_reason: None,
                broken: false,
                asked_at: None,
                match_id: String::new(),
                seat: Seat(0),
                cluster: self.clone(),
            }),
            _ => {
                debug!(instance = %reservation.instance, "a reserved seat could not be linked");
                None
            }
        }
    }
}

impl RelayLink {
    fn break_link(&mut self) {
        if !self.broken {
            warn!("a link between arenas broke: the match is aborted");
            self.cluster.metrics.links_broken.inc();
            self.broken = true;
            self.fault.trip();
        }
    }
}

impl BotLink for RelayLink {
    fn send(&mut self, events: &[Arc<EventBatch>], message: Option<ToSeat>) -> bool {
        if self.gone_reason.is_some() {
            return false;
        }
        if self.broken {
            return true;
        }
        let note = message.as_ref().map_or(SeatNote::Events, ToSeat::note);
        match &note {
            SeatNote::Start { match_id, seat, .. } => {
                self.match_id.clone_from(match_id);
                self.seat = *seat;
            }
            SeatNote::Request { .. } => self.asked_at = Some(Instant::now()),
            _ => {}
        }
        // Encoded as for a local seat (each event batch once for every seat of the match).
        let wire = crate::wire::wire_message(events, message, &self.match_id, self.seat);
        let message = pp::ToHolder {
            kind: Some(to_holder::Kind::SeatMessage(seat_message(
                Bytes::from(wire.encode_to_vec()),
                note,
            ))),
        };
        if self.to_holder.try_send(message).is_err() {
            self.break_link();
        }
        true
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<FromSeat> {
        loop {
            if self.broken {
                // The match is being aborted.
                return Poll::Pending;
            }
            if self.gone_reason.is_some() {
                return Poll::Ready(FromSeat::Disconnected);
            }
            let answer = match ready!(Pin::new(&mut self.from_holder).poll_next(cx)) {
                Some(Ok(pp::ToReferee {
                    kind: Some(to_referee::Kind::FromSeat(bytes)),
                })) => serde_json::from_slice::<SeatAnswer>(&bytes).ok(),
                Some(Ok(_)) => continue,
                _ => None,
            };
            let Some(answer) = answer else {
                self.break_link();
                continue;
            };
            if let FromSeat::Disconnected = answer.from {
                self.gone_reason = Some(answer.gone_reason.unwrap_or(ForfeitReason::Disconnected));
                continue;
            }
            if let Some(asked) = self.asked_at.take() {
                let relay = asked
                    .elapsed()
                    .saturating_sub(Duration::from_micros(answer.bot_us));
                self.cluster
                    .metrics
                    .relay_round_trip
                    .observe(relay.as_secs_f64());
            }
            return Poll::Ready(answer.from);
        }
    }

    /// The match is over: the request stream ends after the messages still queued (the
    /// result among them), and the call is kept until the holder has handed them over and
    /// ended it (at most [`LINK_TIMEOUT`]). Dropping the call at once would cancel it, and
    /// the holder would take the match for broken.
    fn release(self: Box<Self>) {
        let RelayLink {
            to_holder,
            mut from_holder,
            ..
        } = *self;
        drop(to_holder);
        tokio::spawn(async move {
            let drained = async { while let Ok(Some(_)) = from_holder.message().await {} };
            let _ = tokio::time::timeout(LINK_TIMEOUT, drained).await;
        });
    }

    fn gone_reason(&self) -> ForfeitReason {
        self.gone_reason.unwrap_or(ForfeitReason::Disconnected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn peer_connections_do_not_wait_for_nagle() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut incoming = std::pin::pin!(peer_connections(listener));
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let accepted = incoming.next().await.unwrap().unwrap();
        assert!(accepted.nodelay().unwrap());
    }
}
