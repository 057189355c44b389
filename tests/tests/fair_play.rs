//! Fair play (issue 22): no bot may know a die it has not seen. Two spy bots (`spies`) play
//! a league against plain built-in bots on a real arena process, using only the public
//! contract, and write down predictions of dice they have not seen; the full logs, served
//! once the league has ended, score them.
//!
//! - In a default league (a league file without `dice` or `seed`: independent dice, every
//!   match its own secret seed) neither spy predicts better than chance, and the seed spy obtains no seed while the league
//!   runs: the logs are refused until it has ended.
//! - In a `dice = "duplicate"` league the memory spy, which uses nothing but its own Play
//!   stream, predicts the dice of other seats it has not seen: duplicate sets are for
//!   fields whose players cannot remember across matches. This also shows that the test's
//!   spies and scoring can tell a leak from chance.
//!
//! - In cluster mode (two arenas on PostgreSQL and a NATS server of the test's own), the
//!   memory spy alone on the second arena plays every match through a seat relayed from the
//!   first, the referee: it predicts no better than chance there either. A relayed seat gets
//!   the bytes the referee encoded for that seat, and nothing else.
//!
//! Every league plays Schocken and Sjokken, one at tables of 3 and the other at tables of 4.

mod spies;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use knobel_bots::{Bot, BotConfig, Game, Token, strategy};
use knobel_e2e::nats::{NatsServer, cluster_args};
use knobel_e2e::postgres::{self, SharedDatabase};
use knobel_e2e::{Arena, ArenaOptions, metric_sum, poll_until, thrown_dice};
use knobel_engine::MatchLog;
use knobel_proto::v1 as pb;
use spies::ledger::{Dice, Ledger, Score};
use spies::memory_spy::MemorySpy;
use spies::play::{Intel, Stream};
use spies::seed_spy::{self, SeedSpy};

const ADMIN_TOKEN: &str = "fair-play-admin-token-0123456789";

/// The plain bots: name, strategy.
const PLAIN_BOTS: [(&str, &str); 3] = [
    ("ada", "heuristic"),
    ("bert", "heuristic-60"),
    ("cleo", "random"),
];

/// The spies' registered names.
const SEED_SPY: &str = "sam";
const MEMORY_SPY: &str = "mia";

/// Play streams per bot: two, so that two league matches can run at once.
const STREAMS: usize = 2;

/// The least number of scored predictions per spy for a chance test worth its name.
const MIN_SCORED: u64 = 300;

/// The chance test. A tally of n scored predictions with k right fails if a spy guessing
/// every die (right with probability 1/6, independently: the dice of an independent league
/// are independent of everything a spy without the secret can know) would get k or more
/// right with probability at most this; the binomial tail is computed exactly
/// (`Tally::chance_of_doing_as_well`), and for n in the thousands its bound lies near
/// n/6 + 6 sqrt(n 5/36).
///
/// - It cannot fail by luck: a guessing spy fails a tally with probability at most 1e-9, and
///   a test checks four tallies.
/// - It cannot pass by luck when something leaks: twelve informed predictions all right
///   already fail the informed tally (6^-12 < 1e-9), and over the ~10,000 predictions of a
///   league a few hundred right ones beyond chance fail the tally of all. Before issue 22
///   the seed spy knew 11,687 of 11,687 dice it predicted, and in a duplicate league the
///   memory spy knows thousands.
const CHANCE_LEVEL: f64 = 1e-9;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_default_league_neither_spy_predicts_a_hidden_die() {
    // No `dice` and no `seed`: what a league file gets by default.
    let run = play_league("default", None, (4, 3)).await;
    assert_at_chance("seed spy", run.seed_spy);
    assert_at_chance("memory spy", run.memory_spy);
    assert_nothing_served_early(&run.seed_findings);
    let records = run.seed_findings.answers.get("GetMatchRecord");
    assert!(
        records.is_some_and(|records| records.contains_key("OK")),
        "the public records of finished matches are served while the league runs: {:?}",
        run.seed_findings
    );
}

