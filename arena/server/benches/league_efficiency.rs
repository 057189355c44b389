//! How many league matches it takes to rank six built-in players of known, distinct
//! strength correctly, with duplicate sets and with independent seeds.
//!
//! Run: `cargo bench -p knobel-arena --bench league_efficiency` (a few minutes on 2 cores).
//! `-- ladder` instead measures the field itself (one long league per game, with ratings,
//! scores and the paired difference of each step); `-- variance` how much of each score's
//! variance duplicate sets cancel (finer per-match scores for Schocken and Sjokken: rounds
//! lost, tokens taken, halves lost); `-- sync` how long a set's seat orders play the same
//! rounds (docs/leagues.md, "Finer scores"). Options (after `--`): `--ladder
//! handicap|noisy|a,b,c,…` (the field, strongest first: by default the deterministic
//! `heuristic, handicap-1, handicap-2, handicap-3, timid, handicap-4`; `noisy` the seeded
//! `heuristic, heuristic-80 … heuristic-20, random`; or any built-in names, for `ladder`),
//! `--leagues R` (default 200), `--max-reps N` (default per game), `--games
//! schocken,zokken`, `--threads T` (default: available parallelism, at most 2), `--shares
//! a,b,c,d` (with `--ladder noisy`: other random shares for its four middle players, to
//! choose a ladder), `--zokken-rounds R` (Zokken matches of R rounds; with the preset's 100
//! one set already suffices).
//!
//! Method (benches/support/efficiency.rs): the six players, strongest first, play a round
//! robin of one game (4-seat tables for Schocken and Sjokken, 2-seat for Zokken; the default
//! presets). A league of `n` repetitions is the first `n` repetitions of the schedule
//! (`expand` puts repetitions first, so a longer league extends a shorter one with the same
//! seed). For each of `R` league seeds and each `n` on the grid three orderings are
//! checked: the per-game standings' own (mean score), the match-by-match Weng-Lin rating
//! (conservative), and a Weng-Lin rating with one update per duplicate set: are all six in
//! the true order, and what share of the five adjacent pairs is. **Duplicate**: the
//! schedule as `expand` makes it (the seat orders of a set share its seed).
//! **Independent**: the same matches, each with a fresh seed, judged by the same orderings.

use std::sync::OnceLock;
use std::time::Instant;

use knobel_arena::league::simulate::play_schedule;
use knobel_arena::league::{PlayedMatch, ScheduledMatch, standings};
use knobel_engine::Game;
use knobel_engine::policy::{NoisyHeuristicPolicy, Policy, by_name};

#[path = "support/table.rs"]
mod table;
use table::score_cell;

#[path = "support/efficiency.rs"]
mod measure;
use measure::{
    Counts, HANDICAPPED, SCORES, Setup, add, independent, mean_scores, play, stats, table_size,
};

#[path = "support/ladder.rs"]
mod ladder;
use ladder::LADDER;

/// `--ladder noisy|handicap`: the field measured (default `handicap`).
static FIELD: OnceLock<Vec<&'static str>> = OnceLock::new();

/// The players measured, strongest first.
fn field() -> &'static [&'static str] {
    FIELD.get_or_init(|| HANDICAPPED.to_vec())
}

/// What is measured in `game`: [`field`], and `--zokken-rounds`.
fn setup(game: Game) -> Setup<'static> {
    Setup {
        game,
        field: field(),
        zokken_rounds: ZOKKEN_ROUNDS.get().copied(),
    }
}

/// The repetition counts the standings are checked at.
const GRID: [u32; 20] = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 24, 32, 40, 48, 56, 64,
];

/// `--shares a,b,c,d`: try other random shares for the four middle players (to choose the
/// ladder; the names then keep their places, not their meaning).
static SHARES: OnceLock<Vec<f64>> = OnceLock::new();

fn builtin(name: &str, seed: u64) -> Box<dyn Policy + Send> {
    if let Some(shares) = SHARES.get()
        && let Some(i) = LADDER[1..5].iter().position(|b| *b == name)
    {
        return Box::new(NoisyHeuristicPolicy::new(LADDER[i + 1], shares[i], seed));
    }
    by_name(name, seed).expect("a built-in player")
}

/// `--zokken-rounds R`: Zokken matches of R rounds instead of the preset's.
static ZOKKEN_ROUNDS: OnceLock<u32> = OnceLock::new();

