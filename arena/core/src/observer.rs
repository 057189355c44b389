//! What the runtime reports about itself, to whoever watches it (the arena's metrics): a
//! match started or ended, a bot's stream opened. The runtime owns the trait so that it
//! depends on no observer; the server's metrics implement it, as they implement the store's
//! [`StoreObserver`], which this trait extends (the lobby's recorder reports through it).

use std::sync::Arc;
use std::time::Duration;

use knobel_engine::Game;

use crate::referee::{MatchInfo, MatchReport};
use crate::store::{StoreObserver, StoreOperation};

/// Watches the runtime. Every call is cheap and never blocks: the lobby and the streams call
/// it on their own paths.
pub trait RuntimeObserver: StoreObserver {
    /// A match of `game` started.
    fn match_started(&self, game: Game);
    /// The match of `info` ended with `report` (finished or aborted).
    fn match_ended(&self, info: &MatchInfo, report: &MatchReport);
    /// A stream of bot `bot` opened; it counts as open until the returned guard is dropped.
    fn stream_opened(&self, bot: &str) -> StreamGuard;
}

/// Held while a stream counts as open ([`RuntimeObserver::stream_opened`]); what it holds
/// is the observer's (a gauge it decrements on drop, say).
pub struct StreamGuard {
    /// Dropped with the guard.
    _held: Option<Box<dyn Send + Sync>>,
}

impl StreamGuard {
    /// A guard that holds `held` until dropped.
    pub fn holding(held: impl Send + Sync + 'static) -> StreamGuard {
        StreamGuard {
            _held: Some(Box::new(held)),
        }
    }

    /// A guard that holds nothing (an observer that does not count streams).
    pub fn none() -> StreamGuard {
        StreamGuard { _held: None }
    }
}

/// The runtime's observer, shared.
pub type Observer = Arc<dyn RuntimeObserver>;

/// An observer that watches nothing (tests, and tools that run matches without metrics).
#[derive(Clone, Copy, Debug, Default)]
pub struct Unobserved;

impl StoreObserver for Unobserved {
    fn failed(&self, _: StoreOperation) {}
    fn pending_writes(&self, _: usize) {}
    fn committed(&self, _: bool, _: Duration) {}
    fn stale_result_refused(&self) {}
}

impl RuntimeObserver for Unobserved {
    fn match_started(&self, _: Game) {}
    fn match_ended(&self, _: &MatchInfo, _: &MatchReport) {}
    fn stream_opened(&self, _: &str) -> StreamGuard {
        StreamGuard::none()
    }
}
