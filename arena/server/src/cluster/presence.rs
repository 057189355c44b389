//! Presence: which bots wait on which arena, with how many streams per game.
//!
//! Each arena publishes its whole presence (a versioned snapshot) whenever it changes,
//! checked every [`PUBLISH_EVERY`], and at least every [`REFRESH_EVERY`]; a snapshot older
//! than the last one seen from that arena is ignored, and an arena not heard of for
//! [`PRESENCE_TTL`] is taken to hold nothing. Every message is the whole state, so a
//! missed one is repaired by the next. A stopping arena publishes an empty snapshot.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use knobel_engine::Game;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tracing::{debug, warn};

use super::{Cluster, SUBJECT_PREFIX};
use crate::lobby::Lobby;

/// How often an arena checks whether its presence changed.
pub const PUBLISH_EVERY: Duration = Duration::from_millis(25);
/// How often it publishes it unchanged.
pub const REFRESH_EVERY: Duration = Duration::from_secs(1);
/// How long an arena's last presence holds without a newer one.
pub const PRESENCE_TTL: Duration = Duration::from_secs(3);
/// At most this many bots in one presence message (the rest are not offered to others).
pub const MAX_PRESENT_BOTS: usize = 10_000;

/// One arena's presence as published.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The arena's instance id.
    pub instance: String,
    /// Its peer address.
    pub peer: String,
    /// Grows with every change (and every restart starts above the last, from the clock).
    pub version: u64,
    /// Its connected bots.
    pub bots: Vec<PresentBot>,
}

/// A bot connected to an arena.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PresentBot {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// The games of each of its waiting streams (empty: connected, none waiting).
    pub streams: Vec<Vec<Game>>,
}

impl PresentBot {
    /// Its streams waiting that play `game`.
    pub fn free(&self, game: Game) -> usize {
        self.streams.iter().filter(|g| g.contains(&game)).count()
    }
}

/// What this arena knows of the others' presence.
#[derive(Default)]
pub struct Presence {
    arenas: Mutex<HashMap<String, (Instant, Snapshot)>>,
}

/// Where a bot waits on another arena.
#[derive(Clone, Debug)]
pub struct Holder {
    /// The arena's instance id.
    pub instance: String,
    /// Its peer address.
    pub peer: String,
    /// The bot's id.
    pub bot_id: i64,
    /// Its streams waiting for the game asked.
    pub free: usize,
}

impl Presence {
    /// Takes `snapshot` unless an arena's newer one is known (or it is this arena's).
    fn take(&self, own: &str, snapshot: Snapshot) {
        if snapshot.instance == own {
            return;
        }
        let mut arenas = self.arenas.lock().expect("presence lock");
        let newer = arenas
            .get(&snapshot.instance)
            .is_some_and(|(_, known)| known.version > snapshot.version);
        if !newer {
            arenas.insert(snapshot.instance.clone(), (Instant::now(), snapshot));
        }
    }

    /// The arenas (other than this one) where bot `bot` waits with a stream for `game`,
    /// most streams first.
    pub fn holders(&self, bot: &str, game: Game) -> Vec<Holder> {
        let arenas = self.arenas.lock().expect("presence lock");
        let mut found: Vec<Holder> = arenas
            .values()
            .filter(|(seen, _)| seen.elapsed() < PRESENCE_TTL)
            .filter_map(|(_, s)| {
                let b = s.bots.iter().find(|b| b.name == bot)?;
                let free = b.free(game);
                (free > 0).then(|| Holder {
                    instance: s.instance.clone(),
                    peer: s.peer.clone(),
                    bot_id: b.id,
                    free,
                })
            })
            .collect();
        found.sort_by(|a, b| b.free.cmp(&a.free).then(a.instance.cmp(&b.instance)));
        found
    }

    /// Whether bot `bot` is connected to another arena.
    pub fn is_connected(&self, bot: &str) -> bool {
        let arenas = self.arenas.lock().expect("presence lock");
        arenas
            .values()
            .filter(|(seen, _)| seen.elapsed() < PRESENCE_TTL)
            .any(|(_, s)| s.bots.iter().any(|b| b.name == bot))
    }
}

/// This arena's presence now.
fn own_snapshot(cluster: &Cluster, lobby: &Lobby, version: u64) -> Snapshot {
    let mut bots: Vec<PresentBot> = Vec::new();
    for w in lobby.waiting_streams() {
        match bots.iter_mut().find(|b| b.id == w.bot_id) {
            Some(b) => b.streams.push(w.games),
            None => bots.push(PresentBot {
                id: w.bot_id,
                name: w.bot_name,
                streams: vec![w.games],
            }),
        }
    }
    for name in lobby.playing_bots() {
        if !bots.iter().any(|b| b.name == name) {
            // Connected, playing: its id is not needed (nothing waits).
            bots.push(PresentBot {
                id: 0,
                name,
                streams: Vec::new(),
            });
        }
    }
    bots.truncate(MAX_PRESENT_BOTS);
    bots.sort_by(|a, b| a.name.cmp(&b.name));
    Snapshot {
        instance: cluster.instance.clone(),
        peer: cluster.peer_address.clone(),
        version,
        bots,
    }
}

/// Starts publishing this arena's presence and taking the others'.
pub(super) async fn start(
    cluster: Arc<Cluster>,
    lobby: Arc<Lobby>,
    shutdown: watch::Receiver<bool>,
) {
    let subject = format!("{SUBJECT_PREFIX}.presence");
    match cluster.nats.subscribe(subject.clone()).await {
        Ok(mut subscriber) => {
            let cluster = cluster.clone();
            tokio::spawn(async move {
                while let Some(message) = subscriber.next().await {
                    match serde_json::from_slice::<Snapshot>(&message.payload) {
                        Ok(snapshot) => cluster.presence.take(&cluster.instance, snapshot),
                        Err(error) => debug!(%error, "a presence message that does not read"),
                    }
                }
            });
        }
        Err(error) => warn!(%error, "cannot subscribe to the cluster's presence"),
    }
    tokio::spawn(publish(cluster, lobby, subject, shutdown));
}

/// Publishes this arena's presence on every change and every [`REFRESH_EVERY`], and an
/// empty one when it stops.
async fn publish(
    cluster: Arc<Cluster>,
    lobby: Arc<Lobby>,
    subject: String,
    mut shutdown: watch::Receiver<bool>,
) {
    // From the clock, so that a restarted arena's versions are above its last ones.
    let mut version = crate::store::now_ms().max(0) as u64 * 1000;
    let mut last: Option<Snapshot> = None;
    let mut sent_at = Instant::now();
    loop {
        let stopping = *shutdown.borrow();
        let mut now = own_snapshot(&cluster, &lobby, version);
        if stopping {
            now.bots.clear();
        }
        let changed = last.as_ref().is_none_or(|l| l.bots != now.bots);
        if changed || sent_at.elapsed() >= REFRESH_EVERY {
            if changed {
                version += 1;
                now.version = version;
            }
            if let Ok(payload) = serde_json::to_vec(&now) {
                // While NATS is away its client queues; a full queue is not waited for long.
                let sent = cluster.nats.publish(subject.clone(), payload.into());
                if !matches!(
                    tokio::time::timeout(PUBLISH_EVERY * 4, sent).await,
                    Ok(Ok(()))
                ) {
                    debug!("cannot publish this arena's presence now");
                }
            }
            sent_at = Instant::now();
            last = Some(now);
        }
        if stopping {
            let _ = cluster.nats.flush().await;
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(PUBLISH_EVERY) => {}
            () = crate::shutdown::requested(&mut shutdown) => {}
        }
    }
}
