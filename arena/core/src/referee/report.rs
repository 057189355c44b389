//! The end of a match: the report the arena records and the last message to its bots.

use knobel_engine::{ForfeitReason, Match, MatchLog, Outcome, Seat, StrikeReason};

use std::sync::Arc;

use tokio::time::Instant;

use super::EventBatch;
use super::link::{BotLink, Player, ToSeat};
use super::seat::SeatState;

/// The result of a refereed match.
#[derive(Clone, Debug)]
pub struct MatchReport {
    /// The complete engine log (strikes and forfeits included).
    pub log: MatchLog,
    /// The engine outcome, `None` if the match was aborted: final placings (forfeited seats
    /// last), strikes, timeouts and forfeits per seat.
    pub outcome: Option<Outcome>,
    /// Decisions asked of connected bots.
    pub decisions: u64,
    /// Timeouts over all seats (from the engine; also for an aborted match).
    pub timeouts: u64,
    /// Seats forfeited (from the engine; also for an aborted match).
    pub forfeits: u64,
    /// Why each seat forfeited, in seat order (`None`: it did not).
    pub forfeit_reasons: Vec<Option<ForfeitReason>>,
    /// How each seat's decisions went, in seat order (empty for a built-in player).
    pub seats: Vec<SeatDecisions>,
}

/// How one decision asked of a bot ended. Every decision asked ends in exactly one, unless
/// its match is aborted while the bot thinks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DecisionOutcome {
    /// A legal action within the deadline.
    Ok,
    /// A legal action after the deadline, paid for from the seat's time bank.
    Late,
    /// No answer within the deadline and the time bank: a strike.
    Timeout,
    /// An action that is not legal now: a strike.
    Illegal,
    /// An answer that could not be read as an action: a strike.
    Malformed,
    /// The seat forfeited before it answered: its bot was gone, stopped reading or was
    /// revoked.
    Forfeited,
}

impl DecisionOutcome {
    /// Every outcome, in the order of [`SeatDecisions::counts`].
    pub const ALL: [DecisionOutcome; 6] = [
        DecisionOutcome::Ok,
        DecisionOutcome::Late,
        DecisionOutcome::Timeout,
        DecisionOutcome::Illegal,
        DecisionOutcome::Malformed,
        DecisionOutcome::Forfeited,
    ];

    /// The outcome's name, as the metrics spell it.
    pub fn name(self) -> &'static str {
        match self {
            DecisionOutcome::Ok => "ok",
            DecisionOutcome::Late => "late",
            DecisionOutcome::Timeout => "timeout",
            DecisionOutcome::Illegal => "illegal",
            DecisionOutcome::Malformed => "malformed",
            DecisionOutcome::Forfeited => "forfeited",
        }
    }

    /// The outcome of a decision that earned a strike for `reason`.
    pub fn of_strike(reason: StrikeReason) -> DecisionOutcome {
        match reason {
            StrikeReason::Timeout => DecisionOutcome::Timeout,
            StrikeReason::IllegalAction => DecisionOutcome::Illegal,
            StrikeReason::Malformed => DecisionOutcome::Malformed,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// How a bot seat's decisions of one match went.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeatDecisions {
    /// Decisions by outcome, indexed in the order of [`DecisionOutcome::ALL`].
    pub counts: [u64; DecisionOutcome::ALL.len()],
    /// The time from each request to its answer, in seconds, for every decision that was
    /// answered or timed out (a timeout counts the whole deadline and bank it waited).
    pub seconds: Vec<f64>,
}

impl SeatDecisions {
    /// Decisions that ended in `outcome`.
    pub fn count(&self, outcome: DecisionOutcome) -> u64 {
        self.counts[outcome.index()]
    }

    /// Counts one more decision that ended in `outcome`.
    pub fn add(&mut self, outcome: DecisionOutcome) {
        self.counts[outcome.index()] += 1;
    }
}

impl MatchReport {
    /// The report of `m` as it stands, without an outcome (an aborted match).
    pub(super) fn new(
        m: &Match,
        decisions: u64,
        seat_decisions: Vec<SeatDecisions>,
    ) -> MatchReport {
        let seats = (0..m.seats()).map(|s| Seat(s as u8));
        MatchReport {
            log: m.log().expect("logged").clone(),
            outcome: None,
            decisions,
            timeouts: seats.clone().map(|s| u64::from(m.timeouts_of(s))).sum(),
            forfeits: seats.clone().filter(|&s| m.forfeit_of(s).is_some()).count() as u64,
            forfeit_reasons: seats.map(|s| m.forfeit_of(s)).collect(),
            seats: seat_decisions,
        }
    }
}

/// The last message of a match to its bots, sent once the match is recorded (so that a
/// bot that asks for the log right after its result finds the match ended). The match's
/// last public events (MatchOver among them) ride on it; if recording takes longer than
/// [`EVENTS_MAX_DELAY`](super::EVENTS_MAX_DELAY), they go out on their own first
/// ([`Announcement::flush_events`]), as the contract promises.
pub struct Announcement {
    links: Vec<AnnouncedLink>,
    message: ToSeat,
}

/// A bot's link at the end of its match, with the public events it has not been sent yet.
struct AnnouncedLink {
    link: Box<dyn BotLink>,
    pending: Vec<Arc<EventBatch>>,
    pending_since: Option<Instant>,
}

impl Announcement {
    pub(super) fn new(seats: Vec<SeatState>, message: ToSeat) -> Announcement {
        let links = seats
            .into_iter()
            .filter_map(|seat| match seat.player {
                Player::Bot(link) => Some(AnnouncedLink {
                    link,
                    pending: seat.pending,
                    pending_since: seat.pending_since,
                }),
                Player::Builtin(_) => None,
            })
            .collect();
        Announcement { links, message }
    }

    /// When the oldest events not yet sent must go out on their own (their
    /// [`EVENTS_MAX_DELAY`](super::EVENTS_MAX_DELAY) is up), if there are any.
    pub fn events_due(&self) -> Option<Instant> {
        self.links
            .iter()
            .filter_map(|l| l.pending_since)
            .min()
            .map(|since| since + super::EVENTS_MAX_DELAY)
    }

    /// Sends every bot its events not yet sent, on their own (the result is not ready yet).
    pub fn flush_events(&mut self) {
        for announced in &mut self.links {
            if !announced.pending.is_empty() {
                let _ = announced.link.send(&announced.pending, None);
                announced.pending.clear();
            }
            announced.pending_since = None;
        }
    }

    /// Sends the message, with the events not yet sent, to every bot still connected and
    /// gives the connections back.
    pub fn send(self) {
        for mut announced in self.links {
            let _ = announced
                .link
                .send(&announced.pending, Some(self.message.clone()));
            announced.link.release();
        }
    }
}
