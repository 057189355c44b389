//! Scripted scenarios for Schocken: one test per rule statement of RULES.md §1, §2 and §5.
//!
//! Every die that matters is fixed by a [`Table`] script. Unless a test scripts its own
//! opening throw-off, ANNA throws the lowest opening hand and starts round 1, and the turn
//! goes round the table ANNA, BEN, CLEO, DAAN. A starter who stops after one throw sets
//! the throw limit to 1, so the other players' single throws need no decisions.

mod common;

use common::*;
use knobel_engine::{Action, ActionError, DieMask, Event, Hand, Match, Rules, Seat};

/// Two players: ANNA starts round 1 with `anna` and stops, BEN throws `ben` once.
fn duel(rules: Rules, anna: [u8; 3], ben: [u8; 3]) -> (Match, Vec<Event>) {
    let mut m = Table::new(rules, 2)
        .round(1, &[(ANNA, anna), (BEN, ben)])
        .start();
    let events = play_round(&mut m);
    (m, events)
}

/// The hand revealed for `seat` in `events`.
fn hand_of(events: &[Event], seat: Seat) -> Hand {
    events
        .iter()
        .find_map(|e| match *e {
            Event::Revealed { seat: s, hand, .. } if s == seat => Some(hand),
            _ => None,
        })
        .expect("the seat's hand is revealed")
}

// ---------------------------------------------------------------------------------------
// §2.2 Hands and their values
// ---------------------------------------------------------------------------------------

#[test]
fn the_loser_receives_mats_worth_the_winners_hand() {
    // §1.3 "the loser receives tokens worth the winner's hand value";
    // §2.2: Schock x -> x, General -> 3, Straight -> 2, Number -> 1.
    let cases = [
        ([1, 6, 1], Hand::Schock(6), 6),
        ([1, 1, 2], Hand::Schock(2), 2),
        ([3, 3, 3], Hand::General(3), 3),
        ([2, 4, 3], Hand::Straight(4), 2),
        ([6, 6, 5], Hand::Number(665), 1),
    ];
    for (anna, hand, value) in cases {
        let (m, events) = duel(schocken(&[]), anna, [2, 2, 1]);
        assert_eq!(hand_of(&events, ANNA), hand);
        assert_eq!(decided(&events), Some((ANNA, BEN, value)), "{hand}");
        assert!(events.contains(&Event::TokensMoved {
            from: None,
            to: BEN,
            count: value
        }));
        assert_eq!(tokens(&m), [0, value]);
        assert_eq!(pot(&m), 13 - value);
        assert_eq!(m.conserved_total(), 13);
    }
}

#[test]
fn hands_rank_from_schock_out_down_to_the_lowest_number() {
    // §2.2 table, highest first. ANNA (earlier) throws the lower hand and BEN the higher:
    // on equal hands ANNA would win, so BEN winning shows his hand is strictly better.
    let better_than = [
        ([1, 1, 1], [1, 1, 6], Hand::SchockOut),
        ([6, 1, 1], [5, 1, 1], Hand::Schock(6)),
        ([2, 1, 1], [6, 6, 6], Hand::Schock(2)),
        ([6, 6, 6], [5, 5, 5], Hand::General(6)),
        ([2, 2, 2], [6, 5, 4], Hand::General(2)),
        ([6, 4, 5], [5, 3, 4], Hand::Straight(6)),
        ([3, 1, 2], [6, 6, 5], Hand::Straight(3)),
        ([6, 6, 5], [6, 6, 4], Hand::Number(665)),
        // "read as a number": 622 beats 554 although its pips sum to less.
        ([2, 6, 2], [5, 4, 5], Hand::Number(622)),
        ([3, 2, 2], [2, 2, 1], Hand::Number(322)),
    ];
    for (ben, anna, hand) in better_than {
        let (_, events) = duel(schocken(&[]), anna, ben);
        assert_eq!(hand_of(&events, BEN), hand);
        let (winner, loser, _) = decided(&events).unwrap();
        assert_eq!((winner, loser), (BEN, ANNA), "{hand} must beat {anna:?}");
    }
}

#[test]
fn schock_out_is_worth_all_thirteen_mats() {
    // §2.2 "Schock out 1-1-1: all of them (13)".
    let (m, events) = duel(schocken(&[]), [1, 1, 1], [6, 5, 3]);
    assert_eq!(decided(&events), Some((ANNA, BEN, 13)));
    assert_eq!(m.outcome(), None, "the game goes on with the second half");
    assert_eq!(obs(&m, ANNA).half_losers, [BEN]);
}

#[test]
fn jule_is_worth_seven_and_ranks_directly_below_schock_out() {
    // §2.2 variant `jule`: "4-2-1: 7; ranks directly below Schock out (decided here)".
    let (_, events) = duel(schocken(&["jule"]), [1, 1, 6], [2, 4, 1]);
    assert_eq!(hand_of(&events, BEN), Hand::Jule);
    assert_eq!(
        decided(&events),
        Some((BEN, ANNA, 7)),
        "Jule beats Schock 6"
    );

    let (_, events) = duel(schocken(&["jule"]), [4, 2, 1], [1, 1, 1]);
    assert_eq!(
        decided(&events),
        Some((BEN, ANNA, 13)),
        "Schock out beats Jule"
    );

    // Without the variant 4-2-1 is the Number 421, worth 1.
    let (_, events) = duel(schocken(&[]), [4, 2, 1], [4, 3, 1]);
    assert_eq!(hand_of(&events, ANNA), Hand::Number(421));
    assert_eq!(decided(&events), Some((BEN, ANNA, 1)));
}

// ---------------------------------------------------------------------------------------
// §2.5 The opening throw-off
// ---------------------------------------------------------------------------------------

