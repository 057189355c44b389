//! A gRPC codec for the Play stream that can also send raw frames.
//!
//! Well-behaved bots never send raw frames; the generated client's codec does everything
//! they need. This codec exists for [`crate::misbehave::Misbehave::Garbage`]: it writes
//! [`Outgoing::Raw`] bytes as the payload of a gRPC frame unchanged, so an arena can be
//! tested with a frame that is not a protobuf message.

use knobel_proto::v1 as pb;
use prost::Message;
use prost::bytes::BufMut;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// One message towards the arena.
#[derive(Clone, Debug)]
pub enum Outgoing {
    /// A protobuf message, encoded as usual.
    Message(pb::BotMessage),
    /// Bytes sent as a frame's payload as they are.
    Raw(Vec<u8>),
}

impl Outgoing {
    /// The protobuf message, if this is one.
    pub fn into_message(self) -> Option<pb::BotMessage> {
        match self {
            Outgoing::Message(message) => Some(message),
            Outgoing::Raw(_) => None,
        }
    }
}

impl From<pb::bot_message::Kind> for Outgoing {
    fn from(kind: pb::bot_message::Kind) -> Outgoing {
        Outgoing::Message(pb::BotMessage { kind: Some(kind) })
    }
}

/// Encodes [`Outgoing`], decodes [`pb::ArenaMessage`].
#[derive(Clone, Copy, Debug, Default)]
pub struct PlayCodec;

/// The encoding half of [`PlayCodec`].
#[derive(Clone, Copy, Debug, Default)]
pub struct PlayEncoder;

/// The decoding half of [`PlayCodec`].
#[derive(Clone, Copy, Debug, Default)]
pub struct PlayDecoder;

impl Codec for PlayCodec {
    type Encode = Outgoing;
    type Decode = pb::ArenaMessage;
    type Encoder = PlayEncoder;
    type Decoder = PlayDecoder;

    fn encoder(&mut self) -> PlayEncoder {
        PlayEncoder
    }

    fn decoder(&mut self) -> PlayDecoder {
        PlayDecoder
    }
}

impl Encoder for PlayEncoder {
    type Item = Outgoing;
    type Error = Status;

    fn encode(&mut self, item: Outgoing, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        match item {
            Outgoing::Message(message) => message
                .encode(dst)
                .map_err(|e| Status::internal(format!("cannot encode a BotMessage: {e}"))),
            Outgoing::Raw(bytes) => {
                dst.put_slice(&bytes);
                Ok(())
            }
        }
    }
}

impl Decoder for PlayDecoder {
    type Item = pb::ArenaMessage;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<pb::ArenaMessage>, Status> {
        pb::ArenaMessage::decode(src)
            .map(Some)
            .map_err(|e| Status::internal(format!("cannot decode an ArenaMessage: {e}")))
    }
}
