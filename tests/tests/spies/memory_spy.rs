//! The memory spy: uses nothing but its own Play streams. It remembers every die it ever
//! saw (its own, under its cup too; set-aside and turned dice; the hands revealed at every
//! round's end) by the die's key (seat, round, throw, slot), filed under the match's
//! opening throw-off, which is public and the same in every seat order of a duplicate set.
//! When a later match opens with a throw-off it remembers, it predicts every die it has
//! not seen from what it saw of that key in the set's other matches.

use std::collections::HashMap;
use std::sync::Mutex;

use knobel_engine::{DiceKey, Game};

use super::play::Intel;
use super::table::TableView;

/// A set as a spy recognises it: the game and every seat's first throw-off throw.
pub type Fingerprint = (Game, Vec<[u8; 3]>);

/// The fingerprint of `table`'s match, once its throw-off is in.
pub fn fingerprint(table: &TableView) -> Option<Fingerprint> {
    Some((table.game, table.throw_off()?))
}

/// Dice remembered per set, by key.
#[derive(Default)]
pub struct SetMemory {
    sets: HashMap<Fingerprint, HashMap<DiceKey, u8>>,
}

impl SetMemory {
    /// Whether anything of the set is remembered.
    pub fn knows(&self, fingerprint: &Fingerprint) -> bool {
        self.sets.contains_key(fingerprint)
    }

    /// Remembers the die at `key` of a match of the set.
    pub fn file(&mut self, fingerprint: &Fingerprint, key: DiceKey, face: u8) {
        if let Some(dice) = self.sets.get_mut(fingerprint) {
            dice.insert(key, face);
        } else {
            self.sets
                .insert(fingerprint.clone(), HashMap::from([(key, face)]));
        }
    }

    /// Remembers every die `table` has seen, under its set.
    pub fn file_table(&mut self, table: &TableView) {
        if let Some(fingerprint) = fingerprint(table) {
            for (key, face) in table.seen() {
                self.file(&fingerprint, *key, *face);
            }
        }
    }

    /// The die remembered at `key` of the set.
    pub fn recall(&self, fingerprint: &Fingerprint, key: &DiceKey) -> Option<u8> {
        self.sets.get(fingerprint)?.get(key).copied()
    }
}

/// What the memory spy found out, for the test to check.
#[derive(Clone, Copy, Debug, Default)]
pub struct Findings {
    /// The spy's matches (the league's, and pick-up matches once it has ended).
    pub matches: usize,
    /// Of those, matches whose throw-off it had seen before (a set it recognised).
    pub recognised: usize,
}

/// The memory spy's memory, shared by its streams.
#[derive(Default)]
pub struct MemorySpy {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Every die seen, per set.
    sets: SetMemory,
    /// Each match's fingerprint, once its throw-off is in.
    fingerprints: HashMap<String, Fingerprint>,
    findings: Findings,
}

impl MemorySpy {
    /// What it found out so far.
    pub fn findings(&self) -> Findings {
        self.state.lock().unwrap().findings
    }
}

impl Intel for MemorySpy {
    /// Recognises the set by the throw-off, and files what it saw of the match so far there.
    fn at_throw_off(&self, table: &TableView) {
        let fingerprint = fingerprint(table).expect("the throw-off is in");
        let mut state = self.state.lock().unwrap();
        state.findings.matches += 1;
        state.findings.recognised += usize::from(state.sets.knows(&fingerprint));
        state.sets.file_table(table);
        state
            .fingerprints
            .insert(table.match_id.clone(), fingerprint);
    }

    /// Remembers a die under the match's set.
    fn saw(&self, table: &TableView, key: DiceKey, face: u8) {
        let mut state = self.state.lock().unwrap();
        let State {
            sets, fingerprints, ..
        } = &mut *state;
        if let Some(fingerprint) = fingerprints.get(&table.match_id) {
            sets.file(fingerprint, key, face);
        }
    }

    /// The die its set's other matches showed at `key` (never one of this match: the spy
    /// predicts only dice it has not seen here).
    fn predict(&self, table: &TableView, key: DiceKey) -> Option<u8> {
        let state = self.state.lock().unwrap();
        let fingerprint = state.fingerprints.get(&table.match_id)?;
        state.sets.recall(fingerprint, &key)
    }
}
