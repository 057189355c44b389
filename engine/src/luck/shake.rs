//! The value function of Schocken and Sjokken: every seat's chance to lose the match.
//!
//! `V` after a throw combines an exact model of the current round with a table of match
//! states:
//!
//! - **The seats still to throw** play a frozen *reference policy*: the expert's exact turn
//!   solver ([`Solver`], compiled as [`Graph`]) minimising the chance that a single throw of
//!   three dice beats its final (ties count half). A whole turn of it has an exact
//!   distribution of finals (hand, throws used), every reroll outcome enumerated; it is
//!   computed once per variant and throw limit.
//! - **The round**: the seats before the thrower have their finals (the true dice, hidden
//!   ones included); each seat still to throw the reference distribution under the throw
//!   limit (the starter's own throws when the thrower is the starter). For every final `f`
//!   of the thrower, the chance of each seat being the round's loser and of each seat
//!   winning with each value is exact for these independent finals (§2.4's tie rules
//!   included); the pair (loser, winner) is taken as independent apart from excluding the
//!   same seat. A Schock out, the pot caps, seats going out and SJOK1s are applied as the
//!   rules do. This gives `U(f)`, every seat's `V` if the thrower ends with `f`.
//! - **The thrower** plays the rest of its turn to minimise its own chance to lose the
//!   match, `U(f)[thrower]`, by the same exact turn solver: `V` after the throw is `U` of the
//!   final that play reaches, in expectation over its remaining rerolls. `U` depends on the
//!   state before the throw only, so the thrower's play is the same function for every
//!   outcome of the throw.
//! - **The match state** after the round is valued by a table that is linear in the tokens:
//!   with the loser of each later round taken as uniform among the seats in play, a seat's
//!   tokens are a martingale once the pot is empty and the pot is shared evenly before, so
//!   its chance to lose the half is `(tokens + pot / seats in play) / tokens in the game`.
//!   The halves combine into the chance to lose the match by §2.5 (a fresh half is lost
//!   with chance `1 / seats`, a final with chance 1/2).
//!
//! The outcomes of a throw are enumerated as multisets of the dice rolled, with their exact
//! probabilities (the same sum as the `6^k` ordered outcomes: the tests check it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::{LuckError, LuckScale, ThrowLuck, Values, final_placings};
use crate::event::Event;
use crate::log::{LogEntry, MatchLog};
use crate::policy::expert::tables::{Hands, Model, Variant, model};
use crate::policy::expert::turn::{
    Choice, Eval, Multi, Scratch, Solver, State, outcomes, turnable,
};
use crate::rules::Rules;
use crate::types::{DieMask, MAX_SEATS, Seat, Seats};

/// The reference play of one variant, shared by every computation in the process.
struct Reference {
    model: Arc<Model>,
    /// The reference policy's loss per final `s * 3 + t - 1`.
    payoff: Vec<f64>,
    /// The class of the tokens a strength index moves as the round's best hand.
    class_of_strength: Vec<usize>,
    /// Per class: the tokens it moves, and whether it is a Schock out.
    classes: Vec<(u8, bool)>,
    /// Strength index of SJOK1 (Sjokken).
    sjok1: Option<usize>,
    /// The rank distribution of a whole reference turn, per throw limit 1..=3.
    turns: [OnceLock<Vec<f64>>; 3],
}

/// Final distributions of the reference policy computed while building a turn's
/// distribution, and the solvers' memory.
#[derive(Default)]
struct TurnCache {
    dists: HashMap<u32, Arc<Vec<f64>>>,
    work: Work,
}

/// The turn solvers' reusable memory (one per thread, see [`WORK`]).
#[derive(Default)]
struct Work {
    eval: Eval,
    scratch: Scratch,
}

thread_local! {
    /// The solvers' memory of this thread, reused from match to match, so that computations
    /// on several threads share no lock.
    static WORK: std::cell::RefCell<Work> = std::cell::RefCell::new(Work::default());
}