#[test]
fn the_lowest_opening_throw_starts_the_first_half() {
    // §2.5 "every player throws once (no decisions, no tokens move), the lowest throw starts".
    let m = Table::new(schocken(&[]), 3)
        .opening(1, &[(ANNA, [6, 3, 2]), (BEN, [4, 2, 1]), (CLEO, [5, 5, 5])])
        .start();
    let everybody = seats(&[ANNA, BEN, CLEO]);
    assert_eq!(
        m.last_events(),
        [
            Event::OpeningThrow {
                seat: ANNA,
                attempt: 1,
                dice: [6, 3, 2]
            },
            Event::OpeningThrow {
                seat: BEN,
                attempt: 1,
                dice: [4, 2, 1]
            },
            Event::OpeningThrow {
                seat: CLEO,
                attempt: 1,
                dice: [5, 5, 5]
            },
            Event::StarterChosen { seat: BEN },
            Event::HalfStarted {
                half: 1,
                seats: everybody,
                starter: BEN
            },
            round_started(1, &[ANNA, BEN, CLEO], BEN),
            thrown(BEN, 1, &[0, 1, 2], HIDDEN),
        ]
    );
    assert_eq!(to_act(&m), BEN);
    assert_eq!(obs(&m, ANNA).turn_order, [BEN, CLEO, ANNA]);
    assert_eq!((pot(&m), tokens(&m)), (13, vec![0, 0, 0]));
}

#[test]
fn a_tie_for_lowest_is_thrown_again_among_the_tied_players_only() {
    // §2.5 "a tie for lowest (equal hands, §2.4 does not apply here) is thrown again among
    // the tied players". 4-2-1 and 1-2-4 are the same hand. BEN's second opening throw is
    // scripted as the lowest of all: it must not count, as BEN does not throw again.
    let m = Table::new(schocken(&[]), 3)
        .opening(1, &[(ANNA, [4, 2, 1]), (BEN, [6, 5, 3]), (CLEO, [1, 2, 4])])
        .opening(2, &[(ANNA, [3, 3, 1]), (BEN, [2, 2, 1]), (CLEO, [5, 3, 2])])
        .start();
    let opening: Vec<_> = m
        .last_events()
        .iter()
        .filter_map(|e| match *e {
            Event::OpeningThrow { seat, attempt, .. } => Some((attempt, seat)),
            Event::StarterChosen { seat } => Some((0, seat)),
            _ => None,
        })
        .collect();
    assert_eq!(
        opening,
        [
            (1, ANNA),
            (1, BEN),
            (1, CLEO),
            (2, ANNA),
            (2, CLEO),
            (0, ANNA)
        ]
    );
    assert_eq!(to_act(&m), ANNA);
}

// ---------------------------------------------------------------------------------------
// §1.1, §1.2 Turns and the throw limit
// ---------------------------------------------------------------------------------------

#[test]
fn the_starters_throws_fix_the_limit_for_everybody_else() {
    // §1.2 "the number of throws the starter actually used becomes L for every later
    // player". ANNA stops after 2: BEN's turn ends on its own after his second throw.
    let mut m = Table::new(schocken(&[]), 3)
        .throw(ANNA, 1, 1, [2, 3, 5])
        .reroll(ANNA, 1, 2, &[(0, 6)])
        .throw(BEN, 1, 1, [4, 4, 2])
        .reroll(BEN, 1, 2, &[(2, 4)])
        .throw(CLEO, 1, 1, [5, 5, 1])
        .start();
    assert_eq!(obs(&m, ANNA).decision.unwrap().max_throws, 3);
    reroll(&mut m, ANNA, &[0]);
    let events = stop(&mut m, ANNA);
    assert_eq!(
        events,
        [
            stopped(ANNA, 2),
            Event::ThrowLimitSet { throws: 2 },
            thrown(BEN, 1, &[0, 1, 2], HIDDEN),
        ]
    );
    let decision = obs(&m, BEN).decision.unwrap();
    assert_eq!((decision.max_throws, decision.can_reroll), (2, true));

    let events = reroll(&mut m, BEN, &[2]);
    assert_eq!(
        events,
        [
            Event::Rerolled {
                seat: BEN,
                dice: dice(&[2])
            },
            thrown(BEN, 2, &[2], [Some(4), Some(4), None]),
            stopped(BEN, 2),
            thrown(CLEO, 1, &[0, 1, 2], HIDDEN),
        ]
    );
    assert_eq!(to_act(&m), CLEO);
    assert_eq!(m.legal_actions(BEN), []);
    let error = assert_refused(&mut m, BEN, Action::reroll(dice(&[0])));
    assert!(matches!(error, ActionError::NotYourTurn { seat: BEN, .. }));
}

#[test]
fn a_starter_who_stops_after_one_throw_gives_everybody_one_throw() {
    // seed 003 "stop after one throw and the others only get one try too".
    let mut m = Table::new(schocken(&[]), 3)
        .round(1, &[(ANNA, [6, 4, 1]), (BEN, [5, 5, 2]), (CLEO, [3, 2, 2])])
        .start();
    let events = stop(&mut m, ANNA);
    let stops: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, Event::Stopped { .. }))
        .cloned()
        .collect();
    assert_eq!(stops, [stopped(ANNA, 1), stopped(BEN, 1), stopped(CLEO, 1)]);
    assert_eq!(decided(&events), Some((ANNA, CLEO, 1)));
    assert_eq!(obs(&m, ANNA).round, 2);
}

#[test]
fn later_players_may_stop_earlier_than_the_limit() {
    // §1.2 "Later players may stop earlier than L."
    let mut m = Table::new(schocken(&[]), 3)
        .throw(ANNA, 1, 1, [6, 4, 1])
        .reroll(ANNA, 1, 2, &[(2, 2)])
        .reroll(ANNA, 1, 3, &[(2, 3)])
        .throw(BEN, 1, 1, [5, 5, 5])
        .throw(CLEO, 1, 1, [3, 2, 6])
        .reroll(CLEO, 1, 2, &[(2, 2)])
        .start();
    reroll(&mut m, ANNA, &[2]);
    let events = reroll(&mut m, ANNA, &[2]);
    assert!(events.contains(&Event::ThrowLimitSet { throws: 3 }));
    let events = stop(&mut m, BEN);
    assert_eq!(events[0], stopped(BEN, 1));
    reroll(&mut m, CLEO, &[2]);
    let events = stop(&mut m, CLEO);
    assert_eq!(events[0], stopped(CLEO, 2));
    // Equal throws do not matter here: BEN's General wins, CLEO's 322 loses.
    assert_eq!(decided(&events), Some((BEN, CLEO, 3)));
}

