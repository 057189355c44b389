//! Zokken (RULES.md §4): Miwin's dice thrown openly, reroll choices made simultaneously, and
//! fixed-limit betting for a pot, over a match of N rounds.
//!
//! A round (or a tie replay of it) goes: antes (not in a replay), throw 1 of all dice,
//! betting round 1, the reroll choice for throw 2, throw 2, betting round 2, the choice for
//! throw 3, throw 3, betting round 3 under `bet_after_last_throw`, showdown. Everything is
//! public (§5) except the reroll choices of one throw, which stay secret until every seat
//! has chosen. Then `Event::RerollChosen` is sent for every choosing seat and
//! `Event::Thrown` for every seat still in the round, also for one that keeps all its dice
//! (`rolled` empty), so that every throw shows every hand in the round. Throw numbers go on
//! through tie replays (replay k throws 3k+1..=3k+3), as the dice keys do.
//!
//! The state is made of fixed-size arrays of [`MAX_SEATS`] so that a step allocates nothing
//! (events go into the caller's reused buffer).

use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::dice::DiceSource;
use crate::error::{ActionError, seats_text};
use crate::event::Event;
use crate::hand::{Hand, MIWIN_FACES};
use crate::log::Sink;
use crate::play::Outcome;
use crate::rules::ZokkenRules;
use crate::types::{DICE, DieMask, MAX_SEATS, Placings, Seat, Seats};

/// The most dice a Zokken reroll may name: at least one die stays (RULES.md §4.2).
const MAX_REROLL: usize = 2;

/// Throws in a round or in one tie replay.
const THROWS: u8 = 3;

/// The legal kinds of action during a reroll choice.
const CHOOSING_LEGAL: &str = "reroll of 0 to 2 dice";

/// Where a Zokken round (or tie replay) stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZokkenPhase {
    /// Betting round `n` (1..=3), which follows throw `n` of the round or replay. Round 3
    /// exists only under `bet_after_last_throw`.
    Betting(u8),
    /// Every seat still in the round chooses, at the same time, the dice to reroll at
    /// throw `n` (2..=3) of the round or replay.
    Choosing(u8),
    /// The match is over.
    Over,
}

/// Whether a seat takes part in the current round or tie replay.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZokkenSeatStatus {
    /// In the round: it throws, bets and can win the pot.
    InRound,
    /// It folded in this round (or replay) and waits for the next one.
    Folded,
    /// It does not take part in this tie replay (it was not among the tied seats).
    SittingOut,
}

/// What everybody sees of one seat in Zokken (everything is public).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZokkenSeatView {
    /// The face values of the seat's dice III, IV and V (slots 0, 1, 2), as last thrown in
    /// this round. A seat sitting out a tie replay keeps the dice of its last throw.
    pub dice: [u8; 3],
    /// The figure of `dice` ([`Hand::zokken`]), without the Schlumpf's table rule.
    pub figure: Hand,
    /// Whether the seat is in the current round or replay, folded, or sitting it out.
    pub status: ZokkenSeatStatus,
    /// Chips the seat has put into the pot this round (ante and bets, replays included).
    pub put_in: u32,
    /// Chips the seat has put into the pot in the current betting round (0 outside
    /// betting).
    pub staked: u32,
    /// The seat's net chips over the match so far: chips won minus chips put in. Chips in
    /// the current pot count as put in.
    pub net: i64,
}

