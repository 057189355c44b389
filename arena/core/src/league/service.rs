//! The league operations behind Admin's CreateLeague, StartLeague, PauseLeague and
//! CancelLeague and the read-only GetStandings and ListLeagues, the web pages and the
//! metrics: in domain types, with a [`LeagueError`] a caller maps to its own answer (the
//! server's gRPC adapter turns both into wire types, `knobel-arena`'s `server::leagues`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use thiserror::Error;
use tracing::info;

use super::export::ExportError;
use super::scheduler::{LiveProgress, Scheduler};

use super::settle::Stop;
use super::standings::Standings;
use super::{LeagueConfig, LeagueDice, PlayedMatch, expand, standings_with};
use crate::store::{
    LeagueRecord, LeagueStatus, NewLeague, Store, StoreError, StoreObserver, StoreOperation,
};

/// How old a running league's standings may be for the web pages and the metrics
/// ([`Leagues::league_standings_within`]): computing them reads every result of the league,
/// so a large league's are computed again at most this often, for all of them together.
pub const RUNNING_STANDINGS_MAX_AGE: Duration = Duration::from_secs(5);

/// A running league's standings that took long to compute are computed again at most once
/// per this many times the time they took (and [`RUNNING_STANDINGS_MAX_AGE`]), however
/// often pages or the metrics ask: computing them takes at most a twentieth of the time,
/// however many results the league has stored.
pub const STANDINGS_AGE_PER_COMPUTE: u32 = 20;

/// A league as ListLeagues, GetStandings and the pages show it: the stored record with
/// this arena's live progress and the stop rule of its file.
#[derive(Clone, Debug)]
pub struct LeagueInfo {
    /// The stored league.
    pub record: LeagueRecord,
    /// Its matches playing in any arena on the database and the bots its next matches here
    /// wait for.
    pub live: LiveProgress,
    /// When it ends: as its file says.
    pub stop: Stop,
    /// Its match budget, if its file sets one.
    pub budget: Option<u32>,
}

/// A league with its progress, results and standings ([`Leagues::league_standings`]).
#[derive(Clone, Debug)]
pub struct LeagueView {
    /// The league and its progress.
    pub info: LeagueInfo,
    /// Its results and what is computed from them.
    pub played: Arc<Played>,
}

/// Why a league operation was refused, or failed.
#[derive(Debug, Error)]
pub enum LeagueError {
    /// The league file is larger than [`MAX_CONFIG_BYTES`].
    #[error(
        "the league file has {bytes} bytes: a league file has at most {MAX_CONFIG_BYTES} bytes \
         (64 KiB)"
    )]
    FileTooLarge {
        /// Its size.
        bytes: usize,
    },
    /// The league file does not make a league (its message names the field and line).
    #[error("{0}")]
    InvalidFile(String),
    /// No league has this name.
    #[error(
        "no league named {}: `knobel league list` (the ListLeagues RPC) lists the leagues",
        knobel_engine::quoted(.name)
    )]
    NoLeague {
        /// The name asked for.
        name: String,
    },
    /// A league of this name exists already.
    #[error("{0}")]
    Exists(StoreError),
    /// The league's status does not allow the change.
    #[error("league {name:?} is {from}: it can become {to} only when {legal}")]
    WrongStatus {
        /// The league.
        name: String,
        /// Its status.
        from: LeagueStatus,
        /// The status asked for.
        to: LeagueStatus,
        /// The statuses it may come from, joined with "or".
        legal: String,
    },
    /// Its archive cannot be had: no such league, or it has not ended.
    #[error("{0}")]
    Export(ExportError),
    /// The store failed (an internal fault, not the caller's).
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for LeagueError {
    fn from(error: StoreError) -> LeagueError {
        LeagueError::Store(error)
    }
}

/// A league's results and what is computed from them: they change only when another of
/// its matches finishes, so they are kept per league until then.
#[derive(Debug)]
pub struct Played {
    /// Its finished matches, in schedule order.
    pub results: Vec<PlayedMatch>,
    /// The standings computed from them.
    pub standings: Standings,
    /// Forfeited seats in them.
    pub forfeits: Forfeits,
}

/// A league's results as last read ([`Leagues::league_standings_within`]).
#[derive(Debug)]
struct Kept {
    /// Matches finished and the status when they were read.
    finished: u64,
    status: LeagueStatus,
    /// When.
    at: Instant,
    /// How long reading and computing them took.
    took: Duration,
    /// Whether a caller is reading them again.
    refreshing: bool,
    played: Arc<Played>,
}

