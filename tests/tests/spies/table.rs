//! One match as one seat sees it on its Play stream: every die it has seen, by the die's key
//! (seat, round, throw, slot; docs/rules.md A.8.3), worked out from the public events and
//! its own observations exactly as a bot author could.

use std::collections::{BTreeMap, HashMap};

use knobel_engine::{DiceKey, DieMask, Event, Game, Observation, Seat};

/// What one seat has seen of one match.
pub struct TableView {
    /// The match's id.
    pub match_id: String,
    /// Schocken or Sjokken.
    pub game: Game,
    /// The seats at the table.
    pub seats: u8,
    /// The spy's seat.
    pub me: Seat,
    /// The round being played (0: the opening throw-off).
    round: u32,
    /// Per seat and slot: the throw of this round that last rolled the die (0: none yet).
    last_throw: Vec<[u8; 3]>,
    /// Per seat: the dice turned from six to one this round (they show 1, not their throw).
    turned: Vec<DieMask>,
    /// Every die seen so far, by key.
    seen: HashMap<DiceKey, u8>,
    /// The first attempt of the opening throw-off, per seat.
    throw_off: BTreeMap<u8, [u8; 3]>,
}

impl TableView {
    /// A match that just started.
    pub fn new(match_id: String, game: Game, seats: u8, me: Seat) -> TableView {
        TableView {
            match_id,
            game,
            seats,
            me,
            round: 0,
            last_throw: vec![[0; 3]; usize::from(seats)],
            turned: vec![DieMask::default(); usize::from(seats)],
            seen: HashMap::new(),
            throw_off: BTreeMap::new(),
        }
    }

    /// A match as a spectator sees it (a public record): from no seat of its own.
    pub fn spectator(match_id: String, game: Game, seats: u8) -> TableView {
        TableView::new(match_id, game, seats, Seat(u8::MAX))
    }

    /// Whether the spy has seen the die at `key`.
    pub fn has_seen(&self, key: &DiceKey) -> bool {
        self.seen.contains_key(key)
    }

    /// Every die seen so far.
    pub fn seen(&self) -> impl Iterator<Item = (&DiceKey, &u8)> {
        self.seen.iter()
    }

    /// The first throw of every seat in the opening throw-off, once all are in: public, and
    /// the same in every seat order of a duplicate set.
    pub fn throw_off(&self) -> Option<Vec<[u8; 3]>> {
        (self.throw_off.len() == usize::from(self.seats))
            .then(|| self.throw_off.values().copied().collect())
    }

    /// Takes in one public event; returns the dice it showed for the first time.
    pub fn apply(&mut self, event: &Event) -> Vec<(DiceKey, u8)> {
        match *event {
            Event::OpeningThrow {
                seat,
                attempt,
                dice,
            } => {
                if attempt == 1 {
                    self.throw_off.insert(seat.0, dice);
                }
                let keys = [0, 1, 2].map(|slot| key(seat, 0, attempt, slot));
                self.note(keys.into_iter().zip(dice.map(Some)))
            }
            Event::RoundStarted { round, .. } => {
                self.round = round;
                self.last_throw.fill([0; 3]);
                self.turned.fill(DieMask::default());
                Vec::new()
            }
            Event::Thrown {
                seat,
                throw,
                rolled,
                dice,
            } => {
                for slot in rolled.slots() {
                    self.last_throw[seat.index()][slot] = throw;
                }
                self.turned[seat.index()] = self.turned[seat.index()].minus(rolled);
                self.note_dice(seat, dice)
            }
            Event::Turned { seat, dice } => {
                self.turned[seat.index()] = self.turned[seat.index()].union(dice);
                Vec::new()
            }
            Event::Revealed { seat, dice, .. } => self.note_dice(seat, dice.map(Some)),
            _ => Vec::new(),
        }
    }

    /// Takes in the spy's own observation (its dice under the cup among them); returns the
    /// dice it showed for the first time.
    pub fn observe(&mut self, observation: &Observation) -> Vec<(DiceKey, u8)> {
        match observation {
            Observation::Shake(shake) => match shake.turns.get(self.me.index()) {
                Some(turn) => self.note_dice(self.me, turn.dice),
                None => Vec::new(),
            },
            Observation::Zokken(_) => Vec::new(),
        }
    }

    /// Notes the visible dice of `seat` in the current round under the keys of the throws
    /// that last rolled them (a turned die shows 1, not its throw: left out).
    fn note_dice(&mut self, seat: Seat, dice: [Option<u8>; 3]) -> Vec<(DiceKey, u8)> {
        let throws = self.last_throw[seat.index()];
        let turned = self.turned[seat.index()];
        let round = self.round;
        let keyed = (0..3)
            .filter(|&slot| throws[slot] > 0 && !turned.contains(slot))
            .map(|slot| (key(seat, round, throws[slot], slot), dice[slot]));
        let keyed: Vec<_> = keyed.collect();
        self.note(keyed)
    }

    fn note(
        &mut self,
        keyed: impl IntoIterator<Item = (DiceKey, Option<u8>)>,
    ) -> Vec<(DiceKey, u8)> {
        let mut new = Vec::new();
        for (key, face) in keyed {
            if let Some(face) = face
                && self.seen.insert(key, face).is_none()
            {
                new.push((key, face));
            }
        }
        new
    }
}

/// The key of a die.
pub fn key(seat: Seat, round: u32, throw: u8, slot: usize) -> DiceKey {
    DiceKey {
        seat,
        round,
        throw,
        slot: slot as u8,
    }
}
