//! [`Match`]: the referee's handle on one match of any of the three games.

use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::dice::{DiceScript, DiceSource};
use crate::error::{ActionError, PenaltyError, SetupError};
use crate::event::Event;
use crate::log::{LOG_FORMAT_VERSION, LogEntry, MatchLog, Sink};
use crate::penalty::{ForfeitReason, Penalties, StrikeReason};
use crate::rules::{Game, Rules};
use crate::shake::{ShakeObservation, ShakeState};
use crate::types::{MAX_SEATS, MIN_SEATS, Placings, Seat, Seats};
use crate::zokken::{ZokkenObservation, ZokkenState};

/// What one player may see: built for that player from the full state, holding exactly what
/// RULES.md §5 lets them see. It is the only view of a match that may go to a player.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Observation {
    /// Schocken or Sjokken (see [`ShakeObservation::game`]).
    Shake(ShakeObservation),
    /// Zokken.
    Zokken(ZokkenObservation),
}

/// How a finished match ended (RULES.md §2.7, §3.5, §4.5, and the arena's fair-play rules).
///
/// Every per-seat list has one entry per seat. Tokens, halves lost and chips are 0 for every
/// seat where the game does not have them; the wire and the stored form
/// ([`Outcome::to_json`]) leave such lists out (RULES.md A.7). With a forfeit,
/// the placings are the final ones (forfeited seats after all others), while the loser,
/// tokens, halves and chips report the play as it went, the forfeited seat having been
/// played by default actions from its forfeit on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StoredOutcome")]
pub struct Outcome {
    /// Every seat's final place: 1 is best; equal places are shared; forfeited seats are
    /// placed after all others (see [`Match::forfeit`]).
    pub placings: Vec<u8>,
    /// Schocken and Sjokken: the game's loser (as played).
    pub loser: Option<Seat>,
    /// Schocken and Sjokken: tokens each seat holds at the end.
    pub tokens: Vec<i64>,
    /// Schocken: halves each seat lost (the final counts as a half).
    pub halves_lost: Vec<u8>,
    /// Zokken: each seat's net chips over the match (they sum to zero).
    pub chips: Vec<i64>,
    /// Strikes each seat was given (see [`Match::strike`]). Left out of the JSON form when
    /// nobody was struck.
    #[serde(skip_serializing_if = "all_zero")]
    pub strikes: Vec<u32>,
    /// Of those, the timeouts.
    #[serde(skip_serializing_if = "all_zero")]
    pub timeouts: Vec<u32>,
    /// Why each seat forfeited; `None` for a seat that did not. Left out of the JSON form
    /// when nobody forfeited.
    #[serde(skip_serializing_if = "all_none")]
    pub forfeits: Vec<Option<ForfeitReason>>,
}

fn all_zero(counts: &[u32]) -> bool {
    counts.iter().all(|&c| c == 0)
}

fn all_none(forfeits: &[Option<ForfeitReason>]) -> bool {
    forfeits.iter().all(Option::is_none)
}

/// The JSON form of an [`Outcome`]: the penalty lists may be left out (all 0 / none), and
/// so may the lists a game does not have ([`Outcome::to_json`]; older stored outcomes have
/// them zero-filled).
#[derive(Deserialize)]
struct StoredOutcome {
    placings: Vec<u8>,
    #[serde(default)]
    loser: Option<Seat>,
    #[serde(default)]
    tokens: Vec<i64>,
    #[serde(default)]
    halves_lost: Vec<u8>,
    #[serde(default)]
    chips: Vec<i64>,
    #[serde(default)]
    strikes: Vec<u32>,
    #[serde(default)]
    timeouts: Vec<u32>,
    #[serde(default)]
    forfeits: Vec<Option<ForfeitReason>>,
}

impl From<StoredOutcome> for Outcome {
    fn from(o: StoredOutcome) -> Outcome {
        let n = o.placings.len();
        Outcome {
            loser: o.loser,
            tokens: padded(o.tokens, n),
            halves_lost: padded(o.halves_lost, n),
            chips: padded(o.chips, n),
            strikes: padded(o.strikes, n),
            timeouts: padded(o.timeouts, n),
            forfeits: padded(o.forfeits, n),
            placings: o.placings,
        }
    }
}

/// `list`, or `n` default values if it was left out (empty).
fn padded<T: Clone + Default>(mut list: Vec<T>, n: usize) -> Vec<T> {
    if list.is_empty() {
        list.resize(n, T::default());
    }
    list
}

