use knobel_engine::{Game, Rules};

use super::config::{Format, LeagueConfig, LeagueConfigError};
use super::dice::{DiceMode, LeagueDice, LeagueSecret};
use super::public_dice;
use super::schedule::{
    MAX_MATCHES, ScheduleError, expand, mix, scheduled_matches, seat_orders, splitmix64,
};
use super::settle::{Margins, PairVerdict, Stop};
use super::standings::{Interval, PlayedMatch, PlayedSeat, ScoreBasis, rating_history, standings};

const FILE: &str = r#"
name = "class-7b"
seed = 7
bots = ["ada", "bob", "cy", "dee", "eve"]
repetitions = 2

[time]
decision_ms = 500

[games.schocken]
table_size = 3

[games.zokken]
settings = { rounds = 20 }
variants = ["bet_after_last_throw"]
"#;

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn field_error(text: &str) -> (String, usize, String) {
    match LeagueConfig::from_toml(text) {
        Err(LeagueConfigError::Field {
            field,
            line,
            message,
        }) => (field, line, message),
        other => panic!("expected a field error, got {other:?}"),
    }
}

#[test]
fn a_league_file_reads_with_its_defaults() {
    let c = LeagueConfig::from_toml(FILE).unwrap();
    assert_eq!(c.name, "class-7b");
    assert_eq!(c.seed, Some(7));
    assert_eq!(c.dice, DiceMode::Independent, "independent dice by default");
    assert_eq!(c.format, Format::RoundRobin);
    assert_eq!((c.repetitions, c.concurrency), (2, 4));
    assert_eq!((c.decision_ms, c.time_bank_ms), (500, 10_000));
    assert_eq!(c.games.len(), 2);
    assert_eq!(c.games[0].game, Game::Schocken);
    assert_eq!(c.games[0].table_size, 3);
    assert_eq!(c.games[1].table_size, 2, "zokken's default table");
    let Rules::Zokken(z) = &c.games[1].rules else {
        panic!()
    };
    assert_eq!(z.rounds, 20);
    assert!(z.bet_after_last_throw);
}

#[test]
fn an_unknown_key_names_itself_and_its_line() {
    let err = LeagueConfig::from_toml("name = \"x\"\nbots = \"all\"\ncolour = 3\n[games.zokken]\n")
        .unwrap_err();
    let LeagueConfigError::Syntax { line, message } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*line, 3, "{err}");
    assert!(message.contains("colour"), "{err}");
    let err = LeagueConfig::from_toml("name = \"x\"\nbots = \"all\"\n[games.zokken]\ntable = 2\n")
        .unwrap_err();
    assert!(err.to_string().starts_with("line 4:"), "{err}");
    assert!(err.to_string().contains("table"), "{err}");
}

#[test]
fn bad_games_presets_variants_and_settings_are_named() {
    let base = "name = \"x\"\nbots = \"all\"\n";
    let (f, l, m) = field_error(&format!("{base}[games.poker]\n"));
    assert_eq!((f.as_str(), l), ("games", 3));
    assert!(m.contains("unknown game \"poker\""), "{m}");
    let (f, l, m) = field_error(&format!("{base}[games.schocken]\npreset = \"zokken\"\n"));
    assert_eq!((f.as_str(), l), ("games.schocken.preset", 4));
    assert!(m.contains("zokken preset"), "{m}");
    let (f, _, m) = field_error(&format!("{base}[games.schocken]\npreset = \"schock\"\n"));
    assert_eq!(f, "games.schocken.preset");
    assert!(
        m.contains("presets are schocken, schocken-typenclub, sjokken, zokken"),
        "{m}"
    );
    let (f, l, m) = field_error(&format!("{base}[games.sjokken]\nvariants = [\"jule\"]\n"));
    assert_eq!((f.as_str(), l), ("games.sjokken.variants", 4));
    assert!(m.contains("jule"), "{m}");
    let (f, _, m) = field_error(&format!(
        "{base}[games.zokken]\nsettings = {{ rounds = 0 }}\n"
    ));
    assert_eq!(f, "games.zokken.settings.rounds");
    assert!(
        m.contains("1..=100000") || m.contains("1..=100_000") || m.contains("100000"),
        "{m}"
    );
    let (f, _, m) = field_error(&format!("{base}[games.zokken]\ntable_size = 9\n"));
    assert_eq!(f, "games.zokken.table_size");
    assert!(m.contains("legal are 2..=8"), "{m}");
    let (f, l, _) = field_error(&format!("{base}format = \"swiss\"\n[games.zokken]\n"));
    assert_eq!((f.as_str(), l), ("format", 3));
    let (f, _, m) = field_error(&format!("{base}format = \"gauntlet\"\n[games.zokken]\n"));
    assert_eq!(f, "format");
    assert!(m.contains("challenger"), "{m}");
    let (f, _, _) = field_error("name = \"no spaces\"\nbots = \"all\"\n[games.zokken]\n");
    assert_eq!(f, "name");
}