/// The [`Reference`] of `variant`, built once per process.
fn reference(variant: Variant) -> Arc<Reference> {
    static REFERENCES: Mutex<Vec<(Variant, Arc<Reference>)>> = Mutex::new(Vec::new());
    let mut all = REFERENCES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r)) = all.iter().find(|(v, _)| *v == variant) {
        return r.clone();
    }
    let model = model(variant);
    let h = &model.hands;
    let payoff = reference_payoff(h);
    let schock_out = (!h.sjokken).then(|| h.strength_index(Multi::of(&[1, 1, 1]), true));
    let mut classes: Vec<(u8, bool)> = Vec::new();
    let class_of_strength = (0..h.strengths)
        .map(|s| {
            let class = (h.values[s] as u8, Some(s) == schock_out);
            match classes.iter().position(|&c| c == class) {
                Some(i) => i,
                None => {
                    classes.push(class);
                    classes.len() - 1
                }
            }
        })
        .collect();
    let r = Arc::new(Reference {
        sjok1: h.sjok1,
        model: model.clone(),
        payoff,
        class_of_strength,
        classes,
        turns: Default::default(),
    });
    all.push((variant, r.clone()));
    r
}

/// The reference policy's loss for each final: the chance that one throw of three dice ranks
/// above it, ties counting half.
fn reference_payoff(h: &Hands) -> Vec<f64> {
    let mut mass = vec![0.0; h.ranks()];
    for &(roll, p) in outcomes(3) {
        mass[h.rank(h.strength_index(roll, true), 1)] += p;
    }
    let mut payoff = vec![0.0; h.strengths * 3];
    for s in 0..h.strengths {
        for t in 1..=3u8 {
            let r = h.rank(s, t);
            let above: f64 = mass[r + 1..].iter().sum();
            payoff[s * 3 + t as usize - 1] = above + mass[r] / 2.0;
        }
    }
    payoff
}

/// A turn state and throw limit packed into one number.
fn state_key(s: &State, limit: u8) -> u32 {
    s.t as u32
        | (s.locked as u32) << 2
        | (s.free.code() as u32) << 4
        | (s.turnable as u32) << 13
        | (s.all_rolled as u32) << 16
        | (limit as u32) << 17
}

/// The settings of `rules` that change how a turn is played or valued.
fn variant_of(rules: &Rules) -> Option<Variant> {
    match rules {
        Rules::Schocken(r) => Some(Variant {
            sjokken: false,
            jule: r.jule,
            straight_in_one_throw: r.straight_in_one_throw,
            ties_by_throws: !r.tie_later_loses,
            turn_on_last_throw: r.turn_on_last_throw,
            tokens: r.tokens,
        }),
        Rules::Sjokken(r) => Some(Variant {
            sjokken: true,
            jule: false,
            straight_in_one_throw: false,
            ties_by_throws: false,
            turn_on_last_throw: true,
            tokens: r.tokens,
        }),
        Rules::Zokken(_) => None,
    }
}

impl Reference {
    /// The final index (`s * 3 + t - 1`) of stopping with `hand` after throw `t`.
    fn final_index(&self, hand: Multi, t: u8, all_rolled: bool) -> usize {
        self.model.hands.strength_index(hand, all_rolled) * 3 + t as usize - 1
    }

    /// The distribution of the turn's final from `s` under the reference policy, with at
    /// most `limit` throws.
    fn final_dist(&self, cache: &mut TurnCache, s: State, limit: u8) -> Arc<Vec<f64>> {
        let key = state_key(&s, limit);
        if let Some(d) = cache.dists.get(&key) {
            return d.clone();
        }
        let h = &self.model.hands;
        let solved = self
            .model
            .graph(limit)
            .solve(h, &self.payoff, &s, &mut cache.work.eval);
        let (_, choice) = solved.unwrap_or_else(|| {
            Solver::new(h, &self.payoff, limit, &mut cache.work.scratch).solve(&s)
        });
        let mut dist = vec![0.0; h.strengths * 3];
        match choice {
            Choice::Stop { turn } => {
                let hand = s.free.without_sixes(turn).with_ones(s.locked + turn);
                dist[self.final_index(hand, s.t, s.all_rolled)] = 1.0;
            }
            Choice::Reroll { turn, keep } => {
                let locked = s.locked + turn;
                let n = s.free.len() - turn as usize - keep.len();
                for &(roll, p) in outcomes(n) {
                    let next = State {
                        t: s.t + 1,
                        locked,
                        free: keep.union(roll),
                        turnable: turnable(roll),
                        all_rolled: n == 3,
                    };
                    let d = self.final_dist(cache, next, limit);
                    for (x, y) in dist.iter_mut().zip(d.iter()) {
                        *x += p * y;
                    }
                }
            }
        }
        let dist = Arc::new(dist);
        cache.dists.insert(key, dist.clone());
        dist
    }

