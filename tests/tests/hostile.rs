//! Hostile clients against the arena as a real process: idle TCP connections by the
//! thousand, streams that never send their Hello, guessed tokens, broken streams, late
//! answers and silent connections. Each test checks that the arena holds and real bots
//! play on.
//!
//! Several tests connect from other loopback addresses (127.0.0.2, ...) to stand for other
//! peers: Linux routes all of 127.0.0.0/8 to the loopback interface.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use knobel_e2e::{
    Arena, ArenaOptions, authorized, finish, metric, poll_until, raise_own_fd_limit, scrape,
};
use knobel_proto::v1 as pb;
use pb::arena_message::Kind;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

fn args(list: &[&str]) -> ArenaOptions {
    ArenaOptions {
        log_file: None,
        args: list.iter().map(|s| (*s).to_owned()).collect(),
    }
}

fn loopback(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

fn addr_of(arena: &Arena) -> SocketAddr {
    arena
        .url
        .strip_prefix("http://")
        .expect("an http url")
        .parse()
        .expect("a socket address")
}

/// A TCP connection to `addr` from the address `source`.
async fn tcp_from(source: IpAddr, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(source, 0))?;
    socket.connect(addr).await
}

async fn metric_of(arena: &Arena, name: &str) -> f64 {
    metric(&scrape(&arena.metrics_url).await, name)
}

/// Waits (at most `within`) until the arena's metric `name` is `value`.
async fn metric_becomes(arena: &Arena, name: &str, value: f64, within: Duration) {
    poll_until(within, &format!("{name} is {value}"), || async {
        let now = metric_of(arena, name).await;
        if now == value {
            Ok(())
        } else {
            Err(format!("{name} {now}"))
        }
    })
    .await;
}

/// Waits (at most 60 s) until `closed` has counted `count` connections the arena closed.
async fn closed_count(closed: &AtomicUsize, count: usize, what: &str) {
    poll_until(Duration::from_secs(60), what, || async {
        let now = closed.load(Ordering::SeqCst);
        if now >= count {
            Ok(())
        } else {
            Err(format!("{now} closed"))
        }
    })
    .await;
}

fn hello_message(name: &str, game: pb::Game) -> pb::BotMessage {
    pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Hello(pb::Hello {
            name: name.into(),
            games: vec![game as i32],
            client_version: "e2e-hostile".into(),
            preset: None,
            max_matches: 0,
        })),
    }
}

fn decision(request: &pb::DecisionRequest) -> pb::BotMessage {
    pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Decision(pb::Decision {
            request_id: request.request_id,
            action: request.legal_actions.first().cloned(),
        })),
    }
}

// ---------------------------------------------------------------------------------------
// A raw gRPC client over h2: it can send any bytes as the request body.
// ---------------------------------------------------------------------------------------

/// What a raw Play stream read next.
#[derive(Debug)]
enum Next {
    Message(Box<pb::ArenaMessage>),
    /// The call ended with this grpc-status and grpc-message.
    End(i32, String),
}

struct RawPlay {
    _client: h2::client::SendRequest<Bytes>,
    send: h2::SendStream<Bytes>,
    response: Option<h2::client::ResponseFuture>,
    body: Option<h2::RecvStream>,
    buf: BytesMut,
}

