//! A league's schedule: every match it will play, expanded up front and in a fixed order,
//! so that expanding the same league file again gives the very same matches.
//!
//! - **Tables.** Round robin: every set of `table_size` bots among the league's bots, in
//!   lexicographic order of their positions in the bot list. Gauntlet: every such set that
//!   holds the challenger. Or, per game, a balanced design ([`super::design`]): when the
//!   league file asks for it (`design = "balanced"`), or when it leaves the choice to the
//!   arena (`design = "auto"`, the default) and the complete tables of every game would make
//!   the league larger than [`MAX_MATCHES`]. Round robin: a design on the bots with blocks of
//!   `table_size`; gauntlet: a design on the field with blocks of `table_size - 1`, each table
//!   a block and the challenger. The design's points are the bots (the field) in the order of
//!   a Fisher-Yates shuffle by the SplitMix64 stream from the league secret's relabel seed of
//!   the game; its tables too are in lexicographic order of the bots' positions.
//! - **Seat orders.** Each table is played once per seat order, so that every bot sits in
//!   every seat position: tables of up to 3 seats play every order (2 or 6 matches); larger
//!   tables the `table_size` cyclic rotations, in which each bot sits once in each seat. A
//!   table's seat orders form its *set*.
//! - **Dice** ([`super::dice`], docs/fair-play.md). With independent dice (the default) every
//!   match has its own seed, an HMAC of the league's secret and its ordinal; with duplicate
//!   sets every seat order of a set plays the set's seed, so that a seat position gets the
//!   same dice whoever sits there (the dice are keyed by seed, seat, round, throw and die
//!   slot; docs/rules.md A.8). The stored seed is the first attempt's (see
//!   [`super::dice::LeagueSecret::match_seed`]).
//! - **Repetitions** repeat the whole schedule with fresh seeds.
//! - **Order.** Repetition, then game (schocken, sjokken, zokken), then table, then seat
//!   order. Ratings are computed in this order (see `ratings`).

use knobel_engine::{Game, Rules};