    /// The distribution of a whole reference turn's rank under throw limit `limit`,
    /// computed once per process.
    fn turn_ranks(&self, limit: u8) -> &[f64] {
        let limit = limit.clamp(1, 3);
        self.turns[limit as usize - 1].get_or_init(|| {
            let h = &self.model.hands;
            let mut cache = TurnCache::default();
            let mut ranks = vec![0.0; h.ranks()];
            for &(roll, p) in outcomes(3) {
                let s = State {
                    t: 1,
                    locked: 0,
                    free: roll,
                    turnable: turnable(roll),
                    all_rolled: true,
                };
                let d = self.final_dist(&mut cache, s, limit);
                for (f, q) in d.iter().enumerate() {
                    if *q != 0.0 {
                        ranks[h.rank(f / 3, (f % 3) as u8 + 1)] += p * q;
                    }
                }
            }
            ranks
        })
    }
}

/// Schocken and Sjokken: each seat's score, on [`LuckScale::Loss`] 1 if it lost the match
/// (its place is the worst, and not everyone's), else 0; on [`LuckScale::Place`] its place.
pub(super) fn scores(log: &MatchLog, scale: LuckScale) -> Result<Vec<f64>, LuckError> {
    let placings = final_placings(log)?;
    if scale == LuckScale::Place {
        return Ok(placings.iter().map(|&p| f64::from(p)).collect());
    }
    let worst = placings.iter().copied().max().unwrap_or(0);
    let best = placings.iter().copied().min().unwrap_or(0);
    Ok(placings
        .iter()
        .map(|&p| f64::from(u8::from(worst > best && p == worst)))
        .collect())
}

/// Schocken and Sjokken: the luck of every throw among the log's entries `range` (the entries before it are
/// followed, not valued).
pub(super) fn throws(
    log: &MatchLog,
    scale: LuckScale,
    range: std::ops::Range<usize>,
) -> Result<Vec<ThrowLuck>, LuckError> {
    let Some(variant) = variant_of(&log.rules) else {
        return Ok(Vec::new());
    };
    let reference = reference(variant);
    let mut work = WORK.with_borrow_mut(std::mem::take);
    let single_half = match &log.rules {
        Rules::Schocken(r) => r.single_half,
        _ => true,
    };
    let mut table = Table::new(log.seats as usize, variant.tokens, single_half, scale);
    let mut throws = Vec::new();
    for (index, entry) in log.entries.iter().enumerate().take(range.end) {
        match *entry {
            LogEntry::Throw {
                seat,
                round,
                throw,
                rolled,
                dice,
            } if round > 0 => {
                if dice.iter().any(|d| !(1..=6).contains(d)) {
                    return Err(LuckError::ImpossibleDice { index, dice });
                }
                table
                    .check_throw(seat, throw, rolled)
                    .map_err(|reason| LuckError::OutOfOrder { index, reason })?;
                if index < range.start {
                    table.thrown(seat, throw, rolled, dice);
                    continue;
                }
                let terms = table
                    .throw_terms(&reference, &mut work, seat, throw, rolled, dice)
                    .ok_or(LuckError::OutOfOrder {
                        index,
                        reason: "a throw by a seat that is not in the round",
                    })?;
                throws.push(ThrowLuck {
                    entry: index,
                    seat,
                    round,
                    throw,
                    terms: terms[..log.seats as usize].to_vec(),
                });
                table.thrown(seat, throw, rolled, dice);
            }
            LogEntry::Event { event } => table.apply(event),
            _ => {}
        }
    }
    WORK.set(work);
    Ok(throws)
}