fn grpc_frame(payload: &[u8]) -> Vec<u8> {
    let mut frame = vec![0u8];
    frame.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

fn status_of(headers: &http::HeaderMap) -> Option<(i32, String)> {
    let code = headers.get("grpc-status")?.to_str().ok()?.parse().ok()?;
    let message = headers
        .get("grpc-message")
        .map(|m| {
            percent_encoding::percent_decode(m.as_bytes())
                .decode_utf8_lossy()
                .into_owned()
        })
        .unwrap_or_default();
    Some((code, message))
}

impl RawPlay {
    /// Opens a Play call from `source` with `token`, sending nothing yet.
    async fn open(addr: SocketAddr, source: IpAddr, token: &str) -> RawPlay {
        let tcp = tcp_from(source, addr).await.expect("connect");
        let (client, connection) = h2::client::handshake(tcp).await.expect("h2 handshake");
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let mut client = client.ready().await.expect("h2 ready");
        let request = http::Request::builder()
            .method("POST")
            .uri(format!("http://{addr}/knobel.v1.Arena/Play"))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .header("authorization", format!("Bearer {token}"))
            .body(())
            .expect("a request");
        let (response, send) = client.send_request(request, false).expect("send request");
        RawPlay {
            _client: client,
            send,
            response: Some(response),
            body: None,
            buf: BytesMut::new(),
        }
    }

    /// Sends `bytes` as they are; ignored once the arena has ended the call.
    fn send_raw(&mut self, bytes: Vec<u8>, end: bool) {
        let _ = self.send.send_data(Bytes::from(bytes), end);
    }

    fn send(&mut self, message: &pb::BotMessage) {
        self.send_raw(grpc_frame(&message.encode_to_vec()), false);
    }

    /// The next message, or how the call ended.
    async fn next(&mut self) -> Next {
        if let Some(response) = self.response.take() {
            let response = match response.await {
                Ok(response) => response,
                Err(error) => return Next::End(-1, format!("h2: {error}")),
            };
            if let Some((code, message)) = status_of(response.headers()) {
                return Next::End(code, message); // trailers-only
            }
            self.body = Some(response.into_body());
        }
        let body = self.body.as_mut().expect("a body");
        loop {
            if self.buf.len() >= 5 {
                let len = u32::from_be_bytes(self.buf[1..5].try_into().unwrap()) as usize;
                if self.buf.len() >= 5 + len {
                    self.buf.advance(5);
                    let payload = self.buf.split_to(len);
                    let message = pb::ArenaMessage::decode(payload).expect("an ArenaMessage");
                    return Next::Message(Box::new(message));
                }
            }
            match body.data().await {
                Some(Ok(chunk)) => {
                    let _ = body.flow_control().release_capacity(chunk.len());
                    self.buf.put(chunk);
                }
                Some(Err(error)) => return Next::End(-1, format!("h2: {error}")),
                None => {
                    return match body.trailers().await {
                        Ok(Some(trailers)) => {
                            let (code, message) =
                                status_of(&trailers).unwrap_or((-1, "no grpc-status".into()));
                            Next::End(code, message)
                        }
                        Ok(None) => Next::End(-1, "no trailers".into()),
                        Err(error) => Next::End(-1, format!("h2: {error}")),
                    };
                }
            }
        }
    }

    /// Reads messages until one `matches`, panicking if the call ends first.
    async fn until(&mut self, what: &str, matches: impl Fn(&Kind) -> bool) -> Kind {
        loop {
            match tokio::time::timeout(Duration::from_secs(60), self.next())
                .await
                .unwrap_or_else(|_| panic!("no {what} within 60 s"))
            {
                Next::Message(message) => {
                    if let Some(kind) = message.kind
                        && matches(&kind)
                    {
                        return kind;
                    }
                }
                Next::End(code, message) => {
                    panic!("the call ended ({code}: {message}) before {what}")
                }
            }
        }
    }

    /// Reads until the call ends and returns its status; panics on a timeout.
    async fn end(&mut self) -> (i32, String) {
        loop {
            match tokio::time::timeout(Duration::from_secs(60), self.next())
                .await
                .expect("the call did not end within 60 s")
            {
                Next::Message(_) => {}
                Next::End(code, message) => return (code, message),
            }
        }
    }
}

const OK: i32 = 0;
const DEADLINE_EXCEEDED: i32 = 4;
const RESOURCE_EXHAUSTED: i32 = 8;
const INTERNAL: i32 = 13;
const UNAUTHENTICATED: i32 = 16;

/// The three ways to break a stream, each with the status code and a piece of the message
/// the arena must end the call with.
fn breakages() -> Vec<(&'static str, Vec<u8>, i32, &'static str)> {
    let oversized = pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Hello(pb::Hello {
            name: "x".repeat(70_000),
            ..Default::default()
        })),
    }
    .encode_to_vec();
    let oversized_len = oversized.len();
    assert!(oversized_len > 65_536);
    let over_text: &'static str = Box::leak(
        format!("message of {oversized_len} bytes is over the limit of 65536 bytes")
            .into_boxed_str(),
    );
    // A frame with the invalid compression flag 2.
    let mut bad_flag = grpc_frame(b"\x08\x01");
    bad_flag[0] = 2;
    vec![
        (
            "garbage",
            grpc_frame(b"\x0f\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffnot a BotMessage"),
            INTERNAL,
            "not a BotMessage",
        ),
        ("bad framing", bad_flag, INTERNAL, "bad gRPC framing"),
        (
            "oversized",
            grpc_frame(&oversized),
            RESOURCE_EXHAUSTED,
            over_text,
        ),
    ]
}

