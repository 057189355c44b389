//! The rules a match is played by: a game, a preset and its variants (RULES.md §7).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::RulesError;

/// One of the three games.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Game {
    /// Schocken (seeds 001 and 003): 13 mats, halves and a final.
    Schocken,
    /// Sjokken (seed 000): 15 penalty points, SJOK1, blind last throws.
    Sjokken,
    /// Zokken (seed 002): Miwin's dice and fixed-limit betting.
    Zokken,
}

impl Game {
    /// All games, in a fixed order.
    pub const ALL: [Game; 3] = [Game::Schocken, Game::Sjokken, Game::Zokken];

    /// The lowercase name used on the wire, in the database and in metrics.
    pub fn name(self) -> &'static str {
        match self {
            Game::Schocken => "schocken",
            Game::Sjokken => "sjokken",
            Game::Zokken => "zokken",
        }
    }
}

impl fmt::Display for Game {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Game {
    type Err = RulesError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Game::ALL
            .into_iter()
            .find(|g| g.name() == s)
            .ok_or_else(|| RulesError::UnknownGame { name: s.to_owned() })
    }
}

/// Schocken's settings (RULES.md §2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchockenRules {
    /// Mats in a half (default 13).
    pub tokens: u8,
    /// `tie_later_loses`: equal hands are ordered by turn order only (seed 001).
    pub tie_later_loses: bool,
    /// `turn_on_last_throw`: sixes may be turned and the turn stopped, also after the last
    /// allowed throw (seed 001).
    pub turn_on_last_throw: bool,
    /// `jule`: 4-2-1 is worth 7 and ranks directly below Schock out.
    pub jule: bool,
    /// `straight_in_one_throw`: a straight counts only if all three dice were rolled
    /// together in the player's last throw.
    pub straight_in_one_throw: bool,
    /// `single_half`: one half, no final.
    pub single_half: bool,
    /// `open_dice`: every die is public at all times.
    pub open_dice: bool,
}

/// Sjokken's settings (RULES.md §3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SjokkenRules {
    /// Penalty points in the game (default 15).
    pub tokens: u8,
}

/// Zokken's settings (RULES.md §4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZokkenRules {
    /// Chips every player puts into the pot at the start of a round (default 1).
    pub ante: u32,
    /// Bet and raise size in betting round 1 (default 2).
    pub small_bet: u32,
    /// Bet and raise size in betting rounds 2 and 3 (default 4).
    pub big_bet: u32,
    /// Most bets in one betting round: a bet and `max_bets - 1` raises (default 4).
    pub max_bets: u8,
    /// Rounds in a match, not counting tie replays (default 100).
    pub rounds: u32,
    /// `bet_after_last_throw`: a third betting round after throw 3.
    pub bet_after_last_throw: bool,
    /// Tie replays before the pot is split (default 5).
    pub max_replays: u8,
}

/// The full rules of a match: the game with its settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "game", rename_all = "lowercase")]
pub enum Rules {
    /// Schocken.
    Schocken(SchockenRules),
    /// Sjokken.
    Sjokken(SjokkenRules),
    /// Zokken.
    Zokken(ZokkenRules),
}

/// The preset names of RULES.md §7.
pub const PRESETS: [&str; 4] = ["schocken", "schocken-typenclub", "sjokken", "zokken"];

impl Rules {
    /// The rules of a named preset (RULES.md §7).
    pub fn preset(name: &str) -> Result<Rules, RulesError> {
        let schocken = SchockenRules {
            tokens: 13,
            tie_later_loses: false,
            turn_on_last_throw: false,
            jule: false,
            straight_in_one_throw: false,
            single_half: false,
            open_dice: false,
        };
        Ok(match name {
            "schocken" => Rules::Schocken(schocken),
            "schocken-typenclub" => Rules::Schocken(SchockenRules {
                tie_later_loses: true,
                turn_on_last_throw: true,
                ..schocken
            }),
            "sjokken" => Rules::Sjokken(SjokkenRules { tokens: 15 }),
            "zokken" => Rules::Zokken(ZokkenRules {
                ante: 1,
                small_bet: 2,
                big_bet: 4,
                max_bets: 4,
                rounds: 100,
                bet_after_last_throw: false,
                max_replays: 5,
            }),
            _ => {
                return Err(RulesError::UnknownPreset {
                    name: name.to_owned(),
                });
            }
        })
    }

    /// The game these rules are for.
    pub fn game(&self) -> Game {
        match self {
            Rules::Schocken(_) => Game::Schocken,
            Rules::Sjokken(_) => Game::Sjokken,
            Rules::Zokken(_) => Game::Zokken,
        }
    }

