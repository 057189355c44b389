//! Scripted scenarios for Sjokken: one test per rule statement of RULES.md §1, §3 and §5.
//!
//! Every die that matters is fixed by a [`Table`] script. Unless a test scripts its own
//! opening throw-off, ANNA throws the highest opening hand and starts round 1, and the turn
//! goes round the table ANNA, BEN, CLEO, DAAN. A starter who stops after one throw sets
//! the throw limit to 1: nothing is blind and the others' single throws need no decisions
//! (unless they show two sixes, which may be turned).

mod common;

use common::*;
use knobel_engine::{Action, ActionError, DieMask, Event, Hand, Match, Seat};

/// Two players: ANNA starts round 1 with `anna` and stops, BEN throws `ben` once.
fn duel(anna: [u8; 3], ben: [u8; 3]) -> (Match, Vec<Event>) {
    let mut m = Table::new(sjokken(), 2)
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

/// `Event::Sjok1` followed by `Event::SeatOut`: `seat` is free, `removed` points leave.
fn sjok1(seat: Seat, removed: u8) -> [Event; 2] {
    [Event::Sjok1 { seat, removed }, Event::SeatOut { seat }]
}

// ---------------------------------------------------------------------------------------
// §3.1, §3.2 Points and hands
// ---------------------------------------------------------------------------------------

#[test]
fn a_game_has_fifteen_penalty_points_in_the_pot() {
    // §3.1 "15 penalty points".
    let m = Table::new(sjokken(), 3).start();
    assert_eq!((pot(&m), tokens(&m)), (15, vec![0, 0, 0]));
    assert_eq!(m.conserved_total(), 15);
    assert_eq!(obs(&m, BEN).half, 1);
}

#[test]
fn the_loser_takes_points_worth_the_winners_hand() {
    // §3.2: SJOK x -> x, Harde -> 3, Straat -> 2, Hoog -> 1.
    let cases = [
        ([1, 6, 1], Hand::Sjok(6), 6),
        ([1, 1, 2], Hand::Sjok(2), 2),
        ([5, 5, 5], Hand::Harde(5), 3),
        ([1, 3, 2], Hand::Straat(3), 2),
        ([6, 4, 5], Hand::Straat(6), 2),
        ([6, 5, 5], Hand::Hoog(16), 1),
    ];
    for (anna, hand, value) in cases {
        let (m, events) = duel(anna, [2, 2, 1]);
        assert_eq!(hand_of(&events, ANNA), hand);
        assert_eq!(decided(&events), Some((ANNA, BEN, value)), "{hand}");
        assert_eq!((pot(&m), tokens(&m)), (15 - value, vec![0, value]));
    }
}

#[test]
fn hands_rank_from_sjok_down_to_hoog() {
    // §3.2 table, highest first. ANNA (earlier) throws the lower hand: she would win a tie,
    // so BEN winning shows his hand is strictly better.
    let better_than = [
        ([6, 1, 1], [5, 1, 1], Hand::Sjok(6)),
        ([2, 1, 1], [6, 6, 6], Hand::Sjok(2)),
        ([6, 6, 6], [5, 5, 5], Hand::Harde(6)),
        ([2, 2, 2], [6, 5, 4], Hand::Harde(2)),
        ([6, 4, 5], [5, 3, 4], Hand::Straat(6)),
        ([3, 1, 2], [6, 6, 5], Hand::Straat(3)),
        ([6, 6, 5], [6, 6, 4], Hand::Hoog(17)),
    ];
    for (ben, anna, hand) in better_than {
        let (_, events) = duel(anna, ben);
        assert_eq!(hand_of(&events, BEN), hand);
        let (winner, loser, _) = decided(&events).unwrap();
        assert_eq!((winner, loser), (BEN, ANNA), "{hand} must beat {anna:?}");
    }
}

#[test]
fn hoog_is_ranked_by_the_sum_of_the_pips() {
    // §3.2 "Hoog: ranked by the sum of the pips". 5-4-4 (13) beats 6-5-1 (12), although
    // read as numbers (Schocken's way) 651 would beat 544.
    let (_, events) = duel([6, 5, 1], [5, 4, 4]);
    assert_eq!(hand_of(&events, ANNA), Hand::Hoog(12));
    assert_eq!(decided(&events), Some((BEN, ANNA, 1)));
}

#[test]
fn six_six_two_and_five_five_four_are_equal_and_the_earlier_wins() {
    // §3.2 "6-6-2 and 5-5-4 are equal hands"; §3.3 "the player who threw the value first
    // wins; a later equal hand is worse". Whichever of them ANNA throws, she wins.
    let (_, events) = duel([6, 6, 2], [5, 5, 4]);
    assert_eq!(hand_of(&events, BEN), Hand::Hoog(14));
    assert_eq!(decided(&events), Some((ANNA, BEN, 1)));
    let (_, events) = duel([5, 5, 4], [6, 2, 6]);
    assert_eq!(decided(&events), Some((ANNA, BEN, 1)));
}

// ---------------------------------------------------------------------------------------
// §3.3 Ties
// ---------------------------------------------------------------------------------------

/// Three players. ANNA makes `anna` in two throws (the third die first shows a 6) and
/// stops, so L = 2; BEN throws `ben` and CLEO `cleo` once each and stop.
fn tie_round(anna: [u8; 3], ben: [u8; 3], cleo: [u8; 3]) -> Vec<Event> {
    let mut m = Table::new(sjokken(), 3)
        .throw(ANNA, 1, 1, [anna[0], anna[1], 6])
        .reroll(ANNA, 1, 2, &[(2, anna[2])])
        .round(1, &[(BEN, ben), (CLEO, cleo)])
        .start();
    reroll(&mut m, ANNA, &[2]);
    play_round(&mut m)
}

#[test]
fn on_equal_hands_throws_used_do_not_matter_the_later_hand_is_worse() {
    // §3.3 "Ties: the player who threw the value first wins; a later equal hand is worse.
    // Throws used do not matter." ANNA's Hoog 10 took two throws, BEN's one: BEN loses.
    // (Under Schocken's default ANNA would lose.)
    let events = tie_round([5, 3, 2], [4, 4, 2], [3, 3, 3]);
    assert_eq!(decided(&events), Some((CLEO, BEN, 3)));
}

#[test]
fn among_equal_best_hands_the_first_thrower_wins_whatever_the_throws() {
    // §3.3, the same ordering for the winner: ANNA's Harde 4 in two throws beats BEN's in one.
    let events = tie_round([4, 4, 4], [4, 4, 4], [5, 3, 2]);
    assert_eq!(decided(&events), Some((ANNA, CLEO, 3)));
}

// ---------------------------------------------------------------------------------------
// §3.3 Who starts
// ---------------------------------------------------------------------------------------

#[test]
fn the_highest_opening_throw_starts() {
    // §3.3 "every player throws once (no decisions, no points move; not a round), the
    // highest throw starts". Sjokken has no halves: no HalfStarted event.
    let m = Table::new(sjokken(), 3)
        .opening(1, &[(ANNA, [2, 2, 1]), (BEN, [6, 5, 1]), (CLEO, [5, 4, 4])])
        .throw(CLEO, 1, 1, [3, 4, 6])
        .start();
    assert_eq!(
        m.last_events(),
        [
            Event::OpeningThrow {
                seat: ANNA,
                attempt: 1,
                dice: [2, 2, 1]
            },
            Event::OpeningThrow {
                seat: BEN,
                attempt: 1,
                dice: [6, 5, 1]
            },
            Event::OpeningThrow {
                seat: CLEO,
                attempt: 1,
                dice: [5, 4, 4]
            },
            Event::StarterChosen { seat: CLEO },
            round_started(1, &[ANNA, BEN, CLEO], CLEO),
            // §5 "Every throw is public as it lands".
            thrown(CLEO, 1, &[0, 1, 2], shown([3, 4, 6])),
        ]
    );
    assert_eq!(obs(&m, ANNA).turn_order, [CLEO, ANNA, BEN]);
}

#[test]
fn equal_highest_opening_throws_are_thrown_again_among_those_players() {
    // §3.3 "equal highest hands are thrown again among those players". 6-6-2 and 5-5-4
    // are both Hoog 14. CLEO's second opening throw would be the highest, but she does not
    // throw again.
    let m = Table::new(sjokken(), 3)
        .opening(1, &[(ANNA, [6, 6, 2]), (BEN, [5, 5, 4]), (CLEO, [2, 2, 1])])
        .opening(2, &[(ANNA, [3, 2, 2]), (BEN, [4, 2, 2]), (CLEO, [6, 6, 6])])
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
            (2, BEN),
            (0, BEN)
        ]
    );
    assert_eq!(to_act(&m), BEN);
}