/// What the luck computation follows of a Schocken or Sjokken match: the match state and
/// the round's turns.
struct Table {
    n: usize,
    total: u8,
    single_half: bool,
    scale: LuckScale,
    /// Seats that lost a half so far.
    half_losers: Seats,
    tokens: [u8; MAX_SEATS],
    pot: u8,
    in_play: Seats,
    half: u8,
    first_half_loser: Option<Seat>,
    order: Vec<Seat>,
    limit: Option<u8>,
    dice: [[u8; 3]; MAX_SEATS],
    throws: [u8; MAX_SEATS],
    rolled: [DieMask; MAX_SEATS],
    turned: [DieMask; MAX_SEATS],
}

impl Table {
    fn new(n: usize, total: u8, single_half: bool, scale: LuckScale) -> Table {
        Table {
            n,
            total,
            single_half,
            scale,
            half_losers: Seats::EMPTY,
            tokens: [0; MAX_SEATS],
            pot: total,
            in_play: Seats::first_n(n),
            half: 1,
            first_half_loser: None,
            order: Vec::new(),
            limit: None,
            dice: [[1; 3]; MAX_SEATS],
            throws: [0; MAX_SEATS],
            rolled: [DieMask::EMPTY; MAX_SEATS],
            turned: [DieMask::EMPTY; MAX_SEATS],
        }
    }

    /// Follows a public event.
    fn apply(&mut self, event: Event) {
        match event {
            Event::HalfStarted { half, seats, .. } => {
                self.half = half;
                self.tokens = [0; MAX_SEATS];
                self.pot = self.total;
                self.in_play = seats;
            }
            Event::RoundStarted {
                seats,
                starter: Some(starter),
                ..
            } => {
                self.order = (0..self.n)
                    .map(|k| Seat(((starter.index() + k) % self.n) as u8))
                    .filter(|s| seats.contains(*s))
                    .collect();
                self.limit = None;
                self.throws = [0; MAX_SEATS];
                self.turned = [DieMask::EMPTY; MAX_SEATS];
            }
            Event::Turned { seat, dice } => {
                for slot in dice.slots() {
                    self.dice[seat.index()][slot] = 1;
                }
                self.turned[seat.index()] = self.turned[seat.index()].union(dice);
            }
            Event::ThrowLimitSet { throws } => self.limit = Some(throws),
            Event::TokensMoved { from, to, count } => {
                match from {
                    None => self.pot = self.pot.saturating_sub(count),
                    Some(s) => {
                        self.tokens[s.index()] = self.tokens[s.index()].saturating_sub(count)
                    }
                }
                self.tokens[to.index()] = self.tokens[to.index()].saturating_add(count);
            }
            Event::SeatOut { seat } => self.in_play.remove(seat),
            Event::Sjok1 { seat, .. } => self.tokens[seat.index()] = 0,
            Event::HalfLost { half, seat } => {
                self.half_losers.insert(seat);
                if half == 1 {
                    self.first_half_loser = Some(seat);
                }
            }
            _ => {}
        }
    }

