//! The Schocken and Sjokken heuristic: keep ones, turn sixes, stop on a strong hand or on a
//! hand that already beats every hand shown this round; and the same play with some of
//! these skills left out ([`ShakeSkills`], for the handicapped players).

use crate::action::Action;
use crate::hand::Hand;
use crate::rules::Game;
use crate::shake::{ShakeDecision, ShakeObservation, TurnView};
use crate::types::DieMask;

fn hand_of(game: Game, dice: [u8; 3]) -> Hand {
    match game {
        Game::Sjokken => Hand::sjokken(dice),
        _ => Hand::schocken(dice, false, true),
    }
}

/// Whether a hand is good enough to stop on whatever the others have: a Schock 4 or better,
/// or a General (Harde).
fn strong(hand: Hand) -> bool {
    matches!(
        hand,
        Hand::SchockOut | Hand::Sjok1 | Hand::Jule | Hand::General(_) | Hand::Harde(_)
    ) || matches!(hand, Hand::Schock(x) | Hand::Sjok(x) if x >= 4)
}

/// Which parts of the heuristic a player uses (all of them: [`ShakeSkills::HEURISTIC`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct ShakeSkills {
    /// Stops after this many throws at the latest (3: as many as allowed).
    pub throws: u8,
    /// Stops on a strong hand (a Schock 4 or better, a General).
    pub stops_on_strong: bool,
    /// Reads the table: stops on a hand that beats every hand shown, or as the starter on
    /// a Straight or Schock.
    pub reads_table: bool,
    /// Turns sixes into ones.
    pub turns_sixes: bool,
    /// Which dice it keeps when it throws again.
    pub keep: Keep,
}

/// Which dice a player keeps when it throws again.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Keep {
    /// Its ones (and a high die beside two ones), as the heuristic.
    Ones,
    /// Nothing: rerolls every die it may.
    Nothing,
    /// Its twos and threes (chasing low figures: throwing its ones, fives and sixes away).
    Low,
}

impl ShakeSkills {
    /// The heuristic's play.
    pub const HEURISTIC: ShakeSkills = ShakeSkills {
        throws: 3,
        stops_on_strong: true,
        reads_table: true,
        turns_sixes: true,
        keep: Keep::Ones,
    };
}

pub(super) fn heuristic(o: &ShakeObservation) -> Action {
    play(o, ShakeSkills::HEURISTIC)
}

/// The heuristic's decision with only `skills`.
pub(super) fn play(o: &ShakeObservation, skills: ShakeSkills) -> Action {
    let Some(decision) = &o.decision else {
        return Action::STOP;
    };
    let Some(me) = o.turns.get(o.seat.index()) else {
        return Action::STOP;
    };
    if me.throws >= skills.throws {
        return Action::STOP;
    }
    let mut dice = me.dice.map(|die| die.unwrap_or(1));
    // The engine computes the hand of dice this seat sees (under the game's variants).
    let now = match me.hand {
        Some(hand) => hand,
        None => hand_of(o.game, dice),
    };
    if skills.stops_on_strong && strong(now) {
        return Action::STOP;
    }

    // Turn as many sixes as allowed (one if the rest must still be rerolled from three).
    let turn = if skills.turns_sixes {
        turn_sixes(decision, &mut dice)
    } else {
        DieMask::EMPTY
    };
    let after = if turn.is_empty() {
        now
    } else {
        hand_of(o.game, dice)
    };
    if !decision.can_reroll {
        return Action::Stop { turn };
    }

    if skills.reads_table && turn.is_empty() {
        let is_starter = o.starter == o.seat;
        let good_enough = match after {
            Hand::Straight(_) | Hand::Straat(_) | Hand::Schock(_) | Hand::Sjok(_) => is_starter,
            _ => false,
        };
        if good_enough || best_shown(o).is_some_and(|b| after.strength() > b) {
            return Action::STOP;
        }
    }

    // Keep ones (and the two ones of a Schock with a high third die); reroll the rest.
    let reroll = not_kept(dice, skills.keep)
        .minus(turn)
        .minus(decision.locked);
    if reroll.is_empty() {
        // Nothing worth rerolling: stop (turning only where stopping allows it).
        let turn = if decision.turn_needs_reroll {
            DieMask::EMPTY
        } else {
            turn
        };
        return Action::Stop { turn };
    }
    Action::Reroll { dice: reroll, turn }
}

/// Turns as many sixes as `decision` allows (one if the rest must still be rerolled from
/// three), making them ones in `dice`: the dice turned.
fn turn_sixes(decision: &ShakeDecision, dice: &mut [u8; 3]) -> DieMask {
    let mut turn = DieMask::EMPTY;
    if !decision.turnable.is_empty() && (decision.can_reroll || !decision.turn_needs_reroll) {
        let max = if decision.turn_needs_reroll && decision.turnable.len() == 3 {
            1
        } else {
            decision.max_turn as usize
        };
        for slot in decision.turnable.slots().take(max) {
            turn = turn.union(DieMask::single(slot));
            dice[slot] = 1;
        }
    }
    turn
}

/// The dice `keep` does not keep. `Keep::Ones` keeps ones (and the two ones of a Schock
/// with a high third die).
fn not_kept(dice: [u8; 3], keep: Keep) -> DieMask {
    let ones = dice.iter().filter(|&&die| die == 1).count();
    let mut reroll = DieMask::EMPTY;
    for (slot, &die) in dice.iter().enumerate() {
        let kept = match keep {
            Keep::Ones => die == 1 || (ones == 2 && die >= 5),
            Keep::Nothing => false,
            Keep::Low => die == 2 || die == 3,
        };
        if !kept {
            reroll = reroll.union(DieMask::single(slot));
        }
    }
    reroll
}

/// The strength of the best hand shown this round by the other seats that finished their
/// turn.
fn best_shown(o: &ShakeObservation) -> Option<u32> {
    let mut best = None;
    for &seat in &o.turn_order {
        if seat == o.seat {
            continue;
        }
        if let Some(TurnView {
            done: true,
            hand: Some(hand),
            ..
        }) = o.turns.get(seat.index())
        {
            best = best.max(Some(hand.strength()));
        }
    }
    best
}
