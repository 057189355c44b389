//! Zokken (RULES.md §4 and §5): figures, the Schlumpf's table rule, fixed-limit betting,
//! simultaneous reroll choices, tie replays, the split, and the built-in policies.
//!
//! Scenarios script the dice with [`DiceScript`]: `throw(seat, round, throw, [III, IV, V])`
//! sets the face values of Miwin's dice III, IV and V. A tie replay continues the throw
//! numbering of its round (replay k throws 3k+1..=3k+3).

use std::cmp::Ordering;

use knobel_engine::policy::{HeuristicPolicy, Policy, TimidPolicy};
use knobel_engine::{
    Action, ActionError, DiceScript, DieMask, Event, Hand, MIWIN_FACES, Match, Observation,
    Placings, Rules, Seat, Seats, ZokkenObservation, ZokkenPhase, ZokkenSeatStatus,
};

const ANNA: Seat = Seat(0);
const BERT: Seat = Seat(1);
const CARL: Seat = Seat(2);
const DORA: Seat = Seat(3);

// Hands, as the face values of dice III, IV, V (each value is on its die).
const KELM: [u8; 3] = [9, 3, 3];
const SCHLUMPF: [u8; 3] = [7, 5, 2];
/// The same Schlumpf, the other way round: III 2, IV 5, V 7.
const SCHLUMPF_TURNED: [u8; 3] = [2, 5, 7];
const TINN: [u8; 3] = [6, 3, 3];
const STRASSE_789: [u8; 3] = [9, 8, 7];
/// 7-8-9 again, with other dice: III 7, IV 9, V 8.
const STRASSE_789_TOO: [u8; 3] = [7, 9, 8];
const PASCH: [u8; 3] = [5, 5, 2];
const SONST_LOW: [u8; 3] = [1, 4, 2];

const KEEP_ALL: Action = Action::Reroll {
    dice: DieMask::EMPTY,
    turn: DieMask::EMPTY,
};

// ---- helpers ---------------------------------------------------------------------------

fn zokken(rounds: u32) -> Rules {
    let mut rules = Rules::preset("zokken").unwrap();
    rules.set_number("rounds", rounds).unwrap();
    rules
}

fn seats_of(list: &[Seat]) -> Seats {
    let mut seats = Seats::EMPTY;
    for &seat in list {
        seats.insert(seat);
    }
    seats
}

fn mask(slots: &[u32]) -> DieMask {
    DieMask::from_slots(slots).unwrap()
}

/// A match whose round-1 first throws are `hands[seat]`.
fn scripted(rules: Rules, hands: &[[u8; 3]]) -> Match {
    let mut script = DiceScript::new();
    for (seat, &hand) in hands.iter().enumerate() {
        script.throw(Seat(seat as u8), 1, 1, hand);
    }
    Match::scripted(rules, 1, hands.len(), script).unwrap()
}

fn act(m: &mut Match, seat: Seat, action: Action) -> Vec<Event> {
    match m.apply(seat, action) {
        Ok(events) => events.to_vec(),
        Err(error) => panic!("{seat} {action}: {error}"),
    }
}

fn view(m: &Match, seat: Seat) -> ZokkenObservation {
    match m.observe(seat) {
        Observation::Zokken(o) => o,
        other => panic!("not a zokken observation: {other:?}"),
    }
}

fn phase(m: &Match) -> ZokkenPhase {
    view(m, ANNA).phase
}

/// The one seat to act in a betting round.
fn actor(m: &Match) -> Seat {
    assert!(
        matches!(phase(m), ZokkenPhase::Betting(_)),
        "{:?}",
        phase(m)
    );
    m.to_act().single().expect("one seat acts in betting")
}

/// Everybody checks until the betting round ends. Returns the events.
fn all_check(m: &mut Match) -> Vec<Event> {
    let mut events = Vec::new();
    let ZokkenPhase::Betting(n) = phase(m) else {
        panic!("not betting: {:?}", phase(m))
    };
    while phase(m) == ZokkenPhase::Betting(n) && !m.is_over() {
        let seat = actor(m);
        events.extend(act(m, seat, Action::Check));
    }
    events
}

/// Every seat choosing keeps all its dice. Returns the events.
fn all_keep(m: &mut Match) -> Vec<Event> {
    assert!(
        matches!(phase(m), ZokkenPhase::Choosing(_)),
        "{:?}",
        phase(m)
    );
    let mut events = Vec::new();
    for seat in m.to_act().iter() {
        events.extend(act(m, seat, KEEP_ALL));
    }
    events
}

/// Checks and keeps until the round (or replay) reaches its showdown. Returns the events.
fn check_through(m: &mut Match) -> Vec<Event> {
    let mut events = Vec::new();
    let start = (view(m, ANNA).round, view(m, ANNA).replay);
    while !m.is_over() && (view(m, ANNA).round, view(m, ANNA).replay) == start {
        match phase(m) {
            ZokkenPhase::Betting(_) => events.extend(all_check(m)),
            ZokkenPhase::Choosing(_) => events.extend(all_keep(m)),
            ZokkenPhase::Over => break,
        }
    }
    events
}

fn pot_won(events: &[Event]) -> Vec<(Seat, u32)> {
    events
        .iter()
        .filter_map(|e| match *e {
            Event::PotWon { seat, chips } => Some((seat, chips)),
            _ => None,
        })
        .collect()
}

/// Everything an action could change that a player or the referee can see.
fn snapshot(m: &Match) -> (Vec<Observation>, Seats, i64, Option<usize>) {
    let observations = (0..m.seats()).map(|s| m.observe(Seat(s as u8))).collect();
    (
        observations,
        m.to_act(),
        m.conserved_total(),
        m.log().map(|l| l.entries.len()),
    )
}

/// Applies an action that must be refused, checks that nothing changed, returns the error.
fn refused(m: &mut Match, seat: Seat, action: Action) -> ActionError {
    let before = snapshot(m);
    let error = m
        .apply(seat, action)
        .expect_err("the action must be refused");
    assert_eq!(snapshot(m), before, "{seat} {action} changed the match");
    error
}