use super::config::{Format, GamePlan, LeagueConfig, TableDesign};
use super::design::{Balanced, balanced, choose, shuffled};
use super::dice::LeagueDice;

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
    /// The match seed of its first attempt (with duplicate sets, the same for every match of
    /// a set).
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
    /// A game needs a balanced design and none was found.
    #[error(
        "no balanced design of tables of {table_size} for {bots} bots was found in {game} \
         (docs/leagues.md, \"Schedule\"), and its complete round robin makes the league \
         {matches} matches (at most {MAX_MATCHES}): use another number of bots or table size"
    )]
    NoBalancedDesign {
        /// The game.
        game: Game,
        /// The league's bots.
        bots: usize,
        /// The game's table size.
        table_size: u32,
        /// How many matches the league would schedule with that game complete.
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

/// The complete tables of one game: positions in `bots`.
fn complete_tables(config: &LeagueConfig, bots: &[String], k: usize) -> Vec<Vec<usize>> {
    match &config.format {
        Format::RoundRobin => subsets(bots.len(), k),
        Format::Gauntlet { challenger } => {
            with_challenger(bots, subsets(bots.len() - 1, k - 1), challenger)
        }
    }
}

/// Tables of the field (positions in the field, the bots but the challenger) with the
/// challenger added: positions in `bots`, each sorted.
fn with_challenger(
    bots: &[String],
    field_tables: Vec<Vec<usize>>,
    challenger: &str,
) -> Vec<Vec<usize>> {
    let c = bots
        .iter()
        .position(|b| b == challenger)
        .expect("the challenger is a league bot");
    let others: Vec<usize> = (0..bots.len()).filter(|&i| i != c).collect();
    field_tables
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

/// The tables one game plays: complete, or a balanced design's blocks.
enum GameTables {
    /// Every table: this many.
    Complete(u128),
    /// A balanced design's blocks, in positions of the bots (the field, in a gauntlet) in
    /// the order the design's points take them.
    Balanced(Vec<Vec<usize>>),
}

impl GameTables {
    fn count(&self) -> u128 {
        match self {
            GameTables::Complete(n) => *n,
            GameTables::Balanced(blocks) => blocks.len() as u128,
        }
    }
}

/// The points and block size of a design of tables of `k` among `n` bots in `format`: the
/// bots and `k`, or in a gauntlet the field (the bots but the challenger) and `k - 1`.
fn design_points(format: &Format, n: usize, k: u32) -> (usize, usize) {
    match format {
        Format::RoundRobin => (n, k as usize),
        Format::Gauntlet { .. } => (n - 1, k as usize - 1),
    }
}

/// Which tables each game of `config` plays with `n` bots, and the league's matches.
fn plan(config: &LeagueConfig, n: usize) -> Result<(Vec<GameTables>, u128), ScheduleError> {
    let points = |k: u32| design_points(&config.format, n, k);
    let matches = |tables: &[GameTables]| {
        tables
            .iter()
            .zip(&config.games)
            .map(|(t, plan)| t.count() * seat_orders(plan.table_size as usize).len() as u128)
            .sum::<u128>()
            * u128::from(config.repetitions)
    };
    let complete: Vec<GameTables> = config
        .games
        .iter()
        .map(|plan| {
            let (v, k) = points(plan.table_size);
            GameTables::Complete(choose(v as u128, k as u128))
        })
        .collect();
    let auto_balanced = matches(&complete) > MAX_MATCHES as u128;
    let mut not_found = None;
    let tables: Vec<GameTables> = complete
        .into_iter()
        .zip(&config.games)
        .map(|(all, plan)| {
            let wanted = match plan.design {
                TableDesign::Complete => false,
                TableDesign::Balanced => true,
                TableDesign::Auto => auto_balanced,
            };
            if !wanted {
                return all;
            }
            let (v, k) = points(plan.table_size);
            match balanced(v, k) {
                Balanced::Design(design) => GameTables::Balanced(design.blocks),
                Balanced::Complete => all,
                Balanced::NotFound => {
                    not_found.get_or_insert((plan.game, plan.table_size));
                    all
                }
            }
        })
        .collect();
    let total = matches(&tables);
    if total > MAX_MATCHES as u128 {
        return Err(match not_found {
            Some((game, table_size)) => ScheduleError::NoBalancedDesign {
                game,
                bots: n,
                table_size,
                matches: total,
            },
            None => ScheduleError::TooManyMatches { matches: total },
        });
    }
    Ok((tables, total))
}

/// How many matches `config` schedules for `bots` bots, without expanding the schedule
/// (a balanced design is looked for as [`expand`] does): what [`expand`] gives, or its
/// refusal.
pub fn scheduled_matches(config: &LeagueConfig, bots: usize) -> Result<u128, ScheduleError> {
    plan(config, bots).map(|(_, matches)| matches)
}

/// The schedule of `config` for `bots` (as [`LeagueConfig::resolve_bots`] gives them),
/// with the seeds of `dice`.
pub fn expand(
    config: &LeagueConfig,
    bots: &[String],
    dice: &LeagueDice,
) -> Result<Vec<ScheduledMatch>, ScheduleError> {
    let (plans, matches) = plan(config, bots.len())?;
    let games: Vec<Vec<Vec<usize>>> = plans
        .into_iter()
        .zip(&config.games)
        .map(|(tables, plan)| {
            let k = plan.table_size as usize;
            match tables {
                GameTables::Complete(_) => complete_tables(config, bots, k),
                GameTables::Balanced(blocks) => seat_design(config, bots, plan, blocks, dice),
            }
        })
        .collect();
    let mut schedule = Vec::with_capacity(matches as usize);
    let mut set = 0u32;
    for _ in 0..config.repetitions {
        for (plan, tables) in config.games.iter().zip(&games) {
            let orders = seat_orders(plan.table_size as usize);
            for table in tables {
                for (rotation, order) in orders.iter().enumerate() {
                    let ordinal = schedule.len() as u32;
                    schedule.push(ScheduledMatch {
                        ordinal,
                        game: plan.game,
                        preset: plan.preset.clone(),
                        rules: plan.rules.clone(),
                        set,
                        rotation: rotation as u32,
                        seats: order.iter().map(|&p| bots[table[p]].clone()).collect(),
                        seed: dice.match_seed(ordinal, set, 1),
                    });
                }
                set += 1;
            }
        }
    }
    Ok(schedule)
}

/// A balanced design's blocks as tables of `plan`'s game: its points seated by the shuffle of the
/// bots (the field), each table sorted, the tables sorted.
fn seat_design(
    config: &LeagueConfig,
    bots: &[String],
    plan: &GamePlan,
    blocks: Vec<Vec<usize>>,
    dice: &LeagueDice,
) -> Vec<Vec<usize>> {
    let (field, _) = design_points(&config.format, bots.len(), plan.table_size);
    let seat = shuffled(field, dice.secret.relabel_seed(plan.game));
    let blocks: Vec<Vec<usize>> = blocks
        .into_iter()
        .map(|b| b.into_iter().map(|p| seat[p]).collect())
        .collect();
    let mut tables = match &config.format {
        Format::RoundRobin => blocks,
        Format::Gauntlet { challenger } => with_challenger(bots, blocks, challenger),
    };
    for t in &mut tables {
        t.sort_unstable();
    }
    tables.sort_unstable();
    tables
}
