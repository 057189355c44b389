//! The records the store reads and writes.

use std::fmt;
use std::str::FromStr;

use knobel_engine::{ForfeitReason, Outcome};

/// A registered bot, as listed by the store. The token hash is never handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotRecord {
    /// The store's id of the bot.
    pub id: i64,
    /// The bot's unique name.
    pub name: String,
    /// When the bot was registered, in unix milliseconds.
    pub created_at_ms: i64,
    /// When the bot's token was revoked, in unix milliseconds; `None` while it is valid.
    pub revoked_at_ms: Option<i64>,
}

impl BotRecord {
    /// Whether the bot's token has been revoked.
    pub fn is_revoked(&self) -> bool {
        self.revoked_at_ms.is_some()
    }
}

/// A match to record as it starts (see [`Store::insert_match`](super::Store::insert_match)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMatch {
    /// The match id chosen by the caller (unique; e.g. a 26-character ULID-like text).
    pub id: String,
    /// The game played, e.g. "schocken".
    pub game: String,
    /// The rules preset the match was started with.
    pub preset: String,
    /// The full rules, as JSON text.
    pub rules_json: String,
    /// The match seed. The engine's seeds are `u64`: pass `seed as i64` (same bit pattern,
    /// lossless) and get the engine's seed back with `stored as u64`. Stored as a 64-bit
    /// signed integer because neither SQLite nor PostgreSQL has an unsigned 64-bit type.
    pub seed: i64,
    /// The name of the bot in each seat, in seat order: one `match_seats` row each.
    pub seat_names: Vec<String>,
    /// The registered bot in each seat, in seat order (`None` for a built-in player), as
    /// [`BotRecord::id`]: results are attributed by id (`match_seats.bot_id`). Empty if
    /// unknown; else one per seat.
    pub seat_bot_ids: Vec<Option<i64>>,
    /// When the match started, in unix milliseconds.
    pub started_at_ms: i64,
    /// The league match it plays; `None` for pick-up and practice matches. What its log may
    /// show follows the league's status (docs/fair-play.md).
    pub league: Option<LeagueSlot>,
}

/// The end of a running match to record (see
/// [`Store::finish_match`](super::Store::finish_match)).
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedMatch {
    /// The match id.
    pub id: String,
    /// The engine's log of the match, as JSON text.
    pub log_json: String,
    /// The engine's outcome: per seat, in seat order, the final place (1 = first; ties
    /// share a place; forfeited seats after all others), tokens or chips, strikes, timeouts
    /// and the forfeit. Every per-seat list has one entry per placing.
    pub outcome: Outcome,
    /// When the match finished, in unix milliseconds.
    pub finished_at_ms: i64,
    /// Every seat's luck-adjusted score, in seat order ([`knobel_engine::match_luck`] of the
    /// log, computed by [`knobel_league::luck::adjusted_scores`] for league matches), stored
    /// in `match_seats.adjusted_score`; `None` stores NULL (not a league match, a match
    /// with a forfeit, a log whose luck could not be computed), and so does a list that
    /// does not have one score per seat.
    pub adjusted: Option<Vec<f64>>,
}

/// The early end of a running match to record (see
/// [`Store::abort_match`](super::Store::abort_match)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortedMatch {
    /// The match id.
    pub id: String,
    /// Why the match ended early, e.g. "the arena shut down".
    pub reason: String,
    /// The log so far, as JSON text; `None` keeps whatever log was stored.
    pub log_json: Option<String>,
    /// When the match was aborted, in unix milliseconds.
    pub finished_at_ms: i64,
}

/// One write to the matches of the store: several of them can be committed together
/// (see [`Store::write_matches`](super::Store::write_matches)).
#[derive(Debug, Clone, PartialEq)]
pub enum MatchWrite {
    /// A match starts: see [`Store::insert_match`](super::Store::insert_match).
    Start(NewMatch),
    /// A match is over: see [`Store::finish_match`](super::Store::finish_match).
    Finish(FinishedMatch),
    /// A match ended early: see [`Store::abort_match`](super::Store::abort_match).
    Abort(AbortedMatch),
    /// A league match is over: [`MatchWrite::Finish`], and in the same transaction its
    /// league match is marked finished (if this match still holds its claim: a result is
    /// counted once), and the league too once every match of it is.
    FinishLeague(FinishedMatch, LeagueSlot),
}

/// A league match: its league and its place in the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeagueSlot {
    /// The league's id.
    pub league_id: i64,
    /// The match's place in the schedule.
    pub ordinal: u32,
}

/// Where a match stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchStatus {
    /// Started and not yet over (or the arena stopped before it was over).
    Running,
    /// Played to its end; placings are known.
    Finished,
    /// Ended early (a bot failed, the arena shut down, ...).
    Aborted,
}

impl MatchStatus {
    /// The status as stored in the database and shown to people: "running", "finished" or
    /// "aborted".
    pub fn as_str(self) -> &'static str {
        match self {
            MatchStatus::Running => "running",
            MatchStatus::Finished => "finished",
            MatchStatus::Aborted => "aborted",
        }
    }
}

impl fmt::Display for MatchStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text given is not a match status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown match status \"{0}\": expected running, finished or aborted")]
pub struct ParseMatchStatusError(pub String);

