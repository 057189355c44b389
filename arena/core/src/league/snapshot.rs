//! One published league snapshot: the leagues shown (running and paused first, then the
//! newest, at most [`MAX_SHOWN_LEAGUES`]) and the leagues live pages watch, each with its
//! progress and standings, taken every [`SNAPSHOT_EVERY`] by one task and handed to every
//! reader (the metrics' league series, the live standings pages) through a
//! [`tokio::sync::watch`] channel. The readers never read the store for it: what they
//! cost does not grow with how many of them there are, and they all show the same
//! snapshot.
//!
//! The task starts with the first subscriber and stops once none is left. Standings come
//! from [`Leagues::standings_of`] with [`RUNNING_STANDINGS_MAX_AGE`]: a league's are
//! computed again only once more of its matches have finished, a running league's at most
//! that often.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tracing::debug;

use super::service::{LeagueView, Leagues, RUNNING_STANDINGS_MAX_AGE};
use crate::store::{LeagueRecord, LeagueStatus, StoreError};

/// How often the snapshot is taken.
pub const SNAPSHOT_EVERY: Duration = Duration::from_millis(500);

/// How many leagues the snapshot shows without anyone watching them (the metrics' bounded
/// `league` label set).
pub const MAX_SHOWN_LEAGUES: usize = 16;

/// The leagues as last taken.
#[derive(Debug, Default)]
pub struct LeagueSnapshot {
    /// The leagues shown: running and paused first, then the newest; at most
    /// [`MAX_SHOWN_LEAGUES`].
    pub shown: Vec<LeagueView>,
    /// The leagues watched that are not among them.
    pub watched: Vec<LeagueView>,
    /// Whether this arena leads the arenas on its database ([`Leagues::leads`]): only the
    /// lead arena's metrics export the league series.
    pub lead: bool,
}

impl LeagueSnapshot {
    /// League `name`, if the snapshot has it.
    pub fn league(&self, name: &str) -> Option<&LeagueView> {
        self.shown
            .iter()
            .chain(&self.watched)
            .find(|view| view.info.record.name == name)
    }
}

/// The published league snapshot of one arena. Clones share it.
#[derive(Clone)]
pub struct LeagueSnapshots {
    inner: Arc<Inner>,
}

struct Inner {
    leagues: Leagues,
    every: Duration,
    published: watch::Sender<Arc<LeagueSnapshot>>,
    /// How many watchers each watched league has.
    watched: Mutex<HashMap<String, usize>>,
    /// Whether the task that takes the snapshot runs.
    running: AtomicBool,
}

/// League `name` kept in the snapshot while this lives ([`LeagueSnapshots::watch`]).
pub struct Watching {
    inner: Arc<Inner>,
    name: String,
}

impl Drop for Watching {
    fn drop(&mut self) {
        let mut watched = self.inner.watched.lock().expect("watched lock");
        if let Some(count) = watched.get_mut(&self.name) {
            *count -= 1;
            if *count == 0 {
                watched.remove(&self.name);
            }
        }
    }
}

impl LeagueSnapshots {
    /// The snapshot of `leagues`, taken every [`SNAPSHOT_EVERY`] while anyone subscribes.
    pub fn new(leagues: Leagues) -> LeagueSnapshots {
        LeagueSnapshots::every(leagues, SNAPSHOT_EVERY)
    }

    /// [`LeagueSnapshots::new`], taken every `every` (tests).
    pub fn every(leagues: Leagues, every: Duration) -> LeagueSnapshots {
        LeagueSnapshots {
            inner: Arc::new(Inner {
                leagues,
                every,
                published: watch::channel(Arc::default()).0,
                watched: Mutex::default(),
                running: AtomicBool::new(false),
            }),
        }
    }

