//! The peer port of an arena in cluster mode (a real `knobel serve --nats-url` on PostgreSQL
//! and a `nats-server` of the test's own) against callers that are not arenas of its
//! cluster: it relays dice, so whoever reaches it must not get a seat's messages or hold a
//! connection. A wrong token, another link version or an unknown ticket is refused with a
//! reason and the connection closed; bytes that are not a `PeerOpen` (an HTTP/2 preface),
//! an opening frame over 4 KiB and a caller that says nothing are cut off without an
//! answer. The opening frame's bound is tried at its edge.

use std::time::Duration;

use knobel_e2e::nats::{NatsServer, cluster_args};
use knobel_e2e::postgres::{self, SharedDatabase};
use knobel_e2e::{Arena, ArenaOptions, free_port, poll_every};
use knobel_proto::peer::{self as pp, peer_open, to_referee};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const PEER_TOKEN: &str = "peer-port-test-token-0123456789";
/// The largest opening frame the peer port reads.
const MAX_OPEN: usize = 4096;
/// How long the peer port waits for the opening frame (3 s), with room for a busy machine.
const CUT_OFF_WITHIN: Duration = Duration::from_secs(15);

fn framed(payload: &[u8]) -> Vec<u8> {
    let mut bytes = (payload.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(payload);
    bytes
}

fn open(version: u32, token: &str, purpose: peer_open::Purpose) -> Vec<u8> {
    framed(
        &pp::PeerOpen {
            version,
            token: token.to_owned(),
            purpose: Some(purpose),
        }
        .encode_to_vec(),
    )
}

fn ticket(ticket: &str) -> peer_open::Purpose {
    peer_open::Purpose::Ticket(ticket.to_owned())
}

/// What the peer port answers to `bytes`: its first message, if any, and whether it then
/// closed the connection (within [`CUT_OFF_WITHIN`]).
async fn answer_to(port: u16, bytes: &[u8]) -> (Option<pp::ToReferee>, bool) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    let mut received = Vec::new();
    let read = tokio::time::timeout(CUT_OFF_WITHIN, stream.read_to_end(&mut received)).await;
    // A reset after the answer counts as closed too.
    let closed = read.is_ok();
    let answer = (received.len() >= 4)
        .then(|| {
            let len = u32::from_be_bytes(received[..4].try_into().unwrap()) as usize;
            received
                .get(4..4 + len)
                .and_then(|b| pp::ToReferee::decode(b).ok())
        })
        .flatten();
    (answer, closed)
}

fn refusal(answer: Option<pp::ToReferee>) -> String {
    match answer {
        Some(pp::ToReferee {
            kind: Some(to_referee::Kind::Refused(reason)),
        }) => reason,
        other => panic!("a refusal, not {other:?}"),
    }
}

#[cfg_attr(
    knobel_without_postgres,
    ignore = "built with KNOBEL_TEST_WITHOUT=postgres: needs PostgreSQL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_peer_port_refuses_callers_that_are_not_arenas_of_its_cluster() {
    postgres::require();
    let nats = NatsServer::start();
    let db = SharedDatabase::create();
    let port = free_port();
    let mut options = ArenaOptions::default();
    let mut args = cluster_args(&nats.url, PEER_TOKEN);
    for arg in &mut args {
        if arg == "127.0.0.1:0" {
            *arg = format!("127.0.0.1:{port}");
        }
    }
    options.args.extend(args);
    let _arena = Arena::start_on_with_env(options, &[], &db.url).await;
    // The arena joins the cluster (and opens the peer port) beside its bots' port.
    poll_every(
        Duration::from_millis(50),
        Duration::from_secs(30),
        "the peer port listens",
        || async { TcpStream::connect(("127.0.0.1", port)).await.ok() },
    )
    .await;

    // An arena of the cluster is answered: who it is.
    let (answer, closed) = answer_to(
        port,
        &open(2, PEER_TOKEN, peer_open::Purpose::Identify(true)),
    )
    .await;
    assert!(
        matches!(&answer, Some(pp::ToReferee { kind: Some(to_referee::Kind::Instance(id)) }) if !id.is_empty()),
        "{answer:?}"
    );
    assert!(closed, "an identity check ends the connection");

    // A wrong token: refused, whatever it asks for.
    let wrong = "not-the-peer-token-0123456789";
    for purpose in [ticket("anything"), peer_open::Purpose::Identify(true)] {
        let (answer, closed) = answer_to(port, &open(2, wrong, purpose)).await;
        let reason = refusal(answer);
        assert!(reason.contains("peer token"), "{reason}");
        assert!(closed);
    }
    // The right token and another version: refused, naming both versions.
    let (answer, closed) = answer_to(port, &open(1, PEER_TOKEN, ticket("anything"))).await;
    let reason = refusal(answer);
    assert!(
        reason.contains("version 1") && reason.contains("version 2"),
        "{reason}"
    );
    assert!(closed);
    // The right token and a made-up ticket: no seat.
    let (answer, closed) = answer_to(port, &open(2, PEER_TOKEN, ticket("made-up-ticket"))).await;
    let reason = refusal(answer);
    assert!(
        reason.contains("ticket made-up-ticket is unknown"),
        "{reason}"
    );
    assert!(closed);

    // The opening frame's bound: 4096 bytes are read (and the wrong token refused), 4097
    // are not read at all.
    let base = open(2, wrong, ticket("")).len() - 4;
    let padded = |len: usize| {
        // The ticket's own length prefix grows by a byte or two with it.
        (len - base - 2..len)
            .map(|pad| open(2, wrong, ticket(&"t".repeat(pad))))
            .find(|bytes| bytes.len() - 4 == len)
            .expect("a ticket that makes the opening frame this long")
    };
    let (answer, _) = answer_to(port, &padded(MAX_OPEN)).await;
    assert!(refusal(answer).contains("peer token"));
    let (answer, closed) = answer_to(port, &padded(MAX_OPEN + 1)).await;
    assert_eq!(
        answer, None,
        "an opening frame over the bound is not answered"
    );
    assert!(
        closed,
        "an opening frame over the bound ends the connection"
    );

    // Not a PeerOpen: an HTTP/2 client's preface (read as a frame of 1.3 GB), and bytes
    // that do not decode.
    let preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    let (answer, closed) = answer_to(port, preface).await;
    assert_eq!((answer, closed), (None, true));
    let (answer, closed) = answer_to(port, &framed(&[0x12, 0x7f, 0x01])).await;
    assert_eq!((answer, closed), (None, true));
    // Nothing at all: cut off after the opening wait.
    let (answer, closed) = answer_to(port, &[]).await;
    assert_eq!((answer, closed), (None, true), "a silent caller is cut off");
}