impl Kept {
    /// Whether these standings are young enough for a caller that takes them up to
    /// `max_age` old: `max_age` (none if zero), or [`STANDINGS_AGE_PER_COMPUTE`] times what
    /// they took to compute if that is more.
    fn young_enough(&self, max_age: Duration) -> bool {
        max_age > Duration::ZERO
            && self.at.elapsed() < max_age.max(self.took * STANDINGS_AGE_PER_COMPUTE)
    }
}

/// Clears the `refreshing` mark of a league's kept results when dropped.
struct Refreshing<'a> {
    cache: &'a Mutex<HashMap<i64, Kept>>,
    league: i64,
}

impl Drop for Refreshing<'_> {
    fn drop(&mut self) {
        if let Ok(mut cache) = self.cache.lock()
            && let Some(kept) = cache.get_mut(&self.league)
        {
            kept.refreshing = false;
        }
    }
}

/// Forfeited seats per (game, or `None` for all games, bot).
pub type Forfeits = HashMap<(Option<knobel_engine::Game>, String), u64>;

/// The largest league file accepted, in bytes.
pub const MAX_CONFIG_BYTES: usize = 64 * 1024;

/// Where the league operations get a league's live progress, and whom they wake when a
/// league starts: this arena's [`Scheduler`], or [`NotPlayed`] where no league plays.
pub trait LiveLeagues: Send + Sync {
    /// League `league_id`'s matches playing here now and the bots its next matches wait for.
    fn progress(&self, league_id: i64) -> LiveProgress;
    /// League `league_id` with `bots` was started: keep its bots' streams for league
    /// matches from now on, and look for its matches now.
    fn league_started(&self, league_id: i64, bots: &[String]);
}

impl LiveLeagues for Scheduler {
    fn progress(&self, league_id: i64) -> LiveProgress {
        Scheduler::progress(self, league_id)
    }

    fn league_started(&self, league_id: i64, bots: &[String]) {
        Scheduler::league_started(self, league_id, bots)
    }
}

/// No league plays here: no live progress (tests and tools that only read leagues).
#[derive(Clone, Copy, Debug, Default)]
pub struct NotPlayed;

impl LiveLeagues for NotPlayed {
    fn progress(&self, _: i64) -> LiveProgress {
        LiveProgress::default()
    }

    fn league_started(&self, _: i64, _: &[String]) {}
}

/// The league operations of one arena.
#[derive(Clone)]
pub struct Leagues {
    store: Store,
    live: Arc<dyn LiveLeagues>,
    /// Per league id: its results as last read, and what was computed from them.
    played: Arc<Mutex<HashMap<i64, Kept>>>,
}

impl Leagues {
    /// League operations on `store`, with `live`'s progress (this arena's scheduler).
    pub fn new(store: Store, live: Arc<dyn LiveLeagues>) -> Leagues {
        Leagues {
            store,
            live,
            played: Arc::default(),
        }
    }

    /// These league operations with their store calls that fail because the database is
    /// unavailable counted under `operation` (see [`Store::counting_errors`]); the kept
    /// standings are shared with `self`.
    pub fn counting_errors<O: StoreObserver + Clone>(
        &self,
        observer: &O,
        operation: StoreOperation,
    ) -> Leagues {
        Leagues {
            store: self.store.clone().counting_errors(observer, operation),
            ..self.clone()
        }
    }

    /// The league as ListLeagues and GetStandings show it: the stored record with its
    /// matches playing in any arena on the database (so every arena shows the same) and
    /// the bots this arena's next matches of it wait for.
    pub fn info(&self, record: LeagueRecord) -> LeagueInfo {
        let playing = usize::try_from(record.playing).unwrap_or(usize::MAX);
        LeagueInfo {
            live: LiveProgress {
                playing,
                ..self.live.progress(record.id)
            },
            stop: record.config.stop,
            budget: record.config.budget,
            record,
        }
    }

    async fn find(&self, name: &str) -> Result<LeagueRecord, LeagueError> {
        self.store
            .league(name)
            .await?
            .ok_or_else(|| LeagueError::NoLeague {
                name: name.to_owned(),
            })
    }