#[test]
fn bots_are_checked_against_the_registry_and_the_tables() {
    let c = LeagueConfig::from_toml(FILE).unwrap();
    let registered = names(&["ada", "bob", "cy", "dee", "eve", "fay"]);
    assert_eq!(
        c.resolve_bots(&registered).unwrap(),
        names(&["ada", "bob", "cy", "dee", "eve"])
    );
    let err = c
        .resolve_bots(&names(&["ada", "bob", "cy", "dee"]))
        .unwrap_err();
    let LeagueConfigError::Field {
        field,
        line,
        message,
    } = &err
    else {
        panic!()
    };
    assert_eq!((field.as_str(), *line), ("bots", 4));
    assert!(message.contains("unknown bot \"eve\""), "{message}");
    let all = LeagueConfig::from_toml("name = \"x\"\nbots = \"all\"\n[games.schocken]\n").unwrap();
    let err = all.resolve_bots(&names(&["ada", "bob", "cy"])).unwrap_err();
    let LeagueConfigError::Field {
        field,
        line,
        message,
    } = &err
    else {
        panic!()
    };
    assert_eq!((field.as_str(), *line), ("games.schocken.table_size", 3));
    assert!(
        message.contains("larger than the league's 3 bots"),
        "{message}"
    );
    let twice = LeagueConfig::from_toml("name = \"x\"\nbots = [\"a\", \"a\"]\n[games.zokken]\n");
    assert!(twice.unwrap_err().to_string().contains("listed twice"));
}