impl Outcome {
    /// The outcome's stored JSON form for a match of `game` (RULES.md A.7): the values
    /// `game` does not have are left out, never zero-filled (Schocken: no chips; Sjokken: no
    /// halves lost or chips; Zokken: no loser, tokens or halves lost), and so are the
    /// strikes, timeouts and forfeits when nobody has one. `Deserialize` reads it back.
    pub fn to_json(&self, game: Game) -> String {
        let mut value = serde_json::to_value(self).expect("an outcome serializes");
        let object = value.as_object_mut().expect("an outcome is a JSON object");
        let lacking: &[&str] = match game {
            Game::Schocken => &["chips"],
            Game::Sjokken => &["halves_lost", "chips"],
            Game::Zokken => &["loser", "tokens", "halves_lost"],
        };
        for field in lacking {
            object.remove(*field);
        }
        value.to_string()
    }

    /// Whether `seat` forfeited.
    pub fn forfeited(&self, seat: Seat) -> bool {
        self.forfeits.get(seat.index()).is_some_and(Option::is_some)
    }
}

/// The events buffers' starting capacity: more than a step of a four-player match causes.
const EVENTS_CAPACITY: usize = 64;

#[derive(Clone, Debug)]
enum State {
    Shake(ShakeState),
    Zokken(ZokkenState),
}

/// One match: rules, dice and state, driven by [`Match::apply`].
///
/// ```
/// use knobel_engine::{Match, Rules};
/// let mut m = Match::new(Rules::preset("schocken").unwrap(), 7, 3).unwrap();
/// while !m.is_over() {
///     let seat = m.to_act().iter().next().unwrap();
///     let action = m.default_action(seat).unwrap();
///     m.apply(seat, action).unwrap();
/// }
/// assert_eq!(m.outcome().unwrap().placings.iter().filter(|&&p| p == 3).count(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct Match {
    rules: Rules,
    seats: u8,
    state: State,
    events: Vec<Event>,
    /// The previous step's events, kept so a refused action leaves `last_events` as it was.
    spare: Vec<Event>,
    log: Option<MatchLog>,
    /// Strikes, timeouts and forfeits the referee gave.
    penalties: Penalties,
}

impl Match {
    /// A match of `rules` for `seats` players, its dice drawn from `seed`. The events of its
    /// start (the opening throw-off, the first throw) are in [`Match::last_events`].
    /// Refuses a number of seats outside [`MIN_SEATS`]..=[`MAX_SEATS`] and rules whose
    /// numeric settings are out of the bounds of [`Rules::set_number`] ([`Rules::validate`]).
    pub fn new(rules: Rules, seed: u64, seats: usize) -> Result<Match, SetupError> {
        Match::create(rules, DiceSource::new(seed), seats, false)
    }

    /// Whether [`Match::new`] would accept `rules` for `seats` players: what a stored match
    /// is checked with before it is played.
    pub fn check_setup(rules: &Rules, seats: usize) -> Result<(), SetupError> {
        if !(MIN_SEATS..=MAX_SEATS).contains(&seats) {
            return Err(SetupError::Seats {
                seats,
                min: MIN_SEATS,
                max: MAX_SEATS,
            });
        }
        rules.validate()?;
        Ok(())
    }

    /// Like [`Match::new`], recording a [`MatchLog`].
    pub fn new_with_log(rules: Rules, seed: u64, seats: usize) -> Result<Match, SetupError> {
        Match::create(rules, DiceSource::new(seed), seats, true)
    }

    /// A match whose dice come from `script` where it names them (scenario tests, puzzles),
    /// else from `seed`. Its log records the seed only, so it replays only if the script
    /// agrees with the seed.
    pub fn scripted(
        rules: Rules,
        seed: u64,
        seats: usize,
        script: DiceScript,
    ) -> Result<Match, SetupError> {
        Match::create(rules, DiceSource::scripted(seed, script), seats, true)
    }

    fn create(
        rules: Rules,
        dice: DiceSource,
        seats: usize,
        record: bool,
    ) -> Result<Match, SetupError> {
        Match::check_setup(&rules, seats)?;
        let mut log = record.then(|| MatchLog {
            format_version: LOG_FORMAT_VERSION,
            rules: rules.clone(),
            seed: dice.seed(),
            seats: seats as u8,
            entries: Vec::new(),
        });
        // Room for the events of any step, so that a match does not grow its buffers.
        let mut events = Vec::with_capacity(EVENTS_CAPACITY);
        let mut sink = Sink {
            events: &mut events,
            log: log.as_mut().map(|l| &mut l.entries),
        };
        let state = match &rules {
            Rules::Schocken(r) => State::Shake(ShakeState::schocken(r, dice, seats, &mut sink)),
            Rules::Sjokken(r) => State::Shake(ShakeState::sjokken(r, dice, seats, &mut sink)),
            Rules::Zokken(r) => State::Zokken(ZokkenState::new(r, dice, seats, &mut sink)),
        };
        Ok(Match {
            rules,
            seats: seats as u8,
            state,
            events,
            spare: Vec::with_capacity(EVENTS_CAPACITY),
            log,
            penalties: Penalties::default(),
        })
    }

