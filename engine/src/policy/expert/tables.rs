//! The tables of the Schocken and Sjokken expert that are computed once per variant and
//! shared by every expert in the process: the hands of all dice ([`Hands`]) and the model
//! of the players still to come in a round ([`Model`]).
//!
//! The model: a player with `j` players after them, who faces a worst hand of rank `w` so
//! far in the round, plays the turn that minimises their chance of being the loser (the same
//! objective the expert has, see [`super::shake`]). Ending above `w` makes them safe (somebody
//! is already worse); ending at or below `w` makes them the worst so far, and then they lose
//! exactly when all `j` players after them end above them. So with `A_j(r)`, the chance that
//! `j` players in a row, each facing the worst rank `r`, all end above `r`:
//!
//! - `A_0(r) = 1`;
//! - the loss of a player with `j` after them, facing `w`, for a final of rank `r`:
//!   `[r <= w] * A_j(r)`; [`Layer`] `j` solves that turn exactly for every `w` and records
//!   `p_j(w)`, the chance that it ends above `w` (and not with a SJOK1, which voids the
//!   round), and the distribution of its final hands above `w`;
//! - `A_{j+1}(r) = A_j(r) * p_j(r)`.
//!
//! Layers are built on demand (a match of `n` seats needs `n - 1`) and kept for good.

use std::sync::{Arc, Mutex, OnceLock};

use super::turn::{Graph, Multi, Scratch, Solver};
use crate::hand::Hand;

/// The settings that change how a Schocken or Sjokken turn is played or scored.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Variant {
    /// Sjokken (else Schocken).
    pub sjokken: bool,
    /// Schocken `jule`.
    pub jule: bool,
    /// Schocken `straight_in_one_throw`.
    pub straight_in_one_throw: bool,
    /// Equal hands are ordered by throws used first (Schocken's default).
    pub ties_by_throws: bool,
    /// Schocken `turn_on_last_throw` (turning and stopping); always on in Sjokken.
    pub turn_on_last_throw: bool,
    /// The game's token count (what a Schock out is worth).
    pub tokens: u8,
}

/// The hands of a variant: a strength index for every multiset of three dice.
pub(crate) struct Hands {
    /// Sjokken (else Schocken).
    pub sjokken: bool,
    /// Sixes may be turned when stopping (Sjokken, or Schocken's `turn_on_last_throw`).
    pub turn_on_last_throw: bool,
    /// Equal hands are ordered by throws used first.
    pub ties_by_throws: bool,
    /// `index[all_rolled][code]`: the strength index (0 = weakest) of a full multiset.
    index: [[u8; 343]; 2],
    /// Distinct strengths.
    pub strengths: usize,
    /// The tokens each strength index moves when it is the round's best hand.
    pub values: Vec<f64>,
    /// The strength index of SJOK1 (Sjokken).
    pub sjok1: Option<usize>,
}

impl Hands {
    fn new(v: Variant) -> Hands {
        let hand = |dice: [u8; 3], all_rolled: bool| {
            if v.sjokken {
                Hand::sjokken(dice)
            } else {
                Hand::schocken(dice, v.jule, !v.straight_in_one_throw || all_rolled)
            }
        };
        let mut all = Vec::new();
        for code in 0..343 {
            let m = Multi::from_code(code);
            if m.len() == 3 && m.dice().iter().all(|&d| d >= 1) {
                let dice = [m.dice()[0], m.dice()[1], m.dice()[2]];
                for all_rolled in [false, true] {
                    all.push((code, all_rolled, hand(dice, all_rolled)));
                }
            }
        }
        let mut strengths: Vec<(u32, Hand)> =
            all.iter().map(|&(_, _, h)| (h.strength(), h)).collect();
        strengths.sort_by_key(|&(s, _)| s);
        strengths.dedup_by_key(|&mut (s, _)| s);
        let mut index = [[0u8; 343]; 2];
        for &(code, all_rolled, h) in &all {
            let s = strengths.partition_point(|&(x, _)| x < h.strength());
            index[all_rolled as usize][code] = s as u8;
        }
        Hands {
            sjokken: v.sjokken,
            turn_on_last_throw: v.sjokken || v.turn_on_last_throw,
            ties_by_throws: v.ties_by_throws && !v.sjokken,
            index,
            strengths: strengths.len(),
            values: strengths
                .iter()
                .map(|&(_, h)| h.value(v.tokens) as f64)
                .collect(),
            sjok1: strengths.iter().position(|&(_, h)| h == Hand::Sjok1),
        }
    }

    /// The strength index of three dice.
    #[inline]
    pub(crate) fn strength_index(&self, hand: Multi, all_rolled: bool) -> usize {
        self.index[all_rolled as usize][hand.code()] as usize
    }

