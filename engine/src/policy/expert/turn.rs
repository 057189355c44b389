//! The exact turn solver of Schocken and Sjokken: expectimax over the rest of one turn for a
//! payoff on the turn's final hand and throws used.
//!
//! A turn is solved on *canonical* states: the order of the dice does not matter, only the
//! multiset of the dice that may still be rerolled (`free`), the number of ones locked by
//! turning (`locked`), how many sixes the last throw rolled (they may be turned) and whether
//! it rolled all three dice (`straight_in_one_throw`). Every reroll outcome is enumerated as
//! a multiset with its multinomial probability, every legal turn and keep is tried, and the
//! payoff is minimised (it is a loss: see [`super::shake`]).

use super::tables::Hands;

/// A multiset of at most three dice, sorted ascending in `d[..n]`, zero after.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct Multi {
    d: [u8; 3],
    n: u8,
}

impl Multi {
    /// The multiset of `dice`.
    pub(crate) fn of(dice: &[u8]) -> Multi {
        let mut m = Multi::default();
        for &die in dice {
            m = m.with(die);
        }
        m
    }

    /// This multiset with `die` added.
    #[inline]
    fn with(mut self, die: u8) -> Multi {
        let mut i = self.n as usize;
        while i > 0 && self.d[i - 1] > die {
            self.d[i] = self.d[i - 1];
            i -= 1;
        }
        self.d[i] = die;
        self.n += 1;
        self
    }

    /// The union of two multisets of at most three dice together.
    #[inline]
    fn union(self, other: Multi) -> Multi {
        let mut m = self;
        for &die in other.dice() {
            m = m.with(die);
        }
        m
    }

    /// The dice, ascending.
    #[inline]
    pub(crate) fn dice(&self) -> &[u8] {
        &self.d[..self.n as usize]
    }

    /// How many dice.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.n as usize
    }

    /// A dense code, 0..343.
    #[inline]
    pub(crate) fn code(&self) -> usize {
        self.d[0] as usize * 49 + self.d[1] as usize * 7 + self.d[2] as usize
    }

    /// The multiset of a code.
    pub(crate) fn from_code(code: usize) -> Multi {
        let d = [(code / 49) as u8, (code / 7 % 7) as u8, (code % 7) as u8];
        Multi {
            d,
            n: d.iter().filter(|&&x| x > 0).count() as u8,
        }
    }

    /// Sixes in it.
    #[inline]
    fn sixes(&self) -> u8 {
        self.dice().iter().filter(|&&x| x == 6).count() as u8
    }

    /// Without `m` of its sixes (the largest dice).
    #[inline]
    fn without_sixes(mut self, m: u8) -> Multi {
        for _ in 0..m {
            self.n -= 1;
            self.d[self.n as usize] = 0;
        }
        self
    }

    /// With `m` ones added.
    #[inline]
    fn with_ones(self, m: u8) -> Multi {
        (0..m).fold(self, |acc, _| acc.with(1))
    }

    /// Its distinct proper sub-multisets (what may be kept when at least one die is
    /// rerolled), the empty one included.
    fn proper_subsets(&self, out: &mut [Multi; 8]) -> usize {
        let n = self.n as usize;
        let mut len = 0;
        for bits in 0..(1u8 << n) - 1 {
            let mut m = Multi::default();
            for i in 0..n {
                if bits & (1 << i) != 0 {
                    m = m.with(self.d[i]);
                }
            }
            if !out[..len].contains(&m) {
                out[len] = m;
                len += 1;
            }
        }
        len
    }
}

/// The outcomes of rolling `n` dice (1..=3) as multisets, with their probabilities.
pub(crate) fn outcomes(n: usize) -> &'static [(Multi, f64)] {
    use std::sync::OnceLock;
    static TABLE: OnceLock<[Vec<(Multi, f64)>; 4]> = OnceLock::new();
    &TABLE.get_or_init(|| {
        let mut table: [Vec<(Multi, f64)>; 4] = Default::default();
        for (n, list) in table.iter_mut().enumerate().skip(1) {
            let total = 6usize.pow(n as u32);
            for i in 0..total {
                let dice: Vec<u8> = (0..n)
                    .map(|k| (i / 6usize.pow(k as u32) % 6) as u8 + 1)
                    .collect();
                let m = Multi::of(&dice);
                match list.iter_mut().find(|(x, _)| *x == m) {
                    Some((_, p)) => *p += 1.0 / total as f64,
                    None => list.push((m, 1.0 / total as f64)),
                }
            }
        }
        table
    })[n]
}

