//! Where dice come from: a counter-based source keyed by (match seed, seat, round, throw,
//! die slot), so that every throw is a pure function of its key (RULES.md §6).
//!
//! Because a die does not depend on anything thrown before it, the same seat gets the same
//! die at the same round, throw and slot whichever bot sits there and whatever the other
//! players decided: *common random numbers*, which make duplicate matches possible.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::types::Seat;

/// The key of one die: which seat throws it, in which round, at which throw, in which slot.
///
/// Round 0 is the opening throw-off that picks the first starter (Schocken, Sjokken);
/// played rounds count from 1 for the whole match (across halves). In Zokken the throws of a
/// tie replay continue the numbering of the round they replay (throws 4..=6 are the first
/// replay's, and so on).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DiceKey {
    /// The seat that throws.
    pub seat: Seat,
    /// The round (0: opening throw-off).
    pub round: u32,
    /// The throw within the round for that seat, from 1.
    pub throw: u8,
    /// The die slot, 0..=2.
    pub slot: u8,
}

/// Fixed dice for scripted scenarios (tests, puzzles): the value each keyed die shows.
/// Dice the script does not name come from the seeded source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiceScript {
    dice: HashMap<DiceKey, u8>,
}

impl DiceScript {
    /// An empty script.
    pub fn new() -> DiceScript {
        DiceScript::default()
    }

    /// Scripts the dice `seat` throws in `round` at `throw`: `values[slot]` for each slot
    /// in `slots` (the dice rolled in that throw; the others are not thrown).
    pub fn set(
        &mut self,
        seat: Seat,
        round: u32,
        throw: u8,
        slots: &[usize],
        values: [u8; 3],
    ) -> &mut Self {
        for &slot in slots {
            let key = DiceKey {
                seat,
                round,
                throw,
                slot: slot as u8,
            };
            self.dice.insert(key, values[slot]);
        }
        self
    }

    /// Scripts all three dice of one throw.
    pub fn throw(&mut self, seat: Seat, round: u32, throw: u8, values: [u8; 3]) -> &mut Self {
        self.set(seat, round, throw, &[0, 1, 2], values)
    }

    fn get(&self, key: &DiceKey) -> Option<u8> {
        self.dice.get(key).copied()
    }

    /// `values` of one throw, with the dice this script names replaced.
    #[cold]
    #[inline(never)]
    fn override_throw(&self, seat: Seat, round: u32, throw: u8, mut values: [u8; 3]) -> [u8; 3] {
        for (slot, value) in values.iter_mut().enumerate() {
            let key = DiceKey {
                seat,
                round,
                throw,
                slot: slot as u8,
            };
            if let Some(scripted) = self.get(&key) {
                *value = scripted;
            }
        }
        values
    }
}

/// A seeded, counter-based source of dice (optionally overridden by a [`DiceScript`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiceSource {
    seed: u64,
    /// The seed, mixed: the start of the SplitMix64 sequence the throws are taken from.
    base: u64,
    script: Option<Arc<DiceScript>>,
}

/// SplitMix64's increment (the golden ratio): the step between the words of two keys.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 finaliser: a bijective mixer of 64-bit words.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The ways one throw of three six-sided dice can land: 6 × 6 × 6.
const THROW_OUTCOMES: u64 = 216;

/// The faces of an ordinary die, 1..=6, for each of the three slots.
const D6_FACES: [[u8; 6]; 3] = [[1, 2, 3, 4, 5, 6]; 3];

/// The base-6 digits of each outcome in `0..216`, most significant first: the face index of
/// each die slot.
const DIGITS: [[u8; 3]; THROW_OUTCOMES as usize] = {
    let mut digits = [[0; 3]; THROW_OUTCOMES as usize];
    let mut outcome = 0;
    while outcome < THROW_OUTCOMES as usize {
        digits[outcome] = [
            (outcome / 36) as u8,
            (outcome / 6 % 6) as u8,
            (outcome % 6) as u8,
        ];
        outcome += 1;
    }
    digits
};

impl DiceSource {
    /// A source for the match played from `seed`.
    pub fn new(seed: u64) -> DiceSource {
        DiceSource {
            seed,
            base: mix(seed ^ GAMMA),
            script: None,
        }
    }

    /// A source whose dice come from `script` where it names them, else from `seed`.
    pub fn scripted(seed: u64, script: DiceScript) -> DiceSource {
        DiceSource {
            script: Some(Arc::new(script)),
            ..DiceSource::new(seed)
        }
    }

