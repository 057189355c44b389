//! Knobel's leagues without I/O, the lowest layer of the arena (ARCHITECTURE.md): a league
//! file ([`config`]) expands into a schedule of sets ([`schedule`]), in a large league on the
//! tables of a balanced design ([`design`]), its dice from the league's secret ([`dice`]);
//! results give standings ([`standings`]) with Weng-Lin ratings ([`ratings`]), anytime-valid
//! confidence sequences ([`confidence`]) and the verdicts that settle a league ([`settle`]);
//! a match's luck-adjusted scores come from [`luck`]; [`archive`] is a league's export format.
//! No async runtime, database or network: the arena's runtime and store sit on top.
//! `docs/leagues.md` is the reference.

pub mod archive;
pub mod confidence;
pub mod config;
pub mod design;
pub mod dice;
pub mod luck;
pub mod ratings;
pub mod schedule;
pub mod settle;
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
