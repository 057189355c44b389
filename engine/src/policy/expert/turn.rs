//! The exact turn solver of Schocken and Sjokken: expectimax over the rest of one turn for a
//! payoff on the turn's final hand and throws used.
//!
//! A turn is solved on *canonical* states: the order of the dice does not matter, only the
//! multiset of the dice that may still be rerolled (`free`), the number of ones locked by
//! turning (`locked`), how many sixes the last throw rolled (they may be turned) and whether
//! it rolled all three dice (`straight_in_one_throw`). Every reroll outcome is enumerated as
//! a multiset with its multinomial probability, every legal turn and keep is tried, and the
//! payoff is minimised (it is a loss: see [`super::shake`]).
//!
//! This file is longer than most (about 930 lines): the solver and its compiled form
//! ([`Graph`]) must form the same sums in the same order to give the same bits, so they are
//! kept side by side with the test that checks one against the other.

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
    pub(crate) fn with(mut self, die: u8) -> Multi {
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
    pub(crate) fn union(self, other: Multi) -> Multi {
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
    pub(crate) fn without_sixes(mut self, m: u8) -> Multi {
        for _ in 0..m {
            self.n -= 1;
            self.d[self.n as usize] = 0;
        }
        self
    }

    /// With `m` ones added.
    #[inline]
    pub(crate) fn with_ones(self, m: u8) -> Multi {
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

/// The ways to stop in a state, as payoff indices: the first without turning, then those
/// turning `m` sixes (what [`Solver::best_stop`] compares, in its order).
#[derive(Copy, Clone, Debug)]
struct Stop {
    first: u32,
    turns: [(u32, u8); 2],
    len: u8,
}

impl Stop {
    fn of(hands: &Hands, s: &State) -> Stop {
        let index =
            |hand: Multi| (hands.strength_index(hand, s.all_rolled) * 3 + s.t as usize - 1) as u32;
        let mut stop = Stop {
            first: index(s.free.with_ones(s.locked)),
            turns: [(0, 0); 2],
            len: 0,
        };
        let round_ends = hands.sjokken && s.free.with_ones(s.locked).dice() == [1, 1, 1];
        if round_ends || !(hands.sjokken || hands.turn_on_last_throw) {
            return stop;
        }
        for m in 1..=max_turn(hands, s) {
            stop.turns[stop.len as usize] =
                (index(s.free.without_sixes(m).with_ones(s.locked + m)), m);
            stop.len += 1;
        }
        stop
    }

    /// [`Solver::best_stop`]: the least loss of stopping and the sixes turned for it.
    #[inline]
    fn best(&self, payoff: &[f64]) -> (f64, u8) {
        let mut best = (payoff[self.first as usize], 0);
        for &(index, m) in &self.turns[..self.len as usize] {
            let v = payoff[index as usize];
            if v < best.0 - 1e-12 {
                best = (v, m);
            }
        }
        best
    }
}

/// [`Solver::max_turn`].
fn max_turn(hands: &Hands, s: &State) -> u8 {
    if s.turnable < 2 || (hands.sjokken && s.t != 1) {
        0
    } else if hands.sjokken || s.turnable == 2 {
        1
    } else {
        2
    }
}

/// A state of [`Graph`] before the last throw: its stop, and its rerolls
/// (`options[first..end]`); none when the round ends in it.
#[derive(Copy, Clone, Debug)]
struct Node {
    stop: Stop,
    first: u32,
    end: u32,
}

/// One reroll of a node: turn `turn` sixes, keep `keep`, and throw the rest, worth the
/// expected value of [`Graph::lasts`] or [`Graph::groups`] entry `target`.
#[derive(Copy, Clone, Debug)]
struct Opt {
    turn: u8,
    keep: Multi,
    last: bool,
    target: u32,
}

/// The turn solver compiled for one variant's hands and one throw limit: every state, every
/// reroll and every outcome enumerated once, so that solving for a payoff only adds and
/// compares numbers. It computes exactly what [`Solver::solve`] computes, in the same order
/// (the same sums, the same comparisons), so its choices are the same; the tests check it.
pub(crate) struct Graph {
    limit: u8,
    /// A unique number (the evaluation scratch of a thread follows one graph at a time).
    id: u32,
    /// `node_of[memo_index(s)]`: the node of state `s` (`u32::MAX`: none).
    node_of: Vec<u32>,
    nodes: Vec<Node>,
    options: Vec<Opt>,
    /// Throwing before the last throw: `(first, end)` into `edges`, by group.
    groups: Vec<(u32, u32)>,
    /// `(probability, node)`, in the order of [`outcomes`].
    edges: Vec<(f64, u32)>,
    /// The last throw, by the dice kept with the locked ones: `(first, end)` into
    /// `last_edges` (indexed by the kept dice's code; empty when unused).
    lasts: Vec<(u32, u32)>,
    last_edges: Vec<(f64, Stop)>,
    /// `lasts_plain[code]`: no stop of that last throw may turn sixes (each is worth its
    /// payoff entry `first`, what [`Stop::best`] returns for it).
    lasts_plain: Vec<bool>,
}

impl Graph {
    /// Compiles every state a turn of `hands` can be in before throw `limit` (1..=3).
    pub(crate) fn new(hands: &Hands, limit: u8) -> Graph {
        use std::sync::atomic::{AtomicU32, Ordering};
        static IDS: AtomicU32 = AtomicU32::new(1);
        let mut g = Graph {
            limit,
            id: IDS.fetch_add(1, Ordering::Relaxed),
            node_of: vec![u32::MAX; MEMO],
            nodes: Vec::new(),
            options: Vec::new(),
            groups: Vec::new(),
            edges: Vec::new(),
            lasts: vec![(0, 0); 343],
            last_edges: Vec::new(),
            lasts_plain: vec![false; 343],
        };
        let mut group_of = std::collections::HashMap::new();
        for t in 1..limit {
            for locked in 0..=2u8 {
                for code in 0..343 {
                    let free = Multi::from_code(code);
                    if free.len() + locked as usize != 3 || free.dice().contains(&0) {
                        continue;
                    }
                    for turnable in 0..=free.sixes().min(3) {
                        for all_rolled in [false, true] {
                            let s = State {
                                t,
                                locked,
                                free,
                                turnable,
                                all_rolled,
                            };
                            g.node(hands, &s, &mut group_of);
                        }
                    }
                }
            }
        }
        g
    }

    /// The node of `s` (t < limit), compiled with everything it leads to if new.
    fn node(
        &mut self,
        hands: &Hands,
        s: &State,
        group_of: &mut std::collections::HashMap<(u8, u8, usize, usize), u32>,
    ) -> u32 {
        let index = memo_index(s);
        if self.node_of[index] != u32::MAX {
            return self.node_of[index];
        }
        let id = self.nodes.len() as u32;
        self.node_of[index] = id;
        self.nodes.push(Node {
            stop: Stop::of(hands, s),
            first: 0,
            end: 0,
        });
        let round_ends = hands.sjokken && s.free.with_ones(s.locked).dice() == [1, 1, 1];
        let mut opts = Vec::new();
        if !round_ends {
            let mut keeps = [Multi::default(); 8];
            for m in 0..=max_turn(hands, s) {
                let free = s.free.without_sixes(m);
                let locked = s.locked + m;
                let len = free.proper_subsets(&mut keeps);
                for &keep in &keeps[..len] {
                    let n = free.len() - keep.len();
                    let t = s.t + 1;
                    let (last, target) = if t >= self.limit {
                        (true, self.last(hands, t, keep.with_ones(locked), n) as u32)
                    } else {
                        (false, self.group(hands, t, locked, keep, n, group_of))
                    };
                    opts.push(Opt {
                        turn: m,
                        keep,
                        last,
                        target,
                    });
                }
            }
        }
        let first = self.options.len() as u32;
        self.options.extend(opts);
        let node = &mut self.nodes[id as usize];
        node.first = first;
        node.end = self.options.len() as u32;
        id
    }

    /// The group of throwing `n` dice as throw `t` (< limit), keeping `keep` and `locked`
    /// ones (what [`Solver::reroll_value`] sums over).
    fn group(
        &mut self,
        hands: &Hands,
        t: u8,
        locked: u8,
        keep: Multi,
        n: usize,
        group_of: &mut std::collections::HashMap<(u8, u8, usize, usize), u32>,
    ) -> u32 {
        let key = (t, locked, keep.code(), n);
        if let Some(&g) = group_of.get(&key) {
            return g;
        }
        let mut edges = Vec::new();
        for &(roll, p) in outcomes(n) {
            let s = State {
                t,
                locked,
                free: keep.union(roll),
                turnable: turnable(roll),
                all_rolled: n == 3,
            };
            edges.push((p, self.node(hands, &s, group_of)));
        }
        let first = self.edges.len() as u32;
        self.edges.extend(edges);
        let g = self.groups.len() as u32;
        self.groups.push((first, self.edges.len() as u32));
        group_of.insert(key, g);
        g
    }

    /// The last throw (`t` = limit) of `n` dice with `kept` (the locked ones included).
    fn last(&mut self, hands: &Hands, t: u8, kept: Multi, n: usize) -> usize {
        let code = kept.code();
        if self.lasts[code] != (0, 0) {
            return code;
        }
        let first = self.last_edges.len() as u32;
        for &(roll, p) in outcomes(n) {
            let s = State {
                t,
                locked: 0,
                free: kept.union(roll),
                turnable: turnable(roll),
                all_rolled: n == 3,
            };
            self.last_edges.push((p, Stop::of(hands, &s)));
        }
        self.lasts[code] = (first, self.last_edges.len() as u32);
        self.lasts_plain[code] = self.last_edges[first as usize..]
            .iter()
            .all(|(_, stop)| stop.len == 0);
        code
    }

    /// [`Solver::solve`] of `s` for `payoff` (with [`Hands`] and throw limit of this graph),
    /// or `None` for a state the graph does not hold (not one a turn can be in).
    pub(crate) fn solve(
        &self,
        hands: &Hands,
        payoff: &[f64],
        s: &State,
        eval: &mut Eval,
    ) -> Option<(f64, Choice)> {
        let round_ends = hands.sjokken && s.free.with_ones(s.locked).dice() == [1, 1, 1];
        if s.t >= self.limit || round_ends {
            let (v, turn) = Stop::of(hands, s).best(payoff);
            return Some((v, Choice::Stop { turn }));
        }
        let node = *self.node_of.get(memo_index(s))?;
        if node == u32::MAX {
            return None;
        }
        let eval = eval.begin(self, payoff);
        let (v, option) = self.node_value(node, payoff, eval);
        let choice = match option {
            u32::MAX => Choice::Stop {
                turn: self.nodes[node as usize].stop.best(payoff).1,
            },
            k => {
                let opt = self.options[k as usize];
                Choice::Reroll {
                    turn: opt.turn,
                    keep: opt.keep,
                }
            }
        };
        Some((v, choice))
    }

    /// The value of a node and its best option (`u32::MAX`: stop).
    fn node_value(&self, id: u32, payoff: &[f64], eval: &mut EvalSet) -> (f64, u32) {
        let (stamp, v, option) = eval.nodes[id as usize];
        if stamp == eval.stamp {
            return (v, option);
        }
        let node = self.nodes[id as usize];
        let mut best = (node.stop.best(payoff).0, u32::MAX);
        for k in node.first..node.end {
            let opt = self.options[k as usize];
            let v = if opt.last {
                self.last_value(opt.target as usize, payoff, eval)
            } else {
                self.group_value(opt.target as usize, payoff, eval)
            };
            if v < best.0 - 1e-12 {
                best = (v, k);
            }
        }
        eval.nodes[id as usize] = (eval.stamp, best.0, best.1);
        best
    }

    fn group_value(&self, g: usize, payoff: &[f64], eval: &mut EvalSet) -> f64 {
        let (first, end) = self.groups[g];
        memoized(
            eval,
            |e| &mut e.groups[g],
            |eval| {
                let mut sum = 0.0;
                for &(p, node) in &self.edges[first as usize..end as usize] {
                    sum += p * self.node_value(node, payoff, eval).0;
                }
                sum
            },
        )
    }

    fn last_value(&self, code: usize, payoff: &[f64], eval: &mut EvalSet) -> f64 {
        let (first, end) = self.lasts[code];
        memoized(
            eval,
            |e| &mut e.lasts[code],
            |_| {
                let edges = &self.last_edges[first as usize..end as usize];
                let mut sum = 0.0;
                if self.lasts_plain[code] {
                    for (p, stop) in edges {
                        sum += p * payoff[stop.first as usize];
                    }
                } else {
                    for (p, stop) in edges {
                        sum += p * stop.best(payoff).0;
                    }
                }
                sum
            },
        )
    }
}

/// Stamped values of the nodes, groups and last throws of the [`Graph`]s solved on (one
/// set per graph, reused from solve to solve, so a solve clears nothing). A value is a
/// function of the graph and the payoff alone, so a solve for the same payoff as the last
/// one on its graph (to the bit: the same seat's next decision in a turn) keeps the values
/// that one computed.
#[derive(Default)]
pub(crate) struct Eval {
    sets: Vec<EvalSet>,
}

/// The value in `eval`'s `cell` if this solve computed it already, else `compute`d and kept
/// there for the rest of the solve.
fn memoized(
    eval: &mut EvalSet,
    cell: impl Fn(&mut EvalSet) -> &mut (u32, f64),
    compute: impl FnOnce(&mut EvalSet) -> f64,
) -> f64 {
    let (stamp, v) = *cell(eval);
    if stamp == eval.stamp {
        return v;
    }
    let v = compute(eval);
    let stamp = eval.stamp;
    *cell(eval) = (stamp, v);
    v
}

struct EvalSet {
    graph: u32,
    stamp: u32,
    /// The payoff the values of `stamp` are for (empty before the first solve).
    payoff: Vec<f64>,
    nodes: Vec<(u32, f64, u32)>,
    groups: Vec<(u32, f64)>,
    lasts: Vec<(u32, f64)>,
}

impl Eval {
    /// The set of `graph`, ready to solve for `payoff`: the values of an earlier solve are
    /// kept when it was for the same payoff (bit for bit), else forgotten.
    fn begin(&mut self, graph: &Graph, payoff: &[f64]) -> &mut EvalSet {
        let i = match self.sets.iter().position(|e| e.graph == graph.id) {
            Some(i) => i,
            None => {
                self.sets.push(EvalSet {
                    graph: graph.id,
                    stamp: 0,
                    payoff: Vec::new(),
                    nodes: vec![(0, 0.0, 0); graph.nodes.len()],
                    groups: vec![(0, 0.0); graph.groups.len()],
                    lasts: vec![(0, 0.0); 343],
                });
                self.sets.len() - 1
            }
        };
        let e = &mut self.sets[i];
        let same = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        if e.stamp != 0 && same(&e.payoff, payoff) {
            return e;
        }
        e.payoff.clear();
        e.payoff.extend_from_slice(payoff);
        e.stamp = e.stamp.wrapping_add(1);
        if e.stamp == 0 {
            e.nodes.fill((0, 0.0, 0));
            e.groups.fill((0, 0.0));
            e.lasts.fill((0, 0.0));
            e.stamp = 1;
        }
        e
    }
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

    /// The compiled graph solves exactly as the solver: the same value (to the bit) and the
    /// same choice, for every state of every throw limit, under random payoffs, in Schocken
    /// variants and Sjokken.
    #[test]
    fn the_graph_solves_as_the_solver() {
        use super::super::tables::{Variant, model};
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        for bits in [0u8, 1, 2, 8, 15, 16] {
            let sjokken = bits == 16;
            let variant = Variant {
                sjokken,
                jule: !sjokken && bits & 1 != 0,
                straight_in_one_throw: !sjokken && bits & 2 != 0,
                ties_by_throws: !sjokken && bits & 4 == 0,
                turn_on_last_throw: sjokken || bits & 8 != 0,
                tokens: 13,
            };
            let h = &model(variant).hands;
            let mut scratch = Scratch::default();
            let mut eval = Eval::default();
            for limit in 1..=3u8 {
                let graph = Graph::new(h, limit);
                for round in 0..4 {
                    // Some payoffs with ties, to exercise the tolerance.
                    let payoff: Vec<f64> = (0..h.strengths * 3)
                        .map(|_| {
                            if round == 0 {
                                (random() * 4.0).floor() / 4.0
                            } else {
                                random()
                            }
                        })
                        .collect();
                    for t in 1..=3u8 {
                        for locked in 0..=2u8 {
                            for code in 0..343 {
                                let free = Multi::from_code(code);
                                if free.len() + locked as usize != 3 || free.dice().contains(&0) {
                                    continue;
                                }
                                for turnable in 0..=free.sixes() {
                                    for all_rolled in [false, true] {
                                        let s = State {
                                            t,
                                            locked,
                                            free,
                                            turnable,
                                            all_rolled,
                                        };
                                        let want =
                                            Solver::new(h, &payoff, limit, &mut scratch).solve(&s);
                                        let got =
                                            graph.solve(h, &payoff, &s, &mut eval).expect("a node");
                                        assert_eq!(
                                            got.0.to_bits(),
                                            want.0.to_bits(),
                                            "{bits} {limit} {s:?}"
                                        );
                                        assert_eq!(got.1, want.1, "{bits} {limit} {s:?}");
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
