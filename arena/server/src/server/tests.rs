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

/// A metrics endpoint whose listening socket stops working (here: shut down under it) stops
/// the arena, and `serve` returns [`ServeError::Metrics`] instead of running on unobserved.
#[tokio::test]
async fn a_failed_metrics_endpoint_stops_the_arena_with_its_error() {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::{ServeError, ServerConfig, serve};
    use crate::store::Store;

    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("arena.db").display()
    );
    let store = Store::connect(&url).await.unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics_addr = metrics.local_addr().unwrap();
    // A second handle on the metrics socket, to break it while the arena serves.
    let socket = metrics.into_std().unwrap();
    let broken_by = socket.try_clone().unwrap();
    let metrics = TcpListener::from_std(socket).unwrap();
    let config = ServerConfig {
        shutdown_grace: Duration::from_millis(100),
        ..ServerConfig::default()
    };
    let arena = tokio::spawn(serve(
        config,
        store,
        listener,
        Some(metrics),
        std::future::pending(),
    ));
    // The endpoint answers a scrape first (generous bound: a loaded machine).
    let scraped = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if let Ok(mut stream) = TcpStream::connect(metrics_addr).await {
                let request = "GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
                stream.write_all(request.as_bytes()).await.unwrap();
                let mut answer = String::new();
                let _ = stream.read_to_string(&mut answer).await;
                if answer.starts_with("HTTP/1.1 200") {
                    return answer;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the metrics endpoint answers");
    assert!(scraped.contains("knobel_"), "{scraped}");
    assert!(!arena.is_finished());
    // SAFETY: `broken_by` owns a valid socket descriptor for the whole call.
    let shut =
        unsafe { libc::shutdown(std::os::fd::AsRawFd::as_raw_fd(&broken_by), libc::SHUT_RD) };
    assert_eq!(shut, 0, "{}", std::io::Error::last_os_error());
    let stopped = tokio::time::timeout(Duration::from_secs(60), arena)
        .await
        .expect("the arena stops when its metrics endpoint fails")
        .unwrap();
    match stopped {
        Err(ServeError::Metrics(error)) => {
            assert_eq!(error.raw_os_error(), Some(libc::EINVAL), "{error}")
        }
        other => panic!("expected the metrics endpoint's error, got {other:?}"),
    }
}