// ---------------------------------------------------------------------------------------
// §1.2, §3.3 Throw limit and turning
// ---------------------------------------------------------------------------------------

#[test]
fn after_the_first_throw_one_of_two_sixes_may_be_turned_and_the_turn_stopped() {
    // §3.3 "after the first throw of a turn only, if it shows at least two sixes, the
    // player may turn exactly one six into a one, with or without throwing again".
    let mut m = Table::new(sjokken(), 2)
        .round(1, &[(ANNA, [6, 1, 6]), (BEN, [5, 3, 2])])
        .start();
    let decision = obs(&m, ANNA).decision.unwrap();
    assert_eq!((decision.turnable, decision.max_turn), (dice(&[0, 2]), 1));
    assert!(!decision.turn_needs_reroll);
    let legal = m.legal_actions(ANNA);
    assert!(legal.contains(&Action::Stop { turn: dice(&[0]) }));
    assert!(legal.contains(&Action::Reroll {
        dice: dice(&[1]),
        turn: dice(&[2])
    }));

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
    assert_eq!(hand_of(&events, ANNA), Hand::Sjok(6));
    assert_eq!(decided(&events), Some((ANNA, BEN, 6)));
}

#[test]
fn a_turned_six_may_also_be_followed_by_another_throw() {
    // §3.3 "with or without throwing again".
    let mut m = Table::new(sjokken(), 2)
        .throw(ANNA, 1, 1, [6, 6, 3])
        .reroll(ANNA, 1, 2, &[(2, 1)])
        .throw(BEN, 1, 1, [5, 3, 2])
        .start();
    let events = act(
        &mut m,
        ANNA,
        Action::Reroll {
            dice: dice(&[2]),
            turn: dice(&[0]),
        },
    );
    assert_eq!(events[2], thrown(ANNA, 2, &[2], shown([1, 6, 1])));
    assert_eq!(obs(&m, BEN).turns[ANNA.index()].hand, Some(Hand::Sjok(6)));
}

