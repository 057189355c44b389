//! Balanced designs and the schedules that use them.

use std::collections::BTreeMap;

use knobel_engine::Game;

use super::config::{LeagueConfig, LeagueConfigError, TableDesign};
use super::design::{Balanced, balanced, choose, is_balanced, lambda_step};
use super::public_dice;
use super::schedule::{ScheduleError, ScheduledMatch, expand, seat_orders};

fn bots(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("b{i:02}")).collect()
}

/// How often each bot sits at a table of `game`, and how often each two bots meet (sets,
/// not matches).
fn meetings(
    s: &[ScheduledMatch],
    game: Game,
) -> (BTreeMap<String, u64>, BTreeMap<(String, String), u64>) {
    let (mut seats, mut pairs) = (BTreeMap::new(), BTreeMap::new());
    for m in s.iter().filter(|m| m.game == game && m.rotation == 0) {
        for a in &m.seats {
            *seats.entry(a.clone()).or_insert(0) += 1;
            for b in &m.seats {
                if a < b {
                    *pairs.entry((a.clone(), b.clone())).or_insert(0) += 1;
                }
            }
        }
    }
    (seats, pairs)
}

/// Every value of `map` is `value`, and there are `len` of them.
fn all_equal<K: std::fmt::Debug>(map: &BTreeMap<K, u64>, len: usize, value: u64) {
    assert_eq!(map.len(), len, "{map:?}");
    assert!(map.values().all(|&n| n == value), "{map:?}");
}

#[test]
fn balanced_designs_are_exact_for_a_range_of_fields_and_tables() {
    let (mut found, mut not_found) = (0, Vec::new());
    let range = (3..=6).flat_map(|k| (k..=40).map(move |v| (v, k)));
    for (v, k) in range.chain((7..=8).flat_map(|k| (k..=24).map(move |v| (v, k)))) {
        {
            match balanced(v, k) {
                Balanced::Design(d) => {
                    found += 1;
                    assert!(is_balanced(v, k, d.lambda, &d.blocks), "v {v} k {k}");
                    assert_eq!(d.lambda % lambda_step(v, k), 0, "v {v} k {k}");
                    assert!((d.blocks.len() as u128) < choose(v as u128, k as u128));
                    // Every point in the same number of blocks.
                    let mut r = vec![0u64; v];
                    d.blocks.iter().flatten().for_each(|&x| r[x] += 1);
                    let per_point = d.lambda * (v as u64 - 1) / (k as u64 - 1);
                    assert!(r.iter().all(|&n| n == per_point), "v {v} k {k}: {r:?}");
                    // The same (v, k) gives the same design.
                    assert_eq!(balanced(v, k), Balanced::Design(d));
                }
                // No balanced design is smaller than the complete one.
                Balanced::Complete => assert!(
                    k + 1 >= v
                        || u128::from(lambda_step(v, k)) * (v * (v - 1)) as u128
                            / (k * (k - 1)) as u128
                            >= choose(v as u128, k as u128),
                    "v {v} k {k}"
                ),
                Balanced::NotFound => not_found.push((v, k)),
            }
        }
    }
    assert!(not_found.is_empty(), "{not_found:?}");
    assert!(found > 150, "{found} designs");
}

#[test]
fn the_smallest_designs_are_found_where_known() {
    // Projective and affine planes, Steiner triple systems, and the teacher's 30 of 4.
    for (v, k, lambda) in [(7, 3, 1), (13, 3, 1), (13, 4, 1), (30, 4, 6), (60, 4, 3)] {
        let Balanced::Design(d) = balanced(v, k) else {
            panic!("v {v} k {k}")
        };
        assert_eq!(d.lambda, lambda, "v {v} k {k}");
    }
    assert_eq!(balanced(10, 2), Balanced::Complete);
    assert_eq!(balanced(10, 9), Balanced::Complete);
}

#[test]
fn sixty_bots_get_a_design_up_to_tables_of_seven() {
    // How long it takes is measured by `design_survey` (release build), not asserted here.
    for k in 3..=7 {
        assert!(matches!(balanced(60, k), Balanced::Design(_)), "k {k}");
    }
}