    /// The rank of a final (strength index, throws used): higher is better; a later
    /// player with an equal rank is worse.
    #[inline]
    pub(crate) fn rank(&self, s: usize, t: u8) -> usize {
        if self.ties_by_throws {
            s * 3 + (3 - t as usize)
        } else {
            s
        }
    }

    /// The strength index of a rank.
    #[inline]
    pub(crate) fn strength_of_rank(&self, r: usize) -> usize {
        if self.ties_by_throws { r / 3 } else { r }
    }

    /// How many ranks there are.
    pub(crate) fn ranks(&self) -> usize {
        if self.ties_by_throws {
            self.strengths * 3
        } else {
            self.strengths
        }
    }

    /// The throws of a rank, when ties count them.
    fn rank_throws(&self, r: usize) -> Option<u8> {
        self.ties_by_throws.then(|| 3 - (r % 3) as u8)
    }
}

/// Layer `j` of the model for one throw limit (see the module doc).
pub(crate) struct Layer {
    /// `A_{j+1}(r)`, by rank.
    pub a_next: Vec<f64>,
    /// `p_j(w)`, by rank.
    pub p: Vec<f64>,
    /// `cond[w * strengths + s]`: the chance of ending with strength `s` above `w`.
    pub cond: Vec<f64>,
}

/// The hands and the model of one variant.
pub(crate) struct Model {
    /// The hands.
    pub hands: Hands,
    /// Layers built so far, per throw limit 1..=3.
    layers: Mutex<[Vec<Arc<Layer>>; 3]>,
    /// The starter's payoff by players after them (built on demand).
    starter: Mutex<Vec<Option<Arc<Vec<f64>>>>>,
    /// The turn solver compiled per throw limit 1..=3 (built on demand).
    graphs: [OnceLock<Graph>; 3],
    /// What an earlier turn's view says of its final, by [`view_key`] (built on demand).
    views: Box<[OnceLock<ViewDist>]>,
}

/// The final of an earlier turn as a player sees it (hidden dice uniformly random).
pub(crate) struct ViewDist {
    /// The chance of each rank.
    pub mass: Vec<f64>,
    /// `at_least[r]`: the chance of rank `r` or above (summed from the top rank down).
    pub at_least: Vec<f64>,
}

/// What a view of a turn says of its final, in 12 bits: its dice sorted (a hidden one as
/// 0), whether it rolled all three, its throws (1..=3). Dice and throws out of range give
/// `None`.
pub(crate) fn view_key(dice: [Option<u8>; 3], all_rolled: bool, throws: u8) -> Option<u16> {
    let mut d = dice.map(|d| d.unwrap_or(0) as u16);
    if d.iter().any(|&x| x > 6) {
        return None;
    }
    d.sort_unstable();
    Some(
        d[0] | d[1] << 3 | d[2] << 6 | (all_rolled as u16) << 9 | (throws.clamp(1, 3) as u16) << 10,
    )
}

/// The model of `variant`, built once per process.
pub(crate) fn model(variant: Variant) -> Arc<Model> {
    static MODELS: Mutex<Vec<(Variant, Arc<Model>)>> = Mutex::new(Vec::new());
    let mut models = MODELS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, m)) = models.iter().find(|(v, _)| *v == variant) {
        return m.clone();
    }
    let m = Arc::new(Model {
        hands: Hands::new(variant),
        layers: Mutex::new(Default::default()),
        starter: Mutex::new(Vec::new()),
        graphs: Default::default(),
        views: (0..1 << 12).map(|_| OnceLock::new()).collect(),
    });
    models.push((variant, m.clone()));
    m
}

impl Model {
    /// The distribution of the final of a view with key `key` ([`view_key`]).
    pub(crate) fn view(&self, key: u16) -> &ViewDist {
        self.views[key as usize & 0xfff].get_or_init(|| {
            let h = &self.hands;
            let ranks = h.ranks();
            let d = [key & 7, key >> 3 & 7, key >> 6 & 7].map(|x| x as u8);
            let all_rolled = key >> 9 & 1 != 0;
            let throws = (key >> 10 & 3) as u8;
            let hidden: Vec<usize> = (0..3).filter(|&i| d[i] == 0).collect();
            let known = d.map(|x| if x == 0 { 1 } else { x });
            let ways = 6usize.pow(hidden.len() as u32);
            let mut mass = vec![0.0f64; ranks];
            for i in 0..ways {
                let mut d = known;
                for (k, &slot) in hidden.iter().enumerate() {
                    d[slot] = (i / 6usize.pow(k as u32) % 6) as u8 + 1;
                }
                let s = h.strength_index(Multi::of(&d), all_rolled);
                mass[h.rank(s, throws.clamp(1, 3))] += 1.0 / ways as f64;
            }
            let mut at_least = vec![0.0f64; ranks];
            let mut sum = 0.0;
            for r in (0..ranks).rev() {
                sum += mass[r];
                at_least[r] = sum;
            }
            ViewDist { mass, at_least }
        })
    }

