//! Exactness of the Schocken and Sjokken expert (issue 13): for the last player of a round,
//! facing a known set of shown hands, the expert's choice after its first throw is worth
//! exactly as much as the best play a brute force finds, for every first throw, throw limit
//! and variant.
//!
//! The brute force shares no code with the expert: it works on the dice as they lie (three
//! slots, masks of turned and rolled dice), enumerates every decision the rules allow
//! (RULES.md §1.1, §2.3, §3.3) and every one of the 6^n ways n rerolled dice land, and
//! maximises the chance of not being the loser: of beating the worst shown hand (§2.4, §3.3:
//! the last player loses an equal hand, unless, in Schocken's default, it needed fewer
//! throws), or of a SJOK1 (the round ends without a loser, §3.4). For the last player the
//! expert's objective (the chance of being the loser times the tokens the winning hand
//! moves, which is fixed by the shown hands) has the same best choices.

use std::collections::HashMap;

use knobel_engine::policy::{ExpertPolicy, Policy};
use knobel_engine::{
    Action, DieMask, Game, Hand, Observation, Rules, SchockenRules, Seat, Seats, ShakeDecision,
    ShakeObservation, TurnView,
};

#[derive(Copy, Clone, Debug)]
struct Variant {
    sjokken: bool,
    jule: bool,
    straight_in_one_throw: bool,
    tie_later_loses: bool,
    turn_on_last_throw: bool,
}

impl Variant {
    fn all() -> Vec<Variant> {
        let mut out = vec![Variant {
            sjokken: true,
            jule: false,
            straight_in_one_throw: false,
            tie_later_loses: true,
            turn_on_last_throw: true,
        }];
        for bits in 0..16 {
            out.push(Variant {
                sjokken: false,
                jule: bits & 1 != 0,
                straight_in_one_throw: bits & 2 != 0,
                tie_later_loses: bits & 4 != 0,
                turn_on_last_throw: bits & 8 != 0,
            });
        }
        out
    }

    fn rules(&self) -> Rules {
        if self.sjokken {
            return Rules::preset("sjokken").unwrap();
        }
        Rules::Schocken(SchockenRules {
            tokens: 13,
            tie_later_loses: self.tie_later_loses,
            turn_on_last_throw: self.turn_on_last_throw,
            jule: self.jule,
            straight_in_one_throw: self.straight_in_one_throw,
            single_half: false,
            open_dice: false,
        })
    }

    fn hand(&self, dice: [u8; 3], rolled: u8) -> Hand {
        if self.sjokken {
            Hand::sjokken(dice)
        } else {
            Hand::schocken(
                dice,
                self.jule,
                !self.straight_in_one_throw || rolled == 0b111,
            )
        }
    }

    /// Sixes that may be turned after throw `t` rolled `rolled`, and how many at once.
    fn turnable(&self, dice: [u8; 3], rolled: u8, t: u8) -> (u8, usize) {
        let sixes = (0..3)
            .filter(|&i| rolled & (1 << i) != 0 && dice[i] == 6)
            .fold(0u8, |m, i| m | 1 << i);
        let n = sixes.count_ones() as usize;
        if n < 2 || (self.sjokken && t != 1) {
            return (0, 0);
        }
        (sixes, if self.sjokken || n == 2 { 1 } else { 2 })
    }

    fn stop_may_turn(&self) -> bool {
        self.sjokken || self.turn_on_last_throw
    }
}

/// A shown hand: its dice and throws.
type Shown = ([u8; 3], u8);

struct Brute<'a> {
    v: Variant,
    limit: u8,
    shown: &'a [Shown],
    memo: HashMap<(u8, [u8; 3], u8, u8), f64>,
}

impl Brute<'_> {
    /// Whether a final of `dice` after `t` throws (the last throw rolled `rolled`) is not
    /// the loser.
    fn safe(&self, dice: [u8; 3], rolled: u8, t: u8) -> f64 {
        let mine = self.v.hand(dice, rolled);
        if mine == Hand::Sjok1 {
            return 1.0;
        }
        let beats = self.shown.iter().any(|&(d, throws)| {
            let theirs = self.v.hand(d, 0b111);
            mine.strength() > theirs.strength()
                || (mine.strength() == theirs.strength()
                    && !self.v.sjokken
                    && !self.v.tie_later_loses
                    && t < throws)
        });
        beats as u8 as f64
    }

    /// Every decision after throw `t`: (turn mask, reroll mask or None for stop).
    fn decisions(&self, dice: [u8; 3], locked: u8, rolled: u8, t: u8) -> Vec<(u8, Option<u8>)> {
        let (turnable, max_turn) = self.v.turnable(dice, rolled, t);
        let mut out = Vec::new();
        for turn in 0..8u8 {
            if turn & !turnable != 0 || turn.count_ones() as usize > max_turn {
                continue;
            }
            if turn == 0 || self.v.stop_may_turn() {
                out.push((turn, None));
            }
            if t < self.limit {
                for reroll in 1..8u8 {
                    if reroll & (turn | locked) == 0 {
                        out.push((turn, Some(reroll)));
                    }
                }
            }
        }
        out
    }

    /// The chance of not losing of a decision.
    fn after(
        &mut self,
        dice: [u8; 3],
        locked: u8,
        rolled: u8,
        t: u8,
        turn: u8,
        reroll: Option<u8>,
    ) -> f64 {
        let mut dice = dice;
        for (i, die) in dice.iter_mut().enumerate() {
            if turn & (1 << i) != 0 {
                *die = 1;
            }
        }
        let locked = locked | turn;
        let Some(reroll) = reroll else {
            return self.safe(dice, rolled, t);
        };
        let slots: Vec<usize> = (0..3).filter(|&i| reroll & (1 << i) != 0).collect();
        let ways = 6usize.pow(slots.len() as u32);
        let mut sum = 0.0;
        for w in 0..ways {
            let mut d = dice;
            for (k, &slot) in slots.iter().enumerate() {
                d[slot] = (w / 6usize.pow(k as u32) % 6) as u8 + 1;
            }
            sum += self.value(d, locked, reroll, t + 1);
        }
        sum / ways as f64
    }

    /// The best chance of not losing after throw `t` landed on `dice`.
    fn value(&mut self, dice: [u8; 3], locked: u8, rolled: u8, t: u8) -> f64 {
        if self.v.sjokken && dice == [1, 1, 1] {
            return 1.0;
        }
        let key = (t, dice, locked, rolled);
        if let Some(&v) = self.memo.get(&key) {
            return v;
        }
        let mut best: f64 = 0.0;
        for (turn, reroll) in self.decisions(dice, locked, rolled, t) {
            best = best.max(self.after(dice, locked, rolled, t, turn, reroll));
        }
        self.memo.insert(key, best);
        best
    }
}

