//! Which seat woke the match task: each seat's link is polled with a waker of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::Wake;

use futures_util::task::AtomicWaker;

/// Which seats' links may have something to read, and the waker of the match task.
///
/// Each seat's link is polled with a waker of its own (a [`SeatWaker`]) that sets the
/// seat's bit and wakes the match task, so a wake-up reads only the seats that woke it,
/// rather than every bot of the match.
#[derive(Default)]
pub(super) struct Readiness {
    seats: AtomicU32,
    /// The waker of the match task.
    pub(super) task: AtomicWaker,
}

impl Readiness {
    /// The seats marked ready since the last call (and clears the marks).
    pub(super) fn take(&self) -> u32 {
        self.seats.swap(0, Ordering::AcqRel)
    }

    fn mark(&self, seat: usize) {
        self.seats.fetch_or(1 << seat, Ordering::AcqRel);
    }
}

/// The waker a seat's link is polled with.
pub(super) struct SeatWaker {
    pub(super) readiness: Arc<Readiness>,
    pub(super) seat: usize,
}

impl SeatWaker {
    /// Marks the seat as ready to read, without waking the match task.
    pub(super) fn mark(&self) {
        self.readiness.mark(self.seat);
    }
}

impl Wake for SeatWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.mark();
        self.readiness.task.wake();
    }
}

/// What ended a wait for answers.
pub(super) enum Woke {
    Answered,
    Flush,
    Shutdown,
}
