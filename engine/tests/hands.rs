//! Schocken and Sjokken hands over all 216 ordered outcomes of three dice, against a
//! reference classification written here from RULES.md §2.2 and §3.2, with each category's
//! count derived by counting arrangements (not read back from the engine).

use knobel_engine::Hand;

/// Every ordered outcome of three six-sided dice.
fn outcomes() -> impl Iterator<Item = [u8; 3]> {
    (1..=6u8).flat_map(|a| (1..=6u8).flat_map(move |b| (1..=6u8).map(move |c| [a, b, c])))
}

/// Ordered arrangements of a multiset of three dice: 1, 3 or 6.
fn arrangements(values: [u8; 3]) -> usize {
    let [a, b, c] = values;
    if a == b && b == c {
        1
    } else if a == b || b == c || a == c {
        3
    } else {
        6
    }
}

/// The reference: (category rank from the table, 1 = best; tie-break value, higher better;
/// tokens the hand is worth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reference {
    category: u8,
    detail: u32,
    value: u8,
}

fn reference_schocken(dice: [u8; 3], jule: bool, straight_counts: bool) -> Reference {
    let mut d = dice;
    d.sort_unstable_by(|x, y| y.cmp(x));
    let ones = dice.iter().filter(|&&x| x == 1).count();
    let r = |category, detail, value| Reference {
        category,
        detail,
        value,
    };
    if ones == 3 {
        r(1, 0, 13)
    } else if jule && d == [4, 2, 1] {
        r(2, 0, 7)
    } else if ones == 2 {
        r(3, d[0] as u32, d[0])
    } else if d[0] == d[2] {
        r(4, d[0] as u32, 3)
    } else if straight_counts && [[6, 5, 4], [5, 4, 3], [4, 3, 2], [3, 2, 1]].contains(&d) {
        r(5, d[0] as u32, 2)
    } else {
        r(6, d[0] as u32 * 100 + d[1] as u32 * 10 + d[2] as u32, 1)
    }
}

fn reference_sjokken(dice: [u8; 3]) -> Reference {
    let mut d = dice;
    d.sort_unstable_by(|x, y| y.cmp(x));
    let ones = dice.iter().filter(|&&x| x == 1).count();
    let r = |category, detail, value| Reference {
        category,
        detail,
        value,
    };
    if ones == 3 {
        r(1, 0, 0)
    } else if ones == 2 {
        r(2, d[0] as u32, d[0])
    } else if d[0] == d[2] {
        r(3, d[0] as u32, 3)
    } else if d[0] == d[1] + 1 && d[1] == d[2] + 1 {
        r(4, d[0] as u32, 2)
    } else {
        r(5, (d[0] + d[1] + d[2]) as u32, 1)
    }
}

fn category_of(hand: Hand) -> u8 {
    match hand {
        Hand::SchockOut | Hand::Sjok1 => 1,
        Hand::Jule => 2,
        Hand::Schock(_) => 3,
        Hand::General(_) => 4,
        Hand::Straight(_) => 5,
        Hand::Number(_) => 6,
        Hand::Sjok(_) => 2,
        Hand::Harde(_) => 3,
        Hand::Straat(_) => 4,
        Hand::Hoog(_) => 5,
        other => panic!("not a Schocken or Sjokken hand: {other:?}"),
    }
}

/// Checks the engine against the reference on every outcome and every pair of outcomes,
/// and returns the count of outcomes per reference category.
fn compare(
    engine: impl Fn([u8; 3]) -> Hand,
    reference: impl Fn([u8; 3]) -> Reference,
    tokens: u8,
) -> [usize; 7] {
    let all: Vec<[u8; 3]> = outcomes().collect();
    assert_eq!(all.len(), 216);
    let mut counts = [0usize; 7];
    for &dice in &all {
        let (hand, want) = (engine(dice), reference(dice));
        assert_eq!(category_of(hand), want.category, "{dice:?} is {hand:?}");
        assert_eq!(
            hand.value(tokens),
            want.value,
            "value of {dice:?} ({hand:?})"
        );
        counts[want.category as usize] += 1;
    }
    for &a in &all {
        for &b in &all {
            let (ra, rb) = (reference(a), reference(b));
            let want = (std::cmp::Reverse(ra.category), ra.detail)
                .cmp(&(std::cmp::Reverse(rb.category), rb.detail));
            let got = engine(a).strength().cmp(&engine(b).strength());
            assert_eq!(
                got,
                want,
                "order of {a:?} ({:?}) and {b:?} ({:?})",
                engine(a),
                engine(b)
            );
        }
    }
    counts
}

