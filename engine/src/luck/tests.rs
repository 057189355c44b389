//! The luck terms against exact enumeration, and unbiasedness over matches of different
//! players.

use super::*;
use crate::dice::DiceScript;
use crate::hand::MIWIN_FACES;
use crate::play::Match;
use crate::policy::{self, Policy};

/// A logged match of `names` (built-in players) from `seed`.
pub(crate) fn played(rules: &Rules, names: &[&str], seed: u64) -> MatchLog {
    let mut m = Match::new_with_log(rules.clone(), seed, names.len()).expect("valid setup");
    let mut players: Vec<Box<dyn Policy + Send>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| policy::by_name(name, seed ^ (i as u64) << 40).expect("a built-in"))
        .collect();
    policy::play_out(&mut m, &mut players);
    m.log().expect("logged").clone()
}

/// The faces of the die in `slot` in `rules`' game.
fn faces(rules: &Rules, slot: usize) -> [u8; 6] {
    match rules {
        Rules::Zokken(_) => MIWIN_FACES[slot],
        _ => [1, 2, 3, 4, 5, 6],
    }
}

/// For the throw at log entry `index`: every ordered outcome of its rolled dice (each die
/// on its faces, 6^k of them), the log with the throw's dice replaced, and the term of that
/// throw. Returns the terms.
fn terms_of_every_outcome(log: &MatchLog, scale: LuckScale, index: usize) -> Vec<Vec<f64>> {
    let LogEntry::Throw { rolled, dice, .. } = log.entries[index] else {
        panic!("entry {index} is not a throw");
    };
    let slots: Vec<usize> = rolled.slots().collect();
    let ways = 6usize.pow(slots.len() as u32);
    let mut prefix = MatchLog {
        entries: log.entries[..=index].to_vec(),
        ..log.clone()
    };
    let mut all = Vec::with_capacity(ways);
    for way in 0..ways {
        let mut d = dice;
        for (k, &slot) in slots.iter().enumerate() {
            d[slot] = faces(&log.rules, slot)[way / 6usize.pow(k as u32) % 6];
        }
        if let LogEntry::Throw { dice, .. } = &mut prefix.entries[index] {
            *dice = d;
        }
        let throws = throws_in(&prefix, scale, index..index + 1).expect("valid log");
        assert_eq!(throws.len(), 1, "entry {index}");
        all.push(throws[0].terms.clone());
    }
    all
}

/// Checks that the terms of the throws at `entries` average to zero over every outcome of
/// their dice, for every seat, and that `match_luck_on` reports the actual outcome's term.
fn check_mean_zero(log: &MatchLog, scale: LuckScale, entries: &[usize]) {
    let luck = match_luck_on(log, scale).expect("luck");
    for &index in entries {
        let all = terms_of_every_outcome(log, scale, index);
        for seat in 0..log.seats as usize {
            let mean = all.iter().map(|t| t[seat]).sum::<f64>() / all.len() as f64;
            assert!(mean.abs() < 1e-12, "entry {index} seat {seat}: mean {mean}");
        }
        let reported = luck.throws.iter().find(|t| t.entry == index).expect("term");
        let alone = throws_in(log, scale, index..index + 1).expect("valid log");
        assert_eq!(alone[0].terms, reported.terms, "entry {index}");
        assert!(all.contains(&reported.terms), "entry {index}");
    }
}

/// Some round-1 and later throws of a log, every `step`-th one: the first two that roll
/// all three dice (216 outcomes each) and the first four that roll fewer.
fn some_throws(log: &MatchLog, step: usize) -> Vec<usize> {
    let throws: Vec<(usize, usize)> = log
        .entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            LogEntry::Throw { round, rolled, .. } if *round > 0 && !rolled.is_empty() => {
                Some((i, rolled.len()))
            }
            _ => None,
        })
        .step_by(step)
        .collect();
    let all = throws.iter().filter(|t| t.1 == 3).take(2);
    let fewer = throws.iter().filter(|t| t.1 < 3).take(4);
    all.chain(fewer).map(|t| t.0).collect()
}

#[test]
fn schocken_terms_average_to_zero_over_every_outcome() {
    for (preset, scale) in [
        ("schocken", LuckScale::Loss),
        ("schocken-typenclub", LuckScale::Place),
    ] {
        let rules = Rules::preset(preset).unwrap();
        let log = played(&rules, &["expert", "heuristic", "random"], 5);
        check_mean_zero(&log, scale, &some_throws(&log, 7));
    }
}

#[test]
fn sjokken_terms_average_to_zero_over_every_outcome() {
    let rules = Rules::preset("sjokken").unwrap();
    let log = played(&rules, &["heuristic", "expert", "handicap-2"], 11);
    check_mean_zero(&log, LuckScale::Loss, &some_throws(&log, 5));
}

#[test]
fn zokken_terms_average_to_zero_over_every_outcome() {
    let mut rules = Rules::preset("zokken").unwrap();
    rules.set_number("rounds", 3).unwrap();
    let log = played(&rules, &["expert", "heuristic", "timid"], 3);
    check_mean_zero(&log, LuckScale::Loss, &some_throws(&log, 2));
}