/// Where a turn stands after a throw, up to the order of the dice.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct State {
    /// Throws used, 1..=3.
    pub t: u8,
    /// Ones locked by turning earlier this turn.
    pub locked: u8,
    /// The dice that may be rerolled (3 - `locked` of them).
    pub free: Multi,
    /// Sixes the last throw rolled, when they may be turned now (else 0).
    pub turnable: u8,
    /// Whether the last throw rolled all three dice.
    pub all_rolled: bool,
}

/// A decision: turn `turn` of the turnable sixes, then stop or keep `keep` (of the other
/// free dice) and reroll the rest.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Turn `turn` sixes and stop.
    Stop { turn: u8 },
    /// Turn `turn` sixes, keep `keep`, reroll the other free dice.
    Reroll { turn: u8, keep: Multi },
}

impl Choice {
    pub(crate) fn pack(self) -> u16 {
        match self {
            Choice::Stop { turn } => 0x8000 | turn as u16,
            Choice::Reroll { turn, keep } => (turn as u16) << 9 | keep.code() as u16,
        }
    }

    pub(crate) fn unpack(bits: u16) -> Choice {
        if bits & 0x8000 != 0 {
            Choice::Stop {
                turn: (bits & 3) as u8,
            }
        } else {
            Choice::Reroll {
                turn: (bits >> 9) as u8,
                keep: Multi::from_code((bits & 0x1ff) as usize),
            }
        }
    }
}

/// Intermediate states: throws 1..=2 × locked 0..=2 × free code × turnable 0..=3 × all.
const MEMO: usize = 2 * 3 * 343 * 4 * 2;

/// Reusable memo tables for [`Solver`] (stamped, so a new solve needs no clearing;
/// allocated by the first solve, so that an expert that never solves costs nothing).
#[derive(Default)]
pub(crate) struct Scratch {
    stamp: u32,
    memo: Vec<(u32, f64, u16)>,
    last: Vec<(u32, f64)>,
}

/// One turn to solve: the hands of the variant, the payoff of each final (strength index
/// `s`, throws `t`) at `payoff[s * 3 + t - 1]` (a loss: lower is better), and the most
/// throws the player may use.
pub(crate) struct Solver<'a> {
    hands: &'a Hands,
    payoff: &'a [f64],
    limit: u8,
    scratch: &'a mut Scratch,
}

