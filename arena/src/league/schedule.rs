//! A league's schedule: every match it will play, expanded up front and in a fixed order,
//! so that expanding the same league file again gives the very same matches.
//!
//! - **Tables.** Round robin: every set of `table_size` bots among the league's bots, in
//!   lexicographic order of their positions in the bot list. Gauntlet: every such set that
//!   holds the challenger.
//! - **Duplicate sets.** Each table is played as a duplicate set: one seed, and one match per
//!   seat order, so that a seat position gets the same dice whoever sits there (the dice are
//!   keyed by seed, seat, round, throw and die slot; docs/rules.md A.8). Tables of up to 3
//!   seats play every order (2 or 6 matches); larger tables the `table_size` cyclic
//!   rotations, in which each bot sits once in each seat.
//! - **Repetitions** repeat the whole schedule with fresh seeds.
//! - **Order.** Repetition, then game (schocken, sjokken, zokken), then table, then seat
//!   order. Ratings are computed in this order (see `ratings`).
//! - **Seeds.** The seed of the set (repetition `r`, game `g` = its index in
//!   [`knobel_engine::Game::ALL`], table `t`) is `mix(mix(mix(league_seed, g), t), r)`, where
//!   `mix(a, b) = splitmix64(a ^ splitmix64(b))` and `splitmix64` is the finaliser of
//!   SplitMix64 (Steele, Lea and Flood 2014).

use knobel_engine::{Game, Rules};

use super::config::{Format, LeagueConfig};

/// The most matches one league may schedule.
pub const MAX_MATCHES: usize = 200_000;

/// One scheduled match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledMatch {
    /// Its place in the schedule, from 0.
    pub ordinal: u32,
    /// The game.
    pub game: Game,
    /// The preset its rules start from.
    pub preset: String,
    /// Its rules.
    pub rules: Rules,
    /// The duplicate set it belongs to (one per repetition, game and table), from 0.
    pub set: u32,
    /// Which seat order of the set it is, from 0.
    pub rotation: u32,
    /// The bots in seat order.
    pub seats: Vec<String>,
    /// The match seed (the same for every match of a set).
    pub seed: u64,
}

/// A schedule that cannot be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ScheduleError {
    /// More matches than [`MAX_MATCHES`].
    #[error(
        "the league would schedule {matches} matches (at most {MAX_MATCHES}): use fewer bots, \
         smaller tables or fewer repetitions"
    )]
    TooManyMatches {
        /// How many it would schedule.
        matches: u128,
    },
}

/// The SplitMix64 finaliser.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Combines `a` and `b` into one well-mixed value.
pub fn mix(a: u64, b: u64) -> u64 {
    splitmix64(a ^ splitmix64(b))
}

/// The seed of a duplicate set.
pub fn set_seed(league_seed: u64, game: Game, table: u64, repetition: u64) -> u64 {
    let g = Game::ALL
        .iter()
        .position(|&x| x == game)
        .expect("a game of Game::ALL") as u64;
    mix(mix(mix(league_seed, g), table), repetition)
}

/// The seat orders of a duplicate set of `k` seats: for each, the position in the table of
/// the bot in seat 0, 1, ...
pub fn seat_orders(k: usize) -> Vec<Vec<usize>> {
    if k <= 3 {
        let mut all = Vec::new();
        permutations(&mut (0..k).collect(), 0, &mut all);
        all.sort();
        all
    } else {
        (0..k)
            .map(|j| (0..k).map(|s| (s + j) % k).collect())
            .collect()
    }
}

fn permutations(items: &mut Vec<usize>, from: usize, out: &mut Vec<Vec<usize>>) {
    if from == items.len() {
        out.push(items.clone());
        return;
    }
    for i in from..items.len() {
        items.swap(from, i);
        permutations(items, from + 1, out);
        items.swap(from, i);
    }
}

/// n choose k, saturating.
fn choose(n: u128, k: u128) -> u128 {
    if k > n {
        return 0;
    }
    (0..k).fold(1u128, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// Every `k`-subset of `0..n` in lexicographic order, each as a sorted list.
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current: Vec<usize> = (0..k).collect();
    if k > n {
        return out;
    }
    loop {
        out.push(current.clone());
        // The rightmost position that can move on.
        let Some(i) = (0..k).rev().find(|&i| current[i] < n - k + i) else {
            return out;
        };
        current[i] += 1;
        for j in i + 1..k {
            current[j] = current[j - 1] + 1;
        }
    }
}

/// The tables of one game: positions in `bots`.
fn tables(config: &LeagueConfig, bots: &[String], k: usize) -> Vec<Vec<usize>> {
    match &config.format {
        Format::RoundRobin => subsets(bots.len(), k),
        Format::Gauntlet { challenger } => {
            let c = bots
                .iter()
                .position(|b| b == challenger)
                .expect("the challenger is a league bot");
            let others: Vec<usize> = (0..bots.len()).filter(|&i| i != c).collect();
            subsets(others.len(), k - 1)
                .into_iter()
                .map(|rest| {
                    let mut table: Vec<usize> = std::iter::once(c)
                        .chain(rest.iter().map(|&i| others[i]))
                        .collect();
                    table.sort();
                    table
                })
                .collect()
        }
    }
}

/// How many matches `config` schedules for `bots` bots.
pub fn match_count(config: &LeagueConfig, bots: usize) -> u128 {
    config
        .games
        .iter()
        .map(|plan| {
            let k = plan.table_size as u128;
            let tables = match config.format {
                Format::RoundRobin => choose(bots as u128, k),
                Format::Gauntlet { .. } => choose(bots as u128 - 1, k - 1),
            };
            tables * seat_orders(plan.table_size as usize).len() as u128
        })
        .sum::<u128>()
        * u128::from(config.repetitions)
}

/// The schedule of `config` for `bots` (as [`LeagueConfig::resolve_bots`] gives them).
pub fn expand(
    config: &LeagueConfig,
    bots: &[String],
) -> Result<Vec<ScheduledMatch>, ScheduleError> {
    let matches = match_count(config, bots.len());
    if matches > MAX_MATCHES as u128 {
        return Err(ScheduleError::TooManyMatches { matches });
    }
    let mut schedule = Vec::with_capacity(matches as usize);
    let mut set = 0u32;
    for repetition in 0..config.repetitions {
        for plan in &config.games {
            let k = plan.table_size as usize;
            let orders = seat_orders(k);
            for (t, table) in tables(config, bots, k).into_iter().enumerate() {
                let seed = set_seed(config.seed, plan.game, t as u64, u64::from(repetition));
                for (rotation, order) in orders.iter().enumerate() {
                    schedule.push(ScheduledMatch {
                        ordinal: schedule.len() as u32,
                        game: plan.game,
                        preset: plan.preset.clone(),
                        rules: plan.rules.clone(),
                        set,
                        rotation: rotation as u32,
                        seats: order.iter().map(|&p| bots[table[p]].clone()).collect(),
                        seed,
                    });
                }
                set += 1;
            }
        }
    }
    Ok(schedule)
}
