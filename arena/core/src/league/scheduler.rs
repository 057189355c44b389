//! The league scheduler, inside the arena: it plays the matches of running leagues among
//! the connected bots.
//!
//! Every [`TICK`] (and soon when a league match ends or a league bot's stream starts
//! waiting: the wake-ups of one [`COALESCE`] period are served by one look) it reads the
//! running leagues from the store (a tick on which nothing announced a change skips it, for
//! at most [`LOOK_AT_LEAST_EVERY`]) and, for each, starts open matches (schedule order
//! first) whose bots all have a stream waiting that plays the match's game, up to the
//! league's concurrency. A match is claimed in the store before it starts
//! ([`Store::claim_league_match`]): arenas sharing a database never play one league match
//! twice. Its result is recorded, with the league match marked finished, in one
//! transaction. While a league runs, its bots' streams wait for league matches only (no
//! pick-up or practice matches). A paused or cancelled league starts no new matches; those
//! running finish.
//!
//! After a restart, matches of the league that were running are aborted (as orphans, once
//! their arena's lease has run out), which opens their claims again: they are played again
//! (with independent dice on the fresh seed of the next attempt, docs/fair-play.md), and each
//! league match counts one result. A claimed match that did not
//! start (the database went away between the claim and the start) has its claim given back
//! (tried again while the database is away), so it does not wait for the claim to expire.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::sync::watch;
use tracing::{debug, error, info, warn};

use super::adaptive::{Adaptive, Ended};
use super::settle::Stop;
use crate::lobby::{LeagueMatchEnd, SeatPool};
use crate::referee::TimeControl;
use crate::store::OpenLeagueMatch;
use crate::store::{LeagueRecord, LeagueStatus, Store, StoreError, UNSTARTED_CLAIM_MS};

/// How often the scheduler looks for matches to start while a league runs.
pub const TICK: Duration = Duration::from_millis(50);

/// How long the scheduler lets a burst of wake-ups gather (one match's end: its result and
/// its bots' streams waiting again here) before it reads the store once for all of them.
/// Streams that start waiting on other arenas (cluster mode) wake no scheduler: they are
/// seen at the next look.
pub const COALESCE: Duration = Duration::from_millis(5);

/// A tick on which nothing announced a change (no wake-up, and the seat pool's
/// [`generation`](SeatPool::generation) as at the last look) skips the store, unless the
/// last look began this long ago: what changes in the store alone (a league paused, another
/// arena's claims) is seen within it, or at the next wake-up.
pub const LOOK_AT_LEAST_EVERY: Duration = Duration::from_millis(250);

/// Whether a tick with nothing announced looks at the store: the seat pool's generation is
/// `generation`, the last look (if any) began at `.0` with generation `.1`.
fn look_due(last_look: Option<(tokio::time::Instant, u64)>, generation: u64) -> bool {
    last_look.is_none_or(|(at, seen)| seen != generation || at.elapsed() >= LOOK_AT_LEAST_EVERY)
}

/// How long [`release`] waits between attempts while the store is unavailable.
const RELEASE_RETRY: Duration = Duration::from_millis(500);

/// How often it looks for running leagues while none runs (a league started through this
/// arena wakes it at once).
pub const IDLE_TICK: Duration = Duration::from_secs(1);

/// How long the bots of a league started here are kept for league matches without a look
/// at the store that sees the league running (it was paused or cancelled at once, or the
/// store is away).
const STARTING_HOLD: Duration = Duration::from_secs(5);

/// What the scheduler knows of one running league.
#[derive(Debug, Default, Clone)]
struct Run {
    /// League matches started here and not yet over.
    in_flight: HashSet<u32>,
    /// Bots that the league's next open matches wait for (no stream waiting for the game).
    waiting_for: BTreeSet<String>,
    /// From the league file.
    concurrency: usize,
    time_control: TimeControl,
    /// `stop = "settled"`: played adaptively ([`Adaptive`]).
    settled: bool,
}

