//! What luck-adjusted scores and `stop = "settled"` save: six built-in players of known,
//! distinct strength (the deterministic field of `league_efficiency`), independent seeds,
//! played in-process (docs/leagues.md, "Settled standings").
//!
//! Run: `cargo bench -p knobel-arena --bench league_settled` (all three games), or `--
//! validity` for the error rate under continuous monitoring. Options after `--`: `--games
//! schocken,sjokken,zokken`, `--leagues R`, `--zokken-rounds N` (default 10),
//! `--sets N` (the settled league's sets per table, its budget being its whole schedule:
//! default 64, Zokken 200; in `validity`, the sets each league plays: default 100, Zokken
//! 400), `--fixed-sets N` (the largest fixed schedule measured: default 12, Zokken 24),
//! `--margin M` (the settled leagues' equivalence margin instead of the game's default),
//! `--threads T` (default: available parallelism, at most 2). `--leagues` defaults to 50,
//! in `validity` to 200.
//!
//! Per league seed, on the same independent schedule (each match its own seed):
//! - **fixed**: the first `n` sets per table (n on a grid), ordered by the standings with
//!   adjusted scores and with raw ones (the same matches, their adjusted scores removed); the
//!   same for the duplicate schedule of that seed ("trusted fields"); and, for every two
//!   adjacent players of the field, the variance of their per-set score difference (the
//!   observation of the confidence sequence), adjusted over raw;
//! - **settled**: the league of `--sets` sets per table with `stop = "settled"`, the default
//!   margins and adjusted scores, played adaptively as the arena's scheduler plays it
//!   (`simulate::play_settled_with`, one match at a time); a match it shares with the fixed
//!   league is played once. Its order counts as right when every two players in the wrong
//!   order are within a run of neighbours judged equivalent (the league claims no order
//!   there).
//!
//! `validity`: leagues of identical players (`twin-a`, `twin-b`, …: each the deterministic
//! `heuristic`), two at Zokken's tables of two, four at the tables of four (with other
//! players at the table the twins would not be alike: a set's cyclic seat orders always
//! seat `twin-b` right after `twin-a`, so each meets the others from its own side); the
//! standings are read after every set, and a league counts if the confidence sequence of
//! `twin-a` and `twin-b` ever excludes zero (would be declared separated), adjusted and
//! raw.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use knobel_arena::league::adaptive::{Ended, SettledOptions};
use knobel_arena::league::confidence::MIN_OBSERVATIONS;
use knobel_arena::league::simulate::{play_match_adjusted, play_settled_with};
use knobel_arena::league::standings::{GameStandings, score as raw_score};
use knobel_arena::league::{Margins, PairVerdict, PlayedMatch, ScheduledMatch, standings};
use knobel_engine::Game;
use knobel_engine::policy::{Policy, by_name};

// Shared with `league_efficiency`; this bench takes its field and schedules only.
#[allow(dead_code)]
#[path = "support/efficiency.rs"]
mod measure;
use measure::{HANDICAPPED, Setup, independent, table_size};

/// Sets per table at which the fixed schedule is judged.
const GRID: [u32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 24, 32];

/// The players: built-in players by name; `twin-…` plays the heuristic.
fn builtin(name: &str, seed: u64) -> Box<dyn Policy + Send> {
    let name = if name.starts_with("twin-") {
        "heuristic"
    } else {
        name
    };
    by_name(name, seed).expect("a built-in player")
}

struct Args {
    validity: bool,
    leagues: u64,
    games: Vec<Game>,
    zokken_rounds: u32,
    sets: Option<u32>,
    fixed_sets: Option<u32>,
    margin: Option<f64>,
    threads: usize,
}

impl Args {
    /// The sets per table of a settled league, or of a validity league, of `game`.
    fn sets(&self, game: Game) -> u32 {
        self.sets.unwrap_or(match (game, self.validity) {
            (Game::Zokken, false) => 200,
            (Game::Zokken, true) => 400,
            (_, false) => 64,
            (_, true) => 100,
        })
    }

    /// The largest fixed schedule measured, in sets per table.
    fn fixed_sets(&self, game: Game) -> u32 {
        self.fixed_sets.unwrap_or(match game {
            Game::Zokken => 24,
            _ => 12,
        })
    }