#[test]
fn a_reroll_after_the_last_allowed_throw_is_refused() {
    // §1.1 "After the L-th throw the turn ends without a decision": with
    // `turn_on_last_throw`, BEN is asked after his last throw because he may turn a six,
    // but he may not throw again.
    let mut m = Table::new(schocken(&["turn_on_last_throw"]), 2)
        .round(1, &[(ANNA, [2, 3, 5]), (BEN, [6, 6, 3])])
        .start();
    stop(&mut m, ANNA);
    assert_eq!(to_act(&m), BEN);
    let error = assert_refused(&mut m, BEN, Action::reroll(dice(&[2])));
    assert_eq!(
        error,
        ActionError::NoThrowLeft {
            throws: 1,
            limit: 1
        }
    );
    assert!(
        m.legal_actions(BEN)
            .iter()
            .all(|a| matches!(a, Action::Stop { .. }))
    );
}

#[test]
fn held_dice_may_be_put_back_into_the_cup() {
    // §1.1 "reroll a non-empty subset of the three dice (any subset, including dice held
    // before)". ANNA holds 6-5 at her second throw, then rethrows both of them.
    let mut m = Table::new(schocken(&[]), 2)
        .throw(ANNA, 1, 1, [6, 5, 2])
        .reroll(ANNA, 1, 2, &[(2, 5)])
        .reroll(ANNA, 1, 3, &[(0, 1), (1, 1)])
        .throw(BEN, 1, 1, [6, 6, 4])
        .start();
    reroll(&mut m, ANNA, &[2]);
    let held_before = Action::reroll(dice(&[0, 1]));
    assert!(m.legal_actions(ANNA).contains(&held_before));
    let events = act(&mut m, ANNA, held_before);
    assert_eq!(
        events[..2],
        [
            Event::Rerolled {
                seat: ANNA,
                dice: dice(&[0, 1])
            },
            thrown(ANNA, 3, &[0, 1], [None, None, Some(5)]),
        ]
    );
    let events = play_round(&mut m);
    assert_eq!(hand_of(&events, ANNA), Hand::Schock(5));
}

// ---------------------------------------------------------------------------------------
// §2.4 Ties
// ---------------------------------------------------------------------------------------

/// Three players. ANNA makes `anna` in two throws (5-3-6, then the 6 becomes `anna[2]`),
/// BEN throws `ben` once and stops, CLEO throws `cleo` once and stops.
fn tie_round(rules: Rules, anna: [u8; 3], ben: [u8; 3], cleo: [u8; 3]) -> Vec<Event> {
    let mut m = Table::new(rules, 3)
        .throw(ANNA, 1, 1, [anna[0], anna[1], 6])
        .reroll(ANNA, 1, 2, &[(2, anna[2])])
        .round(1, &[(BEN, ben), (CLEO, cleo)])
        .start();
    reroll(&mut m, ANNA, &[2]);
    play_round(&mut m)
}

#[test]
fn by_default_an_equal_hand_in_fewer_throws_is_better_even_when_later() {
    // §2.4 default: "equal hands are ordered by throws used, fewer is better". ANNA's 532 in
    // two throws loses to BEN's 532 in one, although BEN equalled later.
    let events = tie_round(schocken(&[]), [5, 3, 2], [5, 3, 2], [4, 4, 4]);
    assert_eq!(decided(&events), Some((CLEO, ANNA, 3)));
}

#[test]
fn by_default_equal_hands_in_equal_throws_go_against_the_later_player() {
    // §2.4 default: "if those are equal too, the player who took their turn later is worse".
    let mut m = Table::new(schocken(&[]), 3)
        .round(1, &[(ANNA, [5, 3, 2]), (BEN, [2, 5, 3]), (CLEO, [4, 4, 4])])
        .start();
    let events = play_round(&mut m);
    assert_eq!(decided(&events), Some((CLEO, BEN, 3)));
}

#[test]
fn with_tie_later_loses_throws_do_not_count() {
    // §2.4 variant `tie_later_loses`: "throws used do not matter; later is worse". Same
    // dice as the default test above: now BEN, the later, loses despite fewer throws.
    let events = tie_round(
        schocken(&["tie_later_loses"]),
        [5, 3, 2],
        [5, 3, 2],
        [4, 4, 4],
    );
    assert_eq!(decided(&events), Some((CLEO, BEN, 3)));
}

#[test]
fn the_same_ordering_picks_the_winner_among_equal_best_hands() {
    // §2.4 "The same ordering decides the winner among equal best hands." ANNA's General 4
    // took two throws, BEN's one.
    let events = tie_round(schocken(&[]), [4, 4, 4], [4, 4, 4], [5, 3, 2]);
    assert_eq!(
        decided(&events),
        Some((BEN, CLEO, 3)),
        "default: fewer throws"
    );
    let events = tie_round(
        schocken(&["tie_later_loses"]),
        [4, 4, 4],
        [4, 4, 4],
        [5, 3, 2],
    );
    assert_eq!(decided(&events), Some((ANNA, CLEO, 3)), "variant: earlier");
}

// ---------------------------------------------------------------------------------------
// §1.3, §1.4 Token phases, who starts, the end of a half
// ---------------------------------------------------------------------------------------

