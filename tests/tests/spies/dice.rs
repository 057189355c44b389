//! The arithmetic a spy needs, written from the documents alone: the dice function of
//! docs/rules.md A.8 (not the engine's `DiceSource`), and the set-seed chain that
//! docs/leagues.md ("Schedule", "Seeds") gave for leagues before issue 22, run forwards and
//! backwards.

/// SplitMix64's increment (docs/rules.md A.8.1).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The two multipliers of SplitMix64's finaliser.
const MUL_1: u64 = 0xBF58_476D_1CE4_E5B9;
const MUL_2: u64 = 0x94D0_49BB_1331_11EB;

/// `2^64 mod 216`: a word whose low product bits fall below it is rejected (A.8.1 step 4).
const REJECT_BELOW: u64 = 160;

/// SplitMix64's finaliser, `mix(z)` of A.8.1.
pub fn finalise(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(MUL_1);
    z = (z ^ (z >> 27)).wrapping_mul(MUL_2);
    z ^ (z >> 31)
}

/// The inverse of [`finalise`]: every step of it is a bijection on 64-bit words.
pub fn unfinalise(mut z: u64) -> u64 {
    z = undo_xorshift(z, 31).wrapping_mul(inverse(MUL_2));
    z = undo_xorshift(z, 27).wrapping_mul(inverse(MUL_1));
    undo_xorshift(z, 30)
}

/// The `x` with `x ^ (x >> shift) == z`.
fn undo_xorshift(z: u64, shift: u32) -> u64 {
    let mut x = z;
    for _ in 0..64 / shift {
        x = z ^ (x >> shift);
    }
    x
}

/// The inverse of an odd number modulo 2^64 (Newton's iteration doubles the correct bits).
fn inverse(odd: u64) -> u64 {
    let mut x = odd;
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(x)));
    }
    x
}

/// The faces (1..=6, slots 0, 1, 2) that `seat` throws in `round` at `throw` in a Schocken or
/// Sjokken match played from `seed` (A.8.1 to A.8.3).
pub fn throw_faces(seed: u64, seat: u8, round: u32, throw: u8) -> [u8; 3] {
    let base = finalise(seed ^ GAMMA);
    let key = u64::from(round) << 16 | u64::from(seat) << 8 | u64::from(throw);
    let mut word = finalise(base.wrapping_add(key.wrapping_mul(GAMMA)));
    loop {
        let product = u128::from(word) * 216;
        if (product as u64) >= REJECT_BELOW {
            let outcome = (product >> 64) as u8;
            return [outcome / 36 + 1, outcome / 6 % 6 + 1, outcome % 6 + 1];
        }
        word = finalise(word.wrapping_add(GAMMA));
    }
}

/// The league schedule's `splitmix64`: the finaliser of the word plus [`GAMMA`].
fn splitmix64(z: u64) -> u64 {
    finalise(z.wrapping_add(GAMMA))
}

/// The inverse of [`splitmix64`].
fn unsplitmix64(z: u64) -> u64 {
    unfinalise(z).wrapping_sub(GAMMA)
}

/// The schedule's `mix(a, b) = splitmix64(a ^ splitmix64(b))`.
fn chain(a: u64, b: u64) -> u64 {
    splitmix64(a ^ splitmix64(b))
}

/// The `a` with `chain(a, b) == mixed`.
fn unchain(mixed: u64, b: u64) -> u64 {
    unsplitmix64(mixed) ^ splitmix64(b)
}

/// The seed of the duplicate set of `game` (its index in schocken, sjokken, zokken), `table`
/// and `repetition` in a league played from `league_seed`, as leagues derived it before
/// issue 22: `mix(mix(mix(league_seed, game), table), repetition)`.
pub fn set_seed(league_seed: u64, game: u64, table: u64, repetition: u64) -> u64 {
    chain(chain(chain(league_seed, game), table), repetition)
}

/// Every league seed that gives `seed` as the set seed of some game, table below `tables`
/// and repetition below `repetitions`: the chain run backwards.
pub fn league_seeds_behind(seed: u64, tables: u64, repetitions: u64) -> Vec<u64> {
    let mut seeds = Vec::new();
    for repetition in 0..repetitions {
        let before_repetition = unchain(seed, repetition);
        for table in 0..tables {
            let before_table = unchain(before_repetition, table);
            seeds.extend((0..3).map(|game| unchain(before_table, game)));
        }
    }
    seeds
}
