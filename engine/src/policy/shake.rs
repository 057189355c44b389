//! The Schocken and Sjokken heuristic: keep ones, turn sixes, stop on a strong hand or on a
//! hand that already beats every hand shown this round.

use crate::action::Action;
use crate::hand::Hand;
use crate::rules::Game;
use crate::shake::{ShakeObservation, TurnView};
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

pub(super) fn heuristic(o: &ShakeObservation) -> Action {
    let Some(decision) = &o.decision else {
        return Action::STOP;
    };
    let Some(me) = o.turns.get(o.seat.index()) else {
        return Action::STOP;
    };
    let mut dice = me.dice.map(|die| die.unwrap_or(1));
    // The engine computes the hand of dice this seat sees (under the game's variants).
    let now = match me.hand {
        Some(hand) => hand,
        None => hand_of(o.game, dice),
    };
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

    if turn.is_empty() {
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
    let ones = dice.iter().filter(|&&die| die == 1).count();
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