/// Everything one player of a Zokken match may see (RULES.md §5: all of it is public, except
/// the other seats' reroll choices before every seat has chosen).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZokkenObservation {
    /// The observing seat.
    pub seat: Seat,
    /// The current round, 1..=`rounds` (a tie replay keeps its round's number).
    pub round: u32,
    /// Rounds in the match (tie replays not counted).
    pub rounds: u32,
    /// 0 for the round itself, 1.. for its tie replays.
    pub replay: u8,
    /// Where the round or replay stands.
    pub phase: ZokkenPhase,
    /// Every seat, indexed by seat number.
    pub seats: Vec<ZokkenSeatView>,
    /// Chips in the pot.
    pub pot: u32,
    /// Betting: the most chips any seat has put in during this betting round (0 outside
    /// betting).
    pub current_bet: u32,
    /// Betting: the chips the observer would put in to call (0 when nothing to call, when
    /// not in the round, or outside betting).
    pub to_call: u32,
    /// Betting: the bets made in this betting round (a bet and its raises). The seat to act
    /// faces a bet exactly when this is above 0: then it may call, raise or fold, else check
    /// or bet.
    pub bets: u8,
    /// The most bets a betting round allows (a bet and `max_bets - 1` raises).
    pub max_bets: u8,
    /// The size of a bet or raise in the current betting round (during a reroll choice:
    /// in the betting round that follows it).
    pub bet_size: u32,
    /// Who the referee is waiting for: the one seat to act while betting; while choosing
    /// rerolls, every seat choosing for this throw, whether or not it has chosen yet (which
    /// of the others have chosen is not revealed); empty when the match is over.
    pub to_act: Seats,
    /// During a reroll choice: whether the observer has already sent its choice.
    pub chosen: bool,
}

impl ZokkenObservation {
    fn empty() -> ZokkenObservation {
        ZokkenObservation {
            seat: Seat(0),
            round: 0,
            rounds: 0,
            replay: 0,
            phase: ZokkenPhase::Over,
            seats: Vec::new(),
            pot: 0,
            current_bet: 0,
            to_call: 0,
            bets: 0,
            max_bets: 0,
            bet_size: 0,
            to_act: Seats::EMPTY,
            chosen: false,
        }
    }
}

/// The settings of [`ZokkenRules`], copied.
#[derive(Copy, Clone, Debug)]
struct Settings {
    ante: u32,
    small_bet: u32,
    big_bet: u32,
    max_bets: u8,
    rounds: u32,
    bet_after_last_throw: bool,
    max_replays: u8,
}

/// The state of a Zokken match.
#[derive(Clone, Debug)]
pub(crate) struct ZokkenState {
    settings: Settings,
    dice: DiceSource,
    seats: u8,
    round: u32,
    replay: u8,
    phase: ZokkenPhase,
    /// Throws made in the current round or replay (1..=3).
    throws: u8,
    /// Seats taking part in the current round or replay.
    playing: Seats,
    /// Of those, the seats that have not folded.
    in_round: Seats,
    hands: [[u8; 3]; MAX_SEATS],
    figures: [Hand; MAX_SEATS],
    /// Each seat's last throw number in the round (replays continue the numbering).
    last_throw: [u8; MAX_SEATS],
    put_in: [u32; MAX_SEATS],
    net: [i64; MAX_SEATS],
    pot: u32,
    /// Betting: the size of a bet or raise in this betting round.
    bet_size: u32,
    /// Betting: bets (a bet and its raises) made in this betting round.
    bets: u8,
    /// Betting: the most any seat has put in during this betting round.
    current_bet: u32,
    /// Betting: chips each seat has put in during this betting round.
    staked: [u32; MAX_SEATS],
    /// Betting: seats still to act before the betting round can end.
    pending: Seats,
    /// Betting: the seat to act.
    actor: Seat,
    /// Choosing: seats whose choice is not in yet.
    choosers: Seats,
    /// Choosing: the choices in so far (secret until all are in).
    choices: [DieMask; MAX_SEATS],
}

