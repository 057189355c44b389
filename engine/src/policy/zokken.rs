//! The Zokken policies: `timid` (checks or calls, keeps all dice) and `heuristic`, and the
//! heuristic with some of its skills left out ([`ZokkenSkills`], for the handicapped
//! players).
//!
//! The heuristic plays from a small table computed once (no allocation): for every one of
//! the 216 ways a Miwin set can land, the value of the hand if it were final (its percentile
//! among all 216 hands), the expected value with one or two rerolls left when rerolling
//! optimally, and the reroll that achieves it. It keeps the dice that maximise the expected
//! final value, bets and raises when its value clearly leads every other seat still in the
//! round, calls when close, and folds a clearly weaker hand facing a bet.

use std::sync::OnceLock;

use crate::action::Action;
use crate::hand::{Hand, MIWIN_FACES};
use crate::types::DieMask;
use crate::zokken::{ZokkenObservation, ZokkenPhase, ZokkenSeatStatus};

/// Ways one Miwin set can land (6 × 6 × 6 face indices).
pub(super) const OUTCOMES: usize = 216;

/// The rerolls Zokken allows: none, one or two dice (bits of a [`DieMask`]).
pub(super) const REROLLS: [u8; 7] = [0b000, 0b001, 0b010, 0b100, 0b011, 0b101, 0b110];

/// `FACE_INDEX[slot][value]`: the face index of `value` on the die in `slot`, or 255.
const FACE_INDEX: [[u8; 10]; 3] = {
    let mut table = [[255u8; 10]; 3];
    let mut slot = 0;
    while slot < 3 {
        let mut face = 0;
        while face < 6 {
            table[slot][MIWIN_FACES[slot][face] as usize] = face as u8;
            face += 1;
        }
        slot += 1;
    }
    table
};

/// How far ahead (in expected final percentile) a hand must be to bet or raise.
const LEAD: f32 = 0.08;
/// How far behind a hand may be and still call.
const BEHIND: f32 = 0.10;
/// How far behind a hand may be and still call when the pot pays at least `POT_ODDS` to 1.
const BEHIND_WITH_ODDS: f32 = 0.25;
/// Pot odds that justify a looser call.
const POT_ODDS: u32 = 6;

struct Plan {
    /// `value[k][outcome]`: the expected final percentile after throw `k + 1` of 3 with
    /// optimal rerolls (k = 2: the percentile itself).
    value: [[f32; OUTCOMES]; 3],
    /// `reroll[k][outcome]`: the best reroll after throw `k + 1` (k = 0, 1), as mask bits.
    reroll: [[u8; OUTCOMES]; 2],
    /// The strengths of all 216 hands, sorted ascending (for hands off the Miwin faces).
    sorted: [u32; OUTCOMES],
}

pub(super) fn outcome_dice(outcome: usize) -> [u8; 3] {
    [
        MIWIN_FACES[0][outcome / 36],
        MIWIN_FACES[1][outcome / 6 % 6],
        MIWIN_FACES[2][outcome % 6],
    ]
}

pub(super) fn outcome_of(dice: [u8; 3]) -> Option<usize> {
    let mut outcome = 0;
    for (slot, &die) in dice.iter().enumerate() {
        let face = *FACE_INDEX[slot].get(die as usize)?;
        if face == 255 {
            return None;
        }
        outcome = outcome * 6 + face as usize;
    }
    Some(outcome)
}

/// The share of the 216 hands below `strength`, counting equal ones half.
fn percentile(sorted: &[u32; OUTCOMES], strength: u32) -> f32 {
    let below = sorted.partition_point(|&s| s < strength);
    let equal = sorted[below..].partition_point(|&s| s == strength);
    (below as f32 + equal as f32 / 2.0) / OUTCOMES as f32
}

impl Plan {
    fn build() -> Plan {
        let mut strengths = [0u32; OUTCOMES];
        for (outcome, strength) in strengths.iter_mut().enumerate() {
            *strength = Hand::zokken(outcome_dice(outcome)).strength();
        }
        let mut sorted = strengths;
        sorted.sort_unstable();
        let mut value = [[0f32; OUTCOMES]; 3];
        for (outcome, v) in value[2].iter_mut().enumerate() {
            *v = percentile(&sorted, strengths[outcome]);
        }
        let mut reroll = [[0u8; OUTCOMES]; 2];
        for k in (0..2).rev() {
            for outcome in 0..OUTCOMES {
                let mut best = (f32::MIN, 0u8);
                for bits in REROLLS {
                    let expected = expected_after(&value[k + 1], outcome, bits);
                    // Strictly better only: on equal values keep more dice.
                    if expected > best.0 + 1e-6 {
                        best = (expected, bits);
                    }
                }
                value[k][outcome] = best.0;
                reroll[k][outcome] = best.1;
            }
        }
        Plan {
            value,
            reroll,
            sorted,
        }
    }

