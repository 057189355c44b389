//! The rules a match is played by: a game, a preset and its variants (RULES.md §7).

use std::fmt;
use std::ops::RangeInclusive;
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

/// `value` if it is within the legal range of `game`'s setting `name`.
fn bounded(game: Game, name: &str, value: u32) -> Result<u32, RulesError> {
    let range = Rules::setting_range(game, name).ok_or_else(|| RulesError::UnknownSetting {
        game,
        name: name.to_owned(),
    })?;
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

    /// The legal range of the numeric setting `name` of `game` (the bounds
    /// [`Rules::set_number`] and [`Rules::validate`] check), or `None` if the game has no
    /// such setting.
    pub fn setting_range(game: Game, name: &str) -> Option<RangeInclusive<u32>> {
        Some(match (game, name) {
            (Game::Schocken | Game::Sjokken, "tokens") => 1..=99,
            (Game::Zokken, "ante") => 0..=1_000,
            (Game::Zokken, "small_bet" | "big_bet") => 1..=1_000,
            (Game::Zokken, "max_bets") => 1..=10,
            (Game::Zokken, "rounds") => 1..=100_000,
            (Game::Zokken, "max_replays") => 0..=20,
            _ => return None,
        })
    }

    /// Every numeric setting of these rules with its value, in a fixed order.
    pub fn numbers(&self) -> Vec<(&'static str, u32)> {
        match self {
            Rules::Schocken(r) => vec![("tokens", r.tokens.into())],
            Rules::Sjokken(r) => vec![("tokens", r.tokens.into())],
            Rules::Zokken(r) => vec![
                ("ante", r.ante),
                ("small_bet", r.small_bet),
                ("big_bet", r.big_bet),
                ("max_bets", r.max_bets.into()),
                ("rounds", r.rounds),
                ("max_replays", r.max_replays.into()),
            ],
        }
    }

    /// Checks every numeric setting against the bounds [`Rules::set_number`] enforces, for
    /// rules that did not come through it (read from a match log, built in code). The error
    /// names the first setting out of range, its value and its legal range.
    pub fn validate(&self) -> Result<(), RulesError> {
        for (name, value) in self.numbers() {
            bounded(self.game(), name, value)?;
        }
        Ok(())
    }

    /// Sets a numeric setting (`tokens`; Zokken: `ante`, `small_bet`, `big_bet`, `max_bets`,
    /// `rounds`, `max_replays`), checking its bounds ([`Rules::setting_range`]).
    pub fn set_number(&mut self, name: &str, value: u32) -> Result<(), RulesError> {
        let value = bounded(self.game(), name, value)?;
        // In range, so the narrowing casts below cannot truncate (every u8 setting's range
        // ends below 256).
        match (&mut *self, name) {
            (Rules::Schocken(r), "tokens") => r.tokens = value as u8,
            (Rules::Sjokken(r), "tokens") => r.tokens = value as u8,
            (Rules::Zokken(r), "ante") => r.ante = value,
            (Rules::Zokken(r), "small_bet") => r.small_bet = value,
            (Rules::Zokken(r), "big_bet") => r.big_bet = value,
            (Rules::Zokken(r), "max_bets") => r.max_bets = value as u8,
            (Rules::Zokken(r), "rounds") => r.rounds = value,
            (Rules::Zokken(r), "max_replays") => r.max_replays = value as u8,
            _ => unreachable!("setting_range and set_number name the same settings"),
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

    #[test]
    fn validate_checks_the_bounds_of_set_number() {
        for name in PRESETS {
            assert_eq!(Rules::preset(name).unwrap().validate(), Ok(()), "{name}");
        }
        let mut zokken = Rules::preset("zokken").unwrap();
        if let Rules::Zokken(r) = &mut zokken {
            r.rounds = 0;
        }
        assert_eq!(
            zokken.validate().unwrap_err().to_string(),
            "rounds = 0 is out of range: it must be 1..=100000"
        );
        let mut sjokken = Rules::preset("sjokken").unwrap();
        if let Rules::Sjokken(r) = &mut sjokken {
            r.tokens = 200;
        }
        assert!(matches!(
            sjokken.validate(),
            Err(RulesError::OutOfRange {
                value: 200,
                min: 1,
                max: 99,
                ..
            })
        ));
        // Every setting the rules have has a range, and set_number agrees with it.
        for name in PRESETS {
            let rules = Rules::preset(name).unwrap();
            for (setting, _) in rules.numbers() {
                let range = Rules::setting_range(rules.game(), setting).unwrap();
                let mut probe = rules.clone();
                assert!(probe.set_number(setting, *range.end()).is_ok());
                assert!(probe.set_number(setting, *range.end() + 1).is_err());
            }
        }
    }
}