impl ZokkenState {
    /// A match for `seats` players; starts round 1 (antes, throw 1) and waits for the first
    /// betting decision.
    pub(crate) fn new(
        rules: &ZokkenRules,
        dice: DiceSource,
        seats: usize,
        sink: &mut Sink,
    ) -> ZokkenState {
        let settings = Settings {
            ante: rules.ante,
            small_bet: rules.small_bet,
            big_bet: rules.big_bet,
            max_bets: rules.max_bets,
            rounds: rules.rounds,
            bet_after_last_throw: rules.bet_after_last_throw,
            max_replays: rules.max_replays,
        };
        let mut state = ZokkenState {
            settings,
            dice,
            seats: seats as u8,
            round: 0,
            replay: 0,
            phase: ZokkenPhase::Over,
            throws: 0,
            playing: Seats::EMPTY,
            in_round: Seats::EMPTY,
            hands: [[0; 3]; MAX_SEATS],
            figures: [Hand::Sonst([0; 3]); MAX_SEATS],
            last_throw: [0; MAX_SEATS],
            put_in: [0; MAX_SEATS],
            net: [0; MAX_SEATS],
            pot: 0,
            bet_size: 0,
            bets: 0,
            current_bet: 0,
            staked: [0; MAX_SEATS],
            pending: Seats::EMPTY,
            actor: Seat(0),
            choosers: Seats::EMPTY,
            choices: [DieMask::EMPTY; MAX_SEATS],
        };
        if state.settings.rounds == 0 {
            state.finish(sink);
        } else {
            state.start_round(sink);
        }
        state
    }

    fn n(&self) -> usize {
        self.seats as usize
    }

    // ---- the course of a round -------------------------------------------------------

    /// A new round: everybody antes, then plays throw 1.
    fn start_round(&mut self, sink: &mut Sink) {
        self.round += 1;
        self.replay = 0;
        self.playing = Seats::first_n(self.n());
        self.in_round = self.playing;
        self.put_in = [0; MAX_SEATS];
        self.last_throw = [0; MAX_SEATS];
        sink.event(Event::RoundStarted {
            round: self.round,
            replay: 0,
            seats: self.playing,
            starter: None,
        });
        let ante = self.settings.ante;
        for seat in self.playing.iter() {
            self.put(seat, ante);
            sink.event(Event::Ante { seat, chips: ante });
        }
        self.begin_play(sink);
    }

    /// A tie replay among `tied`: no ante, the pot carries over.
    fn start_replay(&mut self, tied: Seats, sink: &mut Sink) {
        self.replay += 1;
        self.playing = tied;
        self.in_round = tied;
        sink.event(Event::TieReplay {
            seats: tied,
            replay: self.replay,
        });
        sink.event(Event::RoundStarted {
            round: self.round,
            replay: self.replay,
            seats: tied,
            starter: None,
        });
        self.begin_play(sink);
    }

    /// Throw 1 of the round or replay (all dice of every seat in it), then betting round 1.
    fn begin_play(&mut self, sink: &mut Sink) {
        self.throws = 0;
        self.choices = [DieMask::ALL; MAX_SEATS];
        self.throw_all(sink);
        self.begin_betting(1);
    }

    /// The next throw: every seat still in the round rolls the dice in its choice.
    fn throw_all(&mut self, sink: &mut Sink) {
        self.throws += 1;
        let throw = THROWS * self.replay + self.throws;
        for seat in self.in_round.iter() {
            let i = seat.index();
            let rolled = self.choices[i];
            let mut dice = self.hands[i];
            if !rolled.is_empty() {
                let thrown = self.dice.throw(seat, self.round, throw, &MIWIN_FACES);
                dice = rolled.pick(thrown, dice);
            }
            self.hands[i] = dice;
            self.figures[i] = Hand::zokken(dice);
            self.last_throw[i] = throw;
            sink.throw(seat, self.round, throw, rolled, dice);
            sink.event(Event::Thrown {
                seat,
                throw,
                rolled,
                dice: dice.map(Some),
            });
        }
    }

    fn begin_betting(&mut self, betting_round: u8) {
        self.phase = ZokkenPhase::Betting(betting_round);
        self.bet_size = self.bet_size_of(betting_round);
        self.bets = 0;
        self.current_bet = 0;
        self.staked = [0; MAX_SEATS];
        self.pending = self.in_round;
        self.actor = self.leader();
    }

