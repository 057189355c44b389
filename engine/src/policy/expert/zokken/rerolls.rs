//! The reroll arithmetic of the Zokken expert: the means of a table of values over every
//! reroll, the best of the rerolls of an outcome, and the choice with one or two rerolls to
//! come.
//!
//! Every sum here is the sum the expert's first solver formed, from 0.0 and with its terms
//! in the same order, every maximum its maximum (see [`two_rerolls`] for the one taken in
//! another grouping) and every choice its choice, so the values are the same to the bit (the
//! tests check it against that solver): only fewer of them are formed (with two rerolls to
//! come, the best of the rerolls only at the 91 outcomes the choice now can lead to, not at
//! all 216), in loops the compiler can vectorise.

use crate::policy::zokken::{OUTCOMES, REROLLS};

/// How many outcomes a reroll of `bits` has: 6^k, exact.
pub(super) fn count(bits: u8) -> f64 {
    [1.0, 6.0, 36.0, 216.0][bits.count_ones() as usize]
}

/// The face indices `(a, b, c)` of an outcome: `o = a * 36 + b * 6 + c`.
fn faces(o: usize) -> (usize, usize, usize) {
    (o / 36, o / 6 % 6, o % 6)
}

/// The mean of `next` over each set of rerolled dice, per kept faces: the six candidates of
/// every outcome's reroll besides keeping all three dice.
pub(super) struct RerollMeans {
    s0: [[f64; 6]; 6], // slot 0 rerolled: by (b, c)
    s1: [[f64; 6]; 6], // slot 1: by (a, c)
    s2: [[f64; 6]; 6], // slot 2: by (a, b)
    s01: [f64; 6],     // slots 0, 1: by c
    s02: [f64; 6],     // slots 0, 2: by b
    s12: [f64; 6],     // slots 1, 2: by a
}

impl RerollMeans {
    /// Sums each mean of `next` from 0.0, its terms (`v / 6` or `v / 36`) in the order of
    /// one pass over the outcomes (`a`, then `b`, then `c`); several sums side by side where
    /// they run along the same die.
    pub(super) fn of(next: &[f64; OUTCOMES]) -> RerollMeans {
        let sixth: [f64; OUTCOMES] = std::array::from_fn(|o| next[o] / 6.0);
        let thirty_sixth: [f64; OUTCOMES] = std::array::from_fn(|o| next[o] / 36.0);
        let mut m = RerollMeans {
            s0: [[0.0; 6]; 6],
            s1: [[0.0; 6]; 6],
            s2: [[0.0; 6]; 6],
            s01: [0.0; 6],
            s02: [0.0; 6],
            s12: [0.0; 6],
        };
        let mut s0 = [0.0; 36];
        for a in 0..6 {
            let six: &[f64; 36] = sixth[a * 36..][..36].try_into().expect("36");
            let thirty: &[f64; 36] = thirty_sixth[a * 36..][..36].try_into().expect("36");
            // Side by side: over every (b, c), then over every c.
            for (s, v) in s0.iter_mut().zip(six) {
                *s += v;
            }
            let mut s1 = [0.0; 6];
            for b in 0..6 {
                for c in 0..6 {
                    s1[c] += six[b * 6 + c];
                    m.s01[c] += thirty[b * 6 + c];
                }
            }
            m.s1[a] = s1;
            // Along the last die, several sums side by side (no long chain of additions
            // each waiting for the last).
            let mut s2 = [0.0; 6];
            for c in 0..6 {
                for b in 0..6 {
                    s2[b] += six[b * 6 + c];
                    m.s02[b] += thirty[b * 6 + c];
                }
            }
            m.s2[a] = s2;
        }
        for bc in 0..36 {
            for a in 0..6 {
                m.s12[a] += thirty_sixth[a * 36 + bc];
            }
        }
        for (row, sums) in m.s0.iter_mut().zip(s0.chunks_exact(6)) {
            row.copy_from_slice(sums);
        }
        m
    }

    /// The best expected `next` over the rerolls of each of the six outcomes `(a, b, 0..6)`,
    /// side by side, into `out`: keeping all three dice (`next` itself), then rerolling slot
    /// 0, 1, 2, slots 0 and 1, 0 and 2, 1 and 2; the larger wins (no NaN here; of equal
    /// values the first).
    #[inline(always)]
    fn best_of_row(&self, next: &[f64; OUTCOMES], a: usize, b: usize, out: &mut [f64]) {
        let row: &[f64; 6] = next[a * 36 + b * 6..][..6].try_into().expect("6");
        let out: &mut [f64; 6] = out.try_into().expect("6");
        let (s0, s1, s01) = (&self.s0[b], &self.s1[a], &self.s01);
        let (s2, s02, s12) = (self.s2[a][b], self.s02[b], self.s12[a]);
        for c in 0..6 {
            let mut best = row[c];
            best = larger(best, s0[c]);
            best = larger(best, s1[c]);
            best = larger(best, s2);
            best = larger(best, s01[c]);
            best = larger(best, s02);
            out[c] = larger(best, s12);
        }
    }
}