/// Plays `schedule` on `threads` threads (contiguous chunks), results in schedule order.
fn play_parallel(schedule: &[ScheduledMatch], threads: usize) -> Vec<PlayedMatch> {
    let chunk = schedule.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = schedule
            .chunks(chunk)
            .map(|part| s.spawn(move || play_schedule(part, &builtin)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a player thread"))
            .collect()
    })
}

struct Args {
    ladder: bool,
    variance: bool,
    sync: bool,
    leagues: u64,
    max_reps: Option<u32>,
    games: Vec<Game>,
    threads: usize,
}

fn args() -> Args {
    let mut out = Args {
        ladder: false,
        variance: false,
        sync: false,
        leagues: 200,
        max_reps: None,
        games: Game::ALL.to_vec(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(2)),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "ladder" => out.ladder = true,
            "variance" => out.variance = true,
            "sync" => out.sync = true,
            "--ladder" => {
                let ladder = match it.next().as_deref() {
                    Some("noisy") => LADDER.to_vec(),
                    Some("handicap") => HANDICAPPED.to_vec(),
                    Some(list) => list
                        .split(',')
                        .map(|b| &*Box::leak(b.to_owned().into_boxed_str()))
                        .collect(),
                    other => panic!("--ladder noisy|handicap, not {other:?}"),
                };
                println!("field: {}", ladder.join(", "));
                FIELD.set(ladder).expect("once");
            }
            "--leagues" => out.leagues = it.next().and_then(|v| v.parse().ok()).expect("R"),
            "--max-reps" => out.max_reps = it.next().and_then(|v| v.parse().ok()),
            "--shares" => {
                let shares: Vec<f64> = it
                    .next()
                    .expect("shares")
                    .split(',')
                    .map(|x| x.parse().expect("a share"))
                    .collect();
                assert_eq!(shares.len(), 4, "four shares");
                println!("middle players' random shares: {shares:?}");
                SHARES.set(shares).expect("once");
            }
            "--zokken-rounds" => {
                let r = it.next().and_then(|v| v.parse().ok()).expect("rounds");
                println!("zokken matches of {r} rounds");
                ZOKKEN_ROUNDS.set(r).expect("once");
            }
            "--threads" => out.threads = it.next().and_then(|v| v.parse().ok()).expect("T"),
            "--games" => {
                out.games = it
                    .next()
                    .expect("games")
                    .split(',')
                    .map(|g| {
                        *Game::ALL
                            .iter()
                            .find(|x| x.name() == g)
                            .expect("schocken, sjokken or zokken")
                    })
                    .collect()
            }
            _ => {} // `cargo bench` passes `--bench`.
        }
    }
    out
}

fn main() {
    let args = args();
    if args.ladder {
        for &game in &args.games {
            ladder(game, args.max_reps.unwrap_or(40), args.threads);
        }
    } else if args.variance {
        for &game in &args.games {
            variance(game, &args);
        }
    } else if args.sync {
        for &game in &args.games {
            sync(game, &args);
        }
    } else {
        for &game in &args.games {
            efficiency(game, &args);
        }
    }
}

/// One long league: each player's rating, score, and the paired difference to the next.
fn ladder(game: Game, repetitions: u32, threads: usize) {
    let started = Instant::now();
    let played = play_parallel(&setup(game).schedule(1, repetitions), threads);
    let s = standings(&played);
    let g = &s.games[0];
    println!(
        "\n{} ({} matches, {repetitions} duplicate sets per table, {:.0} s)",
        game.name(),
        g.matches,
        started.elapsed().as_secs_f64()
    );
    println!(
        "| player | rating μ | conservative | score (95% CI) | vs next: paired diff (95% CI) |"
    );
    println!("|---|---|---|---|---|");
    for (i, bot) in field().iter().enumerate() {
        let b = g.bots.iter().find(|b| b.bot == *bot).expect("a rated bot");
        let place = g.bots.iter().position(|b| b.bot == *bot).expect("ranked") + 1;
        let score = score_cell(b);
        let next = field().get(i + 1).map_or(String::from("–"), |next| {
            let p = g.pair(bot, next).expect("a pair");
            // Shown as this player's score minus the next one's.
            let d = g.paired_difference(bot, next).expect("a pair");
            let (e, lo, hi) = (d.estimate, d.low, d.high);
            let unit = if game == Game::Zokken { "" } else { " pp" };
            let k = if game == Game::Zokken { 1.0 } else { 100.0 };
            format!(
                "{:+.1}{unit} ({:+.1}…{:+.1}), {} sets",
                k * e,
                k * lo,
                k * hi,
                p.sets
            )
        });
        println!(
            "| {place}. {bot} | {:.2} | {:.2} | {score} | {next} |",
            b.mu, b.conservative
        );
    }
}