#[cfg_attr(
    knobel_without_postgres,
    ignore = "built with KNOBEL_TEST_WITHOUT=postgres: needs PostgreSQL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_cluster_the_relayed_memory_spy_predicts_no_hidden_die() {
    postgres::require();
    let venue = Venue::cluster().await;
    let run = play_league_at(&venue, "relayed", None, (4, 3)).await;
    assert_at_chance("seed spy", run.seed_spy);
    assert_at_chance("memory spy, relayed", run.memory_spy);
    assert_nothing_served_early(&run.seed_findings);
    // Its seats were relayed: the referee is the arena of the other seats.
    let relayed = metric_sum(
        &venue.main.metrics_text().await,
        "knobel_relayed_seats_total",
    );
    assert!(
        relayed >= 20.0,
        "the memory spy's seats should be relayed: {relayed} relayed seats"
    );
    venue.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_duplicate_league_the_memory_spy_knows_dice_it_has_not_seen() {
    let run = play_league("duplicate", Some("duplicate"), (3, 4)).await;
    // The risk that `dice = "duplicate"` takes, documented: a bot that remembers what it
    // saw in one seat order of a set knows the dice of the others. The spy recognised the
    // set at the public opening throw-off, and its informed predictions of other seats' dice
    // it had not seen are (all but) all right.
    let informed = run.memory_spy.informed_other_seats;
    assert!(
        informed.scored >= 100,
        "the memory spy made too few informed predictions: {:?}",
        run.memory_spy
    );
    assert!(
        informed.hits * 100 >= informed.scored * 95,
        "the memory spy's informed predictions should be right: {:?}",
        run.memory_spy
    );
    // What the arena serves gives nothing away in a duplicate league either: no log before
    // the league ends, no record of a set still playing.
    assert_at_chance("seed spy", run.seed_spy);
    assert_nothing_served_early(&run.seed_findings);
}

/// A spy made enough predictions, and neither all of them nor its informed ones did better
/// than guessing.
fn assert_at_chance(spy: &str, score: Score) {
    assert!(
        score.all().scored >= MIN_SCORED,
        "{spy}: too few predictions: {score:?}"
    );
    assert_no_better_than_chance(spy, "all predictions", score.all());
    assert_no_better_than_chance(spy, "informed predictions", score.informed);
}

/// The seed spy obtained no seed while the league ran: every log it asked for was refused
/// with FAILED_PRECONDITION, and no record it got named a seed.
fn assert_nothing_served_early(findings: &seed_spy::Findings) {
    assert_eq!(
        (
            findings.seeds_while_running,
            findings.records_telling_too_much
        ),
        (0, 0),
        "the seed spy obtained seeds while the league ran: {findings:?}"
    );
    for rpc in ["GetMatchLog", "StreamMatchLog"] {
        let answers = findings.answers.get(rpc);
        assert!(
            answers.is_some_and(|answers| answers.keys().all(|s| s == "FailedPrecondition")),
            "{rpc} of a running league's match must be asked and refused: {findings:?}"
        );
    }
}

/// A spy's hits against the chance of guessing as well.
fn assert_no_better_than_chance(spy: &str, what: &str, tally: spies::ledger::Tally) {
    let chance = tally.chance_of_doing_as_well();
    assert!(
        chance > CHANCE_LEVEL,
        "{spy}, {what}: {} of {} right; guessing does as well with probability {chance:e}",
        tally.hits,
        tally.scored
    );
}

/// What a league did for the spies.
struct LeagueRun {
    seed_spy: Score,
    memory_spy: Score,
    seed_findings: seed_spy::Findings,
}

/// The league file: Schocken and Sjokken at the given table sizes, `dice` if given (and
/// never a `seed`).
fn league_file(name: &str, dice: Option<&str>, (schocken, sjokken): (u32, u32)) -> String {
    let dice = dice
        .map(|d| format!("dice = \"{d}\"\n"))
        .unwrap_or_default();
    let bots: Vec<String> = PLAIN_BOTS
        .iter()
        .map(|(bot, _)| *bot)
        .chain([SEED_SPY, MEMORY_SPY])
        .map(|bot| format!("\"{bot}\""))
        .collect();
    format!(
        "name = \"{name}\"\n{dice}bots = [{}]\nconcurrency = {STREAMS}\n\n\
         [games.schocken]\ntable_size = {schocken}\n\n[games.sjokken]\ntable_size = {sjokken}\n",
        bots.join(", ")
    )
}

/// Where a league is played: one arena, or two in cluster mode.
struct Venue {
    /// The arena of the league and of every bot but the memory spy.
    main: Arena,
    /// The memory spy's own arena, in cluster mode with `main`.
    spy_home: Option<Arena>,
    _cluster: Option<(NatsServer, SharedDatabase)>,
}

