//! Anytime-valid confidence sequences on a mean: intervals that hold **at every moment at
//! once**, however often anyone looks at the standings and whenever the league stops.
//!
//! A fixed-sample 95% interval covers the truth 95% of the time when it is read once, after a
//! number of observations fixed in advance. Read after every match, it will sooner or later
//! exclude the truth in most leagues (the law of the iterated logarithm): a league that
//! stops as soon as two bots look different would often stop wrongly. A confidence sequence
//! `C_1, C_2, ...` instead covers the mean at all times simultaneously with probability at
//! least `1 - alpha`, so its verdicts may be read continuously.
//!
//! [`MixtureSequence`] is the Gaussian-mixture (Robbins) boundary with the running variance
//! plugged in: the *asymptotic confidence sequence* of Waudby-Smith, Arnold, Wu, Zhang and
//! Ramdas ("Time-uniform central limit theory and asymptotic confidence sequences", Annals
//! of Statistics 2024, Theorem 2.2), which is the normal-mixture boundary of Howard,
//! Ramdas, McAuliffe and Sekhon ("Time-uniform, nonparametric, nonasymptotic confidence
//! sequences", Annals of Statistics 2021, eq. (14)) scaled by the estimated standard
//! deviation. It needs no bound on the observations (luck-adjusted scores have none) and
//! is valid as the number of observations grows; since its variance is estimated, no
//! verdict is drawn before [`MIN_OBSERVATIONS`] (docs/leagues.md, "Settled standings",
//! measures its error rate under continuous monitoring). The running intersection of the
//! intervals is reported: it is valid whenever every interval is, and never widens.
//!
//! [`BettingSequence`] is for observations known to lie in `[0, 1]` (a raw loss
//! difference mapped there): the hedged betting confidence sequence of Waudby-Smith and
//! Ramdas ("Estimating means of bounded random variables by betting", JRSS B 2024,
//! Theorem 3 with the predictable plug-in bets of their eq. (26)), exact at every sample
//! size. Candidate means are a fixed grid of [`GRID`] points.

/// The error rate of every sequence: 5% (a 95% confidence sequence).
pub const ALPHA: f64 = 0.05;

/// No verdict (separated, equivalent) before this many observations: the mixture
/// sequence estimates the variance, which needs a few observations to be trusted.
pub const MIN_OBSERVATIONS: u64 = 16;

/// The number of observations the mixture sequence is tightest at (its `t*`). The width
/// changes little for `t` within a factor of ten of it.
pub const TARGET_OBSERVATIONS: f64 = 200.0;

/// The weight, in observations, of the variance prior of the mixture sequence: its
/// variance estimate is the sample variance shrunk towards the largest variance the range
/// of the observations so far allows (`(max - min)^2 / 4`), as if this many observations had
/// shown it. Early estimates are then not too small (three equal observations show no
/// variance), and late ones are the sample variance. With 10, simulated under continuous
/// monitoring up to 10,000 observations, the sequence excluded the mean in 2–4% of the
/// paths (loss-like -1/0/1 data, normal, exponential), without it in up to 11%.
pub const VARIANCE_PRIOR: f64 = 10.0;

/// An interval `[low, high]` (infinite ends: no information yet).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Bounds {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

impl Bounds {
    /// The whole real line.
    pub const UNKNOWN: Bounds = Bounds {
        low: f64::NEG_INFINITY,
        high: f64::INFINITY,
    };

    fn intersect(self, other: Bounds) -> Bounds {
        Bounds {
            low: self.low.max(other.low),
            high: self.high.min(other.high),
        }
    }
}

/// The Gaussian-mixture asymptotic confidence sequence on the mean of a sequence of
/// observations (see the module docs), updated one observation at a time.
#[derive(Clone, Debug)]
pub struct MixtureSequence {
    alpha: f64,
    /// `rho^2` of the mixture, tuned for [`TARGET_OBSERVATIONS`].
    rho2: f64,
    n: u64,
    mean: f64,
    /// Sum of squared deviations from the mean (Welford).
    m2: f64,
    /// The smallest and largest observation.
    min: f64,
    max: f64,
    /// The running intersection of the intervals so far.
    running: Bounds,
}

impl Default for MixtureSequence {
    fn default() -> MixtureSequence {
        MixtureSequence::new(ALPHA, TARGET_OBSERVATIONS)
    }
}