#[test]
fn tokens_come_from_the_middle_then_from_the_winner_until_one_player_is_left() {
    // Four players; every round each throws once. Round by round:
    // 1. BEN loses to ANNA's Schock 6: 6 from the middle (pot 7).
    // 2. BEN starts (§1.3 the loser starts), loses to CLEO's Schock 6 (BEN 12, pot 1).
    // 3. CLEO loses to ANNA's General (3) but the pot holds 1: she takes min(3, 1) = 1
    //    (§1.4 phase A). The pot is empty: ANNA (the winner) and DAAN hold none and are out.
    // 4. CLEO's Schock 6 wins; she passes min(6, her 1) = 1 to BEN (phase B), holds none
    //    and is out. BEN is the last player in play: he loses the half and starts half 2.
    let mut m = Table::new(schocken(&[]), 4)
        .round(
            1,
            &[
                (ANNA, [1, 1, 6]),
                (BEN, [2, 2, 1]),
                (CLEO, [5, 3, 2]),
                (DAAN, [6, 4, 2]),
            ],
        )
        .round(
            2,
            &[
                (BEN, [2, 2, 1]),
                (CLEO, [1, 1, 6]),
                (DAAN, [5, 3, 2]),
                (ANNA, [6, 4, 2]),
            ],
        )
        .round(
            3,
            &[
                (BEN, [6, 4, 2]),
                (CLEO, [2, 2, 1]),
                (DAAN, [5, 3, 2]),
                (ANNA, [3, 3, 3]),
            ],
        )
        .round(4, &[(CLEO, [1, 1, 6]), (BEN, [5, 3, 2])])
        .start();
    let all = [ANNA, BEN, CLEO, DAAN];

    assert_eq!(
        token_events(&play_round(&mut m)),
        [
            Event::RoundDecided {
                winner: ANNA,
                loser: BEN,
                value: 6
            },
            Event::TokensMoved {
                from: None,
                to: BEN,
                count: 6
            },
            round_started(2, &all, BEN),
        ]
    );
    assert_eq!((pot(&m), tokens(&m)), (7, vec![0, 6, 0, 0]));

    assert_eq!(
        token_events(&play_round(&mut m)),
        [
            Event::RoundDecided {
                winner: CLEO,
                loser: BEN,
                value: 6
            },
            Event::TokensMoved {
                from: None,
                to: BEN,
                count: 6
            },
            round_started(3, &all, BEN),
        ]
    );
    assert_eq!((pot(&m), tokens(&m)), (1, vec![0, 12, 0, 0]));

    assert_eq!(
        token_events(&play_round(&mut m)),
        [
            Event::RoundDecided {
                winner: ANNA,
                loser: CLEO,
                value: 3
            },
            Event::TokensMoved {
                from: None,
                to: CLEO,
                count: 1
            },
            Event::SeatOut { seat: ANNA },
            Event::SeatOut { seat: DAAN },
            round_started(4, &[BEN, CLEO], CLEO),
        ]
    );
    assert_eq!((pot(&m), tokens(&m)), (0, vec![0, 12, 1, 0]));
    assert_eq!(obs(&m, ANNA).turn_order, [CLEO, BEN]);

    assert_eq!(
        token_events(&play_round(&mut m)),
        [
            Event::RoundDecided {
                winner: CLEO,
                loser: BEN,
                value: 6
            },
            Event::TokensMoved {
                from: Some(CLEO),
                to: BEN,
                count: 1
            },
            Event::SeatOut { seat: CLEO },
            Event::HalfLost { half: 1, seat: BEN },
            Event::HalfStarted {
                half: 2,
                seats: seats(&all),
                starter: BEN
            },
            round_started(5, &all, BEN),
        ]
    );
    // §2.5 "Each half starts with 13 mats in the middle and every player in play".
    assert_eq!((pot(&m), tokens(&m)), (13, vec![0, 0, 0, 0]));
    assert_eq!(obs(&m, ANNA).half, 2);
    assert_eq!(to_act(&m), BEN);
    assert_eq!(m.conserved_total(), 13);
}

#[test]
fn in_phase_b_the_winner_passes_the_full_value_and_is_out_at_zero() {
    // §1.4 phase B: "the winner passes min(value, winner's tokens) of their own tokens to
    // the loser. A player whose token count drops to zero is out."
    // 1. BEN takes 6 (pot 7). 2. CLEO takes 6 (pot 1). 3. ANNA takes the last mat of a
    // Schock 2: everybody holds some, nobody is out. 4. BEN's General: he passes 3 of his 6
    // to CLEO. 5. BEN's General again: he passes his last 3 and is out.
    let mut m = Table::new(schocken(&[]), 3)
        .round(1, &[(ANNA, [1, 1, 6]), (BEN, [2, 2, 1]), (CLEO, [5, 3, 2])])
        .round(2, &[(BEN, [5, 3, 2]), (CLEO, [2, 2, 1]), (ANNA, [1, 1, 6])])
        .round(3, &[(CLEO, [5, 3, 2]), (ANNA, [2, 2, 1]), (BEN, [1, 1, 2])])
        .round(4, &[(ANNA, [5, 3, 2]), (BEN, [4, 4, 4]), (CLEO, [2, 2, 1])])
        .round(5, &[(CLEO, [2, 2, 1]), (ANNA, [6, 4, 2]), (BEN, [3, 3, 3])])
        .start();
    for _ in 0..3 {
        play_round(&mut m);
    }
    assert_eq!((pot(&m), tokens(&m)), (0, vec![1, 6, 6]));
    assert_eq!(obs(&m, ANNA).in_play, seats(&[ANNA, BEN, CLEO]));

    assert_eq!(
        token_events(&play_round(&mut m)),
        [
            Event::RoundDecided {
                winner: BEN,
                loser: CLEO,
                value: 3
            },
            Event::TokensMoved {
                from: Some(BEN),
                to: CLEO,
                count: 3
            },
            round_started(5, &[ANNA, BEN, CLEO], CLEO),
        ]
    );
    assert_eq!(tokens(&m), [1, 3, 9]);

    assert_eq!(
        token_events(&play_round(&mut m)),
        [
            Event::RoundDecided {
                winner: BEN,
                loser: CLEO,
                value: 3
            },
            Event::TokensMoved {
                from: Some(BEN),
                to: CLEO,
                count: 3
            },
            Event::SeatOut { seat: BEN },
            round_started(6, &[ANNA, CLEO], CLEO),
        ]
    );
    assert_eq!(tokens(&m), [1, 0, 12]);
    assert_eq!(m.conserved_total(), 13);
}

#[test]
fn schock_out_gives_the_round_loser_all_thirteen_mats_and_the_half() {
    // §2.5 "when the round's best hand is a Schock out, the round's loser receives all 13
    // mats (from the middle and from every player) and loses the half at once".
    // Round 1: CLEO takes 6. Round 2: ANNA's Schock out; BEN has the worst hand.
    let mut m = Table::new(schocken(&[]), 3)
        .round(1, &[(ANNA, [1, 1, 6]), (BEN, [5, 3, 2]), (CLEO, [2, 2, 1])])
        .round(2, &[(CLEO, [5, 3, 2]), (ANNA, [1, 1, 1]), (BEN, [2, 2, 1])])
        .start();
    play_round(&mut m);
    assert_eq!((pot(&m), tokens(&m)), (7, vec![0, 0, 6]));

    let all = [ANNA, BEN, CLEO];
    assert_eq!(
        token_events(&play_round(&mut m)),
        [
            Event::RoundDecided {
                winner: ANNA,
                loser: BEN,
                value: 13
            },
            Event::TokensMoved {
                from: None,
                to: BEN,
                count: 7
            },
            Event::TokensMoved {
                from: Some(CLEO),
                to: BEN,
                count: 6
            },
            Event::HalfLost { half: 1, seat: BEN },
            Event::HalfStarted {
                half: 2,
                seats: seats(&all),
                starter: BEN
            },
            round_started(3, &all, BEN),
        ]
    );
    assert_eq!(obs(&m, ANNA).half_losers, [BEN]);
}

