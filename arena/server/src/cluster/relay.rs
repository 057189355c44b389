//! The seat link between arenas: the peer port (the holder's side of a relayed seat, framed
//! `knobel.peer.v1` messages over TCP, `frames.rs`) and [`RelayLink`], the referee's side, a
//! [`BotLink`] like a local stream.
//!
//! The referee encodes each of its messages for the seat exactly as for a local seat (the
//! public events before it, each batch encoded once for every seat of the match, and the
//! message), and the holder forwards those bytes as they are to the bot's own stream
//! ([`BotLink::send_encoded`]), which keeps the match's state (open requests, the end) from
//! the message's note: the bot sees exactly what a local seat sees, and pings, stale
//! answers and a bot that stops reading are handled where the bot is. Deadlines and time
//! banks are the referee's. A link that breaks during the match (closed, or silent for
//! [`SILENCE`](frames::SILENCE): its arena stopped) trips its [`MatchFault`]: the referee aborts the match,
//! and the holder tells the bot the match was aborted.

use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::Bytes;
use knobel_engine::{ForfeitReason, Seat};
use knobel_proto::peer::{self as pp, peer_open, seat_message::Note, to_holder, to_referee};
use serde::{Deserialize, Serialize};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tracing::{debug, info, warn};

use super::frames::{self, FrameReader, FrameSender, Silence};
use super::reserve::Reservation;
use super::{Cluster, ClusterError};
use crate::lobby::{HeldStream, Lobby, MatchFault};
use crate::referee::{BotLink, EncodedToSeat, EventBatch, FromSeat, SeatNote, ToSeat};

/// The peer link's version (`PeerOpen.version`; presence tells it to the other arenas).
pub(super) const PEER_VERSION: u32 = 2;
/// How long opening a link may take: connecting, the `PeerOpen` and its answer (the holder
/// claims the stream meanwhile).
const LINK_TIMEOUT: Duration = Duration::from_secs(3);
/// The largest `PeerOpen` (a token of at most 256 characters and a ticket).
const MAX_OPEN_MESSAGE: usize = 4 << 10;
/// The largest peer message (a referee's message with its events is a few kilobytes).
const MAX_PEER_MESSAGE: usize = 1 << 20;
/// Connections the peer port serves at once (a linked seat is one); more wait in the
/// listener's backlog.
const MAX_PEER_CONNECTIONS: usize = 4096;

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

/// The `alive` frames of each side.
fn alive_to_holder() -> Bytes {
    frames::frame(&pp::ToHolder {
        kind: Some(to_holder::Kind::Alive(true)),
    })
}

fn alive_to_referee() -> Bytes {
    frames::frame(&pp::ToReferee {
        kind: Some(to_referee::Kind::Alive(true)),
    })
}

/// Opens a link to the peer port at `peer` for `purpose`: the link and the answer to its
/// `PeerOpen`, or why not.
async fn open_link(
    cluster: &Cluster,
    peer: &str,
    purpose: peer_open::Purpose,
) -> Result<(FrameReader, FrameSender, to_referee::Kind), String> {
    let opening = async {
        let stream = TcpStream::connect(peer)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let _ = stream.set_nodelay(true);
        let (mut reader, sender) = frames::split(stream, MAX_PEER_MESSAGE);
        sender.send(&pp::PeerOpen {
            version: PEER_VERSION,
            token: cluster.token.to_string(),
            purpose: Some(purpose),
        });
        match reader.message::<pp::ToReferee>().await {
            Some(pp::ToReferee { kind: Some(kind) }) => Ok((reader, sender, kind)),
            _ => Err("the connection ended without an answer".to_owned()),
        }
    };
    tokio::time::timeout(LINK_TIMEOUT, opening)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {} s", LINK_TIMEOUT.as_secs())))
}

/// Serves the peer port on `listener` until `shutdown` (links open by then play on).
pub(super) fn serve_peers(
    cluster: Arc<Cluster>,
    lobby: Arc<Lobby>,
    listener: TcpListener,
    mut shutdown: watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        let connections = Arc::new(Semaphore::new(MAX_PEER_CONNECTIONS));
        loop {
            let permit = tokio::select! {
                permit = connections.clone().acquire_owned() => permit,
                () = crate::shutdown::requested(&mut shutdown) => return,
            };
            let Ok(permit) = permit else { return };
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = crate::shutdown::requested(&mut shutdown) => return,
            };
            match accepted {
                Ok((stream, _)) => {
                    let (cluster, lobby) = (cluster.clone(), lobby.clone());
                    tokio::spawn(async move {
                        serve_peer(cluster, lobby, stream).await;
                        drop(permit);
                    });
                }
                Err(error) => {
                    warn!(%error, "the peer port cannot accept");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    });
}