    /// The match seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The face indices (each in `0..6`) of the three die slots of one throw.
    ///
    /// The throw's key (seat, round, throw) is packed into one number `k`; the throw's word
    /// is the `k`-th output of the SplitMix64 generator started from the mixed seed. The
    /// word is mapped to one of the 216 ways three dice can land by Lemire's multiply-shift
    /// with rejection, so every outcome is exactly equally likely: each slot is uniform on
    /// its six faces and independent of the other two. The slots are that outcome's digits
    /// in base 6.
    ///
    /// A die's face depends on its key (seat, round, throw, slot) alone, not on which dice
    /// are rolled: common random numbers.
    #[inline]
    pub fn throw_faces(&self, seat: Seat, round: u32, throw: u8) -> [u8; 3] {
        let packed = (round as u64) << 16 | (seat.0 as u64) << 8 | throw as u64;
        let mut word = mix(self.base.wrapping_add(packed.wrapping_mul(GAMMA)));
        // 2^64 mod 216: products whose low word falls below it are rejected (a chance of
        // about 10^-17 per throw).
        const THRESHOLD: u64 = THROW_OUTCOMES.wrapping_neg() % THROW_OUTCOMES;
        let outcome = loop {
            let product = word as u128 * THROW_OUTCOMES as u128;
            if (product as u64) >= THRESHOLD {
                break (product >> 64) as u8;
            }
            word = mix(word.wrapping_add(GAMMA));
        };
        DIGITS[outcome as usize]
    }

    /// The values the three die slots of one throw show, `faces[slot]` being the faces of
    /// the die in `slot` (a [`DiceScript`] overrides the dice it names). Callers use the
    /// slots they roll and ignore the others.
    #[inline]
    pub fn throw(&self, seat: Seat, round: u32, throw: u8, faces: &[[u8; 6]; 3]) -> [u8; 3] {
        let index = self.throw_faces(seat, round, throw);
        let values = std::array::from_fn(|slot| faces[slot][index[slot] as usize]);
        match &self.script {
            None => values,
            Some(script) => script.override_throw(seat, round, throw, values),
        }
    }

    /// The three slots of one throw of six-sided dice, each showing 1..=6 (the same as
    /// [`DiceSource::throw`] with faces 1..=6).
    #[inline]
    pub fn throw_d6(&self, seat: Seat, round: u32, throw: u8) -> [u8; 3] {
        self.throw(seat, round, throw, &D6_FACES)
    }

    /// The face index in `0..6` of the die with `key` (its slot of
    /// [`DiceSource::throw_faces`]; slots beyond 2 wrap round).
    pub fn face(&self, key: DiceKey) -> u8 {
        self.throw_faces(key.seat, key.round, key.throw)[key.slot as usize % 3]
    }

    /// The value a die with these `faces` shows for `key`.
    pub fn roll(&self, key: DiceKey, faces: &[u8; 6]) -> u8 {
        if let Some(value) = self.script.as_ref().and_then(|s| s.get(&key)) {
            return value;
        }
        faces[self.face(key) as usize]
    }

    /// A six-sided die showing 1..=6.
    pub fn d6(&self, key: DiceKey) -> u8 {
        self.roll(key, &D6_FACES[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seat: u8, round: u32, throw: u8, slot: u8) -> DiceKey {
        DiceKey {
            seat: Seat(seat),
            round,
            throw,
            slot,
        }
    }

    #[test]
    fn same_key_same_die_and_different_seeds_differ() {
        let a = DiceSource::new(7);
        assert_eq!(a.d6(key(1, 3, 2, 0)), a.d6(key(1, 3, 2, 0)));
        let differs =
            (0..64).any(|r| a.d6(key(0, r, 1, 0)) != DiceSource::new(8).d6(key(0, r, 1, 0)));
        assert!(differs);
    }

    #[test]
    fn faces_are_roughly_uniform() {
        let source = DiceSource::new(42);
        let mut counts = [0u32; 6];
        for round in 0..60_000 {
            counts[source.face(key((round % 5) as u8, round, 1, (round % 3) as u8)) as usize] += 1;
        }
        // Expected 10,000 each; a fair die stays within ±4% with overwhelming probability.
        for c in counts {
            assert!((9_600..=10_400).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn the_slots_of_a_throw_are_jointly_uniform() {
        // All 216 outcomes of three dice equally likely: each slot uniform, and the slots
        // independent of each other.
        let source = DiceSource::new(9);
        let mut counts = [0u32; 216];
        let throws = 216_000;
        for i in 0..throws {
            let [a, b, c] = source.throw_faces(Seat((i % 7) as u8), i / 7, (i % 3) as u8 + 1);
            counts[a as usize * 36 + b as usize * 6 + c as usize] += 1;
        }
        let expected = (throws / 216) as f64;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        // 215 degrees of freedom: mean 215, standard deviation about 21.
        assert!(chi2 < 320.0, "chi-square {chi2}");
    }

    #[test]
    fn a_throw_agrees_with_its_single_dice_and_with_the_script() {
        let mut script = DiceScript::new();
        script.set(Seat(2), 5, 1, &[1], [0, 6, 0]);
        let plain = DiceSource::new(3);
        let scripted = DiceSource::scripted(3, script);
        let thrown = plain.throw_d6(Seat(2), 5, 1);
        for slot in 0..3u8 {
            assert_eq!(thrown[slot as usize], plain.d6(key(2, 5, 1, slot)));
            assert!((1..=6).contains(&thrown[slot as usize]));
        }
        let overridden = scripted.throw_d6(Seat(2), 5, 1);
        assert_eq!(overridden, [thrown[0], 6, thrown[2]]);
        assert_eq!(scripted.d6(key(2, 5, 1, 1)), 6);
    }
}
