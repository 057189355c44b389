//! The table at every step of a match, as the web viewer draws it: each seat's dice (face up
//! as thrown, set aside, turned, under the cup, or not thrown yet), throws used, tokens or
//! chips, status and hand, the middle or pot, and the seat the step is about.
//!
//! The table is folded from the public events alone ([`TableState::apply`]); what a view
//! may add to them is added from where it may come from, never filtered out of the truth:
//! the full view ([`Sight::Full`], only for a match whose full log is public) takes the
//! hidden dice from the log's throws; a seat's view ([`Sight::Seat`]) takes that seat's own
//! dice under the cup from what the engine built for it ([`knobel_engine::Match::observe`],
//! the observation the wire carries), replaying the log's decisions.

use knobel_engine::{
    Action, DieMask, Event, Hand, LogEntry, MAX_SEATS, Match, Observation, PenaltyError, Seat,
};

/// Which view of the match a table shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sight {
    /// What everybody saw: the public events.
    Public,
    /// Everything, hidden dice included (a match whose full log is public).
    Full,
    /// What this seat saw: the public events and its own observation.
    Seat(Seat),
}

/// Where a die lies at a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lie {
    /// Not thrown yet in this round.
    Empty,
    /// Face up, thrown in the seat's last throw.
    Rolled,
    /// Face up, set aside from an earlier throw (held).
    Held,
    /// A six turned into a one (held for the rest of the turn).
    Turned,
    /// Under the cup (or blind): hidden from the table until the reveal.
    Cup,
}

impl Lie {
    /// The lie's name in the pages (`data-lie`).
    pub fn name(self) -> &'static str {
        match self {
            Lie::Empty => "empty",
            Lie::Rolled => "rolled",
            Lie::Held => "held",
            Lie::Turned => "turned",
            Lie::Cup => "cup",
        }
    }
}

/// One die as a view shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DieView {
    /// Its face, when the view may see it.
    pub face: Option<u8>,
    /// Where it lies.
    pub lie: Lie,
}

/// Whether a seat takes part in the round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeatStatus {
    /// In the round, its turn (Schocken, Sjokken) not over.
    Playing,
    /// In the round, its turn over.
    Stopped,
    /// Out (free) for the rest of the half or game.
    Out,
    /// Zokken: folded in this round.
    Folded,
    /// Zokken: not in this tie replay.
    SittingOut,
}

impl SeatStatus {
    /// The status in words.
    pub fn name(self) -> &'static str {
        match self {
            SeatStatus::Playing => "playing",
            SeatStatus::Stopped => "stopped",
            SeatStatus::Out => "out",
            SeatStatus::Folded => "folded",
            SeatStatus::SittingOut => "sitting out",
        }
    }
}

/// One seat at a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatView {
    /// Its three dice.
    pub dice: [DieView; 3],
    /// Throws used in its turn (Zokken: in the round).
    pub throws: u8,
    /// Tokens it holds (Schocken, Sjokken) or its net chips so far (Zokken).
    pub score: i64,
    /// Whether it takes part.
    pub status: SeatStatus,
    /// Its hand, once revealed.
    pub hand: Option<Hand>,
}

/// The table at one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableView {
    /// Every seat, in seat order.
    pub seats: Vec<SeatView>,
    /// Tokens in the middle (Schocken, Sjokken) or chips in the pot (Zokken).
    pub pot: i64,
    /// The round (0 before the first).
    pub round: u32,
    /// Schocken: the half (3: the final); 0 elsewhere.
    pub half: u8,
    /// The round's throw limit, once set.
    pub throw_limit: Option<u8>,
    /// The seat the step is about (who threw, stopped, bet, ...), if any.
    pub actor: Option<Seat>,
    /// How many public events the table has taken in (this step's included).
    pub events: usize,
}

/// What the public events say of one seat, and the truth where the view has it.
#[derive(Clone, Copy, Debug, Default)]
struct SeatState {
    /// The dice as everybody sees them (`None`: not thrown, or under the cup).
    public: [Option<u8>; 3],
    /// The dice as they lie (full view only: from the log's throws).
    truth: [Option<u8>; 3],
    /// Dice thrown in this round.
    thrown: DieMask,
    /// Dice rolled in the last throw.
    rolled: DieMask,
    /// Dice turned from six to one in this turn.
    turned: DieMask,
    throws: u8,
    hand: Option<Hand>,
    stopped: bool,
    out: bool,
    folded: bool,
    sitting_out: bool,
}

/// The table as the public events leave it.
#[derive(Clone, Debug, Default)]
pub(super) struct TableState {
    seats: [SeatState; MAX_SEATS],
    round: u32,
    throw_limit: Option<u8>,
    actor: Option<Seat>,
    events: usize,
}

