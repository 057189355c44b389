//! The Zokken expert: rerolls and bets from exact showdown equity.
//!
//! **Equity.** Every die of every seat still in the round is public. The expert models each
//! other seat as rerolling to maximise its own expected final percentile among all 216 ways
//! a Miwin set can land (a table computed once), so each seat's figure at the showdown has an
//! exact distribution over the 216 outcomes, from its dice now and the throws left (every
//! reroll outcome enumerated). Against those, the expert's *score* for a final of its own is
//! the product over the other seats of the chance it beats that seat (a tie counts half;
//! a Schlumpf beats a Kelm, RULES.md §4.4). Its equity is the expected score when it rerolls
//! optimally for that score, by exact expectimax over its own remaining throws; its reroll
//! choices are the choices of that expectimax.
//!
//! **Betting** (with `e` the equity, `n` the seats still in the round, and the pot and the
//! chips to call from the observation):
//! - facing a bet: fold when `e` is below the pot odds, `to_call / (pot + to_call)`; raise
//!   when `e >= 1/n + VALUE_MARGIN` and the cap allows another raise; else call;
//! - no bet yet: bet when `e >= 1/n + VALUE_MARGIN`; with a hand below its fair share
//!   (`e < 1/n`) bet as a bluff with probability [`BLUFF_RATE`] (drawn from its seeded
//!   generator), else check.

mod rerolls;

use std::sync::OnceLock;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use super::super::zokken::{OUTCOMES, REROLLS, outcome_dice, outcome_of, reachable};
use crate::action::Action;
use crate::hand::Hand;
use crate::rules::Rules;
use crate::types::DieMask;
use crate::zokken::{ZokkenObservation, ZokkenPhase, ZokkenSeatStatus};
use rerolls::{best_of_rerolls, count, one_reroll, two_rerolls};

/// How often the expert bets a weak hand as a bluff when it could check.
pub const BLUFF_RATE: f64 = 0.10;

/// How far above its fair share of the pot (`1/n`) its equity must be to bet or raise.
const VALUE_MARGIN: f64 = 0.15;

/// The tables computed once: strengths, the order of the outcomes, and the model of the other
/// seats (their final distributions).
struct Tables {
    strength: [u32; OUTCOMES],
    /// Outcomes sorted by strength, ascending.
    order: [u16; OUTCOMES],
    kelm: usize,
    schlumpf: usize,
    /// `finals[left][o]`: the final outcome distribution of a model seat at `o` with `left`
    /// (0..=2) rerolls to come.
    finals: Vec<Vec<[f32; OUTCOMES]>>,
    /// `beat[left * OUTCOMES + o][x]`: the chance that outcome `x` beats the final of a
    /// model seat at `o` with `left` rerolls to come (what [`beat_chances`] multiplies by).
    beat: Vec<[f64; OUTCOMES]>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut strength = [0u32; OUTCOMES];
        for (o, s) in strength.iter_mut().enumerate() {
            *s = Hand::zokken(outcome_dice(o)).strength();
        }
        let mut order = [0u16; OUTCOMES];
        for (i, o) in order.iter_mut().enumerate() {
            *o = i as u16;
        }
        order.sort_by_key(|&o| strength[o as usize]);
        let mut sorted: Vec<u32> = strength.to_vec();
        sorted.sort_unstable();
        let percentile = |s: u32| {
            let below = sorted.partition_point(|&x| x < s);
            let equal = sorted[below..].partition_point(|&x| x == s);
            (below as f64 + equal as f64 / 2.0) / OUTCOMES as f64
        };
        let mut value = vec![[0f64; OUTCOMES]; 3];
        for o in 0..OUTCOMES {
            value[0][o] = percentile(strength[o]);
        }
        let mut finals = vec![vec![[0f32; OUTCOMES]; OUTCOMES]; 3];
        for (o, dist) in finals[0].iter_mut().enumerate() {
            dist[o] = 1.0;
        }
        for left in 1..3 {
            for o in 0..OUTCOMES {
                let mut best = (f64::MIN, 0u8);
                for bits in REROLLS {
                    let mut sum = 0.0;
                    reachable(o, bits, |x| sum += value[left - 1][x]);
                    let v = sum / count(bits);
                    if v > best.0 + 1e-12 {
                        best = (v, bits);
                    }
                }
                value[left][o] = best.0;
                let mut dist = [0f32; OUTCOMES];
                let w = 1.0 / count(best.1) as f32;
                reachable(o, best.1, |x| {
                    for (d, f) in dist.iter_mut().zip(&finals[left - 1][x]) {
                        *d += w * f;
                    }
                });
                finals[left][o] = dist;
            }
        }
        let find = |dice: [u8; 3]| outcome_of(dice).expect("on Miwin's dice");
        let mut t = Tables {
            strength,
            order,
            kelm: find([9, 3, 3]),
            schlumpf: find([2, 5, 7]),
            finals,
            beat: Vec::new(),
        };
        // 1.0 times the chance is the chance itself: multiplying a score by a row of this
        // table is exactly what `beat_chances` does to it.
        let mut beat = vec![[1.0f64; OUTCOMES]; 3 * OUTCOMES];
        for (i, row) in beat.iter_mut().enumerate() {
            beat_chances(&t, &t.finals[i / OUTCOMES][i % OUTCOMES], row);
        }
        t.beat = beat;
        t
    })
}