    /// The equivalence margins of the settled leagues.
    fn margins(&self) -> Margins {
        let mut margins = Margins::default();
        if let Some(m) = self.margin {
            Game::ALL.iter().for_each(|&g| margins.set(g, m));
        }
        margins
    }
}

fn args() -> Args {
    let mut out = Args {
        validity: false,
        leagues: 0,
        games: Game::ALL.to_vec(),
        zokken_rounds: 10,
        sets: None,
        fixed_sets: None,
        margin: None,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(2)),
    };
    let mut it = std::env::args().skip(1);
    let number = |it: &mut dyn Iterator<Item = String>, flag: &str| -> u64 {
        it.next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{flag} takes a number"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "validity" => out.validity = true,
            "--leagues" => out.leagues = number(&mut it, "--leagues"),
            "--zokken-rounds" => out.zokken_rounds = number(&mut it, "--zokken-rounds") as u32,
            "--sets" => out.sets = Some(number(&mut it, "--sets") as u32),
            "--fixed-sets" => out.fixed_sets = Some(number(&mut it, "--fixed-sets") as u32),
            "--margin" => {
                let m = it.next().and_then(|v| v.parse().ok());
                out.margin = Some(m.expect("--margin takes a number"));
            }
            "--threads" => out.threads = number(&mut it, "--threads").max(1) as usize,
            "--games" => {
                let games = it.next().expect("--games takes a list");
                out.games = games
                    .split(',')
                    .map(|g| {
                        *Game::ALL
                            .iter()
                            .find(|x| x.name() == g)
                            .expect("schocken, sjokken or zokken")
                    })
                    .collect();
            }
            _ => {} // `cargo bench` passes `--bench`.
        }
    }
    if out.leagues == 0 {
        out.leagues = if out.validity { 200 } else { 50 };
    }
    out
}

fn main() {
    let args = args();
    println!(
        "{} leagues, zokken matches of {} rounds, {} threads",
        args.leagues, args.zokken_rounds, args.threads
    );
    for &game in &args.games {
        if args.validity {
            validity(game, &args);
        } else {
            efficiency(game, &args);
        }
    }
}

/// Runs `league` for seeds `1000..1000 + leagues` on `threads` threads; results in seed
/// order.
fn per_league<T: Send>(args: &Args, league: &(dyn Fn(u64) -> T + Sync)) -> Vec<T> {
    let threads = args.threads as u64;
    let mut out: Vec<(u64, T)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    (t..args.leagues)
                        .step_by(threads as usize)
                        .map(|l| (l, league(1000 + l)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a league thread"))
            .collect()
    });
    out.sort_by_key(|(l, _)| *l);
    out.into_iter().map(|(_, t)| t).collect()
}

/// `results` with their adjusted scores removed: what the standings order by raw scores.
fn raw(results: &[PlayedMatch]) -> Vec<PlayedMatch> {
    let mut out = results.to_vec();
    for seat in out.iter_mut().flat_map(|m| &mut m.seats) {
        seat.adjusted = None;
    }
    out
}

/// Whether the standings of `results` order `field` exactly.
fn in_order(results: &[PlayedMatch], field: &[&str]) -> bool {
    let s = standings(results);
    s.games[0]
        .bots
        .iter()
        .map(|b| b.bot.as_str())
        .eq(field.iter().copied())
}

/// Whether `g` orders `field` right, neighbours judged equivalent counting as right
/// whichever way they stand: the standings cut into runs of neighbours joined by
/// "equivalent", every two players of `field` in different runs must be in order.
fn right_up_to_equivalence(g: &GameStandings, field: &[&str]) -> bool {
    let mut run = HashMap::new();
    let mut at = 0;
    for (i, b) in g.bots.iter().enumerate() {
        if i > 0 && g.neighbours[i - 1].verdict != PairVerdict::Equivalent {
            at += 1;
        }
        run.insert(b.bot.as_str(), at);
    }
    field.windows(2).all(|w| run[w[0]] <= run[w[1]])
}

/// A running sum of observations, for their variance.
#[derive(Clone, Copy, Default)]
struct Moments {
    n: f64,
    sum: f64,
    squares: f64,
}