// ---- 1. figures ------------------------------------------------------------------------

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Figure {
    Sonst,
    Pasch,
    Plus,
    Strasse,
    Tinn,
    Kelm,
}

/// The figure of three dice, written from RULES.md §4.4's table (not from `Hand::zokken`).
fn classify(dice: [u8; 3]) -> Figure {
    let mut d = dice;
    d.sort_unstable_by(|a, b| b.cmp(a));
    let [a, b, c] = d;
    if d == [9, 3, 3] {
        Figure::Kelm
    } else if [[6, 3, 3], [4, 2, 2], [2, 1, 1]].contains(&d) {
        Figure::Tinn
    } else if a == b + 1 && b == c + 1 {
        Figure::Strasse
    } else if a == b + c {
        Figure::Plus
    } else if a == b || b == c {
        Figure::Pasch
    } else {
        Figure::Sonst
    }
}

/// RULES.md §4.4's order: figure, then the dice high to low; Sonst by the sum first.
fn order_key(dice: [u8; 3]) -> (Figure, u8, u8, u8, u8) {
    let mut d = dice;
    d.sort_unstable_by(|a, b| b.cmp(a));
    let figure = classify(dice);
    match figure {
        Figure::Sonst => (figure, d[0] + d[1] + d[2], d[0], d[1], d[2]),
        _ => (figure, d[0], d[1], d[2], 0),
    }
}

fn figure_of(hand: Hand) -> Figure {
    match hand {
        Hand::Kelm => Figure::Kelm,
        Hand::Tinn(_) => Figure::Tinn,
        Hand::Strasse(_) => Figure::Strasse,
        Hand::Plus(_) => Figure::Plus,
        Hand::Pasch(_) => Figure::Pasch,
        Hand::Sonst(_) => Figure::Sonst,
        other => panic!("not a zokken figure: {other:?}"),
    }
}

fn all_outcomes() -> Vec<[u8; 3]> {
    let mut out = Vec::with_capacity(216);
    for &a in &MIWIN_FACES[0] {
        for &b in &MIWIN_FACES[1] {
            for &c in &MIWIN_FACES[2] {
                out.push([a, b, c]);
            }
        }
    }
    out
}

#[test]
fn figures_over_all_216_outcomes_of_a_miwin_set() {
    let outcomes = all_outcomes();
    assert_eq!(outcomes.len(), 216);
    let mut counts = [0usize; 6];
    let mut kinds = [
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    ];
    let mut schlumpf = 0;
    let mut sums = 0; // outcomes where one die is the sum of the other two
    for &dice in &outcomes {
        let mine = classify(dice);
        let hand = Hand::zokken(dice);
        assert_eq!(figure_of(hand), mine, "{dice:?} is {hand}");
        counts[mine as usize] += 1;
        let mut sorted = dice;
        sorted.sort_unstable();
        if !kinds[mine as usize].contains(&sorted) {
            kinds[mine as usize].push(sorted);
        }
        if sorted == [2, 5, 7] {
            schlumpf += 1;
            assert!(hand.is_schlumpf());
        } else {
            assert!(!hand.is_schlumpf());
        }
        if sorted[2] == sorted[0] + sorted[1] {
            sums += 1;
        }
    }
    let [sonst, pasch, plus, strasse, tinn, kelm] = counts;
    assert_eq!(kelm, 1, "kelm: one way");
    assert_eq!(tinn, 3, "tinn: three ways");
    assert_eq!(
        kinds[Figure::Tinn as usize].len(),
        3,
        "the three tinns once each"
    );
    assert_eq!(
        kinds[Figure::Strasse as usize].len(),
        7,
        "seven kinds of strasse"
    );
    assert_eq!(strasse, 14, "the seven kinds of strasse come 14 ways");
    assert_eq!(schlumpf, 2, "schlumpf: [2,5,7] and [7,5,2]");
    // The seed's "Plus: 35 Möglichkeiten" counts every outcome where one die is the sum of
    // the other two. Five of those belong to a higher figure (the three tinns, and 1-2-3 in
    // two ways), so the figure Plus has 30 outcomes (the 2 Schlumpf ways included), of 15
    // kinds.
    assert_eq!(sums, 35, "the seed's 35");
    assert_eq!(plus, 30, "plus as a figure");
    assert_eq!(kinds[Figure::Plus as usize].len(), 15);
    // The seed's "Pasch: 54 - 4 (Kelm und 3 Tinn) = 50" holds: 54 outcomes show two equal
    // dice (no set shows three), four of them are the Kelm and the Tinns.
    let pairs = outcomes
        .iter()
        .filter(|d| d[0] == d[1] || d[1] == d[2] || d[0] == d[2])
        .count();
    assert_eq!(pairs, 54);
    assert_eq!(pasch, 50, "the seed's 50");
    assert_eq!(sonst, 118);
    assert_eq!(sonst + pasch + plus + strasse + tinn + kelm, 216);
}

#[test]
fn figures_are_ordered_as_in_the_rules_table() {
    let outcomes = all_outcomes();
    for &x in &outcomes {
        for &y in &outcomes {
            let expected = order_key(x).cmp(&order_key(y));
            let got = Hand::zokken(x).strength().cmp(&Hand::zokken(y).strength());
            assert_eq!(got, expected, "{x:?} vs {y:?}");
            // Equal strength exactly when the dice are equal (sorted).
            let (mut sx, mut sy) = (x, y);
            sx.sort_unstable();
            sy.sort_unstable();
            assert_eq!(got == Ordering::Equal, sx == sy, "{x:?} vs {y:?}");
        }
    }
    // The examples of RULES.md §4.4 and seed 002.
    let beats = |a: [u8; 3], b: [u8; 3]| Hand::zokken(a).strength() > Hand::zokken(b).strength();
    assert!(beats([9, 8, 1], [9, 5, 4]), "plus 9-8-1 beats plus 9-5-4");
    assert!(
        matches!(Hand::zokken([1, 2, 3]), Hand::Strasse(3)),
        "1-2-3 is a strasse"
    );
    assert!(
        matches!(Hand::zokken([6, 3, 3]), Hand::Tinn(_)),
        "6-3-3 is a tinn"
    );
    assert!(beats(KELM, TINN) && beats(TINN, STRASSE_789) && beats([1, 2, 3], [9, 8, 1]));
    assert!(
        beats([9, 8, 1], [9, 9, 8]) && beats([1, 1, 3], [9, 8, 6]),
        "plus > pasch > sonst"
    );
    assert!(
        beats([9, 6, 2], [8, 7, 2]),
        "sonst: equal sums (17), then the higher die"
    );
    assert!(
        beats([8, 7, 3], [9, 6, 2]),
        "sonst: the sum first (18 > 17)"
    );
}