    fn bet_size_of(&self, betting_round: u8) -> u32 {
        if betting_round == 1 {
            self.settings.small_bet
        } else {
            self.settings.big_bet
        }
    }

    /// The betting round is over: on to the next reroll choice, or to the showdown.
    fn end_betting(&mut self, betting_round: u8, sink: &mut Sink) {
        self.bets = 0;
        self.current_bet = 0;
        self.staked = [0; MAX_SEATS];
        self.pending = Seats::EMPTY;
        if betting_round < THROWS {
            let throw = betting_round + 1;
            self.phase = ZokkenPhase::Choosing(throw);
            self.bet_size = self.bet_size_of(throw);
            self.choosers = self.in_round;
            self.choices = [DieMask::EMPTY; MAX_SEATS];
        } else {
            self.showdown(sink);
        }
    }

    /// Every choice is in: show them all, then throw.
    fn end_choosing(&mut self, throw: u8, sink: &mut Sink) {
        for seat in self.in_round.iter() {
            sink.event(Event::RerollChosen {
                seat,
                dice: self.choices[seat.index()],
            });
        }
        self.throw_all(sink);
        if throw < THROWS || self.settings.bet_after_last_throw {
            self.begin_betting(throw);
        } else {
            self.showdown(sink);
        }
    }

    /// Whether a Kelm is among the hands still in the round (then a Schlumpf beats all).
    fn kelm_on_table(&self) -> bool {
        self.in_round
            .iter()
            .any(|seat| self.figures[seat.index()] == Hand::Kelm)
    }

    /// The best hand still in the round, by the table ranking of RULES.md §4.4, and the seats
    /// holding it.
    fn best(&self) -> (u32, Seats) {
        let kelm = self.kelm_on_table();
        let mut best = 0;
        let mut holders = Seats::EMPTY;
        for seat in self.in_round.iter() {
            let strength = self.figures[seat.index()].zokken_table_strength(kelm);
            if holders.is_empty() || strength > best {
                best = strength;
                holders = Seats::EMPTY;
                holders.insert(seat);
            } else if strength == best {
                holders.insert(seat);
            }
        }
        (best, holders)
    }

    /// Who acts first in a betting round: the best figure, the lowest seat among equals.
    fn leader(&self) -> Seat {
        self.best().1.iter().next().unwrap_or(Seat(0))
    }

    fn showdown(&mut self, sink: &mut Sink) {
        self.phase = ZokkenPhase::Over;
        for seat in self.in_round.iter() {
            let i = seat.index();
            sink.event(Event::Revealed {
                seat,
                dice: self.hands[i],
                hand: self.figures[i],
            });
        }
        let (_, tied) = self.best();
        if let Some(winner) = tied.single() {
            self.win_pot(winner, sink);
        } else if self.replay < self.settings.max_replays {
            self.start_replay(tied, sink);
        } else {
            self.split_pot(tied, sink);
        }
    }

    /// `seat` wins the whole pot; the round is over.
    fn win_pot(&mut self, seat: Seat, sink: &mut Sink) {
        let chips = self.pot;
        self.pot = 0;
        self.net[seat.index()] += chips as i64;
        sink.event(Event::PotWon { seat, chips });
        self.end_round(sink);
    }

    /// The last replay tied again: the pot is split evenly among `tied`, the chips left over
    /// go one each to the tied seats in ascending seat number.
    fn split_pot(&mut self, tied: Seats, sink: &mut Sink) {
        let count = tied.len() as u32;
        let share = self.pot / count;
        let mut left_over = self.pot % count;
        for seat in tied.iter() {
            let mut chips = share;
            if left_over > 0 {
                chips += 1;
                left_over -= 1;
            }
            self.net[seat.index()] += chips as i64;
            sink.event(Event::PotWon { seat, chips });
        }
        self.pot = 0;
        self.end_round(sink);
    }