/// The seat an event is about.
fn actor(event: &Event) -> Option<Seat> {
    match *event {
        Event::OpeningThrow { seat, .. }
        | Event::StarterChosen { seat }
        | Event::Thrown { seat, .. }
        | Event::Turned { seat, .. }
        | Event::Rerolled { seat, .. }
        | Event::Stopped { seat, .. }
        | Event::Revealed { seat, .. }
        | Event::SeatOut { seat }
        | Event::Sjok1 { seat, .. }
        | Event::HalfLost { seat, .. }
        | Event::Ante { seat, .. }
        | Event::RerollChosen { seat, .. }
        | Event::Betting { seat, .. }
        | Event::PotWon { seat, .. }
        | Event::Forfeited { seat, .. } => Some(seat),
        Event::HalfStarted { starter, .. } => Some(starter),
        Event::RoundStarted { starter, .. } => starter,
        Event::TokensMoved { to, .. } => Some(to),
        Event::RoundDecided { loser, .. } => Some(loser),
        Event::ThrowLimitSet { .. } | Event::TieReplay { .. } | Event::MatchOver { .. } => None,
    }
}

/// Every seat an event names, to check them against the table before indexing by them.
pub(super) fn seats_named(event: &Event) -> Vec<Seat> {
    let mut seats: Vec<Seat> = actor(event).into_iter().collect();
    match *event {
        Event::HalfStarted { seats: s, .. } | Event::TieReplay { seats: s, .. } => {
            seats.extend(s.iter());
        }
        Event::RoundStarted { seats: s, .. } => seats.extend(s.iter()),
        Event::TokensMoved {
            from: Some(from), ..
        } => seats.push(from),
        Event::RoundDecided { winner, .. } => seats.push(winner),
        _ => {}
    }
    seats
}

impl TableState {
    /// Takes in `event`; `truth`: the dice of a throw as they landed (full view only).
    pub(super) fn apply(&mut self, event: &Event, truth: Option<[u8; 3]>) {
        self.events += 1;
        self.actor = actor(event);
        match *event {
            Event::OpeningThrow { seat, dice, .. } => {
                let s = &mut self.seats[seat.index()];
                *s = SeatState {
                    public: dice.map(Some),
                    truth: dice.map(Some),
                    thrown: DieMask::ALL,
                    rolled: DieMask::ALL,
                    ..SeatState::default()
                };
            }
            Event::HalfStarted { seats, .. } => {
                for (i, s) in self.seats.iter_mut().enumerate() {
                    *s = SeatState {
                        out: !seats.contains(Seat(i as u8)),
                        ..SeatState::default()
                    };
                }
            }
            Event::RoundStarted {
                round,
                replay,
                seats,
                starter,
            } => self.round_started(round, replay, seats, starter.is_some()),
            Event::Thrown {
                seat,
                throw,
                rolled,
                dice,
            } => {
                let s = &mut self.seats[seat.index()];
                s.public = dice;
                s.truth = truth.map_or(dice, |t| t.map(Some));
                s.thrown = DieMask::ALL;
                s.rolled = rolled;
                s.throws = throw;
            }
            Event::Turned { seat, dice } => {
                let s = &mut self.seats[seat.index()];
                for slot in dice.slots() {
                    s.public[slot] = Some(1);
                    s.truth[slot] = Some(1);
                }
                s.turned = s.turned.union(dice);
            }
            Event::Stopped { seat, .. } => self.seats[seat.index()].stopped = true,
            Event::ThrowLimitSet { throws } => self.throw_limit = Some(throws),
            Event::Revealed { seat, dice, hand } => {
                let s = &mut self.seats[seat.index()];
                s.public = dice.map(Some);
                s.truth = dice.map(Some);
                s.thrown = DieMask::ALL;
                s.hand = Some(hand);
            }
            Event::SeatOut { seat } | Event::Sjok1 { seat, .. } => {
                self.seats[seat.index()].out = true;
            }
            Event::Betting {
                seat,
                action: Action::Fold,
                ..
            } => self.seats[seat.index()].folded = true,
            _ => {}
        }
    }

    fn round_started(&mut self, round: u32, replay: u8, seats: knobel_engine::Seats, shake: bool) {
        self.round = round;
        self.throw_limit = None;
        for (i, s) in self.seats.iter_mut().enumerate() {
            let playing = seats.contains(Seat(i as u8));
            if shake {
                *s = SeatState {
                    out: !playing,
                    ..SeatState::default()
                };
            } else if playing || replay == 0 {
                *s = SeatState::default();
            } else {
                // A seat sitting out a tie replay keeps the dice of its last throw.
                s.sitting_out = true;
            }
        }
    }

