//! Schocken and Sjokken: the shared mechanics of RULES.md §1 with each game's own rules
//! (§2 and §3). Both are "shake" games: turns of up to three throws, a throw limit fixed by
//! the round's starter, a best and a worst hand, and tokens moving from the middle and then
//! from winner to loser.

use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::dice::DiceSource;
use crate::error::{ActionError, seats_text};
use crate::event::Event;
use crate::hand::Hand;
use crate::log::Sink;
use crate::play::Outcome;
use crate::rules::{Game, SchockenRules, SjokkenRules};
use crate::types::{DieMask, MAX_SEATS, Seat, Seats};

/// Who may see a die thrown by a seat.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Sight {
    /// Face up: everybody.
    Public,
    /// Under the cup: the thrower alone (Schocken).
    Owner,
    /// A blind throw under the cup: nobody, the thrower included (Sjokken).
    Nobody,
}

/// One seat's turn in the current round.
///
/// Who sees a die is kept as two sets: a die in `public` is face up (everybody sees it); a
/// die in `seen_by_owner` but not in `public` is under the cup (the thrower sees it); a die
/// in neither is not thrown yet this round, or blind (nobody sees it).
///
/// The rest of the turn is public: throws used, dice rolled in the last throw, dice turned
/// this turn (held for the rest of it), whether the turn is over. It is kept in the seat's
/// public [`TurnView`] (`ShakeState::views`), whose dice and hand [`Turn::show`] brings up to
/// date after any change of the dice, their hand or who sees them, so that observations
/// copy the public views as they are.
#[derive(Copy, Clone, Debug, Default)]
struct Turn {
    /// The true dice.
    dice: [u8; 3],
    /// Dice everybody sees.
    public: DieMask,
    /// Dice the thrower sees (a superset of `public`).
    seen_by_owner: DieMask,
    /// The hand the dice make now (kept up to date after every throw and turn).
    hand: Option<Hand>,
    /// Sixes that may be turned after the last throw, and how many at once.
    turnable: DieMask,
    max_turn: u8,
}

/// Every hand three six-sided dice make under one way of naming hands, indexed by the dice
/// (`(a - 1) * 36 + (b - 1) * 6 + (c - 1)` for dice `[a, b, c]`).
type HandTable = [Hand; 216];

/// Builds the [`HandTable`] of Sjokken (`sjokken`), or of Schocken under the given variants.
const fn hand_table(sjokken: bool, jule: bool, straight_counts: bool) -> HandTable {
    let mut table = [Hand::SchockOut; 216];
    let mut i = 0;
    while i < 216 {
        let dice = [(i / 36) as u8 + 1, (i / 6 % 6) as u8 + 1, (i % 6) as u8 + 1];
        table[i] = if sjokken {
            Hand::sjokken(dice)
        } else {
            Hand::schocken(dice, jule, straight_counts)
        };
        i += 1;
    }
    table
}

static SJOKKEN_HANDS: HandTable = hand_table(true, false, false);
/// Schocken's tables, indexed by `jule`, then by whether straights count.
static SCHOCKEN_HANDS: [[HandTable; 2]; 2] = [
    [
        hand_table(false, false, false),
        hand_table(false, false, true),
    ],
    [
        hand_table(false, true, false),
        hand_table(false, true, true),
    ],
];

impl Turn {
    /// Brings the dice and hand of the turn's public `view` up to date with the dice, their
    /// hand and who sees them.
    #[inline]
    fn show(&self, view: &mut TurnView) {
        view.dice = visible_dice(self.dice, self.public);
        view.hand = self.hand.filter(|_| self.public == DieMask::ALL);
    }
}