/// A league's live progress, as this arena sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveProgress {
    /// League matches playing in this arena now (a [`LeagueInfo`](super::service::LeagueInfo)
    /// has those in any arena on the database, from the store).
    pub playing: usize,
    /// Bots the next open matches wait for.
    pub waiting_for: Vec<String>,
    /// Of those, the ones connected (busy in other matches, or waiting for other games).
    pub waiting_for_connected: Vec<String>,
}

/// Plays running leagues.
pub struct Scheduler {
    store: Store,
    seats: Arc<dyn SeatPool>,
    instance: Option<String>,
    runs: Arc<Mutex<HashMap<i64, Run>>>,
    /// Wakes the scheduler before its next tick, after [`COALESCE`] (a match ended).
    wake: Arc<tokio::sync::Notify>,
    /// Wakes it at once: a league was started ([`Scheduler::league_started`]).
    started: tokio::sync::Notify,
    /// Leagues started here and not yet seen running by a look at the store (a look begun
    /// before the start read them as not running), with their bots and when they started.
    /// Their bots stay kept for league matches meanwhile, for at most [`STARTING_HOLD`].
    starting: Mutex<Vec<(i64, Vec<String>, tokio::time::Instant)>>,
    /// The settled leagues running here, by id (only the scheduler's task uses it).
    adaptive: Mutex<HashMap<i64, Adaptive>>,
}

impl Scheduler {
    /// A scheduler starting league matches with the waiting streams of `seats` (this
    /// arena's lobby), claiming them in `store` as `instance`.
    pub fn new(store: Store, seats: Arc<dyn SeatPool>, instance: Option<String>) -> Arc<Scheduler> {
        Arc::new(Scheduler {
            store,
            seats,
            instance,
            runs: Arc::default(),
            wake: Arc::new(tokio::sync::Notify::new()),
            started: tokio::sync::Notify::new(),
            starting: Mutex::default(),
            adaptive: Mutex::default(),
        })
    }

    /// League `league_id` with `bots` was started: its bots' streams are kept for league
    /// matches from now on (before this call returns, so that a bot joining later cannot
    /// fill a pick-up table with them), and the scheduler looks for its matches at once.
    pub fn league_started(&self, league_id: i64, bots: &[String]) {
        let mut starting = self.starting.lock().expect("scheduler lock");
        starting.push((league_id, bots.to_vec(), tokio::time::Instant::now()));
        self.seats.add_league_bots(bots);
        drop(starting);
        self.started.notify_one();
    }

    /// Keeps the streams of the bots of running `leagues`, and of leagues started since the
    /// look that read them, for league matches.
    fn keep_league_bots(&self, leagues: &[LeagueRecord]) {
        let mut bots: HashSet<String> = leagues
            .iter()
            .flat_map(|l| l.bots.iter().cloned())
            .collect();
        // Held while the pool's set is replaced: a start now adds its bots after it.
        let mut starting = self.starting.lock().expect("scheduler lock");
        starting.retain(|(id, _, at)| {
            !leagues.iter().any(|l| l.id == *id) && at.elapsed() < STARTING_HOLD
        });
        bots.extend(starting.iter().flat_map(|(_, b, _)| b.iter().cloned()));
        self.seats.set_league_bots(bots);
    }

    /// The live progress of league `league_id` (nothing if it is not running here).
    pub fn progress(&self, league_id: i64) -> LiveProgress {
        let runs = self.runs.lock().expect("scheduler lock");
        runs.get(&league_id)
            .map(|run| LiveProgress {
                playing: run.in_flight.len(),
                waiting_for: run.waiting_for.iter().cloned().collect(),
                waiting_for_connected: run
                    .waiting_for
                    .iter()
                    .filter(|bot| self.seats.is_connected(bot))
                    .cloned()
                    .collect(),
            })
            .unwrap_or_default()
    }

