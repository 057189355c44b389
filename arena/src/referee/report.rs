//! The end of a match: the report the arena records and the last message to its bots.

use knobel_engine::{Match, MatchLog, Outcome, Seat};

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
}

impl MatchReport {
    /// The report of `m` as it stands, without an outcome (an aborted match).
    pub(super) fn new(m: &Match, decisions: u64) -> MatchReport {
        let seats = (0..m.seats()).map(|s| Seat(s as u8));
        MatchReport {
            log: m.log().expect("logged").clone(),
            outcome: None,
            decisions,
            timeouts: seats.clone().map(|s| u64::from(m.timeouts_of(s))).sum(),
            forfeits: seats.filter(|&s| m.forfeit_of(s).is_some()).count() as u64,
        }
    }
}

/// The last message of a match to its bots, sent once the match is recorded (so that a
/// bot that asks for the log right after its result finds the match ended).
pub struct Announcement {
    links: Vec<Box<dyn BotLink>>,
    message: ToSeat,
}

impl Announcement {
    pub(super) fn new(seats: Vec<SeatState>, message: ToSeat) -> Announcement {
        let links = seats
            .into_iter()
            .filter_map(|seat| match seat.player {
                Player::Bot(link) => Some(link),
                Player::Builtin(_) => None,
            })
            .collect();
        Announcement { links, message }
    }

    /// Sends the message to every bot still connected and gives the connections back.
    pub fn send(self) {
        for mut link in self.links {
            let _ = link.send(&[], Some(self.message.clone()));
            link.release();
        }
    }
}