impl Venue {
    async fn single() -> Venue {
        let env = [("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)];
        Venue {
            main: Arena::start_with_env(ArenaOptions::default(), &env).await,
            spy_home: None,
            _cluster: None,
        }
    }

    /// Two arenas in cluster mode on a fresh database of the shared PostgreSQL server.
    async fn cluster() -> Venue {
        let nats = NatsServer::start();
        let db = SharedDatabase::create();
        let env = [("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)];
        let mut options = ArenaOptions::default();
        options
            .args
            .extend(cluster_args(&nats.url, "fair-play-peer-token-0123456789"));
        let main = Arena::start_on_with_env(options.clone(), &env, &db.url).await;
        let spy_home = Arena::start_on_with_env(options, &env, &db.url).await;
        Venue {
            main,
            spy_home: Some(spy_home),
            _cluster: Some((nats, db)),
        }
    }

    async fn stop(mut self) {
        assert!(self.main.stop().await.success());
        if let Some(arena) = self.spy_home.take() {
            assert!(arena.stop().await.success());
        }
    }
}

/// Plays a league with the spies and plain bots on a fresh arena; scores the spies.
async fn play_league(name: &str, dice: Option<&str>, tables: (u32, u32)) -> LeagueRun {
    let venue = Venue::single().await;
    let run = play_league_at(&venue, name, dice, tables).await;
    venue.stop().await;
    run
}

/// Plays a league with the spies and plain bots at `venue`; scores the spies.
async fn play_league_at(
    venue: &Venue,
    name: &str,
    dice: Option<&str>,
    tables: (u32, u32),
) -> LeagueRun {
    let arena = &venue.main;
    let mut tokens = std::collections::HashMap::new();
    for (bot, _) in PLAIN_BOTS {
        tokens.insert(bot, arena.add_bot(bot).await);
    }
    for spy in [SEED_SPY, MEMORY_SPY] {
        tokens.insert(spy, arena.add_bot(spy).await);
    }
    let mut admin = arena.admin(ADMIN_TOKEN).await;
    let config_toml = league_file(name, dice, tables);
    admin
        .create_league(pb::CreateLeagueRequest { config_toml })
        .await
        .expect("create the league");
    admin
        .start_league(pb::LeagueRequest { name: name.into() })
        .await
        .expect("start the league");

    let mut plain = tokio::task::JoinSet::new();
    for (i, (bot, plan)) in PLAIN_BOTS.iter().enumerate() {
        for stream in 0..STREAMS {
            let config = BotConfig::new(
                arena.url.clone(),
                Token::new(tokens[bot].clone()),
                *bot,
                [Game::Schocken, Game::Sjokken],
            );
            let policy = strategy(plan, (i * STREAMS + stream) as u64).expect("a strategy");
            plain.spawn(Bot::new(config, policy).run());
        }
    }
    let mut players = tokio::task::JoinSet::new();
    let seed_spy = Arc::new(SeedSpy::default());
    let memory_spy = Arc::new(MemorySpy::default());
    let seed_ledger = spy_streams(arena, &tokens[SEED_SPY], seed_spy.clone(), &mut players);
    let memory_ledger = spy_streams(
        venue.spy_home.as_ref().unwrap_or(arena),
        &tokens[MEMORY_SPY],
        memory_spy.clone(),
        &mut players,
    );
    let reader = {
        let (spy, url, league) = (seed_spy.clone(), arena.url.clone(), name.to_owned());
        tokio::spawn(async move { spy.read_served_logs(&url, &league).await })
    };

    wait_for_the_end(arena, name).await;
    players.abort_all();
    plain.abort_all();
    tokio::time::timeout(Duration::from_secs(60), reader)
        .await
        .expect("the seed spy's log reader stops once the league has ended")
        .expect("the log reader");
    let truth = full_logs(arena).await;
    let run = LeagueRun {
        seed_spy: seed_ledger.lock().unwrap().score(&truth),
        memory_spy: memory_ledger.lock().unwrap().score(&truth),
        seed_findings: seed_spy.findings(),
    };
    eprintln!(
        "fair play, {name} league:\n  seed spy: {:?}\n    {:?}\n  memory spy: {:?}\n    {:?}",
        run.seed_spy,
        run.seed_findings,
        run.memory_spy,
        memory_spy.findings()
    );
    run
}

/// Starts the Play streams of the spy with bot token `token`; returns its ledger.
fn spy_streams(
    arena: &Arena,
    token: &str,
    intel: Arc<dyn Intel>,
    players: &mut tokio::task::JoinSet<()>,
) -> Arc<Mutex<Ledger>> {
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    for _ in 0..STREAMS {
        let stream = Stream {
            url: arena.url.clone(),
            token: token.to_owned(),
            intel: intel.clone(),
            ledger: ledger.clone(),
        };
        players.spawn(stream.play());
    }
    ledger
}

/// Waits (up to ten minutes) until the league has finished.
async fn wait_for_the_end(arena: &Arena, league: &str) {
    let client = arena.client().await;
    poll_until(Duration::from_secs(600), "the league has finished", || {
        let mut client = client.clone();
        async move {
            let info = seed_spy::league_info(&mut client, league).await;
            if seed_spy::has_ended(&info) {
                Ok(())
            } else {
                Err(format!("{info:?}"))
            }
        }
    })
    .await;
}

/// The dice of every match of the league, from the full logs the arena serves once the
/// league has ended. (Which matches are the league's the test reads from the arena's store,
/// as the organiser: the bots also play pick-up matches once the league has ended, until
/// they are stopped, and those are not scored.)
async fn full_logs(arena: &Arena) -> std::collections::HashMap<String, Dice> {
    use sqlx::Connection;
    const IDS: &str = "SELECT match_id FROM league_matches WHERE match_id IS NOT NULL";
    let url = &arena.database_url;
    let ids: Vec<String> = if url.starts_with("postgres") {
        let mut store = sqlx::PgConnection::connect(url).await.expect("the store");
        sqlx::query_scalar(IDS).fetch_all(&mut store).await
    } else {
        let mut store = sqlx::SqliteConnection::connect(url)
            .await
            .expect("the store");
        sqlx::query_scalar(IDS).fetch_all(&mut store).await
    }
    .expect("the league's matches");
    let mut client = arena.client().await;
    let mut truth = std::collections::HashMap::new();
    for id in ids {
        let log = client
            .get_match_log(pb::GetMatchLogRequest {
                match_id: id.clone(),
            })
            .await
            .expect("the full log once the league has ended")
            .into_inner();
        let log = MatchLog::from_json(&log.log_json).expect("a valid log");
        truth.insert(id, thrown_dice(&log));
    }
    truth
}

/// The spy's dice function is the documented one: docs/rules.md A.8.5's worked example.
#[test]
fn the_spies_dice_function_gives_the_documented_example() {
    use spies::dice::throw_faces;
    let seed = 20_261_129;
    assert_eq!(throw_faces(seed, 0, 0, 1), [2, 4, 5]);
    assert_eq!(throw_faces(seed, 1, 0, 1), [5, 4, 2]);
    assert_eq!(throw_faces(seed, 2, 0, 1), [5, 4, 4]);
    assert_eq!(throw_faces(seed, 0, 0, 2), [1, 6, 2]);
    assert_eq!(throw_faces(seed, 1, 0, 2), [2, 4, 6]);
}

/// The chain run backwards finds the league seed among its candidates.
#[test]
fn the_set_seed_chain_runs_backwards() {
    use spies::dice::{finalise, league_seeds_behind, set_seed, unfinalise};
    for z in [0, 1, 42, u64::MAX, 0x0123_4567_89AB_CDEF] {
        assert_eq!(unfinalise(finalise(z)), z);
    }
    let league_seed = 0xC0FF_EE00_1234;
    let seed = set_seed(league_seed, 1, 7, 2);
    assert!(league_seeds_behind(seed, 8, 3).contains(&league_seed));
    assert!(!league_seeds_behind(seed, 7, 3).contains(&league_seed));
}

/// The chance test: exact binomial tails, and the ceiling near n/6 + 6 sigma.
#[test]
fn the_chance_test_tells_guessing_from_knowing() {
    use spies::ledger::Tally;
    let n = 600;
    let tail = |hits| Tally { scored: n, hits }.chance_of_doing_as_well();
    assert!((tail(0) - 1.0).abs() < 1e-12);
    assert!(tail(n) < 1e-300);
    let ceiling = (0..=n).find(|&hits| tail(hits) <= CHANCE_LEVEL).unwrap();
    let six_sigma = n as f64 / 6.0 + 6.0 * (n as f64 * 5.0 / 36.0).sqrt();
    assert!(
        (ceiling as f64 - six_sigma).abs() < 10.0,
        "{ceiling} {six_sigma}"
    );
    assert!(tail(n / 6) > 0.4);
    let all_right = |n| Tally { scored: n, hits: n }.chance_of_doing_as_well();
    assert!(all_right(11) > CHANCE_LEVEL && all_right(12) < CHANCE_LEVEL);
}