    /// The snapshots as they are published from now on (the first as soon as it is taken).
    /// Must be called within a Tokio runtime: it starts the task that takes them if it
    /// does not run.
    pub fn subscribe(&self) -> watch::Receiver<Arc<LeagueSnapshot>> {
        let mut receiver = self.inner.published.subscribe();
        receiver.mark_unchanged();
        if !self.inner.running.swap(true, Ordering::AcqRel) {
            tokio::spawn(self.clone().run());
        }
        receiver
    }

    /// [`LeagueSnapshots::subscribe`], with league `name` in every snapshot for as long as
    /// the [`Watching`] lives, shown or not.
    pub fn watch(&self, name: &str) -> (watch::Receiver<Arc<LeagueSnapshot>>, Watching) {
        *self
            .inner
            .watched
            .lock()
            .expect("watched lock")
            .entry(name.to_owned())
            .or_default() += 1;
        let watching = Watching {
            inner: self.inner.clone(),
            name: name.to_owned(),
        };
        (self.subscribe(), watching)
    }

    /// Takes the snapshot every `every` until no subscriber is left. A store failure skips
    /// one snapshot (and is logged; the leagues' store handle counts it).
    async fn run(self) {
        loop {
            match self.take().await {
                Ok(snapshot) => {
                    self.inner.published.send_replace(Arc::new(snapshot));
                }
                Err(error) => debug!(%error, "league snapshot not taken: the store failed"),
            }
            tokio::time::sleep(self.inner.every).await;
            if self.inner.published.receiver_count() == 0 {
                self.inner.running.store(false, Ordering::Release);
                // A subscriber that came meanwhile found it running: take over again.
                if self.inner.published.receiver_count() == 0
                    || self.inner.running.swap(true, Ordering::AcqRel)
                {
                    return;
                }
            }
        }
    }

    /// The leagues now: every league is listed once, and the standings of those shown and
    /// watched taken (computed again only where more matches have finished).
    pub async fn take(&self) -> Result<LeagueSnapshot, StoreError> {
        let leagues = &self.inner.leagues;
        let records = leagues.leagues().await?.into_iter().map(|info| info.record);
        let watched: Vec<String> = {
            let watched = self.inner.watched.lock().expect("watched lock");
            watched.keys().cloned().collect()
        };
        let (shown, rest) = shown_leagues(records.collect());
        let mut snapshot = LeagueSnapshot {
            lead: leagues.leads().await?,
            ..LeagueSnapshot::default()
        };
        for record in shown {
            snapshot.shown.push(
                leagues
                    .standings_of(record, RUNNING_STANDINGS_MAX_AGE)
                    .await?,
            );
        }
        for record in rest.into_iter().filter(|r| watched.contains(&r.name)) {
            snapshot.watched.push(
                leagues
                    .standings_of(record, RUNNING_STANDINGS_MAX_AGE)
                    .await?,
            );
        }
        Ok(snapshot)
    }
}

