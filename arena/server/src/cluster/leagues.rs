//! League starts across the cluster. A league started (or resumed) through one arena keeps
//! its bots' streams for league matches there at once (`Scheduler::league_started`); the
//! other arenas would learn of it only at their scheduler's next look at the store (up to
//! a second while no league runs), and meanwhile could seat its bots in pick-up matches.
//! So the arena tells the others (`knobel.cluster.league_started`), and each keeps the
//! league's bots as if the league had been started through it.

use std::sync::Arc;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use tracing::{debug, warn};

use super::{Cluster, NATS_TIMEOUT, SUBJECT_PREFIX};
use crate::league::scheduler::LiveProgress;
use crate::league::service::LiveLeagues;

/// The largest message taken: a league of [`MAX_BOTS`](knobel_league::config::MAX_BOTS)
/// bots with long names fits several times.
const MAX_MESSAGE: usize = 64 << 10;

/// The subject league starts are told on.
fn subject() -> String {
    format!("{SUBJECT_PREFIX}.league_started")
}

/// One league started through an arena.
#[derive(Debug, Serialize, Deserialize)]
struct LeagueStarted {
    /// The arena it was started through.
    instance: String,
    league_id: i64,
    bots: Vec<String>,
}

/// This arena's leagues as the league operations see them in cluster mode: the scheduler
/// (`live`), and a start is told to the other arenas.
struct ClusterLeagues {
    live: Arc<dyn LiveLeagues>,
    cluster: Arc<Cluster>,
}

impl LiveLeagues for ClusterLeagues {
    fn progress(&self, league_id: i64) -> LiveProgress {
        self.live.progress(league_id)
    }

    fn league_started(&self, league_id: i64, bots: &[String]) {
        self.live.league_started(league_id, bots);
        let started = LeagueStarted {
            instance: self.cluster.instance.clone(),
            league_id,
            bots: bots.to_vec(),
        };
        let Ok(payload) = serde_json::to_vec(&started) else {
            return;
        };
        let nats = self.cluster.nats.clone();
        tokio::spawn(async move {
            if let Err(error) = nats.publish(subject(), payload.into()).await {
                // The others find the league at their next look.
                debug!(%error, "cannot tell the other arenas of a league's start");
            }
        });
    }
}

impl Cluster {
    /// `live` (this arena's league scheduler) as the league operations use it in cluster
    /// mode: a league started through this arena is told to the others, and one started
    /// through another arena is passed to `live` here. The subscription is with NATS when
    /// this returns (within [`NATS_TIMEOUT`]).
    pub async fn share_league_starts(
        self: &Arc<Self>,
        live: Arc<dyn LiveLeagues>,
    ) -> Arc<dyn LiveLeagues> {
        match self.nats.subscribe(subject()).await {
            Ok(mut subscriber) => {
                let (own, live) = (self.instance.clone(), live.clone());
                tokio::spawn(async move {
                    while let Some(message) = subscriber.next().await {
                        take_league_started(&own, live.as_ref(), &message.payload);
                    }
                });
                let _ = tokio::time::timeout(NATS_TIMEOUT, self.nats.flush()).await;
            }
            Err(error) => warn!(%error, "cannot subscribe to the cluster's league starts"),
        }
        Arc::new(ClusterLeagues {
            live,
            cluster: self.clone(),
        })
    }
}

/// Passes another arena's league start (at most [`MAX_MESSAGE`] bytes and
/// [`MAX_BOTS`](knobel_league::config::MAX_BOTS) bots; not one of arena `own`'s) to `live`.
fn take_league_started(own: &str, live: &dyn LiveLeagues, payload: &[u8]) {
    if payload.len() > MAX_MESSAGE {
        debug!(
            bytes = payload.len(),
            "a league-start message over its bound"
        );
        return;
    }
    match serde_json::from_slice::<LeagueStarted>(payload) {
        Ok(started) if started.instance != own => {
            if started.bots.len() > knobel_league::config::MAX_BOTS {
                debug!(
                    bots = started.bots.len(),
                    "a league-start message with too many bots"
                );
                return;
            }
            live.league_started(started.league_id, &started.bots);
        }
        Ok(_) => {}
        Err(error) => debug!(%error, "a league-start message that does not read"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// The league starts passed on.
    #[derive(Default)]
    struct Told(Mutex<Vec<(i64, usize)>>);

    impl LiveLeagues for Told {
        fn progress(&self, _: i64) -> LiveProgress {
            LiveProgress::default()
        }

        fn league_started(&self, league_id: i64, bots: &[String]) {
            self.0.lock().unwrap().push((league_id, bots.len()));
        }
    }

    fn message(instance: &str, league_id: i64, bots: usize) -> Vec<u8> {
        let started = LeagueStarted {
            instance: instance.to_owned(),
            league_id,
            bots: (0..bots).map(|i| format!("bot{i}")).collect(),
        };
        serde_json::to_vec(&started).unwrap()
    }

    #[test]
    fn another_arenas_league_start_is_passed_on_within_its_bounds() {
        let told = Told::default();
        let max = knobel_league::config::MAX_BOTS;
        take_league_started("me", &told, &message("other", 1, 4));
        take_league_started("me", &told, &message("me", 2, 4));
        take_league_started("me", &told, &message("other", 3, max));
        take_league_started("me", &told, &message("other", 4, max + 1));
        take_league_started("me", &told, b"{not json");
        let mut long = message("other", 5, 1);
        long.resize(MAX_MESSAGE + 1, b' ');
        take_league_started("me", &told, &long);
        let mut at_bound = message("other", 6, 1);
        at_bound.resize(MAX_MESSAGE, b' ');
        take_league_started("me", &told, &at_bound);
        assert_eq!(*told.0.lock().unwrap(), [(1, 4), (3, max), (6, 1)]);
    }
}