// ---------------------------------------------------------------------------------------
// Connections
// ---------------------------------------------------------------------------------------

/// Opens `n` TCP connections from `source` and counts, in `closed`, those the arena closes
/// (reads end). The connections are held until the returned tasks are aborted.
async fn idle_connections(
    addr: SocketAddr,
    source: IpAddr,
    n: usize,
    closed: Arc<AtomicUsize>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        let mut stream = tcp_from(source, addr).await.expect("connect");
        let closed = closed.clone();
        tasks.push(tokio::spawn(async move {
            let mut buf = [0u8; 64];
            loop {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            closed.fetch_add(1, Ordering::SeqCst);
            // Hold the (closed) socket until aborted, like a client that never looks.
            std::future::pending::<()>().await;
        }));
    }
    tasks
}

/// `text` without ANSI colour sequences (the arena's log has them).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

async fn plays_one_match(arena: &Arena, token: &str) {
    let bot = arena.bot(
        token,
        &["--name", "real", "--games", "schocken", "--matches", "1"],
    );
    let (status, lines) = finish(bot, Duration::from_secs(120)).await;
    assert!(status.success(), "the real bot failed: {lines:?}");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(!lines[0].contains("aborted"), "{lines:?}");
}

/// 2,000 idle TCP connections (no token, nothing sent) against an arena whose open-file
/// limit is 512: the per-address bound keeps them to 256 and a real bot plays; connections
/// from several addresses up to the bound in all are refused too, the arena keeps its
/// files, and plays again once they are gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_idle_connections_do_not_stop_a_bot_from_playing() {
    assert!(
        raise_own_fd_limit() >= 3000,
        "this test needs an open-file limit of 3000 for its own connections"
    );
    let log = tempfile::NamedTempFile::new().unwrap();
    // Timeouts far beyond the test: only the bounds can save the arena.
    let arena = Arena::start_with_limits(
        ArenaOptions {
            log_file: Some(log.path().to_owned()),
            args: [
                "--practice",
                "--practice-wait-ms",
                "50",
                "--seats",
                "2",
                "--handshake-timeout-ms",
                "600000",
                "--idle-timeout-ms",
                "600000",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        },
        &[("RUST_LOG", "info,sqlx=warn")],
        Some(512),
    )
    .await;
    let token = arena.add_bot("real").await;
    let addr = addr_of(&arena);

    // 2,000 from one address: 256 are held (the default per-address bound), the rest
    // closed at once.
    let closed = Arc::new(AtomicUsize::new(0));
    let hostile = idle_connections(addr, loopback(2), 2000, closed.clone()).await;
    closed_count(&closed, 1744, "1,744 connections were closed").await;
    assert_eq!(
        metric_of(&arena, "knobel_tcp_connections").await,
        256.0,
        "held connections"
    );
    plays_one_match(&arena, &token).await;
    assert_eq!(
        closed.load(Ordering::SeqCst),
        1744,
        "the held connections stay open while the bot plays"
    );

    // 400 more from two other addresses: the bound in all (512 - 128 = 384) refuses the
    // last 272.
    let closed_more = Arc::new(AtomicUsize::new(0));
    let mut more = idle_connections(addr, loopback(3), 200, closed_more.clone()).await;
    more.extend(idle_connections(addr, loopback(4), 200, closed_more.clone()).await);
    closed_count(&closed_more, 272, "272 more were closed").await;
    assert_eq!(metric_of(&arena, "knobel_tcp_connections").await, 384.0);
    // They go away; the arena plays again.
    for task in hostile.into_iter().chain(more) {
        task.abort();
    }
    metric_becomes(
        &arena,
        "knobel_tcp_connections",
        0.0,
        Duration::from_secs(60),
    )
    .await;
    plays_one_match(&arena, &token).await;
    assert!(arena.stop().await.success());

    let log = strip_ansi(&std::fs::read_to_string(log.path()).unwrap());
    assert!(log.contains("connection bounds"), "{log}");
    assert!(log.contains("fd_limit=512"), "{log}");
    let refusals: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("connection refused"))
        .collect();
    assert!(
        refusals
            .iter()
            .any(|l| l.contains("from 127.0.0.2") && l.contains("at most 256")),
        "{refusals:?}"
    );
    assert!(
        refusals.iter().any(|l| l.contains("at most 384")),
        "{refusals:?}"
    );
    // 2,016 refusals, a handful of lines.
    assert!(
        refusals.len() <= 6,
        "refusals are rate-limited: {refusals:?}"
    );
}

