//! The value function of Zokken: every seat's net chips plus its expected share of the pot.
//!
//! `V_i = (net_i - future * [i in the round] + (pot + future * in_round) * share_i) * 100 /
//! rounds`, on the scale of the standings' net chips per 100 rounds. `net_i` is the seat's
//! net chips so far (its chips in the pot counted as spent); `future` is one bet of every
//! betting round still to come, which every seat still in the round (`in_round` of them) is
//! taken to add to the pot; `share_i` is its expected share of the pot at the showdown when
//! every seat still
//! in the round plays its remaining rerolls as the expert's model seat does (the expert's
//! exact final distributions: [`model_final`]) and nobody folds. Equal best figures share
//! the pot evenly (a replay gives the tied seats equal chances); figures are ranked by
//! strength, without the Schlumpf's table rule. A folded seat's share is 0.
//!
//! `V` is linear in the thrower's final distribution, so each throw values each final of
//! the thrower once and each outcome of the throw is a dot product; when all three dice are
//! rolled, the average over the 216 outcomes is the average final distribution, computed
//! once.

use std::sync::OnceLock;

use super::{LuckError, ThrowLuck, Values};
use crate::action::Action;
use crate::event::Event;
use crate::hand::MIWIN_FACES;
use crate::log::{LogEntry, MatchLog};
use crate::policy::expert::zokken::{MIWIN_OUTCOMES, miwin_outcome, model_final, outcome_strength};
use crate::rules::ZokkenRules;
use crate::types::{DieMask, MAX_SEATS, Seat, Seats};

/// Outcomes grouped by strength: the level (0 = weakest) of every outcome, and how many
/// levels there are.
struct Levels {
    of: [usize; MIWIN_OUTCOMES],
    count: usize,
    /// `fresh[left][x]`: the average over the 216 outcomes of the final distribution with
    /// `left` rerolls to come (all three dice thrown).
    fresh: [[f64; MIWIN_OUTCOMES]; 3],
}

fn levels() -> &'static Levels {
    static LEVELS: OnceLock<Levels> = OnceLock::new();
    LEVELS.get_or_init(|| {
        let mut strengths: Vec<u32> = (0..MIWIN_OUTCOMES).map(outcome_strength).collect();
        strengths.sort_unstable();
        strengths.dedup();
        let of = std::array::from_fn(|o| strengths.partition_point(|&s| s < outcome_strength(o)));
        let mut fresh = [[0.0; MIWIN_OUTCOMES]; 3];
        for (left, row) in fresh.iter_mut().enumerate() {
            for o in 0..MIWIN_OUTCOMES {
                for (x, &p) in row.iter_mut().zip(model_final(left, o)) {
                    *x += f64::from(p) / MIWIN_OUTCOMES as f64;
                }
            }
        }
        Levels {
            of,
            count: strengths.len(),
            fresh,
        }
    })
}

/// Zokken: each seat's score (net chips per 100 rounds) and the luck of every throw among
/// the log's entries `range` (the entries before it are followed, not valued).
pub(super) fn luck(
    log: &MatchLog,
    rules: &ZokkenRules,
    range: std::ops::Range<usize>,
) -> Result<(Vec<f64>, Vec<ThrowLuck>), LuckError> {
    let n = log.seats as usize;
    let scale = 100.0 / f64::from(rules.rounds.max(1));
    let mut table = Table {
        net: [0; MAX_SEATS],
        pot: 0,
        in_round: Seats::EMPTY,
        dice: [[0; 3]; MAX_SEATS],
        thrown: [0; MAX_SEATS],
        scale,
        future: [
            rules.small_bet + rules.big_bet + rules.big_bet * u32::from(rules.bet_after_last_throw),
            rules.big_bet + rules.big_bet * u32::from(rules.bet_after_last_throw),
            rules.big_bet * u32::from(rules.bet_after_last_throw),
        ],
    };
    let mut throws = Vec::new();
    for (index, entry) in log.entries.iter().enumerate().take(range.end) {
        match *entry {
            LogEntry::Throw {
                seat,
                round,
                throw,
                rolled,
                dice,
            } => {
                if miwin_outcome(dice).is_none() {
                    return Err(LuckError::ImpossibleDice { index, dice });
                }
                if !table.in_round.contains(seat) || throw == 0 {
                    return Err(LuckError::OutOfOrder {
                        index,
                        reason: "a throw by a seat that is not in the round",
                    });
                }
                if index >= range.start {
                    let terms = table.throw_terms(seat, throw, rolled, dice);
                    throws.push(ThrowLuck {
                        entry: index,
                        seat,
                        round,
                        throw,
                        terms: terms[..n].to_vec(),
                    });
                }
                table.dice[seat.index()] = dice;
                table.thrown[seat.index()] = (throw - 1) % 3 + 1;
            }
            LogEntry::Event { event } => table.apply(event),
            _ => {}
        }
    }
    let scores = (0..n).map(|i| table.net[i] as f64 * scale).collect();
    Ok((scores, throws))
}