    /// The value of `dice` with `rerolls_left` (0..=2) rerolls to come.
    fn value(&self, dice: [u8; 3], rerolls_left: usize) -> f32 {
        let k = 2 - rerolls_left.min(2);
        match outcome_of(dice) {
            Some(outcome) => self.value[k][outcome],
            None => percentile(&self.sorted, Hand::zokken(dice).strength()),
        }
    }
}

/// The outcomes reachable from `o` by rerolling `bits` (1, 6 or 36 of them, equally likely).
pub(super) fn reachable(o: usize, bits: u8, mut each: impl FnMut(usize)) {
    let faces = [o / 36, o / 6 % 6, o % 6];
    let range = |slot: usize| {
        if bits & (1 << slot) != 0 {
            0..6
        } else {
            faces[slot]..faces[slot] + 1
        }
    };
    for a in range(0) {
        for b in range(1) {
            for c in range(2) {
                each(a * 36 + b * 6 + c);
            }
        }
    }
}

/// The mean of `next` over the outcomes reachable from `outcome` by rerolling `bits`.
fn expected_after(next: &[f32; OUTCOMES], outcome: usize, bits: u8) -> f32 {
    let mut sum = 0.0;
    let mut count = 0u32;
    reachable(outcome, bits, |x| {
        sum += next[x];
        count += 1;
    });
    sum / count as f32
}

fn plan() -> &'static Plan {
    static PLAN: OnceLock<Plan> = OnceLock::new();
    PLAN.get_or_init(Plan::build)
}

/// Checks when nothing is to call, else calls; keeps all dice.
pub(super) fn timid(o: &ZokkenObservation) -> Action {
    match o.phase {
        ZokkenPhase::Betting(_) if o.bets > 0 => Action::Call,
        ZokkenPhase::Choosing(_) => Action::reroll(DieMask::EMPTY),
        _ => Action::Check,
    }
}

/// How many of its rerolls a player plans (the heuristic: both).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Rerolls {
    /// Both rerolls by the plan (the best expected final hand).
    Planned,
    /// The first reroll as if it were the last (the best hand after one more throw), then
    /// keeps all dice.
    OnlyOne,
    /// Keeps all dice.
    None,
}

/// How a player bets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Betting {
    /// The heuristic's: bets and raises on a clear lead, calls when close, folds a clearly
    /// weaker hand facing a bet.
    Heuristic,
    /// Never bets or raises, calls every bet (as `timid`).
    CallsAll,
    /// Bets and raises whenever it may, else calls: never folds.
    Maniac,
}

/// Which parts of the heuristic a Zokken player uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct ZokkenSkills {
    /// Its rerolls.
    pub rerolls: Rerolls,
    /// Its bets.
    pub betting: Betting,
}

impl ZokkenSkills {
    /// The heuristic's play.
    pub const HEURISTIC: ZokkenSkills = ZokkenSkills {
        rerolls: Rerolls::Planned,
        betting: Betting::Heuristic,
    };
}

/// Keeps the dice that maximise the expected final hand; bets on a clear lead, calls when
/// close, folds a clearly weaker hand facing a bet.
pub(super) fn heuristic(o: &ZokkenObservation) -> Action {
    play(o, ZokkenSkills::HEURISTIC)
}