#[test]
fn the_schlumpf_beats_a_kelm_on_the_table_and_is_a_plus_otherwise() {
    let schlumpf = Hand::zokken(SCHLUMPF);
    let kelm = Hand::zokken(KELM);
    let tinn = Hand::zokken(TINN);
    assert_eq!(schlumpf, Hand::zokken(SCHLUMPF_TURNED));
    assert_eq!(schlumpf.to_string(), "schlumpf 7-5-2");
    assert!(schlumpf.zokken_table_strength(true) > kelm.zokken_table_strength(true));
    assert!(kelm.zokken_table_strength(true) > tinn.zokken_table_strength(true));
    assert!(tinn.zokken_table_strength(false) > schlumpf.zokken_table_strength(false));
    let plus_761 = Hand::zokken([7, 1, 6]);
    let plus_743 = Hand::zokken([7, 4, 3]);
    assert!(plus_761.strength() > schlumpf.strength() && schlumpf.strength() > plus_743.strength());
}

// ---- 2. the Schlumpf at the table ------------------------------------------------------

#[test]
fn schlumpf_against_kelm_wins_and_acts_first() {
    let mut m = scripted(zokken(1), &[KELM, SCHLUMPF]);
    assert_eq!(
        actor(&m),
        BERT,
        "the schlumpf ranks first with a kelm on the table"
    );
    let events = check_through(&mut m);
    assert_eq!(pot_won(&events), [(BERT, 2)]);
    assert_eq!(m.outcome().unwrap().chips, [-1, 1]);
}

#[test]
fn schlumpf_against_tinn_without_kelm_loses() {
    let mut m = scripted(zokken(1), &[SCHLUMPF, TINN]);
    assert_eq!(actor(&m), BERT, "the tinn ranks first");
    let events = check_through(&mut m);
    assert_eq!(pot_won(&events), [(BERT, 2)]);
}

#[test]
fn schlumpf_kelm_tinn_on_one_table() {
    // Schlumpf first, Kelm second, Tinn third: the order of play and the pot show it.
    let mut m = scripted(zokken(1), &[KELM, TINN, SCHLUMPF]);
    assert_eq!(actor(&m), CARL, "schlumpf acts first");
    act(&mut m, CARL, Action::Check);
    assert_eq!(actor(&m), ANNA, "then round the table in seat order");
    act(&mut m, ANNA, Action::Bet);
    act(&mut m, BERT, Action::Call);
    act(&mut m, CARL, Action::Fold);
    all_keep(&mut m);
    assert_eq!(actor(&m), ANNA, "without the schlumpf, the kelm acts first");
    let events = check_through(&mut m);
    assert_eq!(
        pot_won(&events),
        [(ANNA, 3 + 2 + 2)],
        "the kelm beats the tinn"
    );

    // Everybody stays: the schlumpf takes it.
    let mut m = scripted(zokken(1), &[KELM, TINN, SCHLUMPF]);
    let events = check_through(&mut m);
    assert_eq!(pot_won(&events), [(CARL, 3)]);
}

#[test]
fn a_folded_kelm_does_not_lift_the_schlumpf() {
    // Only hands still in the round count: once the Kelm folds, the Schlumpf is a Plus.
    let mut m = scripted(zokken(1), &[TINN, KELM, SCHLUMPF]);
    assert_eq!(actor(&m), CARL);
    act(&mut m, CARL, Action::Bet);
    act(&mut m, ANNA, Action::Call);
    act(&mut m, BERT, Action::Fold);
    all_keep(&mut m);
    assert_eq!(actor(&m), ANNA, "the tinn now ranks first");
    let events = check_through(&mut m);
    assert_eq!(pot_won(&events), [(ANNA, 3 + 2 + 2)]);
}

#[test]
fn a_schlumpf_without_kelm_ranks_as_a_plus_above_a_pasch() {
    let mut m = scripted(zokken(1), &[PASCH, SCHLUMPF, SONST_LOW]);
    assert_eq!(actor(&m), BERT);
    let events = check_through(&mut m);
    assert_eq!(pot_won(&events), [(BERT, 3)]);
}

#[test]
fn equal_best_figures_let_the_lowest_seat_act_first() {
    let mut m = scripted(zokken(1), &[SONST_LOW, STRASSE_789, PASCH, STRASSE_789_TOO]);
    assert_eq!(actor(&m), BERT);
    act(&mut m, BERT, Action::Check);
    assert_eq!(actor(&m), CARL);
    act(&mut m, CARL, Action::Check);
    assert_eq!(actor(&m), DORA);
    act(&mut m, DORA, Action::Check);
    assert_eq!(actor(&m), ANNA, "round the table from the first player");
}

// ---- 3. the rules, one scenario each ---------------------------------------------------

#[test]
fn fold_to_one_wins_the_pot_at_once_without_further_throws() {
    let mut m = scripted(zokken(1), &[TINN, SONST_LOW, PASCH]);
    assert_eq!(view(&m, ANNA).pot, 3, "three antes");
    assert_eq!(
        act(&mut m, ANNA, Action::Bet),
        [Event::Betting {
            seat: ANNA,
            action: Action::Bet,
            chips: 2
        }]
    );
    act(&mut m, BERT, Action::Fold);
    let events = act(&mut m, CARL, Action::Fold);
    assert_eq!(
        events,
        [
            Event::Betting {
                seat: CARL,
                action: Action::Fold,
                chips: 0
            },
            Event::PotWon {
                seat: ANNA,
                chips: 5
            },
            Event::MatchOver {
                placings: Placings::from_slice(&[1, 2, 2])
            },
        ]
    );
    assert!(m.is_over());
    assert_eq!(m.true_dice(ANNA), (TINN, 1), "no throw after the fold");
    let outcome = m.outcome().unwrap();
    assert_eq!(outcome.chips, [2, -1, -1]);
    assert_eq!(outcome.placings, [1, 2, 2]);
    assert_eq!(outcome.loser, None);
    assert_eq!(outcome.tokens, [0, 0, 0]);
    assert_eq!(outcome.halves_lost, [0, 0, 0]);
}

