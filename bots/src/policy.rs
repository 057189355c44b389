//! What decides: [`BotPolicy`], implemented for closures and the engine's policies.

use knobel_engine::policy::{
    self, ExpertPolicy, HeuristicPolicy, Policy, RandomPolicy, TimidPolicy,
};
use knobel_engine::{Action, Observation, Rules};

/// Decides what a bot does. [`crate::run_bot`] calls it for every decision request with the
/// seat's observation and the legal actions, converted to engine types.
///
/// Implemented for every `FnMut(&Observation, &[Action]) -> Action + Send` closure, for
/// `Box<dyn Policy + Send>` (as [`knobel_engine::policy::by_name`] returns), and for the
/// engine's [`RandomPolicy`], [`TimidPolicy`] and [`HeuristicPolicy`]; wrap any other
/// engine [`Policy`] in [`EnginePolicy`].
///
/// The action should be one of `legal`; if it is not, the bot sends the request's default
/// action instead (and logs a warning) rather than collect a strike. A decision should be
/// quick: it runs on the connection's task, and the arena's clock is ticking.
pub trait BotPolicy: Send {
    /// Told the rules of a match as it starts (from the MatchStart's preset, variants and
    /// settings). Policies that play the same under every variant ignore it.
    fn begin_match(&mut self, _rules: &Rules) {}

    /// The action to take.
    fn decide(&mut self, observation: &Observation, legal: &[Action]) -> Action;
}

impl<F> BotPolicy for F
where
    F: FnMut(&Observation, &[Action]) -> Action + Send,
{
    fn decide(&mut self, observation: &Observation, legal: &[Action]) -> Action {
        self(observation, legal)
    }
}

/// Adapts any engine [`Policy`] to a [`BotPolicy`].
#[derive(Clone, Debug, Default)]
pub struct EnginePolicy<P>(pub P);

impl<P: Policy + Send> BotPolicy for EnginePolicy<P> {
    fn begin_match(&mut self, rules: &Rules) {
        self.0.begin_match(rules)
    }

    fn decide(&mut self, observation: &Observation, legal: &[Action]) -> Action {
        self.0.decide(observation, legal)
    }
}

impl BotPolicy for Box<dyn Policy + Send> {
    fn begin_match(&mut self, rules: &Rules) {
        self.as_mut().begin_match(rules)
    }

    fn decide(&mut self, observation: &Observation, legal: &[Action]) -> Action {
        self.as_mut().decide(observation, legal)
    }
}

macro_rules! engine_policy {
    ($($policy:ty),*) => {$(
        impl BotPolicy for $policy {
            fn begin_match(&mut self, rules: &Rules) {
                Policy::begin_match(self, rules)
            }

            fn decide(&mut self, observation: &Observation, legal: &[Action]) -> Action {
                Policy::decide(self, observation, legal)
            }
        }
    )*};
}

engine_policy!(RandomPolicy, TimidPolicy, HeuristicPolicy, ExpertPolicy);

/// The reference strategies by name: `heuristic`, `expert`, `random` (seeded with `seed`),
/// `timid` or a graded `heuristic-NN`. `None` for any other name.
pub fn strategy(name: &str, seed: u64) -> Option<Box<dyn Policy + Send>> {
    policy::by_name(name, seed)
}

/// The names [`strategy`] knows.
pub const STRATEGIES: [&str; policy::POLICY_NAMES.len()] = policy::POLICY_NAMES;