#[test]
fn a_public_sjok1_is_good_luck_for_its_thrower() {
    // Seat 1 starts (the highest opening throw) and throws SJOK1 at once: free, with its
    // chance to lose the match gone.
    let mut script = DiceScript::new();
    script.throw(Seat(0), 0, 1, [2, 3, 5]);
    script.throw(Seat(1), 0, 1, [6, 6, 5]);
    script.throw(Seat(2), 0, 1, [4, 3, 1]);
    script.throw(Seat(1), 1, 1, [1, 1, 1]);
    let rules = Rules::preset("sjokken").unwrap();
    let mut m = Match::scripted(rules, 1, 3, script).unwrap();
    let mut players: Vec<Box<dyn Policy + Send>> = (0..3)
        .map(|_| policy::by_name("heuristic", 0).unwrap())
        .collect();
    policy::play_out(&mut m, &mut players);
    let luck = match_luck(m.log().unwrap()).unwrap();
    let first = &luck.throws[0];
    assert_eq!((first.seat, first.round, first.throw), (Seat(1), 1, 1));
    // Before the throw its chance to lose was about a third; after it, none.
    assert!(first.terms[1] < -0.2, "{:?}", first.terms);
    assert!(
        first.terms[0] > 0.0 && first.terms[2] > 0.0,
        "{:?}",
        first.terms
    );
}

#[test]
fn scores_and_adjusted_scores_add_up() {
    let rules = Rules::preset("sjokken").unwrap();
    let log = played(&rules, &["heuristic", "random"], 2);
    let luck = match_luck(&log).unwrap();
    assert_eq!(luck.version, LUCK_VERSION);
    assert_eq!(luck.scores.iter().sum::<f64>(), 1.0);
    for seat in 0..2 {
        let sum: f64 = luck.throws.iter().map(|t| t.terms[seat]).sum();
        assert!((sum - luck.luck[seat]).abs() < 1e-9);
        let adjusted = luck.scores[seat] - luck.coefficient * luck.luck[seat];
        assert!((adjusted - luck.adjusted[seat]).abs() < 1e-12);
    }
    // An unfinished log has no score yet.
    let cut = MatchLog {
        entries: log.entries[..log.entries.len() / 2].to_vec(),
        ..log.clone()
    };
    assert_eq!(match_luck(&cut), Err(LuckError::NotOver));
}

#[test]
fn bad_logs_are_refused() {
    let rules = Rules::preset("schocken").unwrap();
    let mut log = played(&rules, &["heuristic", "heuristic"], 4);
    let index = some_throws(&log, 1)[0];
    if let LogEntry::Throw { dice, .. } = &mut log.entries[index] {
        *dice = [7, 1, 1];
    }
    assert_eq!(
        match_luck(&log),
        Err(LuckError::ImpossibleDice {
            index,
            dice: [7, 1, 1]
        })
    );
    if let LogEntry::Throw { seat, dice, .. } = &mut log.entries[index] {
        *dice = [1, 1, 1];
        *seat = Seat(5);
    }
    assert!(matches!(
        match_luck(&log),
        Err(LuckError::NoSuchSeat { seat: 5, .. })
    ));
}

#[test]
fn altered_logs_are_refused_not_panicked_on() {
    for preset in ["schocken", "sjokken", "zokken"] {
        let mut rules = Rules::preset(preset).unwrap();
        if preset == "zokken" {
            rules.set_number("rounds", 2).unwrap();
        }
        let log = played(&rules, &["heuristic", "heuristic", "random"], 8);
        let throws = some_throws(&log, 3);
        for &index in &throws {
            for change in 0..6u8 {
                let mut altered = log.clone();
                if let LogEntry::Throw {
                    throw,
                    rolled,
                    dice,
                    seat,
                    ..
                } = &mut altered.entries[index]
                {
                    match change {
                        0 => *throw = 0,
                        1 => *throw = 9,
                        2 => *rolled = crate::types::DieMask::EMPTY,
                        3 => *rolled = crate::types::DieMask::single(1),
                        4 => *seat = Seat((seat.0 + 1) % 3),
                        _ => *dice = [dice[0], 0, dice[2]],
                    }
                }
                // Refused or accepted, never a panic.
                let _ = match_luck(&altered);
                let _ = throws_in(&altered, LuckScale::Place, 0..index + 1);
            }
        }
    }
}

#[test]
fn sjokken_places_are_scaled_losses() {
    // In Sjokken the place is 1 + (seats - 1) * lost: so are V and every term.
    let rules = Rules::preset("sjokken").unwrap();
    let log = played(
        &rules,
        &["heuristic", "handicap-1", "random", "heuristic"],
        6,
    );
    let (loss, place) = (
        match_luck_on(&log, LuckScale::Loss).unwrap(),
        match_luck_on(&log, LuckScale::Place).unwrap(),
    );
    for seat in 0..4 {
        assert_eq!(place.scores[seat], 1.0 + 3.0 * loss.scores[seat]);
        assert!((place.luck[seat] - 3.0 * loss.luck[seat]).abs() < 1e-9);
    }
}