impl MixtureSequence {
    /// A sequence with error rate `alpha`, tightest near `target` observations.
    pub fn new(alpha: f64, target: f64) -> MixtureSequence {
        let l = -2.0 * alpha.ln();
        MixtureSequence {
            alpha,
            rho2: (l + (l + 1.0).ln()) / target,
            n: 0,
            mean: 0.0,
            m2: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            running: Bounds::UNKNOWN,
        }
    }

    /// Takes one more observation.
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        if self.n >= MIN_OBSERVATIONS {
            self.running = self.running.intersect(self.current());
        }
    }

    /// Observations taken.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether no observation was taken.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The mean of the observations (NaN before the first).
    pub fn mean(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.mean }
    }

    /// The half-width of the boundary for `t` observations of standard deviation `sd`.
    pub fn half_width(&self, t: f64, sd: f64) -> f64 {
        let v = t * self.rho2 + 1.0;
        sd * (2.0 * v / (t * t * self.rho2) * (v.sqrt() / self.alpha).ln()).sqrt()
    }

    /// The interval at the current observation alone (not intersected with earlier ones).
    /// Its variance is estimated: early intervals can be far too narrow (a few equal
    /// observations give none), which is why [`MixtureSequence::bounds`] starts at
    /// [`MIN_OBSERVATIONS`].
    pub fn current(&self) -> Bounds {
        if self.n < 2 {
            return Bounds::UNKNOWN;
        }
        let n = self.n as f64;
        let widest = (self.max - self.min).powi(2) / 4.0;
        let sd = ((self.m2 + VARIANCE_PRIOR * widest) / (n + VARIANCE_PRIOR)).sqrt();
        let half = self.half_width(self.n as f64, sd);
        Bounds {
            low: self.mean - half,
            high: self.mean + half,
        }
    }

    /// The running intersection of the intervals from [`MIN_OBSERVATIONS`] on: the
    /// confidence sequence read (unknown before).
    pub fn bounds(&self) -> Bounds {
        self.running
    }
}

/// Candidate means of the betting sequence: `0, 1/(GRID-1), ..., 1`.
pub const GRID: usize = 201;

/// The hedged betting confidence sequence on the mean of observations in `[0, 1]` (see the
/// module docs).
#[derive(Clone, Debug)]
pub struct BettingSequence {
    alpha: f64,
    /// Per candidate mean `m`: the log capital of betting for and against `m`.
    log_up: Vec<f64>,
    log_down: Vec<f64>,
    n: u64,
    /// Running sums for the predictable plug-in bet: sum of x, sum of (x - mean)^2.
    sum: f64,
    sum_sq_dev: f64,
}

impl Default for BettingSequence {
    fn default() -> BettingSequence {
        BettingSequence::new(ALPHA)
    }
}

impl BettingSequence {
    /// A sequence with error rate `alpha`.
    pub fn new(alpha: f64) -> BettingSequence {
        BettingSequence {
            alpha,
            log_up: vec![0.0; GRID],
            log_down: vec![0.0; GRID],
            n: 0,
            sum: 0.0,
            sum_sq_dev: 0.0,
        }
    }

    /// The predictable plug-in bet size before the next observation (their eq. (26)):
    /// `sqrt(2 log(2/alpha) / (var * t log(t + 1)))`, at most 1/2.
    fn bet(&self) -> f64 {
        let t = (self.n + 1) as f64;
        let var = (0.25 + self.sum_sq_dev) / t;
        (2.0 * (2.0 / self.alpha).ln() / (var * t * (t + 1.0).ln()))
            .sqrt()
            .min(0.5)
    }

    /// Takes one more observation (clamped into `[0, 1]`).
    pub fn push(&mut self, x: f64) {
        let x = x.clamp(0.0, 1.0);
        let lambda = self.bet();
        for (i, (up, down)) in self.log_up.iter_mut().zip(&mut self.log_down).enumerate() {
            let m = i as f64 / (GRID - 1) as f64;
            // The bet size truncated so that the capital stays positive (their (27)).
            let l_up = lambda.min(0.5 / m.max(1e-12));
            let l_down = lambda.min(0.5 / (1.0 - m).max(1e-12));
            *up += (1.0 + l_up * (x - m)).ln();
            *down += (1.0 - l_down * (x - m)).ln();
        }
        // The plug-in mean and variance include a prior of one observation of 1/2.
        let t = (self.n + 1) as f64;
        let old_mean = (0.5 + self.sum) / t;
        self.n += 1;
        self.sum += x;
        self.sum_sq_dev += (x - old_mean).powi(2);
    }

