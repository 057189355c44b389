//! Shared helpers for the scripted Schocken and Sjokken scenario tests.
//!
//! A [`Table`] names the rules, the number of seats and every die that matters; the
//! helpers below play decisions, read observations and pick events out of a step.
#![allow(dead_code)]

use knobel_engine::{
    Action, ActionError, DiceScript, DieMask, Event, Game, Match, Observation, Rules, Seat, Seats,
    ShakeObservation,
};

pub const ANNA: Seat = Seat(0);
pub const BEN: Seat = Seat(1);
pub const CLEO: Seat = Seat(2);
pub const DAAN: Seat = Seat(3);

/// Dice the scripts do not name come from this seed; no test depends on them.
pub const SEED: u64 = 0x5eed;

/// The `schocken` preset (seed 003) with the named variants switched on.
pub fn schocken(variants: &[&str]) -> Rules {
    let mut rules = Rules::preset("schocken").unwrap();
    for variant in variants {
        rules.set_variant(variant, true).unwrap();
    }
    rules
}

/// The `sjokken` preset (seed 000).
pub fn sjokken() -> Rules {
    Rules::preset("sjokken").unwrap()
}

/// A set of die slots.
pub fn dice(slots: &[u32]) -> DieMask {
    DieMask::from_slots(slots).unwrap()
}

/// A set of seats.
pub fn seats(list: &[Seat]) -> Seats {
    let mut set = Seats::EMPTY;
    for &seat in list {
        set.insert(seat);
    }
    set
}

/// A table being set up: the rules, the seats and the dice of every throw that matters.
pub struct Table {
    rules: Rules,
    seats: usize,
    script: DiceScript,
}

impl Table {
    /// `seats` players (ANNA, BEN, CLEO, DAAN, ...). The opening throw-off is scripted so
    /// that ANNA starts round 1: she throws the lowest hand in Schocken (2-2-1, the lowest
    /// Number) and the highest in Sjokken (6-6-5, Hoog 17) — override it with
    /// [`Table::opening`].
    pub fn new(rules: Rules, seats: usize) -> Table {
        let (anna, others) = match rules.game() {
            Game::Sjokken => ([6, 6, 5], [2, 2, 1]),
            _ => ([2, 2, 1], [6, 5, 3]),
        };
        let mut table = Table {
            rules,
            seats,
            script: DiceScript::new(),
        };
        table.script.throw(ANNA, 0, 1, anna);
        for seat in 1..seats {
            table.script.throw(Seat(seat as u8), 0, 1, others);
        }
        table
    }

    /// The opening throw-off (round 0): the dice each seat throws at `attempt`.
    pub fn opening(mut self, attempt: u8, throws: &[(Seat, [u8; 3])]) -> Table {
        for &(seat, dice) in throws {
            self.script.throw(seat, 0, attempt, dice);
        }
        self
    }

    /// All three dice of `seat`'s `throw`-th throw in `round`.
    pub fn throw(mut self, seat: Seat, round: u32, throw: u8, dice: [u8; 3]) -> Table {
        self.script.throw(seat, round, throw, dice);
        self
    }

    /// The dice rolled again at `seat`'s `throw`-th throw in `round`: `(slot, value)`.
    pub fn reroll(mut self, seat: Seat, round: u32, throw: u8, dice: &[(usize, u8)]) -> Table {
        for &(slot, value) in dice {
            let mut values = [0; 3];
            values[slot] = value;
            self.script.set(seat, round, throw, &[slot], values);
        }
        self
    }

    /// A round in which every seat throws once: each seat's first throw in `round`.
    pub fn round(mut self, round: u32, hands: &[(Seat, [u8; 3])]) -> Table {
        for &(seat, dice) in hands {
            self.script.throw(seat, round, 1, dice);
        }
        self
    }

    /// Starts the match.
    pub fn start(self) -> Match {
        Match::scripted(self.rules, SEED, self.seats, self.script).unwrap()
    }
}

/// Applies an action that must be legal, returning the events it caused.
pub fn act(m: &mut Match, seat: Seat, action: Action) -> Vec<Event> {
    match m.apply(seat, action) {
        Ok(events) => events.to_vec(),
        Err(error) => panic!("{seat} cannot {action}: {error}"),
    }
}

/// `seat` stops.
pub fn stop(m: &mut Match, seat: Seat) -> Vec<Event> {
    act(m, seat, Action::STOP)
}

/// `seat` puts the dice in `slots` back into the cup and throws them.
pub fn reroll(m: &mut Match, seat: Seat, slots: &[u32]) -> Vec<Event> {
    act(m, seat, Action::reroll(dice(slots)))
}

/// Plays the current round to its end: whoever must act stops. Returns all its events.
pub fn play_round(m: &mut Match) -> Vec<Event> {
    let round = obs(m, ANNA).round;
    let mut events = Vec::new();
    while !m.is_over() && obs(m, ANNA).round == round {
        let seat = m.to_act().iter().next().unwrap();
        events.extend(stop(m, seat));
    }
    events
}