/// The settings of a shake game, normalised from [`SchockenRules`] or [`SjokkenRules`].
#[derive(Copy, Clone, Debug)]
struct Settings {
    game: Game,
    tokens: u8,
    /// Equal hands: only turn order counts (Schocken variant; always in Sjokken).
    ties_by_order_only: bool,
    turn_on_last_throw: bool,
    jule: bool,
    straight_in_one_throw: bool,
    single_half: bool,
    open_dice: bool,
    /// The hands of all dice: `[0]` when the last throw did not roll all three dice, `[1]`
    /// when it did (they differ under `straight_in_one_throw` only).
    hands: [&'static HandTable; 2],
}

impl Settings {
    /// The tables of [`Settings::hands`] for these settings.
    fn hand_tables(game: Game, jule: bool, straight_in_one_throw: bool) -> [&'static HandTable; 2] {
        if game == Game::Sjokken {
            return [&SJOKKEN_HANDS; 2];
        }
        let tables = &SCHOCKEN_HANDS[jule as usize];
        [&tables[!straight_in_one_throw as usize], &tables[1]]
    }
}

/// The state of a Schocken or Sjokken match.
#[derive(Clone, Debug)]
pub(crate) struct ShakeState {
    settings: Settings,
    dice: DiceSource,
    seats: u8,
    tokens: [u8; MAX_SEATS],
    pot: u8,
    /// Sjokken: tokens that left the game with SJOK1 throwers.
    removed: u8,
    in_play: Seats,
    /// Schocken: 1, 2, 3 (the final). Sjokken: always 1.
    half: u8,
    half_losers: [Option<Seat>; 3],
    round: u32,
    starter: Seat,
    limit: Option<u8>,
    order: [Seat; MAX_SEATS],
    order_len: u8,
    /// Index into `order` of the seat whose turn it is.
    pos: u8,
    turns: [Turn; MAX_SEATS],
    /// What everybody sees of each seat's turn (see [`Turn`]).
    views: [TurnView; MAX_SEATS],
    loser: Option<Seat>,
}

/// What the seat that must act may do (part of its observation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShakeDecision {
    /// The most throws this seat may use this turn (3 for the starter, else the limit).
    pub max_throws: u8,
    /// Whether another throw is allowed.
    pub can_reroll: bool,
    /// Sixes that may be turned into ones now.
    pub turnable: DieMask,
    /// How many of `turnable` may be turned at once (0 when none).
    pub max_turn: u8,
    /// Whether turning must be part of a reroll (Schocken without `turn_on_last_throw`).
    pub turn_needs_reroll: bool,
    /// Dice that may not be rerolled (turned earlier this turn).
    pub locked: DieMask,
}

/// What one player may see of one seat's turn in the current round.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnView {
    /// The seat's dice: `None` for a die not thrown yet, under the cup (hidden from this
    /// player) or blind.
    pub dice: [Option<u8>; 3],
    /// Throws used so far (public).
    pub throws: u8,
    /// Dice rolled in the seat's last throw (public: everybody sees what goes into the cup).
    pub rolled: DieMask,
    /// Dice turned from six to one this turn.
    pub turned: DieMask,
    /// Whether the seat's turn is over.
    pub done: bool,
    /// The hand, when all three dice are visible to this player.
    pub hand: Option<Hand>,
}

/// Everything one player of a Schocken or Sjokken match may see (RULES.md §5).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShakeObservation {
    /// Schocken or Sjokken.
    pub game: Game,
    /// The observing seat.
    pub seat: Seat,
    /// Seats at the table.
    pub seats: u8,
    /// Schocken: 1, 2, or 3 for the final. Sjokken: 1.
    pub half: u8,
    /// The current round, from 1.
    pub round: u32,
    /// Tokens in the middle.
    pub pot: u8,
    /// Sjokken: tokens removed from the game by SJOK1s.
    pub removed: u8,
    /// Tokens each seat holds.
    pub tokens: Vec<u8>,
    /// Seats still in play in this half (Schocken) or game (Sjokken).
    pub in_play: Seats,
    /// Schocken: the losers of the halves played so far, in order.
    pub half_losers: Vec<Seat>,
    /// The round's starter.
    pub starter: Seat,
    /// The throw limit, once the starter has finished.
    pub throw_limit: Option<u8>,
    /// The seat that must act now, if any.
    pub to_act: Option<Seat>,
    /// The order of turns in this round.
    pub turn_order: Vec<Seat>,
    /// Every seat's turn, indexed by seat.
    pub turns: Vec<TurnView>,
    /// What this seat may do, when it must act.
    pub decision: Option<ShakeDecision>,
}

impl ShakeObservation {
    fn empty(game: Game) -> ShakeObservation {
        ShakeObservation {
            game,
            seat: Seat(0),
            seats: 0,
            half: 0,
            round: 0,
            pot: 0,
            removed: 0,
            tokens: Vec::new(),
            in_play: Seats::EMPTY,
            half_losers: Vec::new(),
            starter: Seat(0),
            throw_limit: None,
            to_act: None,
            turn_order: Vec::new(),
            turns: Vec::new(),
            decision: None,
        }
    }
}

impl ShakeState {
    pub(crate) fn schocken(
        rules: &SchockenRules,
        dice: DiceSource,
        seats: usize,
        sink: &mut Sink,
    ) -> ShakeState {
        let settings = Settings {
            game: Game::Schocken,
            tokens: rules.tokens,
            ties_by_order_only: rules.tie_later_loses,
            turn_on_last_throw: rules.turn_on_last_throw,
            jule: rules.jule,
            straight_in_one_throw: rules.straight_in_one_throw,
            single_half: rules.single_half,
            open_dice: rules.open_dice,
            hands: Settings::hand_tables(Game::Schocken, rules.jule, rules.straight_in_one_throw),
        };
        ShakeState::start(settings, dice, seats, sink)
    }