// ---------------------------------------------------------------------------------------
// §2.5, §2.7 Halves, final, game and placings
// ---------------------------------------------------------------------------------------

#[test]
fn two_different_half_losers_play_a_final_which_the_second_half_loser_starts() {
    // §2.5 "Otherwise the two half-losers play a final (a third half with only those two,
    // the loser of the second half starting)"; §2.7 "a half-loser who won the final is
    // second-to-last (place N-1); the game's loser is last". Every half ends on a Schock out.
    let mut m = Table::new(schocken(&[]), 3)
        // Half 1: ANNA loses.
        .round(1, &[(ANNA, [2, 2, 1]), (BEN, [1, 1, 1]), (CLEO, [5, 3, 2])])
        // Half 2, ANNA starts: BEN loses.
        .round(2, &[(ANNA, [6, 4, 2]), (BEN, [2, 2, 1]), (CLEO, [1, 1, 1])])
        // The final, BEN starts: BEN loses.
        .round(3, &[(BEN, [6, 4, 2]), (ANNA, [1, 1, 1])])
        .start();
    let events = play_round(&mut m);
    assert!(events.contains(&Event::HalfLost {
        half: 1,
        seat: ANNA
    }));
    assert!(events.contains(&Event::HalfStarted {
        half: 2,
        seats: seats(&[ANNA, BEN, CLEO]),
        starter: ANNA
    }));

    let events = play_round(&mut m);
    assert_eq!(
        token_events(&events)[2..],
        [
            Event::HalfLost { half: 2, seat: BEN },
            Event::HalfStarted {
                half: 3,
                seats: seats(&[ANNA, BEN]),
                starter: BEN
            },
            round_started(3, &[ANNA, BEN], BEN),
        ]
    );
    assert_eq!(obs(&m, CLEO).turn_order, [BEN, ANNA]);
    assert_eq!((pot(&m), tokens(&m)), (13, vec![0, 0, 0]));

    let events = play_round(&mut m);
    assert_eq!(throwers(&events), [ANNA], "only the finalists throw");
    assert_eq!(
        events[events.len() - 2..],
        [
            Event::HalfLost { half: 3, seat: BEN },
            match_over(&[2, 3, 1]),
        ]
    );
    let outcome = m.outcome().unwrap();
    assert_eq!(outcome.loser, Some(BEN));
    assert_eq!(outcome.placings, [2, 3, 1]);
    assert_eq!(outcome.halves_lost, [1, 2, 0]);
    assert!(m.is_over());
}

#[test]
fn a_player_who_loses_both_halves_loses_the_game_without_a_final() {
    // §2.5 "After two halves: if one player lost both, that player loses the game."
    let mut m = Table::new(schocken(&[]), 3)
        .round(1, &[(ANNA, [2, 2, 1]), (BEN, [1, 1, 1]), (CLEO, [5, 3, 2])])
        .round(2, &[(ANNA, [2, 2, 1]), (BEN, [6, 4, 2]), (CLEO, [1, 1, 1])])
        .start();
    play_round(&mut m);
    let events = play_round(&mut m);
    assert_eq!(
        token_events(&events)[2..],
        [
            Event::HalfLost {
                half: 2,
                seat: ANNA
            },
            match_over(&[3, 1, 1]),
        ]
    );
    let outcome = m.outcome().unwrap();
    assert_eq!(outcome.loser, Some(ANNA));
    assert_eq!(outcome.halves_lost, [2, 0, 0]);
}

#[test]
fn with_single_half_the_half_loser_loses_the_game() {
    // §2.5 variant `single_half`: "one half, no final; its loser loses the game";
    // §2.7 "loser last, the rest share first place".
    let (m, events) = duel(schocken(&["single_half"]), [1, 1, 1], [6, 5, 3]);
    assert_eq!(
        token_events(&events)[2..],
        [Event::HalfLost { half: 1, seat: BEN }, match_over(&[1, 2]),]
    );
    assert_eq!(m.outcome().unwrap().loser, Some(BEN));
}

// ---------------------------------------------------------------------------------------
// §2.6 straight_in_one_throw
// ---------------------------------------------------------------------------------------

/// ANNA builds her hand in two throws (`first`, then slot 2 rethrown as `last`) and stops;
/// BEN throws 2-2-1 once.
fn two_throw_hand(rules: Rules, first: [u8; 3], rethrown: &[(usize, u8)]) -> Vec<Event> {
    let slots: Vec<u32> = rethrown.iter().map(|&(slot, _)| slot as u32).collect();
    let mut m = Table::new(rules, 2)
        .throw(ANNA, 1, 1, first)
        .reroll(ANNA, 1, 2, rethrown)
        .throw(BEN, 1, 1, [2, 2, 1])
        .start();
    reroll(&mut m, ANNA, &slots);
    play_round(&mut m)
}

#[test]
fn a_straight_built_over_two_throws_counts_by_default() {
    // §2.2: 4-5-6 is a Straight, however it was thrown.
    let events = two_throw_hand(schocken(&[]), [4, 5, 2], &[(2, 6)]);
    assert_eq!(hand_of(&events, ANNA), Hand::Straight(6));
    assert_eq!(decided(&events), Some((ANNA, BEN, 2)));
}

#[test]
fn with_straight_in_one_throw_a_straight_needs_all_three_dice_in_the_last_throw() {
    // §2.6 `straight_in_one_throw`: "a straight counts only if all three dice were rolled
    // together in the player's last throw; otherwise the hand is a Number."
    let rules = schocken(&["straight_in_one_throw"]);
    let events = two_throw_hand(rules.clone(), [4, 5, 2], &[(2, 6)]);
    assert_eq!(hand_of(&events, ANNA), Hand::Number(654));
    assert_eq!(decided(&events), Some((ANNA, BEN, 1)));

    // All three rolled together at the second throw: a Straight.
    let events = two_throw_hand(rules, [2, 2, 5], &[(0, 6), (1, 4), (2, 5)]);
    assert_eq!(hand_of(&events, ANNA), Hand::Straight(6));
    assert_eq!(decided(&events), Some((ANNA, BEN, 2)));
}

#[test]
fn straight_in_one_throw_does_not_apply_to_a_jule() {
    // §2.6 "It does not apply to other hands (a Jule counts however it was made)."
    let rules = schocken(&["straight_in_one_throw", "jule"]);
    let events = two_throw_hand(rules, [4, 2, 5], &[(2, 1)]);
    assert_eq!(hand_of(&events, ANNA), Hand::Jule);
    assert_eq!(decided(&events), Some((ANNA, BEN, 7)));
}

