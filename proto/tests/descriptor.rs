//! The encoded file descriptor set (for gRPC reflection) decodes, holds the `knobel.v1.Arena`
//! service, and documents every element of the contract: bot authors read the comments.

use knobel_proto::{FILE_DESCRIPTOR_SET, SERVICE_NAME};
use prost::Message;
use prost_types::{FileDescriptorProto, FileDescriptorSet};

fn contract() -> FileDescriptorProto {
    let set = FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).expect("the descriptor set decodes");
    let mut files: Vec<_> = set
        .file
        .into_iter()
        .filter(|f| f.package() == "knobel.v1")
        .collect();
    assert_eq!(files.len(), 1, "one file for knobel.v1");
    files.pop().unwrap()
}

#[test]
fn the_descriptor_set_has_the_arena_service() {
    let file = contract();
    assert_eq!(SERVICE_NAME, "knobel.v1.Arena");
    let service = file
        .service
        .iter()
        .find(|s| format!("{}.{}", file.package(), s.name()) == SERVICE_NAME)
        .expect("service knobel.v1.Arena");
    let method = |name: &str| {
        service
            .method
            .iter()
            .find(|m| m.name() == name)
            .unwrap_or_else(|| panic!("method {name}"))
    };
    let play = method("Play");
    assert!(play.client_streaming() && play.server_streaming());
    assert_eq!(play.input_type(), ".knobel.v1.BotMessage");
    assert_eq!(play.output_type(), ".knobel.v1.ArenaMessage");
    let list = method("ListMatches");
    assert!(!list.client_streaming() && !list.server_streaming());
    assert_eq!(
        method("GetMatchLog").output_type(),
        ".knobel.v1.MatchLogResponse"
    );
}

/// Every message, field, oneof, enum, enum value, service and method has a leading comment.
#[test]
fn every_element_is_documented() {
    let file = contract();
    let info = file
        .source_code_info
        .as_ref()
        .expect("the set keeps source info (comments)");
    let documented = |path: &[i32]| {
        info.location
            .iter()
            .any(|l| l.path == path && !l.leading_comments().trim().is_empty())
    };
    let mut missing = Vec::new();
    let mut check = |path: Vec<i32>, name: String| {
        if !documented(&path) {
            missing.push(name);
        }
    };
    // Field numbers of FileDescriptorProto, DescriptorProto, EnumDescriptorProto and
    // ServiceDescriptorProto (descriptor.proto).
    const MESSAGE: i32 = 4;
    const ENUM: i32 = 5;
    const SERVICE: i32 = 6;
    const FIELD: i32 = 2;
    const ONEOF: i32 = 8;
    const VALUE: i32 = 2;
    const METHOD: i32 = 2;
    for (m, message) in file.message_type.iter().enumerate() {
        let at = vec![MESSAGE, m as i32];
        check(at.clone(), message.name().to_owned());
        for (f, field) in message.field.iter().enumerate() {
            let mut path = at.clone();
            path.extend([FIELD, f as i32]);
            check(path, format!("{}.{}", message.name(), field.name()));
        }
        for (o, oneof) in message.oneof_decl.iter().enumerate() {
            // proto3 `optional` fields have synthetic oneofs named after them.
            if oneof.name().starts_with('_') {
                continue;
            }
            let mut path = at.clone();
            path.extend([ONEOF, o as i32]);
            check(path, format!("{}.{} (oneof)", message.name(), oneof.name()));
        }
        // Nested types are only the entries of map fields, documented by their field.
        assert!(message.enum_type.is_empty());
        assert!(
            message
                .nested_type
                .iter()
                .all(|n| n.options.as_ref().is_some_and(|o| o.map_entry()))
        );
    }
    for (e, enumeration) in file.enum_type.iter().enumerate() {
        check(vec![ENUM, e as i32], enumeration.name().to_owned());
        for (v, value) in enumeration.value.iter().enumerate() {
            check(
                vec![ENUM, e as i32, VALUE, v as i32],
                value.name().to_owned(),
            );
        }
    }
    for (s, service) in file.service.iter().enumerate() {
        check(vec![SERVICE, s as i32], service.name().to_owned());
        for (m, method) in service.method.iter().enumerate() {
            check(
                vec![SERVICE, s as i32, METHOD, m as i32],
                format!("{}.{}", service.name(), method.name()),
            );
        }
    }
    assert!(missing.is_empty(), "undocumented: {missing:?}");
}
