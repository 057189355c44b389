//! Presence: which bots wait on which arena, with how many streams per game.
//!
//! Each arena publishes its presence as **versioned changes** and **periodic snapshots**,
//! on one subject (so that they arrive in the order they were sent):
//!
//! - a [`Change`] whenever its presence changes (at once when its lobby's streams start or
//!   stop waiting, and checked every [`PUBLISH_EVERY`]): only the bots whose entry changed
//!   and the names of those gone, from version `base` to `version`;
//! - a [`Snapshot`], the whole presence, at least every [`REFRESH_EVERY`] (and instead of a
//!   change that would be larger than half of the budget below).
//!
//! Another arena applies a change only on top of the version it knows; a change that does
//! not follow (one was missed) is ignored, and the next snapshot repairs the gap within
//! [`REFRESH_EVERY`]. A snapshot older than the last known version is ignored. An arena not
//! heard of for [`PRESENCE_TTL`] is taken to hold nothing. A stopping arena publishes an
//! empty snapshot. An arena of an earlier release reads the snapshots and skips the
//! changes (they do not read as a snapshot), so it sees the others at most a second late.
//!
//! Every message fits the NATS server's `max_payload` (and at most [`MAX_MESSAGE_BYTES`]):
//! bots whose entries do not fit, and those beyond [`MAX_PRESENT_BOTS`], are not offered
//! to the others (they still play here). Lookups by bot name are hashed: the scheduler asks
//! for every seat of every match it looks at.
//!
//! Each message says the seat link version of the arena's peer port (`peer_version`): a bot
//! held by an arena of another version is never offered as a holder, since its seat could
//! not be linked (an earlier release, which does not say, is taken as this one).
//!
//! Presence wakes no league scheduler: another arena's stream that starts waiting is seen
//! at the next look, on this arena's own events (a match ending, a stream waiting here) or
//! at the latest on the scheduler's tick. Waking every arena for every other arena's
//! stream made three arenas read the store for nothing (docs/benchmarks.md).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use knobel_engine::Game;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tracing::{debug, info, warn};

use super::relay::PEER_VERSION;
use super::{Cluster, SUBJECT_PREFIX};
use crate::lobby::Lobby;
use crate::streams::StreamRegistry;

/// How often an arena checks whether its presence changed.
pub const PUBLISH_EVERY: Duration = Duration::from_millis(25);
/// How often it publishes its whole presence (a snapshot), changed or not.
pub const REFRESH_EVERY: Duration = Duration::from_secs(1);
/// How long an arena's last presence holds without a newer one.
pub const PRESENCE_TTL: Duration = Duration::from_secs(3);
/// At most this many bots in one arena's presence (the rest are not offered to others).
pub const MAX_PRESENT_BOTS: usize = 10_000;
/// At most this many bytes in one presence message, whatever the NATS server allows.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// One arena's whole presence as published.
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
    /// The seat link version its peer port speaks (absent from an earlier release's
    /// presence: taken as this arena's).
    #[serde(default)]
    pub peer_version: Option<u32>,
}

/// A change of one arena's presence: from version `base` to `version`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The arena's instance id.
    pub instance: String,
    /// Its peer address.
    pub peer: String,
    /// The version this change applies to.
    pub base: u64,
    /// The version it makes.
    pub version: u64,
    /// The bots added or changed: their whole entries.
    pub changed: Vec<PresentBot>,
    /// The names of the bots no longer present.
    pub gone: Vec<String>,
    /// As in [`Snapshot`].
    #[serde(default)]
    pub peer_version: Option<u32>,
}

/// A presence message as read: a change or a snapshot (an earlier release's arena sends
/// snapshots only).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Message {
    Change(Change),
    Snapshot(Snapshot),
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

    /// At least the bytes of its JSON entry in a message (with the comma before it).
    fn json_bound(&self) -> usize {
        // `{"id":-9223372036854775808,"name":,"streams":[],"open":18446744073709551615}`:
        // all but the name (its quotes and the comma after the entry: `json_str_len`).
        const FRAME: usize = 77;
        // `["schocken","sjokken","zokken"],`: the longest games list, and its comma.
        const STREAM: usize = 33;
        FRAME + json_str_len(&self.name) + STREAM * self.streams.len()
    }
}