    pub(crate) fn sjokken(
        rules: &SjokkenRules,
        dice: DiceSource,
        seats: usize,
        sink: &mut Sink,
    ) -> ShakeState {
        let settings = Settings {
            game: Game::Sjokken,
            tokens: rules.tokens,
            ties_by_order_only: true,
            turn_on_last_throw: true,
            jule: false,
            straight_in_one_throw: false,
            single_half: true,
            open_dice: false,
            hands: Settings::hand_tables(Game::Sjokken, false, false),
        };
        ShakeState::start(settings, dice, seats, sink)
    }

    fn start(settings: Settings, dice: DiceSource, seats: usize, sink: &mut Sink) -> ShakeState {
        let mut state = ShakeState {
            settings,
            dice,
            seats: seats as u8,
            tokens: [0; MAX_SEATS],
            pot: 0,
            removed: 0,
            in_play: Seats::EMPTY,
            half: 0,
            half_losers: [None; 3],
            round: 0,
            starter: Seat(0),
            limit: None,
            order: [Seat(0); MAX_SEATS],
            order_len: 0,
            pos: 0,
            turns: [Turn::default(); MAX_SEATS],
            views: [TurnView::default(); MAX_SEATS],
            loser: None,
        };
        let starter = state.opening_throw_off(sink);
        state.start_half(1, Seats::first_n(seats), starter, sink);
        state
    }

    fn is_sjokken(&self) -> bool {
        self.settings.game == Game::Sjokken
    }

    /// The hand `dice` make when the last throw rolled `rolled`.
    #[inline]
    fn hand(&self, dice: [u8; 3], rolled: DieMask) -> Hand {
        let [a, b, c] = dice.map(|d| d.wrapping_sub(1) as usize);
        if a < 6 && b < 6 && c < 6 {
            self.settings.hands[(rolled == DieMask::ALL) as usize][a * 36 + b * 6 + c]
        } else {
            // Not six-sided dice (only a script can throw them).
            self.hand_of_any_dice(dice, rolled)
        }
    }

    #[cold]
    #[inline(never)]
    fn hand_of_any_dice(&self, dice: [u8; 3], rolled: DieMask) -> Hand {
        if self.is_sjokken() {
            Hand::sjokken(dice)
        } else {
            let straight_counts = !self.settings.straight_in_one_throw || rolled == DieMask::ALL;
            Hand::schocken(dice, self.settings.jule, straight_counts)
        }
    }

    /// The opening throw-off: everybody throws once, the lowest (Schocken) or highest
    /// (Sjokken) hand starts; ties for it are thrown again among the tied players.
    fn opening_throw_off(&mut self, sink: &mut Sink) -> Seat {
        let mut contenders = Seats::first_n(self.seats as usize);
        for attempt in 1..=u8::MAX {
            let mut best: Option<u32> = None;
            let mut tied = Seats::EMPTY;
            for seat in contenders.iter() {
                let dice = self.dice.throw_d6(seat, self.round, attempt);
                sink.throw(seat, 0, attempt, DieMask::ALL, dice);
                sink.event(Event::OpeningThrow {
                    seat,
                    attempt,
                    dice,
                });
                let strength = self.hand(dice, DieMask::ALL).strength();
                // Schocken: lowest starts; Sjokken: highest starts.
                let score = if self.is_sjokken() {
                    strength
                } else {
                    u32::MAX - strength
                };
                match best {
                    Some(b) if b > score => {}
                    Some(b) if b == score => tied.insert(seat),
                    _ => {
                        best = Some(score);
                        tied = Seats::EMPTY;
                        tied.insert(seat);
                    }
                }
            }
            if let Some(seat) = tied.single() {
                sink.event(Event::StarterChosen { seat });
                return seat;
            }
            contenders = tied;
        }
        // 255 ties in a row: practically impossible; the lowest tied seat starts.
        let seat = contenders.iter().next().unwrap_or(Seat(0));
        sink.event(Event::StarterChosen { seat });
        seat
    }

    fn start_half(&mut self, half: u8, seats: Seats, starter: Seat, sink: &mut Sink) {
        self.half = half;
        self.tokens = [0; MAX_SEATS];
        self.pot = self.settings.tokens;
        self.in_play = seats;
        if !self.is_sjokken() {
            sink.event(Event::HalfStarted {
                half,
                seats,
                starter,
            });
        }
        self.begin_round(starter, sink);
    }

    fn begin_round(&mut self, starter: Seat, sink: &mut Sink) {
        self.round += 1;
        self.starter = starter;
        self.limit = None;
        let n = self.seats as usize;
        self.turns[..n].fill(Turn::default());
        self.views[..n].fill(TurnView::default());
        let mut len = 0;
        let mut seat = starter.0;
        for _ in 0..n {
            if self.in_play.contains(Seat(seat)) {
                self.order[len] = Seat(seat);
                len += 1;
            }
            seat += 1;
            if seat as usize == n {
                seat = 0;
            }
        }
        self.order_len = len as u8;
        self.pos = 0;
        sink.event(Event::RoundStarted {
            round: self.round,
            replay: 0,
            seats: self.in_play,
            starter: Some(starter),
        });
        self.begin_turn(sink);
    }

