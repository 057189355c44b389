//! Property tests over random seeds and random legal decisions, for every preset and
//! variant: every match ends, tokens and chips are conserved, placings agree with the
//! tokens, the log replays the match, and no observation or event shows a die that
//! RULES.md §5 hides from its receiver. Arbitrary (mostly illegal) actions never panic and
//! never change anything when refused.

#![allow(clippy::needless_range_loop)] // dice are indexed by slot in several arrays at once

use knobel_engine::policy::{HeuristicPolicy, Policy};
use knobel_engine::{
    Action, DieMask, Event, Game, Match, MatchLog, Observation, Rules, Seat, Seats,
};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// Every preset, and every on/off variant switched on over its game's default preset.
fn rule_sets() -> Vec<(String, Rules)> {
    let mut sets = Vec::new();
    for preset in knobel_engine::PRESETS {
        let rules = Rules::preset(preset).unwrap();
        sets.push((preset.to_owned(), rules.clone()));
        if preset == "schocken-typenclub" {
            continue;
        }
        for variant in rules.variant_names() {
            let mut varied = rules.clone();
            varied.set_variant(variant, true).unwrap();
            sets.push((format!("{preset}+{variant}"), varied));
        }
    }
    // Short Zokken matches keep the debug-build test time reasonable.
    for (_, rules) in sets.iter_mut() {
        if rules.game() == Game::Zokken {
            rules.set_number("rounds", 12).unwrap();
        }
    }
    sets
}

/// What RULES.md §5 lets each seat see of each die, tracked from public events alone
/// (independently of the engine's own visibility bookkeeping).
struct VisibilityModel {
    game: Game,
    open_dice: bool,
    seats: usize,
    starter: Option<Seat>,
    limit: Option<u8>,
    /// Per owner and slot: thrown this round, public, seen by its owner.
    thrown: Vec<[bool; 3]>,
    public: Vec<[bool; 3]>,
    owner_sees: Vec<[bool; 3]>,
}

impl VisibilityModel {
    fn new(rules: &Rules, seats: usize) -> VisibilityModel {
        VisibilityModel {
            game: rules.game(),
            open_dice: matches!(rules, Rules::Schocken(r) if r.open_dice),
            seats,
            starter: None,
            limit: None,
            thrown: vec![[false; 3]; seats],
            public: vec![[false; 3]; seats],
            owner_sees: vec![[false; 3]; seats],
        }
    }

    fn reset(&mut self) {
        for s in 0..self.seats {
            self.thrown[s] = [false; 3];
            self.public[s] = [false; 3];
            self.owner_sees[s] = [false; 3];
        }
    }

    /// Updates the model, and checks that the event itself shows only public dice.
    fn see(&mut self, event: &Event) {
        match *event {
            Event::RoundStarted { starter, .. } => {
                self.reset();
                self.starter = starter;
                self.limit = None;
            }
            Event::ThrowLimitSet { throws } => self.limit = Some(throws),
            Event::Thrown {
                seat,
                throw,
                rolled,
                dice,
            } => {
                let s = seat.index();
                let (public, owner) = match self.game {
                    Game::Zokken => (true, true),
                    Game::Schocken => (self.open_dice, true),
                    Game::Sjokken => {
                        let max = if Some(seat) == self.starter {
                            3
                        } else {
                            self.limit.unwrap_or(3)
                        };
                        let blind = throw == max && max > 1;
                        (!blind, !blind)
                    }
                };
                for slot in rolled.slots() {
                    self.thrown[s][slot] = true;
                    self.public[s][slot] = public;
                    self.owner_sees[s][slot] = owner;
                }
                for slot in 0..3 {
                    assert!(
                        dice[slot].is_none() || self.public[s][slot],
                        "event {event:?} shows hidden die {slot}"
                    );
                }
            }
            Event::Rerolled { seat, dice } => {
                for slot in dice.complement().slots() {
                    if self.thrown[seat.index()][slot] {
                        self.public[seat.index()][slot] = true;
                    }
                }
            }
            Event::Turned { seat, dice } => {
                for slot in dice.slots() {
                    self.public[seat.index()][slot] = true;
                    self.owner_sees[seat.index()][slot] = true;
                }
            }
            _ => {}
        }
    }

    fn may_see(&self, observer: Seat, owner: Seat, slot: usize) -> bool {
        let o = owner.index();
        self.thrown[o][slot]
            && (self.public[o][slot] || (observer == owner && self.owner_sees[o][slot]))
    }