/// One connection to the peer port: its `PeerOpen` (within [`LINK_TIMEOUT`], at most
/// [`MAX_OPEN_MESSAGE`] bytes) checked and answered, and a linked seat played.
async fn serve_peer(cluster: Arc<Cluster>, lobby: Arc<Lobby>, stream: TcpStream) {
    // A relayed message is small, and must not wait for Nagle's algorithm.
    let _ = stream.set_nodelay(true);
    let (mut reader, sender) = frames::split(stream, MAX_OPEN_MESSAGE);
    let opened = tokio::time::timeout(LINK_TIMEOUT, reader.message::<pp::PeerOpen>()).await;
    let Ok(Some(open)) = opened else {
        debug!("a peer connection sent no PeerOpen in time");
        return;
    };
    let answer = |kind| pp::ToReferee { kind: Some(kind) };
    let purpose = match check_open(&cluster, open) {
        Ok(purpose) => purpose,
        Err(reason) => {
            sender.send(&answer(to_referee::Kind::Refused(reason)));
            return;
        }
    };
    match purpose {
        peer_open::Purpose::Identify(_) => {
            sender.send(&answer(to_referee::Kind::Instance(
                cluster.instance.clone(),
            )));
        }
        peer_open::Purpose::Ticket(ticket) => match claim(&cluster, &ticket).await {
            Ok((link, bot)) => {
                sender.send(&answer(to_referee::Kind::Linked(true)));
                sender.keep_alive(alive_to_referee());
                reader.set_max_frame(MAX_PEER_MESSAGE);
                let seat = HeldSeat {
                    link,
                    bot,
                    bot_gone: false,
                    sent_any: false,
                    asked_at: None,
                };
                hold_seat(seat, (reader, sender), lobby, &cluster).await;
            }
            Err(reason) => {
                sender.send(&answer(to_referee::Kind::Refused(reason)));
            }
        },
    }
}

/// A `PeerOpen`'s purpose, if it is of this version and carries the cluster's token.
fn check_open(cluster: &Cluster, open: pp::PeerOpen) -> Result<peer_open::Purpose, String> {
    // A hashed constant-time comparison, as for the admin token.
    if !cluster.token_check.verifies(&open.token) {
        return Err(
            "the peer port takes links of arenas with the cluster's peer token only".to_owned(),
        );
    }
    if open.version != PEER_VERSION {
        return Err(format!(
            "peer link version {} is not spoken here: this arena speaks version {PEER_VERSION}",
            open.version
        ));
    }
    open.purpose
        .ok_or_else(|| "a PeerOpen names its purpose: identify or ticket".to_owned())
}

/// Redeems a reservation's ticket and claims its stream: the bot's link and name.
async fn claim(cluster: &Cluster, ticket: &str) -> Result<(Box<dyn BotLink>, String), String> {
    let Some(held) = cluster.tickets.redeem(ticket) else {
        return Err(format!(
            "ticket {} is unknown, used or expired (tickets hold {} s)",
            ticket.chars().take(32).collect::<String>(),
            super::reserve::TICKET_TTL.as_secs()
        ));
    };
    let bot = held.bot_name().to_owned();
    match held.claim().await {
        Some(link) => Ok((link, bot)),
        None => Err(format!("the stream of bot {bot} is gone")),
    }
}