    /// Observations taken.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether no observation was taken.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The interval now: every grid mean whose hedged capital
    /// `max(up / 2, down / 2)` stays below `1 / alpha`, widened by one grid step on each
    /// side (the grid's resolution). The capital never resets, so the interval is the
    /// intersection of every earlier one's set of candidates.
    pub fn bounds(&self) -> Bounds {
        let threshold = (1.0 / self.alpha).ln() + 2f64.ln();
        let kept: Vec<usize> = (0..GRID)
            .filter(|&i| self.log_up[i].max(self.log_down[i]) < threshold)
            .collect();
        let step = 1.0 / (GRID - 1) as f64;
        match (kept.first(), kept.last()) {
            (Some(&lo), Some(&hi)) => Bounds {
                low: (lo as f64 * step - step).max(0.0),
                high: (hi as f64 * step + step).min(1.0),
            },
            // Every candidate rejected: only possible if the data are not in [0, 1] or the
            // 5% happened; report the mean's neighbourhood.
            _ => {
                let m = self.sum / self.n.max(1) as f64;
                Bounds { low: m, high: m }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng, rngs::SmallRng};

    /// Howard et al. (2021) eq. (14), the two-sided normal-mixture boundary for a sum `S_t`
    /// of unit-variance observations at intrinsic time `V = t`, mixture precision `p`:
    /// `|S_t| <= sqrt((V + p) log((V + p) / (p alpha^2)))`. Written out independently.
    fn howard_half_width(t: f64, p: f64, alpha: f64) -> f64 {
        ((t + p) * ((t + p) / (p * alpha * alpha)).ln()).sqrt() / t
    }

    #[test]
    fn the_mixture_boundary_is_howards_normal_mixture() {
        let s = MixtureSequence::default();
        // Their precision p is 1 / rho^2 of the Waudby-Smith et al. form.
        let p = 1.0 / s.rho2;
        for t in [2.0, 10.0, 100.0, 1_000.0, 1e6] {
            let ours = s.half_width(t, 1.0);
            let theirs = howard_half_width(t, p, ALPHA);
            assert!(
                (ours - theirs).abs() < 1e-12 * theirs,
                "t = {t}: {ours} vs {theirs}"
            );
        }
        // rho^2 for t* = 200 and alpha = 0.05, by hand: (5.99146 + ln 6.99146) / 200.
        assert!((s.rho2 - (5.991_464_547 + 1.944_691_5) / 200.0).abs() < 1e-8);
        // At t = t* the width is about 3.0 standard errors (a fixed interval's is 1.96):
        // sqrt((200 + p) ln((200 + p) / (p alpha^2)) / 200) with p = 25.2.
        let at_target = s.half_width(200.0, 1.0) * 200f64.sqrt();
        assert!((3.0..3.1).contains(&at_target), "{at_target}");
    }

    #[test]
    fn the_mixture_sequence_of_known_data() {
        let mut s = MixtureSequence::default();
        for x in [1.0, -1.0, 1.0, -1.0] {
            s.push(x);
        }
        // Mean 0, standard deviation 1 (over n), and the range's widest variance is 1 too:
        // the interval is +- the boundary at t = 4.
        let b = s.current();
        let half = howard_half_width(4.0, 1.0 / s.rho2, ALPHA);
        assert!((b.high - half).abs() < 1e-12 && (b.low + half).abs() < 1e-12);
        assert_eq!(s.len(), 4);
        assert!(s.mean().abs() < 1e-15);
    }

    #[test]
    fn the_running_intersection_never_widens() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut s = MixtureSequence::default();
        let mut last = Bounds::UNKNOWN;
        for _ in 0..500 {
            s.push(rng.random::<f64>());
            let b = s.bounds();
            assert!(b.low >= last.low && b.high <= last.high);
            last = b;
        }
        assert!(last.low < 0.5 && last.high > 0.5, "{last:?}");
    }

    /// The fraction of `paths` sequences of `steps` observations from `draw` (mean `mu`)
    /// whose sequence ever excludes `mu` after [`MIN_OBSERVATIONS`].
    fn miscoverage(mu: f64, paths: u32, steps: u32, draw: &mut dyn FnMut() -> f64) -> f64 {
        let mut missed = 0;
        for _ in 0..paths {
            let mut s = MixtureSequence::default();
            for _ in 0..steps {
                s.push(draw());
                let b = s.bounds();
                if s.len() >= MIN_OBSERVATIONS && !(b.low <= mu && mu <= b.high) {
                    missed += 1;
                    break;
                }
            }
        }
        f64::from(missed) / f64::from(paths)
    }

    #[test]
    fn the_mixture_sequence_covers_under_continuous_monitoring() {
        let mut rng = SmallRng::seed_from_u64(11);
        // A skewed, lumpy distribution like a loss difference: -1, 0, 1 with 0.2, 0.5, 0.3.
        let mut lumpy = || {
            let u: f64 = rng.random();
            if u < 0.2 {
                -1.0
            } else if u < 0.7 {
                0.0
            } else {
                1.0
            }
        };
        let rate = miscoverage(0.1, 400, 2_000, &mut lumpy);
        assert!(
            rate <= 0.05,
            "lumpy: excluded the mean in {rate} of the paths"
        );
        let mut rng = SmallRng::seed_from_u64(12);
        let mut gauss = || {
            // A sum of 12 uniforms minus 6: close to a standard normal.
            (0..12).map(|_| rng.random::<f64>()).sum::<f64>() - 6.0
        };
        let rate = miscoverage(0.0, 400, 2_000, &mut gauss);
        assert!(
            rate <= 0.05,
            "normal: excluded the mean in {rate} of the paths"
        );
    }

    #[test]
    fn the_mixture_sequence_separates_a_real_difference() {
        let mut rng = SmallRng::seed_from_u64(13);
        let mut s = MixtureSequence::default();
        for _ in 0..2_000 {
            s.push(rng.random::<f64>() - 0.4);
        }
        assert!(s.bounds().low > 0.0, "{:?}", s.bounds());
    }

    #[test]
    fn the_betting_sequence_of_known_data() {
        // Independent computation: the capital of betting against m = 0.9 on ten zeros is
        // prod (1 - lambda_i (0 - 0.9)) with the plug-in bets; recompute it here.
        let mut s = BettingSequence::default();
        let (mut sum, mut sq, mut log_up_09) = (0.0f64, 0.0f64, 0.0f64);
        for i in 0..10u32 {
            let t = f64::from(i + 1);
            let var = (0.25 + sq) / t;
            let lambda = (2.0 * (2.0 / ALPHA).ln() / (var * t * (t + 1.0).ln()))
                .sqrt()
                .min(0.5);
            // Against m: the "down" capital, bet truncated at 0.5 / (1 - m) = 5.
            log_up_09 += (1.0 + lambda * 0.9).ln();
            let mean = (0.5 + sum) / t;
            sq += (0.0 - mean).powi(2);
            sum += 0.0;
            s.push(0.0);
        }
        let i = (0.9 * (GRID - 1) as f64).round() as usize;
        assert!((s.log_down[i] - log_up_09).abs() < 1e-12);
        // Ten zeros rule out a mean of 0.9 (capital far above 2 / alpha) but not 0.
        let b = s.bounds();
        assert_eq!(b.low, 0.0);
        assert!(b.high < 0.9, "{b:?}");
    }

    #[test]
    fn the_betting_sequence_covers_and_separates() {
        let mut rng = SmallRng::seed_from_u64(21);
        let mut missed = 0;
        for _ in 0..200 {
            let mut s = BettingSequence::default();
            for _ in 0..500 {
                s.push(f64::from(u8::from(rng.random::<f64>() < 0.3)));
                let b = s.bounds();
                if !(b.low <= 0.3 && 0.3 <= b.high) {
                    missed += 1;
                    break;
                }
            }
        }
        assert!(missed <= 10, "excluded the mean in {missed} of 200 paths");
        let mut s = BettingSequence::default();
        for _ in 0..500 {
            s.push(f64::from(u8::from(rng.random::<f64>() < 0.3)));
        }
        let b = s.bounds();
        assert!(b.high < 0.5 && b.low > 0.1, "{b:?}");
    }
}
