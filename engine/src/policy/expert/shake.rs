//! The Schocken and Sjokken expert: after every throw, the exact best play for the rest of
//! the turn.
//!
//! **Objective.** The expert minimises the tokens it expects to receive in the round: the
//! chance of being the round's loser times the tokens the winning hand moves.
//!
//! - A player who is not the starter is the loser when its final is at or below the worst
//!   hand shown before it (a later equal hand is worse; Schocken's default ranks fewer throws
//!   first) and every player after it ends above it. The hands before it are known where they
//!   are face up; a die under the cup (Schocken) or blind (Sjokken) is taken as uniformly
//!   random (the expert reads nothing into a choice to stop). The players after it are the
//!   [`super::tables`] model: each plays this same policy, computed exactly for each worst
//!   hand it may face. The tokens moved are then taken as fixed by the hands already shown,
//!   so the player minimises its chance of being the loser.
//! - The starter has nobody before it; its loss is the chance that all later players end
//!   above it times the expected value of the best of their hands given that, both under the
//!   throw limit its own throws set: the limit it leaves the others is part of its choice.
//! - A SJOK1 counts as not losing (0); Schocken's Schock out moves every token of the game.
//!
//! The loss of every possible final is put into a payoff table and the turn is solved by
//! [`super::turn::Solver`]: exact expectimax over all rerolls, turns and stops the variant
//! and the throw limit allow. In the passing phase (the pot is empty, the seat holds
//! tokens) the payoff is in tokens: being the loser costs the expected value of the best
//! earlier hand, winning gains `min(value, own tokens)` (its chance exact against earlier
//! hands, approximated for later players by the model's `1 - p_j(r)`). The first phase's
//! pot cap (the `min` of RULES.md §1.4) is not part of the objective.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use super::tables::{Hands, Model, Variant, model, view_key};
use super::turn::{Choice, Eval, Multi, Scratch, Solver, State};
use crate::action::Action;
use crate::rules::{Game, Rules};
use crate::shake::{ShakeDecision, ShakeObservation, TurnView};
use crate::types::{DieMask, MAX_SEATS};

/// The rules the expert plays Schocken or Sjokken by: the game's settings that an
/// observation does not show (`turn_on_last_throw` it reads from each decision).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShakeRules {
    jule: bool,
    straight_in_one_throw: bool,
    tie_later_loses: bool,
}

impl ShakeRules {
    /// The settings of `rules` (defaults for Zokken rules).
    pub(crate) fn of(rules: &Rules) -> ShakeRules {
        match rules {
            Rules::Schocken(r) => ShakeRules {
                jule: r.jule,
                straight_in_one_throw: r.straight_in_one_throw,
                tie_later_loses: r.tie_later_loses,
            },
            _ => ShakeRules::default(),
        }
    }
}

impl Default for ShakeRules {
    /// The `schocken` preset's settings.
    fn default() -> ShakeRules {
        ShakeRules {
            jule: false,
            straight_in_one_throw: false,
            tie_later_loses: false,
        }
    }
}

/// The expert's state for Schocken and Sjokken: memo tables and the model in use.
#[derive(Default)]
pub(crate) struct ShakeExpert {
    scratch: Scratch,
    model: Option<(Variant, Arc<Model>)>,
    payoff: Vec<f64>,
}

impl ShakeExpert {
    fn model(&mut self, variant: Variant) -> Arc<Model> {
        match &self.model {
            Some((v, m)) if *v == variant => m.clone(),
            _ => {
                let m = model(variant);
                self.model = Some((variant, m.clone()));
                m
            }
        }
    }

