//! [`NoisyHeuristicPolicy`]: the heuristic with a share of uniformly random moves, and the
//! ladder of graded strengths built from it ([`HEURISTIC_LADDER`]).

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use super::{HeuristicPolicy, Policy};
use crate::action::Action;
use crate::play::Observation;

/// The graded built-in players between `heuristic` and `random`, strongest first: each
/// name with the share of its decisions it plays uniformly at random (the rest it plays as
/// the heuristic). Each step is clearly weaker than the one above in Schocken, Sjokken and
/// Zokken (measured: `docs/leagues.md`, "Built-in players").
pub const HEURISTIC_LADDER: [(&str, f64); 4] = [
    ("heuristic-80", 0.2),
    ("heuristic-60", 0.4),
    ("heuristic-40", 0.6),
    ("heuristic-20", 0.8),
];

/// Plays as [`HeuristicPolicy`], except that each decision is, with probability
/// `random_share`, a uniformly random legal action instead. Both draws come from its own
/// seeded generator, so its play is a function of its seed and what it sees.
#[derive(Clone, Debug)]
pub struct NoisyHeuristicPolicy {
    name: &'static str,
    random_share: f64,
    rng: SmallRng,
}

impl NoisyHeuristicPolicy {
    /// A player named `name` (what [`Policy::name`] reports) that plays a random legal
    /// action with probability `random_share` (clamped to 0..=1), seeded with `seed`.
    pub fn new(name: &'static str, random_share: f64, seed: u64) -> NoisyHeuristicPolicy {
        NoisyHeuristicPolicy {
            name,
            random_share: random_share.clamp(0.0, 1.0),
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The ladder player `name` of [`HEURISTIC_LADDER`], seeded with `seed`.
    pub fn from_ladder(name: &str, seed: u64) -> Option<NoisyHeuristicPolicy> {
        HEURISTIC_LADDER
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(n, share)| NoisyHeuristicPolicy::new(n, share, seed))
    }

    /// The share of decisions it plays at random.
    pub fn random_share(&self) -> f64 {
        self.random_share
    }
}

impl Policy for NoisyHeuristicPolicy {
    fn name(&self) -> &'static str {
        self.name
    }

    fn decide(&mut self, observation: &Observation, legal: &[Action]) -> Action {
        if !legal.is_empty() && self.rng.random_bool(self.random_share) {
            return legal[self.rng.random_range(0..legal.len())];
        }
        HeuristicPolicy.decide(observation, legal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::Match;
    use crate::rules::Rules;

    // Legal, deterministic play of every ladder player: engine/tests/built_in_players.rs.

    #[test]
    fn the_random_share_sets_how_often_it_leaves_the_heuristic() {
        let m = Match::new(Rules::preset("schocken").unwrap(), 5, 2).unwrap();
        let seat = m.to_act().iter().next().unwrap();
        let observation = m.observe(seat);
        let legal = m.legal_actions(seat);
        let heuristic = HeuristicPolicy.decide(&observation, &legal);
        let mut never = NoisyHeuristicPolicy::new("h", 0.0, 1);
        assert!((0..100).all(|_| never.decide(&observation, &legal) == heuristic));
        let mut half = NoisyHeuristicPolicy::new("h", 0.5, 1);
        let off = (0..1000)
            .filter(|_| half.decide(&observation, &legal) != heuristic)
            .count();
        // A random pick equals the heuristic's choice about 1 in `legal.len()` times.
        let expected = 500.0 * (1.0 - 1.0 / legal.len() as f64);
        assert!((off as f64 - expected).abs() < 80.0, "{off} vs {expected}");
        assert_eq!(half.random_share(), 0.5);
    }

    #[test]
    fn by_name_knows_every_ladder_player() {
        for (name, _) in HEURISTIC_LADDER {
            let p = super::super::by_name(name, 3).expect("a ladder player");
            assert_eq!(p.name(), name);
            assert!(super::super::POLICY_NAMES.contains(&name));
        }
        assert!(NoisyHeuristicPolicy::from_ladder("heuristic-0", 1).is_none());
    }
}