    /// CreateLeague.
    pub async fn create(&self, config_toml: &str) -> Result<LeagueInfo, LeagueError> {
        if config_toml.len() > MAX_CONFIG_BYTES {
            return Err(LeagueError::FileTooLarge {
                bytes: config_toml.len(),
            });
        }
        let invalid =
            |e: &dyn std::fmt::Display| LeagueError::InvalidFile(format!("league file: {e}"));
        let config = LeagueConfig::from_toml(config_toml).map_err(|e| invalid(&e))?;
        let registered: Vec<String> = self
            .store
            .list_bots()
            .await?
            .into_iter()
            .filter(|b| !b.is_revoked())
            .map(|b| b.name)
            .collect();
        let bots = config.resolve_bots(&registered).map_err(|e| invalid(&e))?;
        // A balanced design may take a second to find (docs/leagues.md, "Schedule"): off the
        // async threads.
        let (dice, seed_source) = LeagueDice::for_config(&config);
        let (config, bots, schedule, dice) = crate::shutdown::on_blocking_thread(move || {
            let schedule = expand(&config, &bots, &dice);
            (config, bots, schedule, dice)
        })
        .await;
        let schedule = schedule.map_err(|e| LeagueError::InvalidFile(e.to_string()))?;
        config
            .check_budget(schedule.len() as u128)
            .map_err(|e| invalid(&e))?;
        let new = NewLeague {
            name: &config.name,
            config_toml,
            bots: &bots,
            schedule: &schedule,
            dice: &dice,
            seed_source,
        };
        let league = match self.store.create_league(&new).await {
            Ok(league) => league,
            Err(error @ StoreError::LeagueExists { .. }) => {
                return Err(LeagueError::Exists(error));
            }
            Err(error) => return Err(error.into()),
        };
        info!(league = %league.name, matches = league.total_matches, bots = ?league.bots, "league created");
        Ok(self.info(league))
    }

    /// StartLeague, PauseLeague, CancelLeague: moves league `name` to `to` from one of
    /// `from`.
    pub async fn transition(
        &self,
        name: &str,
        from: &[LeagueStatus],
        to: LeagueStatus,
    ) -> Result<LeagueInfo, LeagueError> {
        let league = self.find(name).await?;
        if league.status != to {
            if !from.contains(&league.status) {
                let legal: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
                return Err(LeagueError::WrongStatus {
                    name: name.to_owned(),
                    from: league.status,
                    to,
                    legal: legal.join(" or "),
                });
            }
            self.store.set_league_status(name, from, to).await?;
            info!(league = %name, from = %league.status, to = %to, "league status changed");
        }
        let league = self.find(name).await?;
        Ok(self.info(league))
    }

    /// StartLeague.
    pub async fn start(&self, name: &str) -> Result<LeagueInfo, LeagueError> {
        let league = self
            .transition(
                name,
                &[LeagueStatus::Created, LeagueStatus::Paused],
                LeagueStatus::Running,
            )
            .await?;
        self.live
            .league_started(league.record.id, &league.record.bots);
        Ok(league)
    }

    /// PauseLeague.
    pub async fn pause(&self, name: &str) -> Result<LeagueInfo, LeagueError> {
        self.transition(name, &[LeagueStatus::Running], LeagueStatus::Paused)
            .await
    }

    /// CancelLeague.
    pub async fn cancel(&self, name: &str) -> Result<LeagueInfo, LeagueError> {
        self.transition(
            name,
            &[
                LeagueStatus::Created,
                LeagueStatus::Running,
                LeagueStatus::Paused,
            ],
            LeagueStatus::Cancelled,
        )
        .await
    }

    /// League `name` with its results and standings (`None` if there is no such league):
    /// what GetStandings serves. The results are read and the standings computed again only
    /// once another match of the league has finished.
    pub async fn league_standings(&self, name: &str) -> Result<Option<LeagueView>, StoreError> {
        self.league_standings_within(name, Duration::ZERO).await
    }

    /// [`Leagues::league_standings`], where standings computed less than `max_age` ago do
    /// for a league that is still in the same status although more of its matches have
    /// finished since (the web pages: a running league's standings are computed again at
    /// most once per `max_age`, however many pages ask). While they are computed again,
    /// other callers get the previous ones.
    pub async fn league_standings_within(
        &self,
        name: &str,
        max_age: Duration,
    ) -> Result<Option<LeagueView>, StoreError> {
        let Some(record) = self.store.league(name).await? else {
            return Ok(None);
        };
        self.standings_of(record, max_age).await.map(Some)
    }

    /// [`Leagues::league_standings_within`] for the league of `record`, as just read (the
    /// metrics' refresh reads every league at once).
    pub async fn standings_of(
        &self,
        record: LeagueRecord,
        max_age: Duration,
    ) -> Result<LeagueView, StoreError> {
        let known = {
            let mut cache = self.played.lock().expect("standings lock");
            match cache.get_mut(&record.id) {
                Some(kept) if kept.status == record.status => {
                    let exact = kept.finished == record.finished_matches;
                    if exact
                        || kept.young_enough(max_age)
                        || (max_age > Duration::ZERO && kept.refreshing)
                    {
                        Some(kept.played.clone())
                    } else {
                        // The pages wait for this caller's standings; GetStandings
                        // computes its own.
                        kept.refreshing |= max_age > Duration::ZERO;
                        None
                    }
                }
                _ => None,
            }
        };
        let played = match known {
            Some(played) => played,
            None => {
                // However this ends (a failure, or a page whose client went away dropping
                // it mid-way), the next caller may compute them again.
                let _refreshing = (max_age > Duration::ZERO).then_some(Refreshing {
                    cache: &self.played,
                    league: record.id,
                });
                let started = Instant::now();
                let played = self.compute(&record).await?;
                self.played.lock().expect("standings lock").insert(
                    record.id,
                    Kept {
                        finished: record.finished_matches,
                        status: record.status,
                        at: Instant::now(),
                        took: started.elapsed(),
                        refreshing: false,
                        played: played.clone(),
                    },
                );
                played
            }
        };
        Ok(LeagueView {
            info: self.info(record),
            played,
        })
    }