/// The bytes of `s` as a JSON string (with its quotes and a comma): control characters are
/// escaped in six bytes, quotes and backslashes in two.
fn json_str_len(s: &str) -> usize {
    let escaped: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum();
    escaped + 3
}

/// Another arena's presence as known here.
struct Known {
    /// When it was last heard of.
    seen: Instant,
    version: u64,
    peer: String,
    /// The seat link version of its peer port, if it said.
    peer_version: Option<u32>,
    bots: HashMap<String, PresentBot>,
}

impl Known {
    /// Whether a seat of its can be linked from here: its peer port speaks this arena's
    /// seat link version (or, from an earlier release, does not say).
    fn links(&self) -> bool {
        self.peer_version.is_none_or(|v| v == PEER_VERSION)
    }
}

/// What this arena knows of the others' presence.
#[derive(Default)]
pub struct Presence {
    arenas: Mutex<HashMap<String, Known>>,
    /// Grows with every message that changed what is known.
    generation: AtomicU64,
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

/// What taking a message did.
#[derive(Debug, PartialEq, Eq)]
enum Taken {
    Applied,
    /// Older than what is known, or this arena's own.
    Ignored,
    /// A change that does not follow the version known: the next snapshot repairs it.
    Missed,
}

impl Presence {
    /// Takes a presence message (see the module docs).
    fn take(&self, own: &str, message: Message) -> Taken {
        match message {
            Message::Snapshot(snapshot) => self.take_snapshot(own, snapshot),
            Message::Change(change) => self.take_change(own, change),
        }
    }