#[test]
fn a_round_robin_plays_every_table_in_every_seat_order() {
    let c = LeagueConfig::from_toml(FILE).unwrap();
    let bots = names(&["ada", "bob", "cy", "dee", "eve"]);
    let dice = LeagueDice::public(7, DiceMode::Duplicate);
    let s = expand(&c, &bots, &dice).unwrap();
    // Schocken: C(5,3) = 10 tables x 6 orders; Zokken: C(5,2) = 10 x 2; twice.
    assert_eq!(s.len(), 2 * (10 * 6 + 10 * 2));
    assert!(s.iter().enumerate().all(|(i, m)| m.ordinal as usize == i));
    // The same league expands to the same schedule.
    assert_eq!(s, expand(&c, &bots, &dice).unwrap());
    for set in 0..=s.last().unwrap().set {
        let matches: Vec<_> = s.iter().filter(|m| m.set == set).collect();
        let k = matches[0].seats.len();
        assert_eq!(matches.len(), seat_orders(k).len());
        assert!(
            matches
                .iter()
                .all(|m| m.seed == matches[0].seed && m.game == matches[0].game)
        );
        // Each bot sits in each seat equally often within the set.
        for seat in 0..k {
            let mut at: Vec<&String> = matches.iter().map(|m| &m.seats[seat]).collect();
            at.sort();
            at.dedup();
            assert_eq!(at.len(), k, "set {set} seat {seat}");
        }
        // No bot twice at a table.
        for m in &matches {
            let mut seats = m.seats.clone();
            seats.sort();
            seats.dedup();
            assert_eq!(seats.len(), k);
        }
    }
    // Every pair of bots meets equally often in each game.
    for game in [Game::Schocken, Game::Zokken] {
        let mut meetings = std::collections::BTreeMap::new();
        for m in s.iter().filter(|m| m.game == game) {
            for a in &m.seats {
                for b in &m.seats {
                    if a < b {
                        *meetings.entry((a.clone(), b.clone())).or_insert(0) += 1;
                    }
                }
            }
        }
        assert_eq!(meetings.len(), 10);
        let first = *meetings.values().next().unwrap();
        assert!(
            meetings.values().all(|&n| n == first),
            "{game}: {meetings:?}"
        );
    }
    // Fresh seeds for each repetition and each table.
    let mut seeds: Vec<u64> = s.iter().map(|m| m.seed).collect();
    seeds.dedup();
    seeds.sort();
    seeds.dedup();
    assert_eq!(seeds.len(), (s.last().unwrap().set + 1) as usize);
    assert_eq!(s[0].seed, dice.match_seed(0, 0, 1));
    // Independent dice: the same tables and seat orders, every match its own seed.
    let independent = expand(&c, &bots, &LeagueDice::public(7, DiceMode::Independent)).unwrap();
    let mut seeds: Vec<u64> = independent.iter().map(|m| m.seed).collect();
    seeds.sort();
    seeds.dedup();
    assert_eq!(seeds.len(), s.len());
    let tables = |s: &[super::ScheduledMatch]| -> Vec<_> {
        s.iter().map(|m| (m.game, m.set, m.seats.clone())).collect()
    };
    assert_eq!(tables(&independent), tables(&s));
}

/// The inverse of [`splitmix64`]: the attacker's first step against the old seed chain.
fn unsplitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 31) ^ (z >> 62)).wrapping_mul(0x3196_42B2_D24D_8EC3);
    z = (z ^ (z >> 27) ^ (z >> 54)).wrapping_mul(0x96DE_1B17_3F11_9089);
    z = z ^ (z >> 30) ^ (z >> 60);
    z.wrapping_sub(0x9E37_79B9_7F4A_7C15)
}

/// The set seed of the chain leagues used before secret seeds (schedule `set_seed` until
/// 2026-12): `mix(mix(mix(league_seed, game), table), repetition)`.
fn old_chain(league_seed: u64, game: u64, table: u64, repetition: u64) -> u64 {
    mix(mix(mix(league_seed, game), table), repetition)
}