// ---------------------------------------------------------------------------------------
// §2.3 Turning sixes
// ---------------------------------------------------------------------------------------

/// Two players, ANNA to act after her first throw `first`; her second throw rolls `second`
/// in the slots named there.
fn anna_threw(rules: Rules, first: [u8; 3], second: &[(usize, u8)]) -> Match {
    Table::new(rules, 2)
        .throw(ANNA, 1, 1, first)
        .reroll(ANNA, 1, 2, second)
        .throw(BEN, 1, 1, [5, 3, 2])
        .start()
}

#[test]
fn two_sixes_from_one_throw_let_one_be_turned_as_part_of_a_reroll() {
    // §2.3 "If a throw shows two sixes among the dice rolled in that throw, the player may
    // turn one of them into a one"; default: "it is part of a reroll".
    let mut m = anna_threw(schocken(&[]), [6, 3, 6], &[(1, 1)]);
    let decision = obs(&m, ANNA).decision.unwrap();
    assert_eq!(decision.turnable, dice(&[0, 2]));
    assert_eq!(decision.max_turn, 1);
    assert!(decision.turn_needs_reroll);

    let events = act(
        &mut m,
        ANNA,
        Action::Reroll {
            dice: dice(&[1]),
            turn: dice(&[0]),
        },
    );
    assert_eq!(
        events,
        [
            Event::Turned {
                seat: ANNA,
                dice: dice(&[0])
            },
            Event::Rerolled {
                seat: ANNA,
                dice: dice(&[1])
            },
            // §2.3 "Turned dice show 1 and are held": face up, like the held six.
            thrown(ANNA, 2, &[1], [Some(1), None, Some(6)]),
        ]
    );
    assert_eq!(seen(&m, ANNA, ANNA), shown([1, 1, 6]));
    assert_eq!(seen(&m, BEN, ANNA), [Some(1), None, Some(6)]);
    assert_eq!(obs(&m, BEN).turns[ANNA.index()].turned, dice(&[0]));
    let events = play_round(&mut m);
    assert_eq!(hand_of(&events, ANNA), Hand::Schock(6));
}

#[test]
fn three_sixes_from_one_throw_let_one_or_two_be_turned() {
    // §2.3 "three sixes from one throw: one or two of them may be turned (the player
    // chooses)".
    let mut m = anna_threw(schocken(&[]), [6, 6, 6], &[(2, 4)]);
    let decision = obs(&m, ANNA).decision.unwrap();
    assert_eq!((decision.turnable, decision.max_turn), (DieMask::ALL, 2));
    let legal = m.legal_actions(ANNA);
    let turn_one = Action::Reroll {
        dice: dice(&[1, 2]),
        turn: dice(&[0]),
    };
    let turn_two = Action::Reroll {
        dice: dice(&[2]),
        turn: dice(&[0, 1]),
    };
    assert!(legal.contains(&turn_one) && legal.contains(&turn_two));

    let error = assert_refused(&mut m, ANNA, Action::Stop { turn: DieMask::ALL });
    assert_eq!(error, ActionError::TooManyTurned { count: 3, max: 2 });

    act(&mut m, ANNA, turn_two);
    assert_eq!(seen(&m, ANNA, ANNA), shown([1, 1, 4]));
}

#[test]
fn turning_more_sixes_than_the_throw_allows_is_refused() {
    // §2.3: two sixes -> only one may be turned.
    let mut m = anna_threw(schocken(&[]), [6, 3, 6], &[(1, 1)]);
    let error = assert_refused(
        &mut m,
        ANNA,
        Action::Reroll {
            dice: dice(&[1]),
            turn: dice(&[0, 2]),
        },
    );
    assert_eq!(error, ActionError::TooManyTurned { count: 2, max: 1 });
}

#[test]
fn a_die_that_is_not_a_six_cannot_be_turned() {
    // §2.3: only sixes turn into ones.
    let mut m = anna_threw(schocken(&[]), [6, 3, 6], &[(1, 1)]);
    let error = assert_refused(
        &mut m,
        ANNA,
        Action::Reroll {
            dice: dice(&[0]),
            turn: dice(&[1]),
        },
    );
    assert!(
        matches!(error, ActionError::NotTurnable { slot: 1, ref turnable, .. } if turnable == "{0, 2}"),
        "{error:?}"
    );
}

#[test]
fn a_held_six_and_a_rolled_six_cannot_be_turned() {
    // §2.3 "two sixes among the dice rolled in that throw": ANNA holds a six from her first
    // throw and rolls one more six; the two sixes were not rolled together.
    let mut m = anna_threw(schocken(&[]), [6, 2, 3], &[(1, 6), (2, 4)]);
    reroll(&mut m, ANNA, &[1, 2]);
    assert_eq!(seen(&m, ANNA, ANNA), shown([6, 6, 4]));
    assert_eq!(obs(&m, ANNA).decision.unwrap().turnable, DieMask::EMPTY);
    for slot in [0, 1] {
        let error = assert_refused(
            &mut m,
            ANNA,
            Action::Reroll {
                dice: dice(&[2]),
                turn: dice(&[slot]),
            },
        );
        assert!(
            matches!(error, ActionError::NotTurnable { slot: s, ref turnable, .. } if s == slot as usize && turnable == "none"),
            "{error:?}"
        );
    }
}

#[test]
fn by_default_turning_and_stopping_is_refused() {
    // §2.3 default (seed 003): "turning ... is part of a reroll: the player turns, then
    // rerolls at least one of the other dice".
    let mut m = anna_threw(schocken(&[]), [6, 6, 1], &[]);
    let turn_and_stop = Action::Stop { turn: dice(&[0]) };
    assert!(
        m.legal_actions(ANNA)
            .iter()
            .all(|a| !matches!(a, Action::Stop { turn } if !turn.is_empty()))
    );
    let error = assert_refused(&mut m, ANNA, turn_and_stop);
    assert_eq!(error, ActionError::TurnNeedsReroll);
}