    /// The turn solver compiled for throw limit `limit` (1..=3).
    pub(crate) fn graph(&self, limit: u8) -> &Graph {
        self.graphs[limit.clamp(1, 3) as usize - 1]
            .get_or_init(|| Graph::new(&self.hands, limit.clamp(1, 3)))
    }

    /// Layers `0..=j` for throw limit `limit` (1..=3), building those missing.
    pub(crate) fn layer(&self, limit: u8, j: usize) -> Arc<Layer> {
        let mut layers = self.layers.lock().unwrap_or_else(|e| e.into_inner());
        let list = &mut layers[limit as usize - 1];
        while list.len() <= j {
            let a = match list.last() {
                Some(last) => last.a_next.clone(),
                None => vec![1.0; self.hands.ranks()],
            };
            list.push(Arc::new(self.build_layer(limit, a)));
        }
        list[j].clone()
    }

    /// `A_k(r)` by rank for throw limit `limit`: the chance that `k` players after a player
    /// whose final has rank `r` all end above it.
    pub(crate) fn after(&self, limit: u8, k: usize) -> Option<Arc<Layer>> {
        (k > 0).then(|| self.layer(limit, k - 1))
    }

    fn build_layer(&self, limit: u8, a: Vec<f64>) -> Layer {
        let h = &self.hands;
        let (ranks, ns) = (h.ranks(), h.strengths);
        let mut p = vec![0.0; ranks];
        let mut cond = vec![0.0; ranks * ns];
        let mut payoff = vec![0.0; ns * 3];
        let mut dist = vec![0.0; ns * 3];
        let mut scratch = Scratch::default();
        for w in 0..ranks {
            if h.rank_throws(w).is_some_and(|t| t > limit) {
                continue;
            }
            for s in 0..ns {
                for t in 1..=3 {
                    let r = h.rank(s, t);
                    payoff[s * 3 + t as usize - 1] = if Some(s) == h.sjok1 || r > w {
                        0.0
                    } else {
                        a[r]
                    };
                }
            }
            Solver::new(h, &payoff, limit, &mut scratch).turn_distribution(&mut dist);
            for s in 0..ns {
                if Some(s) == h.sjok1 {
                    continue;
                }
                for t in 1..=limit {
                    if h.rank(s, t) > w {
                        let q = dist[s * 3 + t as usize - 1];
                        p[w] += q;
                        cond[w * ns + s] += q;
                    }
                }
            }
        }
        let a_next = a.iter().zip(&p).map(|(a, p)| a * p).collect();
        Layer { a_next, p, cond }
    }

    /// The starter's loss for each final `s * 3 + t - 1` with `k` players after them: the
    /// chance of being the loser (the `k` players, under throw limit `t`, all end above)
    /// times the expected value of the best of their hands, given that.
    pub(crate) fn starter_payoff(&self, k: usize) -> Arc<Vec<f64>> {
        {
            let cache = self.starter.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(Some(p)) = cache.get(k) {
                return p.clone();
            }
        }
        let h = &self.hands;
        let ns = h.strengths;
        let mut payoff = vec![0.0; ns * 3];
        for t in 1..=3u8 {
            let layers: Vec<Arc<Layer>> = (0..k).map(|j| self.layer(t, j)).collect();
            for s in 0..ns {
                if Some(s) == h.sjok1 || k == 0 {
                    continue;
                }
                let r = h.rank(s, t);
                let a = layers[k - 1].a_next[r];
                if a <= 0.0 {
                    continue;
                }
                // E[value of the best later hand | every later hand above r].
                let mut below = 0.0;
                let mut ev = 0.0;
                let mut cdf = vec![0.0; layers.len()];
                for (x, value) in h.values.iter().enumerate() {
                    let mut all = 1.0;
                    for (c, layer) in cdf.iter_mut().zip(&layers) {
                        *c += layer.cond[r * ns + x] / layer.p[r];
                        all *= c.min(1.0);
                    }
                    ev += (all - below) * value;
                    below = all;
                }
                payoff[s * 3 + t as usize - 1] = a * ev;
            }
        }
        let payoff = Arc::new(payoff);
        let mut cache = self.starter.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() <= k {
            cache.resize(k + 1, None);
        }
        cache[k] = Some(payoff.clone());
        payoff
    }
}
