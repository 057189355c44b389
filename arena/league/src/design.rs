//! Balanced incomplete block designs: tables for a league whose complete round robin is
//! too large.
//!
//! A design of `v` points and blocks (tables) of `k` is **balanced** when every two points
//! lie together in exactly `lambda` blocks (then every point lies in the same number `r` of
//! blocks: `r (k - 1) = lambda (v - 1)`). The complete round robin, all C(v, k) blocks, is
//! one with `lambda = C(v - 2, k - 2)`; [`balanced`] looks for a much smaller one.
//!
//! **Construction.** Designs developed from base blocks under the cyclic group Z_m:
//!
//! - *1-rotational*: points Z_(v-1) and a fixed point ∞; `t` base blocks hold ∞ and `s`
//!   do not, `lambda = t (k - 1)`, `s = t (v - k) / k`;
//! - *cyclic*: points Z_v; `s` base blocks, `lambda (v - 1) = s k (k - 1)`.
//!
//! Every base block is developed by adding each element of Z_m (∞ stays ∞), so the design has
//! `b = (s + t) m` blocks. Every two points meet `lambda` times exactly when every non-zero
//! difference d of Z_m arises `lambda` times as `x - y` for points x ≠ y of one base block
//! (a *difference family*; a base block fixed by some translation gives repeated blocks,
//! which keep the count exact: such a table is simply played twice, with two seeds). The base
//! blocks are found by a local search, *threshold accepting* (Dueck and Scheuer 1990): start
//! from random blocks, then again and again move one point of a random base block to a random
//! place, and keep the move if it worsens the cost (the sum over differences of the squared
//! deviation from `lambda`) by at most a threshold falling from [`THRESHOLD`] to 0; restart
//! after a bounded number of moves. Integers only, driven by SplitMix64 streams with fixed
//! seeds: the design depends on `v` and `k` only, the same on every machine.
//!
//! `lambda` runs through the multiples of the smallest value the necessary conditions
//! allow (`lambda (v - 1) ≡ 0 (mod k - 1)`, `lambda v (v - 1) ≡ 0 (mod k (k - 1))`),
//! 1-rotational before cyclic, as long as the design stays smaller than the complete one. For
//! a prime `v` the *multiplier design* needs no search (`lambda = k (k - 1) / 2`, see
//! `multiplier_design`); it is taken when the search has found nothing with a smaller
//! `lambda`. Every design is checked pair by pair before it is returned.
//!
//! **Bounds.** [`MOVES_PER_TRY`] moves (each O(k)) per 64 points of Z_m, [`TRIES`] tries per
//! candidate, [`CANDIDATES`] candidates: at most 800,000 moves up to 64 bots. Measured
//! (release build, two busy cores; `design_survey` in `design_tests.rs`): at most 0.4 s for
//! any field of up to 64 bots and tables of 3 to 8, at most 1.7 s up to 256 bots. Up to 64
//! bots a design is found for every table of up to 5 seats, and for all but 2 fields at
//! tables of 6, 11 at 7 and 14 at 8.

use super::schedule::splitmix64;

/// Moves of the local search before it restarts, per 64 points of Z_m (or part of 64).
pub const MOVES_PER_TRY: usize = 100_000;
/// Starts of the local search per candidate (`lambda` and construction).
pub const TRIES: u64 = 2;
/// Candidates searched before [`balanced`] gives up (or takes the multiplier design).
pub const CANDIDATES: usize = 4;
/// The largest worsening of the cost the search accepts, at the start of a try.
pub const THRESHOLD: i64 = 3;

/// Which tables a game of a league plays: the league file's `design` key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TableDesign {
    /// The complete round robin, unless the league would then exceed
    /// [`super::schedule::MAX_MATCHES`]: then the balanced design.
    #[default]
    Auto,
    /// Every table of the table size (every table with the challenger, in a gauntlet).
    Complete,
    /// The smallest balanced design [`balanced`] finds; the complete one where none can be
    /// smaller, or none is found and the league still fits in
    /// [`super::schedule::MAX_MATCHES`] (else the schedule is refused).
    Balanced,
}

impl std::str::FromStr for TableDesign {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "complete" => Ok(Self::Complete),
            "balanced" => Ok(Self::Balanced),
            other => Err(format!(
                "unknown design {}: designs are \"auto\", \"complete\" and \"balanced\"",
                knobel_engine::quoted(other)
            )),
        }
    }
}

/// A balanced design: `blocks` of `k` points of `0..v`, each sorted, the list sorted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Design {
    /// How often every two points meet.
    pub lambda: u64,
    /// The blocks.
    pub blocks: Vec<Vec<usize>>,
}