    /// Checks every seat's observation against the model and the true dice.
    fn check(&self, m: &Match) {
        for observer in (0..self.seats as u8).map(Seat) {
            match m.observe(observer) {
                Observation::Shake(o) => {
                    for owner in (0..self.seats as u8).map(Seat) {
                        let (truth, throws) = m.true_dice(owner);
                        let view = &o.turns[owner.index()];
                        assert_eq!(view.throws, throws);
                        for slot in 0..3 {
                            let allowed = self.may_see(observer, owner, slot);
                            match view.dice[slot] {
                                Some(v) => {
                                    assert!(
                                        allowed,
                                        "{observer} sees hidden die {slot} of {owner}"
                                    );
                                    assert_eq!(v, truth[slot], "observation lies about a die");
                                }
                                None => {
                                    assert!(!allowed, "{observer} misses die {slot} of {owner}")
                                }
                            }
                        }
                        if view.hand.is_some() {
                            assert!((0..3).all(|slot| self.may_see(observer, owner, slot)));
                        }
                    }
                }
                Observation::Zokken(o) => {
                    for owner in (0..self.seats as u8).map(Seat) {
                        let (truth, _) = m.true_dice(owner);
                        assert_eq!(o.seats[owner.index()].dice, truth);
                    }
                }
            }
        }
    }
}

/// Plays one match with random legal decisions (mixed with the heuristic), checking the
/// invariants at every step. Returns the finished match.
fn play_checked(rules: &Rules, seed: u64, seats: usize, decisions: u64) -> Match {
    let mut m = Match::new_with_log(rules.clone(), seed, seats).unwrap();
    let mut rng = SmallRng::seed_from_u64(decisions);
    let mut heuristic = HeuristicPolicy;
    let mut model = VisibilityModel::new(rules, seats);
    let total = m.conserved_total();
    for event in m.last_events() {
        model.see(event);
    }
    let mut steps = 0u32;
    while !m.is_over() {
        steps += 1;
        assert!(steps < 200_000, "the match does not end");
        model.check(&m);
        let to_act: Vec<Seat> = m.to_act().iter().collect();
        for seat in to_act {
            let legal = m.legal_actions(seat);
            assert!(!legal.is_empty(), "{seat} must act but has no legal action");
            assert!(legal.contains(&m.default_action(seat).unwrap()));
            let action = if rng.random_bool(0.5) {
                legal[rng.random_range(0..legal.len())]
            } else {
                heuristic.decide(&m.observe(seat), &[])
            };
            assert_eq!(
                legal.contains(&action),
                m.clone().apply(seat, action).is_ok()
            );
            let action = if legal.contains(&action) {
                action
            } else {
                m.default_action(seat).unwrap()
            };
            let events = m.apply(seat, action).unwrap().to_vec();
            for event in &events {
                model.see(event);
            }
            assert_eq!(m.conserved_total(), total, "tokens or chips not conserved");
        }
    }
    m
}

fn check_outcome(m: &Match) {
    let outcome = m.outcome().expect("an ended match has an outcome");
    let n = m.seats() as u8;
    assert_eq!(outcome.placings.len(), n as usize);
    match m.game() {
        Game::Schocken => {
            let loser = outcome.loser.unwrap();
            assert_eq!(outcome.placings[loser.index()], n);
            assert!(outcome.halves_lost[loser.index()] >= 1);
            assert_eq!(outcome.placings.iter().filter(|&&p| p == n).count(), 1);
            for seat in 0..n as usize {
                let expected = if seat == loser.index() {
                    n
                } else if outcome.halves_lost[seat] > 0 {
                    n - 1
                } else {
                    1
                };
                assert_eq!(outcome.placings[seat], expected);
            }
            // The loser of the last half ends holding every token of it.
            let tokens = match m.rules() {
                Rules::Schocken(r) => r.tokens as i64,
                _ => unreachable!(),
            };
            assert_eq!(outcome.tokens[loser.index()], tokens);
        }
        Game::Sjokken => {
            let loser = outcome.loser.unwrap();
            for seat in 0..n as usize {
                let expected = if seat == loser.index() { n } else { 1 };
                assert_eq!(outcome.placings[seat], expected);
            }
            // Everybody else ended free: holding no tokens.
            for seat in 0..n as usize {
                if seat != loser.index() {
                    assert_eq!(outcome.tokens[seat], 0);
                }
            }
        }
        Game::Zokken => {
            assert_eq!(outcome.chips.iter().sum::<i64>(), 0);
            for a in 0..n as usize {
                for b in 0..n as usize {
                    let (ca, cb) = (outcome.chips[a], outcome.chips[b]);
                    let (pa, pb) = (outcome.placings[a], outcome.placings[b]);
                    assert_eq!(ca > cb, pa < pb, "placings disagree with chips");
                    assert_eq!(ca == cb, pa == pb);
                }
            }
        }
    }
    match m.last_events().last() {
        Some(Event::MatchOver { placings }) => assert_eq!(placings.as_slice(), outcome.placings),
        other => panic!("the last event is not MatchOver: {other:?}"),
    }
}

