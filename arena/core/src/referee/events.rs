//! Public events on their way to the seats: shared batches, queued per seat and sent with
//! the seat's next message or, at the latest, [`EVENTS_MAX_DELAY`] after the first of them.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use knobel_engine::Event;
use tokio::time::Instant;

use super::seat::SeatState;

/// The longest a public event waits for later ones before it is sent to a seat. Events
/// are batched: a seat's pending events go out with its next message (the last ones of a
/// match with its result), at the latest this long after the first of them happened.
pub const EVENTS_MAX_DELAY: Duration = Duration::from_millis(50);

/// Public events of one step of a match, shared by every seat they are sent to.
#[derive(Debug)]
pub struct EventBatch {
    events: Vec<Event>,
    /// The batch's wire form, made by the first link that sends it and reused by the
    /// others: events are encoded once per match, not once per seat.
    wire: OnceLock<Bytes>,
}

impl EventBatch {
    /// A batch of `events`, oldest first.
    pub fn new(events: Vec<Event>) -> EventBatch {
        EventBatch {
            events,
            wire: OnceLock::new(),
        }
    }

    /// The events, oldest first.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The batch's wire form: `encode` makes it the first time, later calls share it.
    pub fn wire(&self, encode: impl FnOnce(&[Event]) -> Bytes) -> Bytes {
        self.wire.get_or_init(|| encode(&self.events)).clone()
    }
}

/// Queues public events for every bot seat. At the end of the match the events not yet
/// sent ride on the result ([`Announcement`](super::Announcement)).
pub(super) fn broadcast(seats: &mut [SeatState], events: &[Event]) {
    if events.is_empty() {
        return;
    }
    let now = Instant::now();
    let batch = Arc::new(EventBatch::new(events.to_vec()));
    for seat in seats.iter_mut().filter(|s| s.is_bot()) {
        seat.pending_since.get_or_insert(now);
        seat.pending.push(batch.clone());
    }
}

/// Sends the pending events of every seat whose oldest one has waited
/// [`EVENTS_MAX_DELAY`].
pub(super) fn flush_due(seats: &mut [SeatState], now: Instant) {
    for seat in seats.iter_mut() {
        if seat
            .pending_since
            .is_some_and(|since| now >= since + EVENTS_MAX_DELAY)
        {
            seat.flush();
        }
    }
}

/// When the oldest pending events of any seat are due, if any seat has some.
pub(super) fn next_flush(seats: &[SeatState]) -> Option<Instant> {
    seats
        .iter()
        .filter_map(|s| s.pending_since)
        .min()
        .map(|since| since + EVENTS_MAX_DELAY)
}
