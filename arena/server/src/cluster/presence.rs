//! Presence: which bots wait on which arena, with how many streams per game.
//!
//! Each arena publishes its whole presence (a versioned snapshot) whenever it changes (at
//! once when its lobby's streams start or stop waiting, and checked every
//! [`PUBLISH_EVERY`]), and at least every [`REFRESH_EVERY`]; a snapshot older
//! than the last one seen from that arena is ignored, and an arena not heard of for
//! [`PRESENCE_TTL`] is taken to hold nothing. Every message is the whole state, so a
//! missed one is repaired by the next. A stopping arena publishes an empty snapshot.
//! Presence wakes no league scheduler: another arena's stream that starts waiting is seen
//! at the next look, on this arena's own events (a match ending, a stream waiting here) or
//! at the latest on the scheduler's tick. Waking every arena for every other arena's
//! stream made three arenas read the store for nothing (docs/benchmarks.md).

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
use crate::streams::StreamRegistry;

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
    /// Its Play streams open on the arena, waiting or playing (they count against
    /// `--max-streams-per-bot` on every arena). Absent from an older arena's presence: 0.
    #[serde(default)]
    pub open: usize,
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
        let known = arenas.get(&snapshot.instance);
        if known.is_some_and(|(_, known)| known.version > snapshot.version) {
            return;
        }
        arenas.insert(snapshot.instance.clone(), (Instant::now(), snapshot));
    }

    /// Of the arenas (other than this one) where bot `bot` waits with more streams for
    /// `game` than this arena has `asked` there already, the one with the most (ties: the
    /// smallest instance id), if any. Called for every seat of every match the scheduler
    /// looks at: it allocates only what it returns.
    pub fn holder(&self, bot: &str, game: Game, asked: impl Fn(&str) -> usize) -> Option<Holder> {
        let arenas = self.arenas.lock().expect("presence lock");
        let mut best: Option<(&Snapshot, &PresentBot, usize)> = None;
        for (seen, s) in arenas.values() {
            if seen.elapsed() >= PRESENCE_TTL {
                continue;
            }
            let Some(b) = s.bots.iter().find(|b| b.name == bot) else {
                continue;
            };
            let free = b.free(game);
            if free <= asked(&s.instance) {
                continue;
            }
            let better = best.is_none_or(|(known, _, most)| {
                free > most || (free == most && s.instance < known.instance)
            });
            if better {
                best = Some((s, b, free));
            }
        }
        best.map(|(s, b, free)| Holder {
            instance: s.instance.clone(),
            peer: s.peer.clone(),
            bot_id: b.id,
            free,
        })
    }

    /// The Play streams bot `bot` has open on the other arenas.
    pub fn open_streams(&self, bot: &str) -> usize {
        self.in_other_arenas(bot, |found| found.map(|b| b.open).sum())
    }

    /// Whether bot `bot` is connected to another arena.
    pub fn is_connected(&self, bot: &str) -> bool {
        self.in_other_arenas(bot, |found| found.next().is_some())
    }

    /// `read` of bot `bot` as each other arena's presence (not yet out of date) lists it.
    fn in_other_arenas<T>(
        &self,
        bot: &str,
        read: impl FnOnce(&mut dyn Iterator<Item = &PresentBot>) -> T,
    ) -> T {
        let arenas = self.arenas.lock().expect("presence lock");
        let mut found = arenas
            .values()
            .filter(|(seen, _)| seen.elapsed() < PRESENCE_TTL)
            .filter_map(|(_, s)| s.bots.iter().find(|b| b.name == bot));
        read(&mut found)
    }
}