impl Moments {
    fn push(&mut self, x: f64) {
        self.n += 1.0;
        self.sum += x;
        self.squares += x * x;
    }

    fn add(&mut self, o: &Moments) {
        self.n += o.n;
        self.sum += o.sum;
        self.squares += o.squares;
    }

    fn variance(&self) -> f64 {
        (self.squares - self.sum * self.sum / self.n) / (self.n - 1.0)
    }
}

/// Per adjacent pair of `field`: the moments of its per-set score difference (the mean over
/// the set's matches of the stronger's score minus the weaker's), raw and adjusted.
fn pair_moments(results: &[PlayedMatch], field: &[&str]) -> Vec<[Moments; 2]> {
    let mut sets: BTreeMap<u32, Vec<&PlayedMatch>> = BTreeMap::new();
    for m in results {
        sets.entry(m.set).or_default().push(m);
    }
    let seat = |m: &PlayedMatch, bot: &str| m.seats.iter().position(|s| s.bot == bot);
    field
        .windows(2)
        .map(|w| {
            let mut out = [Moments::default(); 2];
            for set in sets.values() {
                let mut sums = [0.0; 2];
                for m in set {
                    let (Some(a), Some(b)) = (seat(m, w[0]), seat(m, w[1])) else {
                        continue;
                    };
                    sums[0] += raw_score(m, a) - raw_score(m, b);
                    let adjusted = |i: usize| m.seats[i].adjusted.expect("adjusted");
                    sums[1] += adjusted(a) - adjusted(b);
                }
                if seat(set[0], w[0]).is_some() && seat(set[0], w[1]).is_some() {
                    let n = set.len() as f64;
                    out[0].push(sums[0] / n);
                    out[1].push(sums[1] / n);
                }
            }
            out
        })
        .collect()
}

/// One league seed's figures.
struct Outcome {
    /// Per grid point: all six in order with independent seeds (adjusted, raw) and with
    /// duplicate sets (adjusted, raw).
    fixed: Vec<[bool; 4]>,
    /// Per adjacent pair: the per-set difference's moments, raw and adjusted (independent).
    moments: Vec<[Moments; 2]>,
    /// The settled league: matches played, why it ended, right up to equivalence, exactly.
    settled: (usize, Ended, bool, bool),
}

fn setup(game: Game, args: &Args) -> Setup<'static> {
    Setup {
        game,
        field: &HANDICAPPED,
        zokken_rounds: Some(args.zokken_rounds),
    }
}

/// Plays league seed `seed` of `game`: the fixed schedules and the settled league.
fn league(game: Game, args: &Args, grid: &[u32], seed: u64) -> Outcome {
    let setup = setup(game, args);
    let per_set = setup.schedule(0, 1).len();
    let fixed_sets = *grid.last().expect("a grid");
    let sets = args.sets(game);
    let schedule = independent(setup.schedule(seed, sets.max(fixed_sets)));
    let fixed_len = fixed_sets as usize * per_set;
    let mut cache: HashMap<u32, PlayedMatch> = HashMap::new();
    let seeded: Vec<PlayedMatch> = schedule[..fixed_len]
        .iter()
        .map(|m| play_match_adjusted(m, &builtin))
        .collect();
    cache.extend(seeded.iter().map(|m| (m.ordinal, m.clone())));
    let duplicate: Vec<PlayedMatch> = setup
        .schedule(seed, fixed_sets)
        .iter()
        .map(|m| play_match_adjusted(m, &builtin))
        .collect();
    let (seeded_raw, duplicate_raw) = (raw(&seeded), raw(&duplicate));
    let field = setup.field;
    let fixed = grid
        .iter()
        .map(|&n| {
            let n = n as usize * per_set;
            [&seeded, &seeded_raw, &duplicate, &duplicate_raw]
                .map(|results| in_order(&results[..n], field))
        })
        .collect();
    let settled_schedule = &schedule[..sets as usize * per_set];
    let options = SettledOptions {
        games: vec![game],
        margins: args.margins(),
        budget: None,
    };
    let mut play = |m: &ScheduledMatch| {
        cache
            .remove(&m.ordinal)
            .unwrap_or_else(|| play_match_adjusted(m, &builtin))
    };
    let settled = play_settled_with(settled_schedule, &options, &mut play);
    let s = knobel_arena::league::standings_with(&settled.played, &options.margins);
    Outcome {
        fixed,
        moments: pair_moments(&seeded, field),
        settled: (
            settled.played.len(),
            settled.ended,
            right_up_to_equivalence(&s.games[0], field),
            in_order(&settled.played, field),
        ),
    }
}