fn check_replay(m: &Match) {
    let log = m.log().unwrap();
    let json = log.to_json();
    let parsed = MatchLog::from_json(&json).unwrap();
    assert_eq!(&parsed, log);
    let replayed = parsed.replay().expect("a genuine log replays");
    assert_eq!(replayed.outcome(), m.outcome());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_matches_keep_every_invariant(seed in any::<u64>(), seats in 2usize..=5, decisions in any::<u64>()) {
        for (_, rules) in rule_sets() {
            let m = play_checked(&rules, seed, seats, decisions);
            check_outcome(&m);
            check_replay(&m);
        }
    }

    #[test]
    fn refused_actions_change_nothing(seed in any::<u64>(), seats in 2usize..=4, noise in any::<u64>()) {
        let mut rng = SmallRng::seed_from_u64(noise);
        for (_, rules) in rule_sets() {
            let mut m = Match::new_with_log(rules, seed, seats).unwrap();
            let mut heuristic = HeuristicPolicy;
            let mut steps = 0;
            while !m.is_over() && steps < 400 {
                steps += 1;
                // An arbitrary action from an arbitrary seat (possibly not at the table).
                let seat = Seat(rng.random_range(0..=seats as u8));
                let dice = DieMask::from_bits(rng.random_range(0..8u8)).unwrap();
                let turn = DieMask::from_bits(rng.random_range(0..8u8)).unwrap();
                let action = match rng.random_range(0..7) {
                    0 => Action::Stop { turn },
                    1 => Action::Reroll { dice, turn },
                    2 => Action::Check,
                    3 => Action::Bet,
                    4 => Action::Call,
                    5 => Action::Raise,
                    _ => Action::Fold,
                };
                let before = snapshot(&m);
                let log_len = m.log().unwrap().entries.len();
                if m.apply(seat, action).is_err() {
                    prop_assert_eq!(snapshot(&m), before);
                    prop_assert_eq!(m.log().unwrap().entries.len(), log_len);
                    // Move on with a sensible action.
                    let seat = m.to_act().iter().next().unwrap();
                    let action = heuristic.decide(&m.observe(seat), &[]);
                    if m.apply(seat, action).is_err() {
                        let fallback = m.default_action(seat).unwrap();
                        m.apply(seat, fallback).unwrap();
                    }
                }
            }
            if m.is_over() {
                check_replay(&m);
            }
        }
    }
}

/// Everything observable about a match, for before/after comparisons.
fn snapshot(m: &Match) -> (Seats, Vec<Event>, Vec<Observation>, Vec<Vec<Action>>) {
    let seats = (0..m.seats() as u8).map(Seat);
    (
        m.to_act(),
        m.last_events().to_vec(),
        seats.clone().map(|s| m.observe(s)).collect(),
        seats.map(|s| m.legal_actions(s)).collect(),
    )
}

#[test]
fn same_seed_and_decisions_replay_the_same_match() {
    for (_, rules) in rule_sets() {
        let a = play_checked(&rules, 99, 4, 5);
        let b = play_checked(&rules, 99, 4, 5);
        assert_eq!(a.log(), b.log());
    }
}

#[test]
fn altered_logs_are_refused() {
    for (name, rules) in rule_sets() {
        let m = play_checked(&rules, 1234, 3, 77);
        let log = m.log().unwrap().clone();

        // A changed die.
        let mut altered = log.clone();
        let throw = altered
            .entries
            .iter_mut()
            .find_map(|e| match e {
                knobel_engine::LogEntry::Throw { dice, round, .. } if *round > 0 => Some(dice),
                _ => None,
            })
            .unwrap();
        throw[0] = if throw[0] == 1 { 2 } else { 1 };
        let err = altered.replay().unwrap_err().to_string();
        assert!(err.contains("was altered"), "{name}: {err}");

        // A changed result (an event's content).
        let mut altered = log.clone();
        let over = altered.entries.iter_mut().rev().find_map(|e| match e {
            knobel_engine::LogEntry::Event {
                event: Event::MatchOver { placings },
            } => Some(placings),
            _ => None,
        });
        let placings = over.unwrap();
        let mut changed = placings.to_vec();
        changed[0] += 1;
        *placings = changed.into();
        assert!(
            altered.replay().is_err(),
            "{name}: a changed result replays"
        );

        // A changed decision.
        let mut altered = log.clone();
        let decision = altered.entries.iter_mut().find_map(|e| match e {
            knobel_engine::LogEntry::Decision { action, .. } => Some(action),
            _ => None,
        });
        let decision = decision.unwrap();
        *decision = match *decision {
            Action::Stop { .. } => Action::reroll(DieMask::ALL),
            Action::Reroll { .. } if rules.game() != Game::Zokken => Action::STOP,
            Action::Reroll { dice, turn } => Action::Reroll {
                dice: if dice.is_empty() {
                    DieMask::single(0)
                } else {
                    DieMask::EMPTY
                },
                turn,
            },
            Action::Check => Action::Bet,
            Action::Bet => Action::Check,
            Action::Call | Action::Raise => Action::Fold,
            Action::Fold => Action::Call,
        };
        assert!(
            altered.replay().is_err(),
            "{name}: a changed decision replays"
        );
    }
}