/// A connection that sends nothing is closed after the handshake timeout; one that sends
/// the HTTP/2 preface and then ignores the server's pings is closed too; a bot waiting for
/// a match far longer than the idle timeout is kept alive by the keepalive pings and plays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_closed_and_waiting_bots_are_kept_alive() {
    let arena = Arena::start(args(&[
        "--seats",
        "2",
        "--handshake-timeout-ms",
        "500",
        "--idle-timeout-ms",
        "1500",
        "--http2-keepalive-interval-ms",
        "300",
        "--http2-keepalive-timeout-ms",
        "300",
    ]))
    .await;
    let addr = addr_of(&arena);
    let waiting_token = arena.add_bot("waiting").await;
    let other_token = arena.add_bot("other").await;

    // A bot's stream that waits in the lobby.
    let mut client = arena.client().await;
    let (tx, rx) = mpsc::channel(64);
    tx.send(hello_message("waiting", pb::Game::Schocken))
        .await
        .unwrap();
    let mut waiting = client
        .play(authorized(ReceiverStream::new(rx), &waiting_token))
        .await
        .expect("play")
        .into_inner();
    let welcome = waiting
        .message()
        .await
        .expect("welcome")
        .expect("a message");
    assert!(
        matches!(welcome.kind, Some(Kind::Welcome(_))),
        "{welcome:?}"
    );
    let since = Instant::now();

    // Nothing sent: closed after about the handshake timeout.
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 256];
    // (The server's own SETTINGS come first.)
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(1..) = silent.read(&mut buf).await {}
    })
    .await
    .expect("a silent connection is closed");
    assert!(started.elapsed() >= Duration::from_millis(400));

    // The preface and SETTINGS, then deaf to everything: closed (no ping acknowledged).
    let mut deaf = TcpStream::connect(addr).await.unwrap();
    deaf.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await
        .unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match deaf.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "a deaf connection is closed");

    // The waiting stream has sent nothing since its Hello; keep it waiting for three idle
    // timeouts (a wait for time to pass, not for a condition), then give it an opponent.
    let quiet_for = Duration::from_millis(4500).saturating_sub(since.elapsed());
    match tokio::time::timeout(quiet_for, waiting.message()).await {
        Err(_) => {}
        Ok(other) => panic!("the waiting stream got {other:?} while alone"),
    }
    let opponent = arena.bot(
        &other_token,
        &["--name", "other", "--games", "schocken", "--matches", "1"],
    );
    let mut finished = false;
    while !finished {
        let message = tokio::time::timeout(Duration::from_secs(60), waiting.message())
            .await
            .expect("the match went on")
            .expect("the waiting stream is still open")
            .expect("a message");
        match message.kind {
            Some(Kind::DecisionRequest(request)) => tx.send(decision(&request)).await.unwrap(),
            Some(Kind::MatchResult(result)) => {
                assert_eq!(
                    result.status,
                    pb::MatchStatus::Finished as i32,
                    "{result:?}"
                );
                finished = true;
            }
            _ => {}
        }
    }
    let (status, lines) = finish(opponent, Duration::from_secs(60)).await;
    assert!(status.success(), "{lines:?}");
    assert!(
        metric_of(
            &arena,
            "knobel_tcp_connections_timed_out_total{phase=\"handshake\"}"
        )
        .await
            >= 1.0
    );
    drop(tx);
    assert!(arena.stop().await.success());
}