    fn current(&self) -> Seat {
        self.order[self.pos as usize]
    }

    fn begin_turn(&mut self, sink: &mut Sink) {
        let seat = self.current();
        self.throw(seat, DieMask::ALL, sink);
    }

    /// The most throws `seat` may use this round.
    fn max_throws(&self, seat: Seat) -> u8 {
        match self.limit {
            Some(limit) if seat != self.starter => limit,
            _ => 3,
        }
    }

    /// Throws the dice in `rolled` for `seat`, then moves on to its decision, the end of its
    /// turn, or (Sjokken) the end of the round on a SJOK1.
    fn throw(&mut self, seat: Seat, rolled: DieMask, sink: &mut Sink) {
        let i = seat.index();
        let sjokken = self.is_sjokken();
        let max = self.max_throws(seat);
        let throw = self.views[i].throws + 1;
        let sight = if sjokken {
            if throw == max && max > 1 {
                Sight::Nobody
            } else {
                Sight::Public
            }
        } else if self.settings.open_dice {
            Sight::Public
        } else {
            Sight::Owner
        };
        let thrown = self.dice.throw_d6(seat, self.round, throw);
        let dice = rolled.pick(thrown, self.turns[i].dice);
        let hand = self.hand(dice, rolled);
        let (turnable, max_turn) = sixes_to_turn(sjokken, dice, rolled, throw);
        let (public, seen_by_owner) = match sight {
            Sight::Public => (rolled, rolled),
            Sight::Owner => (DieMask::EMPTY, rolled),
            Sight::Nobody => (DieMask::EMPTY, DieMask::EMPTY),
        };
        let turn = &mut self.turns[i];
        turn.dice = dice;
        turn.public = turn.public.minus(rolled).union(public);
        turn.seen_by_owner = turn.seen_by_owner.minus(rolled).union(seen_by_owner);
        turn.hand = Some(hand);
        turn.turnable = turnable;
        turn.max_turn = max_turn;
        let view = &mut self.views[i];
        view.throws = throw;
        view.rolled = rolled;
        turn.show(view);
        let public_dice = view.dice;
        sink.throw(seat, self.round, throw, rolled, dice);
        sink.event(Event::Thrown {
            seat,
            throw,
            rolled,
            dice: public_dice,
        });
        if sjokken && sight == Sight::Public && dice == [1, 1, 1] {
            // SJOK1: free at once, the round stops.
            self.end_round(sink);
        } else if throw >= max && !self.decides_after_last_throw(turnable, sight) {
            // No decision left: no throw left, and no sixes to turn after the last one.
            self.end_turn(sink);
        }
    }

    /// Whether a decision follows the last allowed throw: only where sixes may be turned and
    /// the turn stopped (Schocken's `turn_on_last_throw`, Sjokken's throw 1), when some can
    /// be turned, and under the cup always. Were the thrower asked only when sixes came up,
    /// everybody would learn from whose turn it is that two dice under the cup are sixes
    /// (RULES.md §5: no message may tell a hidden die); so a throw under the cup is always
    /// followed by a decision, stopping the only one when nothing can be turned.
    fn decides_after_last_throw(&self, turnable: DieMask, sight: Sight) -> bool {
        self.settings.turn_on_last_throw && (!turnable.is_empty() || sight == Sight::Owner)
    }

    /// Sixes `seat` may turn now, and how many at once (computed after each throw).
    fn turnable(&self, seat: Seat) -> (DieMask, u8) {
        let turn = &self.turns[seat.index()];
        (turn.turnable, turn.max_turn)
    }

    fn end_turn(&mut self, sink: &mut Sink) {
        let seat = self.current();
        let throws = {
            let view = &mut self.views[seat.index()];
            view.done = true;
            view.throws
        };
        sink.event(Event::Stopped { seat, throws });
        if seat == self.starter && self.limit.is_none() {
            self.limit = Some(throws);
            sink.event(Event::ThrowLimitSet { throws });
        }
        self.pos += 1;
        if self.pos < self.order_len {
            self.begin_turn(sink);
        } else {
            self.end_round(sink);
        }
    }

    /// The round's end: reveal, then SJOK1s, or best and worst hand and the tokens.
    fn end_round(&mut self, sink: &mut Sink) {
        if let Some((first, sjok1s)) = self.reveal(sink) {
            self.sjok1(first, sjok1s, sink);
            return;
        }
        let (winner, winning, loser) = self.best_and_worst();
        let value = winning.value(self.settings.tokens);
        sink.event(Event::RoundDecided {
            winner,
            loser,
            value,
        });

        if winning == Hand::SchockOut {
            self.give_all_tokens(loser, sink);
            self.half_lost(loser, sink);
            return;
        }
        self.move_tokens(winner, loser, value, sink);
        match self.in_play.single() {
            Some(last) => self.half_lost(last, sink),
            None => self.begin_round(loser, sink),
        }
    }