    /// Marks league match (`league_id`, `ordinal`) as playing here, or as not.
    fn mark_in_flight(&self, league_id: i64, ordinal: u32, playing: bool) {
        if let Some(run) = self
            .runs
            .lock()
            .expect("scheduler lock")
            .get_mut(&league_id)
        {
            if playing {
                run.in_flight.insert(ordinal);
            } else {
                run.in_flight.remove(&ordinal);
            }
        }
    }

    /// Runs until `shutdown` turns true.
    pub async fn run(self: Arc<Self>, mut shutdown: watch::Receiver<bool>) {
        // When the last look at the store began, and the seat pool's generation then.
        let mut last_look: Option<(tokio::time::Instant, u64)> = None;
        let (mut pause, mut announced) = (IDLE_TICK, true);
        loop {
            if *shutdown.borrow() {
                return;
            }
            let generation = self.seats.generation();
            if announced || look_due(last_look, generation) {
                last_look = Some((tokio::time::Instant::now(), generation));
                pause = match self.tick().await {
                    Ok(true) => TICK,
                    Ok(false) => IDLE_TICK,
                    Err(error) => {
                        // The store is unavailable, most likely: try again later.
                        debug!(error = %error, "league scheduler: cannot read the leagues");
                        IDLE_TICK
                    }
                };
            }
            // Whether something was announced, and whether to let a burst of wake-ups gather.
            let coalesce;
            (announced, coalesce) = tokio::select! {
                _ = tokio::time::sleep(pause) => (false, false),
                _ = self.started.notified() => (true, false),
                _ = self.wake.notified() => (true, true),
                _ = self.seats.league_joined().notified() => (true, true),
                changed = shutdown.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    (true, false)
                }
            };
            if coalesce {
                tokio::time::sleep(COALESCE).await;
                // The next tick serves the wake-ups that came meanwhile.
                let _ = self.wake.notified().now_or_never();
                let _ = self.seats.league_joined().notified().now_or_never();
            }
        }
    }

    /// Starts what can start; whether a league is running (or a match of one still plays
    /// here).
    async fn tick(&self) -> Result<bool, crate::store::StoreError> {
        let leagues = self.store.running_leagues().await?;
        self.keep_league_bots(&leagues);
        {
            // Forget leagues that stopped running, once nothing of theirs plays here.
            let mut runs = self.runs.lock().expect("scheduler lock");
            runs.retain(|id, run| leagues.iter().any(|l| l.id == *id) || !run.in_flight.is_empty());
        }
        for league in &leagues {
            match self.tick_league(league).await {
                Ok(()) => {}
                Err(StoreError::Corrupt { what }) => self.pause_unplayable(league, &what).await?,
                Err(error) => return Err(error),
            }
        }
        let busy = !leagues.is_empty()
            || self
                .runs
                .lock()
                .expect("scheduler lock")
                .values()
                .any(|run| !run.in_flight.is_empty());
        Ok(busy)
    }
}