impl FromStr for MatchStatus {
    type Err = ParseMatchStatusError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "running" => Ok(MatchStatus::Running),
            "finished" => Ok(MatchStatus::Finished),
            "aborted" => Ok(MatchStatus::Aborted),
            other => Err(ParseMatchStatusError(other.to_owned())),
        }
    }
}

/// Which matches to list (see [`Store::list_matches`](super::Store::list_matches)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchFilter {
    /// Only matches of this game.
    pub game: Option<String>,
    /// Only matches with this status.
    pub status: Option<MatchStatus>,
    /// Only matches with a seat held by the bot of this name (the name recorded with the
    /// seat when the match started).
    pub bot_name: Option<String>,
    /// At most this many matches; clamped to `1..=`[`MatchFilter::MAX_LIMIT`].
    pub limit: u32,
    /// Only matches listed after this one: older, or as old with a smaller id (keyset
    /// paging: pass the last match of the previous page). `None`: from the newest.
    pub after: Option<MatchCursor>,
}

/// A position in the list of matches, newest first: the start time and id of the last
/// match of a page (see [`MatchFilter::after`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchCursor {
    /// The match's start, in Unix milliseconds.
    pub started_at_ms: i64,
    /// The match's id.
    pub id: String,
}

impl MatchCursor {
    /// The position of `summary` in the list.
    pub fn of(summary: &MatchSummary) -> MatchCursor {
        MatchCursor {
            started_at_ms: summary.started_at_ms,
            id: summary.id.clone(),
        }
    }
}

impl MatchFilter {
    /// The largest page [`Store::list_matches`](super::Store::list_matches) returns.
    pub const MAX_LIMIT: u32 = 500;
    /// The page size of [`MatchFilter::default`].
    pub const DEFAULT_LIMIT: u32 = 100;
}

impl Default for MatchFilter {
    /// All matches, the newest [`MatchFilter::DEFAULT_LIMIT`].
    fn default() -> Self {
        MatchFilter {
            game: None,
            status: None,
            bot_name: None,
            limit: MatchFilter::DEFAULT_LIMIT,
            after: None,
        }
    }
}

/// A match as listed, without its log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchSummary {
    /// The match id.
    pub id: String,
    /// The game played.
    pub game: String,
    /// The rules preset.
    pub preset: String,
    /// The name of the bot in each seat, in seat order.
    pub seat_names: Vec<String>,
    /// Where the match stands.
    pub status: MatchStatus,
    /// The place of each seat (1 = first; ties share a place), once finished.
    pub placings: Option<Vec<u8>>,
    /// The full outcome, once finished (`None` for a match recorded before the store kept
    /// outcomes, which has its placings only).
    pub outcome: Option<Outcome>,
    /// Why the match was aborted, if it was.
    pub abort_reason: Option<String>,
    /// When the match started, in unix milliseconds.
    pub started_at_ms: i64,
    /// When the match finished or was aborted, in unix milliseconds.
    pub finished_at_ms: Option<i64>,
    /// The full rules, as JSON text (for the rule variants a listing shows).
    pub rules_json: String,
}

/// A stored match with everything but its log (see [`Store::get_match`](super::Store::get_match)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchRecord {
    /// What [`Store::list_matches`](super::Store::list_matches) shows of it.
    pub summary: MatchSummary,
    /// The seed as stored: the engine's `u64` seed is `seed as u64`.
    pub seed: i64,
}

/// One seat a bot held in a finished match (see
/// [`Store::results_for_bot`](super::Store::results_for_bot)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotResult {
    /// The match id.
    pub match_id: String,
    /// The game played.
    pub game: String,
    /// The seat the bot held (0-based).
    pub seat: u8,
    /// The place the bot reached (1 = first; ties share a place).
    pub place: u8,
    /// How many seats the match had.
    pub seats: u8,
    /// When the match finished, in unix milliseconds.
    pub finished_at_ms: i64,
}

/// One seat of a finished match with its result, as `match_seats` holds it (see
/// [`Store::seat_results`](super::Store::seat_results)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatResult {
    /// The seat (0-based).
    pub seat: u8,
    /// The name of the bot in the seat.
    pub bot_name: String,
    /// The final place (1 = first; ties share a place; forfeited seats after all others).
    pub place: u8,
    /// Strikes the seat was given.
    pub strikes: u32,
    /// Of those, the timeouts.
    pub timeouts: u32,
    /// Why the seat forfeited, if it did.
    pub forfeit: Option<ForfeitReason>,
    /// Schocken and Sjokken: the tokens the seat held at the end; `None` in Zokken.
    pub tokens: Option<i64>,
    /// Zokken: the seat's net chips; `None` in Schocken and Sjokken.
    pub chips: Option<i64>,
}

/// What a bot did in all its finished matches, summed in the store (see
/// [`Store::bot_totals`](super::Store::bot_totals)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BotTotals {
    /// Finished matches.
    pub matches: u64,
    /// Per place reached (1 = first), how often, by place.
    pub places: Vec<(u8, u64)>,
    /// Strikes given (timeouts among them).
    pub strikes: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Matches the bot forfeited.
    pub forfeits: u64,
}