#[test]
fn a_turned_six_stays_held_for_the_rest_of_the_turn() {
    // §3.3 does not say; read as in §2.3 ("Turned dice show 1 and are held for the rest of
    // the turn"), which is what the engine does for both games.
    let mut m = Table::new(sjokken(), 2)
        .throw(ANNA, 1, 1, [6, 6, 3])
        .reroll(ANNA, 1, 2, &[(2, 4)])
        .throw(BEN, 1, 1, [5, 3, 2])
        .start();
    act(
        &mut m,
        ANNA,
        Action::Reroll {
            dice: dice(&[2]),
            turn: dice(&[0]),
        },
    );
    assert_eq!(obs(&m, ANNA).decision.unwrap().locked, dice(&[0]));
    let error = assert_refused(&mut m, ANNA, Action::reroll(dice(&[0, 2])));
    assert_eq!(error, ActionError::RerollTurned { slot: 0 });
}

#[test]
fn of_three_sixes_exactly_one_may_be_turned() {
    // §3.3 "turn exactly one six" (Schocken allows two of three).
    let mut m = Table::new(sjokken(), 2)
        .round(1, &[(ANNA, [6, 6, 6]), (BEN, [5, 3, 2])])
        .start();
    let decision = obs(&m, ANNA).decision.unwrap();
    assert_eq!((decision.turnable, decision.max_turn), (DieMask::ALL, 1));
    let error = assert_refused(
        &mut m,
        ANNA,
        Action::Stop {
            turn: dice(&[0, 1]),
        },
    );
    assert_eq!(error, ActionError::TooManyTurned { count: 2, max: 1 });
    let events = act(&mut m, ANNA, Action::Stop { turn: dice(&[2]) });
    assert_eq!(hand_of(&events, ANNA), Hand::Hoog(13), "6-6-1 is a Hoog");
}