    /// The rules played.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The game played.
    pub fn game(&self) -> Game {
        self.rules.game()
    }

    /// Number of seats.
    pub fn seats(&self) -> usize {
        self.seats as usize
    }

    /// The seats that must act now: one, or several at once for Zokken's simultaneous
    /// reroll choices; empty when the match is over.
    pub fn to_act(&self) -> Seats {
        match &self.state {
            State::Shake(s) => s.to_act(),
            State::Zokken(z) => z.to_act(),
        }
    }

    /// Whether the match has ended.
    pub fn is_over(&self) -> bool {
        self.to_act().is_empty()
    }

    /// Every action `seat` may take now (empty if it need not act).
    pub fn legal_actions(&self, seat: Seat) -> Vec<Action> {
        let mut out = Vec::new();
        match &self.state {
            State::Shake(s) => s.legal_actions(seat, &mut out),
            State::Zokken(z) => z.legal_actions(seat, &mut out),
        }
        out
    }

    /// What the referee does for `seat` when it times out or is forfeited: stop (Schocken,
    /// Sjokken), keep all dice (Zokken reroll), check if allowed, else fold (Zokken betting).
    /// `None` if `seat` need not act.
    pub fn default_action(&self, seat: Seat) -> Option<Action> {
        match &self.state {
            State::Shake(s) => s.default_action(seat),
            State::Zokken(z) => z.default_action(seat),
        }
    }

    /// Applies `seat`'s action. On success returns the public events it caused (also in
    /// [`Match::last_events`]); on error nothing has changed.
    pub fn apply(&mut self, seat: Seat, action: Action) -> Result<&[Event], ActionError> {
        // Each game validates the whole action before changing anything, first whether the
        // match is over, then the seat.
        std::mem::swap(&mut self.events, &mut self.spare);
        self.events.clear();
        let log_len = self.log.as_ref().map(|l| l.entries.len());
        let mut sink = Sink {
            events: &mut self.events,
            log: self.log.as_mut().map(|l| &mut l.entries),
        };
        if let Some(log) = sink.log.as_deref_mut() {
            log.push(LogEntry::Decision { seat, action });
        }
        let result = match &mut self.state {
            State::Shake(s) => s.apply(seat, action, &mut sink),
            State::Zokken(z) => z.apply(seat, action, &mut sink),
        };
        if let Err(error) = result {
            // Validation happens before any change; only the decision entry is undone.
            if let (Some(log), Some(len)) = (self.log.as_mut(), log_len) {
                log.entries.truncate(len);
            }
            std::mem::swap(&mut self.events, &mut self.spare);
            return Err(error);
        }
        if self.penalties.any_forfeit {
            self.final_match_over();
        }
        Ok(&self.events)
    }

    /// With a forfeit, the game's `MatchOver` event (if this step ended the match) gets the
    /// final placings, in the step's events and in the log.
    #[cold]
    fn final_match_over(&mut self) {
        let penalties = self.penalties;
        let adjust = |placings: &mut Placings| {
            let mut out = [0u8; MAX_SEATS];
            let n = placings.len();
            penalties.final_placings(placings, &mut out[..n]);
            *placings = Placings::from_slice(&out[..n]);
        };
        for event in self.events.iter_mut().rev() {
            if let Event::MatchOver { placings } = event {
                adjust(placings);
                break;
            }
        }
        if let Some(log) = self.log.as_mut() {
            for entry in log.entries.iter_mut().rev() {
                match entry {
                    LogEntry::Event {
                        event: Event::MatchOver { placings },
                    } => {
                        adjust(placings);
                        break;
                    }
                    LogEntry::Decision { .. } => break,
                    _ => {}
                }
            }
        }
    }

    /// The referee strikes `seat` for `reason` (an answer late, illegal or unreadable). The
    /// strike is logged (it is not public: no event) and counted in the [`Outcome`]; the
    /// engine does not act on it: the arena forfeits a seat at its strike limit with
    /// [`Match::forfeit`]. [`Match::last_events`] is unchanged.
    ///
    /// Refused once the match is over, for a seat not at the table, and for a seat that has
    /// forfeited (it is played by default actions and can no longer be struck).
    pub fn strike(&mut self, seat: Seat, reason: StrikeReason) -> Result<(), PenaltyError> {
        self.check_penalty(seat)?;
        self.penalties.strike(seat, reason);
        if let Some(log) = self.log.as_mut() {
            log.entries.push(LogEntry::Strike { seat, reason });
        }
        Ok(())
    }

