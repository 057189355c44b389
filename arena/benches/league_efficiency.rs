//! How many league matches it takes to rank six built-in players of known, distinct
//! strength correctly, with duplicate sets and with independent seeds.
//!
//! Run: `cargo bench -p knobel-arena --bench league_efficiency` (a few minutes on 2 cores).
//! `-- ladder` instead measures the field itself (one long league per game, with ratings,
//! scores and the paired difference of each step). Options (after `--`): `--ladder
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
use measure::{Counts, HANDICAPPED, STATS, Setup, add, table_size};

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
    leagues: u64,
    max_reps: Option<u32>,
    games: Vec<Game>,
    threads: usize,
}

fn args() -> Args {
    let mut out = Args {
        ladder: false,
        leagues: 200,
        max_reps: None,
        games: Game::ALL.to_vec(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(2)),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "ladder" => out.ladder = true,
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
    let zero = || -> Counts { vec![vec![vec![(0, 0); STATS.len()]; grid.len()]; 2] };
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
    for (k, stat) in STATS.iter().enumerate() {
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
    for (k, stat) in STATS.iter().enumerate() {
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
