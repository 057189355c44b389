//! The gRPC contract between Knobel bots and the arena (package `knobel.v1`), and the one
//! place where engine types cross the wire.
//!
//! - [`v1`] holds the messages, the [`v1::arena_server`] and the [`v1::arena_client`],
//!   generated at build time from `proto/knobel/v1/arena.proto` (by protox and
//!   tonic-prost-build; no system `protoc`). That file documents every message and field for
//!   bot authors. The generated types are also re-exported at the crate root.
//! - [`convert`] converts between engine and wire types: `From` for engine to wire (what the
//!   arena sends), `TryFrom` with a [`WireError`] for wire to engine (untrusted input from a
//!   bot, or what a Rust bot receives).
//! - [`names`] is the one rule for bot names (registered and Hello names) and their
//!   uniqueness key.
//! - [`outbound`] is the arena's server half of the Play stream: the same wire messages,
//!   with events encoded once per match and shared by every seat.
//! - `json` (cargo feature `json`) writes and reads the Play stream's messages as JSON
//!   lines, by the proto3 JSON mapping with the `.proto` file's field names: the line
//!   format of `knobel-bot --exec` (docs/stdio-bots.md).
//! - [`FILE_DESCRIPTOR_SET`] is the encoded descriptor set of the contract, for gRPC server
//!   reflection.
//!
//! ```
//! use knobel_engine::{Action, DieMask};
//! use knobel_proto::{self as pb, WireError};
//!
//! // The arena sends engine values with `From`...
//! let reroll = Action::reroll(DieMask::from_slots(&[0, 2]).unwrap());
//! let wire = pb::Action::from(reroll);
//! assert_eq!(wire.kind, Some(pb::action::Kind::Reroll(pb::Reroll { dice: vec![0, 2], turn: vec![] })));
//! // ...and checks what a bot sends with `TryFrom`.
//! assert_eq!(Action::try_from(&wire), Ok(reroll));
//! let bad = pb::Action { kind: Some(pb::action::Kind::Reroll(pb::Reroll { dice: vec![3], turn: vec![] })) };
//! let error: WireError = Action::try_from(&bad).unwrap_err();
//! assert_eq!(error.to_string(), "reroll.dice: cannot reroll die 3: dice are numbered 0..=2");
//! ```
//!
//! The crate enables no tonic transport: the generated client has no `connect` helper.
//! A Rust bot builds a channel with tonic's `transport` feature and wraps it:
//! `ArenaClient::new(channel)`. A server adds `ArenaServer::new(service)` to its router; the
//! arena uses [`outbound::arena_server::ArenaServer`], the same service sending events encoded
//! once per match.
#![warn(missing_docs)]

pub mod convert;
#[cfg(feature = "json")]
pub mod json;
pub mod names;
pub mod outbound;

/// The generated `knobel.v1` messages, enums, client and server. Their documentation is the
/// `.proto` file's comments.
#[allow(missing_docs, clippy::all, clippy::pedantic, rustdoc::all)]
pub mod v1 {
    include!(concat!(env!("OUT_DIR"), "/knobel.v1.rs"));
}

/// The arenas' own link in cluster mode (package `knobel.peer.v1`, `proto/knobel/peer/v1/peer.proto`):
/// a seat relayed from the arena that referees a match to the arena its bot waits on. Not
/// part of the bot contract.
#[allow(missing_docs, clippy::all, clippy::pedantic, rustdoc::all)]
pub mod peer {
    include!(concat!(env!("OUT_DIR"), "/knobel.peer.v1.rs"));
}

pub use convert::{BotDecision, BotHello, WireError};
pub use v1::*;

/// The encoded `google.protobuf.FileDescriptorSet` of the `knobel.v1` contract (with its
/// comments), to register with a gRPC reflection service.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/knobel_v1_descriptor.bin"));

/// The fully qualified name of the arena service, `knobel.v1.Arena`.
pub const SERVICE_NAME: &str = v1::arena_server::SERVICE_NAME;
