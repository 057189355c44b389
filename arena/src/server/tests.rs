//! Unit tests of the server.

use tonic::Status;

use super::status::broken_stream;

#[test]
fn broken_streams_get_a_status_naming_the_problem_and_the_limit() {
    // The statuses tonic's decoder gives (tonic 0.14), and a lost connection.
    let oversized = Status::out_of_range(
        "Error, decoded message length too large: found 70005 bytes, the limit is: 65536 bytes",
    );
    let reply = broken_stream(&oversized).unwrap();
    assert_eq!(reply.code(), tonic::Code::ResourceExhausted);
    assert!(
        reply
            .message()
            .starts_with("message of 70005 bytes is over the limit of 65536 bytes"),
        "{}",
        reply.message()
    );
    let garbage = Status::internal("failed to decode Protobuf message: invalid wire type value: 7");
    let reply = broken_stream(&garbage).unwrap();
    assert_eq!(reply.code(), tonic::Code::Internal);
    assert!(
        reply.message().contains("not a BotMessage"),
        "{}",
        reply.message()
    );
    for framing in [
        "protocol error: received message with invalid compression flag: 2 (valid flags are 0 and 1), while sending request",
        "protocol error: received message with compressed-flag but no grpc-encoding was specified",
        "Unexpected EOF decoding stream.",
    ] {
        let reply = broken_stream(&Status::internal(framing)).unwrap();
        assert_eq!(reply.code(), tonic::Code::Internal);
        assert!(
            reply.message().contains("bad gRPC framing"),
            "{}",
            reply.message()
        );
        assert!(reply.message().contains("65536"), "{}", reply.message());
    }
    assert!(broken_stream(&Status::cancelled("reset")).is_none());
    assert!(broken_stream(&Status::unknown("h2 error")).is_none());
}
