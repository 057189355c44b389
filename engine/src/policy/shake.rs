//! The Schocken and Sjokken heuristic: keep ones, turn sixes, stop on a strong hand or on a
//! hand that already beats every hand shown this round.

use crate::action::Action;
use crate::hand::Hand;
use crate::rules::Game;
use crate::shake::ShakeObservation;
use crate::types::{DICE, DieMask};

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

pub(super) fn heuristic(o: &ShakeObservation) -> Action {
    let Some(decision) = &o.decision else {
        return Action::STOP;
    };
    let me = &o.turns[o.seat.index()];
    let mut dice = [0u8; DICE];
    for (slot, die) in dice.iter_mut().enumerate() {
        *die = me.dice[slot].unwrap_or(1);
    }
    // The engine computes the hand of dice this seat sees (under the game's variants).
    let now = me.hand.unwrap_or_else(|| hand_of(o.game, dice));
    if strong(now) {
        return Action::STOP;
    }

    // Turn as many sixes as allowed (one if the rest must still be rerolled from three).
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
    let after = if turn.is_empty() {
        now
    } else {
        hand_of(o.game, dice)
    };
    if !decision.can_reroll {
        return Action::Stop { turn };
    }

    // The best hand already shown this round.
    let best_shown = o
        .turn_order
        .iter()
        .filter(|&&s| s != o.seat)
        .filter_map(|s| o.turns[s.index()].hand.filter(|_| o.turns[s.index()].done))
        .map(|h| h.strength())
        .max();
    let is_starter = o.starter == o.seat;
    let beats_shown = best_shown.is_some_and(|b| after.strength() > b);
    let good_enough = match after {
        Hand::Straight(_) | Hand::Straat(_) | Hand::Schock(_) | Hand::Sjok(_) => is_starter,
        _ => false,
    };
    if turn.is_empty() && (beats_shown || good_enough) {
        return Action::STOP;
    }

    // Keep ones (and the two ones of a Schock with a high third die); reroll the rest.
    let ones = (0..DICE).filter(|&s| dice[s] == 1).count();
    let mut reroll = DieMask::EMPTY;
    for (slot, &die) in dice.iter().enumerate() {
        let keep = die == 1 || (ones == 2 && die >= 5);
        if !keep {
            reroll = reroll.union(DieMask::single(slot));
        }
    }
    reroll = reroll.minus(turn).minus(decision.locked);
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