#[test]
fn the_attackers_inverse_undoes_splitmix64() {
    for z in [0, 1, 7, u64::MAX, 0x1234_5678_9ABC_DEF0] {
        assert_eq!(unsplitmix64(splitmix64(z)), z);
    }
    // Against the old chain the attack works: one set seed gives the league seed back.
    let league = 1;
    let seed = old_chain(league, 0, 3, 0);
    let back = unsplitmix64(unsplitmix64(unsplitmix64(seed) ^ splitmix64(0)) ^ splitmix64(3))
        ^ splitmix64(0);
    assert_eq!(back, league);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

    /// For random secrets: no two match seeds of a league are equal, and knowing every seed
    /// but one, the remaining one is not among the candidates that the old SplitMix64 chain
    /// derives from them (each known seed taken back through the chain to a league seed,
    /// for every game, table and repetition, and the chain run forward again from there).
    #[test]
    fn secret_seeds_share_no_structure_an_attacker_finds(
        key in proptest::prelude::any::<[u8; 32]>(),
        hidden in 0usize..80,
        duplicate in proptest::prelude::any::<bool>(),
    ) {
        let c = LeagueConfig::from_toml(FILE).unwrap();
        let bots = names(&["ada", "bob", "cy", "dee", "eve"]);
        let mode = if duplicate { DiceMode::Duplicate } else { DiceMode::Independent };
        let dice = LeagueDice { secret: LeagueSecret::from_bytes(key), mode };
        let s = expand(&c, &bots, &dice).unwrap();
        // One seed per set (duplicate) or per match (independent), all different.
        let mut seeds: Vec<u64> = s.iter().map(|m| m.seed).collect();
        seeds.dedup();
        let distinct: std::collections::BTreeSet<u64> = seeds.iter().copied().collect();
        proptest::prop_assert_eq!(distinct.len(), seeds.len());
        let hidden = seeds[hidden % seeds.len()];
        let known: Vec<u64> = seeds.iter().copied().filter(|&x| x != hidden).collect();
        let (games, tables, reps) = (3u64, 10u64, 2u64);
        let mut candidates = std::collections::HashSet::new();
        for &seed in &known {
            for g in 0..games {
                for t in 0..tables {
                    for r in 0..reps {
                        let league = unsplitmix64(
                            unsplitmix64(unsplitmix64(seed) ^ splitmix64(r)) ^ splitmix64(t),
                        ) ^ splitmix64(g);
                        for g2 in 0..games {
                            for t2 in 0..tables {
                                for r2 in 0..reps {
                                    candidates.insert(old_chain(league, g2, t2, r2));
                                }
                            }
                        }
                    }
                }
            }
        }
        proptest::prop_assert!(!candidates.contains(&hidden));
        // Also: no seed is a SplitMix64 step of another (an attacker's next guess).
        for &seed in &known {
            proptest::prop_assert_ne!(splitmix64(seed), hidden);
            proptest::prop_assert_ne!(mix(seed, 1), hidden);
        }
    }
}

#[test]
fn seat_orders_are_permutations_up_to_three_and_rotations_above() {
    assert_eq!(seat_orders(2), vec![vec![0, 1], vec![1, 0]]);
    assert_eq!(seat_orders(3).len(), 6);
    assert_eq!(
        seat_orders(4),
        vec![
            vec![0, 1, 2, 3],
            vec![1, 2, 3, 0],
            vec![2, 3, 0, 1],
            vec![3, 0, 1, 2]
        ]
    );
}

#[test]
fn a_gauntlet_seats_the_challenger_at_every_table() {
    let text = "name = \"g\"\nformat = \"gauntlet\"\nchallenger = \"new\"\nbots = [\"a\", \"b\", \"c\", \"new\"]\n[games.schocken]\ntable_size = 3\n";
    let c = LeagueConfig::from_toml(text).unwrap();
    let bots = c.resolve_bots(&names(&["a", "b", "c", "new"])).unwrap();
    let s = expand(&c, &bots, &public_dice(&c)).unwrap();
    assert_eq!(s.len(), 3 * 6, "C(3,2) tables, 6 orders each");
    assert!(s.iter().all(|m| m.seats.contains(&"new".to_owned())));
    let err = c.resolve_bots(&names(&["a", "b", "c"])).unwrap_err();
    assert!(err.to_string().contains("unknown bot \"new\""), "{err}");
}

#[test]
fn too_large_a_league_is_refused() {
    let bots: Vec<String> = (0..200).map(|i| format!("b{i}")).collect();
    let c = LeagueConfig::from_toml(
        "name = \"big\"\nbots = \"all\"\n[games.schocken]\ntable_size = 6\n",
    )
    .unwrap();
    let err = expand(&c, &bots, &public_dice(&c)).unwrap_err();
    assert!(
        err.to_string().contains("matches (at most 200000)"),
        "{err}"
    );
}