fn efficiency(game: Game, args: &Args) {
    let started = Instant::now();
    let max_reps = args.max_reps.unwrap_or(match game {
        Game::Zokken => 24,
        _ => 64,
    });
    let grid: Vec<u32> = GRID.iter().copied().filter(|&r| r <= max_reps).collect();
    let grid = &grid[..];
    let setup = setup(game);
    let per_rep = setup.schedule(0, 1).len();
    let stats = stats(game);
    let zero = || -> Counts { vec![vec![vec![(0, 0); stats.len()]; grid.len()]; 2] };
    let tally = |l: u64| -> Counts { setup.tally(l, grid, &builtin) };
    let threads = args.threads.max(1) as u64;
    let leagues = args.leagues;
    let totals: Counts = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let tally = &tally;
                s.spawn(move || {
                    let mut sum = zero();
                    for l in (t..leagues).step_by(threads as usize) {
                        add(&mut sum, &tally(1000 + l));
                    }
                    sum
                })
            })
            .collect();
        let mut sum = zero();
        for h in handles {
            add(&mut sum, &h.join().expect("a league thread"));
        }
        sum
    });
    println!(
        "\n{} ({} leagues per point, tables of {}, {per_rep} matches per repetition, {:.0} s)",
        game.name(),
        leagues,
        table_size(game),
        started.elapsed().as_secs_f64()
    );
    let pct = |x: u64, n: u64| 100.0 * x as f64 / n as f64;
    for (k, stat) in stats.iter().enumerate() {
        println!("\nordered by {stat}:");
        println!(
            "| sets per table | matches | all six, duplicate | all six, independent | adjacent pairs, duplicate | adjacent pairs, independent |"
        );
        println!("|---|---|---|---|---|---|");
        for (i, &r) in grid.iter().enumerate() {
            let (d, ind) = (totals[0][i][k], totals[1][i][k]);
            println!(
                "| {r} | {} | {:.1}% | {:.1}% | {:.1}% | {:.1}% |",
                r as usize * per_rep,
                pct(d.0, leagues),
                pct(ind.0, leagues),
                pct(d.1, 5 * leagues),
                pct(ind.1, 5 * leagues)
            );
        }
    }
    println!("\n{} summary: N (matches) for 95%", game.name());
    println!(
        "| ordering | all six: duplicate | independent | ratio | adjacent pairs: duplicate | independent | ratio |"
    );
    println!("|---|---|---|---|---|---|---|");
    let show = |n: Option<usize>| {
        n.map_or(format!("> {}", max_reps as usize * per_rep), |n| {
            n.to_string()
        })
    };
    for (k, stat) in stats.iter().enumerate() {
        let mut cells = Vec::new();
        for pick in 0..2 {
            let first = |mode: usize| {
                grid.iter().enumerate().find_map(|(i, &r)| {
                    let x = totals[mode][i][k];
                    let share = if pick == 0 {
                        pct(x.0, leagues)
                    } else {
                        pct(x.1, 5 * leagues)
                    };
                    (share >= 95.0).then_some(r as usize * per_rep)
                })
            };
            let (d, ind) = (first(0), first(1));
            let ratio = match (d, ind) {
                (Some(d), Some(i)) => format!("{:.2}", d as f64 / i as f64),
                _ => String::from("n/a"),
            };
            cells.push(format!("{} | {} | {ratio}", show(d), show(ind)));
        }
        println!("| {stat} | {} | {} |", cells[0], cells[1]);
    }
}