/// The time `balanced` takes for every field up to 64 bots and every table size: run with
/// `cargo test --release -p knobel-arena --lib design_survey -- --ignored --nocapture`.
#[test]
#[ignore = "a timing survey, not a check: run it in a release build with --ignored --nocapture"]
fn design_survey() {
    let (mut worst, mut not_found) = (0f64, Vec::new());
    for k in 3..=8 {
        for v in k..=64 {
            let start = std::time::Instant::now();
            let found = balanced(v, k);
            let ms = start.elapsed().as_secs_f64() * 1e3;
            worst = worst.max(ms);
            match found {
                Balanced::Design(d) => println!("{v} {k}: lambda {} in {ms:.1} ms", d.lambda),
                Balanced::Complete => println!("{v} {k}: complete"),
                Balanced::NotFound => not_found.push((v, k)),
            }
        }
    }
    println!("worst {worst:.1} ms; not found: {not_found:?}");
}

fn league(n: usize, rest: &str) -> (LeagueConfig, Vec<String>) {
    let text = format!("name = \"class\"\nseed = 11\ndice = \"duplicate\"\nbots = \"all\"\n{rest}");
    let c = LeagueConfig::from_toml(&text).unwrap();
    let b = c.resolve_bots(&bots(n)).unwrap();
    (c, b)
}

const THREE_GAMES: &str = "[games.schocken]\n[games.sjokken]\n[games.zokken]\ntable_size = 4\n";

#[test]
fn thirty_bots_at_tables_of_four_in_three_games_are_accepted() {
    let (c, b) = league(30, THREE_GAMES);
    let s = expand(&c, &b, &public_dice(&c)).unwrap();
    // (30, 4, 6): 435 tables, each bot at 58; 4 rotations each; three games.
    assert_eq!(s.len(), 3 * 435 * 4);
    for game in Game::ALL {
        let (seats, pairs) = meetings(&s, game);
        all_equal(&seats, 30, 58);
        all_equal(&pairs, 435, 6);
    }
    assert!(s.iter().enumerate().all(|(i, m)| m.ordinal as usize == i));
    for set in [0, 435, 1304] {
        let matches: Vec<_> = s.iter().filter(|m| m.set == set).collect();
        assert_eq!(matches.len(), seat_orders(4).len());
        assert!(matches.iter().all(|m| m.seed == matches[0].seed));
    }
    // Idempotent: the same file gives the very same schedule.
    let (again, b2) = league(30, THREE_GAMES);
    assert_eq!(s, expand(&again, &b2, &public_dice(&again)).unwrap());
    // Another seed seats the design differently, as balanced.
    let other = LeagueConfig::from_toml(&format!(
        "name = \"class\"\nseed = 12\nbots = \"all\"\n{THREE_GAMES}"
    ))
    .unwrap();
    let t = expand(&other, &b, &public_dice(&other)).unwrap();
    assert_ne!(s[0].seats, t[0].seats);
    all_equal(&meetings(&t, Game::Zokken).1, 435, 6);
}

