//! The Play stream's messages as JSON text: the one place where `knobel.v1` messages become
//! JSON and back (the line format of `knobel-bot --exec`, docs/stdio-bots.md).
//!
//! The mapping is protobuf's canonical proto3 JSON mapping, driven by the contract's own
//! descriptor ([`crate::FILE_DESCRIPTOR_SET`]), so that it follows `arena.proto` one to one
//! with nothing written twice:
//!
//! - field names exactly as in the `.proto` file (`request_id`, `legal_actions`); when
//!   reading, the lowerCamelCase names (`requestId`) are accepted too;
//! - every field without presence is written, also at its default (`0`, `false`, `[]`,
//!   `""`), so a reader never has to supply defaults; a field with presence (a message, an
//!   `optional` scalar, a oneof member) is left out exactly when it is not set;
//! - enums by name (`"GAME_ZOKKEN"`); when reading, their numbers are accepted too;
//! - 64-bit integers as JSON numbers (every value the arena sends fits in a double's 53
//!   bits); when reading, strings are accepted too, as the mapping says;
//! - fields in field-number order; a oneof as the one member that is set:
//!   `{"stop": {"turn": []}}`;
//! - unknown field names are refused, naming the field and the legal ones.
//!
//! ```
//! use knobel_proto::{json, v1 as pb};
//!
//! let decision = json::from_json::<pb::Decision>(r#"{"request_id": 7, "action": {"reroll": {"dice": [0, 2]}}}"#).unwrap();
//! assert_eq!(decision.request_id, 7);
//! assert_eq!(json::to_json(&decision), r#"{"request_id":7,"action":{"reroll":{"dice":[0,2],"turn":[]}}}"#);
//! let error = json::from_json::<pb::Decision>(r#"{"request_id": 7, "action": {"jump": {}}}"#).unwrap_err();
//! assert!(error.to_string().starts_with("not a knobel.v1.Decision: "), "{error}");
//! ```

use std::sync::OnceLock;

use prost::Message;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, SerializeOptions};

use crate::v1 as pb;

/// A `knobel.v1` message that has a JSON form here.
pub trait JsonMessage: Message + Default + Sized {
    /// Its fully qualified protobuf name, e.g. `knobel.v1.Decision`.
    const FULL_NAME: &'static str;
}

macro_rules! json_messages {
    ($($message:ident),* $(,)?) => {$(
        impl JsonMessage for pb::$message {
            const FULL_NAME: &'static str = concat!("knobel.v1.", stringify!($message));
        }
    )*};
}

// The Play stream's two directions and their parts.
json_messages!(
    ArenaMessage,
    BotMessage,
    Decision,
    Action,
    Event,
    Observation,
    DecisionRequest,
    MatchStart,
    MatchResult,
    ErrorEvent,
    Welcome,
);

/// A JSON text that is not the message it should be.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a {message}: {reason}")]
pub struct JsonError {
    /// The message expected, e.g. `knobel.v1.Decision`.
    pub message: &'static str,
    /// What is wrong, from the JSON reader (names the bad field or value and where).
    pub reason: String,
}

/// The contract's descriptors, decoded once.
fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(crate::FILE_DESCRIPTOR_SET)
            .expect("the contract's own descriptor set decodes")
    })
}

fn descriptor<M: JsonMessage>() -> prost_reflect::MessageDescriptor {
    pool()
        .get_message_by_name(M::FULL_NAME)
        .expect("every JsonMessage is in the contract")
}

/// `message` as one line of JSON (no newline in it), by the mapping above.
pub fn to_json<M: JsonMessage>(message: &M) -> String {
    let dynamic = DynamicMessage::decode(descriptor::<M>(), message.encode_to_vec().as_slice())
        .expect("a message encoded by prost decodes by its own descriptor");
    let options = SerializeOptions::new()
        .use_proto_field_name(true)
        .skip_default_fields(false)
        .stringify_64_bit_integers(false);
    let mut out = Vec::with_capacity(256);
    dynamic
        .serialize_with_options(&mut serde_json::Serializer::new(&mut out), &options)
        .expect("serializing to memory cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// Reads one JSON text as a message, by the mapping above; refuses unknown fields and
/// anything after the JSON value.
pub fn from_json<M: JsonMessage>(text: &str) -> Result<M, JsonError> {
    let invalid = |reason: String| JsonError {
        message: M::FULL_NAME,
        reason,
    };
    let mut reader = serde_json::Deserializer::from_str(text);
    let dynamic = DynamicMessage::deserialize_with_options(
        descriptor::<M>(),
        &mut reader,
        &DeserializeOptions::new().deny_unknown_fields(true),
    )
    .map_err(|e| invalid(e.to_string()))?;
    reader.end().map_err(|e| invalid(e.to_string()))?;
    dynamic
        .transcode_to::<M>()
        .map_err(|e| invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_written_and_absent_means_not_set() {
        let message = pb::ArenaMessage {
            events: vec![],
            kind: Some(pb::arena_message::Kind::MatchResult(pb::MatchResult {
                match_id: "m1".into(),
                status: pb::MatchStatus::Aborted as i32,
                outcome: None,
                your_seat: 0,
                your_place: 0,
            })),
        };
        assert_eq!(
            to_json(&message),
            r#"{"match_result":{"match_id":"m1","status":"MATCH_STATUS_ABORTED","your_seat":0,"your_place":0},"events":[]}"#
        );
        assert_eq!(
            from_json::<pb::ArenaMessage>(&to_json(&message)),
            Ok(message)
        );
    }

    #[test]
    fn camel_case_strings_and_numbers_are_read_too() {
        let decision: pb::Decision =
            from_json(r#"{"requestId": "12", "action": {"fold": {}}}"#).unwrap();
        assert_eq!(decision.request_id, 12);
        assert_eq!(
            decision.action.unwrap().kind,
            Some(pb::action::Kind::Fold(pb::Fold {}))
        );
    }

    #[test]
    fn bad_json_names_the_problem() {
        for (text, expected) in [
            ("stop", "expected value"),
            (r#"{"request_id": 1, "action": {"jump": {}}}"#, "jump"),
            (r#"{"request_id": 1, "answer": 2}"#, "answer"),
            (r#"{"request_id": -1}"#, "out of range"),
            (r#"{"request_id": 1} {}"#, "trailing characters"),
        ] {
            let error = from_json::<pb::Decision>(text).unwrap_err();
            assert!(error.to_string().contains(expected), "{text}: {error}");
        }
    }
}