/// This arena's presence now: the bots with streams open here (how many, and the games of
/// those waiting), and those playing in its matches through other arenas.
fn own_snapshot(cluster: &Cluster, (lobby, streams): Own<'_>, version: u64) -> Snapshot {
    let mut bots: Vec<PresentBot> = streams
        .open_streams()
        .into_iter()
        .map(|(id, name, open)| PresentBot {
            id,
            name,
            streams: Vec::new(),
            open,
        })
        .collect();
    for w in lobby.waiting_streams() {
        match bots.iter_mut().find(|b| b.id == w.bot_id) {
            Some(b) => b.streams.push(w.games),
            None => bots.push(PresentBot {
                id: w.bot_id,
                name: w.bot_name,
                streams: vec![w.games],
                open: 0,
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
                open: 0,
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

/// What this arena's presence is made of: its lobby and its open streams.
type Own<'a> = (&'a Lobby, &'a StreamRegistry);

/// Starts publishing this arena's presence and taking the others'.
pub(super) async fn start(
    cluster: Arc<Cluster>,
    (lobby, streams): (Arc<Lobby>, StreamRegistry),
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
    tokio::spawn(publish(cluster, (lobby, streams), subject, shutdown));
}

/// Publishes this arena's presence on every change and every [`REFRESH_EVERY`], and an
/// empty one when it stops.
async fn publish(
    cluster: Arc<Cluster>,
    (lobby, streams): (Arc<Lobby>, StreamRegistry),
    subject: String,
    mut shutdown: watch::Receiver<bool>,
) {
    // From the clock, so that a restarted arena's versions are above its last ones.
    let mut version = crate::store::now_ms().max(0) as u64 * 1000;
    let mut last: Option<Snapshot> = None;
    let mut sent_at = Instant::now();
    loop {
        let stopping = *shutdown.borrow();
        let mut now = own_snapshot(&cluster, (&lobby, &streams), version);
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
            () = lobby.waiting_changed().notified() => {}
            () = crate::shutdown::requested(&mut shutdown) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(instance: &str, version: u64, bots: &[(&str, usize)]) -> Snapshot {
        Snapshot {
            instance: instance.to_owned(),
            peer: format!("{instance}:7000"),
            version,
            bots: bots
                .iter()
                .enumerate()
                .map(|(i, (name, streams))| PresentBot {
                    id: i as i64 + 1,
                    name: (*name).to_owned(),
                    streams: vec![vec![Game::Schocken]; *streams],
                    // One more stream open, playing.
                    open: streams + 1,
                })
                .collect(),
        }
    }

    #[test]
    fn a_snapshot_is_taken_unless_it_is_older_than_the_last_or_this_arenas_own() {
        let presence = Presence::default();
        let ada_free = || {
            presence
                .holder("ada", Game::Schocken, |_| 0)
                .map(|h| h.free)
        };
        // (instance, version, ada's streams there): ada's free streams as then known.
        let steps = [
            ("b", 1, 1, Some(1)),  // new
            ("b", 2, 2, Some(2)),  // newer
            ("b", 3, 0, None),     // taken
            ("b", 4, 1, Some(1)),  // back
            ("b", 3, 2, Some(1)),  // older than the last: not taken
            ("me", 9, 3, Some(1)), // this arena's own: not taken
        ];
        for (instance, version, streams, expected) in steps {
            presence.take("me", snapshot(instance, version, &[("ada", streams)]));
            assert_eq!(ada_free(), expected, "{instance} {version}");
        }
        assert!(presence.holder("bob", Game::Schocken, |_| 0).is_none());
    }

    #[test]
    fn the_holder_has_the_most_streams_of_those_with_more_than_asked_ties_to_the_smallest_id() {
        let presence = Presence::default();
        presence.take("me", snapshot("c", 1, &[("ada", 2)]));
        presence.take("me", snapshot("b", 1, &[("ada", 2), ("bob", 1)]));
        presence.take("me", snapshot("d", 1, &[("ada", 1)]));
        let holder = |asked: &[(&str, usize)]| {
            presence
                .holder("ada", Game::Schocken, |i| {
                    asked.iter().find(|(a, _)| *a == i).map_or(0, |(_, n)| *n)
                })
                .map(|h| (h.instance, h.peer, h.bot_id, h.free))
        };
        assert_eq!(holder(&[]), Some(("b".into(), "b:7000".into(), 1, 2)));
        assert_eq!(
            holder(&[("b", 1)]).unwrap().0,
            "b",
            "one of its two is free"
        );
        assert_eq!(
            holder(&[("b", 2)]),
            Some(("c".into(), "c:7000".into(), 1, 2))
        );
        assert_eq!(holder(&[("b", 2), ("c", 2)]).unwrap().0, "d");
        assert_eq!(holder(&[("b", 2), ("c", 2), ("d", 1)]), None);
        assert!(
            presence.holder("ada", Game::Zokken, |_| 0).is_none(),
            "no stream plays it"
        );
        assert!(presence.is_connected("bob") && !presence.is_connected("cy"));
        // Open streams, waiting or playing, summed over the other arenas.
        assert_eq!(presence.open_streams("ada"), 3 + 3 + 2);
        assert_eq!(presence.open_streams("cy"), 0);
    }

    #[test]
    fn an_older_arenas_presence_without_open_streams_reads_as_none_open() {
        let json = r#"{"instance":"b","peer":"b:7000","version":1,
            "bots":[{"id":1,"name":"ada","streams":[["schocken"]]}]}"#;
        let read: Snapshot = serde_json::from_str(json).unwrap();
        assert_eq!(read.bots[0].open, 0);
        assert_eq!(read.bots[0].free(Game::Schocken), 1);
    }
}
