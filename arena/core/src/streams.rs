//! The open Play streams of each bot, by bot id: how many a bot has (bounded per bot) and how
//! to end them all at once when the bot is revoked.
//!
//! Every stream holds a [`StreamSlot`] from [`StreamRegistry::acquire`], with a
//! [`CancellationToken`] shared by all streams of its bot. Revoking the bot cancels the
//! token: the stream's link (in the lobby and during a match) then reports the bot
//! disconnected, so its running seats forfeit, and the call ends with PERMISSION_DENIED
//! "bot NAME was revoked".
//!
//! Two ways lead there: the `Admin.RevokeBot` RPC calls [`StreamRegistry::revoke`] at once;
//! `knobel bot revoke` writes the database from another process, which
//! [`StreamRegistry::watch_revocations`] notices within [`REVOKE_POLL`] (one query for all
//! connected bots each time).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::observer::{RuntimeObserver, StreamGuard};
use crate::store::Store;

/// How often the arena checks the database for connected bots revoked by another process;
/// such a bot's streams end within about this long.
pub const REVOKE_POLL: Duration = Duration::from_secs(1);

/// How long one such check may take before it is given up (and tried again next time).
const REVOKE_POLL_TIMEOUT: Duration = Duration::from_secs(2);

struct Entry {
    name: String,
    streams: usize,
    revoked: CancellationToken,
}

/// The open streams per bot id; cheap to clone (clones share the registry).
#[derive(Clone, Default)]
pub struct StreamRegistry {
    bots: Arc<Mutex<HashMap<i64, Entry>>>,
}

/// Holds one of a bot's stream slots; frees it when dropped.
pub struct StreamSlot {
    registry: StreamRegistry,
    bot_id: i64,
    revoked: CancellationToken,
    _counted: StreamGuard,
}

impl StreamSlot {
    /// Cancelled once the bot is revoked.
    pub fn revoked(&self) -> &CancellationToken {
        &self.revoked
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut bots = self.registry.bots.lock().expect("streams lock");
        if let Some(entry) = bots.get_mut(&self.bot_id) {
            entry.streams -= 1;
            if entry.streams == 0 {
                bots.remove(&self.bot_id);
            }
        }
    }
}

impl StreamRegistry {
    /// A slot for one more stream of `bot_id` (named `bot_name`), which has `elsewhere`
    /// streams open on other arenas (cluster mode); `Err` with the number open here if the
    /// bot has `max` open already, here and elsewhere together.
    pub fn acquire(
        &self,
        bot_id: i64,
        bot_name: &str,
        (max, elsewhere): (usize, usize),
        observer: &dyn RuntimeObserver,
    ) -> Result<StreamSlot, usize> {
        let mut bots = self.bots.lock().expect("streams lock");
        let here = bots.get(&bot_id).map_or(0, |e| e.streams);
        if here + elsewhere >= max {
            return Err(here);
        }
        let entry = bots.entry(bot_id).or_insert_with(|| Entry {
            name: bot_name.to_owned(),
            streams: 0,
            revoked: CancellationToken::new(),
        });
        entry.streams += 1;
        Ok(StreamSlot {
            registry: self.clone(),
            bot_id,
            revoked: entry.revoked.clone(),
            _counted: observer.stream_opened(bot_name),
        })
    }

    /// Ends every open stream of `bot_id` (the bot was revoked); returns how many it had.
    pub fn revoke(&self, bot_id: i64) -> usize {
        let bots = self.bots.lock().expect("streams lock");
        match bots.get(&bot_id) {
            Some(entry) => {
                entry.revoked.cancel();
                entry.streams
            }
            None => 0,
        }
    }

    /// Whether bot `bot_name` has a stream open.
    pub fn is_open(&self, bot_name: &str) -> bool {
        let bots = self.bots.lock().expect("streams lock");
        bots.values().any(|entry| entry.name == bot_name)
    }