/// The fixed schedules' and the settled league's figures of `game`.
fn efficiency(game: Game, args: &Args) {
    let started = Instant::now();
    let grid: Vec<u32> = GRID
        .iter()
        .copied()
        .filter(|&n| n <= args.fixed_sets(game))
        .collect();
    let outcomes = per_league(args, &|seed| league(game, args, &grid, seed));
    let per_set = setup(game, args).schedule(0, 1).len();
    println!(
        "\n## {} ({} leagues, tables of {}, {per_set} matches per set per table, {:.0} s)",
        title(game, args),
        outcomes.len(),
        table_size(game),
        started.elapsed().as_secs_f64()
    );
    let fixed95 = print_fixed(&outcomes, &grid, per_set);
    print_variance(&outcomes);
    let margin = args.margins().get(game);
    print_settled(
        &outcomes,
        fixed95,
        args.sets(game) as usize * per_set,
        margin,
    );
}

fn title(game: Game, args: &Args) -> String {
    match game {
        Game::Zokken => format!("Zokken, {} rounds", args.zokken_rounds),
        _ => game.name().to_owned(),
    }
}

const FIXED: [&str; 4] = [
    "independent, adjusted",
    "independent, raw",
    "duplicate, adjusted",
    "duplicate, raw",
];

/// Prints the share of leagues with all six in order per grid point, and the matches for
/// 95%; returns those of independent adjusted and raw (`None`: not within the grid).
fn print_fixed(outcomes: &[Outcome], grid: &[u32], per_set: usize) -> [Option<usize>; 2] {
    let leagues = outcomes.len() as f64;
    let share = |i: usize, k: usize| {
        100.0 * outcomes.iter().filter(|o| o.fixed[i][k]).count() as f64 / leagues
    };
    println!("\nFixed schedule, all six in order:\n");
    println!("| sets per table | matches | {} |", FIXED.join(" | "));
    println!("|---|---|---|---|---|---|");
    for (i, n) in grid.iter().enumerate() {
        let cells: Vec<String> = (0..4).map(|k| format!("{:.1}%", share(i, k))).collect();
        println!(
            "| {n} | {} | {} |",
            *n as usize * per_set,
            cells.join(" | ")
        );
    }
    let first = |k: usize| {
        (0..grid.len())
            .find(|&i| share(i, k) >= 95.0)
            .map(|i| grid[i] as usize * per_set)
    };
    let show = |n: Option<usize>| {
        n.map_or(
            format!("> {}", grid.last().copied().unwrap_or(0) as usize * per_set),
            |n| n.to_string(),
        )
    };
    let ratio = |a: Option<usize>, b: Option<usize>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}", a as f64 / b as f64),
        _ => "n/a".to_owned(),
    };
    println!("\nMatches until all six are in order in 95% of leagues:\n");
    println!("| {} | adjusted / raw (independent) |", FIXED.join(" | "));
    println!("|---|---|---|---|---|");
    println!(
        "| {} | {} | {} | {} | {} |",
        show(first(0)),
        show(first(1)),
        show(first(2)),
        show(first(3)),
        ratio(first(0), first(1))
    );
    [first(0), first(1)]
}

/// Prints, per adjacent pair, the variance of the per-set difference, raw and adjusted.
fn print_variance(outcomes: &[Outcome]) {
    println!("\nPer-set score difference of adjacent players (independent, fixed schedule):\n");
    println!("| pair | sets | variance, raw | adjusted | ratio adjusted / raw |");
    println!("|---|---|---|---|---|");
    for (p, pair) in HANDICAPPED.windows(2).enumerate() {
        let mut m = [Moments::default(); 2];
        for o in outcomes {
            m[0].add(&o.moments[p][0]);
            m[1].add(&o.moments[p][1]);
        }
        let (r, a) = (m[0].variance(), m[1].variance());
        println!(
            "| {} – {} | {} | {r:.4} | {a:.4} | {:.2} |",
            pair[0],
            pair[1],
            m[0].n,
            a / r
        );
    }
}