#[test]
fn a_fold_in_a_later_round_starts_the_next_round() {
    let mut m = scripted(zokken(2), &[TINN, SONST_LOW]);
    act(&mut m, ANNA, Action::Bet);
    let events = act(&mut m, BERT, Action::Fold);
    assert_eq!(pot_won(&events), [(ANNA, 4)]);
    assert!(events.contains(&Event::RoundStarted {
        round: 2,
        replay: 0,
        seats: seats_of(&[ANNA, BERT]),
        starter: None
    }));
    let throws: Vec<u8> = events
        .iter()
        .filter_map(|e| match e {
            Event::Thrown { throw, .. } => Some(*throw),
            _ => None,
        })
        .collect();
    assert_eq!(throws, [1, 1], "only round 2's first throw");
    assert_eq!(view(&m, BERT).round, 2);
    assert_eq!(
        view(&m, BERT).seats[1].net,
        -1 - 1,
        "lost round 1's ante, paid round 2's"
    );
}

#[test]
fn the_fifth_bet_of_a_betting_round_is_refused() {
    let mut m = scripted(zokken(1), &[TINN, PASCH]);
    act(&mut m, ANNA, Action::Bet);
    act(&mut m, BERT, Action::Raise);
    act(&mut m, ANNA, Action::Raise);
    act(&mut m, BERT, Action::Raise);
    let o = view(&m, ANNA);
    assert_eq!((o.bets, o.max_bets, o.current_bet, o.to_call), (4, 4, 8, 2));
    assert_eq!(m.legal_actions(ANNA), [Action::Call, Action::Fold]);
    let error = refused(&mut m, ANNA, Action::Raise);
    assert_eq!(
        error.to_string(),
        "cannot raise: this betting round has reached its cap of 4 bets (a bet and 3 raises); \
         legal actions are call, fold"
    );
    assert!(matches!(
        error,
        ActionError::Betting {
            action: "raise",
            ..
        }
    ));
    assert_eq!(
        act(&mut m, ANNA, Action::Call),
        [Event::Betting {
            seat: ANNA,
            action: Action::Call,
            chips: 2
        }]
    );
    assert_eq!(phase(&m), ZokkenPhase::Choosing(2));
    assert_eq!(view(&m, ANNA).pot, 2 + 8 + 8);
    assert_eq!(m.conserved_total(), 0);
}

#[test]
fn the_cap_follows_the_rules() {
    let mut rules = zokken(1);
    rules.set_number("max_bets", 2).unwrap();
    let mut m = scripted(rules, &[TINN, PASCH]);
    act(&mut m, ANNA, Action::Bet);
    act(&mut m, BERT, Action::Raise);
    let error = refused(&mut m, ANNA, Action::Raise);
    assert!(error.to_string().contains("cap of 2 bets"), "{error}");
}

#[test]
fn fold_only_when_facing_a_bet() {
    let mut m = scripted(zokken(1), &[TINN, PASCH]);
    assert_eq!(m.legal_actions(ANNA), [Action::Check, Action::Bet]);
    let error = refused(&mut m, ANNA, Action::Fold);
    assert_eq!(
        error.to_string(),
        "cannot fold: fold is allowed only when facing a bet; legal actions are check, bet"
    );
    act(&mut m, ANNA, Action::Bet);
    assert_eq!(
        m.legal_actions(BERT),
        [Action::Call, Action::Raise, Action::Fold]
    );
    act(&mut m, BERT, Action::Fold);
}

#[test]
fn check_only_with_no_bet() {
    let mut m = scripted(zokken(1), &[TINN, PASCH]);
    let error = refused(&mut m, ANNA, Action::Call);
    assert_eq!(
        error.to_string(),
        "cannot call: there is no bet to call; legal actions are check, bet"
    );
    refused(&mut m, ANNA, Action::Raise);
    act(&mut m, ANNA, Action::Bet);
    let error = refused(&mut m, BERT, Action::Check);
    assert_eq!(
        error.to_string(),
        "cannot check: there is a bet to call; legal actions are call, raise, fold"
    );
    let error = refused(&mut m, BERT, Action::Bet);
    assert!(
        matches!(error, ActionError::Betting { action: "bet", .. }),
        "{error}"
    );
    act(&mut m, BERT, Action::Call);
    assert_eq!(phase(&m), ZokkenPhase::Choosing(2));
}

#[test]
fn a_bet_goes_round_the_table_until_everybody_has_called_or_folded() {
    let mut m = scripted(zokken(1), &[PASCH, TINN, SONST_LOW, STRASSE_789]);
    assert_eq!(actor(&m), BERT);
    act(&mut m, BERT, Action::Check);
    act(&mut m, CARL, Action::Check);
    act(&mut m, DORA, Action::Bet);
    act(&mut m, ANNA, Action::Call);
    act(&mut m, BERT, Action::Raise);
    act(&mut m, CARL, Action::Fold);
    assert_eq!(actor(&m), DORA, "the bettor must answer the raise");
    assert_eq!(view(&m, DORA).to_call, 2);
    act(&mut m, DORA, Action::Call);
    assert_eq!(actor(&m), ANNA);
    act(&mut m, ANNA, Action::Call);
    assert_eq!(phase(&m), ZokkenPhase::Choosing(2));
    let o = view(&m, CARL);
    assert_eq!(
        o.to_act,
        seats_of(&[ANNA, BERT, DORA]),
        "the folded seat does not choose"
    );
    assert_eq!(o.seats[2].status, ZokkenSeatStatus::Folded);
    assert_eq!(o.pot, 4 + 3 * 4);
    let put: Vec<u32> = o.seats.iter().map(|s| s.put_in).collect();
    assert_eq!(put, [5, 5, 1, 5]);
    // Betting round 2 uses the big bet.
    all_keep(&mut m);
    assert_eq!(phase(&m), ZokkenPhase::Betting(2));
    let first = actor(&m);
    act(&mut m, first, Action::Bet);
    assert_eq!(view(&m, ANNA).current_bet, 4);
    assert_eq!(view(&m, ANNA).bet_size, 4);
    let error = refused(&mut m, CARL, Action::Call);
    assert_eq!(error, ActionError::Folded { seat: CARL });
}