impl Scheduler {
    /// Starts what can start of running league `league`.
    async fn tick_league(&self, league: &LeagueRecord) -> Result<(), StoreError> {
        if league.total_matches > 0 && league.finished_matches >= league.total_matches {
            // Its last results were committed at once, each seeing the other unfinished.
            if self.store.finish_league_if_done(league.id).await? {
                info!(league = %league.name, "league finished");
            }
            return Ok(());
        }
        let (free, in_flight, settled) = self.run_of(league);
        // In play in any arena (several arenas on one database): a settled league is not
        // over while another arena still plays one of its matches.
        let playing = in_flight.len().max(league.playing as usize);
        if settled && let Some(ended) = self.settle_step(league, playing).await? {
            if self.store.finish_league_early(league.id).await? {
                info!(league = %league.name, why = ended.name(), finished = league.finished_matches, "league finished");
            }
            self.adaptive
                .lock()
                .expect("scheduler lock")
                .remove(&league.id);
            return Ok(());
        }
        let mut waiting_for = BTreeSet::new();
        if free > 0 {
            let open = if settled {
                self.adaptive
                    .lock()
                    .expect("scheduler lock")
                    .get(&league.id)
                    .map(|a| a.candidates(free * 8, &in_flight))
                    .unwrap_or_default()
            } else {
                let look_ahead = (free * 8 + in_flight.len()).min(512) as u32;
                self.store
                    .open_league_matches(league.id, look_ahead)
                    .await?
            };
            let mut started = 0;
            for m in open {
                if started == free {
                    break;
                }
                if in_flight.contains(&m.ordinal) {
                    continue;
                }
                if self.start_match(league, &m) {
                    started += 1;
                    if settled {
                        self.settle_started(league.id, &m);
                    }
                    debug!(league = %league.name, ordinal = m.ordinal, "league match starting");
                } else {
                    for bot in &m.seats {
                        if !self.seats.has_waiting(bot, m.rules.game()) {
                            waiting_for.insert(bot.clone());
                        }
                    }
                }
            }
        }
        if let Some(run) = self
            .runs
            .lock()
            .expect("scheduler lock")
            .get_mut(&league.id)
        {
            if run.waiting_for != waiting_for && !waiting_for.is_empty() {
                info!(league = %league.name, waiting_for = ?waiting_for, "league waits for bots");
            }
            if free > 0 {
                run.waiting_for = waiting_for;
            }
        }
        Ok(())
    }

    /// Starts league match `m` of `league` if its bots wait here (claiming it first);
    /// whether it starts. It is marked in flight until it ends or does not start.
    fn start_match(&self, league: &LeagueRecord, m: &OpenLeagueMatch) -> bool {
        let time_control = self.runs.lock().expect("scheduler lock")[&league.id].time_control;
        let store = self.store.clone();
        let instance = self.instance.clone();
        let (league_id, ordinal) = (m.league_id, m.ordinal);
        let (dice, set, stored_seed) = (league.dice(), m.set, m.seed);
        let claim = move |match_id: &str| -> futures_util::future::BoxFuture<'static, Option<u64>> {
            let match_id = match_id.to_owned();
            Box::pin(async move {
                match store
                    .claim_league_match(league_id, ordinal, &match_id, instance.as_deref())
                    .await
                {
                    // Each attempt its own dice (a legacy league: its stored seed).
                    Ok(Some(attempt)) => Some(
                        dice.map_or(stored_seed, |dice| dice.match_seed(ordinal, set, attempt)),
                    ),
                    Ok(None) => None,
                    Err(error) => {
                        warn!(league_id, ordinal, error = %error, "cannot claim a league match");
                        None
                    }
                }
            })
        };
        let runs = self.runs.clone();
        let store = self.store.clone();
        let wake = self.wake.clone();
        let ended = move |match_id: &str, end: LeagueMatchEnd| {
            if let Some(run) = runs.lock().expect("scheduler lock").get_mut(&league_id) {
                run.in_flight.remove(&ordinal);
            }
            // Its place goes to the next match now, not at the next tick.
            wake.notify_one();
            if end == LeagueMatchEnd::Unstarted {
                tokio::spawn(release(store, league_id, ordinal, match_id.to_owned()));
            }
        };
        // Marked in flight before it can end.
        self.mark_in_flight(league.id, m.ordinal, true);
        let starts = self.seats.clone().start_league_match(
            m,
            time_control,
            Box::new(claim),
            Box::new(ended),
        );
        if !starts {
            self.mark_in_flight(league.id, m.ordinal, false);
        }
        starts
    }

    /// League `league`'s run here (made from its league file when first seen): its free
    /// places for matches (its concurrency less its matches playing here or, in cluster
    /// mode, by the store, in any arena), its matches in flight, and whether it stops when settled.
    fn run_of(&self, league: &LeagueRecord) -> (usize, HashSet<u32>, bool) {
        let mut runs = self.runs.lock().expect("scheduler lock");
        let run = runs.entry(league.id).or_insert_with(|| {
            let c = &league.config;
            let time_control = TimeControl {
                decision: Duration::from_millis(c.decision_ms),
                time_bank: Duration::from_millis(c.time_bank_ms),
            };
            let (concurrency, settled) = (c.concurrency as usize, c.stop == Stop::Settled);
            Run {
                concurrency,
                time_control,
                settled,
                ..Run::default()
            }
        });
        // In cluster mode the league's concurrency counts its matches in every arena on the
        // database (the store's count); otherwise this arena's own, which is current.
        let playing = if self.seats.counts_every_arena() {
            run.in_flight.len().max(league.playing as usize)
        } else {
            run.in_flight.len()
        };
        (
            run.concurrency.saturating_sub(playing),
            run.in_flight.clone(),
            run.settled,
        )
    }

    /// Pauses running league `league`, a match of which cannot be played as stored
    /// (`what`): its other matches would finish, but never this one. An operator who
    /// repairs the row resumes the league; `league cancel` ends it.
    async fn pause_unplayable(&self, league: &LeagueRecord, what: &str) -> Result<(), StoreError> {
        error!(league = %league.name, problem = %what, "a stored league match cannot be played: the league is paused");
        self.store
            .set_league_status(&league.name, &[LeagueStatus::Running], LeagueStatus::Paused)
            .await?;
        Ok(())
    }
}