/// What `seat` sees.
pub fn obs(m: &Match, seat: Seat) -> ShakeObservation {
    match m.observe(seat) {
        Observation::Shake(o) => o,
        other => panic!("not a shake game: {other:?}"),
    }
}

/// What `viewer` sees of `owner`'s dice.
pub fn seen(m: &Match, viewer: Seat, owner: Seat) -> [Option<u8>; 3] {
    obs(m, viewer).turns[owner.index()].dice
}

/// Tokens every seat holds.
pub fn tokens(m: &Match) -> Vec<u8> {
    obs(m, ANNA).tokens
}

/// Tokens in the middle.
pub fn pot(m: &Match) -> u8 {
    obs(m, ANNA).pot
}

/// The seat that must act now.
pub fn to_act(m: &Match) -> Seat {
    m.to_act().single().expect("exactly one seat must act")
}

/// Everything a refused action must leave unchanged: every seat's observation, who must
/// act, every seat's legal actions, and the match log.
fn snapshot(m: &Match) -> (Vec<Observation>, Seats, Vec<Vec<Action>>, usize) {
    let all = (0..m.seats()).map(|s| Seat(s as u8));
    (
        all.clone().map(|s| m.observe(s)).collect(),
        m.to_act(),
        all.map(|s| m.legal_actions(s)).collect(),
        m.log().map_or(0, |log| log.entries.len()),
    )
}

/// Asserts that the referee refuses `action` from `seat` and that nothing changed: every
/// seat's observation and legal actions, who must act, and the log. Returns the error.
pub fn assert_refused(m: &mut Match, seat: Seat, action: Action) -> ActionError {
    let before = snapshot(m);
    let error = match m.apply(seat, action) {
        Ok(events) => panic!("{seat} may {action}, but it must be refused (events: {events:?})"),
        Err(error) => error,
    };
    assert_eq!(
        snapshot(m),
        before,
        "refused {action} by {seat} changed the match"
    );
    assert!(
        !m.legal_actions(seat).contains(&action),
        "refused {action} is listed as legal for {seat}"
    );
    error
}

/// The round's result, if the events decide one: (winner, loser, value).
pub fn decided(events: &[Event]) -> Option<(Seat, Seat, u8)> {
    events.iter().find_map(|e| match *e {
        Event::RoundDecided {
            winner,
            loser,
            value,
        } => Some((winner, loser, value)),
        _ => None,
    })
}

/// The events about tokens, players leaving and who starts: what the token rules decide.
pub fn token_events(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::RoundDecided { .. }
                    | Event::TokensMoved { .. }
                    | Event::SeatOut { .. }
                    | Event::Sjok1 { .. }
                    | Event::HalfLost { .. }
                    | Event::HalfStarted { .. }
                    | Event::RoundStarted { .. }
                    | Event::MatchOver { .. }
            )
        })
        .cloned()
        .collect()
}

/// The hands revealed in the events: (seat, dice).
pub fn revealed(events: &[Event]) -> Vec<(Seat, [u8; 3])> {
    events
        .iter()
        .filter_map(|e| match *e {
            Event::Revealed { seat, dice, .. } => Some((seat, dice)),
            _ => None,
        })
        .collect()
}

/// The seats that threw in the events (any throw of a round, not the opening).
pub fn throwers(events: &[Event]) -> Vec<Seat> {
    events
        .iter()
        .filter_map(|e| match *e {
            Event::Thrown { seat, .. } => Some(seat),
            _ => None,
        })
        .collect()
}

/// `Event::RoundStarted` of a normal round.
pub fn round_started(round: u32, players: &[Seat], starter: Seat) -> Event {
    Event::RoundStarted {
        round,
        replay: 0,
        seats: seats(players),
        starter: Some(starter),
    }
}

/// Three dice nobody else may see.
pub const HIDDEN: [Option<u8>; 3] = [None; 3];

/// Three dice everybody sees.
pub fn shown(dice: [u8; 3]) -> [Option<u8>; 3] {
    dice.map(Some)
}

/// `Event::Thrown`: `seat`'s `throw`-th throw rolled `rolled`; `dice` is what is public.
pub fn thrown(seat: Seat, throw: u8, rolled: &[u32], dice: [Option<u8>; 3]) -> Event {
    Event::Thrown {
        seat,
        throw,
        rolled: self::dice(rolled),
        dice,
    }
}

/// `Event::Stopped`.
pub fn stopped(seat: Seat, throws: u8) -> Event {
    Event::Stopped { seat, throws }
}

/// `Event::MatchOver` with every seat's place.
pub fn match_over(places: &[u8]) -> Event {
    Event::MatchOver {
        placings: knobel_engine::Placings::from_slice(places),
    }
}