/// The documented edge: five bots at Zokken tables of 2 in 10,000 repetitions schedule
/// exactly `MAX_MATCHES` and are accepted; six bots schedule 300,000 and are refused, with
/// the limit named, by the count alone (before any schedule is expanded or stored).
#[test]
fn the_largest_league_is_accepted_and_a_larger_one_refused_with_the_limit() {
    let config = LeagueConfig::from_toml(
        "name = \"big\"\nbots = \"all\"\nrepetitions = 10000\n[games.zokken]\ntable_size = 2\n",
    )
    .unwrap();
    assert_eq!(scheduled_matches(&config, 5), Ok(MAX_MATCHES as u128));
    let err = scheduled_matches(&config, 6).unwrap_err();
    assert_eq!(err, ScheduleError::TooManyMatches { matches: 300_000 });
    assert_eq!(
        err.to_string(),
        "the league would schedule 300000 matches (at most 200000): use fewer bots, smaller \
         tables or fewer repetitions"
    );
    let bots: Vec<String> = (0..6).map(|i| format!("b{i}")).collect();
    assert_eq!(expand(&config, &bots, &public_dice(&config)), Err(err));
}

fn played(ordinal: u32, game: Game, set: u32, seats: &[(&str, u8, Option<i64>)]) -> PlayedMatch {
    PlayedMatch {
        ordinal,
        game,
        set,
        rounds: 20,
        seats: seats
            .iter()
            .map(|&(bot, place, chips)| PlayedSeat {
                bot: bot.to_owned(),
                place,
                chips,
                adjusted: None,
            })
            .collect(),
    }
}

#[test]
fn standings_count_losses_chips_and_pairs() {
    let results = vec![
        played(0, Game::Schocken, 0, &[("a", 1, None), ("b", 2, None)]),
        played(1, Game::Schocken, 0, &[("b", 1, None), ("a", 2, None)]),
        played(2, Game::Schocken, 1, &[("a", 1, None), ("b", 2, None)]),
        played(3, Game::Schocken, 1, &[("b", 2, None), ("a", 1, None)]),
        played(
            4,
            Game::Zokken,
            2,
            &[("a", 1, Some(10)), ("b", 2, Some(-10))],
        ),
        played(5, Game::Zokken, 2, &[("b", 1, Some(4)), ("a", 2, Some(-4))]),
    ];
    // Results arrive in any order; standings follow the schedule.
    let mut shuffled = results.clone();
    shuffled.reverse();
    let s = standings(&shuffled);
    assert_eq!(s, standings(&results));
    let schocken = &s.games[0];
    assert_eq!(schocken.game, Game::Schocken);
    assert_eq!(schocken.bots[0].bot, "a");
    assert_eq!(schocken.bots[0].losses, Some(1));
    assert_eq!(schocken.bots[1].losses, Some(3));
    assert_eq!(schocken.bots[0].average_loss_rate, Some(0.5));
    let lr = schocken.bots[0].loss_rate.unwrap();
    assert_eq!(lr.estimate, 0.25);
    assert!(lr.low > 0.0 && lr.high < 1.0 && lr.low < 0.25 && lr.high > 0.25);
    let pair = &schocken.pairs[0];
    assert_eq!(
        (
            pair.a.as_str(),
            pair.b.as_str(),
            pair.matches,
            pair.a_above,
            pair.b_above
        ),
        ("a", "b", 4, 3, 1)
    );
    // Set 0: a lost once, b once: 0; set 1: a never, b twice: -1 per match. Mean -0.5.
    assert_eq!(pair.sets, 2);
    assert_eq!(pair.paired_difference.estimate, -0.5);
    // Either way round: b minus a is the negation, its interval mirrored.
    assert_eq!(schocken.pair("b", "a"), Some(pair));
    assert_eq!(
        schocken.paired_difference("a", "b"),
        Some(pair.paired_difference)
    );
    let b_minus_a = schocken.paired_difference("b", "a").unwrap();
    assert_eq!(b_minus_a.estimate, 0.5);
    assert_eq!(
        (b_minus_a.low, b_minus_a.high),
        (-pair.paired_difference.high, -pair.paired_difference.low)
    );
    assert_eq!(schocken.paired_difference("a", "nobody"), None);
    let zokken = &s.games[1];
    // a: +10 and -4 chips over 20 rounds: +50 and -20 per 100 rounds.
    let a = zokken.bots.iter().find(|b| b.bot == "a").unwrap();
    assert_eq!(a.chips_per_100_rounds.unwrap().estimate, 15.0);
    assert_eq!(a.losses, None);
    assert_eq!(zokken.pairs[0].paired_difference.estimate, 30.0);
    assert_eq!(s.overall.len(), 2);
    assert_eq!(s.overall[0].bot, "a");
    assert!(s.overall[0].conservative > s.overall[1].conservative);
}

