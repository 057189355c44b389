//! The live standings: one task follows the league snapshot (the one the metrics read,
//! [`LeagueSnapshots`]) and, when the standings or the status of a league that live pages
//! watch change, renders them once and hands the same text to every page watching it
//! (server-sent events). The work does not grow with the pages watching, and no page reads
//! the store for it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tracing::warn;

use super::pages;
use crate::league::snapshot::{LeagueSnapshot, LeagueSnapshots, Watching};

/// What a live page was last sent: the standings of so many results, in a status.
type Progress = (usize, crate::store::LeagueStatus);

struct Channel {
    tx: watch::Sender<Arc<String>>,
    shown: Option<Progress>,
    /// Keeps the league in the snapshot while pages watch it.
    _watching: Watching,
}

/// The live standings of the leagues being watched.
pub(super) struct Live {
    snapshots: LeagueSnapshots,
    channels: Mutex<HashMap<String, Channel>>,
}

impl Live {
    pub(super) fn new(snapshots: LeagueSnapshots) -> Live {
        Live {
            snapshots,
            channels: Mutex::new(HashMap::new()),
        }
    }

    /// The standings of `league` as they change from now on (rendered live sections).
    pub(super) fn subscribe(&self, league: &str) -> watch::Receiver<Arc<String>> {
        let mut channels = self.channels.lock().expect("live lock");
        channels
            .entry(league.to_owned())
            .or_insert_with(|| Channel {
                tx: watch::channel(Arc::new(String::new())).0,
                shown: None,
                _watching: self.snapshots.watch(league).1,
            })
            .tx
            .subscribe()
    }

    /// Follows the league snapshot until `stopping` turns true.
    pub(super) async fn run(self: Arc<Self>, mut stopping: watch::Receiver<bool>) {
        let mut snapshots = self.snapshots.subscribe();
        loop {
            tokio::select! {
                changed = snapshots.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                _ = stopping.changed() => return,
            }
            if *stopping.borrow() {
                return;
            }
            let snapshot = snapshots.borrow_and_update().clone();
            self.show(&snapshot);
        }
    }

    /// Sends every watched league whose standings or status changed in `snapshot` to its
    /// pages; forgets the leagues no page watches any more.
    fn show(&self, snapshot: &LeagueSnapshot) {
        let mut channels = self.channels.lock().expect("live lock");
        channels.retain(|_, c| c.tx.receiver_count() > 0);
        for (name, channel) in channels.iter_mut() {
            let Some(view) = snapshot.league(name) else {
                continue;
            };
            let progress = (view.played.results.len(), view.info.record.status);
            if channel.shown == Some(progress) {
                continue;
            }
            match pages::live_section(view) {
                Ok(html) => {
                    channel.shown = Some(progress);
                    channel.tx.send_replace(Arc::new(html));
                }
                Err(error) => {
                    warn!(error = %super::chain(&error), league = %name, "cannot render the live standings");
                }
            }
        }
    }
}
