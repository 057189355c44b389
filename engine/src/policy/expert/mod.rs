//! [`ExpertPolicy`]: the strongest built-in player, computed rather than hand-written.
//!
//! - Schocken and Sjokken ([`shake`]): after every throw, the exact expectimax over the rest
//!   of the turn of the tokens it expects to receive in the round, against the hands shown
//!   so far and a model of the players still to come that play this same policy
//!   ([`tables`]).
//! - Zokken ([`zokken`]): rerolls that maximise its exact showdown equity against the other
//!   seats' figures, and bets from that equity, the pot odds and the cap, with bluffs at a
//!   documented rate from its own seeded generator.
//!
//! The tables that can be computed once (hands, the model of later players, Zokken's final
//! distributions) are computed on first use and shared by every expert in the process. Its
//! play is a function of its seed, the rules and what it sees.

mod shake;
pub(crate) mod tables;
pub(crate) mod turn;
pub(crate) mod zokken;

use super::Policy;
use crate::action::Action;
use crate::play::Observation;
use crate::rules::Rules;

pub use zokken::BLUFF_RATE;

/// The expert player (see the [module documentation](self)).
pub struct ExpertPolicy {
    shake_rules: shake::ShakeRules,
    shake: shake::ShakeExpert,
    zokken: zokken::ZokkenExpert,
}

impl std::fmt::Debug for ExpertPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExpertPolicy")
            .field("shake_rules", &self.shake_rules)
            .finish_non_exhaustive()
    }
}

impl ExpertPolicy {
    /// An expert seeded with `seed` (its Zokken bluffs), playing Schocken by the `schocken`
    /// preset's settings until told the rules ([`Policy::begin_match`]). Whether sixes may
    /// be turned on stopping it reads from each decision.
    pub fn new(seed: u64) -> ExpertPolicy {
        ExpertPolicy {
            shake_rules: shake::ShakeRules::default(),
            shake: shake::ShakeExpert::default(),
            zokken: zokken::ZokkenExpert::new(seed),
        }
    }

    /// An expert for a match of `rules`, seeded with `seed`.
    pub fn for_rules(rules: &Rules, seed: u64) -> ExpertPolicy {
        let mut expert = ExpertPolicy::new(seed);
        expert.begin_match(rules);
        expert
    }

    /// Builds the tables experts use in matches of `rules` at `seats` seats, by playing one
    /// such match of experts: the tables are shared by every expert in the process, so an
    /// expert that plays afterwards answers its first decision as fast as its later ones
    /// (building them can take seconds, more than a decision's deadline). Call it before a
    /// bot says Hello. Deterministic; cheap for tables already built. Refused rules or a
    /// number of seats out of range build nothing.
    pub fn prepare(rules: &Rules, seats: usize) {
        let Ok(mut m) = crate::play::Match::new(rules.clone(), 0, seats) else {
            return;
        };
        let mut experts: Vec<Box<ExpertPolicy>> = (0..seats)
            .map(|seat| Box::new(ExpertPolicy::new(seat as u64)))
            .collect();
        super::play_out(&mut m, &mut experts);
    }
}

impl Policy for ExpertPolicy {
    fn name(&self) -> &'static str {
        "expert"
    }

    fn wants_legal_actions(&self) -> bool {
        false
    }

    fn begin_match(&mut self, rules: &Rules) {
        self.shake_rules = shake::ShakeRules::of(rules);
        self.zokken.begin_match(rules);
    }

    fn decide(&mut self, observation: &Observation, _legal: &[Action]) -> Action {
        match observation {
            Observation::Shake(o) => self.shake.decide(o, self.shake_rules),
            Observation::Zokken(o) => self.zokken.decide(o),
        }
    }
}