/// What the luck computation follows of a Zokken match.
struct Table {
    net: [i64; MAX_SEATS],
    pot: i64,
    in_round: Seats,
    dice: [[u8; 3]; MAX_SEATS],
    /// The seat's throws in the current round or replay (0..=3).
    thrown: [u8; MAX_SEATS],
    scale: f64,
    /// After throw 1, 2, 3 of a round: one bet of every betting round still to come.
    future: [u32; 3],
}

impl Table {
    fn apply(&mut self, event: Event) {
        match event {
            Event::RoundStarted { seats, .. } => {
                self.in_round = seats;
                self.thrown = [0; MAX_SEATS];
            }
            Event::Ante { seat, chips } | Event::Betting { seat, chips, .. } => {
                self.net[seat.index()] -= i64::from(chips);
                self.pot += i64::from(chips);
                if let Event::Betting {
                    action: Action::Fold,
                    ..
                } = event
                {
                    self.in_round.remove(seat);
                }
            }
            Event::PotWon { seat, chips } => {
                self.net[seat.index()] += i64::from(chips);
                self.pot -= i64::from(chips);
            }
            _ => {}
        }
    }

    /// The final distribution of seat `i` as it stands (not thrown yet in this round or
    /// replay: a fresh throw of all three dice).
    fn dist_of(&self, i: usize) -> [f64; MIWIN_OUTCOMES] {
        match self.thrown[i] {
            0 => levels().fresh[2],
            thrown => {
                let o = miwin_outcome(self.dice[i]).unwrap_or(0);
                model_final(3 - thrown.min(3) as usize, o).map(f64::from)
            }
        }
    }

    /// The luck terms of `seat`'s throw number `throw` of the dice `rolled`, which landed as
    /// `dice`.
    fn throw_terms(&self, seat: Seat, throw: u8, rolled: DieMask, dice: [u8; 3]) -> Values {
        if rolled.is_empty() {
            return [0.0; MAX_SEATS];
        }
        let left = 3 - ((throw - 1) % 3 + 1) as usize;
        let values = self.value_of_finals(seat, self.future[2 - left]);
        let lv = levels();
        let value = |dist: &[f64; MIWIN_OUTCOMES]| {
            let mut v = [0.0; MAX_SEATS];
            for (x, &p) in dist.iter().enumerate() {
                if p != 0.0 {
                    for (acc, u) in v.iter_mut().zip(&values[lv.of[x]]) {
                        *acc += p * u;
                    }
                }
            }
            v
        };
        let actual = model_final(left, miwin_outcome(dice).unwrap_or(0)).map(f64::from);
        let mixture = if rolled == DieMask::ALL {
            lv.fresh[left]
        } else {
            self.mixture(seat, left, rolled)
        };
        let (after, mean) = (value(&actual), value(&mixture));
        std::array::from_fn(|i| after[i] - mean[i])
    }