    /// Reveals every hand of the round, in turn order: the first SJOK1 and every SJOK1's
    /// seat, if there is one.
    fn reveal(&mut self, sink: &mut Sink) -> Option<(Seat, Seats)> {
        let mut first_sjok1: Option<Seat> = None;
        let mut sjok1s = Seats::EMPTY;
        for i in 0..self.order_len as usize {
            let seat = self.order[i];
            let turn = &mut self.turns[seat.index()];
            let view = &mut self.views[seat.index()];
            if view.throws == 0 {
                continue;
            }
            turn.public = DieMask::ALL;
            turn.seen_by_owner = DieMask::ALL;
            turn.show(view);
            let (dice, Some(hand)) = (turn.dice, turn.hand) else {
                continue;
            };
            sink.event(Event::Revealed { seat, dice, hand });
            if hand == Hand::Sjok1 {
                first_sjok1.get_or_insert(seat);
                sjok1s.insert(seat);
            }
        }
        first_sjok1.map(|first| (first, sjok1s))
    }

    /// The round's winner with its hand, and its loser.
    fn best_and_worst(&self) -> (Seat, Hand, Seat) {
        // Rank: higher strength, then (Schocken default) fewer throws, then earlier turn,
        // packed into one number in that order of significance.
        let mut best: Option<(u64, Seat, Hand)> = None;
        let mut worst: Option<(u64, Seat)> = None;
        for i in 0..self.order_len as usize {
            let seat = self.order[i];
            let Some(hand) = self.turns[seat.index()].hand else {
                continue;
            };
            let throws = if self.settings.ties_by_order_only {
                0
            } else {
                3 - self.views[seat.index()].throws as u32
            };
            let rank =
                (hand.strength() as u64) << 16 | (throws as u64) << 8 | (MAX_SEATS - i) as u64;
            if best.is_none_or(|(b, _, _)| rank > b) {
                best = Some((rank, seat, hand));
            }
            if worst.is_none_or(|(w, _)| rank < w) {
                worst = Some((rank, seat));
            }
        }
        let (Some((_, winner, winning)), Some((_, loser))) = (best, worst) else {
            unreachable!("a round ends after every seat in it has thrown");
        };
        (winner, winning, loser)
    }

    /// The round's `value` in tokens goes to the `loser`: from the middle while it holds
    /// tokens (phase A; when it is empty, the seats without tokens are out), else from the
    /// winner (phase B; out when it has none left).
    fn move_tokens(&mut self, winner: Seat, loser: Seat, value: u8, sink: &mut Sink) {
        if self.pot > 0 {
            // Phase A: from the middle.
            let count = value.min(self.pot);
            self.pot -= count;
            self.tokens[loser.index()] += count;
            sink.event(Event::TokensMoved {
                from: None,
                to: loser,
                count,
            });
            if self.pot == 0 {
                for seat in self.in_play.iter() {
                    if self.tokens[seat.index()] == 0 {
                        self.in_play.remove(seat);
                        sink.event(Event::SeatOut { seat });
                    }
                }
            }
        } else {
            // Phase B: the winner passes their own tokens.
            let count = value.min(self.tokens[winner.index()]);
            self.tokens[winner.index()] -= count;
            self.tokens[loser.index()] += count;
            sink.event(Event::TokensMoved {
                from: Some(winner),
                to: loser,
                count,
            });
            if self.tokens[winner.index()] == 0 {
                self.in_play.remove(winner);
                sink.event(Event::SeatOut { seat: winner });
            }
        }
    }

    /// Schock out: the round's loser receives every token of the half.
    fn give_all_tokens(&mut self, loser: Seat, sink: &mut Sink) {
        if self.pot > 0 {
            let count = self.pot;
            self.pot = 0;
            self.tokens[loser.index()] += count;
            sink.event(Event::TokensMoved {
                from: None,
                to: loser,
                count,
            });
        }
        for seat in self.in_play.iter() {
            let count = self.tokens[seat.index()];
            if seat != loser && count > 0 {
                self.tokens[seat.index()] = 0;
                self.tokens[loser.index()] += count;
                sink.event(Event::TokensMoved {
                    from: Some(seat),
                    to: loser,
                    count,
                });
            }
        }
    }