    /// The expert's action for `o`.
    pub(crate) fn decide(&mut self, o: &ShakeObservation, rules: ShakeRules) -> Action {
        let Some(decision) = &o.decision else {
            return Action::STOP;
        };
        let Some(me) = o.turns.get(o.seat.index()) else {
            return Action::STOP;
        };
        let [Some(a), Some(b), Some(c)] = me.dice else {
            return Action::STOP;
        };
        let dice = [a, b, c];
        let Some(pos) = o.turn_order.iter().position(|&s| s == o.seat) else {
            return Action::STOP;
        };
        let variant = variant_of(o, rules, decision);
        let later = o.turn_order.len() - pos - 1;
        let limit = decision.max_throws;
        let starter = pos == 0;
        let locked = decision.locked;
        let state = turn_state(me, decision, dice);
        let key = turn_key(variant, o, pos, later, limit, &state);
        if let Some(key) = key
            && let Some(&bits) = SOLVED.lock().unwrap_or_else(|e| e.into_inner()).get(&key)
        {
            return to_action(Choice::unpack(bits), dice, decision.turnable, locked);
        }
        let model = self.model(variant);
        let starter_payoff;
        let own = o.tokens.get(o.seat.index()).copied().unwrap_or(0) as f64;
        let payoff: &[f64] = if starter && o.pot == 0 && own > 0.0 {
            self.passing_starter_payoff(&model, later, own);
            &self.payoff
        } else if starter {
            starter_payoff = model.starter_payoff(later);
            &starter_payoff
        } else {
            self.non_starter_payoff(&model, o, pos, later, limit);
            &self.payoff
        };
        let choice = solve(&model, payoff, &state, limit, &mut self.scratch);
        if let Some(key) = key {
            let mut solved = SOLVED.lock().unwrap_or_else(|e| e.into_inner());
            if solved.len() >= SOLVED_CAP {
                solved.clear();
            }
            solved.insert(key, choice.pack());
        }
        to_action(choice, dice, decision.turnable, locked)
    }

    /// Fills `self.payoff` for the starter in the passing phase, holding `own` tokens, with
    /// `later` players after it: the starter's payoff minus the chance that every later
    /// player ends below its final (under the limit its throws set) times the tokens it
    /// would pass on.
    fn passing_starter_payoff(&mut self, model: &Model, later: usize, own: f64) {
        let base = model.starter_payoff(later);
        let h = &model.hands;
        self.payoff.clear();
        self.payoff.extend_from_slice(&base);
        for t in 1..=3u8 {
            let layers: Vec<_> = (0..later).map(|j| model.layer(t, j)).collect();
            for s in 0..h.strengths {
                if Some(s) == h.sjok1 || later == 0 {
                    continue;
                }
                let r = h.rank(s, t);
                let below: f64 = layers.iter().map(|l| 1.0 - l.p[r]).product();
                self.payoff[s * 3 + t as usize - 1] -= below * h.values[s].min(own);
            }
        }
    }

    /// Fills `self.payoff` for a player at `pos` in the turn order with `later` players
    /// after it: the chance that every hand before it is at least as good as its final
    /// (its tie-break rank), times the chance that the later players all end above it.
    fn non_starter_payoff(
        &mut self,
        model: &Model,
        o: &ShakeObservation,
        pos: usize,
        later: usize,
        limit: u8,
    ) {
        let h = &model.hands;
        let ranks = h.ranks();
        // survive[r]: the chance that every earlier final is at rank r or above. The
        // earlier views are taken in the order of their keys (the order of `turn_key`), so
        // that the payoff, a product over them, is a function of that key to the bit.
        let mut survive = vec![1.0f64; ranks + 1];
        let (mut keys, n, odd) = earlier_keys(o, pos);
        // best_mass: every earlier seat's distribution by rank, for the passing phase.
        let owned: Vec<Vec<f64>>;
        let mut best_mass: Vec<&[f64]> = Vec::new();
        if odd {
            owned = enumerate_earlier(h, o, pos, &mut survive);
            best_mass.extend(owned.iter().map(|m| &m[..]));
        } else {
            keys[..n].sort_unstable();
            for &key in &keys[..n] {
                let view = model.view(key);
                best_mass.push(&view.mass);
                for (s, a) in survive.iter_mut().zip(&view.at_least) {
                    *s *= a;
                }
            }
        }
        let after = model.after(limit, later);
        let ns = h.strengths;
        self.payoff.clear();
        self.payoff.resize(ns * 3, 0.0);
        // The passing phase (§1.4, the pot is empty): winning the round passes
        // `min(value, own tokens)` on, so the payoff is in tokens: the chance of being the
        // loser times the tokens the best earlier hand moves, minus the chance of winning
        // times the tokens it would pass on.
        let own = o.tokens.get(o.seat.index()).copied().unwrap_or(0) as f64;
        let passing = o.pot == 0 && own > 0.0;
        let (lose_value, beats, later_below) = if passing {
            let (lose_value, beats) = earlier_outlook(h, &best_mass, ranks);
            (lose_value, beats, later_below(model, limit, later, ranks))
        } else {
            (1.0, Vec::new(), Vec::new())
        };
        let loss = |s: usize, r: usize| {
            let a = after.as_ref().map_or(1.0, |l| l.a_next[r]);
            let mut loss = survive[r] * a * lose_value;
            if passing {
                loss -= beats[r] * later_below[r] * h.values[s].min(own);
            }
            loss
        };
        for (s, row) in self.payoff.chunks_exact_mut(3).enumerate() {
            if Some(s) == h.sjok1 {
                continue;
            }
            let row = &mut row[..(limit as usize).min(3)];
            if h.ties_by_throws {
                for (t, cell) in (1..).zip(row) {
                    *cell = loss(s, h.rank(s, t));
                }
            } else {
                // The rank does not depend on the throws: one loss for every throw count.
                row.fill(loss(s, h.rank(s, 1)));
            }
        }
    }
}

