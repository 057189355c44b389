//! Small value types shared by all three games: seats and sets of dice.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::DieSlotError;

/// The fewest players a match can have.
pub const MIN_SEATS: usize = 2;
/// The most players a match can have (a bound on untrusted input, and the size of the
/// fixed arrays that keep a match state allocation-free).
pub const MAX_SEATS: usize = 10;
/// Every hand has three dice, numbered 0..=2 (the die *slot*).
pub const DICE: usize = 3;

/// A seat at the table, numbered from 0 in seating (clockwise) order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seat(pub u8);

impl Seat {
    /// The seat number as an index into per-seat arrays.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seat {}", self.0)
    }
}

/// A set of die slots (0..=2). Serialized as a sorted list of slots, e.g. `[0, 2]`.
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash)]
pub struct DieMask(u8);

impl DieMask {
    /// No dice.
    pub const EMPTY: DieMask = DieMask(0);
    /// All three dice.
    pub const ALL: DieMask = DieMask(0b111);

    /// The set holding the one slot `slot`.
    ///
    /// # Panics
    /// If `slot` is not 0..=2; untrusted input goes through [`DieMask::from_slots`].
    #[inline]
    pub fn single(slot: usize) -> DieMask {
        assert!(slot < DICE, "die slot {slot} out of range");
        DieMask(1 << slot)
    }

    /// Parses a list of die slots from untrusted input; repeated slots are an error too.
    pub fn from_slots(slots: &[u32]) -> Result<DieMask, DieSlotError> {
        let mut mask = DieMask::EMPTY;
        for &slot in slots {
            if slot as usize >= DICE {
                return Err(DieSlotError::OutOfRange { slot });
            }
            let one = DieMask(1 << slot);
            if mask.intersects(one) {
                return Err(DieSlotError::Repeated { slot });
            }
            mask = mask.union(one);
        }
        Ok(mask)
    }

    /// The raw bits (bit `i` is slot `i`).
    #[inline]
    pub fn bits(self) -> u8 {
        self.0
    }

    /// Builds a mask from raw bits; bits above slot 2 are an error.
    pub fn from_bits(bits: u8) -> Result<DieMask, DieSlotError> {
        if bits & !0b111 != 0 {
            return Err(DieSlotError::OutOfRange {
                slot: 7 - bits.leading_zeros(),
            });
        }
        Ok(DieMask(bits))
    }

    /// Whether `slot` is in the set.
    /// Whether `seat` is in the set.
    #[inline]
    pub fn contains(self, slot: usize) -> bool {
        slot < DICE && self.0 & (1 << slot) != 0
    }

    /// The number of dice in the set.
    /// How many seats.
    #[inline]
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Set union.
    #[inline]
    pub fn union(self, other: DieMask) -> DieMask {
        DieMask(self.0 | other.0)
    }

    /// Set difference.
    #[inline]
    pub fn minus(self, other: DieMask) -> DieMask {
        DieMask(self.0 & !other.0)
    }

    /// Set intersection.
    #[inline]
    pub fn intersection(self, other: DieMask) -> DieMask {
        DieMask(self.0 & other.0)
    }

    /// Whether the sets share a die.
    #[inline]
    pub fn intersects(self, other: DieMask) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether every die of `self` is in `other`.
    #[inline]
    pub fn is_subset(self, other: DieMask) -> bool {
        self.0 & !other.0 == 0
    }

    /// The dice not in the set.
    #[inline]
    pub fn complement(self) -> DieMask {
        DieMask(!self.0 & 0b111)
    }

    /// The slots in the set, ascending.
    pub fn slots(self) -> impl Iterator<Item = usize> {
        BitIter(self.0 as u16).map(|i| i as usize)
    }

    /// Per slot: `inside[slot]` for the slots in the set, `outside[slot]` for the others
    /// (e.g. the dice of a throw where it rolled them, the held dice elsewhere).
    #[inline]
    pub fn pick<T: Copy>(self, inside: [T; 3], outside: [T; 3]) -> [T; 3] {
        std::array::from_fn(|slot| {
            if self.0 & (1 << slot) != 0 {
                inside[slot]
            } else {
                outside[slot]
            }
        })
    }

    /// Every subset of `self`, the empty set first.
    pub fn subsets(self) -> impl Iterator<Item = DieMask> {
        (0u8..8).filter(move |b| b & !self.0 == 0).map(DieMask)
    }
}

impl fmt::Debug for DieMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.slots()).finish()
    }
}

impl fmt::Display for DieMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        for (i, slot) in self.slots().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{slot}")?;
        }
        write!(f, "}}")
    }
}

impl Serialize for DieMask {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.slots())
    }
}

impl<'de> Deserialize<'de> for DieMask {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let slots = Vec::<u32>::deserialize(deserializer)?;
        DieMask::from_slots(&slots).map_err(serde::de::Error::custom)
    }
}

/// Iterates the set bits of a word, lowest first.
struct BitIter(u16);

impl Iterator for BitIter {
    type Item = u8;
    #[inline]
    fn next(&mut self) -> Option<u8> {
        if self.0 == 0 {
            return None;
        }
        let bit = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Some(bit)
    }
}

/// A set of seats ("who is in play", "who must act now"). Serialized as a sorted list.
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash)]
pub struct Seats(u16);

impl Seats {
    /// No seats.
    pub const EMPTY: Seats = Seats(0);