    /// The table as `sight` shows it, `seats` seats, `score` and `pot` as the account keeps
    /// them; `own` gives the viewing seat's own dice under the cup (a seat's view).
    pub(super) fn view(
        &self,
        sight: Sight,
        seats: usize,
        (pot, half, score): (i64, u8, &dyn Fn(usize) -> i64),
        own: Option<[Option<u8>; 3]>,
    ) -> TableView {
        let seat_views = self.seats[..seats]
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let dice = std::array::from_fn(|slot| {
                    let lie = if !s.thrown.contains(slot) {
                        Lie::Empty
                    } else if s.turned.contains(slot) {
                        Lie::Turned
                    } else if s.public[slot].is_none() {
                        Lie::Cup
                    } else if s.rolled.contains(slot) {
                        Lie::Rolled
                    } else {
                        Lie::Held
                    };
                    let face = match sight {
                        Sight::Full => s.truth[slot],
                        Sight::Seat(me) if me.index() == i && lie == Lie::Cup => {
                            own.and_then(|own| own[slot])
                        }
                        Sight::Seat(_) | Sight::Public => s.public[slot],
                    };
                    let face = if lie == Lie::Empty { None } else { face };
                    DieView { face, lie }
                });
                SeatView {
                    dice,
                    throws: s.throws,
                    score: score(i),
                    status: if s.out {
                        SeatStatus::Out
                    } else if s.sitting_out {
                        SeatStatus::SittingOut
                    } else if s.folded {
                        SeatStatus::Folded
                    } else if s.stopped {
                        SeatStatus::Stopped
                    } else {
                        SeatStatus::Playing
                    },
                    hand: s.hand,
                }
            })
            .collect();
        TableView {
            seats: seat_views,
            pot,
            round: self.round,
            half,
            throw_limit: self.throw_limit,
            actor: self.actor,
            events: self.events,
        }
    }

    /// The round the table is in.
    pub(super) fn round(&self) -> u32 {
        self.round
    }
}

/// A seat's view: the match replayed decision by decision, observed for that seat after
/// each, as the referee observes it for the wire.
pub(super) struct Viewer {
    seat: Seat,
    game: Match,
    /// The observation after the last decision, and the one before it.
    current: Observation,
    previous: Option<Observation>,
    /// Decisions (and penalties) replayed so far.
    batch: usize,
    /// The batch in which the viewing seat last threw.
    thrown_in: usize,
}

impl Viewer {
    /// The view of `seat` of a match replayed from `game`, a new match of the log's rules,
    /// seed and seats (or a scripted one).
    pub(super) fn new(seat: Seat, game: Match) -> Viewer {
        Viewer {
            current: game.observe(seat),
            seat,
            game,
            previous: None,
            batch: 0,
            thrown_in: 0,
        }
    }

    /// Replays a decision or penalty of the log.
    pub(super) fn replay(&mut self, entry: &LogEntry) -> Result<(), ViewError> {
        match *entry {
            LogEntry::Decision { seat, action } => {
                self.game
                    .apply(seat, action)
                    .map_err(|e| ViewError(e.to_string()))?;
            }
            LogEntry::Strike { seat, reason } => self.game.strike(seat, reason).map_err(penalty)?,
            LogEntry::Forfeit { seat, reason } => {
                self.game.forfeit(seat, reason).map_err(penalty)?;
            }
            LogEntry::Throw { .. } | LogEntry::Event { .. } => return Ok(()),
        }
        let next = self.game.observe(self.seat);
        self.previous = Some(std::mem::replace(&mut self.current, next));
        self.batch += 1;
        Ok(())
    }

    /// Notes a public event (the viewing seat's throws).
    pub(super) fn saw(&mut self, event: &Event) {
        if let Event::Thrown { seat, .. } = *event
            && seat == self.seat
        {
            self.thrown_in = self.batch;
        }
    }

    /// The viewing seat's own dice as its observation shows them in `round`: from the
    /// observation after the current decision if it is of that round, else from the one
    /// before if the seat has not thrown since.
    pub(super) fn own_dice(&self, round: u32) -> Option<[Option<u8>; 3]> {
        let of = |o: &Observation| match o {
            Observation::Shake(o) if o.round == round => {
                o.turns.get(self.seat.index()).map(|t| t.dice)
            }
            _ => None,
        };
        of(&self.current).or_else(|| {
            self.previous
                .as_ref()
                .filter(|_| self.thrown_in < self.batch)
                .and_then(of)
        })
    }
}

fn penalty(e: PenaltyError) -> ViewError {
    ViewError(e.to_string())
}

/// A seat's view could not be replayed.
#[derive(Debug, thiserror::Error)]
#[error("replaying the seat's view: {0}")]
pub struct ViewError(String);