    fn end_round(&mut self, sink: &mut Sink) {
        if self.round >= self.settings.rounds {
            self.finish(sink);
        } else {
            self.start_round(sink);
        }
    }

    fn finish(&mut self, sink: &mut Sink) {
        self.phase = ZokkenPhase::Over;
        self.pending = Seats::EMPTY;
        self.choosers = Seats::EMPTY;
        self.bets = 0;
        self.current_bet = 0;
        self.staked = [0; MAX_SEATS];
        let places = self.placings();
        sink.event(Event::MatchOver {
            placings: Placings::from_slice(&places[..self.n()]),
        });
    }

    /// §4.5: ranked by net chips, equal chips share a place (1, 1, 3); indexed by seat.
    fn placings(&self) -> [u8; MAX_SEATS] {
        let net = &self.net[..self.n()];
        let mut places = [0; MAX_SEATS];
        for (place, mine) in places.iter_mut().zip(net) {
            *place = 1 + net.iter().filter(|other| *other > mine).count() as u8;
        }
        places
    }

    /// `seat` puts `chips` into the pot.
    fn put(&mut self, seat: Seat, chips: u32) {
        let i = seat.index();
        self.pot += chips;
        self.put_in[i] += chips;
        self.net[i] -= chips as i64;
    }

    // ---- validation ------------------------------------------------------------------

