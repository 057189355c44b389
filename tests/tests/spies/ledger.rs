//! A spy's predictions, written down before the dice they name are seen, and their score
//! against the truth of the full match logs once the league has ended.

use std::collections::HashMap;

use knobel_engine::DiceKey;

use super::dice::finalise;

/// One prediction of one die.
#[derive(Clone, Copy, Debug)]
pub struct Prediction {
    /// The face predicted.
    pub face: u8,
    /// From what the spy learnt (a seed, a remembered die), not a guess.
    pub informed: bool,
    /// A die of the spy's own seat (its own future throws).
    pub own: bool,
}

/// Every prediction of one spy, by (match id, die key); the first one of a key counts.
#[derive(Default)]
pub struct Ledger {
    predictions: HashMap<(String, DiceKey), Prediction>,
    guesses: u64,
}

impl Ledger {
    /// Writes down a prediction of the die at `key` in `match_id`: `informed` if the spy
    /// has one, else a guess (uniform over the six faces, independent of every die).
    pub fn predict(&mut self, match_id: &str, key: DiceKey, informed: Option<u8>, own: bool) {
        let entry = (match_id.to_owned(), key);
        if self.predictions.contains_key(&entry) {
            return;
        }
        let face = informed.unwrap_or_else(|| {
            self.guesses += 1;
            (finalise(self.guesses ^ 0x5EED) % 6) as u8 + 1
        });
        let prediction = Prediction {
            face,
            informed: informed.is_some(),
            own,
        };
        self.predictions.insert(entry, prediction);
    }

    /// The predictions scored against `truth` (the dice thrown in each match scored; the
    /// predictions of dice never thrown, or of other matches, are not scored).
    pub fn score(&self, truth: &HashMap<String, Dice>) -> Score {
        let mut score = Score::default();
        for ((id, key), prediction) in &self.predictions {
            let Some(face) = truth.get(id).and_then(|dice| dice.get(key)) else {
                continue;
            };
            let hit = *face == prediction.face;
            let tally = if prediction.informed {
                &mut score.informed
            } else {
                &mut score.guessed
            };
            tally.add(hit);
            if prediction.informed && !prediction.own {
                score.informed_other_seats.add(hit);
            }
        }
        score
    }
}

/// Every die thrown in a match, by key ([`knobel_e2e::thrown_dice`] of its log).
pub type Dice = HashMap<DiceKey, u8>;

/// Right and scored predictions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Predictions of dice that were thrown.
    pub scored: u64,
    /// Of those, right.
    pub hits: u64,
}

impl Tally {
    fn add(&mut self, hit: bool) {
        self.scored += 1;
        self.hits += u64::from(hit);
    }

    /// Both tallies together.
    pub fn plus(self, other: Tally) -> Tally {
        Tally {
            scored: self.scored + other.scored,
            hits: self.hits + other.hits,
        }
    }

    /// The chance that a spy guessing each of `scored` dice (right with probability 1/6,
    /// independently) gets at least `hits` right: the exact upper tail of the binomial
    /// distribution, summed in logarithms (`scored` may be tens of thousands).
    pub fn chance_of_doing_as_well(self) -> f64 {
        let (n, k) = (self.scored, self.hits);
        let (ln_p, ln_q) = ((1.0f64 / 6.0).ln(), (5.0f64 / 6.0).ln());
        // ln C(n, j), from ln C(n, 0) = 0 upwards.
        let mut ln_choose = 0.0;
        let mut terms = Vec::new();
        for j in 0..=n {
            if j >= k {
                terms.push(ln_choose + j as f64 * ln_p + (n - j) as f64 * ln_q);
            }
            ln_choose += ((n - j) as f64).ln() - ((j + 1) as f64).ln();
        }
        let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = terms.iter().map(|t| (t - top).exp()).sum();
        (top + sum.ln()).exp().min(1.0)
    }
}

/// How one spy did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Score {
    /// Predictions from what the spy learnt.
    pub informed: Tally,
    /// Of those, dice of other seats.
    pub informed_other_seats: Tally,
    /// Guesses.
    pub guessed: Tally,
}

impl Score {
    /// Every prediction.
    pub fn all(&self) -> Tally {
        self.informed.plus(self.guessed)
    }
}
