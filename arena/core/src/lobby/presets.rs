//! The rules of every preset as this arena plays them (`knobel serve --zokken-rounds`
//! changes Zokken's), built once at start-up.

use std::collections::BTreeMap;
use std::sync::Arc;

use knobel_engine::{Game, PRESETS, Rules, RulesError};

/// The rules of every preset, as this arena plays them: built and checked once, at
/// start-up, so that looking one up cannot fail later. Cheap to clone.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetRules {
    rules: Arc<BTreeMap<&'static str, Rules>>,
}

impl Default for PresetRules {
    /// The engine's presets, unchanged.
    fn default() -> PresetRules {
        PresetRules::new(None).expect("the engine's presets are valid")
    }
}

impl PresetRules {
    /// The engine's presets, with Zokken matches of `zokken_rounds` rounds if given
    /// (else the preset's). The engine's [`RulesError`] if it refuses them.
    pub fn new(zokken_rounds: Option<u32>) -> Result<PresetRules, (&'static str, RulesError)> {
        let mut rules = BTreeMap::new();
        for preset in PRESETS {
            let mut preset_rules = Rules::preset(preset).map_err(|e| (preset, e))?;
            if let (Game::Zokken, Some(rounds)) = (preset_rules.game(), zokken_rounds) {
                preset_rules
                    .set_number("rounds", rounds)
                    .map_err(|e| (preset, e))?;
            }
            rules.insert(preset, preset_rules);
        }
        Ok(PresetRules {
            rules: Arc::new(rules),
        })
    }

    /// The rules of `preset`; `None` only for a name that is not a preset.
    pub fn get(&self, preset: &str) -> Option<&Rules> {
        self.rules.get(preset)
    }
}
