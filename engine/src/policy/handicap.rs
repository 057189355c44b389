//! [`HandicapPolicy`]: the heuristic with some of its skills left out, and the ladder of
//! graded, deterministic strengths built from it ([`HANDICAP_LADDER`]).

use super::Policy;
use super::shake::{self, Keep, ShakeSkills};
use super::zokken::{self, Betting, Rerolls, ZokkenSkills};
use crate::action::Action;
use crate::play::Observation;

/// The handicapped built-in players, strongest first (see [`HandicapPolicy`]). With the
/// heuristic above them and `timid` between `handicap-3` and `handicap-4` they make six
/// players of clearly distinct strength in Schocken, Sjokken and Zokken. Unlike the
/// [`super::HEURISTIC_LADDER`] they draw on no seed: each decision is a function of the
/// observation alone (measured: `docs/leagues.md`, "Built-in players").
pub const HANDICAP_LADDER: [&str; 4] = ["handicap-1", "handicap-2", "handicap-3", "handicap-4"];

/// The heuristic with some of its skills left out, by `level` (1 to 4, higher is weaker):
///
/// | level | Schocken, Sjokken | Zokken |
/// |---|---|---|
/// | 1 | the heuristic, but at most two throws | the heuristic, but its first reroll as if it were the last, then keeps all dice |
/// | 2 | rerolls every die it may, stops only on a strong hand (Schock 4 or better, General), never turns sixes | keeps all dice, bets as the heuristic |
/// | 3 | as level 2, but at most two throws | rerolls as level 1, never bets, calls every bet |
/// | 4 | throws to the limit, keeping only its twos and threes | keeps all dice, bets and raises whenever it may, never folds |
///
/// `timid` (one throw; keeps all dice, calls every bet) is weaker than level 3 and stronger
/// than level 4 in every game. Pure and deterministic: no seed, no state; the same
/// observation gives the same action.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HandicapPolicy {
    level: u8,
    name: &'static str,
}

impl HandicapPolicy {
    /// The player of handicap `level` (1 to 4), or `None` for another level.
    pub fn new(level: u8) -> Option<HandicapPolicy> {
        let name = HANDICAP_LADDER.get(usize::from(level).checked_sub(1)?)?;
        Some(HandicapPolicy { level, name })
    }

    /// The player named `name` of [`HANDICAP_LADDER`].
    pub fn by_name(name: &str) -> Option<HandicapPolicy> {
        let i = HANDICAP_LADDER.iter().position(|n| *n == name)?;
        HandicapPolicy::new(i as u8 + 1)
    }

    /// Its handicap, 1 to 4 (higher is weaker).
    pub fn level(&self) -> u8 {
        self.level
    }

    fn shake_skills(&self) -> ShakeSkills {
        let rerolls_all = ShakeSkills {
            reads_table: false,
            turns_sixes: false,
            keep: Keep::Nothing,
            ..ShakeSkills::HEURISTIC
        };
        match self.level {
            1 => ShakeSkills {
                throws: 2,
                ..ShakeSkills::HEURISTIC
            },
            2 => rerolls_all,
            3 => ShakeSkills {
                throws: 2,
                ..rerolls_all
            },
            _ => ShakeSkills {
                stops_on_strong: false,
                keep: Keep::Low,
                ..rerolls_all
            },
        }
    }

    fn zokken_skills(&self) -> ZokkenSkills {
        let (rerolls, betting) = match self.level {
            1 => (Rerolls::OnlyOne, Betting::Heuristic),
            2 => (Rerolls::None, Betting::Heuristic),
            3 => (Rerolls::OnlyOne, Betting::CallsAll),
            _ => (Rerolls::None, Betting::Maniac),
        };
        ZokkenSkills { rerolls, betting }
    }
}

impl Policy for HandicapPolicy {
    fn name(&self) -> &'static str {
        self.name
    }

    fn wants_legal_actions(&self) -> bool {
        false
    }

    fn decide(&mut self, observation: &Observation, _legal: &[Action]) -> Action {
        match observation {
            Observation::Shake(o) => shake::play(o, self.shake_skills()),
            Observation::Zokken(o) => zokken::play(o, self.zokken_skills()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{POLICY_NAMES, by_name};

    // Legal, deterministic play of every handicapped player: engine/tests/built_in_players.rs.

    #[test]
    fn levels_and_names_match() {
        for (i, name) in HANDICAP_LADDER.iter().enumerate() {
            let p = HandicapPolicy::new(i as u8 + 1).expect("a level");
            assert_eq!(p.name(), *name);
            assert_eq!(p.level(), i as u8 + 1);
            assert_eq!(HandicapPolicy::by_name(name), Some(p));
            assert_eq!(by_name(name, 1).expect("by name").name(), *name);
            assert!(POLICY_NAMES.contains(name));
        }
        assert!(HandicapPolicy::new(0).is_none());
        assert!(HandicapPolicy::new(5).is_none());
        assert!(HandicapPolicy::by_name("handicap-0").is_none());
    }

    #[test]
    fn every_level_plays_its_own_skills_and_none_is_the_heuristic() {
        let levels: Vec<HandicapPolicy> = (1..=4).filter_map(HandicapPolicy::new).collect();
        for (i, a) in levels.iter().enumerate() {
            assert_ne!(a.shake_skills(), ShakeSkills::HEURISTIC);
            assert_ne!(a.zokken_skills(), ZokkenSkills::HEURISTIC);
            for b in &levels[i + 1..] {
                assert_ne!(a.shake_skills(), b.shake_skills());
                assert_ne!(a.zokken_skills(), b.zokken_skills());
            }
        }
    }
}