    /// Takes `snapshot` unless an arena's newer one is known (or it is this arena's).
    fn take_snapshot(&self, own: &str, snapshot: Snapshot) -> Taken {
        if snapshot.instance == own {
            return Taken::Ignored;
        }
        let mut arenas = self.arenas.lock().expect("presence lock");
        if arenas
            .get(&snapshot.instance)
            .is_some_and(|known| known.version > snapshot.version)
        {
            return Taken::Ignored;
        }
        let known = Known {
            seen: Instant::now(),
            version: snapshot.version,
            peer: snapshot.peer,
            peer_version: snapshot.peer_version,
            bots: snapshot
                .bots
                .into_iter()
                .map(|b| (b.name.clone(), b))
                .collect(),
        };
        let before = arenas.get(&snapshot.instance);
        // What was known of an arena whose presence had run out counts as nothing.
        let changed = before.is_none_or(|before| {
            before.seen.elapsed() >= PRESENCE_TTL
                || before.bots != known.bots
                || before.peer_version != known.peer_version
        });
        if !known.links() && before.is_none_or(Known::links) {
            info!(
                instance = %snapshot.instance,
                peer_version = ?known.peer_version,
                this_version = PEER_VERSION,
                "an arena speaks another seat link version: its bots play only in its own matches until both run one release"
            );
        }
        arenas.insert(snapshot.instance, known);
        if changed {
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
        Taken::Applied
    }

    /// Applies `change` if it follows the version known of its arena.
    fn take_change(&self, own: &str, change: Change) -> Taken {
        if change.instance == own {
            return Taken::Ignored;
        }
        let mut arenas = self.arenas.lock().expect("presence lock");
        let Some(known) = arenas.get_mut(&change.instance) else {
            return Taken::Missed;
        };
        if known.version >= change.version {
            return Taken::Ignored;
        }
        if known.version != change.base {
            return Taken::Missed;
        }
        for name in &change.gone {
            known.bots.remove(name);
        }
        for bot in change.changed {
            known.bots.insert(bot.name.clone(), bot);
        }
        known.version = change.version;
        known.peer = change.peer;
        known.peer_version = change.peer_version;
        known.seen = Instant::now();
        self.generation.fetch_add(1, Ordering::Relaxed);
        Taken::Applied
    }

    /// Grows with every message that changed what is known of the other arenas (an arena
    /// heard of again after its presence ran out counts as a change).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    /// Of the arenas (other than this one) where bot `bot` waits with more streams for
    /// `game` than this arena has `asked` there already, the one with the most (ties: the
    /// smallest instance id), if any. Called for every seat of every match the scheduler
    /// looks at: it allocates only what it returns.
    pub fn holder(&self, bot: &str, game: Game, asked: impl Fn(&str) -> usize) -> Option<Holder> {
        let arenas = self.arenas.lock().expect("presence lock");
        let mut best: Option<(&str, &Known, &PresentBot, usize)> = None;
        for (instance, known) in arenas.iter() {
            if known.seen.elapsed() >= PRESENCE_TTL || !known.links() {
                continue;
            }
            let Some(b) = known.bots.get(bot) else {
                continue;
            };
            let free = b.free(game);
            if free <= asked(instance) {
                continue;
            }
            let better = best.is_none_or(|(other, _, _, most)| {
                free > most || (free == most && instance.as_str() < other)
            });
            if better {
                best = Some((instance, known, b, free));
            }
        }
        best.map(|(instance, known, b, free)| Holder {
            instance: instance.to_owned(),
            peer: known.peer.clone(),
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
            .filter(|known| known.seen.elapsed() < PRESENCE_TTL)
            .filter_map(|known| known.bots.get(bot));
        read(&mut found)
    }
}

/// This arena's presence now, by name: the bots with streams open here (how many, and the
/// games of those waiting), and those playing in its matches through other arenas; at most
/// [`MAX_PRESENT_BOTS`], the first by name.
fn own_presence((lobby, streams): Own<'_>) -> BTreeMap<String, PresentBot> {
    let mut bots: BTreeMap<String, PresentBot> = BTreeMap::new();
    for (id, name, open) in streams.open_streams() {
        let entry = PresentBot {
            id,
            name: name.clone(),
            streams: Vec::new(),
            open,
        };
        bots.insert(name, entry);
    }
    for w in lobby.waiting_streams() {
        bots.entry(w.bot_name.clone())
            .or_insert_with(|| PresentBot {
                id: w.bot_id,
                name: w.bot_name,
                streams: Vec::new(),
                open: 0,
            })
            .streams
            .push(w.games);
    }
    for name in lobby.playing_bots() {
        // Connected, playing: its id is not needed (nothing waits).
        bots.entry(name.clone()).or_insert(PresentBot {
            id: 0,
            name,
            streams: Vec::new(),
            open: 0,
        });
    }
    while bots.len() > MAX_PRESENT_BOTS {
        bots.pop_last();
    }
    bots
}

/// What this arena's presence is made of: its lobby and its open streams.
type Own<'a> = (&'a Lobby, &'a StreamRegistry);

/// What this arena has told the others of its presence.
struct Published {
    instance: String,
    peer: String,
    version: u64,
    /// Its presence as the others know it (the last message's).
    offered: BTreeMap<String, PresentBot>,
    /// When the last snapshot was sent (`None`: none yet).
    snapshot_at: Option<Instant>,
    /// Bots left out of the last message because they did not fit.
    left_out: usize,
}

impl Published {
    fn new(instance: &str, peer: &str, version: u64) -> Published {
        Published {
            instance: instance.to_owned(),
            peer: peer.to_owned(),
            version,
            offered: BTreeMap::new(),
            snapshot_at: None,
            left_out: 0,
        }
    }

    /// Whether the next message must be a snapshot ([`REFRESH_EVERY`]).
    fn snapshot_due(&self) -> bool {
        self.snapshot_at
            .is_none_or(|at| at.elapsed() >= REFRESH_EVERY)
    }

    /// The message that tells the others `now` (a snapshot if `snapshot`), in at most
    /// `budget` bytes; `None` when there is nothing to tell.
    fn next(
        &mut self,
        now: BTreeMap<String, PresentBot>,
        budget: usize,
        snapshot: bool,
    ) -> Option<Vec<u8>> {
        // The message's own fields: `{"instance":"","peer":"","base":..,"version":..,...}`.
        let envelope = 200 + json_str_len(&self.instance) + json_str_len(&self.peer);
        let (fits, left_out) = fit(now, budget.saturating_sub(envelope));
        if left_out > 0 && self.left_out == 0 {
            warn!(
                left_out,
                budget,
                "this arena's presence is too large for one NATS message: some bots are not offered to the other arenas"
            );
        }
        self.left_out = left_out;
        let changed: Vec<PresentBot> = fits
            .iter()
            .filter(|(name, bot)| self.offered.get(*name) != Some(bot))
            .map(|(_, bot)| bot.clone())
            .collect();
        let gone: Vec<String> = self
            .offered
            .keys()
            .filter(|name| !fits.contains_key(*name))
            .cloned()
            .collect();
        let unchanged = changed.is_empty() && gone.is_empty();
        if unchanged && !snapshot {
            return None;
        }
        let base = self.version;
        if !unchanged {
            self.version += 1;
        }
        let change_bytes = changed.iter().map(PresentBot::json_bound).sum::<usize>()
            + gone.iter().map(|name| json_str_len(name)).sum::<usize>();
        let payload = if snapshot || change_bytes > budget / 2 {
            self.snapshot_at = Some(Instant::now());
            serde_json::to_vec(&Snapshot {
                instance: self.instance.clone(),
                peer: self.peer.clone(),
                version: self.version,
                bots: fits.values().cloned().collect(),
                peer_version: Some(PEER_VERSION),
            })
        } else {
            serde_json::to_vec(&Change {
                instance: self.instance.clone(),
                peer: self.peer.clone(),
                base,
                version: self.version,
                changed,
                gone,
                peer_version: Some(PEER_VERSION),
            })
        };
        self.offered = fits;
        payload.ok()
    }
}

/// The bots of `bots` whose entries fit in `budget` bytes together (in name order, each
/// that fits in what is left), and how many were left out.
fn fit(bots: BTreeMap<String, PresentBot>, budget: usize) -> (BTreeMap<String, PresentBot>, usize) {
    let (mut left, mut left_out) = (budget, 0);
    let fits = bots
        .into_iter()
        .filter(|(_, bot)| match left.checked_sub(bot.json_bound()) {
            Some(rest) => {
                left = rest;
                true
            }
            None => {
                left_out += 1;
                false
            }
        })
        .collect();
    (fits, left_out)
}

/// The most bytes one presence message may have: the NATS server's `max_payload`, at most
/// [`MAX_MESSAGE_BYTES`].
fn message_budget(cluster: &Cluster) -> usize {
    match cluster.nats.server_info().max_payload {
        0 => 1 << 20,
        max => max.min(MAX_MESSAGE_BYTES),
    }
}

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
                    match serde_json::from_slice::<Message>(&message.payload) {
                        Ok(message) => {
                            if cluster.presence.take(&cluster.instance, message) == Taken::Missed {
                                debug!(
                                    "a presence change that does not follow the version known: the next snapshot repairs it"
                                );
                            }
                        }
                        Err(error) => debug!(%error, "a presence message that does not read"),
                    }
                }
            });
        }
        Err(error) => warn!(%error, "cannot subscribe to the cluster's presence"),
    }
    tokio::spawn(publish(cluster, (lobby, streams), subject, shutdown));
}