#[test]
fn reroll_choices_are_simultaneous_and_secret_until_all_are_in() {
    let rules = zokken(1);
    let mut script = DiceScript::new();
    script
        .throw(ANNA, 1, 1, PASCH)
        .throw(BERT, 1, 1, SONST_LOW)
        .throw(CARL, 1, 1, TINN)
        .throw(ANNA, 1, 2, [9, 9, 8])
        .throw(BERT, 1, 2, [2, 8, 6]);
    let mut m = Match::scripted(rules, 3, 3, script).unwrap();
    all_check(&mut m);
    assert_eq!(phase(&m), ZokkenPhase::Choosing(2));
    let everybody = seats_of(&[ANNA, BERT, CARL]);
    assert_eq!(m.to_act(), everybody);

    let bert_before = view(&m, BERT);
    let carl_before = view(&m, CARL);
    assert!(!bert_before.chosen);
    assert_eq!(bert_before.to_act, everybody);

    let events = act(&mut m, ANNA, Action::reroll(mask(&[0, 1])));
    assert!(
        events.is_empty(),
        "nothing is shown before all have chosen: {events:?}"
    );
    assert_eq!(
        view(&m, BERT),
        bert_before,
        "bert learns nothing of anna's choice"
    );
    assert_eq!(view(&m, CARL), carl_before);
    let anna = view(&m, ANNA);
    assert!(anna.chosen);
    assert_eq!(
        anna.to_act, everybody,
        "observations do not show who has chosen"
    );
    assert_eq!(
        m.to_act(),
        seats_of(&[BERT, CARL]),
        "the referee waits for the others"
    );
    assert_eq!(m.default_action(ANNA), None);
    assert!(m.legal_actions(ANNA).is_empty());
    assert_eq!(
        refused(&mut m, ANNA, KEEP_ALL),
        ActionError::AlreadyChosen { seat: ANNA }
    );

    let events = act(&mut m, CARL, KEEP_ALL);
    assert!(events.is_empty());
    assert_eq!(view(&m, BERT), bert_before);

    let events = act(&mut m, BERT, Action::reroll(mask(&[1, 2])));
    assert_eq!(
        events,
        [
            Event::RerollChosen {
                seat: ANNA,
                dice: mask(&[0, 1])
            },
            Event::RerollChosen {
                seat: BERT,
                dice: mask(&[1, 2])
            },
            Event::RerollChosen {
                seat: CARL,
                dice: DieMask::EMPTY
            },
            Event::Thrown {
                seat: ANNA,
                throw: 2,
                rolled: mask(&[0, 1]),
                dice: [Some(9), Some(9), Some(2)]
            },
            Event::Thrown {
                seat: BERT,
                throw: 2,
                rolled: mask(&[1, 2]),
                dice: [Some(1), Some(8), Some(6)]
            },
            Event::Thrown {
                seat: CARL,
                throw: 2,
                rolled: DieMask::EMPTY,
                dice: [Some(6), Some(3), Some(3)]
            },
        ]
    );
    assert_eq!(phase(&m), ZokkenPhase::Betting(2));
    assert_eq!(m.true_dice(BERT), ([1, 8, 6], 2));
    let o = view(&m, CARL);
    assert_eq!(o.seats[0].figure, Hand::Pasch([9, 9, 2]));
    assert!(!o.chosen);
}

#[test]
fn a_reroll_names_at_most_two_dice_and_may_name_none() {
    let mut m = scripted(zokken(1), &[TINN, PASCH]);
    all_check(&mut m);
    assert_eq!(
        m.legal_actions(ANNA).len(),
        7,
        "none, three single dice, three pairs"
    );
    let error = refused(&mut m, ANNA, Action::reroll(DieMask::ALL));
    assert_eq!(error, ActionError::TooManyRerolled { count: 3, max: 2 });
    assert_eq!(
        error.to_string(),
        "cannot reroll 3 dice: at most 2 may be rerolled, at least one die stays"
    );
    let error = refused(
        &mut m,
        ANNA,
        Action::Reroll {
            dice: mask(&[0]),
            turn: mask(&[1]),
        },
    );
    assert!(
        matches!(error, ActionError::NotTurnable { slot: 1, .. }),
        "{error}"
    );
    let error = refused(&mut m, ANNA, Action::STOP);
    assert_eq!(
        error,
        ActionError::WrongKind {
            action: "stop",
            legal: "reroll of 0 to 2 dice"
        }
    );
    let error = refused(&mut m, ANNA, Action::Check);
    assert!(matches!(
        error,
        ActionError::WrongKind {
            action: "check",
            ..
        }
    ));
    act(&mut m, ANNA, KEEP_ALL);
    act(&mut m, BERT, Action::reroll(mask(&[2])));
    assert_eq!(m.true_dice(ANNA), (TINN, 2), "kept every die");
    // Betting refuses dice decisions.
    let seat = actor(&m);
    let error = refused(&mut m, seat, Action::reroll(DieMask::EMPTY));
    assert_eq!(
        error,
        ActionError::WrongKind {
            action: "reroll",
            legal: "check, bet"
        }
    );
}

#[test]
fn a_seat_acting_out_of_turn_is_told_who_is_awaited() {
    let mut m = scripted(zokken(1), &[TINN, PASCH, SONST_LOW]);
    let error = refused(&mut m, BERT, Action::Check);
    assert_eq!(
        error.to_string(),
        "seat 1 cannot act now: waiting for seat 0"
    );
    let error = refused(&mut m, Seat(7), Action::Check);
    assert!(matches!(error, ActionError::NoSuchSeat { .. }));
}