/// The view keys of the seats before `pos` in the turn order (their order's), how many
/// there are, and whether a view has none (dice off a die's faces, or more seats than a
/// table has: a hand-made observation).
fn earlier_keys(o: &ShakeObservation, pos: usize) -> ([u16; MAX_SEATS], usize, bool) {
    let mut keys = [0u16; MAX_SEATS];
    let mut n = 0;
    let mut odd = false;
    for &seat in &o.turn_order[..pos] {
        let Some(view) = o.turns.get(seat.index()) else {
            continue;
        };
        match (
            view_key(view.dice, view.rolled == DieMask::ALL, view.throws),
            keys.get_mut(n),
        ) {
            (Some(key), Some(slot)) => {
                *slot = key;
                n += 1;
            }
            _ => odd = true,
        }
    }
    (keys, n, odd)
}

/// Every earlier seat's distribution by rank (the seats before `pos`), each view
/// enumerated as it comes (for a hand-made observation that has no view keys); multiplies
/// `survive[r]` by the chance that the seat's final is at rank r or above.
fn enumerate_earlier(
    h: &Hands,
    o: &ShakeObservation,
    pos: usize,
    survive: &mut [f64],
) -> Vec<Vec<f64>> {
    let ranks = h.ranks();
    let mut owned = Vec::new();
    let mut mass = vec![0.0f64; ranks];
    for &seat in &o.turn_order[..pos] {
        let Some(view) = o.turns.get(seat.index()) else {
            continue;
        };
        mass.fill(0.0);
        let all_rolled = view.rolled == DieMask::ALL;
        let hidden: Vec<usize> = (0..3).filter(|&i| view.dice[i].is_none()).collect();
        let known = view.dice.map(|d| d.unwrap_or(1));
        let ways = 6usize.pow(hidden.len() as u32);
        for i in 0..ways {
            let mut d = known;
            for (k, &slot) in hidden.iter().enumerate() {
                d[slot] = (i / 6usize.pow(k as u32) % 6) as u8 + 1;
            }
            let s = h.strength_index(Multi::of(&d), all_rolled);
            mass[h.rank(s, view.throws.clamp(1, 3))] += 1.0 / ways as f64;
        }
        owned.push(mass.clone());
        // P(rank >= r), as a suffix sum.
        let mut at_least = 0.0;
        for r in (0..ranks).rev() {
            at_least += mass[r];
            survive[r] *= at_least;
        }
    }
    owned
}

/// Per rank r, about the chance that all `later` players end below a final of rank r
/// under throw limit `limit`: each with 1 - p_j(r), the chance it does not end above r
/// when it faces r as the worst hand.
fn later_below(model: &Model, limit: u8, later: usize, ranks: usize) -> Vec<f64> {
    let mut below = vec![1.0f64; ranks];
    for j in 0..later {
        let layer = model.layer(limit, j);
        for (b, p) in below.iter_mut().zip(&layer.p) {
            *b *= 1.0 - p;
        }
    }
    below
}