#[test]
fn with_one_throw_allowed_the_only_throw_may_still_be_turned() {
    // §3.3 turning "with or without throwing again" holds when L = 1 too: BEN is asked
    // after his only throw, may turn and stop, but not throw again.
    let mut m = Table::new(sjokken(), 2)
        .round(1, &[(ANNA, [5, 3, 2]), (BEN, [6, 6, 1])])
        .start();
    stop(&mut m, ANNA);
    assert_eq!(to_act(&m), BEN);
    let decision = obs(&m, BEN).decision.unwrap();
    assert_eq!((decision.max_throws, decision.can_reroll), (1, false));
    assert_eq!(
        m.legal_actions(BEN),
        [
            Action::STOP,
            Action::Stop { turn: dice(&[0]) },
            Action::Stop { turn: dice(&[1]) },
        ]
    );
    let error = assert_refused(
        &mut m,
        BEN,
        Action::Reroll {
            dice: dice(&[2]),
            turn: dice(&[0]),
        },
    );
    assert_eq!(
        error,
        ActionError::NoThrowLeft {
            throws: 1,
            limit: 1
        }
    );
    let events = act(&mut m, BEN, Action::Stop { turn: dice(&[1]) });
    assert_eq!(hand_of(&events, BEN), Hand::Sjok(6));
    assert_eq!(decided(&events), Some((BEN, ANNA, 6)));
}