#[test]
fn intervals_are_right() {
    let w = Interval::wilson(5, 10);
    assert!(
        (w.low - 0.2366).abs() < 1e-3 && (w.high - 0.7634).abs() < 1e-3,
        "{w:?}"
    );
    let m = Interval::mean(&[1.0, 2.0, 3.0]);
    assert_eq!(m.estimate, 2.0);
    assert!((m.high - m.estimate - 1.959_964 / 3f64.sqrt()).abs() < 1e-6);
}

#[test]
fn the_documented_example_league_reads() {
    let c = LeagueConfig::from_toml(include_str!("../../../docs/league.example.toml")).unwrap();
    assert_eq!(c.name, "class-7b-autumn");
    assert_eq!(c.games.len(), 3);
    assert_eq!(c.games[0].preset, "schocken-typenclub");
    let bots = c
        .resolve_bots(&names(&["ada", "bert", "cleo", "dora", "emil"]))
        .unwrap();
    assert!(!expand(&c, &bots, &public_dice(&c)).unwrap().is_empty());
}

#[test]
fn the_ratings_over_time_end_at_the_standings_ratings() {
    let seat = |bot: &str, place: u8, chips: Option<i64>| PlayedSeat {
        bot: bot.to_owned(),
        place,
        chips,
        adjusted: None,
    };
    // Given out of schedule order: the history replays them in order, as the standings do.
    let played = vec![
        PlayedMatch {
            ordinal: 2,
            game: Game::Zokken,
            set: 1,
            rounds: 10,
            seats: vec![seat("bob", 1, Some(5)), seat("ada", 2, Some(-5))],
        },
        PlayedMatch {
            ordinal: 0,
            game: Game::Schocken,
            set: 0,
            rounds: 1,
            seats: vec![
                seat("ada", 1, None),
                seat("bob", 2, None),
                seat("cy", 3, None),
            ],
        },
        PlayedMatch {
            ordinal: 1,
            game: Game::Schocken,
            set: 0,
            rounds: 1,
            seats: vec![
                seat("cy", 1, None),
                seat("ada", 2, None),
                seat("bob", 3, None),
            ],
        },
    ];
    let s = standings(&played);
    let overall = rating_history(&played, None);
    assert_eq!(overall.len(), 3);
    for series in &overall {
        let row = s.overall.iter().find(|b| b.bot == series.bot).unwrap();
        let (_, last) = series.points.last().unwrap();
        assert_eq!((last.mu, last.sigma), (row.mu, row.sigma), "{}", series.bot);
    }
    let ada = overall.iter().find(|r| r.bot == "ada").unwrap();
    let numbers: Vec<usize> = ada.points.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [1, 2, 3], "every match, in schedule order");
    let schocken = rating_history(&played, Some(Game::Schocken));
    let cy = schocken.iter().find(|r| r.bot == "cy").unwrap();
    let row = s.games[0].bots.iter().find(|b| b.bot == "cy").unwrap();
    assert_eq!(cy.points.last().unwrap().1.mu, row.mu);
    assert_eq!(cy.points.len(), 2);
}

#[test]
fn bots_all_obeys_the_bot_cap() {
    let c = LeagueConfig::from_toml("name = \"big\"\nbots = \"all\"\n[games.zokken]\n").unwrap();
    let registered: Vec<String> = (0..300).map(|i| format!("b{i}")).collect();
    // Refused before any schedule is made (the design search of 300 bots took 16 s).
    let (field, line, message) = match c.resolve_bots(&registered) {
        Err(LeagueConfigError::Field {
            field,
            line,
            message,
        }) => (field, line, message),
        other => panic!("expected the cap, got {other:?}"),
    };
    assert_eq!((field.as_str(), line), ("bots", 2));
    assert!(
        message.contains("300 registered bots") && message.contains("at most 256"),
        "{message}"
    );
    // At the cap: accepted.
    assert_eq!(c.resolve_bots(&registered[..256]).unwrap().len(), 256);
}