/// The model variant of observation `o` under `rules`, for `decision`.
fn variant_of(o: &ShakeObservation, rules: ShakeRules, decision: &ShakeDecision) -> Variant {
    let sjokken = o.game == Game::Sjokken;
    let tokens = o.pot as u32 + o.removed as u32 + o.tokens.iter().map(|&t| t as u32).sum::<u32>();
    Variant {
        sjokken,
        jule: !sjokken && rules.jule,
        straight_in_one_throw: !sjokken && rules.straight_in_one_throw,
        ties_by_throws: !sjokken && !rules.tie_later_loses,
        turn_on_last_throw: sjokken || !decision.turn_needs_reroll,
        tokens: tokens.min(u8::MAX as u32) as u8,
    }
}

/// The solver's state of turn `me` at `decision`, its dice `dice`.
fn turn_state(me: &TurnView, decision: &ShakeDecision, dice: [u8; 3]) -> State {
    let locked = decision.locked;
    let (mut free, mut n) = ([0u8; 3], 0);
    for i in (0..3).filter(|&i| !locked.contains(i)) {
        free[n] = dice[i];
        n += 1;
    }
    State {
        t: me.throws,
        locked: locked.len() as u8,
        free: Multi::of(&free[..n]),
        turnable: if decision.max_turn > 0 {
            decision.turnable.len() as u8
        } else {
            0
        },
        all_rolled: me.rolled == DieMask::ALL,
    }
}

/// The best choice at `state` for `payoff` under throw limit `limit`: by the compiled
/// graph of the limit, or (a state no turn can be in, a hand-made observation) by the
/// solver itself.
fn solve(model: &Model, payoff: &[f64], state: &State, limit: u8, scratch: &mut Scratch) -> Choice {
    let solved = if (1..=3).contains(&limit) {
        let mut eval = EVAL.with_borrow_mut(std::mem::take);
        let solved = model
            .graph(limit)
            .solve(&model.hands, payoff, state, &mut eval);
        EVAL.set(eval);
        solved
    } else {
        None
    };
    // A state no turn can be in (a hand-made observation): the solver itself.
    let (_, choice) =
        solved.unwrap_or_else(|| Solver::new(&model.hands, payoff, limit, scratch).solve(state));
    choice
}

thread_local! {
    /// The evaluation scratch of the compiled solver on this thread, reused from expert to
    /// expert and match to match (stamped: a solve forgets what the last one computed).
    static EVAL: std::cell::RefCell<Eval> = std::cell::RefCell::new(Eval::default());
}

/// Solved decisions shared by every expert in the process, by [`turn_key`]: a decision
/// is a function of its key alone, so a hit replays exactly what solving would choose.
static SOLVED: LazyLock<Mutex<Solved>> = LazyLock::new(|| Mutex::new(HashMap::default()));

/// Packed choices by [`turn_key`].
type Solved = HashMap<(u64, u128), u16, KeyHash>;

/// The hasher of [`SOLVED`]: its keys are packed decisions the engine produces, not chosen
/// by an adversary, so a multiply-and-fold mix does instead of SipHash (a fixed function:
/// no random state).
#[derive(Default, Clone, Copy)]
struct KeyHash;

impl std::hash::BuildHasher for KeyHash {
    type Hasher = KeyHasher;
    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(0)
    }
}

/// See [`KeyHash`].
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, x: u64) {
        let m = (self.0 ^ x) as u128 * 0x9e37_79b9_7f4a_7c15u128;
        self.0 = (m as u64) ^ (m >> 64) as u64;
    }

    fn write_u128(&mut self, x: u128) {
        self.write_u64(x as u64);
        self.write_u64((x >> 64) as u64);
    }
}

/// The most entries [`SOLVED`] holds before it starts afresh (about 64 MB at most).
const SOLVED_CAP: usize = 1 << 20;