/// `leagues` split into those shown (running and paused first, then the newest; at most
/// [`MAX_SHOWN_LEAGUES`]) and the others.
fn shown_leagues(mut leagues: Vec<LeagueRecord>) -> (Vec<LeagueRecord>, Vec<LeagueRecord>) {
    let active =
        |l: &LeagueRecord| matches!(l.status, LeagueStatus::Running | LeagueStatus::Paused) as u8;
    leagues.sort_by(|a, b| {
        active(b)
            .cmp(&active(a))
            .then(b.created_at_ms.cmp(&a.created_at_ms))
            .then(b.id.cmp(&a.id))
    });
    let rest = leagues.split_off(leagues.len().min(MAX_SHOWN_LEAGUES));
    (leagues, rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::league::service::NotPlayed;
    use crate::store::Store;

    /// League operations on a new SQLite store with three bots and `leagues` leagues named
    /// `l00`, `l01`, ... (created in that order); the folder holds the store.
    async fn leagues_with(leagues: usize) -> (Leagues, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("knobel.db").display());
        let store = Store::connect(&url).await.unwrap();
        for (i, bot) in ["ada", "bert", "crook"].into_iter().enumerate() {
            store.add_bot(bot, &format!("{i:064}")).await.unwrap();
        }
        let service = Leagues::new(store, Arc::new(NotPlayed));
        for i in 0..leagues {
            service
                .create(&format!(
                    "name = \"l{i:02}\"\nseed = 1\nbots = [\"ada\", \"bert\", \"crook\"]\n\
                     [games.schocken]\ntable_size = 3\n"
                ))
                .await
                .unwrap();
        }
        (service, dir)
    }

    fn names(views: &[LeagueView]) -> Vec<&str> {
        views.iter().map(|v| v.info.record.name.as_str()).collect()
    }

    #[tokio::test]
    async fn the_snapshot_shows_active_leagues_then_the_newest_and_what_pages_watch() {
        let (leagues, _dir) = leagues_with(MAX_SHOWN_LEAGUES + 1).await;
        leagues.start("l00").await.unwrap();
        let snapshots = LeagueSnapshots::new(leagues);
        let snapshot = snapshots.take().await.unwrap();
        let mut expected = vec!["l00".to_owned()];
        expected.extend((2..=MAX_SHOWN_LEAGUES).rev().map(|i| format!("l{i:02}")));
        assert_eq!(names(&snapshot.shown), expected);
        assert!(snapshot.watched.is_empty());
        // No arena instance (a tool's store): it leads.
        assert!(snapshot.lead);
        assert!(snapshot.league("l01").is_none());
        // A league no page watches any more leaves the snapshot again.
        let (_first, watching) = snapshots.watch("l01");
        let (_second, also) = snapshots.watch("l01");
        let (_third, shown_anyway) = snapshots.watch("l05");
        let snapshot = snapshots.take().await.unwrap();
        assert_eq!(names(&snapshot.watched), ["l01"]);
        assert_eq!(snapshot.league("l01").unwrap().info.record.name, "l01");
        assert_eq!(snapshot.shown.len(), MAX_SHOWN_LEAGUES);
        drop(watching);
        assert_eq!(names(&snapshots.take().await.unwrap().watched), ["l01"]);
        drop((also, shown_anyway));
        assert!(snapshots.take().await.unwrap().watched.is_empty());
    }

    #[tokio::test]
    async fn the_snapshot_is_published_while_anyone_subscribes() {
        let (leagues, _dir) = leagues_with(2).await;
        let snapshots = LeagueSnapshots::every(leagues.clone(), Duration::from_millis(10));
        let bound = Duration::from_secs(30);
        for round in 0..2 {
            let mut published = snapshots.subscribe();
            tokio::time::timeout(bound, published.changed())
                .await
                .expect("a snapshot within the bound")
                .unwrap();
            assert_eq!(names(&published.borrow().shown), ["l01", "l00"], "{round}");
            // A second subscriber gets the snapshots the same task takes.
            let mut other = snapshots.subscribe();
            tokio::time::timeout(bound, other.changed())
                .await
                .unwrap()
                .unwrap();
            assert_eq!(names(&other.borrow().shown), ["l01", "l00"]);
            // Nobody left: the task stops, and the next subscriber starts it again.
            drop((published, other));
            let stopped = async {
                while snapshots.inner.running.load(Ordering::Acquire) {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            };
            tokio::time::timeout(bound, stopped)
                .await
                .expect("the task stops without subscribers");
        }
        // What a changed league shows: the next snapshot has it.
        let mut published = snapshots.subscribe();
        leagues.start("l00").await.unwrap();
        let started = async {
            loop {
                published.changed().await.unwrap();
                let snapshot = published.borrow_and_update().clone();
                if snapshot.league("l00").unwrap().info.record.status == LeagueStatus::Running {
                    return snapshot;
                }
            }
        };
        let snapshot = tokio::time::timeout(bound, started).await.unwrap();
        assert_eq!(names(&snapshot.shown), ["l00", "l01"]);
    }
}