#[test]
fn a_tie_replay_has_no_ante_carries_the_pot_and_is_not_a_round() {
    let mut script = DiceScript::new();
    script
        .throw(ANNA, 1, 1, STRASSE_789)
        .throw(BERT, 1, 1, STRASSE_789_TOO)
        .throw(CARL, 1, 1, SONST_LOW)
        // Replay 1 throws 4..=6.
        .throw(ANNA, 1, 4, SONST_LOW)
        .throw(BERT, 1, 4, KELM);
    let mut m = Match::scripted(zokken(1), 5, 3, script).unwrap();
    act(&mut m, ANNA, Action::Bet);
    act(&mut m, BERT, Action::Call);
    act(&mut m, CARL, Action::Call);
    all_keep(&mut m);
    all_check(&mut m);
    let events = all_keep(&mut m);
    assert!(!m.is_over(), "a tie does not end round 1 of 1");
    assert!(pot_won(&events).is_empty());
    let tied = seats_of(&[ANNA, BERT]);
    let replay_start = events
        .iter()
        .position(|e| {
            *e == Event::TieReplay {
                seats: tied,
                replay: 1,
            }
        })
        .expect("a tie replay");
    let after = &events[replay_start..];
    assert_eq!(
        after[1],
        Event::RoundStarted {
            round: 1,
            replay: 1,
            seats: tied,
            starter: None
        }
    );
    assert!(
        !after.iter().any(|e| matches!(e, Event::Ante { .. })),
        "no ante in a replay"
    );
    let throws: Vec<(Seat, u8)> = after
        .iter()
        .filter_map(|e| match e {
            Event::Thrown { seat, throw, .. } => Some((*seat, *throw)),
            _ => None,
        })
        .collect();
    assert_eq!(
        throws,
        [(ANNA, 4), (BERT, 4)],
        "only the tied seats throw, numbering goes on"
    );

    let o = view(&m, CARL);
    assert_eq!(
        (o.round, o.replay, o.phase),
        (1, 1, ZokkenPhase::Betting(1))
    );
    assert_eq!(o.pot, 3 + 3 * 2, "the pot carries over");
    assert_eq!(o.seats[2].status, ZokkenSeatStatus::SittingOut);
    assert_eq!(o.seats[0].status, ZokkenSeatStatus::InRound);
    assert_eq!(o.seats[0].put_in, 3);
    assert_eq!(actor(&m), BERT, "the kelm acts first");
    let error = refused(&mut m, CARL, Action::Check);
    assert!(matches!(error, ActionError::NotYourTurn { seat: CARL, .. }));

    // Betting as usual, then BERT's Kelm wins everything.
    act(&mut m, BERT, Action::Bet);
    act(&mut m, ANNA, Action::Call);
    assert_eq!(phase(&m), ZokkenPhase::Choosing(2));
    assert_eq!(m.to_act(), tied);
    let error = refused(&mut m, CARL, KEEP_ALL);
    assert_eq!(
        error.to_string(),
        "seat 2 cannot act now: waiting for seats 0, 1"
    );
    let events = check_through(&mut m);
    assert_eq!(pot_won(&events), [(BERT, 9 + 4)]);
    assert!(
        m.is_over(),
        "round 1 of 1 is over once its replay is decided"
    );
    assert_eq!(m.outcome().unwrap().chips, [-5, 8, -3]);
    assert_eq!(m.outcome().unwrap().placings, [3, 1, 2]);
}

#[test]
fn after_the_fifth_replay_ties_the_pot_is_split_left_over_to_the_lowest_seats() {
    let mut rules = zokken(1);
    rules.set_number("ante", 5).unwrap();
    let mut script = DiceScript::new();
    script
        .throw(ANNA, 1, 1, SCHLUMPF)
        .throw(BERT, 1, 1, SCHLUMPF_TURNED)
        .throw(CARL, 1, 1, SCHLUMPF)
        .throw(DORA, 1, 1, SONST_LOW);
    for replay in 1..=5u8 {
        for (seat, hand) in [(ANNA, SCHLUMPF_TURNED), (BERT, SCHLUMPF), (CARL, SCHLUMPF)] {
            script.throw(seat, 1, 3 * replay + 1, hand);
        }
    }
    let mut m = Match::scripted(rules, 9, 4, script).unwrap();
    let mut events = Vec::new();
    while !m.is_over() {
        events.extend(check_through(&mut m));
    }
    let replays: Vec<u8> = events
        .iter()
        .filter_map(|e| match e {
            Event::TieReplay { replay, seats } => {
                assert_eq!(*seats, seats_of(&[ANNA, BERT, CARL]));
                Some(*replay)
            }
            _ => None,
        })
        .collect();
    assert_eq!(replays, [1, 2, 3, 4, 5]);
    // 20 chips among three: 6 each, the 2 left over to ANNA and BERT.
    assert_eq!(pot_won(&events), [(ANNA, 7), (BERT, 7), (CARL, 6)]);
    let outcome = m.outcome().unwrap();
    assert_eq!(outcome.chips, [2, 2, 1, -5]);
    assert_eq!(outcome.placings, [1, 1, 3, 4]);
    assert_eq!(outcome.chips.iter().sum::<i64>(), 0);
}

#[test]
fn max_replays_zero_splits_at_the_first_tie() {
    let mut rules = zokken(1);
    rules.set_number("max_replays", 0).unwrap();
    let mut m = scripted(rules, &[STRASSE_789, STRASSE_789_TOO, SONST_LOW]);
    let events = check_through(&mut m);
    assert!(!events.iter().any(|e| matches!(e, Event::TieReplay { .. })));
    assert_eq!(pot_won(&events), [(ANNA, 2), (BERT, 1)]);
}