impl<'a> Solver<'a> {
    /// A solver; the scratch's memo is invalidated.
    pub(crate) fn new(
        hands: &'a Hands,
        payoff: &'a [f64],
        limit: u8,
        scratch: &'a mut Scratch,
    ) -> Solver<'a> {
        if scratch.memo.is_empty() {
            scratch.memo = vec![(0, 0.0, 0); MEMO];
            scratch.last = vec![(0, 0.0); 343];
        }
        scratch.stamp = scratch.stamp.wrapping_add(1);
        if scratch.stamp == 0 {
            scratch.memo.fill((0, 0.0, 0));
            scratch.last.fill((0, 0.0));
            scratch.stamp = 1;
        }
        Solver {
            hands,
            payoff,
            limit,
            scratch,
        }
    }

    /// The payoff index of stopping with `hand` (all three dice) after throw `t`.
    #[inline]
    fn final_index(&self, hand: Multi, t: u8, all_rolled: bool) -> usize {
        self.hands.strength_index(hand, all_rolled) * 3 + t as usize - 1
    }

    /// The most sixes that may be turned now.
    #[inline]
    fn max_turn(&self, s: &State) -> u8 {
        if s.turnable < 2 || (self.hands.sjokken && s.t != 1) {
            0
        } else if self.hands.sjokken || s.turnable == 2 {
            1
        } else {
            2
        }
    }

    /// Whether the turn ends without a decision (Sjokken's SJOK1 on a public throw).
    #[inline]
    fn round_ends(&self, s: &State) -> bool {
        self.hands.sjokken && s.free.with_ones(s.locked).dice() == [1, 1, 1]
    }

    /// The best way to stop in `s` (turning allowed sixes where stopping allows it).
    fn best_stop(&self, s: &State) -> (f64, u8) {
        let mut best = (
            self.payoff[self.final_index(s.free.with_ones(s.locked), s.t, s.all_rolled)],
            0,
        );
        if self.round_ends(s) || !(self.hands.sjokken || self.hands.turn_on_last_throw) {
            return best;
        }
        for m in 1..=self.max_turn(s) {
            let hand = s.free.without_sixes(m).with_ones(s.locked + m);
            let v = self.payoff[self.final_index(hand, s.t, s.all_rolled)];
            if v < best.0 - 1e-12 {
                best = (v, m);
            }
        }
        best
    }

    /// The expected loss of `s` under optimal play, and the optimal choice.
    pub(crate) fn solve(&mut self, s: &State) -> (f64, Choice) {
        if s.t >= self.limit || self.round_ends(s) {
            let (v, turn) = self.best_stop(s);
            return (v, Choice::Stop { turn });
        }
        let index = memo_index(s);
        let (stamp, v, choice) = self.scratch.memo[index];
        if stamp == self.scratch.stamp {
            return (v, Choice::unpack(choice));
        }
        let (stop, stop_turn) = self.best_stop(s);
        let mut best = (stop, Choice::Stop { turn: stop_turn });
        let mut keeps = [Multi::default(); 8];
        for m in 0..=self.max_turn(s) {
            let free = s.free.without_sixes(m);
            let locked = s.locked + m;
            let len = free.proper_subsets(&mut keeps);
            for &keep in &keeps[..len] {
                let v = self.reroll_value(s.t + 1, locked, keep, free.len() - keep.len());
                if v < best.0 - 1e-12 {
                    best = (v, Choice::Reroll { turn: m, keep });
                }
            }
        }
        self.scratch.memo[index] = (self.scratch.stamp, best.0, best.1.pack());
        best
    }

    /// The expected loss of throwing `n` dice as throw `t`, keeping `keep` and `locked` ones.
    fn reroll_value(&mut self, t: u8, locked: u8, keep: Multi, n: usize) -> f64 {
        if t >= self.limit {
            // The last throw: only the kept dice with the locked ones matter.
            let kept = keep.with_ones(locked);
            let (stamp, v) = self.scratch.last[kept.code()];
            if stamp == self.scratch.stamp {
                return v;
            }
            let mut sum = 0.0;
            for &(roll, p) in outcomes(n) {
                let s = State {
                    t,
                    locked: 0,
                    free: kept.union(roll),
                    turnable: turnable(roll),
                    all_rolled: n == 3,
                };
                sum += p * self.best_stop(&s).0;
            }
            self.scratch.last[kept.code()] = (self.scratch.stamp, sum);
            return sum;
        }
        let mut sum = 0.0;
        for &(roll, p) in outcomes(n) {
            let s = State {
                t,
                locked,
                free: keep.union(roll),
                turnable: turnable(roll),
                all_rolled: n == 3,
            };
            sum += p * self.solve(&s).0;
        }
        sum
    }

    /// Adds to `dist[s * 3 + t - 1]` the probability `p` times the chance of each final of
    /// optimal play from `s`.
    pub(crate) fn spread(&mut self, s: &State, p: f64, dist: &mut [f64]) {
        let (_, choice) = self.solve(s);
        match choice {
            Choice::Stop { turn } => {
                let hand = s.free.without_sixes(turn).with_ones(s.locked + turn);
                dist[self.final_index(hand, s.t, s.all_rolled)] += p;
            }
            Choice::Reroll { turn, keep } => {
                let locked = s.locked + turn;
                let n = s.free.len() - turn as usize - keep.len();
                for &(roll, q) in outcomes(n) {
                    let next = State {
                        t: s.t + 1,
                        locked,
                        free: keep.union(roll),
                        turnable: turnable(roll),
                        all_rolled: n == 3,
                    };
                    self.spread(&next, p * q, dist);
                }
            }
        }
    }

    /// The distribution of the finals of optimal play over a whole turn (from its first
    /// throw), indexed as the payoff.
    pub(crate) fn turn_distribution(&mut self, dist: &mut [f64]) {
        dist.fill(0.0);
        for &(roll, p) in outcomes(3) {
            let s = State {
                t: 1,
                locked: 0,
                free: roll,
                turnable: turnable(roll),
                all_rolled: true,
            };
            self.spread(&s, p, dist);
        }
    }
}

/// The sixes of a throw that may be turned (two or more), else 0.
#[inline]
pub(crate) fn turnable(roll: Multi) -> u8 {
    let sixes = roll.sixes();
    if sixes >= 2 { sixes } else { 0 }
}

#[inline]
fn memo_index(s: &State) -> usize {
    ((((s.t as usize - 1) * 3 + s.locked as usize) * 343 + s.free.code()) * 4 + s.turnable as usize)
        * 2
        + s.all_rolled as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_sum_to_one() {
        for n in 1..=3 {
            let total: f64 = outcomes(n).iter().map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-12);
        }
        assert_eq!(outcomes(2).len(), 21);
        assert_eq!(outcomes(3).len(), 56);
    }

    #[test]
    fn multisets_keep_their_dice() {
        let m = Multi::of(&[6, 1, 6]);
        assert_eq!(m.dice(), [1, 6, 6]);
        assert_eq!(Multi::from_code(m.code()), m);
        assert_eq!(m.without_sixes(1).with_ones(1).dice(), [1, 1, 6]);
        let mut subs = [Multi::default(); 8];
        assert_eq!(m.proper_subsets(&mut subs), 5);
    }
}