/// Everything a decision depends on, packed: the variant, the throw limit, the seat's
/// place in the turn order and the players after it, the canonical state of its turn, and
/// what it sees of every earlier turn (the multiset of its visible dice, the hidden ones
/// as 0, whether it rolled all three, its throws), sorted, as the payoff is a product over
/// them. `None` (not cached) past 10 earlier turns.
fn turn_key(
    variant: Variant,
    o: &ShakeObservation,
    pos: usize,
    later: usize,
    limit: u8,
    state: &State,
) -> Option<(u64, u128)> {
    if pos > 10 || later > 255 {
        return None;
    }
    let v = variant.sjokken as u64
        | (variant.jule as u64) << 1
        | (variant.straight_in_one_throw as u64) << 2
        | (variant.ties_by_throws as u64) << 3
        | (variant.turn_on_last_throw as u64) << 4
        | (variant.tokens as u64) << 5;
    let s = state.t as u64
        | (state.locked as u64) << 2
        | (state.free.code() as u64) << 4
        | (state.turnable as u64) << 13
        | (state.all_rolled as u64) << 16;
    let own = o.tokens.get(o.seat.index()).copied().unwrap_or(0) as u64;
    let passing = (o.pot == 0 && own > 0) as u64;
    let header = v
        | (limit as u64) << 13
        | (pos as u64) << 16
        | (later as u64) << 24
        | s << 32
        | passing << 49
        | (own * passing) << 50;
    let mut views = [0u16; 10];
    for (slot, &seat) in views.iter_mut().zip(&o.turn_order[..pos]) {
        // 0 for a seat without a view (skipped by the payoff, as an empty view would be).
        let Some(view) = o.turns.get(seat.index()) else {
            continue;
        };
        let mut d = view.dice.map(|d| d.unwrap_or(0) as u16);
        d.sort_unstable();
        // Never 0: throws count at least 1.
        *slot = d[0]
            | d[1] << 3
            | d[2] << 6
            | ((view.rolled == DieMask::ALL) as u16) << 9
            | (view.throws.clamp(1, 3) as u16) << 10;
    }
    views[..pos].sort_unstable();
    let packed = views
        .iter()
        .fold(0u128, |acc, &x| acc << 12 | (x as u128 & 0xfff));
    Some((header, packed))
}

/// From the earlier seats' distributions by rank (`masses`): the expected value of the best
/// earlier hand (what the loser would receive; at least 1), and by rank `r` the chance that
/// every earlier final is below `r` (a later equal hand is worse, so equal is not below).
fn earlier_outlook(h: &Hands, masses: &[&[f64]], ranks: usize) -> (f64, Vec<f64>) {
    // below[r]: P(every earlier final has rank < r).
    let mut below = vec![1.0f64; ranks + 1];
    for mass in masses {
        let mut cdf = 0.0;
        for r in 0..ranks {
            below[r] *= cdf;
            cdf += mass[r];
        }
        below[ranks] *= cdf;
    }
    // E[value of the best earlier final]: P(best = r) = below[r + 1] - below[r].
    let mut ev = 0.0;
    for r in 0..ranks {
        ev += (below[r + 1] - below[r]) * h.values[h.strength_of_rank(r)];
    }
    below.truncate(ranks);
    (if masses.is_empty() { 1.0 } else { ev.max(1.0) }, below)
}

/// The action of a canonical choice for the seat's `dice`.
fn to_action(choice: Choice, dice: [u8; 3], turnable: DieMask, locked: DieMask) -> Action {
    let pick_turn = |m: u8| {
        turnable
            .slots()
            .take(m as usize)
            .fold(DieMask::EMPTY, |acc, s| acc.union(DieMask::single(s)))
    };
    match choice {
        Choice::Stop { turn } => Action::Stop {
            turn: pick_turn(turn),
        },
        Choice::Reroll { turn, keep } => {
            let turn = pick_turn(turn);
            let mut free = DieMask::ALL.minus(locked).minus(turn);
            for &value in keep.dice() {
                if let Some(slot) = free.slots().find(|&s| dice[s] == value) {
                    free = free.minus(DieMask::single(slot));
                }
            }
            Action::Reroll { dice: free, turn }
        }
    }
}