/// Publishes this arena's presence: a change whenever it changes, a snapshot every
/// [`REFRESH_EVERY`], and an empty snapshot when it stops.
async fn publish(
    cluster: Arc<Cluster>,
    (lobby, streams): (Arc<Lobby>, StreamRegistry),
    subject: String,
    mut shutdown: watch::Receiver<bool>,
) {
    // From the clock, so that a restarted arena's versions are above its last ones.
    let version = crate::store::now_ms().max(0) as u64 * 1000;
    let mut published = Published::new(&cluster.instance, &cluster.peer_address, version);
    loop {
        let stopping = *shutdown.borrow();
        let now = if stopping {
            BTreeMap::new()
        } else {
            own_presence((&lobby, &streams))
        };
        let snapshot = stopping || published.snapshot_due();
        if let Some(payload) = published.next(now, message_budget(&cluster), snapshot) {
            // While NATS is away its client queues; a full queue is not waited for long. A
            // lost change is repaired by the next snapshot.
            let sent = cluster.nats.publish(subject.clone(), payload.into());
            if !matches!(
                tokio::time::timeout(PUBLISH_EVERY * 4, sent).await,
                Ok(Ok(()))
            ) {
                debug!("cannot publish this arena's presence now");
            }
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

    fn bot(name: &str, id: i64, streams: usize) -> PresentBot {
        PresentBot {
            id,
            name: name.to_owned(),
            streams: vec![vec![Game::Schocken]; streams],
            // One more stream open, playing.
            open: streams + 1,
        }
    }

    fn snapshot(instance: &str, version: u64, bots: &[(&str, usize)]) -> Snapshot {
        Snapshot {
            instance: instance.to_owned(),
            peer: format!("{instance}:7000"),
            version,
            bots: bots
                .iter()
                .enumerate()
                .map(|(i, (name, streams))| bot(name, i as i64 + 1, *streams))
                .collect(),
            peer_version: Some(PEER_VERSION),
        }
    }

    fn change(instance: &str, base: u64, changed: &[(&str, usize)], gone: &[&str]) -> Message {
        Message::Change(Change {
            instance: instance.to_owned(),
            peer: format!("{instance}:7000"),
            base,
            version: base + 1,
            changed: changed.iter().map(|(name, s)| bot(name, 9, *s)).collect(),
            gone: gone.iter().map(|name| (*name).to_owned()).collect(),
            peer_version: Some(PEER_VERSION),
        })
    }

    fn free(presence: &Presence, name: &str) -> Option<usize> {
        presence.holder(name, Game::Schocken, |_| 0).map(|h| h.free)
    }

    #[test]
    fn a_snapshot_is_taken_unless_it_is_older_than_the_last_or_this_arenas_own() {
        let presence = Presence::default();
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
            presence.take_snapshot("me", snapshot(instance, version, &[("ada", streams)]));
            assert_eq!(free(&presence, "ada"), expected, "{instance} {version}");
        }
        assert!(presence.holder("bob", Game::Schocken, |_| 0).is_none());
    }

    #[test]
    fn a_change_applies_on_the_version_it_follows_and_a_missed_one_waits_for_the_snapshot() {
        let presence = Presence::default();
        assert_eq!(
            presence.take("me", change("b", 4, &[("ada", 1)], &[])),
            Taken::Missed,
            "nothing known of b yet"
        );
        presence.take_snapshot("me", snapshot("b", 5, &[("ada", 1), ("bob", 2)]));
        assert_eq!(
            presence.take("me", change("b", 5, &[("ada", 3), ("cy", 1)], &["bob"])),
            Taken::Applied
        );
        assert_eq!(
            (
                free(&presence, "ada"),
                free(&presence, "bob"),
                free(&presence, "cy")
            ),
            (Some(3), None, Some(1))
        );
        assert_eq!(
            presence
                .holder("ada", Game::Schocken, |_| 0)
                .unwrap()
                .bot_id,
            9
        );
        assert_eq!(
            presence.take("me", change("b", 5, &[("ada", 2)], &[])),
            Taken::Ignored,
            "already known"
        );
        // Version 7 is missed: 8 does not follow 6 and changes nothing.
        assert_eq!(
            presence.take("me", change("b", 7, &[("ada", 2)], &[])),
            Taken::Missed
        );
        assert_eq!(free(&presence, "ada"), Some(3));
        // The snapshot of version 8 repairs it, and the changes follow it again.
        presence.take_snapshot("me", snapshot("b", 8, &[("ada", 2)]));
        assert_eq!(
            (free(&presence, "ada"), free(&presence, "cy")),
            (Some(2), None)
        );
        assert_eq!(
            presence.take("me", change("b", 8, &[], &["ada"])),
            Taken::Applied
        );
        assert_eq!(free(&presence, "ada"), None);
        assert_eq!(
            presence.take("me", change("me", 8, &[("ada", 1)], &[])),
            Taken::Ignored,
            "its own"
        );
    }

    #[test]
    fn the_generation_grows_with_every_message_that_changes_what_is_known() {
        let presence = Presence::default();
        let mut same_as_known = snapshot("b", 6, &[("ada", 2)]);
        same_as_known.bots[0].id = 9;
        let mut steps = vec![
            (Message::Snapshot(snapshot("b", 1, &[("ada", 1)])), true),
            (Message::Snapshot(snapshot("b", 1, &[("ada", 1)])), false), // the refresh
            (change("b", 1, &[("ada", 2)], &[]), true),
            (change("b", 1, &[("ada", 3)], &[]), false), // already known
            (change("b", 5, &[("ada", 3)], &[]), false), // missed
            (Message::Snapshot(same_as_known), false),
            (Message::Snapshot(snapshot("b", 7, &[])), true),
            (Message::Snapshot(snapshot("me", 8, &[("ada", 1)])), false), // its own
        ];
        for (step, (message, grows)) in steps.drain(..).enumerate() {
            let before = presence.generation();
            presence.take("me", message);
            assert_eq!(presence.generation() > before, grows, "step {step}");
        }
    }

    #[test]
    fn the_holder_has_the_most_streams_of_those_with_more_than_asked_ties_to_the_smallest_id() {
        let presence = Presence::default();
        presence.take_snapshot("me", snapshot("c", 1, &[("ada", 2)]));
        presence.take_snapshot("me", snapshot("b", 1, &[("ada", 2), ("bob", 1)]));
        presence.take_snapshot("me", snapshot("d", 1, &[("ada", 1)]));
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
    fn an_arena_of_another_seat_link_version_holds_no_seat_for_this_one() {
        let presence = Presence::default();
        let of_version = |instance: &str, version: u64, peer_version| Snapshot {
            peer_version,
            ..snapshot(instance, version, &[("ada", 1)])
        };
        // Every stream is asked for already at `b`, the arena of this version.
        let holder = || presence.holder("ada", Game::Schocken, |i| usize::from(i == "b"));
        presence.take_snapshot("me", of_version("b", 1, Some(PEER_VERSION)));
        presence.take_snapshot("me", of_version("c", 1, Some(PEER_VERSION + 1)));
        assert!(holder().is_none(), "c speaks another version");
        assert!(presence.is_connected("ada"));
        // An earlier release says nothing of its version: its seats are linked.
        presence.take_snapshot("me", of_version("c", 2, None));
        assert_eq!(holder().map(|h| h.instance), Some("c".to_owned()));
        // A change carries the version too: c restarted with another release.
        let Message::Change(mut change) = change("c", 2, &[("ada", 2)], &[]) else {
            unreachable!("a change");
        };
        change.peer_version = Some(PEER_VERSION + 1);
        let before = presence.generation();
        presence.take_change("me", change);
        assert!(holder().is_none() && presence.generation() > before);
        // What an arena publishes says its version.
        let mut published = Published::new("me", "me:7000", 1);
        let payload = published.next(state(&[("ada", 1)]), 1 << 20, true).unwrap();
        let Message::Snapshot(sent) = read(&payload) else {
            panic!("a snapshot");
        };
        assert_eq!(sent.peer_version, Some(PEER_VERSION));
    }

    #[test]
    fn an_older_arenas_presence_without_open_streams_reads_as_none_open() {
        let json = r#"{"instance":"b","peer":"b:7000","version":1,
            "bots":[{"id":1,"name":"ada","streams":[["schocken"]]}]}"#;
        let Ok(Message::Snapshot(read)) = serde_json::from_str::<Message>(json) else {
            panic!("an older arena's snapshot reads as a snapshot");
        };
        assert_eq!(read.bots[0].open, 0);
        assert_eq!(read.bots[0].free(Game::Schocken), 1);
    }

    fn state(bots: &[(&str, usize)]) -> BTreeMap<String, PresentBot> {
        bots.iter()
            .map(|(name, streams)| ((*name).to_owned(), bot(name, 1, *streams)))
            .collect()
    }

    fn read(payload: &[u8]) -> Message {
        serde_json::from_slice(payload).expect("a presence message")
    }

    #[test]
    fn a_change_carries_only_what_changed_and_a_snapshot_comes_every_refresh() {
        let mut published = Published::new("a", "a:7000", 100);
        let budget = 1 << 20;
        let first = published.next(
            state(&[("ada", 1), ("bob", 1)]),
            budget,
            published.snapshot_due(),
        );
        assert!(
            matches!(read(&first.unwrap()), Message::Snapshot(s) if s.version == 101 && s.bots.len() == 2)
        );
        assert!(!published.snapshot_due());
        assert_eq!(
            published.next(state(&[("ada", 1), ("bob", 1)]), budget, false),
            None,
            "unchanged"
        );
        let next = published.next(state(&[("ada", 2), ("cy", 1)]), budget, false);
        let Message::Change(c) = read(&next.unwrap()) else {
            panic!("a change");
        };
        assert_eq!(
            (c.base, c.version, c.gone),
            (101, 102, vec!["bob".to_owned()])
        );
        assert_eq!(
            c.changed
                .iter()
                .map(|b| (b.name.as_str(), b.streams.len()))
                .collect::<Vec<_>>(),
            [("ada", 2), ("cy", 1)]
        );
        // The refresh: the whole presence, its version unchanged.
        let refresh = published.next(state(&[("ada", 2), ("cy", 1)]), budget, true);
        assert!(
            matches!(read(&refresh.unwrap()), Message::Snapshot(s) if s.version == 102 && s.bots.len() == 2)
        );
        // A change larger than half the budget goes as a snapshot.
        let many: Vec<(String, usize)> = (0..40).map(|i| (format!("bot{i:02}"), 1)).collect();
        let many: Vec<(&str, usize)> = many.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let big = published.next(state(&many), 8 << 10, false);
        assert!(
            matches!(read(&big.unwrap()), Message::Snapshot(s) if s.version == 103 && s.bots.len() == 40)
        );
    }

    #[test]
    fn another_arena_following_the_messages_knows_what_was_published_whatever_is_lost() {
        let presence = Presence::default();
        let mut published = Published::new("a", "a:7000", 0);
        let names = ["ada", "bob", "cy", "dee", "eve"];
        let mut seed = 7_u64;
        let (mut applied, mut lost) = (0, 0);
        for step in 0..400 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let bots: Vec<(&str, usize)> = names
                .iter()
                .enumerate()
                .filter(|(i, _)| (seed >> (8 + i)) & 1 == 1)
                .map(|(i, n)| (*n, ((seed >> (16 + 2 * i)) & 3) as usize))
                .collect();
            let snapshot = step % 10 == 0;
            let Some(payload) = published.next(state(&bots), 1 << 20, snapshot) else {
                continue;
            };
            // Every seventh change is lost; snapshots arrive.
            if !snapshot && step % 7 == 3 {
                lost += 1;
                continue;
            }
            if presence.take("me", read(&payload)) == Taken::Applied {
                applied += 1;
            }
            let arenas = presence.arenas.lock().unwrap();
            let known = &arenas["a"];
            assert!(
                known.version <= published.version,
                "never ahead of what was published"
            );
            if snapshot {
                assert_eq!(known.version, published.version, "a snapshot repairs");
            }
            if known.version == published.version {
                let view: BTreeMap<String, PresentBot> = known
                    .bots
                    .iter()
                    .map(|(n, b)| (n.clone(), b.clone()))
                    .collect();
                assert_eq!(view, published.offered, "step {step}");
            }
        }
        assert!(applied > 100 && lost > 20, "{applied} applied, {lost} lost");
    }

    #[test]
    fn a_message_fits_its_budget_and_leaves_out_the_bots_that_do_not_fit() {
        // The longest names, with characters JSON escapes.
        let name = |i: usize| format!("{i:04}{}", "\"\\".repeat(62));
        for budget in [1_000, 4_096, 65_536] {
            let mut published = Published::new("arena-with-a-long-instance-id", "10.0.0.1:7000", 0);
            let bots: BTreeMap<String, PresentBot> = (0..2_000)
                .map(|i| {
                    let mut b = bot(&name(i), i as i64, 3);
                    b.streams = vec![vec![Game::Schocken, Game::Sjokken, Game::Zokken]; 3];
                    (b.name.clone(), b)
                })
                .collect();
            let payload = published.next(bots, budget, true).unwrap();
            assert!(payload.len() <= budget, "{} > {budget}", payload.len());
            let Message::Snapshot(s) = read(&payload) else {
                panic!("a snapshot");
            };
            assert!(!s.bots.is_empty());
            assert_eq!(s.bots.len() + published.left_out, 2_000);
            // The first by name: the others are not offered.
            assert_eq!(s.bots.last().unwrap().name, name(s.bots.len() - 1));
        }
    }

    #[test]
    fn an_older_arena_skips_a_change() {
        let Message::Change(c) = change("b", 1, &[("ada", 1)], &[]) else {
            unreachable!()
        };
        let json = serde_json::to_vec(&c).unwrap();
        assert!(
            serde_json::from_slice::<Snapshot>(&json).is_err(),
            "an earlier release reads snapshots only"
        );
    }
}
