//! The arena's side of the Play stream: ArenaMessages whose events are encoded once.
//!
//! Every public event goes to every seat of a match. Converting and encoding it once per
//! seat is most of the cost of an arena message, so the arena encodes each batch of events
//! once ([`encode_events`]) and every seat's message shares those bytes
//! ([`OutboundMessage::events`]). On the wire nothing changes: an [`OutboundMessage`]
//! encodes to exactly the bytes of the [`v1::ArenaMessage`](crate::v1::ArenaMessage) with
//! the same events and kind, so bots decode it as one.
//!
//! [`arena_server`] is the `knobel.v1.Arena` server generated for this type; it is the
//! generated [`v1::arena_server`](crate::v1::arena_server) in every other respect.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use knobel_engine::Event;
use prost::encoding::{DecodeContext, WireType};
use prost::{DecodeError, Message};

use crate::convert;
use crate::v1 as pb;

/// Generated server halves of the `knobel.v1` services that send [`OutboundMessage`].
#[allow(missing_docs, clippy::all, clippy::pedantic, rustdoc::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/outbound/knobel.v1.rs"));
}

pub use generated::arena_server;

/// The field number of `ArenaMessage.events`.
const EVENTS_FIELD: u32 = 8;

/// A `knobel.v1.ArenaMessage` as the arena sends it: its events already encoded, and its
/// kind. It encodes to the same bytes as the `ArenaMessage` with these events and kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OutboundMessage {
    /// Runs of encoded `ArenaMessage.events` entries (field tag, length and event each), as
    /// [`encode_events`] makes them, oldest first.
    pub events: Vec<Bytes>,
    /// What the message is, if anything besides its events.
    pub kind: Option<pb::arena_message::Kind>,
}

impl From<pb::arena_message::Kind> for OutboundMessage {
    fn from(kind: pb::arena_message::Kind) -> OutboundMessage {
        OutboundMessage {
            events: Vec::new(),
            kind: Some(kind),
        }
    }
}

/// Encodes `events` (oldest first) as `ArenaMessage.events` entries, once, to be shared by
/// every message that carries them: the encoding of an `ArenaMessage` with only these events.
pub fn encode_events(events: &[Event]) -> Bytes {
    Bytes::from(convert::arena_message(events, None).encode_to_vec())
}

impl Message for OutboundMessage {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        // Field order as prost writes an ArenaMessage: the kind, then events.
        if let Some(kind) = &self.kind {
            kind.encode(buf);
        }
        for run in &self.events {
            buf.put_slice(run);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag == EVENTS_FIELD {
            // Checked as an Event, kept as its encoded entry.
            let mut event = pb::Event::default();
            prost::encoding::message::merge(wire_type, &mut event, buf, ctx)?;
            let mut entry = BytesMut::new();
            prost::encoding::message::encode(EVENTS_FIELD, &event, &mut entry);
            self.events.push(entry.freeze());
            Ok(())
        } else if matches!(tag, 1..=3 | 5..=7 | 9) {
            // The tags of `ArenaMessage.kind` (4 is reserved, 8 is `events`); `Kind::merge`
            // takes no other.
            pb::arena_message::Kind::merge(&mut self.kind, tag, wire_type, buf, ctx)
        } else {
            prost::encoding::skip_field(wire_type, tag, buf, ctx)
        }
    }

    fn encoded_len(&self) -> usize {
        self.kind
            .as_ref()
            .map_or(0, pb::arena_message::Kind::encoded_len)
            + self.events.iter().map(Bytes::len).sum::<usize>()
    }

    fn clear(&mut self) {
        self.events.clear();
        self.kind = None;
    }
}