/// `variance`: how much of the luck duplicate sets cancel, score by score. For each of
/// `--leagues` league seeds, a league of `--max-reps` (default 1) sets per table is played
/// as duplicate sets and with independent seeds; for every two adjacent players of the
/// field, the difference of their mean scores (stronger minus weaker) is taken. Printed per
/// score of [`SCORES`] and pair: the mean and standard deviation of that difference over the
/// leagues in each design, the ratio of the variances (duplicate over independent: the
/// share of matches duplicate sets need for the same precision), and `z`, the mean over the
/// standard deviation (how clearly one league separates the pair; the smallest `z` decides
/// when all six are in order).
fn variance(game: Game, args: &Args) {
    let started = Instant::now();
    let setup = setup(game);
    let reps = args.max_reps.unwrap_or(1);
    let scores = stats(game).len() - measure::STATS.len() + 1;
    let threads = args.threads.max(1) as u64;
    let leagues = args.leagues;
    // Per league, per mode (duplicate, independent), per score, per adjacent pair.
    let diffs: Vec<Vec<Vec<Vec<f64>>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let setup = &setup;
                s.spawn(move || {
                    let mut out = Vec::new();
                    for l in (t..leagues).step_by(threads as usize) {
                        let base = setup.schedule(1000 + l, reps);
                        let modes = [base.clone(), independent(base)].map(|schedule| {
                            let played = play(&schedule, &builtin);
                            (0..scores)
                                .map(|k| {
                                    let means = mean_scores(k, &played);
                                    field()
                                        .windows(2)
                                        .map(|w| means[w[0]] - means[w[1]])
                                        .collect()
                                })
                                .collect()
                        });
                        out.push(modes.to_vec());
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a league thread"))
            .collect()
    });
    println!(
        "\n{} ({leagues} leagues of {reps} sets per table, {:.0} s): difference of mean scores, stronger minus weaker",
        game.name(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "| score | pair | mean, duplicate | independent | sd, duplicate | independent | variance ratio | z, duplicate | independent |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let n = diffs.len() as f64;
    for (k, score) in SCORES[..scores].iter().enumerate() {
        for (p, pair) in field().windows(2).enumerate() {
            let stat = |mode: usize| {
                let v: Vec<f64> = diffs.iter().map(|l| l[mode][k][p]).collect();
                let mean = v.iter().sum::<f64>() / n;
                let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
                (mean, var.sqrt())
            };
            let ((md, sd), (mi, si)) = (stat(0), stat(1));
            // Lower scores are better: the stronger player's difference is negative.
            println!(
                "| {score} | {} – {} | {md:.3} | {mi:.3} | {sd:.3} | {si:.3} | {:.2} | {:.2} | {:.2} |",
                pair[0],
                pair[1],
                (sd * sd) / (si * si),
                -md / sd,
                -mi / si
            );
        }
    }
}

/// `sync`: how long the seat orders of a duplicate set play the same game. For `--leagues`
/// leagues of one set per table, per round number: of the sets whose every match reached
/// it, the share in which every match has the same starter and seats in play, and of those
/// the share with the same round loser as well.
fn sync(game: Game, args: &Args) {
    let setup = setup(game);
    const ROUNDS: usize = 8;
    let (mut reached, mut same, mut same_loser) = ([0u64; ROUNDS], [0u64; ROUNDS], [0u64; ROUNDS]);
    let (mut rounds, mut matches) = (0u64, 0u64);
    for l in 0..args.leagues {
        let played = play(&setup.schedule(1000 + l, 1), &builtin);
        let mut sets: std::collections::BTreeMap<u32, Vec<&measure::Rounds>> = Default::default();
        for p in &played {
            sets.entry(p.result.set).or_default().push(&p.rounds);
            rounds += u64::from(p.rounds.played);
            matches += 1;
        }
        for set in sets.values() {
            for r in 0..ROUNDS {
                let Some(keys) = set
                    .iter()
                    .map(|m| m.keys.get(r))
                    .collect::<Option<Vec<_>>>()
                else {
                    break;
                };
                reached[r] += 1;
                if keys.iter().all(|k| (k.0, k.1) == (keys[0].0, keys[0].1)) {
                    same[r] += 1;
                    same_loser[r] += u64::from(keys.iter().all(|k| k.2 == keys[0].2));
                }
            }
        }
    }
    println!(
        "\n{} ({} leagues of one set per table, {:.1} rounds per match)",
        game.name(),
        args.leagues,
        rounds as f64 / matches as f64
    );
    println!(
        "| round | sets reaching it | same starter and seats in play in every match of the set | and the same loser |"
    );
    println!("|---|---|---|---|");
    for r in 0..ROUNDS {
        let pct = |x: u64| 100.0 * x as f64 / reached[r].max(1) as f64;
        println!(
            "| {} | {} | {:.1}% | {:.1}% |",
            r + 1,
            reached[r],
            pct(same[r]),
            pct(same_loser[r])
        );
    }
}