    /// The average final distribution over every way the dice `rolled` can land, the
    /// seat's other dice held.
    fn mixture(&self, seat: Seat, left: usize, rolled: DieMask) -> [f64; MIWIN_OUTCOMES] {
        let slots: Vec<usize> = rolled.slots().collect();
        let ways = 6usize.pow(slots.len() as u32);
        let mut mixture = [0.0; MIWIN_OUTCOMES];
        for way in 0..ways {
            let mut dice = self.dice[seat.index()];
            for (k, &slot) in slots.iter().enumerate() {
                dice[slot] = MIWIN_FACES[slot][way / 6usize.pow(k as u32) % 6];
            }
            let o = miwin_outcome(dice).unwrap_or(0);
            for (x, &p) in mixture.iter_mut().zip(model_final(left, o)) {
                *x += f64::from(p) / ways as f64;
            }
        }
        mixture
    }

    /// `V` for every strength level of the thrower's final: the net chips plus the pot
    /// times every seat's expected share (see the module documentation).
    fn value_of_finals(&self, thrower: Seat, future: u32) -> Vec<Values> {
        let lv = levels();
        let k = thrower.index();
        let others: Vec<usize> = self
            .in_round
            .iter()
            .map(|s| s.index())
            .filter(|&i| i != k)
            .collect();
        // Per other seat and level: the chance of ending below it and at it.
        let mut below = vec![vec![0.0; lv.count]; MAX_SEATS];
        let mut at = vec![vec![0.0; lv.count]; MAX_SEATS];
        for &j in &others {
            for (x, p) in self.dist_of(j).iter().enumerate() {
                at[j][lv.of[x]] += p;
            }
            let mut sum = 0.0;
            for level in 0..lv.count {
                below[j][level] = sum;
                sum += at[j][level];
            }
        }
        let in_round = self.in_round.len() as f64;
        let pot = (self.pot as f64 + f64::from(future) * in_round) * self.scale;
        let spent = |i: usize| {
            let still_in = self.in_round.contains(Seat(i as u8));
            f64::from(future) * f64::from(u8::from(still_in))
        };
        let net: Values = std::array::from_fn(|i| (self.net[i] as f64 - spent(i)) * self.scale);
        let mut values = vec![net; lv.count];
        for (level, v) in values.iter_mut().enumerate() {
            let factors = others.iter().map(|&j| (below[j][level], at[j][level]));
            v[k] += pot * share_integral(factors, false);
        }
        for &i in &others {
            // Suffix sum over the levels above the thrower's.
            let mut above = 0.0;
            for level in (0..lv.count).rev() {
                let factors = || {
                    others
                        .iter()
                        .filter(move |&&j| j != i)
                        .map(|&j| (below[j][level], at[j][level]))
                };
                let tied = at[i][level] * share_integral(factors(), true);
                values[level][i] += pot * (above + tied);
                above += at[i][level] * share_integral(factors(), false);
            }
        }
        values
    }
}

/// `integral_0^1 z^e * prod (a + b z) dz` over the `factors` `(a, b)`, with `e` 1 when
/// `times_z`, else 0: a seat's expected share of the pot when each other seat ends below it
/// with chance `a` and equal with chance `b` (a tie of `m + 1` seats shares evenly: the
/// integral of `z^m` is `1 / (m + 1)`), `times_z` counting one more tied seat.
fn share_integral(factors: impl Iterator<Item = (f64, f64)>, times_z: bool) -> f64 {
    let mut poly = [0.0f64; MAX_SEATS + 2];
    poly[0] = 1.0;
    let mut degree = 0;
    for (a, b) in factors {
        degree += 1;
        for d in (0..=degree).rev() {
            let lower = if d > 0 { poly[d - 1] } else { 0.0 };
            poly[d] = poly[d] * a + lower * b;
        }
    }
    let shift = usize::from(times_z);
    poly[..=degree]
        .iter()
        .enumerate()
        .map(|(d, c)| c / (d + shift + 1) as f64)
        .sum()
}