const SETTLED: &str = r#"name = "class"
bots = ["ada", "bob", "cy", "dee"]
stop = "settled"
budget = 400
repetitions = 100

[games.schocken]
margin = 0.05

[games.zokken]
settings = { rounds = 10 }
"#;

#[test]
fn a_settled_league_reads_its_stop_budget_and_margins() {
    let c = LeagueConfig::from_toml(SETTLED).unwrap();
    assert_eq!(c.stop, Stop::Settled);
    assert_eq!(c.budget, Some(400));
    let margins = c.margins();
    assert_eq!(margins.get(Game::Schocken), 0.05);
    assert_eq!(
        margins.get(Game::Sjokken),
        Margins::default_of(Game::Sjokken)
    );
    assert_eq!(margins.get(Game::Zokken), Margins::default_of(Game::Zokken));
    // The default: the fixed schedule, no budget.
    let fixed = LeagueConfig::from_toml(FILE).unwrap();
    assert_eq!((fixed.stop, fixed.budget), (Stop::Fixed, None));
    // A budget within the schedule passes; above it is refused naming the field and line.
    assert_eq!(c.check_budget(400), Ok(()));
    let Err(LeagueConfigError::Field {
        field,
        line,
        message,
    }) = c.check_budget(399)
    else {
        panic!("a budget above the schedule is refused");
    };
    assert_eq!((field.as_str(), line), ("budget", 4));
    assert!(
        message.contains("400") && message.contains("399"),
        "{message}"
    );
}

#[test]
fn bad_stops_margins_and_budgets_are_refused_naming_the_field_and_line() {
    let with = |from: &str, to: &str| SETTLED.replace(from, to);
    let cases = [
        (
            with("\"settled\"", "\"sometimes\""),
            "stop",
            3,
            "unknown stop \"sometimes\"",
        ),
        (with("\"settled\"", "7"), "", 3, "invalid type"),
        (
            with("margin = 0.05", "margin = -0.01"),
            "games.schocken.margin",
            8,
            "-0.01 is not a margin",
        ),
        (
            with("margin = 0.05", "margin = \"small\""),
            "games.schocken.margin",
            8,
            "\"small\" is not a margin",
        ),
        (
            with("margin = 0.05", "margin = 1e9"),
            "games.schocken.margin",
            8,
            "0..=1000",
        ),
        // Tables of 4 (Schocken) play 4 seat orders per set; Zokken's tables of 2, 2.
        (
            with("budget = 400", "budget = 3"),
            "budget",
            4,
            "below one set",
        ),
        (
            with("budget = 400", "budget = 0"),
            "budget",
            4,
            "legal are 4..=",
        ),
        (
            with("budget = 400", "budget = -5"),
            "budget",
            4,
            "below one set",
        ),
        (
            with("budget = 400", "budget = 300000"),
            "budget",
            4,
            "legal are 4..=200000",
        ),
        (
            with("stop = \"settled\"", "stop = \"fixed\""),
            "budget",
            4,
            "only for stop = \"settled\"",
        ),
    ];
    for (text, want_field, want_line, want) in cases {
        match LeagueConfig::from_toml(&text) {
            Err(LeagueConfigError::Field {
                field,
                line,
                message,
            }) => {
                assert_eq!((field.as_str(), line), (want_field, want_line), "{message}");
                assert!(message.contains(want), "{message:?} lacks {want:?}");
            }
            Err(LeagueConfigError::Syntax { line, message }) => {
                assert_eq!(("", line), (want_field, want_line), "{message}");
                assert!(message.contains(want), "{message:?} lacks {want:?}");
            }
            Ok(_) => panic!("accepted: {text}"),
        }
    }
    // The edge: exactly one set is a legal budget.
    let one_set = LeagueConfig::from_toml(&with("budget = 400", "budget = 4")).unwrap();
    assert_eq!(one_set.budget, Some(4));
}