// ---------------------------------------------------------------------------------------
// Streams without a Hello
// ---------------------------------------------------------------------------------------

/// Twenty streams of a bot that never send their Hello do not hold its two stream slots:
/// the bot plays; the slots are taken only with a Hello.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_without_a_hello_do_not_hold_a_bots_slots() {
    let arena = Arena::start(args(&[
        "--max-streams-per-bot",
        "2",
        "--practice",
        "--practice-wait-ms",
        "50",
        "--seats",
        "2",
        "--hello-timeout-ms",
        "60000",
    ]))
    .await;
    let token = arena.add_bot("real").await;
    let addr = addr_of(&arena);
    let mut mute = Vec::new();
    for _ in 0..20 {
        mute.push(RawPlay::open(addr, loopback(1), &token).await);
    }
    metric_becomes(
        &arena,
        "knobel_play_streams_without_hello",
        20.0,
        Duration::from_secs(30),
    )
    .await;
    plays_one_match(&arena, &token).await;
    assert_eq!(
        metric_of(&arena, "knobel_play_streams_without_hello").await,
        20.0
    );

    // With their Hellos the slots count again: two are welcomed, the others refused.
    poll_until(
        Duration::from_secs(30),
        "the bot's streams are closed",
        || async {
            let open =
                knobel_e2e::metric_sum(&scrape(&arena.metrics_url).await, "knobel_play_streams");
            if open == 0.0 {
                Ok(())
            } else {
                Err(format!("{open} open"))
            }
        },
    )
    .await;
    for stream in &mut mute {
        stream.send(&hello_message("real", pb::Game::Schocken));
    }
    let (mut welcomed, mut refused) = (0, 0);
    for stream in &mut mute {
        match tokio::time::timeout(Duration::from_secs(30), stream.next())
            .await
            .expect("an answer to the Hello")
        {
            Next::Message(message) => {
                assert!(
                    matches!(message.kind, Some(Kind::Welcome(_))),
                    "{message:?}"
                );
                welcomed += 1;
            }
            Next::End(code, message) => {
                assert_eq!(code, RESOURCE_EXHAUSTED, "{message}");
                assert!(message.contains("at most 2"), "{message}");
                refused += 1;
            }
        }
    }
    assert_eq!((welcomed, refused), (2, 18));
    drop(mute);
    assert!(arena.stop().await.success());
}

/// Streams without a Hello are bounded per address and in all, and time out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_without_a_hello_are_bounded_and_time_out() {
    let arena = Arena::start(args(&[
        "--max-pending-hello",
        "8",
        "--max-pending-hello-per-peer",
        "5",
        "--hello-timeout-ms",
        "60000",
        "--seats",
        "4",
    ]))
    .await;
    let token = arena.add_bot("mute").await;
    let addr = addr_of(&arena);
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(RawPlay::open(addr, loopback(2), &token).await);
    }
    metric_becomes(
        &arena,
        "knobel_play_streams_without_hello",
        5.0,
        Duration::from_secs(30),
    )
    .await;
    let mut sixth = RawPlay::open(addr, loopback(2), &token).await;
    let (code, message) = sixth.end().await;
    assert_eq!(code, RESOURCE_EXHAUSTED, "{message}");
    assert!(
        message.contains("from 127.0.0.2") && message.contains("--max-pending-hello-per-peer"),
        "{message}"
    );
    for _ in 0..3 {
        held.push(RawPlay::open(addr, loopback(3), &token).await);
    }
    metric_becomes(
        &arena,
        "knobel_play_streams_without_hello",
        8.0,
        Duration::from_secs(30),
    )
    .await;
    let mut ninth = RawPlay::open(addr, loopback(4), &token).await;
    let (code, message) = ninth.end().await;
    assert_eq!(code, RESOURCE_EXHAUSTED, "{message}");
    assert!(
        message.contains("at most 8") && message.contains("--max-pending-hello)"),
        "{message}"
    );
    // One sends its Hello: it is welcomed and frees its place.
    held[0].send(&hello_message("mute", pb::Game::Schocken));
    held[0]
        .until("a Welcome", |k| matches!(k, Kind::Welcome(_)))
        .await;
    let mut again = RawPlay::open(addr, loopback(2), &token).await;
    again.send(&hello_message("mute", pb::Game::Schocken));
    again
        .until("a Welcome", |k| matches!(k, Kind::Welcome(_)))
        .await;
    drop(held);
    drop(again);
    assert!(arena.stop().await.success());

    // The Hello timeout.
    let arena = Arena::start(args(&["--hello-timeout-ms", "300"])).await;
    let token = arena.add_bot("slow").await;
    let mut slow = RawPlay::open(addr_of(&arena), loopback(1), &token).await;
    let (code, message) = slow.end().await;
    assert_eq!(code, DEADLINE_EXCEEDED, "{message}");
    assert!(message.contains("no Hello within 300 ms"), "{message}");
    assert!(arena.stop().await.success());
}