/// Calls this arena's advertised peer address: it must answer as this arena.
pub(super) async fn check_advertised(cluster: &Cluster) -> Result<(), ClusterError> {
    let failed = |reason: String| ClusterError::PeerAdvertise {
        advertised: cluster.peer_address.chars().take(200).collect(),
        reason,
    };
    let identify = peer_open::Purpose::Identify(true);
    match open_link(cluster, &cluster.peer_address, identify).await {
        Ok((_, _, to_referee::Kind::Instance(instance))) if instance == cluster.instance => Ok(()),
        Ok((_, _, to_referee::Kind::Instance(instance))) => Err(failed(format!(
            "arena {} answered there",
            instance.chars().take(64).collect::<String>()
        ))),
        Ok((_, _, to_referee::Kind::Refused(reason))) => Err(failed(reason)),
        Ok(_) => Err(failed("an answer that is not an identity".to_owned())),
        Err(reason) => Err(failed(reason)),
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
    fn hand_to_bot(&mut self, message: Option<pp::ToHolder>) -> Relayed {
        let message = match message {
            Some(pp::ToHolder {
                kind: Some(to_holder::Kind::SeatMessage(message)),
            }) => encoded_to_seat(message),
            Some(pp::ToHolder {
                kind: Some(to_holder::Kind::Alive(_)),
            }) => return Relayed::Sent(None),
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
/// answers back, until the match's result or abort. If the link breaks (or the referee's
/// arena is silent for [`SILENCE`](frames::SILENCE)), or this arena stops (its shutdown grace is nearly
/// over), the bot is told the match was aborted, and the link ends, so the referee aborts
/// it too. The stream goes back to its connection.
async fn hold_seat(
    mut seat: HeldSeat,
    (mut reader, sender): (FrameReader, FrameSender),
    lobby: Arc<Lobby>,
    cluster: &Cluster,
) {
    let mut shutdown = cluster.shutdown.clone();
    let grace = cluster.relay_grace;
    let stopping = async move {
        crate::shutdown::requested(&mut shutdown).await;
        tokio::time::sleep(grace).await;
    };
    let mut stopping = std::pin::pin!(stopping);
    let mut silence = Silence::new();
    loop {
        let answer = tokio::select! {
            message = reader.message::<pp::ToHolder>() => {
                silence.heard();
                match seat.hand_to_bot(message) {
                    Relayed::Sent(answer) => answer,
                    Relayed::Over => break,
                    Relayed::Broken => {
                        cluster.metrics.links_broken.inc();
                        seat.abort("a link between arenas broke");
                        break;
                    }
                }
            }
            from = std::future::poll_fn(|cx| seat.link.poll_recv(cx)), if !seat.bot_gone => {
                Some(seat.answer_of(from))
            }
            () = std::future::poll_fn(|cx| silence.poll_silent(cx)) => {
                cluster.metrics.links_broken.inc();
                seat.abort("the arena refereeing the match stopped answering");
                break;
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
            if !sender.send(&message) {
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
    sender: FrameSender,
    reader: FrameReader,
    /// When the holder was last heard from.
    silence: Silence,
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
        let ticket = peer_open::Purpose::Ticket(reservation.ticket.clone());
        match open_link(self, &reservation.peer, ticket).await {
            Ok((reader, sender, to_referee::Kind::Linked(true))) => {
                sender.keep_alive(alive_to_holder());
                Some(RelayLink {
                    sender,
                    reader,
                    silence: Silence::new(),
                    fault,
                    gone_reason: None,
                    broken: false,
                    asked_at: None,
                    match_id: String::new(),
                    seat: Seat(0),
                    cluster: self.clone(),
                })
            }
            answer => {
                let reason = match answer {
                    Ok((_, _, to_referee::Kind::Refused(reason))) => reason,
                    Ok(_) => "an answer that is not a link".to_owned(),
                    Err(reason) => reason,
                };
                debug!(instance = %reservation.instance, %reason, "a reserved seat could not be linked");
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

    /// What the holder sent: the bot's answer, or `None` if the link ended or broke.
    fn poll_answer(&mut self, cx: &mut Context<'_>) -> Poll<Option<SeatAnswer>> {
        loop {
            let message = match self.reader.poll_message::<pp::ToReferee>(cx) {
                Poll::Ready(message) => message,
                Poll::Pending if self.silence.poll_silent(cx).is_ready() => {
                    return Poll::Ready(None);
                }
                Poll::Pending => return Poll::Pending,
            };
            self.silence.heard();
            return Poll::Ready(match message {
                Some(pp::ToReferee {
                    kind: Some(to_referee::Kind::FromSeat(bytes)),
                }) => serde_json::from_slice::<SeatAnswer>(&bytes).ok(),
                Some(pp::ToReferee {
                    kind: Some(to_referee::Kind::Alive(_)),
                }) => continue,
                _ => None,
            });
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
                Bytes::from(prost::Message::encode_to_vec(&wire)),
                note,
            ))),
        };
        if !self.sender.send(&message) {
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
            let Some(answer) = ready!(self.poll_answer(cx)) else {
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

    /// The match is over: the link is closed after the messages still queued (the result
    /// among them), and read until the holder has handed them over and closed it too (at
    /// most [`LINK_TIMEOUT`]). Closing it at once would lose what the holder had not read.
    fn release(self: Box<Self>) {
        let RelayLink {
            sender, mut reader, ..
        } = *self;
        drop(sender);
        tokio::spawn(async move {
            let drained = async { while reader.message::<pp::ToReferee>().await.is_some() {} };
            let _ = tokio::time::timeout(LINK_TIMEOUT, drained).await;
        });
    }

    fn gone_reason(&self) -> ForfeitReason {
        self.gone_reason.unwrap_or(ForfeitReason::Disconnected)
    }
}
