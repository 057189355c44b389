//! Leagues at run time: the scheduler that plays a league's matches ([`scheduler`]), in a
//! settled league in the order [`adaptive`] picks; the league service behind the gRPC admin
//! calls ([`service`]); the one published snapshot of the leagues that the metrics and the
//! live pages read ([`snapshot`]); exports ([`export`]); a schedule played in-process with engine
//! policies ([`simulate`]); luck-adjusted scores computed off the executor ([`luck`]).
//! What needs no I/O (the league file, schedules, dice, standings, confidence sequences) is
//! the crate `knobel-league`, re-exported here. `docs/leagues.md` is the reference.

pub mod adaptive;
pub mod export;
pub mod luck;
pub mod scheduler;
pub mod service;
pub mod simulate;
pub mod snapshot;

pub use knobel_league::{
    archive, confidence, config, design, dice, ratings, schedule, settle, standings,
};

/// The public dice of a test's league file: its seed (1 if it names none) and dice mode.
#[cfg(test)]
pub(crate) fn public_dice(config: &LeagueConfig) -> LeagueDice {
    LeagueDice::public(config.seed.unwrap_or(1), config.dice)
}

pub use knobel_league::{
    BotSelection, DiceMode, Format, GamePlan, LeagueConfig, LeagueConfigError, LeagueDice,
    LeagueSecret, MAX_MATCHES, Margins, PairVerdict, Plan, PlayedMatch, PlayedSeat, ScheduleError,
    ScheduledMatch, SeedSource, Standings, Stop, expand, scheduled_matches, standings_with,
};
