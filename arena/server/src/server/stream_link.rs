//! [`StreamLink`]: one Play stream as a match's referee reads and writes it (its
//! [`BotLink`]), converting the referee's messages to wire messages and answering pings,
//! stale answers and a second Hello on the way.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use knobel_engine::{ForfeitReason, Seat};
use knobel_proto::BotDecision;
use knobel_proto::outbound::OutboundMessage;
use knobel_proto::v1 as pb;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::Stream;
use tokio_util::sync::WaitForCancellationFutureOwned;
use tonic::{Status, Streaming};
use tracing::{info, warn};

use super::MAX_PINGS_PER_MINUTE;
use super::play::{Handled, MatchEnd, PingLimiter};
use super::status::broken_stream;
use crate::referee::{BotLink, EncodedToSeat, EventBatch, FromSeat, SeatNote, ToSeat};
use crate::wire::wire_message;

/// A Play stream: its two directions and what the arena tracks about them.
pub(super) struct StreamLink {
    pub(super) bot_id: i64,
    pub(super) bot_name: String,
    /// Ready once the bot is revoked: the link then reports the bot disconnected.
    pub(super) revocation: Pin<Box<WaitForCancellationFutureOwned>>,
    pub(super) inbound: Streaming<pb::BotMessage>,
    pub(super) out: mpsc::Sender<Result<OutboundMessage, Status>>,
    pub(super) pings: PingLimiter,
    /// Requests sent and not yet answered.
    pub(super) open: HashSet<u64>,
    /// The current match.
    pub(super) match_id: String,
    pub(super) seat: Seat,
    /// How the current match ended for this stream, once its last message is sent.
    pub(super) ended: Option<MatchEnd>,
    /// The stream closed or broke.
    pub(super) gone: bool,
    /// Why the bot can no longer play in the current match, when the link knows better than
    /// "disconnected" (see [`BotLink::gone_reason`]): a full queue sets `NotReading`; code
    /// that ends the stream for a reason of its own (a revoked token: `Revoked`) sets it
    /// before marking the link `gone`, and the seat forfeits for that reason.
    pub(super) gone_reason: Option<ForfeitReason>,
    /// Where the link goes back after its match.
    pub(super) back: Option<oneshot::Sender<StreamLink>>,
}

impl StreamLink {
    /// Queues a message without waiting; false if the bot is gone or does not read.
    pub(super) fn push(&mut self, kind: pb::arena_message::Kind) -> bool {
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
    pub(super) fn refuse_shutting_down(&mut self) {
        let _ = self
            .out
            .try_send(Err(Status::unavailable("the arena is shutting down")));
    }

    pub(super) fn error(&mut self, request_id: u64, code: pb::ErrorCode, message: String) -> bool {
        self.push(pb::arena_message::Kind::Error(pb::ErrorEvent {
            request_id,
            code: code as i32,
            message,
            applied: None,
            strikes: 0,
            forfeited: false,
        }))
    }

    /// Keeps what the stream must know of its match: which match and seat, the requests
    /// open, how the match ended.
    fn note(&mut self, note: SeatNote) {
        match note {
            SeatNote::Start { match_id, seat } => {
                self.seat = seat;
                self.gone_reason = None;
                self.match_id = match_id;
                self.open.clear();
            }
            SeatNote::Request { request_id } => {
                self.open.insert(request_id);
            }
            SeatNote::Result => self.ended = Some(MatchEnd::Next),
            SeatNote::Aborted => self.ended = Some(MatchEnd::Closed),
            SeatNote::Events | SeatNote::Notice => {}
        }
    }

    /// Handles one message from the bot: decisions for open requests go to the referee,
    /// everything else is answered here.
    pub(super) fn handle(&mut self, message: pb::BotMessage) -> Handled {
        let sent = match message.kind {
            Some(pb::bot_message::Kind::Decision(decision)) => {
                let request_id = decision.request_id;
                if !self.open.remove(&request_id) {
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
                }
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

    pub(super) async fn next_message(&mut self) -> Option<pb::BotMessage> {
        std::future::poll_fn(|cx| self.poll_message(cx)).await
    }
}

impl BotLink for StreamLink {
    fn send(&mut self, events: &[Arc<EventBatch>], message: Option<ToSeat>) -> bool {
        if let Some(message) = &message {
            self.note(message.note());
        }
        self.queue(wire_message(events, message, &self.match_id, self.seat))
    }

    fn send_encoded(&mut self, message: EncodedToSeat) -> bool {
        self.note(message.note);
        // An OutboundMessage of one run of bytes and no kind encodes to those bytes.
        self.queue(OutboundMessage {
            events: vec![message.bytes],
            kind: None,
        })
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