    /// Sjokken: the SJOK1 throwers in `sjok1s` are free and their tokens leave the game;
    /// no tokens move. The next seat in play after `first` starts the next round.
    fn sjok1(&mut self, first: Seat, sjok1s: Seats, sink: &mut Sink) {
        if sjok1s.len() == self.in_play.len() {
            // Decided here: SJOK1s that would free every player still in play free nobody;
            // the round is void and its starter starts again.
            let starter = self.starter;
            self.begin_round(starter, sink);
            return;
        }
        for seat in sjok1s.iter() {
            let removed = self.tokens[seat.index()];
            self.tokens[seat.index()] = 0;
            self.removed += removed;
            self.in_play.remove(seat);
            sink.event(Event::Sjok1 { seat, removed });
            sink.event(Event::SeatOut { seat });
        }
        match self.in_play.single() {
            Some(last) => self.half_lost(last, sink),
            None => {
                let next = Seat(((first.index() + 1) % self.seats as usize) as u8);
                let starter = self
                    .in_play
                    .next_from(next, self.seats as usize)
                    .unwrap_or(next);
                self.begin_round(starter, sink);
            }
        }
    }

    /// `seat` lost the current half (Schocken) or the game (Sjokken).
    fn half_lost(&mut self, seat: Seat, sink: &mut Sink) {
        let half = self.half;
        self.half_losers[half as usize - 1] = Some(seat);
        if !self.is_sjokken() {
            sink.event(Event::HalfLost { half, seat });
        }
        let all = Seats::first_n(self.seats as usize);
        match half {
            1 if !self.settings.single_half => self.start_half(2, all, seat, sink),
            2 if self.half_losers[0] != Some(seat) => {
                let mut finalists = Seats::EMPTY;
                finalists.insert(seat);
                if let Some(first) = self.half_losers[0] {
                    finalists.insert(first);
                }
                self.start_half(3, finalists, seat, sink);
            }
            _ => {
                self.loser = Some(seat);
                self.in_play = Seats::EMPTY;
                let placings = self.placings();
                sink.event(Event::MatchOver {
                    placings: placings.into(),
                });
            }
        }
    }

    /// §2.7 and §3.5: the loser last, a half-loser who won the final second-to-last, the
    /// rest share first place.
    fn placings(&self) -> Vec<u8> {
        let n = self.seats;
        (0..n)
            .map(|s| {
                let seat = Seat(s);
                if self.loser == Some(seat) {
                    n
                } else if self.half_losers.contains(&Some(seat)) {
                    n - 1
                } else {
                    1
                }
            })
            .collect()
    }

    pub(crate) fn outcome(&self) -> Option<Outcome> {
        let loser = self.loser?;
        let n = self.seats as usize;
        let mut halves_lost = vec![0u8; n];
        if !self.is_sjokken() {
            for seat in self.half_losers.iter().flatten() {
                halves_lost[seat.index()] += 1;
            }
        }
        Some(Outcome {
            placings: self.placings(),
            loser: Some(loser),
            tokens: self.tokens[..n].iter().map(|&t| t as i64).collect(),
            halves_lost,
            chips: vec![0; n],
            // The match adds the referee's penalties.
            strikes: Vec::new(),
            timeouts: Vec::new(),
            forfeits: Vec::new(),
        })
    }

    pub(crate) fn to_act(&self) -> Seats {
        let mut seats = Seats::EMPTY;
        if self.loser.is_none() {
            seats.insert(self.current());
        }
        seats
    }

    pub(crate) fn tokens_in_game(&self) -> u32 {
        self.pot as u32
            + self.removed as u32
            + self.tokens[..self.seats as usize]
                .iter()
                .map(|&t| t as u32)
                .sum::<u32>()
    }

    fn decision(&self, seat: Seat) -> ShakeDecision {
        let view = &self.views[seat.index()];
        let max_throws = self.max_throws(seat);
        let (turnable, max_turn) = self.turnable(seat);
        ShakeDecision {
            max_throws,
            can_reroll: view.throws < max_throws,
            turnable,
            max_turn,
            turn_needs_reroll: !self.settings.turn_on_last_throw,
            locked: view.turned,
        }
    }

    fn check_seat(&self, seat: Seat) -> Result<(), ActionError> {
        if self.loser.is_some() {
            return Err(ActionError::MatchOver);
        }
        if seat.index() >= self.seats as usize {
            return Err(ActionError::NoSuchSeat {
                seat,
                last: self.seats - 1,
            });
        }
        if seat != self.current() {
            return Err(ActionError::NotYourTurn {
                seat,
                waiting: seats_text(std::iter::once(self.current())),
            });
        }
        Ok(())
    }

    #[inline]
    fn check_turn(
        &self,
        seat: Seat,
        turn: DieMask,
        decision: &ShakeDecision,
    ) -> Result<(), ActionError> {
        if turn.is_subset(decision.turnable) && turn.len() <= decision.max_turn as usize {
            return Ok(());
        }
        self.turn_error(seat, turn, decision)
    }