/// The observation of the last of `shown.len() + 1` seats after its first throw.
fn observation(v: Variant, limit: u8, shown: &[Shown], dice: [u8; 3]) -> ShakeObservation {
    let n = shown.len() + 1;
    let mut turns: Vec<TurnView> = shown
        .iter()
        .map(|&(d, throws)| TurnView {
            dice: d.map(Some),
            throws,
            rolled: DieMask::ALL,
            turned: DieMask::EMPTY,
            done: true,
            hand: Some(v.hand(d, 0b111)),
        })
        .collect();
    turns.push(TurnView {
        dice: dice.map(Some),
        throws: 1,
        rolled: DieMask::ALL,
        turned: DieMask::EMPTY,
        done: false,
        hand: Some(v.hand(dice, 0b111)),
    });
    let (turnable, max_turn) = v.turnable(dice, 0b111, 1);
    ShakeObservation {
        game: if v.sjokken {
            Game::Sjokken
        } else {
            Game::Schocken
        },
        seat: Seat(n as u8 - 1),
        seats: n as u8,
        half: 1,
        round: 3,
        pot: 5,
        removed: 0,
        tokens: vec![if v.sjokken { 10 } else { 8 } / n as u8; n],
        in_play: Seats::first_n(n),
        half_losers: Vec::new(),
        starter: Seat(0),
        throw_limit: Some(limit),
        to_act: Some(Seat(n as u8 - 1)),
        turn_order: (0..n as u8).map(Seat).collect(),
        turns,
        decision: Some(ShakeDecision {
            max_throws: limit,
            can_reroll: limit > 1,
            turnable: DieMask::from_bits(turnable).unwrap(),
            max_turn: max_turn as u8,
            turn_needs_reroll: !v.stop_may_turn(),
            locked: DieMask::EMPTY,
        }),
    }
}

fn shown_sets(limit: u8) -> Vec<Vec<Shown>> {
    let t = |x: u8| x.min(limit);
    vec![
        vec![([6, 6, 5], limit), ([4, 2, 2], t(2)), ([1, 1, 4], t(1))],
        vec![([3, 1, 2], limit), ([6, 6, 6], t(1))],
        vec![([1, 1, 6], limit), ([5, 5, 5], t(2)), ([1, 1, 5], t(3))],
        vec![([2, 2, 1], limit)],
    ]
}

#[test]
fn the_last_players_choice_is_as_good_as_a_brute_force() {
    let mut cases = 0;
    for v in Variant::all() {
        let rules = v.rules();
        for limit in 1..=3u8 {
            for shown in shown_sets(limit) {
                let mut brute = Brute {
                    v,
                    limit,
                    shown: &shown,
                    memo: HashMap::new(),
                };
                let mut expert = ExpertPolicy::for_rules(&rules, 1);
                for i in 0..216usize {
                    let dice = [(i / 36) as u8 + 1, (i / 6 % 6) as u8 + 1, (i % 6) as u8 + 1];
                    if v.sjokken && dice == [1, 1, 1] {
                        continue; // the round ends: no decision
                    }
                    let options = brute.decisions(dice, 0, 0b111, 1);
                    if options.len() <= 1 {
                        continue; // no decision: the turn ends
                    }
                    let best = brute.value(dice, 0, 0b111, 1);
                    let o = Observation::Shake(observation(v, limit, &shown, dice));
                    let action = expert.decide(&o, &[]);
                    let (turn, reroll) = match action {
                        Action::Stop { turn } => (turn.bits(), None),
                        Action::Reroll { dice, turn } => (turn.bits(), Some(dice.bits())),
                        other => panic!("{other:?}"),
                    };
                    assert!(
                        options.contains(&(turn, reroll)),
                        "{v:?} limit {limit} {dice:?}: {action:?} is not legal"
                    );
                    let got = brute.after(dice, 0, 0b111, 1, turn, reroll);
                    assert!(
                        (got - best).abs() < 1e-9,
                        "{v:?} limit {limit} shown {shown:?} dice {dice:?}: the expert's \
                         {action:?} is worth {got}, the best {best}"
                    );
                    cases += 1;
                }
            }
        }
    }
    assert!(cases > 10_000, "{cases} decisions checked");
}