#[test]
fn sixes_of_a_later_throw_cannot_be_turned() {
    // §3.3 "after the first throw of a turn only" (seed 000: "dit is ALLEEN bij de eerste
    // worp"). ANNA's second throw shows two sixes, all rolled together.
    let mut m = Table::new(sjokken(), 2)
        .throw(ANNA, 1, 1, [2, 3, 5])
        .reroll(ANNA, 1, 2, &[(0, 6), (1, 6), (2, 4)])
        .throw(BEN, 1, 1, [5, 3, 2])
        .start();
    reroll(&mut m, ANNA, &[0, 1, 2]);
    assert_eq!(seen(&m, BEN, ANNA), shown([6, 6, 4]));
    assert_eq!(obs(&m, ANNA).decision.unwrap().turnable, DieMask::EMPTY);
    for action in [
        Action::Stop { turn: dice(&[0]) },
        Action::Reroll {
            dice: dice(&[2]),
            turn: dice(&[1]),
        },
    ] {
        let error = assert_refused(&mut m, ANNA, action);
        assert!(
            matches!(error, ActionError::NotTurnable { reason, .. } if reason.contains("first throw")),
            "{error:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// §3.4 SJOK1
// ---------------------------------------------------------------------------------------

/// Four players. Round 1: BEN's 2-2-1 loses 5 points to ANNA's SJOK 5 (pot 10).
/// Round 2: BEN starts and throws SJOK1 at once.
/// Round 3 (CLEO, DAAN, ANNA): DAAN's 2-2-1 loses 1 point to ANNA's Hoog 12 (pot 9).
/// Round 4 (DAAN, ANNA, CLEO): ANNA throws SJOK1 after DAAN.
fn two_sjok1s() -> Match {
    Table::new(sjokken(), 4)
        .round(
            1,
            &[
                (ANNA, [1, 1, 5]),
                (BEN, [2, 2, 1]),
                (CLEO, [6, 4, 2]),
                (DAAN, [5, 3, 2]),
            ],
        )
        .round(2, &[(BEN, [1, 1, 1])])
        .round(
            3,
            &[(CLEO, [5, 3, 2]), (DAAN, [2, 2, 1]), (ANNA, [6, 4, 2])],
        )
        .round(
            4,
            &[(DAAN, [5, 3, 2]), (ANNA, [1, 1, 1]), (CLEO, [6, 6, 5])],
        )
        .start()
}

#[test]
fn a_visible_sjok1_frees_its_thrower_removes_their_points_and_stops_the_round() {
    // §3.4 "A player who throws SJOK1 is free at once and leaves the game. Their penalty
    // points are removed from the game. The round stops at once: nobody else throws, no
    // points move, there is no loser. The next player in seat order after the SJOK1
    // thrower (still in play) starts a new round."
    let mut m = two_sjok1s();
    let events = play_round(&mut m);
    let round_2 = events
        .iter()
        .position(|e| matches!(e, Event::RoundStarted { round: 2, .. }))
        .unwrap();
    let [freed, out] = sjok1(BEN, 5);
    assert_eq!(
        events[round_2..],
        [
            round_started(2, &[ANNA, BEN, CLEO, DAAN], BEN),
            thrown(BEN, 1, &[0, 1, 2], shown([1, 1, 1])),
            Event::Revealed {
                seat: BEN,
                dice: [1, 1, 1],
                hand: Hand::Sjok1
            },
            freed,
            out,
            round_started(3, &[ANNA, CLEO, DAAN], CLEO),
            thrown(CLEO, 1, &[0, 1, 2], shown([5, 3, 2])),
        ]
    );
    let o = obs(&m, ANNA);
    assert_eq!(
        (o.pot, o.removed, &o.tokens[..]),
        (10, 5, &[0, 0, 0, 0][..])
    );
    assert_eq!(m.conserved_total(), 15);
}

#[test]
fn after_a_sjok1_the_next_player_still_in_play_starts() {
    // §3.4 "The next player in seat order after the SJOK1 thrower (still in play) starts"
    // (decided here: the seed's "achterliggende speler"). ANNA throws SJOK1 in round 4;
    // the seat after her, BEN, is out: CLEO starts. CLEO, after ANNA, never throws.
    let mut m = two_sjok1s();
    play_round(&mut m);
    play_round(&mut m);
    assert_eq!((pot(&m), tokens(&m)), (9, vec![0, 0, 0, 1]));
    let events = play_round(&mut m);
    assert_eq!(
        throwers(&events),
        [ANNA, CLEO],
        "ANNA, then round 5's starter"
    );
    assert!(decided(&events).is_none());
    let [freed, out] = sjok1(ANNA, 0);
    assert_eq!(
        token_events(&events),
        [freed, out, round_started(5, &[CLEO, DAAN], CLEO)]
    );
    assert_eq!((pot(&m), tokens(&m)), (9, vec![0, 0, 0, 1]));
}

#[test]
fn the_seeds_two_player_example_the_sjok1_thrower_is_free_and_the_other_loses() {
    // §3.4 "If this leaves a single player in play, that player has lost the game, even
    // while the pot still holds points (seed example: 13 points vanish with the SJOK1
    // thrower and the other player, holding 2, loses)." Seed 000: two players fight for
    // the last place; the one with 2 points starts and throws SJOK 6, the second throws
    // SJOK1. CLEO was freed when the pot ran empty.
    let mut m = Table::new(sjokken(), 3)
        // BEN collects 6 + 6 + 1 = 13 points.
        .round(1, &[(ANNA, [1, 1, 6]), (BEN, [2, 2, 1]), (CLEO, [5, 3, 2])])
        .round(2, &[(BEN, [2, 2, 1]), (CLEO, [1, 1, 6]), (ANNA, [5, 3, 2])])
        .round(3, &[(BEN, [2, 2, 1]), (CLEO, [6, 4, 2]), (ANNA, [5, 3, 1])])
        // ANNA takes the last 2 points: the pot is empty and CLEO, holding none, is free.
        .round(4, &[(BEN, [6, 4, 2]), (CLEO, [2, 3, 4]), (ANNA, [2, 2, 1])])
        // ANNA (2 points) starts with SJOK 6; BEN (13 points) throws SJOK1.
        .round(5, &[(ANNA, [1, 1, 6]), (BEN, [1, 1, 1])])
        .start();
    for _ in 0..3 {
        play_round(&mut m);
    }
    assert_eq!((pot(&m), tokens(&m)), (2, vec![0, 13, 0]));
    let events = play_round(&mut m);
    assert_eq!(
        token_events(&events),
        [
            Event::RoundDecided {
                winner: CLEO,
                loser: ANNA,
                value: 2
            },
            Event::TokensMoved {
                from: None,
                to: ANNA,
                count: 2
            },
            Event::SeatOut { seat: CLEO },
            round_started(5, &[ANNA, BEN], ANNA),
        ]
    );

    let events = play_round(&mut m);
    let [freed, out] = sjok1(BEN, 13);
    assert_eq!(token_events(&events), [freed, out, match_over(&[3, 1, 1])]);
    let outcome = m.outcome().unwrap();
    assert_eq!(outcome.loser, Some(ANNA));
    assert_eq!(outcome.placings, [3, 1, 1]);
    assert_eq!(outcome.tokens, [2, 0, 0]);
    assert_eq!(obs(&m, ANNA).removed, 13);
    assert_eq!(m.conserved_total(), 15);
}

#[test]
fn a_sjok1_in_a_blind_throw_counts_only_at_the_reveal_after_the_round_is_played_out() {
    // §3.4 "A SJOK1 in a blind throw (§5) is only discovered at the reveal; the round has
    // then been played out, and it ends the same way: no points move, no loser."
    // Round 1: ANNA takes 3 points. Round 2: ANNA's third (blind) throw makes SJOK1.
    let mut m = Table::new(sjokken(), 3)
        .round(1, &[(ANNA, [2, 2, 1]), (BEN, [1, 1, 3]), (CLEO, [5, 3, 2])])
        .throw(ANNA, 2, 1, [1, 1, 5])
        .reroll(ANNA, 2, 2, &[(2, 3)])
        .reroll(ANNA, 2, 3, &[(2, 1)])
        .throw(BEN, 2, 1, [5, 5, 2])
        .throw(CLEO, 2, 1, [6, 4, 1])
        .start();
    play_round(&mut m);
    assert_eq!((pot(&m), tokens(&m)), (12, vec![3, 0, 0]));
    reroll(&mut m, ANNA, &[2]);
    let events = reroll(&mut m, ANNA, &[2]);
    assert_eq!(
        events[1..4],
        [
            thrown(ANNA, 3, &[2], [Some(1), Some(1), None]),
            stopped(ANNA, 3),
            Event::ThrowLimitSet { throws: 3 },
        ]
    );
    // Nobody knows yet: BEN and CLEO take their turns.
    assert_eq!(to_act(&m), BEN);
    stop(&mut m, BEN);
    let events = stop(&mut m, CLEO);
    assert_eq!(
        revealed(&events),
        [(ANNA, [1, 1, 1]), (BEN, [5, 5, 2]), (CLEO, [6, 4, 1])]
    );
    let [freed, out] = sjok1(ANNA, 3);
    assert_eq!(
        token_events(&events),
        [freed, out, round_started(3, &[BEN, CLEO], BEN)]
    );
    let o = obs(&m, BEN);
    assert_eq!((o.pot, o.removed, &o.tokens[..]), (12, 3, &[0, 0, 0][..]));
}

#[test]
fn several_sjok1s_at_a_reveal_free_them_all_and_the_seat_after_the_first_starts() {
    // §3.4 "Every player whose hand is SJOK1 at the reveal is free." The engine decides the
    // next starter from the first SJOK1 in turn order (shake.rs: "The next seat in play
    // after `first` starts the next round"). ANNA's blind third throw is SJOK1; CLEO then
    // throws SJOK1 openly, which stops the round before DAAN throws.
    let mut m = Table::new(sjokken(), 4)
        .throw(ANNA, 1, 1, [1, 1, 5])
        .reroll(ANNA, 1, 2, &[(2, 4)])
        .reroll(ANNA, 1, 3, &[(2, 1)])
        .throw(BEN, 1, 1, [6, 4, 2])
        .throw(CLEO, 1, 1, [1, 1, 1])
        .start();
    reroll(&mut m, ANNA, &[2]);
    reroll(&mut m, ANNA, &[2]);
    let events = stop(&mut m, BEN);
    assert_eq!(
        throwers(&events),
        [CLEO, BEN],
        "CLEO, then round 2's starter"
    );
    assert_eq!(
        revealed(&events),
        [(ANNA, [1, 1, 1]), (BEN, [6, 4, 2]), (CLEO, [1, 1, 1])]
    );
    let [anna_freed, anna_out] = sjok1(ANNA, 0);
    let [cleo_freed, cleo_out] = sjok1(CLEO, 0);
    assert_eq!(
        token_events(&events),
        [
            anna_freed,
            anna_out,
            cleo_freed,
            cleo_out,
            round_started(2, &[BEN, DAAN], BEN),
        ]
    );
}

#[test]
fn sjok1s_that_would_free_every_player_left_void_the_round() {
    // §3.4 "If the SJOK1s found at one reveal would free every player still in play, nobody
    // is freed (decided here: a game must keep a loser): the round is void, no points move,
    // and the same starter starts the round again with the same players". ANNA's blind third
    // throw and BEN's open first throw are both SJOK1. The round played again takes the
    // next number (docs/rules.md A.8.3, "A void round"): round 2, not round 1 again.
    let mut m = Table::new(sjokken(), 2)
        .throw(ANNA, 1, 1, [1, 1, 5])
        .reroll(ANNA, 1, 2, &[(2, 4)])
        .reroll(ANNA, 1, 3, &[(2, 1)])
        .throw(BEN, 1, 1, [1, 1, 1])
        .start();
    reroll(&mut m, ANNA, &[2]);
    let events = reroll(&mut m, ANNA, &[2]);
    assert_eq!(revealed(&events), [(ANNA, [1, 1, 1]), (BEN, [1, 1, 1])]);
    assert_eq!(
        token_events(&events),
        [round_started(2, &[ANNA, BEN], ANNA)]
    );
    let o = obs(&m, ANNA);
    assert_eq!((o.pot, o.removed, o.in_play), (15, 0, seats(&[ANNA, BEN])));
}

// ---------------------------------------------------------------------------------------
// §1.4, §3.3 Points and the end of the game
// ---------------------------------------------------------------------------------------

#[test]
fn players_without_points_are_free_when_the_pot_empties_and_the_last_one_in_play_loses() {
    // §1.4: phase A, then "When the pot becomes empty, every player with zero tokens is
    // out", then phase B; §3.3 "the game is one long half that ends when one player is left
    // in play"; §3.5 "The game's loser is last; everybody else shares first place".
    let mut m = Table::new(sjokken(), 3)
        // 1-2: BEN takes 6 + 6 (pot 3).
        .round(1, &[(ANNA, [1, 1, 6]), (BEN, [2, 2, 1]), (CLEO, [5, 3, 2])])
        .round(2, &[(BEN, [2, 2, 1]), (CLEO, [5, 3, 2]), (ANNA, [1, 1, 6])])
        // 3: CLEO takes the last 3 from BEN's Harde; ANNA holds none and is free.
        .round(3, &[(BEN, [4, 4, 4]), (CLEO, [2, 2, 1]), (ANNA, [5, 3, 2])])
        // 4: CLEO's SJOK 2 passes 2 of her 3 points to BEN.
        .round(4, &[(CLEO, [1, 1, 2]), (BEN, [5, 3, 2])])
        // 5: CLEO's Harde passes her last point to BEN: she is free, BEN has lost.
        .round(5, &[(BEN, [2, 2, 1]), (CLEO, [3, 3, 3])])
        .start();
    play_round(&mut m);
    play_round(&mut m);
    assert_eq!((pot(&m), tokens(&m)), (3, vec![0, 12, 0]));

    assert_eq!(
        token_events(&play_round(&mut m)),
        [
            Event::RoundDecided {
                winner: BEN,
                loser: CLEO,
                value: 3
            },
            Event::TokensMoved {
                from: None,
                to: CLEO,
                count: 3
            },
            Event::SeatOut { seat: ANNA },
            round_started(4, &[BEN, CLEO], CLEO),
        ]
    );
    assert_eq!(
        token_events(&play_round(&mut m)),
        [
            Event::RoundDecided {
                winner: CLEO,
                loser: BEN,
                value: 2
            },
            Event::TokensMoved {
                from: Some(CLEO),
                to: BEN,
                count: 2
            },
            round_started(5, &[BEN, CLEO], BEN),
        ]
    );
    assert_eq!(
        token_events(&play_round(&mut m)),
        [
            Event::RoundDecided {
                winner: CLEO,
                loser: BEN,
                value: 3
            },
            Event::TokensMoved {
                from: Some(CLEO),
                to: BEN,
                count: 1
            },
            Event::SeatOut { seat: CLEO },
            match_over(&[1, 3, 1]),
        ]
    );
    let outcome = m.outcome().unwrap();
    assert_eq!(outcome.loser, Some(BEN));
    assert_eq!(outcome.tokens, [0, 15, 0]);
}

// ---------------------------------------------------------------------------------------
// §5 Blind last throws
// ---------------------------------------------------------------------------------------

#[test]
fn the_starters_third_throw_is_blind_even_to_her() {
    // §5 Sjokken: "when a player takes the round's last allowed throw and L > 1, that throw
    // stays under the cup, seen by nobody (the thrower included) until the reveal". The
    // starter's third throw is always the round's last allowed one.
    let mut m = Table::new(sjokken(), 2)
        .throw(ANNA, 1, 1, [2, 3, 5])
        .reroll(ANNA, 1, 2, &[(0, 4), (1, 4), (2, 2)])
        .reroll(ANNA, 1, 3, &[(0, 6), (1, 6), (2, 6)])
        .throw(BEN, 1, 1, [5, 3, 2])
        .start();
    let events = reroll(&mut m, ANNA, &[0, 1, 2]);
    assert_eq!(events[1], thrown(ANNA, 2, &[0, 1, 2], shown([4, 4, 2])));
    let events = reroll(&mut m, ANNA, &[0, 1, 2]);
    assert_eq!(
        events[1..4],
        [
            thrown(ANNA, 3, &[0, 1, 2], HIDDEN),
            stopped(ANNA, 3),
            Event::ThrowLimitSet { throws: 3 },
        ]
    );
    for viewer in [ANNA, BEN] {
        let view = &obs(&m, viewer).turns[ANNA.index()];
        assert_eq!((view.dice, view.hand, view.throws), (HIDDEN, None, 3));
    }
    // BEN's first throw is not his last allowed one: public.
    assert_eq!(events[4], thrown(BEN, 1, &[0, 1, 2], shown([5, 3, 2])));
    let events = stop(&mut m, BEN);
    assert_eq!(revealed(&events), [(ANNA, [6, 6, 6]), (BEN, [5, 3, 2])]);
    assert_eq!(decided(&events), Some((ANNA, BEN, 3)));
}

#[test]
fn when_the_starter_stops_after_two_the_others_second_throw_is_blind() {
    // Seed 000: "stel de eerste werper gooit sjok5 in 2 worpen en besluit het bij die twee
    // worpen te laten, dan dient iedereen ... mocht men besluiten óók 2 worpen te doen, de
    // beker na die 2e worp te laten staan". ANNA's second throw is public (she could have
    // thrown a third); BEN's second is blind; CLEO, stopping after one, throws nothing blind.
    // Dice held from an open throw stay visible.
    let mut m = Table::new(sjokken(), 3)
        .throw(ANNA, 1, 1, [1, 1, 2])
        .reroll(ANNA, 1, 2, &[(2, 5)])
        .throw(BEN, 1, 1, [4, 4, 2])
        .reroll(BEN, 1, 2, &[(2, 4)])
        .throw(CLEO, 1, 1, [6, 5, 1])
        .start();
    let events = reroll(&mut m, ANNA, &[2]);
    assert_eq!(events[1], thrown(ANNA, 2, &[2], shown([1, 1, 5])));
    stop(&mut m, ANNA);
    assert_eq!(seen(&m, BEN, BEN), shown([4, 4, 2]));

    let events = reroll(&mut m, BEN, &[2]);
    assert_eq!(
        events[1..3],
        [
            thrown(BEN, 2, &[2], [Some(4), Some(4), None]),
            stopped(BEN, 2)
        ]
    );
    for viewer in [ANNA, BEN, CLEO] {
        assert_eq!(seen(&m, viewer, BEN), [Some(4), Some(4), None]);
    }
    assert_eq!(events[3], thrown(CLEO, 1, &[0, 1, 2], shown([6, 5, 1])));
    let events = stop(&mut m, CLEO);
    assert_eq!(
        revealed(&events),
        [(ANNA, [1, 1, 5]), (BEN, [4, 4, 4]), (CLEO, [6, 5, 1])]
    );
    assert_eq!(decided(&events), Some((ANNA, CLEO, 5)));
}

#[test]
fn with_one_throw_allowed_nothing_is_blind() {
    // §5 "... and L > 1": a single allowed throw is public.
    let mut m = Table::new(sjokken(), 2)
        .round(1, &[(ANNA, [6, 5, 3]), (BEN, [4, 4, 2])])
        .start();
    let events = stop(&mut m, ANNA);
    assert_eq!(events[2], thrown(BEN, 1, &[0, 1, 2], shown([4, 4, 2])));
}

// ---------------------------------------------------------------------------------------
// Refused actions
// ---------------------------------------------------------------------------------------

#[test]
fn illegal_actions_are_refused_with_typed_errors_and_change_nothing() {
    let mut m = Table::new(sjokken(), 3)
        .throw(ANNA, 1, 1, [6, 6, 2])
        .start();
    let error = assert_refused(&mut m, CLEO, Action::reroll(dice(&[0])));
    assert!(matches!(error, ActionError::NotYourTurn { seat: CLEO, .. }));
    for betting in [
        Action::Check,
        Action::Bet,
        Action::Call,
        Action::Raise,
        Action::Fold,
    ] {
        let error = assert_refused(&mut m, ANNA, betting);
        assert!(matches!(error, ActionError::WrongKind { .. }), "{error:?}");
    }
    let error = assert_refused(&mut m, ANNA, Action::reroll(DieMask::EMPTY));
    assert_eq!(error, ActionError::EmptyReroll);
    let error = assert_refused(&mut m, ANNA, Action::Stop { turn: dice(&[2]) });
    assert!(
        matches!(error, ActionError::NotTurnable { slot: 2, .. }),
        "{error:?}"
    );
    assert_eq!(to_act(&m), ANNA);
}