    /// Why turning `turn` is refused (the slow path of [`ShakeState::check_turn`]).
    #[cold]
    #[inline(never)]
    fn turn_error(
        &self,
        seat: Seat,
        turn: DieMask,
        decision: &ShakeDecision,
    ) -> Result<(), ActionError> {
        let state = &self.turns[seat.index()];
        for slot in turn.slots() {
            if decision.turnable.contains(slot) {
                continue;
            }
            let reason = if state.dice[slot] != 6 {
                "it does not show a six"
            } else if !self.views[seat.index()].rolled.contains(slot) {
                "it was not rolled in the last throw"
            } else if self.is_sjokken() && self.views[seat.index()].throws != 1 {
                "sjokken allows turning only after the first throw"
            } else {
                "the last throw rolled fewer than two sixes"
            };
            return Err(ActionError::NotTurnable {
                slot,
                reason,
                turnable: if decision.turnable.is_empty() {
                    "none".to_owned()
                } else {
                    decision.turnable.to_string()
                },
            });
        }
        if turn.len() > decision.max_turn as usize {
            return Err(ActionError::TooManyTurned {
                count: turn.len(),
                max: decision.max_turn as usize,
            });
        }
        Ok(())
    }

    /// Checks an action completely without changing anything.
    fn validate(&self, seat: Seat, action: Action) -> Result<(), ActionError> {
        self.check_seat(seat)?;
        let decision = self.decision(seat);
        match action {
            Action::Stop { turn } => {
                self.check_turn(seat, turn, &decision)?;
                if !turn.is_empty() && decision.turn_needs_reroll {
                    return Err(ActionError::TurnNeedsReroll);
                }
                Ok(())
            }
            Action::Reroll { dice, turn } => {
                if !decision.can_reroll {
                    return Err(ActionError::NoThrowLeft {
                        throws: self.views[seat.index()].throws,
                        limit: decision.max_throws,
                    });
                }
                if dice.is_empty() {
                    return Err(ActionError::EmptyReroll);
                }
                self.check_turn(seat, turn, &decision)?;
                if let Some(slot) = dice.intersection(turn).slots().next() {
                    return Err(ActionError::TurnAndReroll { slot });
                }
                if let Some(slot) = dice.intersection(decision.locked).slots().next() {
                    return Err(ActionError::RerollTurned { slot });
                }
                Ok(())
            }
            other => Err(ActionError::WrongKind {
                action: other.verb(),
                legal: if decision.can_reroll {
                    "stop, reroll"
                } else {
                    "stop"
                },
            }),
        }
    }

    pub(crate) fn apply(
        &mut self,
        seat: Seat,
        action: Action,
        sink: &mut Sink,
    ) -> Result<(), ActionError> {
        self.validate(seat, action)?;
        let (turn, reroll) = match action {
            Action::Stop { turn } => (turn, None),
            Action::Reroll { dice, turn } => (turn, Some(dice)),
            _ => unreachable!("validated"),
        };
        if !turn.is_empty() {
            let state = &mut self.turns[seat.index()];
            for slot in turn.slots() {
                state.dice[slot] = 1;
            }
            state.public = state.public.union(turn);
            state.seen_by_owner = state.seen_by_owner.union(turn);
            let view = &mut self.views[seat.index()];
            view.turned = view.turned.union(turn);
            let (dice, rolled) = (state.dice, view.rolled);
            let hand = self.hand(dice, rolled);
            let state = &mut self.turns[seat.index()];
            state.hand = Some(hand);
            state.show(&mut self.views[seat.index()]);
            sink.event(Event::Turned { seat, dice: turn });
        }
        match reroll {
            None => self.end_turn(sink),
            Some(dice) => {
                let state = &mut self.turns[seat.index()];
                // The dice that stay are set aside face up (blind dice stay blind). The view
                // is brought up to date by the throw that follows.
                let kept = dice.complement().intersection(state.seen_by_owner);
                state.public = state.public.union(kept);
                sink.event(Event::Rerolled { seat, dice });
                self.throw(seat, dice, sink);
            }
        }
        Ok(())
    }

    pub(crate) fn legal_actions(&self, seat: Seat, out: &mut Vec<Action>) {
        out.clear();
        if self.check_seat(seat).is_err() {
            return;
        }
        let decision = self.decision(seat);
        let turns = decision
            .turnable
            .subsets()
            .filter(|t| t.len() <= decision.max_turn as usize);
        for turn in turns {
            if turn.is_empty() || !decision.turn_needs_reroll {
                out.push(Action::Stop { turn });
            }
            if decision.can_reroll {
                let free = DieMask::ALL.minus(turn).minus(decision.locked);
                for dice in free.subsets().filter(|d| !d.is_empty()) {
                    out.push(Action::Reroll { dice, turn });
                }
            }
        }
    }

    pub(crate) fn default_action(&self, seat: Seat) -> Option<Action> {
        self.check_seat(seat).ok().map(|_| Action::STOP)
    }

