//! The live standings: one task polls the leagues that live pages watch and, when a
//! league's standings change (at most once per [`super::STANDINGS_MAX_AGE`]), renders them once and hands the same text to every
//! page watching it (server-sent events). The work does not grow with the pages watching.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tracing::warn;

use super::{WebError, pages};
use crate::league::service::Leagues;

/// How often the leagues that live pages watch are looked at.
pub const LIVE_POLL: Duration = Duration::from_millis(500);

/// What a live page was last sent: the standings of so many results, in a status.
type Progress = (usize, crate::store::LeagueStatus);

struct Channel {
    tx: watch::Sender<Arc<String>>,
    shown: Option<Progress>,
}

/// The live standings of the leagues being watched.
pub(super) struct Live {
    leagues: Leagues,
    channels: Mutex<HashMap<String, Channel>>,
}

impl Live {
    pub(super) fn new(leagues: Leagues) -> Live {
        Live {
            leagues,
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
            })
            .tx
            .subscribe()
    }

    /// Polls every [`LIVE_POLL`] until `stopping` turns true.
    pub(super) async fn run(self: Arc<Self>, mut stopping: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(LIVE_POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stopping.changed() => return,
            }
            if *stopping.borrow() {
                return;
            }
            if let Err(error) = self.tick().await {
                warn!(error = %super::chain(&error), "cannot update the live standings");
            }
        }
    }

    async fn tick(&self) -> Result<(), WebError> {
        let watched: Vec<String> = {
            let mut channels = self.channels.lock().expect("live lock");
            channels.retain(|_, c| c.tx.receiver_count() > 0);
            channels.keys().cloned().collect()
        };
        if watched.is_empty() {
            return Ok(());
        }
        for name in watched {
            let Some(view) = self
                .leagues
                .league_standings_within(&name, super::STANDINGS_MAX_AGE)
                .await?
            else {
                continue;
            };
            let progress = (view.played.results.len(), view.info.record.status);
            let shown = self
                .channels
                .lock()
                .expect("live lock")
                .get(&name)
                .and_then(|c| c.shown);
            if shown == Some(progress) {
                continue;
            }
            let html = pages::live_section(&view)?;
            if let Some(channel) = self.channels.lock().expect("live lock").get_mut(&name) {
                channel.shown = Some(progress);
                channel.tx.send_replace(Arc::new(html));
            }
        }
        Ok(())
    }
}