    /// Switches a named on/off variant (e.g. `jule`, `open_dice`, `bet_after_last_throw`).
    pub fn set_variant(&mut self, name: &str, on: bool) -> Result<(), RulesError> {
        let flag = match (&mut *self, name) {
            (Rules::Schocken(r), "tie_later_loses") => &mut r.tie_later_loses,
            (Rules::Schocken(r), "turn_on_last_throw") => &mut r.turn_on_last_throw,
            (Rules::Schocken(r), "jule") => &mut r.jule,
            (Rules::Schocken(r), "straight_in_one_throw") => &mut r.straight_in_one_throw,
            (Rules::Schocken(r), "single_half") => &mut r.single_half,
            (Rules::Schocken(r), "open_dice") => &mut r.open_dice,
            (Rules::Zokken(r), "bet_after_last_throw") => &mut r.bet_after_last_throw,
            _ => {
                return Err(RulesError::UnknownVariant {
                    game: self.game(),
                    name: name.to_owned(),
                    legal: self.variant_names().join(", "),
                });
            }
        };
        *flag = on;
        Ok(())
    }

    /// Sets a numeric setting (`tokens`; Zokken: `ante`, `small_bet`, `big_bet`, `max_bets`,
    /// `rounds`, `max_replays`), checking its bounds.
    pub fn set_number(&mut self, name: &str, value: u32) -> Result<(), RulesError> {
        fn bounded(
            name: &str,
            value: u32,
            range: std::ops::RangeInclusive<u32>,
        ) -> Result<u32, RulesError> {
            if range.contains(&value) {
                Ok(value)
            } else {
                Err(RulesError::OutOfRange {
                    name: name.to_owned(),
                    value,
                    min: *range.start(),
                    max: *range.end(),
                })
            }
        }
        match (&mut *self, name) {
            (Rules::Schocken(r), "tokens") => r.tokens = bounded(name, value, 1..=99)? as u8,
            (Rules::Sjokken(r), "tokens") => r.tokens = bounded(name, value, 1..=99)? as u8,
            (Rules::Zokken(r), "ante") => r.ante = bounded(name, value, 0..=1_000)?,
            (Rules::Zokken(r), "small_bet") => r.small_bet = bounded(name, value, 1..=1_000)?,
            (Rules::Zokken(r), "big_bet") => r.big_bet = bounded(name, value, 1..=1_000)?,
            (Rules::Zokken(r), "max_bets") => r.max_bets = bounded(name, value, 1..=10)? as u8,
            (Rules::Zokken(r), "rounds") => r.rounds = bounded(name, value, 1..=100_000)?,
            (Rules::Zokken(r), "max_replays") => {
                r.max_replays = bounded(name, value, 0..=20)? as u8
            }
            _ => {
                return Err(RulesError::UnknownSetting {
                    game: self.game(),
                    name: name.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// The on/off variants this game knows.
    pub fn variant_names(&self) -> &'static [&'static str] {
        match self {
            Rules::Schocken(_) => &[
                "tie_later_loses",
                "turn_on_last_throw",
                "jule",
                "straight_in_one_throw",
                "single_half",
                "open_dice",
            ],
            Rules::Sjokken(_) => &[],
            Rules::Zokken(_) => &["bet_after_last_throw"],
        }
    }

    /// The on/off variants that are switched on, in [`Rules::variant_names`] order.
    pub fn variants_on(&self) -> Vec<&'static str> {
        self.variant_names()
            .iter()
            .copied()
            .filter(|name| {
                let mut probe = self.clone();
                // A variant is on when switching it on changes nothing.
                probe.set_variant(name, true).is_ok() && probe == *self
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_variants() {
        for name in PRESETS {
            assert!(Rules::preset(name).is_ok(), "{name}");
        }
        let mut r = Rules::preset("schocken").unwrap();
        assert!(r.variants_on().is_empty());
        r.set_variant("jule", true).unwrap();
        assert_eq!(r.variants_on(), ["jule"]);
        let typenclub = Rules::preset("schocken-typenclub").unwrap();
        assert_eq!(
            typenclub.variants_on(),
            ["tie_later_loses", "turn_on_last_throw"]
        );
        let err = r.set_variant("blind", true).unwrap_err().to_string();
        assert!(err.contains("jule, straight_in_one_throw"), "{err}");
        assert!(r.set_number("tokens", 0).is_err());
        assert!(Rules::preset("poker").is_err());
    }
}