    /// Why `seat`'s throw number `throw` of the dice `rolled` cannot follow the entries
    /// before it, if it cannot.
    fn check_throw(&self, seat: Seat, throw: u8, rolled: DieMask) -> Result<(), &'static str> {
        let i = seat.index();
        if !self.order.contains(&seat) {
            Err("a throw by a seat that is not in the round")
        } else if !(1..=3).contains(&throw) || throw != self.throws[i] + 1 {
            Err("the throw number does not follow the seat's throws this round")
        } else if rolled.is_empty() || rolled.intersects(self.turned[i]) {
            Err("a throw must roll dice, and none of those turned this turn")
        } else if throw == 1 && rolled != DieMask::ALL {
            Err("a turn's first throw rolls all three dice")
        } else {
            Ok(())
        }
    }

    /// Follows a throw.
    fn thrown(&mut self, seat: Seat, throw: u8, rolled: DieMask, dice: [u8; 3]) {
        let i = seat.index();
        self.dice[i] = dice;
        self.throws[i] = throw;
        self.rolled[i] = rolled;
    }

    /// The luck terms of `seat`'s throw number `throw` of the dice `rolled`, which landed as
    /// `dice`; `None` when the seat is not in the round.
    fn throw_terms(
        &self,
        reference: &Reference,
        work: &mut Work,
        seat: Seat,
        throw: u8,
        rolled: DieMask,
        dice: [u8; 3],
    ) -> Option<Values> {
        let pos = self.order.iter().position(|&s| s == seat)?;
        if rolled.is_empty() {
            return Some([0.0; MAX_SEATS]);
        }
        let i = seat.index();
        let limit = match self.limit {
            Some(limit) if pos > 0 => limit,
            _ => 3,
        };
        let turned = self.turned[i];
        let kept_slots = DieMask::ALL.minus(turned).minus(rolled);
        let kept = Multi::of(
            &kept_slots
                .slots()
                .map(|k| self.dice[i][k])
                .collect::<Vec<_>>(),
        );
        let actual = Multi::of(&rolled.slots().map(|k| dice[k]).collect::<Vec<_>>());
        let mut round = Round::new(self, reference, work, pos);
        let payoff = round.thrower_payoff(i);
        let mut memo = HashMap::new();
        let (mut mean, mut value) = ([0.0; MAX_SEATS], None);
        for &(roll, p) in outcomes(rolled.len()) {
            let state = State {
                t: throw,
                locked: turned.len() as u8,
                free: kept.union(roll),
                turnable: turnable(roll),
                all_rolled: rolled == DieMask::ALL,
            };
            let v = round.play_value(state, limit, &payoff, &mut memo);
            for (m, x) in mean.iter_mut().zip(&v) {
                *m += p * x;
            }
            if roll == actual {
                value = Some(v);
            }
        }
        let value = value?;
        Some(std::array::from_fn(|k| value[k] - mean[k]))
    }

    /// Every seat's value (chance to lose the match, or expected place) when the current
    /// half is in the state (`tokens`, `pot`, `in_play`) between rounds.
    fn match_value(&self, tokens: &[u8; MAX_SEATS], pot: u8, in_play: Seats) -> Values {
        if let Some(last) = in_play.single() {
            return self.after_half_lost(last);
        }
        let k = in_play.len().max(1) as f64;
        let total = pot as f64
            + in_play
                .iter()
                .map(|s| tokens[s.index()] as f64)
                .sum::<f64>();
        let mut half = [0.0; MAX_SEATS];
        for s in in_play.iter() {
            half[s.index()] = (tokens[s.index()] as f64 + pot as f64 / k) / total.max(1.0);
        }
        let n = self.n as f64;
        std::array::from_fn(|i| {
            let h = half[i];
            let lose = match (self.single_half, self.half, self.first_half_loser) {
                (true, _, _) | (_, 3, _) => h,
                (false, 1, _) => (1.0 + h * n) / (2.0 * n),
                (false, _, Some(first)) if first.index() == i => (1.0 + h) / 2.0,
                _ => h / 2.0,
            };
            // The chance to lose a half: this one, or (half 1) the fresh half 2.
            let any = if self.half_losers.contains(Seat(i as u8)) {
                1.0
            } else if !self.single_half && self.half == 1 {
                h + (1.0 - h) / n
            } else {
                h
            };
            self.on_scale(lose, any)
        })
    }

    /// Every seat's value once `loser` has lost the current half.
    fn after_half_lost(&self, loser: Seat) -> Values {
        let n = self.n as f64;
        std::array::from_fn(|i| {
            let lost = i == loser.index();
            let any = if lost || self.half_losers.contains(Seat(i as u8)) {
                1.0
            } else if !self.single_half && self.half == 1 {
                1.0 / n
            } else {
                0.0
            };
            let lose = if self.single_half || self.half >= 3 {
                f64::from(u8::from(lost))
            } else if self.half == 1 {
                // Half 2 is fresh (lost with 1/n), the final a coin (1/2).
                if lost {
                    (1.0 + 1.0 / n) / 2.0
                } else {
                    1.0 / (2.0 * n)
                }
            } else if self.first_half_loser == Some(loser) {
                f64::from(u8::from(lost))
            } else if lost || self.first_half_loser.is_some_and(|f| f.index() == i) {
                0.5
            } else {
                0.0
            };
            self.on_scale(lose, any)
        })
    }

    /// A seat's value on the table's scale from its chance to lose the match (`lose`) and
    /// its chance to lose a half (`any`): the place is the last for the match's loser, the
    /// second to last for another half-loser, else the first (§2.7, §3.5).
    fn on_scale(&self, lose: f64, any: f64) -> f64 {
        let n = self.n as f64;
        match self.scale {
            LuckScale::Loss => lose,
            LuckScale::Place if self.single_half => 1.0 + (n - 1.0) * lose,
            LuckScale::Place => 1.0 + (n - 2.0) * any + lose,
        }
    }

    /// The match value after a round whose loser is `l`, whose winner is `w` and whose
    /// best hand moves `value` tokens (`schock_out`: all of them, and the half).
    fn after_round(&self, l: Seat, w: Seat, value: u8, schock_out: bool) -> Values {
        if schock_out {
            return self.after_half_lost(l);
        }
        let (mut tokens, mut pot, mut in_play) = (self.tokens, self.pot, self.in_play);
        if pot > 0 {
            let count = value.min(pot);
            pot -= count;
            tokens[l.index()] += count;
            if pot == 0 {
                for s in in_play.iter() {
                    if tokens[s.index()] == 0 {
                        in_play.remove(s);
                    }
                }
            }
        } else {
            let count = value.min(tokens[w.index()]);
            tokens[w.index()] -= count;
            tokens[l.index()] += count;
            if tokens[w.index()] == 0 {
                in_play.remove(w);
            }
        }
        self.match_value(&tokens, pot, in_play)
    }

    /// The match value after a round in which the seats `sjok1s` threw SJOK1 (Sjokken).
    fn after_sjok1(&self, sjok1s: Seats) -> Values {
        if sjok1s.len() >= self.in_play.len() {
            // Void: every seat in play would be free; nothing changes.
            return self.match_value(&self.tokens, self.pot, self.in_play);
        }
        let (mut tokens, mut in_play) = (self.tokens, self.in_play);
        for s in sjok1s.iter() {
            tokens[s.index()] = 0;
            in_play.remove(s);
        }
        self.match_value(&tokens, self.pot, in_play)
    }
}