/// What [`balanced`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Balanced {
    /// A balanced design smaller than the complete one.
    Design(Design),
    /// No balanced design can be smaller than the complete one: `k <= 2` or `k >= v - 1`
    /// (or every candidate smaller than it is ruled out).
    Complete,
    /// None found within the bounds.
    NotFound,
}

/// A SplitMix64 stream.
struct Stream(u64);

impl Stream {
    fn next(&mut self) -> u64 {
        let out = splitmix64(self.0);
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        out
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// `0..n` shuffled (Fisher-Yates) by the SplitMix64 stream from `seed`.
pub fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = Stream(seed);
    let mut out: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        out.swap(i, rng.below(i + 1));
    }
    out
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn lcm(a: u64, b: u64) -> u64 {
    a / gcd(a, b) * b
}

/// n choose k, saturating.
pub fn choose(n: u128, k: u128) -> u128 {
    if k > n {
        return 0;
    }
    (0..k).fold(1u128, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// The smallest `lambda` the necessary conditions allow for `v` points and blocks of `k`
/// (`2 <= k <= v`); every legal `lambda` is a multiple of it.
pub fn lambda_step(v: usize, k: usize) -> u64 {
    let (v, k) = (v as u64, k as u64);
    let pairs = k * (k - 1);
    lcm(
        (k - 1) / gcd(v - 1, k - 1),
        pairs / gcd(v * (v - 1) % pairs, pairs),
    )
}

/// A difference family to search for: `infinite` base blocks with ∞ and `finite` without,
/// in Z_`m`, each difference `lambda` times.
#[derive(Clone, Copy, Debug)]
struct Family {
    m: usize,
    k: usize,
    infinite: usize,
    finite: usize,
    lambda: u64,
}

impl Family {
    /// The candidates for `lambda`, 1-rotational first.
    fn candidates(v: usize, k: usize, lambda: u64) -> Vec<Family> {
        let (vv, kk) = (v as u64, k as u64);
        let mut out = Vec::new();
        // 1-rotational: lambda = t (k - 1), s = t (v - k) / k.
        if lambda.is_multiple_of(kk - 1) {
            let t = lambda / (kk - 1);
            if (t * (vv - kk)).is_multiple_of(kk) {
                out.push(Family {
                    m: v - 1,
                    k,
                    infinite: t as usize,
                    finite: (t * (vv - kk) / kk) as usize,
                    lambda,
                });
            }
        }
        // Cyclic: lambda (v - 1) = s k (k - 1).
        if (lambda * (vv - 1)).is_multiple_of(kk * (kk - 1)) {
            out.push(Family {
                m: v,
                k,
                infinite: 0,
                finite: (lambda * (vv - 1) / (kk * (kk - 1))) as usize,
                lambda,
            });
        }
        // In Z_m with m even, the difference m / 2 arises in pairs: lambda must be even.
        out.retain(|f| !f.m.is_multiple_of(2) || f.lambda.is_multiple_of(2));
        out
    }

    /// The finite points of base block `i`.
    fn size(&self, i: usize) -> usize {
        if i < self.infinite {
            self.k - 1
        } else {
            self.k
        }
    }

    /// The differences `x - z` and `z - x` of point `x` of a block with its other points
    /// (`skip` is x's place).
    fn differences(&self, block: &[usize], skip: usize, x: usize) -> impl Iterator<Item = usize> {
        let m = self.m;
        block
            .iter()
            .enumerate()
            .filter(move |&(o, _)| o != skip)
            .flat_map(move |(_, &z)| [(x + m - z) % m, (z + m - x) % m])
    }

    /// Searches for base blocks (their finite points) by threshold accepting: a random move
    /// of one point is kept if it worsens the cost by at most a threshold that falls from
    /// [`THRESHOLD`] to 0 over the try. `None` within the bounds.
    fn search(&self, seed: u64) -> Option<Vec<Vec<usize>>> {
        let m = self.m;
        let lambda = self.lambda as i64;
        let count = self.infinite + self.finite;
        let mut rng = Stream(seed);
        for _ in 0..TRIES {
            let mut blocks: Vec<Vec<usize>> = (0..count)
                .map(|i| {
                    let mut b = Vec::with_capacity(self.k);
                    while b.len() < self.size(i) {
                        let x = rng.below(m);
                        if !b.contains(&x) {
                            b.push(x);
                        }
                    }
                    b
                })
                .collect();
            let mut n = vec![0i64; m];
            for b in &blocks {
                for j in 0..b.len() {
                    for d in self.differences(b, j, b[j]).step_by(2) {
                        n[d] += 1;
                    }
                }
            }
            let mut cost: i64 = n[1..].iter().map(|&c| (c - lambda).pow(2)).sum();
            let moves = MOVES_PER_TRY * m.div_ceil(64);
            for step in 0..moves {
                if cost == 0 {
                    return Some(blocks);
                }
                let threshold = THRESHOLD * (moves - step) as i64 / moves as i64;
                let b = &mut blocks[rng.below(count)];
                let j = rng.below(b.len());
                let (x, y) = (b[j], rng.below(m));
                if b.contains(&y) {
                    continue;
                }
                let before = cost;
                for d in self.differences(b, j, x) {
                    n[d] -= 1;
                    cost -= 2 * (n[d] - lambda) + 1;
                }
                for d in self.differences(b, j, y) {
                    cost += 2 * (n[d] - lambda) + 1;
                    n[d] += 1;
                }
                if cost - before <= threshold {
                    b[j] = y;
                } else {
                    for d in self.differences(b, j, y) {
                        n[d] -= 1;
                    }
                    for d in self.differences(b, j, x) {
                        n[d] += 1;
                    }
                    cost = before;
                }
            }
            if cost == 0 {
                return Some(blocks);
            }
        }
        None
    }

    /// The blocks developed from `base`, each sorted, the list sorted (∞ is the point `m`).
    fn develop(&self, base: &[Vec<usize>]) -> Vec<Vec<usize>> {
        let m = self.m;
        let mut blocks = Vec::with_capacity(base.len() * m);
        for (i, b) in base.iter().enumerate() {
            for g in 0..m {
                let mut block: Vec<usize> = b.iter().map(|&x| (x + g) % m).collect();
                if i < self.infinite {
                    block.push(m);
                }
                block.sort_unstable();
                blocks.push(block);
            }
        }
        blocks.sort_unstable();
        blocks
    }
}

/// Whether `blocks` of `k` points of `0..v` meet every two points `lambda` times.
pub fn is_balanced(v: usize, k: usize, lambda: u64, blocks: &[Vec<usize>]) -> bool {
    let mut pairs = vec![0u64; v * v];
    for b in blocks {
        if b.len() != k || b.iter().any(|&x| x >= v) {
            return false;
        }
        for (i, &x) in b.iter().enumerate() {
            for &y in &b[i + 1..] {
                pairs[x.min(y) * v + x.max(y)] += 1;
            }
        }
    }
    (0..v).all(|x| (x + 1..v).all(|y| pairs[x * v + y] == lambda))
}

/// For prime `v`: the cyclic design with the base blocks `a {0, 1, ..., k - 1}`, `a` from 1 to
/// `(v - 1) / 2`, in which every two points meet `lambda = k (k - 1) / 2` times (for each
/// pair of the block exactly one of `a` and `-a` makes it a given difference).
fn multiplier_design(v: usize, k: usize) -> Option<Design> {
    if v < 3
        || (2..v)
            .take_while(|d| d * d <= v)
            .any(|d| v.is_multiple_of(d))
    {
        return None;
    }
    let family = Family {
        m: v,
        k,
        infinite: 0,
        finite: (v - 1) / 2,
        lambda: (k * (k - 1) / 2) as u64,
    };
    let base: Vec<Vec<usize>> = (1..=family.finite)
        .map(|a| (0..k).map(|x| a * x % v).collect())
        .collect();
    let blocks = family.develop(&base);
    ((blocks.len() as u128) < choose(v as u128, k as u128)).then_some(Design {
        lambda: family.lambda,
        blocks,
    })
}

/// The smallest balanced design of `v` points and blocks of `k` (`2 <= k <= v`) that the
/// construction finds, smaller than the complete one.
pub fn balanced(v: usize, k: usize) -> Balanced {
    if k <= 2 || k + 1 >= v {
        return Balanced::Complete;
    }
    let complete = choose(v as u128, k as u128);
    let fallback = multiplier_design(v, k);
    let step = lambda_step(v, k);
    let pairs = (v * (v - 1)) as u128;
    let mut tried = 0;
    let mut lambda = step;
    'lambdas: while u128::from(lambda) * pairs / ((k * (k - 1)) as u128) < complete {
        if fallback.as_ref().is_some_and(|f| f.lambda <= lambda) {
            break;
        }
        for family in Family::candidates(v, k, lambda) {
            if tried == CANDIDATES {
                break 'lambdas;
            }
            tried += 1;
            let seed = ((v as u64) << 32) ^ ((k as u64) << 16) ^ lambda;
            if let Some(base) = family.search(seed) {
                let blocks = family.develop(&base);
                if is_balanced(v, k, lambda, &blocks) {
                    return Balanced::Design(Design { lambda, blocks });
                }
            }
        }
        lambda += step;
    }
    match fallback {
        Some(design) => Balanced::Design(design),
        None if tried == 0 => Balanced::Complete,
        None => Balanced::NotFound,
    }
}