/// Prints the settled leagues' figures, against the fixed schedule's `fixed95` (adjusted,
/// raw) matches.
fn print_settled(outcomes: &[Outcome], fixed95: [Option<usize>; 2], budget: usize, margin: f64) {
    let mut played: Vec<usize> = outcomes.iter().map(|o| o.settled.0).collect();
    played.sort_unstable();
    let n = played.len();
    let mean = played.iter().sum::<usize>() as f64 / n as f64;
    let quantile = |q: f64| played[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
    let ended = |e: Ended| outcomes.iter().filter(|o| o.settled.1 == e).count();
    let pct = |k: usize| 100.0 * k as f64 / n as f64;
    let right = outcomes.iter().filter(|o| o.settled.2).count();
    let exact = outcomes.iter().filter(|o| o.settled.3).count();
    let against =
        |f: Option<usize>| f.map_or("n/a".to_owned(), |f| format!("{:.2}", mean / f as f64));
    println!(
        "\nstop = \"settled\", adjusted scores, adaptive (margin {margin}, schedule and budget {budget} matches):\n"
    );
    println!(
        "| mean matches | median | p95 | ended settled / budget / schedule | order right (equivalent either way) | exactly right | mean / fixed raw 95% | mean / fixed adjusted 95% |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| {mean:.0} | {} | {} | {} / {} / {} | {:.1}% | {:.1}% | {} | {} |",
        quantile(0.5),
        quantile(0.95),
        ended(Ended::Settled),
        ended(Ended::Budget),
        ended(Ended::Schedule),
        pct(right),
        pct(exact),
        against(fixed95[1]),
        against(fixed95[0]),
    );
}

/// `validity`: the twins' leagues of `game`, read after every set.
fn validity(game: Game, args: &Args) {
    let started = Instant::now();
    let field: &'static [&'static str] = match table_size(game) {
        2 => &["twin-a", "twin-b"],
        _ => &["twin-a", "twin-b", "twin-c", "twin-d"],
    };
    let setup = Setup {
        game,
        field,
        zokken_rounds: Some(args.zokken_rounds),
    };
    let outcomes = per_league(args, &|seed| {
        let schedule = independent(setup.schedule(seed, args.sets(game)));
        let played: Vec<PlayedMatch> = schedule
            .iter()
            .map(|m| play_match_adjusted(m, &builtin))
            .collect();
        [played.clone(), raw(&played)].map(|results| ever_separated(&results))
    });
    let n = outcomes.len();
    let count = |k: usize| outcomes.iter().filter(|o| o[k]).count();
    let cell = |k: usize| {
        let (x, ci) = (count(k), wilson(count(k), n));
        format!(
            "{x} ({:.1}%, 95% CI {:.1}–{:.1}%)",
            100.0 * x as f64 / n as f64,
            ci.0,
            ci.1
        )
    };
    println!(
        "\n## {}: validity ({n} leagues of {} sets, {}; {:.0} s)\n",
        title(game, args),
        args.sets(game),
        field.join(", "),
        started.elapsed().as_secs_f64()
    );
    println!("| twins ever declared separated: adjusted | raw |");
    println!("|---|---|");
    println!("| {} | {} |", cell(0), cell(1));
}

/// Whether the twins' confidence sequence excludes zero after some set of `results` (read
/// after every set, from [`MIN_OBSERVATIONS`] sets on).
fn ever_separated(results: &[PlayedMatch]) -> bool {
    let mut end = 0;
    while end < results.len() {
        let set = results[end].set;
        while end < results.len() && results[end].set == set {
            end += 1;
        }
        let s = standings(&results[..end]);
        let pair = s.games[0].pair("twin-a", "twin-b").expect("the twins met");
        if pair.sets >= MIN_OBSERVATIONS && (pair.sequence.low > 0.0 || pair.sequence.high < 0.0) {
            return true;
        }
    }
    false
}

/// The Wilson 95% interval of `k` in `n`, in percent.
fn wilson(k: usize, n: usize) -> (f64, f64) {
    let i = knobel_arena::league::standings::Interval::wilson(k as u64, n as u64);
    (100.0 * i.low, 100.0 * i.high)
}
