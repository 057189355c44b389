//! Leagues: a league file ([`config`]) expands into a schedule of duplicate sets
//! ([`schedule`]), in a large league on the tables of a balanced design ([`design`]); its
//! stored results give standings ([`standings`]) with Weng-Lin ratings
//! ([`ratings`]) and confidence intervals. [`simulate`] plays a schedule in-process with
//! engine policies. `docs/leagues.md` is the reference.

pub mod config;
pub mod design;
pub mod ratings;
pub mod schedule;
pub mod scheduler;
pub mod service;
pub mod simulate;
pub mod standings;

#[cfg(test)]
mod design_tests;
#[cfg(test)]
mod tests;

pub use config::{BotSelection, Format, GamePlan, LeagueConfig, LeagueConfigError};
pub use schedule::{ScheduleError, ScheduledMatch, expand};
pub use standings::{PlayedMatch, PlayedSeat, Standings, standings};