/// `v` if it is larger than `best`, else `best` (the first of equal values).
#[inline]
fn larger(best: f64, v: f64) -> f64 {
    if v > best { v } else { best }
}

/// `out[o]`: the best expected `next` over the rerolls of `o` (one reroll to come), for every
/// outcome at once: the mean over each set of rerolled dice is summed once per kept faces.
pub(super) fn best_of_rerolls(next: &[f64; OUTCOMES], out: &mut [f64; OUTCOMES]) {
    let m = RerollMeans::of(next);
    for (i, row) in out.chunks_exact_mut(6).enumerate() {
        m.best_of_row(next, i / 6, i % 6, row);
    }
}

/// The best reroll of `o = (fa, fb, fc)` and its expected value (the mean of a table over
/// the outcomes it can lead to), from that table at those outcomes in three blocks of 36:
/// `first(b, c)` at `(fa, b, c)`, `second(a, c)` at `(a, fb, c)`, `third(a, b)` at
/// `(a, b, fc)`. The rerolls in the order of [`REROLLS`], each sum from 0.0 in the
/// order of [`reachable`](crate::policy::zokken::reachable), the first of means equal
/// within 1e-12.
#[inline(always)]
fn choose(
    o: usize,
    first: impl Fn(usize, usize) -> f64,
    second: impl Fn(usize, usize) -> f64,
    third: impl Fn(usize, usize) -> f64,
) -> (f64, u8) {
    let (_, fb, fc) = faces(o);
    let mut sums = [0.0f64; REROLLS.len()];
    sums[0] += first(fb, fc);
    for a in 0..6 {
        sums[1] += second(a, fc);
    }
    for b in 0..6 {
        sums[2] += first(b, fc);
    }
    for c in 0..6 {
        sums[3] += first(fb, c);
    }
    for x in 0..6 {
        for y in 0..6 {
            sums[4] += third(x, y);
        }
    }
    for x in 0..6 {
        for y in 0..6 {
            sums[5] += second(x, y);
        }
    }
    for x in 0..6 {
        for y in 0..6 {
            sums[6] += first(x, y);
        }
    }
    let mut best = (f64::MIN, 0u8);
    for (sum, bits) in sums.into_iter().zip(REROLLS) {
        let v = sum / count(bits);
        if v > best.0 + 1e-12 {
            best = (v, bits);
        }
    }
    best
}

/// The best reroll of `o` with one reroll to come and the expected final `value` under it.
pub(super) fn one_reroll(value: &[f64; OUTCOMES], o: usize) -> (f64, u8) {
    let (fa, fb, fc) = faces(o);
    choose(
        o,
        |b, c| value[fa * 36 + b * 6 + c],
        |a, c| value[a * 36 + fb * 6 + c],
        |a, b| value[a * 36 + b * 6 + fc],
    )
}

/// The best reroll of `o` with two rerolls to come, and the expected final `value` when
/// both are chosen best: what [`best_of_rerolls`] and then [`one_reroll`] of its result
/// give, the best of the rerolls formed only where the reroll now can lead.
///
/// The best of the seven candidates of each outcome is taken with the candidates that are
/// the same for a whole row or column of a block compared among themselves once: the
/// same maximum, to the bit. The outcome's own value comes first and wins ties as before;
/// the means are sums from 0.0 of values that are not NaN, so no mean is -0.0, and values
/// that are equal and not zero have the same bits.
pub(super) fn two_rerolls(value: &[f64; OUTCOMES], o: usize) -> (f64, u8) {
    let m = RerollMeans::of(value);
    let (fa, fb, fc) = faces(o);
    let (mut first, mut second, mut third) = ([0.0; 36], [0.0; 36], [0.0; 36]);
    let larger3 = |x, y, z| larger(larger(x, y), z);
    // (fa, b, c): by c, slot 1 and slots 0 and 1; by b, slot 2, slots 0 and 2, 1 and 2.
    let by_c: [f64; 6] = std::array::from_fn(|c| larger(m.s1[fa][c], m.s01[c]));
    let by_b: [f64; 6] = std::array::from_fn(|b| larger3(m.s2[fa][b], m.s02[b], m.s12[fa]));
    fill(&mut first, &by_b, &by_c, |b, c| {
        larger(value[fa * 36 + b * 6 + c], m.s0[b][c])
    });
    // (a, fb, c): by c, slot 0 and slots 0 and 1; by a, slot 2, slots 0 and 2, 1 and 2.
    let by_c: [f64; 6] = std::array::from_fn(|c| larger(m.s0[fb][c], m.s01[c]));
    let by_a: [f64; 6] = std::array::from_fn(|a| larger3(m.s2[a][fb], m.s02[fb], m.s12[a]));
    fill(&mut second, &by_a, &by_c, |a, c| {
        larger(value[a * 36 + fb * 6 + c], m.s1[a][c])
    });
    // (a, b, fc): by b, slot 0, slots 0 and 1, 0 and 2; by a, slot 1, slots 1 and 2.
    let by_b: [f64; 6] = std::array::from_fn(|b| larger3(m.s0[b][fc], m.s01[fc], m.s02[b]));
    let by_a: [f64; 6] = std::array::from_fn(|a| larger(m.s1[a][fc], m.s12[a]));
    for a in 0..6 {
        for b in 0..6 {
            third[a * 6 + b] = if a == fa {
                first[b * 6 + fc]
            } else if b == fb {
                second[a * 6 + fc]
            } else {
                let own = larger(value[a * 36 + b * 6 + fc], m.s2[a][b]);
                larger(larger(own, by_b[b]), by_a[a])
            };
        }
    }
    choose(
        o,
        |b, c| first[b * 6 + c],
        |a, c| second[a * 6 + c],
        |a, b| third[a * 6 + b],
    )
}