    /// The results of `league`, its standings and forfeits, read and computed.
    async fn compute(&self, league: &LeagueRecord) -> Result<Arc<Played>, StoreError> {
        let results = self.store.league_results(league.id).await?;
        let forfeits = self.forfeits(league.id).await?;
        // Thousands of results take a while: off the runtime's workers, which referee
        // the matches meanwhile.
        let margins = league.config.margins();
        let (standings, results) = crate::shutdown::on_blocking_thread(move || {
            (standings_with(&results, &margins), results)
        })
        .await;
        Ok(Arc::new(Played {
            standings,
            results,
            forfeits,
        }))
    }

    /// Whether this arena leads the arenas on its database: it is the oldest whose lease
    /// holds ([`Store::oldest_live_instance`]). One arena speaks for the leagues where all
    /// would say the same (their metrics' league series: a sum over arenas counts each
    /// league once). An arena without an instance (tools, tests) leads, and so does one
    /// that finds no live lease (its own has lapsed: better twice than none).
    pub async fn leads(&self) -> Result<bool, StoreError> {
        let Some(me) = self.store.owner() else {
            return Ok(true);
        };
        Ok(self
            .store
            .oldest_live_instance()
            .await?
            .is_none_or(|oldest| oldest == *me))
    }

    /// Every league with its progress: what ListLeagues serves.
    pub async fn leagues(&self) -> Result<Vec<LeagueInfo>, StoreError> {
        let leagues = self.store.list_leagues().await?;
        Ok(leagues.into_iter().map(|l| self.info(l)).collect())
    }

    /// Forfeits in league `league_id`'s finished matches, per game and bot (the standings
    /// pages show them beside the standings).
    async fn forfeits(&self, league_id: i64) -> Result<Forfeits, StoreError> {
        let mut forfeits = Forfeits::new();
        for (game, bot, count) in self.store.league_forfeits(league_id).await? {
            *forfeits.entry((Some(game), bot.clone())).or_default() += count;
            *forfeits.entry((None, bot)).or_default() += count;
        }
        Ok(forfeits)
    }

    /// GetStandings: league `name` with its standings computed from every result.
    pub async fn standings(&self, name: &str) -> Result<LeagueView, LeagueError> {
        self.league_standings(name)
            .await?
            .ok_or_else(|| LeagueError::NoLeague {
                name: name.to_owned(),
            })
    }
}

impl Leagues {
    /// The archive's first line of league `name`, which must have ended (ExportLeague).
    pub async fn archive_header(&self, name: &str) -> Result<(LeagueRecord, String), LeagueError> {
        super::export::header(&self.store, name)
            .await
            .map_err(|e| match e {
                ExportError::Store(e) => LeagueError::Store(e),
                e => LeagueError::Export(e),
            })
    }

    /// The archive's match lines of `league` from ordinal `from` on (see
    /// [`super::export::page`]).
    pub async fn archive_page(
        &self,
        league: &LeagueRecord,
        from: u32,
    ) -> Result<Vec<String>, StoreError> {
        super::export::page(&self.store, league, from).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(age: Duration, took: Duration) -> Kept {
        Kept {
            finished: 0,
            status: LeagueStatus::Running,
            at: Instant::now() - age,
            took,
            refreshing: false,
            played: Arc::new(Played {
                results: Vec::new(),
                standings: crate::league::standings(&[]),
                forfeits: Forfeits::new(),
            }),
        }
    }

    #[test]
    fn standings_that_took_long_are_kept_longer() {
        let max_age = RUNNING_STANDINGS_MAX_AGE;
        let quick = Duration::from_millis(10);
        // Quickly computed: young for `max_age`.
        assert!(kept(Duration::from_secs(1), quick).young_enough(max_age));
        assert!(!kept(max_age + Duration::from_secs(1), quick).young_enough(max_age));
        // Computed in a second: young for twenty.
        let slow = Duration::from_secs(1);
        assert!(kept(Duration::from_secs(19), slow).young_enough(max_age));
        assert!(!kept(Duration::from_secs(21), slow).young_enough(max_age));
        // Never for a caller that wants them exact.
        assert!(!kept(Duration::ZERO, slow).young_enough(Duration::ZERO));
    }
}