    /// What is legal in the current betting round, for error messages.
    fn betting_legal(&self) -> &'static str {
        match (self.bets > 0, self.bets < self.settings.max_bets) {
            (false, true) => "check, bet",
            (false, false) => "check",
            (true, true) => "call, raise, fold",
            (true, false) => "call, fold",
        }
    }

    /// Checks the seat, without looking at the action.
    fn check_seat(&self, seat: Seat) -> Result<(), ActionError> {
        if self.phase == ZokkenPhase::Over {
            return Err(ActionError::MatchOver);
        }
        if seat.index() >= self.n() {
            return Err(ActionError::NoSuchSeat {
                seat,
                last: self.seats - 1,
            });
        }
        if self.playing.contains(seat) && !self.in_round.contains(seat) {
            return Err(ActionError::Folded { seat });
        }
        match self.phase {
            ZokkenPhase::Betting(_) if seat != self.actor => Err(ActionError::NotYourTurn {
                seat,
                waiting: seats_text(std::iter::once(self.actor)),
            }),
            // The waiting list names every seat choosing for this throw, not only those
            // still to choose: who has chosen already is nobody else's business.
            ZokkenPhase::Choosing(_) if !self.in_round.contains(seat) => {
                Err(ActionError::NotYourTurn {
                    seat,
                    waiting: seats_text(self.in_round.iter()),
                })
            }
            ZokkenPhase::Choosing(_) if !self.choosers.contains(seat) => {
                Err(ActionError::AlreadyChosen { seat })
            }
            _ => Ok(()),
        }
    }

    /// Checks an action completely without changing anything.
    fn validate(&self, seat: Seat, action: Action) -> Result<(), ActionError> {
        self.check_seat(seat)?;
        if let ZokkenPhase::Choosing(_) = self.phase {
            return match action {
                Action::Reroll { turn, .. } if !turn.is_empty() => Err(ActionError::NotTurnable {
                    slot: turn.slots().next().unwrap_or(0),
                    reason: "zokken has no turning of dice",
                    turnable: "none".to_owned(),
                }),
                Action::Reroll { dice, .. } if dice.len() > MAX_REROLL => {
                    Err(ActionError::TooManyRerolled {
                        count: dice.len(),
                        max: MAX_REROLL,
                    })
                }
                Action::Reroll { .. } => Ok(()),
                other => Err(ActionError::WrongKind {
                    action: other.verb(),
                    legal: CHOOSING_LEGAL,
                }),
            };
        }
        let facing = self.bets > 0;
        let capped = self.bets >= self.settings.max_bets;
        let reason = match action {
            Action::Stop { .. } | Action::Reroll { .. } => {
                return Err(ActionError::WrongKind {
                    action: action.verb(),
                    legal: self.betting_legal(),
                });
            }
            Action::Check if facing => "there is a bet to call",
            Action::Bet if facing => "there is already a bet in this betting round",
            Action::Bet if capped => cap_reason(self.settings.max_bets),
            Action::Call if !facing => "there is no bet to call",
            Action::Raise if !facing => "there is no bet to raise",
            Action::Raise if capped => cap_reason(self.settings.max_bets),
            Action::Fold if !facing => "fold is allowed only when facing a bet",
            _ => return Ok(()),
        };
        Err(ActionError::Betting {
            action: action.verb(),
            reason,
            legal: self.betting_legal().to_owned(),
        })
    }

    // ---- the interface of `Match` ----------------------------------------------------

    pub(crate) fn to_act(&self) -> Seats {
        match self.phase {
            ZokkenPhase::Betting(_) => {
                let mut seats = Seats::EMPTY;
                seats.insert(self.actor);
                seats
            }
            ZokkenPhase::Choosing(_) => self.choosers,
            ZokkenPhase::Over => Seats::EMPTY,
        }
    }

    pub(crate) fn apply(
        &mut self,
        seat: Seat,
        action: Action,
        sink: &mut Sink,
    ) -> Result<(), ActionError> {
        self.validate(seat, action)?;
        match self.phase {
            ZokkenPhase::Choosing(throw) => {
                let Action::Reroll { dice, .. } = action else {
                    unreachable!("validated")
                };
                self.choices[seat.index()] = dice;
                self.choosers.remove(seat);
                if self.choosers.is_empty() {
                    self.end_choosing(throw, sink);
                }
            }
            ZokkenPhase::Betting(betting_round) => {
                let i = seat.index();
                let chips = match action {
                    Action::Bet | Action::Raise => {
                        self.bets += 1;
                        self.current_bet += self.bet_size;
                        self.pending = self.in_round;
                        self.current_bet - self.staked[i]
                    }
                    Action::Call => self.current_bet - self.staked[i],
                    Action::Fold => {
                        self.in_round.remove(seat);
                        0
                    }
                    _ => 0,
                };
                self.pending.remove(seat);
                self.staked[i] += chips;
                self.put(seat, chips);
                sink.event(Event::Betting {
                    seat,
                    action,
                    chips,
                });
                if let Some(last) = self.in_round.single() {
                    self.win_pot(last, sink);
                } else {
                    match self.pending.next_from(seat, self.n()) {
                        Some(next) => self.actor = next,
                        None => self.end_betting(betting_round, sink),
                    }
                }
            }
            ZokkenPhase::Over => unreachable!("validated"),
        }
        Ok(())
    }

    pub(crate) fn legal_actions(&self, seat: Seat, out: &mut Vec<Action>) {
        out.clear();
        if self.check_seat(seat).is_err() {
            return;
        }
        match self.phase {
            ZokkenPhase::Choosing(_) => {
                out.extend(
                    DieMask::ALL
                        .subsets()
                        .filter(|dice| dice.len() <= MAX_REROLL)
                        .map(Action::reroll),
                );
            }
            ZokkenPhase::Betting(_) => {
                let capped = self.bets >= self.settings.max_bets;
                if self.bets > 0 {
                    out.push(Action::Call);
                    if !capped {
                        out.push(Action::Raise);
                    }
                    out.push(Action::Fold);
                } else {
                    out.push(Action::Check);
                    if !capped {
                        out.push(Action::Bet);
                    }
                }
            }
            ZokkenPhase::Over => {}
        }
    }

    pub(crate) fn default_action(&self, seat: Seat) -> Option<Action> {
        self.check_seat(seat).ok()?;
        Some(match self.phase {
            ZokkenPhase::Choosing(_) => Action::reroll(DieMask::EMPTY),
            _ if self.bets > 0 => Action::Fold,
            _ => Action::Check,
        })
    }

    /// Builds what `seat` may see, reusing `out`'s allocations. It does not depend on the
    /// other seats' pending reroll choices, nor on which of them have chosen.
    pub(crate) fn observe_into(&self, seat: Seat, out: &mut ZokkenObservation) {
        let betting = matches!(self.phase, ZokkenPhase::Betting(_));
        let choosing = matches!(self.phase, ZokkenPhase::Choosing(_));
        let me = seat.index();
        let mine = me < self.n();
        out.seat = seat;
        out.round = self.round;
        out.rounds = self.settings.rounds;
        out.replay = self.replay;
        out.phase = self.phase;
        out.pot = self.pot;
        out.current_bet = if betting { self.current_bet } else { 0 };
        out.to_call = if betting && mine && self.in_round.contains(seat) {
            self.current_bet - self.staked[me]
        } else {
            0
        };
        out.bets = if betting { self.bets } else { 0 };
        out.max_bets = self.settings.max_bets;
        out.bet_size = if self.phase == ZokkenPhase::Over {
            0
        } else {
            self.bet_size
        };
        out.to_act = match self.phase {
            ZokkenPhase::Choosing(_) => self.in_round,
            _ => self.to_act(),
        };
        out.chosen =
            choosing && mine && self.in_round.contains(seat) && !self.choosers.contains(seat);
        let n = self.n();
        out.seats.truncate(n);
        while out.seats.len() < n {
            out.seats.push(self.seat_view(out.seats.len(), betting));
        }
        for (i, view) in out.seats.iter_mut().enumerate() {
            *view = self.seat_view(i, betting);
        }
    }

    /// What everybody sees of seat `i`.
    #[inline]
    fn seat_view(&self, i: usize, betting: bool) -> ZokkenSeatView {
        let owner = Seat(i as u8);
        let status = if self.in_round.contains(owner) {
            ZokkenSeatStatus::InRound
        } else if self.playing.contains(owner) {
            ZokkenSeatStatus::Folded
        } else {
            ZokkenSeatStatus::SittingOut
        };
        ZokkenSeatView {
            dice: self.hands[i],
            figure: self.figures[i],
            status,
            put_in: self.put_in[i],
            staked: if betting { self.staked[i] } else { 0 },
            net: self.net[i],
        }
    }

    pub(crate) fn observe(&self, seat: Seat) -> ZokkenObservation {
        let mut out = ZokkenObservation::empty();
        self.observe_into(seat, &mut out);
        out
    }

    pub(crate) fn outcome(&self) -> Option<Outcome> {
        if self.phase != ZokkenPhase::Over {
            return None;
        }
        let n = self.n();
        Some(Outcome {
            placings: self.placings()[..n].to_vec(),
            loser: None,
            tokens: vec![0; n],
            halves_lost: vec![0; n],
            chips: self.net[..n].to_vec(),
            // The match adds the referee's penalties.
            strikes: Vec::new(),
            timeouts: Vec::new(),
            forfeits: Vec::new(),
        })
    }

    pub(crate) fn true_dice(&self, seat: Seat) -> ([u8; 3], u8) {
        let i = seat.index();
        if i >= self.n() {
            return ([0; DICE], 0);
        }
        (self.hands[i], self.last_throw[i])
    }

    /// The seats' net chips plus the chips in the pot: always 0, since every chip a seat
    /// puts in goes to the pot and every chip it wins comes from it.
    pub(crate) fn net_chips_total(&self) -> i64 {
        self.net[..self.n()].iter().sum::<i64>() + self.pot as i64
    }
}