/// The ways a Miwin set can land (216), the size of [`model_final`]'s distributions.
pub(crate) const MIWIN_OUTCOMES: usize = OUTCOMES;

/// The final distribution of the expert's model seat (see the module documentation) whose
/// dice are outcome `outcome` with `left` (0..=2) rerolls to come: what the luck
/// correction values a Zokken seat by (`crate::luck`).
pub(crate) fn model_final(left: usize, outcome: usize) -> &'static [f32; OUTCOMES] {
    &tables().finals[left.min(2)][outcome]
}

/// The strength of outcome `outcome` ([`Hand::strength`] of its figure).
pub(crate) fn outcome_strength(outcome: usize) -> u32 {
    tables().strength[outcome]
}

/// The outcome (0..216) of Miwin dice showing `dice` (slot by slot), if they can.
pub(crate) fn miwin_outcome(dice: [u8; 3]) -> Option<usize> {
    outcome_of(dice)
}

/// The expert's state for Zokken.
pub(crate) struct ZokkenExpert {
    rng: SmallRng,
    score: Box<[f64; OUTCOMES]>,
    values: Vec<[f64; OUTCOMES]>,
    /// The last equity computed and its input (the same seat decides several times on the
    /// same dice: bets, calls and the reroll choice after them), see [`Memo`].
    last: Option<(Memo, (f64, u8))>,
}

/// Everything the equity and the best reroll depend on: the seat's outcome, the rerolls to
/// come, and the outcomes of the other seats in the round, in seat order (the order the
/// score multiplies them in).
#[derive(Copy, Clone, PartialEq, Eq)]
struct Memo {
    mine: u8,
    left: u8,
    others: [u8; crate::types::MAX_SEATS],
    count: u8,
}

impl ZokkenExpert {
    pub(crate) fn new(seed: u64) -> ZokkenExpert {
        ZokkenExpert {
            rng: SmallRng::seed_from_u64(seed),
            score: Box::new([1.0; OUTCOMES]),
            // Allocated by the first `value` that needs it (most decisions never do, and an
            // expert of Schocken or Sjokken never decides in Zokken).
            values: Vec::new(),
            last: None,
        }
    }

    pub(crate) fn begin_match(&mut self, _rules: &Rules) {}

    /// The expert's action for `o`.
    pub(crate) fn decide(&mut self, o: &ZokkenObservation) -> Action {
        let Some(me) = o.seats.get(o.seat.index()) else {
            return Action::Check;
        };
        let Some(mine) = outcome_of(me.dice) else {
            return self.fallback(o);
        };
        let (left, choosing) = match o.phase {
            ZokkenPhase::Choosing(n) => (4 - n as usize, true),
            ZokkenPhase::Betting(n) => (3usize.saturating_sub(n as usize), false),
            ZokkenPhase::Over => return Action::Check,
        };
        let mut memo = Memo {
            mine: mine as u8,
            left: left as u8,
            others: [0; crate::types::MAX_SEATS],
            count: 0,
        };
        for (i, seat) in o.seats.iter().enumerate() {
            if i == o.seat.index() || seat.status != ZokkenSeatStatus::InRound {
                continue;
            }
            let Some(theirs) = outcome_of(seat.dice) else {
                continue;
            };
            let Some(slot) = memo.others.get_mut(memo.count as usize) else {
                // More seats than a match has (a hand-made observation): not memoised.
                return self.decide_unmemoised(o, mine, left, choosing);
            };
            *slot = theirs as u8;
            memo.count += 1;
        }
        let others = memo.count as usize;
        let (equity, bits) = match self.last {
            Some((key, result)) if key == memo => result,
            _ => {
                let result = self.solve(&memo);
                self.last = Some((memo, result));
                result
            }
        };
        if choosing {
            return Action::reroll(DieMask::from_bits(bits).unwrap_or(DieMask::EMPTY));
        }
        self.bet(o, equity, others + 1)
    }

    /// [`ZokkenExpert::decide`] for an observation of more than [`MAX_SEATS`] seats.
    ///
    /// [`MAX_SEATS`]: crate::types::MAX_SEATS
    fn decide_unmemoised(
        &mut self,
        o: &ZokkenObservation,
        mine: usize,
        left: usize,
        choosing: bool,
    ) -> Action {
        let t = tables();
        let mut others = 0;
        self.score.fill(1.0);
        for (i, seat) in o.seats.iter().enumerate() {
            if i == o.seat.index() || seat.status != ZokkenSeatStatus::InRound {
                continue;
            }
            let Some(theirs) = outcome_of(seat.dice) else {
                continue;
            };
            others += 1;
            let row = &t.beat[left.min(2) * OUTCOMES + theirs];
            for (s, q) in self.score.iter_mut().zip(row) {
                *s *= q;
            }
        }
        let (equity, bits) = self.value(mine, left);
        if choosing {
            return Action::reroll(DieMask::from_bits(bits).unwrap_or(DieMask::EMPTY));
        }
        self.bet(o, equity, others + 1)
    }