    /// The bots with open streams here: id, name and how many.
    pub fn open_streams(&self) -> Vec<(i64, String, usize)> {
        let bots = self.bots.lock().expect("streams lock");
        bots.iter()
            .map(|(&id, entry)| (id, entry.name.clone(), entry.streams))
            .collect()
    }

    /// The ids of the bots with open streams whose revocation is not yet known here.
    fn connected(&self) -> Vec<i64> {
        let bots = self.bots.lock().expect("streams lock");
        bots.iter()
            .filter(|(_, entry)| !entry.revoked.is_cancelled())
            .map(|(&id, _)| id)
            .collect()
    }

    /// Every [`REVOKE_POLL`], asks `store` (one query) which connected bots were revoked and
    /// ends their streams, until `shutdown` turns true. A failed check is logged and tried
    /// again next time.
    pub async fn watch_revocations(self, store: Store, mut shutdown: watch::Receiver<bool>) {
        let mut every = tokio::time::interval(REVOKE_POLL);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = every.tick() => {}
                _ = crate::shutdown::requested(&mut shutdown) => return,
            }
            let ids = self.connected();
            if ids.is_empty() {
                continue;
            }
            match tokio::time::timeout(REVOKE_POLL_TIMEOUT, store.revoked_among(&ids)).await {
                Ok(Ok(revoked)) => {
                    for bot_id in revoked {
                        let streams = self.revoke(bot_id);
                        info!(bot_id, streams, "bot revoked: its streams end");
                    }
                }
                Ok(Err(error)) => warn!(error = %error, "cannot check for revoked bots"),
                Err(_) => warn!(
                    timeout_ms = REVOKE_POLL_TIMEOUT.as_millis() as u64,
                    "checking for revoked bots timed out"
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_bounded_per_bot_and_revoked_together() {
        let registry = StreamRegistry::default();
        let metrics = crate::observer::Unobserved;
        let a1 = registry.acquire(1, "bot", (2, 0), &metrics).unwrap();
        let a2 = registry.acquire(1, "bot", (2, 0), &metrics).unwrap();
        assert_eq!(registry.acquire(1, "bot", (2, 0), &metrics).err(), Some(2));
        let b = registry.acquire(2, "bob", (2, 0), &metrics).unwrap();
        assert!(registry.is_open("bot") && registry.is_open("bob") && !registry.is_open("cy"));
        let mut open = registry.open_streams();
        open.sort();
        assert_eq!(open, [(1, "bot".to_owned(), 2), (2, "bob".to_owned(), 1)]);
        let mut connected = registry.connected();
        connected.sort();
        assert_eq!(connected, [1, 2]);

        assert_eq!(registry.revoke(1), 2);
        assert!(a1.revoked().is_cancelled() && a2.revoked().is_cancelled());
        assert!(!b.revoked().is_cancelled());
        assert_eq!(registry.connected(), [2]);
        assert_eq!(registry.revoke(3), 0);

        drop((a1, a2));
        // All of bot 1's streams are gone: a new stream (of a bot registered again) starts
        // afresh.
        let again = registry.acquire(1, "bot", (2, 0), &metrics).unwrap();
        assert!(!again.revoked().is_cancelled());
    }

    #[test]
    fn streams_on_other_arenas_count_against_the_bound() {
        let registry = StreamRegistry::default();
        let metrics = crate::observer::Unobserved;
        // Two open elsewhere: one more here, and not a second.
        let one = registry.acquire(1, "bot", (3, 2), &metrics).unwrap();
        assert_eq!(registry.acquire(1, "bot", (3, 2), &metrics).err(), Some(1));
        // All three elsewhere: none here, and no entry is left behind for the refusal.
        assert_eq!(registry.acquire(2, "bob", (3, 3), &metrics).err(), Some(0));
        assert_eq!(registry.open_streams(), [(1, "bot".to_owned(), 1)]);
        drop(one);
        assert!(registry.open_streams().is_empty());
    }
}