    /// Builds what `seat` may see (RULES.md §5), reusing `out`'s allocations.
    pub(crate) fn observe_into(&self, seat: Seat, out: &mut ShakeObservation) {
        let n = self.seats as usize;
        out.game = self.settings.game;
        out.seat = seat;
        out.seats = self.seats;
        out.half = self.half;
        out.round = self.round;
        out.pot = self.pot;
        out.removed = self.removed;
        copy_prefix(&mut out.tokens, &self.tokens, n);
        out.in_play = self.in_play;
        out.half_losers.clear();
        if self.half_losers[0].is_some() {
            out.half_losers.extend(self.half_losers.iter().flatten());
        }
        out.starter = self.starter;
        out.throw_limit = self.limit;
        out.to_act = (self.loser.is_none()).then(|| self.current());
        copy_prefix(&mut out.turn_order, &self.order, self.order_len as usize);
        if out.turns.len() != n {
            out.turns.resize_with(n, TurnView::default);
        }
        for (view, public) in out.turns.iter_mut().zip(&self.views) {
            *view = *public;
        }
        // The observer also sees its own dice under the cup.
        if let (Some(turn), Some(view)) = (
            self.turns[..n].get(seat.index()),
            out.turns.get_mut(seat.index()),
        ) {
            view.dice = visible_dice(turn.dice, turn.seen_by_owner);
            view.hand = turn.hand.filter(|_| turn.seen_by_owner == DieMask::ALL);
        }
        out.decision = (out.to_act == Some(seat)).then(|| self.decision(seat));
    }

    pub(crate) fn observe(&self, seat: Seat) -> ShakeObservation {
        let mut out = ShakeObservation::empty(self.settings.game);
        self.observe_into(seat, &mut out);
        out
    }

    pub(crate) fn true_dice(&self, owner: Seat) -> ([u8; 3], u8) {
        let turn = &self.turns[owner.index()];
        (turn.dice, self.views[owner.index()].throws)
    }
}

/// Sixes that may be turned after throw number `throw` rolled `rolled` and landed on `dice`,
/// and how many of them at once.
#[inline]
fn sixes_to_turn(sjokken: bool, dice: [u8; 3], rolled: DieMask, throw: u8) -> (DieMask, u8) {
    let sixes = rolled.intersection(dice_showing(dice, 6));
    if sixes.len() < 2 || (sjokken && throw != 1) {
        return (DieMask::EMPTY, 0);
    }
    let max = if sjokken || sixes.len() == 2 { 1 } else { 2 };
    (sixes, max)
}

/// The dice that show `value`.
#[inline]
fn dice_showing(dice: [u8; 3], value: u8) -> DieMask {
    let bits = (dice[0] == value) as u8
        | ((dice[1] == value) as u8) << 1
        | ((dice[2] == value) as u8) << 2;
    DieMask::from_bits(bits).unwrap_or(DieMask::EMPTY)
}

/// The dice in `visible`, `None` for the others.
#[inline]
fn visible_dice(dice: [u8; 3], visible: DieMask) -> [Option<u8>; 3] {
    let bits = visible.bits();
    [
        (bits & 0b001 != 0).then_some(dice[0]),
        (bits & 0b010 != 0).then_some(dice[1]),
        (bits & 0b100 != 0).then_some(dice[2]),
    ]
}

/// Makes `out` a copy of `src[..len]`, reusing its allocation. It copies the whole of `src`
/// (a small array) and cuts the copy: a copy of known size is inlined, cheaper than a call
/// to `memcpy` for a handful of bytes.
#[inline]
fn copy_prefix<T: Copy, const N: usize>(out: &mut Vec<T>, src: &[T; N], len: usize) {
    out.clear();
    out.extend_from_slice(src);
    out.truncate(len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_tables_agree_with_the_hands() {
        for game in [Game::Schocken, Game::Sjokken] {
            for jule in [false, true] {
                for straight_in_one_throw in [false, true] {
                    let tables = Settings::hand_tables(game, jule, straight_in_one_throw);
                    for i in 0..216 {
                        let dice = [(i / 36) as u8 + 1, (i / 6 % 6) as u8 + 1, (i % 6) as u8 + 1];
                        for (all_rolled, table) in tables.iter().enumerate() {
                            let want = if game == Game::Sjokken {
                                Hand::sjokken(dice)
                            } else {
                                let straight_counts = !straight_in_one_throw || all_rolled == 1;
                                Hand::schocken(dice, jule, straight_counts)
                            };
                            assert_eq!(table[i], want, "{game:?} {dice:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn dice_showing_a_value() {
        assert_eq!(
            dice_showing([6, 2, 6], 6),
            DieMask::from_bits(0b101).unwrap()
        );
        assert_eq!(dice_showing([1, 2, 3], 6), DieMask::EMPTY);
    }
}