/// A Schocken match at a table of two with adjusted scores: `winner` places first.
fn adjusted_match(
    ordinal: u32,
    (winner, loser): (&str, &str),
    adjusted: (f64, f64),
) -> PlayedMatch {
    let seat = |bot: &str, place: u8, adjusted: f64| PlayedSeat {
        bot: bot.to_owned(),
        place,
        chips: None,
        adjusted: Some(adjusted),
    };
    PlayedMatch {
        ordinal,
        game: Game::Schocken,
        set: ordinal,
        rounds: 1,
        seats: vec![seat(winner, 1, adjusted.0), seat(loser, 2, adjusted.1)],
    }
}

#[test]
fn neighbours_are_separated_equivalent_or_open() {
    // ada loses a third of her matches against bob, as adjusted scores say.
    let played: Vec<PlayedMatch> = (0..300)
        .map(|i| {
            if i % 3 == 0 {
                adjusted_match(i, ("bob", "ada"), (0.1, 0.9))
            } else {
                adjusted_match(i, ("ada", "bob"), (0.2, 0.8))
            }
        })
        .collect();
    let s = standings(&played);
    let g = &s.games[0];
    assert_eq!(g.basis, ScoreBasis::Adjusted);
    assert_eq!(g.bots[0].bot, "ada");
    let n = &g.neighbours[0];
    assert_eq!(
        (n.above.as_str(), n.below.as_str(), n.sets),
        ("ada", "bob", 300)
    );
    assert!(n.difference > 0.0 && n.sequence.low > 0.0, "{n:?}");
    assert_eq!(n.verdict, PairVerdict::Separated);
    assert!(g.settled());
    // Too few sets for a verdict.
    let few = standings(&played[..15]);
    assert_eq!(few.games[0].neighbours[0].verdict, PairVerdict::Open);
    assert!(!few.games[0].settled());
    // Two bots alike: open under a small margin, equivalent under a wide one.
    let alike: Vec<PlayedMatch> = (0..400)
        .map(|i| {
            let d = [0.3, -0.3, 0.1, -0.1][i as usize % 4];
            adjusted_match(i, ("ada", "bob"), (0.5 + d, 0.5 - d))
        })
        .collect();
    let open = standings(&alike);
    assert_eq!(open.games[0].neighbours[0].verdict, PairVerdict::Open);
    let mut wide = Margins::default();
    wide.set(Game::Schocken, 0.3);
    let eq = super::standings_with(&alike, &wide);
    let n = &eq.games[0].neighbours[0];
    assert_eq!(n.verdict, PairVerdict::Equivalent, "{n:?}");
    assert!(n.sequence.low >= -0.3 && n.sequence.high <= 0.3);
}

#[test]
fn raw_scores_are_used_until_every_match_has_adjusted_ones() {
    let mut played: Vec<PlayedMatch> = (0..40)
        .map(|i| adjusted_match(i, ("ada", "bob"), (0.6, 0.4)))
        .collect();
    // Adjusted scores say bob is better, but one match lacks them: raw order, ada first.
    played[7].seats[0].adjusted = None;
    let s = standings(&played);
    assert_eq!(s.games[0].basis, ScoreBasis::Raw);
    assert_eq!(s.games[0].bots[0].bot, "ada");
    assert!(s.games[0].bots[0].adjusted.is_none());
    played[7].seats[0].adjusted = Some(0.6);
    let s = standings(&played);
    assert_eq!(s.games[0].basis, ScoreBasis::Adjusted);
    assert_eq!(s.games[0].bots[0].bot, "bob");
    // Raw beside adjusted: bob's raw loss rate is 1, his adjusted 0.4.
    let bob = &s.games[0].bots[0];
    assert_eq!(bob.loss_rate.unwrap().estimate, 1.0);
    assert!((bob.adjusted.unwrap().estimate - 0.4).abs() < 1e-12);
}