/// What the seats after the thrower do, for one throw limit: the chance `gt[r]` that one
/// later seat's reference turn ends above rank `r`, `le[r]` at or below it.
struct Later {
    gt: Vec<f64>,
    le: Vec<f64>,
    /// `lose[k][r]`: the chance that later seat `k` ends at or below rank `r` and is the
    /// loser (the thrower not counted), summed over its ranks up to `r`.
    lose: Vec<Vec<f64>>,
    /// `win[k][c][r]`: the chance that later seat `k` wins with a hand of class `c` at rank
    /// `r` or above (the thrower not counted).
    win: Vec<Vec<Vec<f64>>>,
}

/// One throw's round: what the value of each final of the thrower needs.
struct Round<'a> {
    table: &'a Table,
    reference: &'a Reference,
    work: &'a mut Work,
    pos: usize,
    /// Ranks and classes of the finals of the seats before the thrower.
    earlier: Vec<(usize, usize)>,
    earlier_sjok1s: Seats,
    /// Per throw limit 1..=3 (built when needed).
    later: [Option<Later>; 3],
    /// `after[(l * m + w) * classes + c]`: the match value after that round result.
    after: Vec<Values>,
    /// The value of each final of the thrower, as computed.
    finals: Vec<Option<Values>>,
}

impl<'a> Round<'a> {
    fn new(
        table: &'a Table,
        reference: &'a Reference,
        work: &'a mut Work,
        pos: usize,
    ) -> Round<'a> {
        let h = &reference.model.hands;
        let mut earlier = Vec::with_capacity(pos);
        let mut earlier_sjok1s = Seats::EMPTY;
        for &seat in &table.order[..pos] {
            let i = seat.index();
            let s = h.strength_index(Multi::of(&table.dice[i]), table.rolled[i] == DieMask::ALL);
            if Some(s) == reference.sjok1 {
                earlier_sjok1s.insert(seat);
            }
            let rank = h.rank(s, table.throws[i].clamp(1, 3));
            earlier.push((rank, reference.class_of_strength[s]));
        }
        let m = table.order.len();
        let classes = &reference.classes;
        let mut after = Vec::with_capacity(m * m * classes.len());
        for &l in &table.order {
            for &w in &table.order {
                for &(value, schock_out) in classes {
                    after.push(table.after_round(l, w, value, schock_out));
                }
            }
        }
        Round {
            table,
            reference,
            work,
            pos,
            earlier,
            earlier_sjok1s,
            later: [None, None, None],
            after,
            finals: vec![None; h.strengths * 3],
        }
    }

    /// The value of every final of the thrower (seat index `me`) computed, and the
    /// thrower's own chance to lose the match for each: the payoff its turn is played for.
    fn thrower_payoff(&mut self, me: usize) -> Vec<f64> {
        (0..self.finals.len())
            .map(|f| {
                let u = self.value_of_final(f);
                self.finals[f] = Some(u);
                u[me]
            })
            .collect()
    }

    /// `V` in turn state `s` (throw limit `limit`) when the thrower plays the rest of its
    /// turn to minimise `payoff` (its own chance to lose the match), by the expert's exact
    /// turn solver; `memo` keeps the values of the states met for this throw.
    fn play_value(
        &mut self,
        s: State,
        limit: u8,
        payoff: &[f64],
        memo: &mut HashMap<u32, Values>,
    ) -> Values {
        let key = state_key(&s, limit);
        if let Some(v) = memo.get(&key) {
            return *v;
        }
        let reference = self.reference;
        let h = &reference.model.hands;
        let solved = reference
            .model
            .graph(limit)
            .solve(h, payoff, &s, &mut self.work.eval);
        let (_, choice) = solved
            .unwrap_or_else(|| Solver::new(h, payoff, limit, &mut self.work.scratch).solve(&s));
        let value = match choice {
            Choice::Stop { turn } => {
                let hand = s.free.without_sixes(turn).with_ones(s.locked + turn);
                let f = reference.final_index(hand, s.t, s.all_rolled);
                self.finals[f].unwrap_or_else(|| self.value_of_final(f))
            }
            Choice::Reroll { turn, keep } => {
                let locked = s.locked + turn;
                let n = s.free.len() - turn as usize - keep.len();
                let mut v = [0.0; MAX_SEATS];
                for &(roll, p) in outcomes(n) {
                    let next = State {
                        t: s.t + 1,
                        locked,
                        free: keep.union(roll),
                        turnable: turnable(roll),
                        all_rolled: n == 3,
                    };
                    let u = self.play_value(next, limit, payoff, memo);
                    for (x, y) in v.iter_mut().zip(&u) {
                        *x += p * y;
                    }
                }
                v
            }
        };
        memo.insert(key, value);
        value
    }

    /// Builds the later seats' chances for throw limit `limit` if not built yet; returns
    /// their slot in `self.later`.
    fn build_later_for(&mut self, limit: u8) -> usize {
        let slot = limit.clamp(1, 3) as usize - 1;
        if self.later[slot].is_none() {
            let ranks = self.reference.turn_ranks(limit);
            let later = self.build_later(ranks);
            self.later[slot] = Some(later);
        }
        slot
    }

    fn build_later(&self, mass: &[f64]) -> Later {
        let r_count = mass.len();
        let (mut ge, mut gt) = (vec![0.0; r_count], vec![0.0; r_count]);
        let mut below = 0.0;
        for r in 0..r_count {
            gt[r] = 1.0 - below - mass[r];
            ge[r] = 1.0 - below;
            below += mass[r];
        }
        let lt: Vec<f64> = ge.iter().map(|g| 1.0 - g).collect();
        let le: Vec<f64> = gt.iter().map(|g| 1.0 - g).collect();
        let j = self.table.order.len() - self.pos - 1;
        let min_e = self.earlier.iter().map(|e| e.0).min().unwrap_or(usize::MAX);
        let max_e = self.earlier.iter().map(|e| e.0).max();
        let h = &self.reference.model.hands;
        let classes = self.reference.classes.len();
        let mut lose = Vec::with_capacity(j);
        let mut win = Vec::with_capacity(j);
        for k in 0..j {
            let (before, after) = (k as i32, (j - 1 - k) as i32);
            let mut prefix = vec![0.0; r_count];
            let mut sum = 0.0;
            for r in 0..r_count {
                if min_e >= r {
                    sum += mass[r] * ge[r].powi(before) * gt[r].powi(after);
                }
                prefix[r] = sum;
            }
            lose.push(prefix);
            let mut suffix = vec![vec![0.0; r_count + 1]; classes];
            for r in (0..r_count).rev() {
                let c = self.reference.class_of_strength[h.strength_of_rank(r)];
                for (k, row) in suffix.iter_mut().enumerate() {
                    row[r] = row[r + 1];
                    if k == c && max_e.is_none_or(|e| e < r) {
                        row[r] += mass[r] * lt[r].powi(before) * le[r].powi(after);
                    }
                }
            }
            win.push(suffix);
        }
        Later { gt, le, lose, win }
    }

    /// `V` when the thrower's final is `f` (`s * 3 + t - 1`).
    fn value_of_final(&mut self, f: usize) -> Values {
        let (s, t) = (f / 3, (f % 3) as u8 + 1);
        let reference = self.reference;
        let mut sjok1s = self.earlier_sjok1s;
        if Some(s) == reference.sjok1 {
            sjok1s.insert(self.table.order[self.pos]);
        }
        if !sjok1s.is_empty() {
            return self.table.after_sjok1(sjok1s);
        }
        let h = &reference.model.hands;
        let me = (h.rank(s, t), reference.class_of_strength[s]);
        let limit = match self.table.limit {
            Some(limit) if self.pos > 0 => limit,
            _ => t,
        };
        let (pos, m) = (self.pos, self.table.order.len());
        let j = (m - pos - 1) as i32;
        let classes = reference.classes.len();
        let slot = self.build_later_for(limit);
        let (earlier, later) = (&self.earlier, self.later[slot].as_ref().expect("built"));
        let mut lose = vec![0.0; m];
        let mut win = vec![0.0; m * classes];
        for (q, &(e, c)) in earlier.iter().enumerate() {
            let ok_lose = earlier[..q].iter().all(|x| x.0 >= e)
                && earlier[q + 1..].iter().all(|x| x.0 > e)
                && me.0 > e;
            let ok_win = earlier[..q].iter().all(|x| x.0 < e)
                && earlier[q + 1..].iter().all(|x| x.0 <= e)
                && me.0 <= e;
            lose[q] = if ok_lose { later.gt[e].powi(j) } else { 0.0 };
            win[q * classes + c] = if ok_win { later.le[e].powi(j) } else { 0.0 };
        }
        let (r, c) = me;
        if earlier.iter().all(|x| x.0 >= r) {
            lose[pos] = later.gt[r].powi(j);
        }
        if earlier.iter().all(|x| x.0 < r) {
            win[pos * classes + c] = later.le[r].powi(j);
        }
        for k in 0..j as usize {
            lose[pos + 1 + k] = later.lose[k][r];
            for c in 0..classes {
                win[(pos + 1 + k) * classes + c] = later.win[k][c][r + 1];
            }
        }
        self.combine(&lose, &win)
    }

    /// `V` from each seat's chance to lose the round (`lose`, by position in the turn
    /// order) and to win it with each class of hand (`win[position * classes + class]`).
    fn combine(&self, lose: &[f64], win: &[f64]) -> Values {
        let classes = self.reference.classes.len();
        let m = lose.len();
        let mut v = [0.0; MAX_SEATS];
        for (l, &pl) in lose.iter().enumerate() {
            if pl == 0.0 {
                continue;
            }
            let own: f64 = win[l * classes..(l + 1) * classes].iter().sum();
            let z = 1.0 - own;
            if z <= 1e-15 {
                continue;
            }
            for w in (0..m).filter(|&w| w != l) {
                for c in 0..classes {
                    let pw = win[w * classes + c];
                    if pw == 0.0 {
                        continue;
                    }
                    let weight = pl * pw / z;
                    let after = &self.after[(l * m + w) * classes + c];
                    for (x, y) in v.iter_mut().zip(after) {
                        *x += weight * y;
                    }
                }
            }
        }
        v
    }
}