    /// The equity and the best reroll for `memo`: the score of every final against the
    /// other seats (their rows of [`Tables::beat`] multiplied in seat order), then
    /// [`ZokkenExpert::value`].
    fn solve(&mut self, memo: &Memo) -> (f64, u8) {
        let t = tables();
        let left = memo.left as usize;
        let mine = memo.mine as usize;
        // While choosing, the others choose this throw too.
        let rows = memo.others[..memo.count as usize]
            .iter()
            .map(|&theirs| &t.beat[left.min(2) * OUTCOMES + theirs as usize]);
        if left == 0 {
            // The score of the final itself.
            return (rows.fold(1.0, |score, row| score * row[mine]), 0);
        }
        scores(rows, &mut self.score);
        match left {
            1 => one_reroll(&self.score, mine),
            2 => two_rerolls(&self.score, mine),
            _ => self.value(mine, left),
        }
    }

    /// The expected score of outcome `o` with `left` rerolls to come under optimal rerolls,
    /// and the best reroll now.
    fn value(&mut self, o: usize, left: usize) -> (f64, u8) {
        // values[k]: the expected score of every outcome with k rerolls to come.
        let mut values = std::mem::take(&mut self.values);
        values.resize(left.max(1), [0.0; OUTCOMES]);
        values[0] = *self.score;
        for k in 1..left {
            let (done, rest) = values.split_at_mut(k);
            best_of_rerolls(&done[k - 1], &mut rest[0]);
        }
        let next = &values[left.max(1) - 1];
        let best = if left == 0 {
            (next[o], 0)
        } else {
            one_reroll(next, o)
        };
        self.values = values;
        best
    }

    fn bet(&mut self, o: &ZokkenObservation, equity: f64, n: usize) -> Action {
        let fair = 1.0 / n.max(1) as f64;
        let strong = equity >= fair + VALUE_MARGIN;
        if o.bets > 0 {
            let odds = o.to_call as f64 / (o.pot + o.to_call).max(1) as f64;
            if equity < odds {
                Action::Fold
            } else if strong && o.bets < o.max_bets {
                Action::Raise
            } else {
                Action::Call
            }
        } else if strong || (equity < fair && self.rng.random_bool(BLUFF_RATE)) {
            Action::Bet
        } else {
            Action::Check
        }
    }

    /// Dice off Miwin's faces (only a script can throw them): keep all, check or call.
    fn fallback(&self, o: &ZokkenObservation) -> Action {
        match o.phase {
            ZokkenPhase::Choosing(_) => Action::reroll(DieMask::EMPTY),
            _ if o.bets > 0 => Action::Call,
            _ => Action::Check,
        }
    }
}

/// The score of every final: the product of `rows` in their order (what
/// [`ZokkenExpert::decide_unmemoised`] multiplies into its score from 1.0, the first row
/// itself: 1.0 times a chance is that chance).
fn scores<'a>(mut rows: impl Iterator<Item = &'a [f64; OUTCOMES]>, score: &mut [f64; OUTCOMES]) {
    match (rows.next(), rows.next(), rows.next()) {
        (None, _, _) => score.fill(1.0),
        (Some(first), None, _) => *score = *first,
        (Some(first), Some(second), None) => product(first, second, score),
        (Some(first), Some(second), Some(third)) => {
            for (((s, p), q), r) in score.iter_mut().zip(first).zip(second).zip(third) {
                *s = p * q * r;
            }
        }
    }
    for row in rows {
        times(row, score);
    }
}

/// `score = first * second`, side by side.
#[inline(never)]
fn product(first: &[f64; OUTCOMES], second: &[f64; OUTCOMES], score: &mut [f64; OUTCOMES]) {
    for ((s, p), q) in score.iter_mut().zip(first).zip(second) {
        *s = p * q;
    }
}

/// `score *= row`, side by side.
#[inline(never)]
fn times(row: &[f64; OUTCOMES], score: &mut [f64; OUTCOMES]) {
    for (s, q) in score.iter_mut().zip(row) {
        *s *= q;
    }
}

/// Multiplies `score[x]` by the chance that outcome `x` beats a final drawn from `dist`.
fn beat_chances(t: &Tables, dist: &[f32; OUTCOMES], score: &mut [f64]) {
    let mut below = 0.0f64;
    let mut i = 0;
    while i < OUTCOMES {
        let s = t.strength[t.order[i] as usize];
        let mut j = i;
        let mut equal = 0.0f64;
        while j < OUTCOMES && t.strength[t.order[j] as usize] == s {
            equal += dist[t.order[j] as usize] as f64;
            j += 1;
        }
        for k in i..j {
            let x = t.order[k] as usize;
            let mut q = below + equal / 2.0;
            if x == t.schlumpf {
                q += dist[t.kelm] as f64;
            } else if x == t.kelm {
                q -= dist[t.schlumpf] as f64;
            }
            score[x] *= q;
        }
        below += equal;
        i = j;
    }
}