// ---------------------------------------------------------------------------------------
// Failed logins
// ---------------------------------------------------------------------------------------

/// After three failed logins an address is refused at once (even with a good token) with
/// the wait named; other addresses are not; the refusal lifts after the wait. Wrong admin
/// tokens count the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_logins_are_throttled_per_address() {
    let admin_token = "knb_admin_hostile_secret";
    let arena = Arena::start_with_env(
        args(&[
            "--max-auth-failures",
            "3",
            "--auth-failure-window-secs",
            "30",
            "--seats",
            "4",
        ]),
        &[("KNOBEL_ADMIN_TOKEN", admin_token)],
    )
    .await;
    let token = arena.add_bot("good").await;
    let addr = addr_of(&arena);
    let attacker = loopback(2);
    for i in 0..3 {
        let mut guess = RawPlay::open(addr, attacker, &format!("knb_guess_{i}")).await;
        guess.send(&hello_message("x", pb::Game::Schocken));
        let (code, message) = guess.end().await;
        assert_eq!(code, UNAUTHENTICATED, "{message}");
    }
    let mut refused = RawPlay::open(addr, attacker, "knb_guess_3").await;
    let (code, message) = refused.end().await;
    assert_eq!(code, RESOURCE_EXHAUSTED, "{message}");
    assert!(
        message.contains("too many failed logins from 127.0.0.2: try again in"),
        "{message}"
    );
    // Even the right token: the address is refused before any lookup.
    let mut good_from_attacker = RawPlay::open(addr, attacker, &token).await;
    good_from_attacker.send(&hello_message("good", pb::Game::Schocken));
    let (code, _) = good_from_attacker.end().await;
    assert_eq!(code, RESOURCE_EXHAUSTED);
    // Another address is not throttled.
    let mut good = RawPlay::open(addr, loopback(3), &token).await;
    good.send(&hello_message("good", pb::Game::Schocken));
    good.until("a Welcome", |k| matches!(k, Kind::Welcome(_)))
        .await;
    drop(good);

    // Wrong admin tokens (from 127.0.0.1) are throttled the same way.
    let channel = tonic::transport::Channel::from_shared(arena.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut admin = knobel_proto::v1::admin_client::AdminClient::new(channel);
    for _ in 0..3 {
        let status = admin
            .list_bots(authorized(pb::ListBotsRequest::default(), "wrong"))
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    }
    let status = admin
        .list_bots(authorized(pb::ListBotsRequest::default(), admin_token))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("try again in"), "{status:?}");

    // The allowance refills over the window (one failure per 10 s here).
    poll_until(
        Duration::from_secs(30),
        "the attacker's address may try again",
        || async {
            let mut retry = RawPlay::open(addr, attacker, &token).await;
            retry.send(&hello_message("good", pb::Game::Schocken));
            matches!(retry.next().await, Next::Message(_))
        },
    )
    .await;
    assert!(arena.stop().await.success());
}

// ---------------------------------------------------------------------------------------
// Broken streams
// ---------------------------------------------------------------------------------------