#[test]
fn the_design_turns_balanced_only_above_the_largest_league() {
    // Under the threshold, auto is the complete design, as before balanced designs.
    let (auto, b) = league(9, "[games.schocken]\n[games.zokken]\n");
    let (complete, _) = league(
        9,
        "design = \"complete\"\n[games.schocken]\n[games.zokken]\n",
    );
    let s = expand(&auto, &b, &public_dice(&auto)).unwrap();
    assert_eq!(s, expand(&complete, &b, &public_dice(&complete)).unwrap());
    assert_eq!(s.len(), 126 * 4 + 36 * 2);
    // One game of 30 at tables of 4 is 27,405 tables x 4 = 109,620 matches: complete.
    let (c, b) = league(30, "[games.schocken]\n");
    assert_eq!(expand(&c, &b, &public_dice(&c)).unwrap().len(), 109_620);
    // Two are 219,240, more than 200,000: both balanced.
    let (c, b) = league(30, "[games.schocken]\n[games.sjokken]\n");
    assert_eq!(expand(&c, &b, &public_dice(&c)).unwrap().len(), 2 * 435 * 4);
    // Unless a game asks for its complete tables.
    let (c, b) = league(
        30,
        "[games.schocken]\ndesign = \"complete\"\n[games.sjokken]\n",
    );
    assert_eq!(
        expand(&c, &b, &public_dice(&c)).unwrap().len(),
        109_620 + 435 * 4
    );
    let (c, b) = league(30, &format!("design = \"complete\"\n{THREE_GAMES}"));
    assert!(matches!(
        expand(&c, &b, &public_dice(&c)),
        Err(ScheduleError::TooManyMatches { matches: 328_860 })
    ));
    // A small league may ask for a balanced design: 13 bots at tables of 4 meet once each.
    let (c, b) = league(13, "design = \"balanced\"\n[games.schocken]\n");
    let s = expand(&c, &b, &public_dice(&c)).unwrap();
    assert_eq!(s.len(), 13 * 4);
    all_equal(&meetings(&s, Game::Schocken).1, 78, 1);
    // Where no balanced design is smaller, balanced is the complete round robin.
    let (c, b) = league(6, "design = \"balanced\"\n[games.zokken]\n");
    assert_eq!(expand(&c, &b, &public_dice(&c)).unwrap().len(), 15 * 2);
}

#[test]
fn a_league_without_a_design_names_its_bots_and_tables() {
    let (c, b) = league(60, "[games.schocken]\ntable_size = 8\n");
    let err = expand(&c, &b, &public_dice(&c)).unwrap_err();
    assert!(
        matches!(
            err,
            ScheduleError::NoBalancedDesign {
                game: Game::Schocken,
                bots: 60,
                table_size: 8,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("no balanced design of tables of 8 for 60 bots was found in schocken"),
        "{err}"
    );
}

#[test]
fn a_balanced_gauntlet_meets_the_field_equally_often() {
    let text = "name = \"g\"\nformat = \"gauntlet\"\nchallenger = \"b00\"\nbots = \"all\"\n\
                design = \"balanced\"\n[games.schocken]\ntable_size = 5\n";
    let c = LeagueConfig::from_toml(text).unwrap();
    let b = c.resolve_bots(&bots(31)).unwrap();
    let s = expand(&c, &b, &public_dice(&c)).unwrap();
    assert!(s.iter().all(|m| m.seats.contains(&"b00".to_owned())));
    let (seats, pairs) = meetings(&s, Game::Schocken);
    // The field: a design of 30 points with blocks of 4.
    assert_eq!(seats["b00"], 435);
    let field: BTreeMap<_, _> = pairs.into_iter().filter(|((a, _), _)| a != "b00").collect();
    all_equal(&field, 435, 6);
    assert!(seats.iter().all(|(bot, &n)| bot == "b00" || n == 58));
}

#[test]
fn the_design_key_is_read_and_checked() {
    let (c, _) = league(
        5,
        "design = \"balanced\"\n[games.schocken]\n[games.zokken]\ndesign = \"complete\"\n",
    );
    assert_eq!(c.games[0].design, TableDesign::Balanced);
    assert_eq!(c.games[1].design, TableDesign::Complete);
    let (c, _) = league(5, "[games.schocken]\n");
    assert_eq!(c.games[0].design, TableDesign::Auto);
    for (text, field, line) in [
        ("design = \"random\"\n[games.schocken]\n", "design", 3),
        (
            "[games.schocken]\ndesign = \"random\"\n",
            "games.schocken.design",
            4,
        ),
    ] {
        let err =
            LeagueConfig::from_toml(&format!("name = \"x\"\nbots = \"all\"\n{text}")).unwrap_err();
        let LeagueConfigError::Field {
            field: f,
            line: l,
            message,
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!((f.as_str(), *l), (field, line), "{err}");
        assert!(
            message.contains(
                "unknown design \"random\": designs are \"auto\", \"complete\" and \"balanced\""
            ),
            "{message}"
        );
    }
}