/// The heuristic's decision with only `skills`.
pub(super) fn play(o: &ZokkenObservation, skills: ZokkenSkills) -> Action {
    let me = o.seat.index();
    let Some(mine) = o.seats.get(me) else {
        return Action::Check;
    };
    match o.phase {
        ZokkenPhase::Choosing(throw) => {
            let first = throw <= 2;
            let k = match (skills.rerolls, first) {
                (Rerolls::Planned, true) => Some(0),
                (Rerolls::Planned, false) | (Rerolls::OnlyOne, true) => Some(1),
                _ => None,
            };
            let bits = match (k, outcome_of(mine.dice)) {
                (Some(k), Some(outcome)) => plan().reroll[k][outcome],
                _ => 0,
            };
            Action::reroll(DieMask::from_bits(bits).unwrap_or(DieMask::EMPTY))
        }
        ZokkenPhase::Betting(betting_round) => match skills.betting {
            Betting::Heuristic => bet(o, betting_round),
            Betting::CallsAll => timid(o),
            Betting::Maniac => {
                let facing = o.bets > 0;
                match (facing, o.bets < o.max_bets) {
                    (false, true) => Action::Bet,
                    (false, false) => Action::Check,
                    (true, true) => Action::Raise,
                    (true, false) => Action::Call,
                }
            }
        },
        ZokkenPhase::Over => Action::Check,
    }
}

/// How the heuristic rates its hand against the others still in the round.
enum Standing {
    Ahead,
    Close,
    Behind { margin: f32 },
}

fn standing(o: &ZokkenObservation, betting_round: u8) -> Standing {
    let me = o.seat.index();
    let in_round = || {
        o.seats
            .iter()
            .enumerate()
            .filter(|(_, s)| s.status == ZokkenSeatStatus::InRound)
    };
    if betting_round >= 3 {
        // All throws are done: compare exactly, with the Schlumpf's table rule.
        let kelm = in_round().any(|(_, s)| s.figure == Hand::Kelm);
        let mine = o.seats[me].figure.zokken_table_strength(kelm);
        let best_other = in_round()
            .filter(|&(i, _)| i != me)
            .map(|(_, s)| s.figure.zokken_table_strength(kelm))
            .max()
            .unwrap_or(0);
        return match mine.cmp(&best_other) {
            std::cmp::Ordering::Greater => Standing::Ahead,
            std::cmp::Ordering::Equal => Standing::Close,
            std::cmp::Ordering::Less => Standing::Behind { margin: 1.0 },
        };
    }
    let rerolls_left = (3 - betting_round) as usize;
    let plan = plan();
    let mine = plan.value(o.seats[me].dice, rerolls_left);
    let best_other = in_round()
        .filter(|&(i, _)| i != me)
        .map(|(_, s)| plan.value(s.dice, rerolls_left))
        .fold(0.0f32, f32::max);
    let lead = mine - best_other;
    if lead > LEAD {
        Standing::Ahead
    } else if lead >= -BEHIND {
        Standing::Close
    } else {
        Standing::Behind { margin: -lead }
    }
}

fn bet(o: &ZokkenObservation, betting_round: u8) -> Action {
    let facing = o.bets > 0;
    let can_bet = o.bets < o.max_bets;
    match standing(o, betting_round) {
        Standing::Ahead => match (facing, can_bet) {
            (false, true) => Action::Bet,
            (false, false) => Action::Check,
            (true, true) => Action::Raise,
            (true, false) => Action::Call,
        },
        Standing::Close if facing => Action::Call,
        Standing::Behind { margin } if facing => {
            let odds = o.to_call == 0 || o.pot >= POT_ODDS.saturating_mul(o.to_call);
            if odds && margin <= BEHIND_WITH_ODDS {
                Action::Call
            } else {
                Action::Fold
            }
        }
        _ => Action::Check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_keeps_strong_hands_and_improves_weak_ones() {
        let plan = plan();
        // Kelm (9-3-3: III 9, IV 3, V 3) is kept whole.
        let kelm = outcome_of([9, 3, 3]).unwrap();
        assert_eq!(plan.reroll[0][kelm], 0);
        assert_eq!(plan.reroll[1][kelm], 0);
        assert!(plan.value[2][kelm] > 0.99);
        // Every planned reroll names at most two dice.
        for k in 0..2 {
            assert!(
                plan.reroll[k]
                    .iter()
                    .all(|&bits| (bits as u32).count_ones() <= 2)
            );
        }
        // Rerolling never lowers the expected value below keeping all.
        for outcome in 0..OUTCOMES {
            assert!(plan.value[1][outcome] + 1e-6 >= plan.value[2][outcome]);
            assert!(plan.value[0][outcome] + 1e-6 >= plan.value[1][outcome]);
        }
        assert_eq!(outcome_of([4, 4, 4]), None);
    }
}