#[test]
fn bet_after_last_throw_adds_a_third_betting_round() {
    // Default: throw 3 goes straight to the showdown.
    let mut m = scripted(zokken(1), &[TINN, PASCH]);
    all_check(&mut m);
    all_keep(&mut m);
    all_check(&mut m);
    let events = all_keep(&mut m);
    assert!(matches!(events.last(), Some(Event::MatchOver { .. })));
    assert_eq!(pot_won(&events), [(ANNA, 2)]);
    assert!(events.contains(&Event::Revealed {
        seat: BERT,
        dice: PASCH,
        hand: Hand::Pasch([5, 5, 2])
    }));

    let mut rules = zokken(1);
    rules.set_variant("bet_after_last_throw", true).unwrap();
    let mut m = scripted(rules, &[TINN, PASCH]);
    all_check(&mut m);
    all_keep(&mut m);
    all_check(&mut m);
    let events = all_keep(&mut m);
    assert!(pot_won(&events).is_empty());
    assert_eq!(phase(&m), ZokkenPhase::Betting(3));
    assert_eq!(view(&m, BERT).bet_size, 4, "the big bet");
    act(&mut m, ANNA, Action::Bet);
    let events = act(&mut m, BERT, Action::Call);
    assert_eq!(pot_won(&events), [(ANNA, 2 + 8)]);
    assert_eq!(m.outcome().unwrap().chips, [5, -5]);
}

#[test]
fn antes_and_round_starts_are_announced() {
    let m = scripted(zokken(3), &[TINN, PASCH, SONST_LOW]);
    let events = m.last_events();
    assert_eq!(
        events[0],
        Event::RoundStarted {
            round: 1,
            replay: 0,
            seats: seats_of(&[ANNA, BERT, CARL]),
            starter: None
        }
    );
    assert_eq!(
        events[1],
        Event::Ante {
            seat: ANNA,
            chips: 1
        }
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Thrown { .. }))
            .count(),
        3
    );
    let o = view(&m, BERT);
    assert_eq!((o.round, o.rounds, o.replay), (1, 3, 0));
    assert_eq!(o.phase, ZokkenPhase::Betting(1));
    assert_eq!(o.seats[0].dice, TINN);
    assert_eq!(o.seats[0].figure, Hand::Tinn([6, 3, 3]));
    assert_eq!(o.seats[1].net, -1);
    assert_eq!(
        (o.pot, o.bet_size, o.bets, o.max_bets, o.to_call),
        (3, 2, 0, 4, 0)
    );
    assert_eq!(o.to_act, seats_of(&[ANNA]));
}

#[test]
fn a_match_plays_its_rounds_and_ranks_by_net_chips() {
    let mut m = Match::new(zokken(5), 77, 3).unwrap();
    let mut rounds = 0;
    let mut all = m.last_events().to_vec();
    while !m.is_over() {
        all.extend(check_through(&mut m));
    }
    for e in &all {
        if let Event::RoundStarted {
            replay: 0, round, ..
        } = e
        {
            rounds += 1;
            assert_eq!(*round, rounds);
        }
    }
    assert_eq!(rounds, 5);
    let outcome = m.outcome().unwrap();
    assert_eq!(outcome.chips.iter().sum::<i64>(), 0);
    let Some(Event::MatchOver { placings }) = all.last() else {
        panic!("no match over")
    };
    assert_eq!(placings.as_slice(), outcome.placings.as_slice());
    for (i, &mine) in outcome.chips.iter().enumerate() {
        let better = outcome.chips.iter().filter(|&&c| c > mine).count() as u8;
        assert_eq!(outcome.placings[i], better + 1);
    }
    assert_eq!(view(&m, ANNA).phase, ZokkenPhase::Over);
    assert_eq!(
        m.apply(ANNA, Action::Check).unwrap_err(),
        ActionError::MatchOver
    );
}

// ---- 4. default actions ----------------------------------------------------------------

#[test]
fn default_actions() {
    let mut m = scripted(zokken(1), &[TINN, PASCH, SONST_LOW]);
    assert_eq!(m.default_action(ANNA), Some(Action::Check));
    assert_eq!(m.default_action(BERT), None, "not bert's turn");
    act(&mut m, ANNA, Action::Bet);
    assert_eq!(m.default_action(BERT), Some(Action::Fold));
    act(&mut m, BERT, Action::Fold);
    act(&mut m, CARL, Action::Call);
    assert_eq!(m.default_action(BERT), None, "folded");
    assert_eq!(m.default_action(ANNA), Some(KEEP_ALL));
    assert_eq!(m.default_action(CARL), Some(KEEP_ALL));
    while !m.is_over() {
        for seat in m.to_act().iter() {
            let action = m.default_action(seat).unwrap();
            act(&mut m, seat, action);
        }
    }
    assert_eq!(m.default_action(ANNA), None);
}

// ---- properties over whole matches -----------------------------------------------------

/// A small deterministic generator for the property tests.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn every_action() -> Vec<Action> {
    let mut actions = vec![
        Action::Check,
        Action::Bet,
        Action::Call,
        Action::Raise,
        Action::Fold,
        Action::STOP,
        Action::Stop { turn: mask(&[0]) },
        Action::Reroll {
            dice: mask(&[0]),
            turn: mask(&[1]),
        },
    ];
    actions.extend(DieMask::ALL.subsets().map(Action::reroll));
    actions
}

#[test]
fn exactly_the_legal_actions_are_accepted_and_refusals_change_nothing() {
    let actions = every_action();
    for seed in 0..8u64 {
        let seats = 2 + (seed % 4) as usize;
        let mut rules = zokken(2);
        if seed % 2 == 1 {
            rules.set_variant("bet_after_last_throw", true).unwrap();
        }
        let mut m = Match::new_with_log(rules, seed, seats).unwrap();
        let mut rng = Rng(seed * 7919 + 1);
        let mut steps = 0;
        while !m.is_over() {
            let before = snapshot(&m);
            for s in 0..=seats {
                let seat = Seat(s as u8);
                let legal = m.legal_actions(seat);
                assert_eq!(legal.is_empty(), !m.to_act().contains(seat));
                assert_eq!(m.default_action(seat).is_some(), m.to_act().contains(seat));
                if let Some(default) = m.default_action(seat) {
                    assert!(legal.contains(&default));
                }
                for &action in &actions {
                    let mut probe = m.clone();
                    let accepted = probe.apply(seat, action).is_ok();
                    assert_eq!(accepted, legal.contains(&action), "{seat} {action}");
                    if !accepted {
                        assert_eq!(snapshot(&probe), before, "{seat} {action}");
                    }
                }
            }
            let choosing = matches!(phase(&m), ZokkenPhase::Choosing(_));
            let seat = m.to_act().iter().nth(rng.below(m.to_act().len())).unwrap();
            let legal = m.legal_actions(seat);
            let action = legal[rng.below(legal.len())];
            let others: Vec<Observation> = (0..seats)
                .filter(|&s| s != seat.index())
                .map(|s| m.observe(Seat(s as u8)))
                .collect();
            let last_chooser = m.to_act().len() == 1;
            let events = act(&mut m, seat, action);
            if choosing && !last_chooser {
                assert!(events.is_empty(), "{events:?}");
                let now: Vec<Observation> = (0..seats)
                    .filter(|&s| s != seat.index())
                    .map(|s| m.observe(Seat(s as u8)))
                    .collect();
                assert_eq!(now, others, "a choice must stay secret");
            }
            assert_eq!(m.conserved_total(), 0);
            steps += 1;
        }
        assert!(steps > 0);
        assert_eq!(m.outcome().unwrap().chips.iter().sum::<i64>(), 0);
        m.log().unwrap().replay().expect("the log replays");
    }
}