    /// The referee forfeits `seat` for `reason`. From now on the referee plays it by its
    /// default actions (the engine does not play for it); at the end it is placed after
    /// every seat that did not forfeit (forfeited seats are ordered among themselves by
    /// their game places; equal places are shared). Logged, and made public: returns the
    /// [`Event::Forfeited`] event (also in [`Match::last_events`]).
    ///
    /// Refused once the match is over, for a seat not at the table, and for a seat that has
    /// already forfeited: the first forfeit stands.
    pub fn forfeit(&mut self, seat: Seat, reason: ForfeitReason) -> Result<&[Event], PenaltyError> {
        self.check_penalty(seat)?;
        self.penalties.forfeit(seat, reason);
        std::mem::swap(&mut self.events, &mut self.spare);
        self.events.clear();
        let event = Event::Forfeited { seat, reason };
        if let Some(log) = self.log.as_mut() {
            log.entries.push(LogEntry::Forfeit { seat, reason });
            log.entries.push(LogEntry::Event { event });
        }
        self.events.push(event);
        Ok(&self.events)
    }

    fn check_penalty(&self, seat: Seat) -> Result<(), PenaltyError> {
        if self.is_over() {
            return Err(PenaltyError::MatchOver);
        }
        if seat.index() >= self.seats() {
            return Err(PenaltyError::NoSuchSeat {
                seat,
                last: self.seats - 1,
            });
        }
        if let Some(reason) = self.penalties.forfeits[seat.index()] {
            return Err(PenaltyError::Forfeited { seat, reason });
        }
        Ok(())
    }

    /// Whether `seat` has forfeited, and why.
    pub fn forfeit_of(&self, seat: Seat) -> Option<ForfeitReason> {
        self.penalties.forfeits.get(seat.index()).copied().flatten()
    }

    /// Strikes `seat` has been given so far.
    pub fn strikes_of(&self, seat: Seat) -> u32 {
        self.penalties
            .strikes
            .get(seat.index())
            .copied()
            .unwrap_or(0)
    }

    /// Of those, the timeouts.
    pub fn timeouts_of(&self, seat: Seat) -> u32 {
        self.penalties
            .timeouts
            .get(seat.index())
            .copied()
            .unwrap_or(0)
    }

    /// The public events of the last successful step (or of the start).
    pub fn last_events(&self) -> &[Event] {
        &self.events
    }

    /// What `seat` may see now.
    pub fn observe(&self, seat: Seat) -> Observation {
        match &self.state {
            State::Shake(s) => Observation::Shake(s.observe(seat)),
            State::Zokken(z) => Observation::Zokken(z.observe(seat)),
        }
    }

    /// Like [`Match::observe`], reusing the allocations of `out`.
    pub fn observe_into(&self, seat: Seat, out: &mut Observation) {
        match (&self.state, out) {
            (State::Shake(s), Observation::Shake(o)) => s.observe_into(seat, o),
            (State::Zokken(z), Observation::Zokken(o)) => z.observe_into(seat, o),
            (_, out) => *out = self.observe(seat),
        }
    }

    /// The outcome, once the match is over: the game's result with the referee's penalties,
    /// forfeited seats placed last (see [`Match::forfeit`]).
    pub fn outcome(&self) -> Option<Outcome> {
        let mut outcome = match &self.state {
            State::Shake(s) => s.outcome(),
            State::Zokken(z) => z.outcome(),
        }?;
        let n = self.seats();
        let p = &self.penalties;
        if p.any_forfeit {
            let mut out = [0u8; MAX_SEATS];
            p.final_placings(&outcome.placings, &mut out[..n]);
            outcome.placings = out[..n].to_vec();
        }
        outcome.strikes = p.strikes[..n].to_vec();
        outcome.timeouts = p.timeouts[..n].to_vec();
        outcome.forfeits = p.forfeits[..n].to_vec();
        Some(outcome)
    }

    /// The match log, if this match records one.
    pub fn log(&self) -> Option<&MatchLog> {
        self.log.as_ref()
    }

    /// Referee only, never for a player: the true dice of `seat` in the current round, as
    /// the full state holds them (hidden dice included), and its throws used.
    pub fn true_dice(&self, seat: Seat) -> ([u8; 3], u8) {
        match &self.state {
            State::Shake(s) => s.true_dice(seat),
            State::Zokken(z) => z.true_dice(seat),
        }
    }

    /// Schocken and Sjokken: tokens in play (pot, seats, and those SJOK1s removed), which the
    /// rules keep equal to the game's token count. Zokken: the net chip total, always 0.
    pub fn conserved_total(&self) -> i64 {
        match &self.state {
            State::Shake(s) => s.tokens_in_game() as i64,
            State::Zokken(z) => z.net_chips_total(),
        }
    }
}