/// Garbage, a bad frame and an oversized message each end the call with a non-OK status
/// naming the problem: as the first message, and in the lobby after the Welcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_streams_end_with_a_status_naming_the_problem() {
    let arena = Arena::start(args(&["--seats", "4"])).await;
    let token = arena.add_bot("broken").await;
    let addr = addr_of(&arena);
    for (what, bytes, code, text) in breakages() {
        // Instead of the Hello.
        let mut stream = RawPlay::open(addr, loopback(1), &token).await;
        stream.send_raw(bytes.clone(), false);
        let (got, message) = stream.end().await;
        assert_eq!(got, code, "{what} before the Hello: {message}");
        assert!(message.contains(text), "{what} before the Hello: {message}");
        // In the lobby.
        let mut stream = RawPlay::open(addr, loopback(1), &token).await;
        stream.send(&hello_message("broken", pb::Game::Schocken));
        stream
            .until("a Welcome", |k| matches!(k, Kind::Welcome(_)))
            .await;
        stream.send_raw(bytes, false);
        let (got, message) = stream.end().await;
        assert_ne!(got, OK, "{what} in the lobby");
        assert_eq!(got, code, "{what} in the lobby: {message}");
        assert!(message.contains(text), "{what} in the lobby: {message}");
    }
    // A frame cut short by the end of the stream.
    let mut stream = RawPlay::open(addr, loopback(1), &token).await;
    stream.send(&hello_message("broken", pb::Game::Schocken));
    stream
        .until("a Welcome", |k| matches!(k, Kind::Welcome(_)))
        .await;
    let mut cut = grpc_frame(&[0u8; 100]);
    cut.truncate(20);
    stream.send_raw(cut, true);
    let (got, message) = stream.end().await;
    assert_eq!(got, INTERNAL, "{message}");
    assert!(message.contains("bad gRPC framing"), "{message}");
    assert!(arena.matches().await.is_empty());
    assert!(arena.stop().await.success());
}

/// The same three breakages during a match: the call ends with the status, the seat
/// forfeits (placed last), and the opponent's matches finish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_streams_in_a_match_end_with_a_status_and_forfeit() {
    let arena = Arena::start(args(&["--seats", "2", "--zokken-rounds", "3"])).await;
    let token = arena.add_bot("broken").await;
    let other = arena.add_bot("other").await;
    let addr = addr_of(&arena);
    let opponent = arena.bot(
        &other,
        &["--name", "other", "--games", "zokken", "--matches", "3"],
    );
    for (what, bytes, code, text) in breakages() {
        let mut stream = RawPlay::open(addr, loopback(1), &token).await;
        stream.send(&hello_message("broken", pb::Game::Zokken));
        stream
            .until("a DecisionRequest", |k| {
                matches!(k, Kind::DecisionRequest(_))
            })
            .await;
        stream.send_raw(bytes, false);
        let (got, message) = stream.end().await;
        assert_eq!(got, code, "{what} in a match: {message}");
        assert!(message.contains(text), "{what} in a match: {message}");
    }
    let (status, lines) = finish(opponent, Duration::from_secs(120)).await;
    assert!(status.success(), "{lines:?}");
    assert_eq!(lines.len(), 3, "{lines:?}");
    let matches = arena.matches().await;
    assert_eq!(matches.len(), 3);
    for m in matches {
        assert_eq!(m.status, pb::MatchStatus::Finished as i32, "{m:?}");
        let seat = m.seat_names.iter().position(|n| n == "broken").unwrap();
        let placings = &m.outcome.as_ref().unwrap().placings;
        assert_eq!(placings[seat], 2, "the broken seat is placed last: {m:?}");
    }
    assert!(arena.stop().await.success());
}

// ---------------------------------------------------------------------------------------
// Late answers
// ---------------------------------------------------------------------------------------

