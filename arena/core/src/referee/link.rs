//! What the referee and a seat say to each other: the match's facts every seat learns, the
//! messages both ways, and the [`BotLink`] a connected bot is played through.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use knobel_engine::policy::Policy;
use knobel_engine::{Action, ForfeitReason, Observation, Outcome, Rules, Seat};
use serde::{Deserialize, Serialize};

use super::EventBatch;

/// How long a seat may think.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeControl {
    /// Deadline of every decision.
    pub decision: Duration,
    /// Time bank per seat per match, spent on answers later than `decision`.
    pub time_bank: Duration,
}

impl Default for TimeControl {
    fn default() -> TimeControl {
        TimeControl {
            decision: Duration::from_secs(1),
            time_bank: Duration::from_secs(10),
        }
    }
}

/// What every seat learns when the match starts.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MatchInfo {
    /// The match id.
    pub match_id: String,
    /// The preset the rules came from.
    pub preset: String,
    /// The rules played.
    pub rules: Rules,
    /// The name of the player in each seat.
    pub seat_names: Vec<String>,
    /// The registered bot in each seat, by id (`None` for a built-in player).
    pub seat_bot_ids: Vec<Option<i64>>,
    /// The time control.
    pub time_control: TimeControl,
}

/// A decision the referee asks of a seat.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DecisionRequest {
    /// Unique among all requests of this arena; the answer must carry it.
    pub request_id: u64,
    /// What the seat may see.
    pub observation: Observation,
    /// Every legal action.
    pub legal_actions: Vec<Action>,
    /// What the referee does if the seat does not answer in time.
    pub default_action: Action,
    /// Time until the deadline.
    pub deadline: Duration,
    /// The seat's remaining time bank.
    pub time_bank: Duration,
}

/// What went wrong with a seat's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Problem {
    /// No answer within the deadline and the time bank.
    Timeout,
    /// The action is not legal now.
    IllegalAction,
    /// The answer could not be read as an action.
    Malformed,
    /// The answer names a request that is not the seat's open one.
    StaleRequest,
}

/// A notice to a seat about its answer (or its absence).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Notice {
    /// The request concerned.
    pub request_id: u64,
    /// What went wrong.
    pub problem: Problem,
    /// A message that names the problem and what would have been legal.
    pub message: String,
    /// The action the referee applied instead, if any.
    pub applied: Option<Action>,
    /// Strikes so far.
    pub strikes: u8,
    /// Whether the seat is now forfeited.
    pub forfeited: bool,
}

/// A message from the referee to a bot seat.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ToSeat {
    /// The match starts; `seat` is the bot's own.
    Start {
        /// The match.
        info: Arc<MatchInfo>,
        /// The bot's seat.
        seat: Seat,
    },
    /// A decision to make.
    Request(DecisionRequest),
    /// A problem with the bot's answer.
    Notice(Notice),
    /// The match is over.
    Result {
        /// The engine's outcome: final placings (forfeited seats last), strikes, timeouts
        /// and forfeits included.
        outcome: Outcome,
    },
    /// The match was stopped before its end (the arena is shutting down).
    Aborted {
        /// Why.
        reason: String,
    },
}

impl ToSeat {
    /// What this message means for the link that carries it.
    pub fn note(&self) -> SeatNote {
        match self {
            ToSeat::Start { info, seat } => SeatNote::Start {
                match_id: info.match_id.clone(),
                seat: *seat,
            },
            ToSeat::Request(request) => SeatNote::Request {
                request_id: request.request_id,
            },
            ToSeat::Notice(_) => SeatNote::Notice,
            ToSeat::Result { .. } => SeatNote::Result,
            ToSeat::Aborted { .. } => SeatNote::Aborted,
        }
    }
}

/// What a referee's message means for the link that carries it: the state a bot's stream
/// keeps of its match (which match and seat, the requests open, whether the match is over).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeatNote {
    /// Public events only, no message.
    Events,
    /// The match starts.
    Start {
        /// The match.
        match_id: String,
        /// The bot's seat.
        seat: Seat,
    },
    /// A decision request, open from now on.
    Request {
        /// Its id.
        request_id: u64,
    },
    /// A notice about an answer.
    Notice,
    /// The match's result: the last message of the match.
    Result,
    /// The match was aborted: the last message of the match.
    Aborted,
}

impl SeatNote {
    /// Whether this is the match's last message.
    pub fn ends_match(&self) -> bool {
        matches!(self, SeatNote::Result | SeatNote::Aborted)
    }
}

/// A referee's message for one seat as the referee's arena encoded it for the bot (the
/// public events before it and the message: the bytes of one wire message), and what it
/// means. In cluster mode the arena holding the bot's stream forwards these as they are.
#[derive(Clone, Debug)]
pub struct EncodedToSeat {
    /// The wire message, encoded as the bot receives it.
    pub bytes: Bytes,
    /// What it is.
    pub note: SeatNote,
}

/// A message from a bot seat to the referee.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum FromSeat {
    /// An answer; `action` is `Err(message)` when the wire message was not a valid action.
    Decision {
        /// The request answered.
        request_id: u64,
        /// The action, or why it could not be read.
        action: Result<Action, String>,
    },
    /// The bot's connection is gone.
    Disconnected,
}

/// The referee's end of a bot's connection, lent to the match for its duration.
pub trait BotLink: Send {
    /// Queues one message for the bot without waiting: public `events` (oldest first) that
    /// happened before `message`, and the message itself, if any. False if the bot is gone
    /// or has stopped reading (too many messages queued): it can no longer play.
    fn send(&mut self, events: &[Arc<EventBatch>], message: Option<ToSeat>) -> bool;
    /// Queues a message another arena's referee encoded for this seat (cluster mode), as
    /// [`BotLink::send`] does. Only a bot's own stream carries one; every other link (a
    /// relayed seat, an absent bot) refuses it: false, as for a bot that is gone.
    fn send_encoded(&mut self, message: EncodedToSeat) -> bool {
        let _ = message;
        false
    }
    /// Polls for the bot's next decision, or learns that the bot is gone. While it is
    /// pending, `cx`'s waker is woken once there may be more to read. The referee polls each
    /// seat with a waker of its own, so that a wake-up tells it which seat to read.
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<FromSeat>;
    /// Gives the connection back after the match (once its last message is sent).
    fn release(self: Box<Self>);
    /// Why the bot can no longer play, once [`BotLink::send`] returned false or
    /// [`BotLink::poll_recv`] gave [`FromSeat::Disconnected`]: the seat forfeits for this
    /// reason. A link that ends its stream for a reason of its own (e.g. the bot's token
    /// was revoked: [`ForfeitReason::Revoked`]) says so here.
    fn gone_reason(&self) -> ForfeitReason {
        ForfeitReason::Disconnected
    }
}

/// The link of a bot that left before its match began: it is forfeited at once.
#[derive(Debug, Default)]
pub struct AbsentBot;

impl BotLink for AbsentBot {
    fn send(&mut self, _: &[Arc<EventBatch>], _: Option<ToSeat>) -> bool {
        false
    }
    fn poll_recv(&mut self, _: &mut Context<'_>) -> Poll<FromSeat> {
        Poll::Ready(FromSeat::Disconnected)
    }
    fn release(self: Box<Self>) {}
    fn gone_reason(&self) -> ForfeitReason {
        ForfeitReason::Absent
    }
}

/// Who plays a seat.
pub enum Player {
    /// A connected bot.
    Bot(Box<dyn BotLink>),
    /// A built-in policy.
    Builtin(Box<dyn Policy + Send>),
}