    /// Seats 0..n.
    pub fn first_n(n: usize) -> Seats {
        Seats(((1u32 << n) - 1) as u16)
    }

    /// Whether `seat` is in the set.
    #[inline]
    pub fn contains(self, seat: Seat) -> bool {
        self.0 & (1 << seat.0) != 0
    }

    /// Adds `seat`.
    #[inline]
    pub fn insert(&mut self, seat: Seat) {
        self.0 |= 1 << seat.0;
    }

    /// Removes `seat`.
    #[inline]
    pub fn remove(&mut self, seat: Seat) {
        self.0 &= !(1 << seat.0);
    }

    /// How many seats.
    #[inline]
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The seats, ascending.
    pub fn iter(self) -> impl Iterator<Item = Seat> {
        BitIter(self.0).map(Seat)
    }

    /// The first seat of the set at or after `from`, going round a table of `n` seats.
    pub fn next_from(self, from: Seat, n: usize) -> Option<Seat> {
        if n == 0 {
            return None;
        }
        let from = if from.index() < n {
            from.index()
        } else {
            from.index() % n
        };
        let table = self.0 as u32 & ((1u32 << n.min(16)) - 1);
        // Seats from `from` to the end of the table first, then from seat 0.
        let later = table & !((1u32 << from) - 1);
        let pick = if later != 0 { later } else { table };
        (pick != 0).then(|| Seat(pick.trailing_zeros() as u8))
    }

    /// The only seat in the set, if it holds exactly one.
    pub fn single(self) -> Option<Seat> {
        (self.len() == 1).then(|| Seat(self.0.trailing_zeros() as u8))
    }
}

impl fmt::Debug for Seats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(|s| s.0)).finish()
    }
}

impl Serialize for Seats {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Seats {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let seats = Vec::<u8>::deserialize(deserializer)?;
        let mut set = Seats::EMPTY;
        for seat in seats {
            if seat as usize >= MAX_SEATS {
                return Err(serde::de::Error::custom(format!(
                    "seat {seat} is out of range: seats are 0..{MAX_SEATS}"
                )));
            }
            set.insert(Seat(seat));
        }
        Ok(set)
    }
}

/// Every seat's place at the end of a match (1 is best), indexed by seat. A fixed-size value
/// (so that events stay `Copy`); serialized as a list.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Placings {
    len: u8,
    places: [u8; MAX_SEATS],
}

impl Placings {
    /// The places of `places.len()` seats (at most [`MAX_SEATS`]; extra ones are dropped).
    pub fn from_slice(places: &[u8]) -> Placings {
        let len = places.len().min(MAX_SEATS);
        let mut out = Placings {
            len: len as u8,
            places: [0; MAX_SEATS],
        };
        out.places[..len].copy_from_slice(&places[..len]);
        out
    }

    /// The places, indexed by seat.
    pub fn as_slice(&self) -> &[u8] {
        &self.places[..self.len as usize]
    }
}

impl From<Vec<u8>> for Placings {
    fn from(places: Vec<u8>) -> Placings {
        Placings::from_slice(&places)
    }
}

impl std::ops::Deref for Placings {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl fmt::Debug for Placings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl Serialize for Placings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Placings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let places = Vec::<u8>::deserialize(deserializer)?;
        if places.len() > MAX_SEATS {
            return Err(serde::de::Error::custom(format!(
                "{} placings: a match has at most {MAX_SEATS} seats",
                places.len()
            )));
        }
        Ok(Placings::from_slice(&places))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn die_mask_parses_slots_and_rejects_bad_ones() {
        assert_eq!(DieMask::from_slots(&[2, 0]).unwrap().bits(), 0b101);
        assert_eq!(
            DieMask::from_slots(&[3]).unwrap_err().to_string(),
            "cannot use die 3: dice are numbered 0..=2"
        );
        assert_eq!(
            DieMask::from_slots(&[1, 1]).unwrap_err().to_string(),
            "die 1 is named twice: name each die at most once"
        );
        assert!(DieMask::from_bits(0b1000).is_err());
        assert_eq!(DieMask::ALL.subsets().count(), 8);
        assert_eq!(
            DieMask::single(1).complement(),
            DieMask::from_bits(0b101).unwrap()
        );
    }

    #[test]
    fn seat_set_goes_round_the_table() {
        let mut set = Seats::first_n(4);
        set.remove(Seat(0));
        assert_eq!(set.next_from(Seat(0), 4), Some(Seat(1)));
        set.remove(Seat(3));
        assert_eq!(set.next_from(Seat(3), 4), Some(Seat(1)));
        assert_eq!(set.len(), 2);
        assert_eq!(set.next_from(Seat(2), 4), Some(Seat(2)));
        assert_eq!(set.next_from(Seat(6), 4), Some(Seat(2)));
        assert_eq!(Seats::EMPTY.next_from(Seat(1), 4), None);
        // Seats beyond the table are not found.
        let mut far = Seats::EMPTY;
        far.insert(Seat(5));
        assert_eq!(far.next_from(Seat(0), 4), None);
        // Every set of a small table against the plain walk round it.
        for bits in 0u16..64 {
            for n in 1..=6usize {
                for from in 0..8u8 {
                    let walk = (0..n)
                        .map(|k| Seat(((from as usize + k) % n) as u8))
                        .find(|&s| Seats(bits).contains(s));
                    assert_eq!(Seats(bits).next_from(Seat(from), n), walk);
                }
            }
        }
    }
}
