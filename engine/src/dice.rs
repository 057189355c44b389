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
}

/// A seeded, counter-based source of dice (optionally overridden by a [`DiceScript`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiceSource {
    seed: u64,
    script: Option<Arc<DiceScript>>,
}

/// The SplitMix64 finaliser: a bijective mixer of 64-bit words.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl DiceSource {
    /// A source for the match played from `seed`.
    pub fn new(seed: u64) -> DiceSource {
        DiceSource { seed, script: None }
    }

    /// A source whose dice come from `script` where it names them, else from `seed`.
    pub fn scripted(seed: u64, script: DiceScript) -> DiceSource {
        DiceSource {
            seed,
            script: Some(Arc::new(script)),
        }
    }

    /// The match seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// A uniformly distributed face index in `0..faces` for `key` (`faces` ≥ 1).
    ///
    /// The key is packed into one word, mixed with the seed, and mapped to a face by
    /// Lemire's multiply-shift with rejection, so every face is exactly equally likely.
    #[inline]
    pub fn face(&self, key: DiceKey, faces: u8) -> u8 {
        let packed = (key.round as u64) << 32
            | (key.seat.0 as u64) << 16
            | (key.throw as u64) << 8
            | key.slot as u64;
        let mut word = mix(self.seed ^ mix(packed.wrapping_add(0x9e37_79b9_7f4a_7c15)));
        let faces = faces as u64;
        // 2^64 mod faces: products whose low word falls below it are rejected. Every die
        // here has six faces; the constant spares a 64-bit division per die.
        const SIX_THRESHOLD: u64 = 6u64.wrapping_neg() % 6;
        let threshold = if faces == 6 {
            SIX_THRESHOLD
        } else {
            faces.wrapping_neg() % faces
        };
        loop {
            let product = word as u128 * faces as u128;
            if (product as u64) >= threshold {
                return (product >> 64) as u8;
            }
            word = mix(word.wrapping_add(0x9e37_79b9_7f4a_7c15));
        }
    }

    /// The value a die with these `faces` shows for `key`.
    #[inline]
    pub fn roll(&self, key: DiceKey, faces: &[u8; 6]) -> u8 {
        if let Some(value) = self.script.as_ref().and_then(|s| s.get(&key)) {
            return value;
        }
        faces[self.face(key, 6) as usize]
    }

    /// A six-sided die showing 1..=6.
    #[inline]
    pub fn d6(&self, key: DiceKey) -> u8 {
        self.roll(key, &[1, 2, 3, 4, 5, 6])
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
            counts[source.face(key((round % 5) as u8, round, 1, (round % 3) as u8), 6) as usize] +=
                1;
        }
        // Expected 10,000 each; a fair die stays within ±4% with overwhelming probability.
        for c in counts {
            assert!((9_600..=10_400).contains(&c), "{counts:?}");
        }
    }
}