#[test]
fn schocken_hands_over_all_216_outcomes() {
    let counts = compare(
        |d| Hand::schocken(d, false, true),
        |d| reference_schocken(d, false, true),
        13,
    );
    // Counted by arrangements: one 1-1-1; five Schocks 1-1-x, 3 ways each; five Generals;
    // four straights, 6 ways each; the rest are Numbers.
    let schock_out = arrangements([1, 1, 1]);
    let schocks = (2..=6).map(|x| arrangements([1, 1, x])).sum::<usize>();
    let generals = (2..=6).map(|x| arrangements([x, x, x])).sum::<usize>();
    let straights = (1..=4)
        .map(|x| arrangements([x, x + 1, x + 2]))
        .sum::<usize>();
    assert_eq!((schock_out, schocks, generals, straights), (1, 15, 5, 24));
    assert_eq!(
        counts[1..=6],
        [
            schock_out,
            0,
            schocks,
            generals,
            straights,
            216 - schock_out - schocks - generals - straights
        ]
    );
}

#[test]
fn schocken_jule_and_straight_in_one_throw() {
    let counts = compare(
        |d| Hand::schocken(d, true, true),
        |d| reference_schocken(d, true, true),
        13,
    );
    assert_eq!(counts[2], arrangements([4, 2, 1]));
    assert_eq!(counts[6], 216 - 1 - 6 - 15 - 5 - 24);
    // Without all dice rolled together a straight is a Number; a Jule stays a Jule.
    let counts = compare(
        |d| Hand::schocken(d, true, false),
        |d| reference_schocken(d, true, false),
        13,
    );
    assert_eq!(counts[5], 0);
    assert_eq!(counts[2], 6);
    assert_eq!(Hand::schocken([3, 2, 1], false, false), Hand::Number(321));
    // A Schock out takes all the tokens of the half, whatever their number.
    assert_eq!(Hand::SchockOut.value(9), 9);
}

#[test]
fn sjokken_hands_over_all_216_outcomes() {
    let counts = compare(Hand::sjokken, reference_sjokken, 15);
    let straats = (1..=4)
        .map(|x| arrangements([x, x + 1, x + 2]))
        .sum::<usize>();
    assert_eq!(
        counts[1..=5],
        [1, 15, 5, straats, 216 - 1 - 15 - 5 - straats]
    );
    // Hoog compares sums: 6-6-2 and 5-5-4 are equal hands.
    assert_eq!(
        Hand::sjokken([6, 6, 2]).strength(),
        Hand::sjokken([5, 4, 5]).strength()
    );
    assert_eq!(Hand::sjokken([6, 6, 5]), Hand::Hoog(17));
    assert_eq!(Hand::sjokken([2, 2, 1]), Hand::Hoog(5));
}

#[test]
fn table_order_examples() {
    let order = [
        [1, 1, 1],
        [1, 1, 6],
        [1, 1, 2],
        [6, 6, 6],
        [2, 2, 2],
        [4, 5, 6],
        [1, 2, 3],
        [6, 6, 5],
        [6, 4, 1],
        [2, 2, 1],
    ];
    for pair in order.windows(2) {
        assert!(
            Hand::schocken(pair[0], false, true).strength()
                > Hand::schocken(pair[1], false, true).strength(),
            "{:?} should beat {:?}",
            pair[0],
            pair[1]
        );
    }
    // Jule ranks directly below Schock out.
    let jule = Hand::schocken([4, 2, 1], true, true).strength();
    assert!(jule < Hand::SchockOut.strength() && jule > Hand::Schock(6).strength());
    assert_eq!(Hand::schocken([6, 4, 1], false, true), Hand::Number(641));
}