/// `out[x * 6 + y]`: the larger of `own(x, y)`, then `by_y[y]`, then `by_x[x]`.
#[inline(always)]
fn fill(out: &mut [f64; 36], by_x: &[f64; 6], by_y: &[f64; 6], own: impl Fn(usize, usize) -> f64) {
    for x in 0..6 {
        for y in 0..6 {
            out[x * 6 + y] = larger(larger(own(x, y), by_y[y]), by_x[x]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::zokken::reachable;

    /// The solver's first form: the means summed in one pass over the outcomes, the
    /// maximum taken by `f64::max`.
    fn reference_best(next: &[f64; OUTCOMES], out: &mut [f64; OUTCOMES]) {
        let (mut s0, mut s1, mut s2) = ([[0.0f64; 6]; 6], [[0.0f64; 6]; 6], [[0.0f64; 6]; 6]);
        let (mut s01, mut s02, mut s12) = ([0.0f64; 6], [0.0f64; 6], [0.0f64; 6]);
        for a in 0..6 {
            for b in 0..6 {
                for c in 0..6 {
                    let v = next[a * 36 + b * 6 + c];
                    let (sixth, thirty_sixth) = (v / 6.0, v / 36.0);
                    s0[b][c] += sixth;
                    s1[a][c] += sixth;
                    s2[a][b] += sixth;
                    s01[c] += thirty_sixth;
                    s02[b] += thirty_sixth;
                    s12[a] += thirty_sixth;
                }
            }
        }
        for a in 0..6 {
            for b in 0..6 {
                for c in 0..6 {
                    let o = a * 36 + b * 6 + c;
                    out[o] = [s0[b][c], s1[a][c], s2[a][b], s01[c], s02[b], s12[a]]
                        .into_iter()
                        .fold(next[o], f64::max);
                }
            }
        }
    }

    /// The solver's first form of the choice: every reroll's reachable outcomes in turn.
    fn reference_choice(next: &[f64; OUTCOMES], o: usize) -> (f64, u8) {
        let mut best = (f64::MIN, 0u8);
        for bits in REROLLS {
            let mut sum = 0.0;
            reachable(o, bits, |x| sum += next[x]);
            let v = sum / count(bits);
            if v > best.0 + 1e-12 {
                best = (v, bits);
            }
        }
        best
    }

    /// Random tables of values in [0, 1), every third with many zeros and ties.
    fn tables() -> impl Iterator<Item = [f64; OUTCOMES]> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        (0..300).map(move |round| {
            std::array::from_fn(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = (x >> 11) as f64 / (1u64 << 53) as f64;
                if round % 3 == 0 {
                    (v * 4.0).floor() / 4.0
                } else {
                    v
                }
            })
        })
    }

    fn bits(v: (f64, u8)) -> (u64, u8) {
        (v.0.to_bits(), v.1)
    }

    #[test]
    fn the_best_of_the_rerolls_is_the_first_solvers_to_the_bit() {
        for next in tables() {
            let (mut got, mut want) = ([0.0; OUTCOMES], [0.0; OUTCOMES]);
            best_of_rerolls(&next, &mut got);
            reference_best(&next, &mut want);
            assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits));
        }
    }

    #[test]
    fn the_choices_are_the_first_solvers_to_the_bit() {
        for value in tables() {
            let mut next = [0.0; OUTCOMES];
            reference_best(&value, &mut next);
            for o in 0..OUTCOMES {
                assert_eq!(
                    bits(one_reroll(&value, o)),
                    bits(reference_choice(&value, o))
                );
                assert_eq!(
                    bits(two_rerolls(&value, o)),
                    bits(reference_choice(&next, o))
                );
            }
        }
    }
}