/// Plays a match with one policy per seat; every decision must be legal.
fn play(m: &mut Match, players: &mut [Box<dyn Policy>]) {
    let mut observation = m.observe(ANNA);
    while !m.is_over() {
        for seat in m.to_act().iter() {
            m.observe_into(seat, &mut observation);
            let action = players[seat.index()].decide(&observation, &[]);
            if let Err(error) = m.apply(seat, action) {
                panic!(
                    "{} chose {action} for {seat}: {error}",
                    players[seat.index()].name()
                );
            }
            assert_eq!(m.conserved_total(), 0);
        }
    }
}

#[test]
fn the_builtin_policies_only_choose_legal_actions() {
    for seed in 0..40u64 {
        let seats = 2 + (seed % 5) as usize;
        let mut rules = zokken(10);
        if seed % 3 == 0 {
            rules.set_variant("bet_after_last_throw", true).unwrap();
        }
        let mut m = Match::new(rules, seed, seats).unwrap();
        let mut players: Vec<Box<dyn Policy>> = (0..seats)
            .map(|i| {
                if (i + seed as usize).is_multiple_of(2) {
                    Box::new(HeuristicPolicy) as Box<dyn Policy>
                } else {
                    Box::new(TimidPolicy)
                }
            })
            .collect();
        play(&mut m, &mut players);
        assert_eq!(m.outcome().unwrap().chips.iter().sum::<i64>(), 0);
    }
}

#[test]
fn the_timid_policy_checks_calls_and_keeps_everything() {
    let mut m = scripted(zokken(1), &[TINN, PASCH]);
    let mut timid = TimidPolicy;
    let o = m.observe(ANNA);
    assert_eq!(timid.decide(&o, &[]), Action::Check);
    act(&mut m, ANNA, Action::Bet);
    assert_eq!(timid.decide(&m.observe(BERT), &[]), Action::Call);
    act(&mut m, BERT, Action::Call);
    assert_eq!(timid.decide(&m.observe(BERT), &[]), KEEP_ALL);
}

#[test]
fn the_heuristic_keeps_a_kelm_and_bets_on_it() {
    let mut m = scripted(zokken(1), &[SONST_LOW, KELM]);
    let mut heuristic = HeuristicPolicy;
    assert_eq!(heuristic.decide(&m.observe(BERT), &[]), Action::Bet);
    act(&mut m, BERT, Action::Bet);
    act(&mut m, ANNA, Action::Call);
    assert_eq!(heuristic.decide(&m.observe(BERT), &[]), KEEP_ALL);
    let Action::Reroll { dice, .. } = heuristic.decide(&m.observe(ANNA), &[]) else {
        panic!("a reroll")
    };
    assert!(!dice.is_empty(), "a weak sonst rerolls something");
}

#[test]
fn the_heuristic_beats_the_timid_policy_over_many_rounds() {
    // Duplicate pairs: the same seeds with the seats swapped.
    let mut heuristic_chips = 0;
    for seed in 0..6u64 {
        for heuristic_seat in 0..2 {
            let mut m = Match::new(zokken(100), seed, 2).unwrap();
            let mut players: Vec<Box<dyn Policy>> =
                vec![Box::new(TimidPolicy), Box::new(TimidPolicy)];
            players[heuristic_seat] = Box::new(HeuristicPolicy);
            play(&mut m, &mut players);
            heuristic_chips += m.outcome().unwrap().chips[heuristic_seat];
        }
    }
    assert!(heuristic_chips > 0, "heuristic net {heuristic_chips}");
}

#[test]
fn observe_into_matches_observe() {
    let mut m = Match::new(zokken(3), 4, 4).unwrap();
    let mut reused = m.observe(ANNA);
    let mut players: Vec<Box<dyn Policy>> = (0..4)
        .map(|_| Box::new(HeuristicPolicy) as Box<dyn Policy>)
        .collect();
    while !m.is_over() {
        for s in 0..4u8 {
            m.observe_into(Seat(s), &mut reused);
            assert_eq!(reused, m.observe(Seat(s)));
        }
        let seat = m.to_act().iter().next().unwrap();
        let action = players[seat.index()].decide(&m.observe(seat), &[]);
        act(&mut m, seat, action);
    }
}

#[test]
fn the_same_seed_and_decisions_give_the_same_match() {
    let run = |seed| {
        let mut m = Match::new_with_log(zokken(5), seed, 3).unwrap();
        let mut players: Vec<Box<dyn Policy>> = (0..3)
            .map(|_| Box::new(HeuristicPolicy) as Box<dyn Policy>)
            .collect();
        play(&mut m, &mut players);
        m.log().unwrap().clone()
    };
    let log = run(12);
    assert_eq!(log, run(12));
    assert_ne!(log.entries, run(13).entries);
    let replayed = log.replay().unwrap();
    assert!(replayed.is_over());
    // Dice are drawn from Miwin's faces.
    for entry in &log.entries {
        if let knobel_engine::LogEntry::Throw { dice, .. } = entry {
            for (slot, die) in dice.iter().enumerate() {
                assert!(MIWIN_FACES[slot].contains(die));
            }
        }
    }
}
