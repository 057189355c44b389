//! Built-in players for tests, benchmarks and the simulator: [`RandomPolicy`] (a uniformly
//! random legal action), [`TimidPolicy`] (stops at once, never bets),
//! [`HeuristicPolicy`] (keeps ones, turns sixes, bets on strong figures), [`ExpertPolicy`]
//! (exact turn play and equity-based betting, the strongest), and between the
//! heuristic and random the graded [`NoisyHeuristicPolicy`] players of
//! [`HEURISTIC_LADDER`] (`heuristic-80` ... `heuristic-20`: the number is the
//! share of decisions, in percent, played as the heuristic), and the deterministic
//! [`HandicapPolicy`] players of [`HANDICAP_LADDER`] (`handicap-1` ... `handicap-4`: the
//! heuristic with skills left out, weaker as the number grows).
//!
//! A policy sees only what a bot would: its [`Observation`] and the legal actions.

pub(crate) mod expert;
mod handicap;
mod noisy;
mod shake;
mod zokken;

pub use expert::{BLUFF_RATE, ExpertPolicy};
pub use handicap::{HANDICAP_LADDER, HandicapPolicy};
pub use noisy::{HEURISTIC_LADDER, NoisyHeuristicPolicy};

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use crate::action::Action;
use crate::play::{Match, Observation};
use crate::rules::Rules;
use crate::types::Seat;

/// A player that decides from its observation.
pub trait Policy {
    /// A short name, e.g. "heuristic".
    fn name(&self) -> &'static str;

    /// Whether [`Policy::decide`] needs the list of legal actions (building it costs time;
    /// policies that do not need it get an empty slice).
    fn wants_legal_actions(&self) -> bool {
        true
    }

    /// Tells the policy the rules of the match it is about to play (before its first
    /// decision). Policies that play the same under every variant ignore it.
    fn begin_match(&mut self, _rules: &Rules) {}

    /// The action to take, given what this player sees and (if wanted) the legal actions.
    fn decide(&mut self, observation: &Observation, legal: &[Action]) -> Action;
}

/// Picks a legal action uniformly at random.
#[derive(Clone, Debug)]
pub struct RandomPolicy {
    rng: SmallRng,
}

impl RandomPolicy {
    /// A random player seeded with `seed`.
    pub fn new(seed: u64) -> RandomPolicy {
        RandomPolicy {
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl Policy for RandomPolicy {
    fn name(&self) -> &'static str {
        "random"
    }

    fn decide(&mut self, _observation: &Observation, legal: &[Action]) -> Action {
        if legal.is_empty() {
            return Action::STOP;
        }
        legal[self.rng.random_range(0..legal.len())]
    }
}

/// Stops after the first throw, never turns, never bets or raises, calls every bet and
/// keeps all its Zokken dice: the baseline every real bot should beat.
#[derive(Clone, Debug, Default)]
pub struct TimidPolicy;

impl Policy for TimidPolicy {
    fn name(&self) -> &'static str {
        "timid"
    }

    fn wants_legal_actions(&self) -> bool {
        false
    }

    fn decide(&mut self, observation: &Observation, _legal: &[Action]) -> Action {
        match observation {
            Observation::Shake(_) => Action::STOP,
            Observation::Zokken(z) => zokken::timid(z),
        }
    }
}

/// A sensible player per game: keeps ones and turns sixes (Schocken, Sjokken), keeps the
/// dice of its best figure and bets on strong figures (Zokken).
#[derive(Clone, Debug, Default)]
pub struct HeuristicPolicy;

impl Policy for HeuristicPolicy {
    fn name(&self) -> &'static str {
        "heuristic"
    }

    fn wants_legal_actions(&self) -> bool {
        false
    }

    fn decide(&mut self, observation: &Observation, _legal: &[Action]) -> Action {
        match observation {
            Observation::Shake(o) => shake::heuristic(o),
            Observation::Zokken(o) => zokken::heuristic(o),
        }
    }
}

/// The names [`by_name`] knows: `random`, `timid`, `heuristic`, `expert`, the
/// [`HEURISTIC_LADDER`] and the [`HANDICAP_LADDER`], each ladder strongest first.
pub const POLICY_NAMES: [&str; 12] = [
    "random",
    "timid",
    "heuristic",
    "expert",
    HEURISTIC_LADDER[0].0,
    HEURISTIC_LADDER[1].0,
    HEURISTIC_LADDER[2].0,
    HEURISTIC_LADDER[3].0,
    HANDICAP_LADDER[0],
    HANDICAP_LADDER[1],
    HANDICAP_LADDER[2],
    HANDICAP_LADDER[3],
];

/// A built-in policy by name (`random`, `expert` and the [`HEURISTIC_LADDER`] players
/// are seeded with `seed`; the others ignore it). The expert plays Schocken by the `schocken` preset until
/// [`Policy::begin_match`] tells it the rules ([`play_out`] does).
pub fn by_name(name: &str, seed: u64) -> Option<Box<dyn Policy + Send>> {
    match name {
        "random" => Some(Box::new(RandomPolicy::new(seed))),
        "timid" => Some(Box::new(TimidPolicy)),
        "heuristic" => Some(Box::new(HeuristicPolicy)),
        "expert" => Some(Box::new(ExpertPolicy::new(seed))),
        _ => match HandicapPolicy::by_name(name) {
            Some(p) => Some(Box::new(p)),
            None => NoisyHeuristicPolicy::from_ladder(name, seed)
                .map(|p| Box::new(p) as Box<dyn Policy + Send>),
        },
    }
}

/// Plays `m` to its end with `players[seat]` deciding for each seat. An illegal choice is
/// replaced by the seat's default action, as the arena would. Every player is first told
/// the rules ([`Policy::begin_match`]).
pub fn play_out<P: Policy + ?Sized>(m: &mut Match, players: &mut [Box<P>]) {
    assert_eq!(players.len(), m.seats(), "one policy per seat");
    for player in players.iter_mut() {
        player.begin_match(m.rules());
    }
    let mut observation = m.observe(Seat(0));
    let mut legal = Vec::new();
    while !m.is_over() {
        for seat in m.to_act().iter() {
            let player = &mut players[seat.index()];
            m.observe_into(seat, &mut observation);
            legal.clear();
            if player.wants_legal_actions() {
                legal = m.legal_actions(seat);
            }
            let action = player.decide(&observation, &legal);
            if m.apply(seat, action).is_err() {
                let fallback = m
                    .default_action(seat)
                    .expect("a seat to act has a default action");
                m.apply(seat, fallback)
                    .expect("the default action is always legal");
            }
        }
    }
}
