//! Leagues: a league file ([`config`]) expands into a schedule of duplicate sets
//! ([`schedule`]), in a large league on the tables of a balanced design ([`design`]); its
//! stored results give standings ([`standings`]) with Weng-Lin ratings
//! ([`ratings`]) and confidence intervals; a match's luck-adjusted scores ([`luck`]) are
//! recorded with its result. [`simulate`] plays a schedule in-process with engine policies.
//! `docs/leagues.md` is the reference.

pub mod adaptive;
pub mod archive;
pub mod confidence;
pub mod config;
pub mod design;
pub mod dice;
pub mod export;
pub mod luck;
pub mod ratings;
pub mod schedule;
pub mod scheduler;
pub mod service;
pub mod settle;
pub mod simulate;
pub mod standings;

#[cfg(test)]
mod design_tests;

/// The public dice of a test's league file: its seed (1 if it names none) and dice mode.
#[cfg(test)]
pub(crate) fn public_dice(config: &LeagueConfig) -> LeagueDice {
    LeagueDice::public(config.seed.unwrap_or(1), config.dice)
}
#[cfg(test)]
mod tests;

pub use config::{BotSelection, Format, GamePlan, LeagueConfig, LeagueConfigError};
pub use dice::{DiceMode, LeagueDice, LeagueSecret, SeedSource};
pub use schedule::{MAX_MATCHES, ScheduleError, ScheduledMatch, expand, scheduled_matches};
pub use settle::{Margins, PairVerdict, Plan, Stop};
pub use standings::{PlayedMatch, PlayedSeat, Standings, standings, standings_with};
