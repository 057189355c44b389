//! Weng-Lin ratings (`skillratings`), per game and over all games, computed from stored
//! results **in schedule order**: the ratings of a league do not depend on which match
//! happened to finish first, and recomputing them from the store gives the same figures.
//!
//! Each match is one free-for-all of single-player teams, ranked by placing (tied seats
//! share a rank; a forfeited seat is already placed last by the engine). The standings show
//! the conservative score `mu - 3 sigma` and break ties of their order (the mean score, see
//! `standings`) with it.

use std::collections::BTreeMap;

use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

/// A bot's rating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// The skill estimate.
    pub mu: f64,
    /// Its uncertainty.
    pub sigma: f64,
}

impl Rating {
    /// `mu - 3 sigma`: a skill the bot has with about 99.7% confidence.
    pub fn conservative(self) -> f64 {
        self.mu - 3.0 * self.sigma
    }
}

impl Default for Rating {
    fn default() -> Self {
        let r = WengLinRating::new();
        Rating {
            mu: r.rating,
            sigma: r.uncertainty,
        }
    }
}

/// Ratings being computed, match by match in schedule order.
#[derive(Clone, Debug, Default)]
pub struct Ratings {
    ratings: BTreeMap<String, WengLinRating>,
}

impl Ratings {
    /// Applies one match: its bots and their places (1 = first), in seat order.
    pub fn apply(&mut self, seats: &[(&str, u8)]) {
        let before: Vec<WengLinRating> = seats
            .iter()
            .map(|(bot, _)| self.ratings.get(*bot).copied().unwrap_or_default())
            .collect();
        let teams: Vec<[WengLinRating; 1]> = before.iter().map(|&r| [r]).collect();
        let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
            .iter()
            .zip(seats)
            .map(|(team, (_, place))| (&team[..], MultiTeamOutcome::new(usize::from(*place))))
            .collect();
        let after = weng_lin_multi_team(&input, &WengLinConfig::new());
        for ((bot, _), team) in seats.iter().zip(after) {
            self.ratings.insert((*bot).to_owned(), team[0]);
        }
    }

    /// The rating of `bot` (the initial rating if it has played no match).
    pub fn get(&self, bot: &str) -> Rating {
        let r = self.ratings.get(bot).copied().unwrap_or_default();
        Rating {
            mu: r.rating,
            sigma: r.uncertainty,
        }
    }
}