/// A stream that answers nothing in its first match (three timeouts, a forfeit) and answers
/// those requests after the MatchResult: each late answer gets STALE_REQUEST, the stream
/// stays open and plays its next match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_answer_after_the_match_result_is_stale_and_the_stream_plays_on() {
    let arena = Arena::start(args(&[
        "--seats",
        "2",
        "--zokken-rounds",
        "3",
        "--decision-ms",
        "300",
        "--time-bank-ms",
        "300",
    ]))
    .await;
    let token = arena.add_bot("late").await;
    let other = arena.add_bot("other").await;
    let opponent = arena.bot(
        &other,
        &["--name", "other", "--games", "zokken", "--matches", "2"],
    );
    let mut client = arena.client().await;
    let (tx, rx) = mpsc::channel(64);
    tx.send(hello_message("late", pb::Game::Zokken))
        .await
        .unwrap();
    let mut stream = client
        .play(authorized(ReceiverStream::new(rx), &token))
        .await
        .expect("play")
        .into_inner();
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(60), stream.message())
            .await
            .expect("a message within 60 s")
            .expect("the stream stays open")
            .expect("the stream has not ended")
    };
    // Match 1: answer nothing.
    let mut unanswered = Vec::new();
    loop {
        match next().await.kind {
            Some(Kind::DecisionRequest(request)) => unanswered.push(request.request_id),
            Some(Kind::MatchResult(result)) => {
                assert_eq!(result.status, pb::MatchStatus::Finished as i32);
                break;
            }
            _ => {}
        }
    }
    assert!(!unanswered.is_empty());
    // The late answers.
    for &request_id in &unanswered {
        tx.send(pb::BotMessage {
            kind: Some(pb::bot_message::Kind::Decision(pb::Decision {
                request_id,
                action: Some(pb::Action::default()),
            })),
        })
        .await
        .unwrap();
    }
    // Match 2, played properly; every late answer is told STALE_REQUEST on the way.
    let mut stale = Vec::new();
    let mut started = false;
    loop {
        match next().await.kind {
            // (A slow answer of this match may time out: only the late ones count here.)
            Some(Kind::Error(error)) if unanswered.contains(&error.request_id) => {
                assert_eq!(
                    error.code,
                    pb::ErrorCode::StaleRequest as i32,
                    "a late answer is stale: {error:?}"
                );
                assert_eq!(error.strikes, 0, "{error:?}");
                stale.push(error.request_id);
            }
            Some(Kind::MatchStart(_)) => started = true,
            Some(Kind::DecisionRequest(request)) => tx.send(decision(&request)).await.unwrap(),
            Some(Kind::MatchResult(result)) => {
                assert!(started);
                assert_eq!(result.status, pb::MatchStatus::Finished as i32);
                break;
            }
            _ => {}
        }
    }
    stale.sort_unstable();
    unanswered.sort_unstable();
    assert_eq!(stale, unanswered, "every late answer was told");
    let (status, lines) = finish(opponent, Duration::from_secs(60)).await;
    assert!(status.success(), "{lines:?}");
    drop(tx);
    assert!(arena.stop().await.success());
}

// ---------------------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------------------

/// `knobel serve` under an open-file limit of 512: a connection bound it cannot carry, and
/// an idle timeout the keepalive would not keep bots alive under, are refused at start-up
/// with messages naming the flag, the value and what is legal.
#[test]
fn bounds_the_open_file_limit_or_keepalive_cannot_carry_are_refused_at_start_up() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let database_url = format!("sqlite://{}", dir.path().join("arena.db").display());
    let serve = |extra: &[&str]| {
        let mut command = std::process::Command::new(knobel_e2e::binaries().join("knobel"));
        command
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--metrics-listen",
                "127.0.0.1:0",
                "--web-listen",
                "off",
            ])
            .args(["--database-url", &database_url])
            .args(extra)
            .env_remove("KNOBEL_ADMIN_TOKEN");
        // SAFETY: only the setrlimit system call runs between fork and exec.
        unsafe {
            command.pre_exec(|| rlimit::setrlimit(rlimit::Resource::NOFILE, 512, 512));
        }
        let output = command.output().expect("run knobel serve");
        assert!(
            !output.status.success(),
            "knobel serve {extra:?} must refuse"
        );
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let stderr = serve(&["--max-connections", "5000"]);
    assert!(
        stderr.contains(
            "--max-connections 5000 is more than the open-file limit of 512 can carry: at most 384"
        ),
        "{stderr}"
    );
    let stderr = serve(&["--idle-timeout-ms", "20000"]);
    assert!(
        stderr.contains("--idle-timeout-ms 20000 is too short"),
        "{stderr}"
    );
    let stderr = serve(&["--max-connections-per-peer", "0"]);
    assert!(
        stderr.contains("--max-connections-per-peer = 0 is out of range: it must be 1..=384"),
        "{stderr}"
    );
}
