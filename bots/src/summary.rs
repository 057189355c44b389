//! What a run reports: a [`MatchSummary`] per match, and the [`RunReport`] of a run.

use std::fmt;

use knobel_engine::Game;
use knobel_proto::v1 as pb;

/// How one match went for this bot. Its `Display` is the one-line summary
/// `match <id> <game> place <p>/<n>` (with ` aborted` appended, and place 0, when the match
/// was aborted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchSummary {
    /// The match id.
    pub match_id: String,
    /// The game, if the MatchStart named a known one.
    pub game: Option<Game>,
    /// The preset the rules started from.
    pub preset: String,
    /// Seats at the table.
    pub seats: u32,
    /// This bot's seat.
    pub your_seat: u32,
    /// This bot's place (1 is best); 0 when the match was aborted.
    pub place: u32,
    /// Whether the match was played to its end (else it was aborted).
    pub finished: bool,
    /// How the match ended, when it finished.
    pub outcome: Option<pb::Outcome>,
    /// Decision requests received.
    pub requests: u32,
    /// Error events received, by code, in order.
    pub errors: Vec<pb::ErrorCode>,
    /// The messages of those error events (what the arena said was wrong), in the same
    /// order.
    pub error_messages: Vec<String>,
    /// Strikes collected (from the last error event).
    pub strikes: u32,
    /// Whether the seat was forfeited.
    pub forfeited: bool,
}

impl MatchSummary {
    /// The game's name ("schocken", "sjokken", "zokken"), or "unknown".
    pub fn game_name(&self) -> &'static str {
        self.game.map_or("unknown", |g| g.name())
    }
}

impl fmt::Display for MatchSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "match {} {} place {}/{}",
            self.match_id,
            self.game_name(),
            self.place,
            self.seats
        )?;
        if !self.finished {
            f.write_str(" aborted")?;
        }
        write!(
            f,
            " requests {} strikes {} forfeited {} errors [",
            self.requests, self.strikes, self.forfeited
        )?;
        for (i, code) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(code.as_str_name())?;
        }
        f.write_str("]")
    }
}

/// What a run of a bot did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunReport {
    /// Every match result received, in order.
    pub matches: Vec<MatchSummary>,
    /// Play streams opened (the first one and every reconnect).
    pub connections: u32,
    /// Pongs received (answers to the keep-alive Pings).
    pub pongs: u32,
}