/// Why a bet or raise is refused at the cap of `max_bets` bets per betting round.
fn cap_reason(max_bets: u8) -> &'static str {
    const REASONS: [&str; 11] = [
        "this betting round allows no bets",
        "this betting round has reached its cap of 1 bet (no raises)",
        "this betting round has reached its cap of 2 bets (a bet and 1 raise)",
        "this betting round has reached its cap of 3 bets (a bet and 2 raises)",
        "this betting round has reached its cap of 4 bets (a bet and 3 raises)",
        "this betting round has reached its cap of 5 bets (a bet and 4 raises)",
        "this betting round has reached its cap of 6 bets (a bet and 5 raises)",
        "this betting round has reached its cap of 7 bets (a bet and 6 raises)",
        "this betting round has reached its cap of 8 bets (a bet and 7 raises)",
        "this betting round has reached its cap of 9 bets (a bet and 8 raises)",
        "this betting round has reached its cap of 10 bets (a bet and 9 raises)",
    ];
    REASONS
        .get(max_bets as usize)
        .copied()
        .unwrap_or("this betting round has reached its cap of bets")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rules;

    fn rules() -> ZokkenRules {
        match Rules::preset("zokken").unwrap() {
            Rules::Zokken(r) => r,
            _ => unreachable!(),
        }
    }

    fn state(seats: usize, seed: u64) -> (ZokkenState, Vec<Event>) {
        let mut events = Vec::new();
        let mut sink = Sink {
            events: &mut events,
            log: None,
        };
        let state = ZokkenState::new(&rules(), DiceSource::new(seed), seats, &mut sink);
        (state, events)
    }

    #[test]
    fn cap_reasons_name_the_cap() {
        assert!(cap_reason(4).contains("cap of 4 bets"));
        assert!(cap_reason(1).contains("cap of 1 bet "));
        assert!(cap_reason(200).contains("cap"));
    }

    #[test]
    fn a_round_starts_with_antes_and_throw_one() {
        let (state, events) = state(3, 11);
        assert_eq!(state.phase, ZokkenPhase::Betting(1));
        assert_eq!(state.pot, 3);
        assert_eq!(state.net_chips_total(), 0);
        let antes = events
            .iter()
            .filter(|e| matches!(e, Event::Ante { .. }))
            .count();
        let throws = events
            .iter()
            .filter(|e| matches!(e, Event::Thrown { throw: 1, .. }))
            .count();
        assert_eq!((antes, throws), (3, 3));
        for seat in 0..3 {
            let (dice, throws) = state.true_dice(Seat(seat));
            assert_eq!(throws, 1);
            for (slot, die) in dice.iter().enumerate() {
                assert!(MIWIN_FACES[slot].contains(die), "{dice:?}");
            }
        }
        assert_eq!(state.to_act().single(), Some(state.leader()));
    }

    #[test]
    fn placings_use_competition_ranking() {
        let (mut state, _) = state(4, 1);
        state.net[..4].copy_from_slice(&[5, -3, 5, -7]);
        assert_eq!(state.placings()[..4], [1, 3, 1, 4]);
    }

    #[test]
    fn the_pot_splits_with_left_over_chips_to_the_lowest_seats() {
        let (mut state, _) = state(4, 1);
        let mut events = Vec::new();
        let mut sink = Sink {
            events: &mut events,
            log: None,
        };
        let net_before = state.net;
        state.pot = 11;
        let mut tied = Seats::EMPTY;
        for s in [1, 2, 3] {
            tied.insert(Seat(s));
        }
        state.split_pot(tied, &mut sink);
        let won: Vec<(u8, u32)> = events
            .iter()
            .filter_map(|e| match e {
                Event::PotWon { seat, chips } => Some((seat.0, *chips)),
                _ => None,
            })
            .collect();
        assert_eq!(won, [(1, 4), (2, 4), (3, 3)]);
        // Won 4, then paid the next round's ante.
        assert_eq!(state.net[1] - net_before[1], 4 - 1);
    }
}