#[test]
fn by_default_sixes_from_the_last_throw_cannot_be_turned() {
    // §2.3 default: "turning is only allowed when another throw is still allowed". ANNA
    // stops after one throw, so BEN's first throw is his last: nobody asks him, and his
    // 6-6-1 stays the Number 661.
    let mut m = Table::new(schocken(&[]), 3)
        .round(1, &[(ANNA, [5, 3, 2]), (BEN, [6, 6, 1]), (CLEO, [4, 4, 2])])
        .start();
    let events = stop(&mut m, ANNA);
    assert!(events.contains(&stopped(BEN, 1)));
    assert_eq!(hand_of(&events, BEN), Hand::Number(661));
    assert_eq!(decided(&events), Some((BEN, CLEO, 1)));
}

#[test]
fn by_default_the_starters_third_throw_cannot_be_turned_either() {
    // §1.1 "After the L-th throw the turn ends without a decision"; the starter's third
    // throw is always her last.
    let mut m = Table::new(schocken(&[]), 2)
        .throw(ANNA, 1, 1, [2, 3, 5])
        .reroll(ANNA, 1, 2, &[(0, 4)])
        .reroll(ANNA, 1, 3, &[(0, 6), (1, 6)])
        .throw(BEN, 1, 1, [5, 3, 2])
        .start();
    reroll(&mut m, ANNA, &[0]);
    let events = reroll(&mut m, ANNA, &[0, 1]);
    assert_eq!(
        events[1..4],
        [
            thrown(ANNA, 3, &[0, 1], [None, None, Some(5)]),
            stopped(ANNA, 3),
            Event::ThrowLimitSet { throws: 3 },
        ]
    );
    assert_eq!(to_act(&m), BEN);
    let error = assert_refused(&mut m, ANNA, Action::Stop { turn: dice(&[0]) });
    assert!(matches!(error, ActionError::NotYourTurn { seat: ANNA, .. }));
}

#[test]
fn with_turn_on_last_throw_a_six_may_be_turned_and_the_turn_stopped() {
    // §2.3 variant `turn_on_last_throw`: "the player may turn and stop".
    let mut m = anna_threw(schocken(&["turn_on_last_throw"]), [6, 6, 1], &[]);
    assert!(!obs(&m, ANNA).decision.unwrap().turn_needs_reroll);
    let events = act(&mut m, ANNA, Action::Stop { turn: dice(&[0]) });
    assert_eq!(
        events[..3],
        [
            Event::Turned {
                seat: ANNA,
                dice: dice(&[0])
            },
            stopped(ANNA, 1),
            Event::ThrowLimitSet { throws: 1 },
        ]
    );
    // BEN's one throw is his last, under the cup: he is asked, and stops.
    let events = stop(&mut m, BEN);
    assert_eq!(hand_of(&events, ANNA), Hand::Schock(6));
    assert_eq!(decided(&events), Some((ANNA, BEN, 6)));
}

#[test]
fn with_turn_on_last_throw_a_decision_follows_the_last_throw_when_sixes_can_be_turned() {
    // §1.1 "After the L-th throw the turn ends without a decision, except where a rule lets
    // the player turn sixes first (variant turn_on_last_throw)". L = 1: BEN's only throw
    // shows two sixes; he is asked, may only stop, and turns one.
    let mut m = Table::new(schocken(&["turn_on_last_throw"]), 3)
        .round(1, &[(ANNA, [5, 3, 2]), (BEN, [6, 1, 6]), (CLEO, [6, 5, 1])])
        .start();
    stop(&mut m, ANNA);
    assert_eq!(to_act(&m), BEN);
    let decision = obs(&m, BEN).decision.unwrap();
    assert!(!decision.can_reroll);
    assert_eq!((decision.turnable, decision.max_turn), (dice(&[0, 2]), 1));
    assert_eq!(
        m.legal_actions(BEN),
        [
            Action::STOP,
            Action::Stop { turn: dice(&[0]) },
            Action::Stop { turn: dice(&[2]) },
        ]
    );
    act(&mut m, BEN, Action::Stop { turn: dice(&[2]) });
    // CLEO's 6-5-1 under the cup after her last throw has one six: she is asked all the
    // same (see the next test), and may only stop; then the round ends.
    assert_eq!(to_act(&m), CLEO);
    assert_eq!(m.legal_actions(CLEO), [Action::STOP]);
    let events = stop(&mut m, CLEO);
    assert_eq!(events[0], stopped(CLEO, 1));
    assert_eq!(hand_of(&events, BEN), Hand::Schock(6));
    assert_eq!(decided(&events), Some((BEN, ANNA, 6)));
}

#[test]
fn with_turn_on_last_throw_whose_turn_it_is_tells_nothing_of_the_dice_under_the_cup() {
    // §5 "A bot must never be able to learn a hidden die, from any message, before the
    // reveal". Were BEN asked after his last throw only when two sixes came up, ANNA would
    // learn it from whose turn it is. So a last throw under the cup is always followed by
    // a decision: ANNA sees the same with 6-6-3 under BEN's cup as with 5-4-3.
    let seen_by_anna = |ben: [u8; 3], rules: Rules| {
        let mut m = Table::new(rules, 2)
            .round(1, &[(ANNA, [5, 3, 2]), (BEN, ben)])
            .start();
        let events = stop(&mut m, ANNA);
        (events, obs(&m, ANNA), to_act(&m))
    };
    let rules = schocken(&["turn_on_last_throw"]);
    let (sixes, none) = (
        seen_by_anna([6, 6, 3], rules.clone()),
        seen_by_anna([5, 4, 3], rules),
    );
    assert_eq!(sixes, none);
    assert_eq!(none.2, BEN);
    // With every die face up there is nothing to hide: without sixes to turn, the turn
    // ends after the last throw without a decision (§1.1).
    let open = schocken(&["turn_on_last_throw", "open_dice"]);
    let (events, _, _) = seen_by_anna([5, 4, 3], open.clone());
    assert!(events.contains(&stopped(BEN, 1)));
    let (_, _, to_act_open) = seen_by_anna([6, 6, 3], open);
    assert_eq!(to_act_open, BEN);
}