impl Scheduler {
    /// A settled league's step before its matches start: reads its results again when due;
    /// whether and why it is over.
    async fn settle_step(
        &self,
        league: &crate::store::LeagueRecord,
        playing: usize,
    ) -> Result<Option<Ended>, crate::store::StoreError> {
        let taken = self
            .adaptive
            .lock()
            .expect("scheduler lock")
            .remove(&league.id);
        let mut adaptive = match taken {
            Some(a) => a,
            None => Adaptive::new(&league.config),
        };
        let finished = league.finished_matches;
        let read = if adaptive.due(finished) {
            adaptive
                .refresh(&self.store, league.id, finished, playing)
                .await
        } else {
            Ok(())
        };
        let ended = adaptive.ended(finished, playing);
        self.adaptive
            .lock()
            .expect("scheduler lock")
            .insert(league.id, adaptive);
        read.map(|()| ended)
    }

    /// Match `m` of settled league `league_id` started.
    fn settle_started(&self, league_id: i64, m: &OpenLeagueMatch) {
        if let Some(a) = self
            .adaptive
            .lock()
            .expect("scheduler lock")
            .get_mut(&league_id)
        {
            a.started(m);
        }
    }
}

/// Gives back the claim of league match (`league_id`, `ordinal`) for match `match_id`,
/// which did not start (its start could not be recorded, or its claim could not be
/// confirmed): open again at once rather than after [`UNSTARTED_CLAIM_MS`]. Tried again
/// while the store is unavailable, until that time is up (the claim opens by itself then).
/// A no-op if the claim is not held for `match_id`.
async fn release(store: Store, league_id: i64, ordinal: u32, match_id: String) {
    let give_up = tokio::time::Instant::now() + Duration::from_millis(UNSTARTED_CLAIM_MS as u64);
    loop {
        match store
            .release_league_match(league_id, ordinal, &match_id)
            .await
        {
            Ok(()) => return,
            Err(error) => {
                debug!(league_id, ordinal, error = %error, "cannot give back an unstarted league match's claim yet");
                if tokio::time::Instant::now() > give_up {
                    return;
                }
                tokio::time::sleep(RELEASE_RETRY).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use knobel_engine::Game;

    use super::*;
    use crate::league::service::Leagues;
    use crate::lobby::{ClaimLeagueMatch, LeagueMatchEnded};

    #[tokio::test(start_paused = true)]
    async fn a_quiet_tick_looks_only_when_the_pool_changed_or_the_last_look_is_old() {
        assert!(look_due(None, 0), "the first look");
        let at = tokio::time::Instant::now();
        assert!(!look_due(Some((at, 3)), 3), "nothing changed");
        assert!(look_due(Some((at, 3)), 4), "the pool changed");
        tokio::time::advance(LOOK_AT_LEAST_EVERY - Duration::from_millis(1)).await;
        assert!(!look_due(Some((at, 3)), 3));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(look_due(Some((at, 3)), 3), "the last look is old");
    }

    /// A seat pool that only keeps the bots of running leagues.
    #[derive(Default)]
    struct KeptBots {
        bots: Mutex<HashSet<String>>,
        joined: tokio::sync::Notify,
    }

    impl KeptBots {
        fn kept(&self) -> Vec<String> {
            let mut bots: Vec<String> = self.bots.lock().unwrap().iter().cloned().collect();
            bots.sort();
            bots
        }
    }

    impl SeatPool for KeptBots {
        fn set_league_bots(&self, bots: HashSet<String>) {
            *self.bots.lock().unwrap() = bots;
        }
        fn add_league_bots(&self, bots: &[String]) {
            self.bots.lock().unwrap().extend(bots.iter().cloned());
        }
        fn league_joined(&self) -> &tokio::sync::Notify {
            &self.joined
        }
        fn has_waiting(&self, _: &str, _: Game) -> bool {
            false
        }
        fn is_connected(&self, _: &str) -> bool {
            false
        }
        fn start_league_match(
            self: Arc<Self>,
            _: &OpenLeagueMatch,
            _: TimeControl,
            _: ClaimLeagueMatch,
            _: LeagueMatchEnded,
        ) -> bool {
            false
        }
    }

    #[tokio::test]
    async fn a_started_leagues_bots_are_kept_before_the_start_returns_and_after_an_older_look() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("knobel.db").display());
        let store = Store::connect(&url).await.unwrap();
        for (i, bot) in ["ada", "bert", "rogue"].into_iter().enumerate() {
            store.add_bot(bot, &format!("{i:064}")).await.unwrap();
        }
        let pool = Arc::new(KeptBots::default());
        let scheduler = Scheduler::new(store.clone(), pool.clone(), None);
        let leagues = Leagues::new(store.clone(), scheduler.clone());
        for name in ["first", "second"] {
            let league = format!(
                "name = \"{name}\"\nseed = 1\nbots = [\"ada\", \"bert\"]\n\
                 [games.schocken]\ntable_size = 2\n"
            );
            leagues.create(&league).await.unwrap();
        }
        // A look at the store begun before the start: the league is not running yet.
        let older_look = store.running_leagues().await.unwrap();
        leagues.start("first").await.unwrap();
        // Kept when the start returns, before any look of the scheduler.
        assert_eq!(pool.kept(), ["ada", "bert"]);
        // The older look ends after the start: the bots stay kept.
        scheduler.keep_league_bots(&older_look);
        assert_eq!(pool.kept(), ["ada", "bert"]);
        // A look that sees the league running keeps them by the store; once it no longer
        // runs, they are free again.
        scheduler.keep_league_bots(&store.running_leagues().await.unwrap());
        assert_eq!(pool.kept(), ["ada", "bert"]);
        leagues.cancel("first").await.unwrap();
        scheduler.keep_league_bots(&store.running_leagues().await.unwrap());
        assert!(pool.kept().is_empty());
        // A league started and cancelled before any look saw it running: kept for
        // STARTING_HOLD at most.
        leagues.start("second").await.unwrap();
        leagues.cancel("second").await.unwrap();
        tokio::time::pause();
        scheduler.keep_league_bots(&[]);
        assert_eq!(pool.kept(), ["ada", "bert"]);
        tokio::time::advance(STARTING_HOLD).await;
        scheduler.keep_league_bots(&[]);
        assert!(pool.kept().is_empty());
    }
}