#[test]
fn a_turned_die_cannot_be_rerolled_later_in_the_turn() {
    // §2.3 "Turned dice show 1 and are held for the rest of the turn."
    let mut m = Table::new(schocken(&[]), 2)
        .throw(ANNA, 1, 1, [6, 6, 3])
        .reroll(ANNA, 1, 2, &[(1, 5), (2, 4)])
        .throw(BEN, 1, 1, [5, 3, 2])
        .start();
    act(
        &mut m,
        ANNA,
        Action::Reroll {
            dice: dice(&[1, 2]),
            turn: dice(&[0]),
        },
    );
    assert_eq!(obs(&m, ANNA).decision.unwrap().locked, dice(&[0]));
    assert!(m.legal_actions(ANNA).iter().all(|a| match a {
        Action::Reroll { dice, .. } => !dice.contains(0),
        _ => true,
    }));
    let error = assert_refused(&mut m, ANNA, Action::reroll(dice(&[0, 2])));
    assert_eq!(error, ActionError::RerollTurned { slot: 0 });
}

#[test]
fn a_die_cannot_be_both_turned_and_rerolled() {
    let mut m = anna_threw(schocken(&[]), [6, 6, 3], &[]);
    let error = assert_refused(
        &mut m,
        ANNA,
        Action::Reroll {
            dice: dice(&[0, 2]),
            turn: dice(&[0]),
        },
    );
    assert_eq!(error, ActionError::TurnAndReroll { slot: 0 });
}

// ---------------------------------------------------------------------------------------
// §5 Who sees what
// ---------------------------------------------------------------------------------------

#[test]
fn dice_under_the_cup_are_seen_by_the_thrower_alone_until_the_reveal() {
    // §5 Schocken: "Dice set aside (held, or turned) lie face up: public. Dice under the
    // cup after a throw are seen by the thrower alone until the round's reveal. How many
    // throws each player used is public."
    let mut m = Table::new(schocken(&[]), 3)
        .throw(ANNA, 1, 1, [3, 5, 2])
        .reroll(ANNA, 1, 2, &[(2, 5)])
        .throw(BEN, 1, 1, [6, 4, 2])
        .throw(CLEO, 1, 1, [4, 4, 1])
        .start();
    assert_eq!(
        m.last_events().last(),
        Some(&thrown(ANNA, 1, &[0, 1, 2], HIDDEN))
    );
    assert_eq!(seen(&m, ANNA, ANNA), shown([3, 5, 2]));
    assert_eq!(
        obs(&m, ANNA).turns[ANNA.index()].hand,
        Some(Hand::Number(532))
    );
    for other in [BEN, CLEO] {
        assert_eq!(seen(&m, other, ANNA), HIDDEN);
        let view = &obs(&m, other).turns[ANNA.index()];
        assert_eq!((view.throws, view.hand), (1, None));
    }

    // ANNA sets 3-5 aside face up and rethrows the 2.
    let events = reroll(&mut m, ANNA, &[2]);
    assert_eq!(events[1], thrown(ANNA, 2, &[2], [Some(3), Some(5), None]));
    assert_eq!(seen(&m, BEN, ANNA), [Some(3), Some(5), None]);
    assert_eq!(seen(&m, ANNA, ANNA), shown([3, 5, 5]));

    // Stopping does not lift the cup: the other players' turns go by, each hidden.
    stop(&mut m, ANNA);
    stop(&mut m, BEN);
    assert_eq!(seen(&m, CLEO, ANNA), [Some(3), Some(5), None]);
    assert_eq!(seen(&m, CLEO, BEN), HIDDEN);
    assert_eq!(seen(&m, BEN, BEN), shown([6, 4, 2]));
    assert_eq!(obs(&m, CLEO).turns[BEN.index()].throws, 1);
    assert_eq!(obs(&m, CLEO).turns[ANNA.index()].throws, 2);

    // "At the end of every round all hands are revealed to everybody."
    let events = stop(&mut m, CLEO);
    assert_eq!(
        revealed(&events),
        [(ANNA, [3, 5, 5]), (BEN, [6, 4, 2]), (CLEO, [4, 4, 1])]
    );
    assert_eq!(decided(&events), Some((BEN, CLEO, 1)));
}

#[test]
fn with_open_dice_every_die_is_public() {
    // §2.6 `open_dice`: "all dice are visible to everybody at all times".
    let mut m = Table::new(schocken(&["open_dice"]), 2)
        .throw(ANNA, 1, 1, [3, 5, 2])
        .reroll(ANNA, 1, 2, &[(2, 5)])
        .throw(BEN, 1, 1, [6, 4, 2])
        .start();
    assert_eq!(
        m.last_events().last(),
        Some(&thrown(ANNA, 1, &[0, 1, 2], shown([3, 5, 2])))
    );
    assert_eq!(seen(&m, BEN, ANNA), shown([3, 5, 2]));
    let events = reroll(&mut m, ANNA, &[2]);
    assert_eq!(events[1], thrown(ANNA, 2, &[2], shown([3, 5, 5])));
    let events = stop(&mut m, ANNA);
    assert!(events.contains(&thrown(BEN, 1, &[0, 1, 2], shown([6, 4, 2]))));
}

// ---------------------------------------------------------------------------------------
// Refused actions
// ---------------------------------------------------------------------------------------

#[test]
fn illegal_actions_are_refused_with_typed_errors_and_change_nothing() {
    let mut m = anna_threw(schocken(&[]), [5, 3, 2], &[]);
    let error = assert_refused(&mut m, BEN, Action::STOP);
    assert_eq!(
        error,
        ActionError::NotYourTurn {
            seat: BEN,
            waiting: "seat 0".to_owned()
        }
    );
    for betting in [
        Action::Check,
        Action::Bet,
        Action::Call,
        Action::Raise,
        Action::Fold,
    ] {
        let error = assert_refused(&mut m, ANNA, betting);
        assert_eq!(
            error,
            ActionError::WrongKind {
                action: betting.verb(),
                legal: "stop, reroll"
            }
        );
    }
    let error = assert_refused(&mut m, ANNA, Action::reroll(DieMask::EMPTY));
    assert_eq!(error, ActionError::EmptyReroll);
    let error = assert_refused(&mut m, Seat(2), Action::STOP);
    assert_eq!(
        error,
        ActionError::NoSuchSeat {
            seat: Seat(2),
            last: 1
        }
    );
    // After all that, ANNA's turn goes on as if nothing happened.
    assert_eq!(to_act(&m), ANNA);
    stop(&mut m, ANNA);
}

#[test]
fn no_action_is_accepted_after_the_match_is_over() {
    let (mut m, _) = duel(schocken(&["single_half"]), [1, 1, 1], [6, 5, 3]);
    assert!(m.is_over());
    assert_eq!(
        assert_refused(&mut m, BEN, Action::STOP),
        ActionError::MatchOver
    );
}
