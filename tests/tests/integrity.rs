//! Arena integrity over real gRPC, the arena as a real process: one seat per bot per match,
//! revoking a bot ends its streams, the one name rule, and settings checked at start-up.

use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, authorized, binaries, poll_until};
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use pb::arena_message::Kind;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;

/// What a test seat saw.
#[derive(Debug)]
enum Seen {
    Welcome,
    Pong,
    Request,
    Start(pb::MatchStart),
    Result(pb::MatchResult),
    /// The call ended: `Ok` for status OK, else the status.
    Ended(Result<(), tonic::Status>),
}

/// A Play stream driven by the test: it answers every request with its default action
/// (unless `answer` is false) and reports what it sees.
struct Seat {
    to_arena: mpsc::Sender<pb::BotMessage>,
    seen: mpsc::UnboundedReceiver<Seen>,
}

fn hello(name: &str, max_matches: u32) -> pb::BotMessage {
    pb::BotMessage {
        kind: Some(pb::bot_message::Kind::Hello(pb::Hello {
            name: name.into(),
            games: vec![pb::Game::Schocken as i32],
            client_version: "e2e".into(),
            preset: Some("schocken".into()),
            max_matches,
        })),
    }
}

impl Seat {
    async fn open(arena: &Arena, token: &str, max_matches: u32, answer: bool) -> Seat {
        let mut client = arena.client().await;
        let (to_arena, rx) = mpsc::channel(64);
        to_arena.send(hello("e2e-seat", max_matches)).await.unwrap();
        let mut inbound = client
            .play(authorized(ReceiverStream::new(rx), token))
            .await
            .expect("the stream opens")
            .into_inner();
        let (report, seen) = mpsc::unbounded_channel();
        let answers = to_arena.clone();
        tokio::spawn(async move {
            loop {
                let message = match inbound.message().await {
                    Ok(Some(message)) => message,
                    Ok(None) => {
                        let _ = report.send(Seen::Ended(Ok(())));
                        return;
                    }
                    Err(status) => {
                        let _ = report.send(Seen::Ended(Err(status)));
                        return;
                    }
                };
                let seen = match message.kind {
                    Some(Kind::Welcome(_)) => Seen::Welcome,
                    Some(Kind::Pong(_)) => Seen::Pong,
                    Some(Kind::MatchStart(start)) => Seen::Start(start),
                    Some(Kind::MatchResult(result)) => Seen::Result(result),
                    Some(Kind::DecisionRequest(request)) => {
                        if answer {
                            let decision = pb::BotMessage {
                                kind: Some(pb::bot_message::Kind::Decision(pb::Decision {
                                    request_id: request.request_id,
                                    action: request.default_action,
                                })),
                            };
                            let _ = answers.send(decision).await;
                        }
                        Seen::Request
                    }
                    _ => continue,
                };
                let _ = report.send(seen);
            }
        });
        let mut seat = Seat { to_arena, seen };
        match seat.next().await {
            Seen::Welcome => {}
            other => panic!("expected a Welcome, got {other:?}"),
        }
        seat
    }

    /// The next thing the seat sees (within a generous bound).
    async fn next(&mut self) -> Seen {
        tokio::time::timeout(Duration::from_secs(60), self.seen.recv())
            .await
            .expect("the seat saw nothing within 60 s")
            .expect("the seat's reader ended")
    }

    /// Pings and waits for the pong: the stream is then waiting in the lobby.
    async fn ping(&mut self) {
        self.to_arena
            .send(pb::BotMessage {
                kind: Some(pb::bot_message::Kind::Ping(pb::Ping { nonce: 7 })),
            })
            .await
            .unwrap();
        match self.next().await {
            Seen::Pong => {}
            Seen::Start(start) => panic!("a match started early: {:?}", start.seat_names),
            other => panic!("expected a Pong, got {other:?}"),
        }
    }

    /// The next match start, skipping the rest.
    async fn next_start(&mut self) -> pb::MatchStart {
        loop {
            match self.next().await {
                Seen::Start(start) => return start,
                Seen::Ended(status) => panic!("the stream ended before a match: {status:?}"),
                _ => {}
            }
        }
    }

    /// The result of the current match, skipping the rest.
    async fn next_result(&mut self) -> pb::MatchResult {
        loop {
            match self.next().await {
                Seen::Result(result) => return result,
                Seen::Start(start) => panic!("a match started during one: {start:?}"),
                Seen::Ended(status) => panic!("the stream ended during a match: {status:?}"),
                _ => {}
            }
        }
    }

    /// How the call ends, skipping the rest.
    async fn ended(&mut self) -> Result<(), tonic::Status> {
        loop {
            if let Seen::Ended(status) = self.next().await {
                return status;
            }
        }
    }
}

fn distinct(names: &[String]) -> bool {
    let mut sorted = names.to_vec();
    sorted.sort();
    sorted.dedup();
    sorted.len() == names.len()
}

/// Three seats, bot alice with two streams and bob with one: no match until a third bot
/// connects; then every match has three distinct bots, and alice's second stream plays
/// the next match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_streams_of_one_bot_are_never_seated_together() {
    let arena = Arena::start(ArenaOptions {
        log_file: None,
        args: vec!["--seats".into(), "3".into()],
    })
    .await;
    let alice = arena.add_bot("alice").await;
    let bob = arena.add_bot("bob").await;
    let carol = arena.add_bot("carol").await;

    let mut alice_1 = Seat::open(&arena, &alice, 1, true).await;
    let mut alice_2 = Seat::open(&arena, &alice, 1, true).await;
    let mut bob_1 = Seat::open(&arena, &bob, 2, true).await;
    // A Pong comes from the lobby: all three streams are waiting, three streams for three
    // seats, and no match has started (with one bot seated twice, it would have).
    alice_1.ping().await;
    alice_2.ping().await;
    bob_1.ping().await;
    assert!(
        arena.matches().await.is_empty(),
        "no match without a third bot"
    );

    let mut carol_1 = Seat::open(&arena, &carol, 2, true).await;
    // The first match: alice's older stream, bob and carol.
    let first = alice_1.next_start().await;
    assert!(distinct(&first.seat_names), "{:?}", first.seat_names);
    let mut names = first.seat_names.clone();
    names.sort();
    assert_eq!(names, ["alice", "bob", "carol"]);
    assert_eq!(bob_1.next_start().await.match_id, first.match_id);
    assert_eq!(carol_1.next_start().await.match_id, first.match_id);
    for seat in [&mut alice_1, &mut bob_1, &mut carol_1] {
        assert!(seat.next_result().await.outcome.is_some());
    }
    // alice's first stream asked for one match; her second one plays the next, with bob
    // and carol.
    assert_eq!(alice_1.ended().await.map_err(|s| s.code()), Ok(()));
    let second = alice_2.next_start().await;
    assert_ne!(second.match_id, first.match_id);
    assert!(distinct(&second.seat_names), "{:?}", second.seat_names);
    assert_eq!(bob_1.next_start().await.match_id, second.match_id);
    assert_eq!(carol_1.next_start().await.match_id, second.match_id);
    for seat in [&mut alice_2, &mut bob_1, &mut carol_1] {
        assert!(seat.next_result().await.outcome.is_some());
    }

    let matches = arena.matches().await;
    assert_eq!(matches.len(), 2);
    for m in &matches {
        assert_eq!(m.status, pb::MatchStatus::Finished as i32);
        assert!(distinct(&m.seat_names), "{:?}", m.seat_names);
        assert_eq!(m.seat_names.len(), 3);
    }
    assert!(arena.stop().await.success());
}

/// In practice mode a bot's two waiting streams play two separate matches against
/// built-in players (whose names are reserved), never one together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn practice_seats_one_bot_once_per_match() {
    let arena = Arena::start(ArenaOptions {
        log_file: None,
        args: vec![
            "--seats".into(),
            "3".into(),
            "--practice".into(),
            "--practice-wait-ms".into(),
            "100".into(),
        ],
    })
    .await;
    let alice = arena.add_bot("alice").await;
    let mut one = Seat::open(&arena, &alice, 1, true).await;
    let mut two = Seat::open(&arena, &alice, 1, true).await;
    let a = one.next_start().await;
    let b = two.next_start().await;
    assert_ne!(a.match_id, b.match_id);
    for start in [&a, &b] {
        assert_eq!(
            start.seat_names.iter().filter(|n| *n == "alice").count(),
            1,
            "{:?}",
            start.seat_names
        );
        assert!(
            start
                .seat_names
                .iter()
                .filter(|n| *n != "alice")
                .all(|n| n.starts_with("builtin-heuristic-")),
            "{:?}",
            start.seat_names
        );
    }
    for seat in [&mut one, &mut two] {
        assert!(seat.next_result().await.outcome.is_some());
    }
    assert!(arena.stop().await.success());
}

/// Which way a test revokes a bot.
#[derive(Clone, Copy, Debug)]
enum Revoke {
    /// The Admin.RevokeBot RPC: the arena ends the streams at once.
    Rpc,
    /// `knobel bot revoke` from another process: the arena notices within a second.
    Cli,
}

const ADMIN_TOKEN: &str = "knb_admin_integrity_e2e";

async fn revoke_ends_a_playing_bots_stream(how: Revoke) {
    // Decisions may take 30 s: a stream that ends sooner was ended by the revocation.
    let arena = Arena::start_with_env(
        ArenaOptions {
            log_file: None,
            args: vec![
                "--seats".into(),
                "2".into(),
                "--practice".into(),
                "--practice-wait-ms".into(),
                "50".into(),
                "--decision-ms".into(),
                "30000".into(),
                "--time-bank-ms".into(),
                "0".into(),
            ],
        },
        &[("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)],
    )
    .await;
    let alice = arena.add_bot("alice").await;
    let mut playing = Seat::open(&arena, &alice, 0, false).await;
    let start = playing.next_start().await;
    // The bot is asked and thinks (it never answers).
    loop {
        match playing.next().await {
            Seen::Request => break,
            Seen::Ended(status) => panic!("ended early: {status:?}"),
            _ => {}
        }
    }
    let asked = std::time::Instant::now();
    match how {
        Revoke::Rpc => {
            let channel = tonic::transport::Channel::from_shared(arena.url.clone())
                .unwrap()
                .connect()
                .await
                .unwrap();
            let mut admin = AdminClient::new(channel);
            let revoked = admin
                .revoke_bot(authorized(
                    pb::RevokeBotRequest {
                        name: "alice".into(),
                    },
                    ADMIN_TOKEN,
                ))
                .await
                .unwrap()
                .into_inner();
            assert!(revoked.revoked);
        }
        Revoke::Cli => {
            let output = tokio::process::Command::new(binaries().join("knobel"))
                .args([
                    "bot",
                    "revoke",
                    "alice",
                    "--database-url",
                    &arena.database_url,
                ])
                .output()
                .await
                .unwrap();
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
    let status = playing
        .ended()
        .await
        .expect_err("a revoked bot's call fails");
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    assert_eq!(status.message(), "bot alice was revoked");
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "{how:?}: the stream ended only after {:?}",
        asked.elapsed()
    );

    // The seat forfeited: the match finished (the built-in player won) without waiting for
    // the decision.
    let finished = poll_until(
        Duration::from_secs(20),
        "the match has finished",
        || async {
            let matches = arena.matches().await;
            let m = matches.into_iter().find(|m| m.match_id == start.match_id);
            match m {
                Some(m) if m.status == pb::MatchStatus::Finished as i32 => Ok(m),
                m => Err(format!("{m:?}")),
            }
        },
    )
    .await;
    let outcome = finished.outcome.expect("an outcome");
    let placings = outcome.placings;
    let seat = start.your_seat as usize;
    assert_eq!(placings[seat], 2, "the revoked seat is last: {placings:?}");
    assert_eq!(
        outcome.forfeits[seat],
        pb::ForfeitReason::Revoked as i32,
        "the revoked seat forfeited for being revoked: {:?}",
        outcome.forfeits
    );
    assert_eq!(placings[1 - seat], 1, "{placings:?}");
    assert!(asked.elapsed() < Duration::from_secs(25));

    // The revoked token no longer opens a stream.
    let mut client = arena.client().await;
    let (tx, rx) = mpsc::channel(1);
    tx.send(hello("again", 0)).await.unwrap();
    let refused = client
        .play(authorized(ReceiverStream::new(rx), &alice))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unauthenticated);
    assert!(arena.stop().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_over_the_admin_rpc_ends_a_playing_bots_stream() {
    revoke_ends_a_playing_bots_stream(Revoke::Rpc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_with_the_cli_ends_a_playing_bots_stream() {
    revoke_ends_a_playing_bots_stream(Revoke::Cli).await;
}

/// A waiting (not playing) stream ends too, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_ends_a_waiting_stream() {
    let arena = Arena::start_with_env(
        ArenaOptions {
            log_file: None,
            args: vec!["--seats".into(), "3".into()],
        },
        &[("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)],
    )
    .await;
    let bob = arena.add_bot("bob").await;
    let mut waiting = Seat::open(&arena, &bob, 0, true).await;
    waiting.ping().await;
    let channel = tonic::transport::Channel::from_shared(arena.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut admin = AdminClient::new(channel);
    admin
        .revoke_bot(authorized(
            pb::RevokeBotRequest { name: "bob".into() },
            ADMIN_TOKEN,
        ))
        .await
        .unwrap();
    let status = waiting.ended().await.expect_err("revoked");
    assert_eq!(status.code(), Code::PermissionDenied);
    assert_eq!(status.message(), "bot bob was revoked");
    assert!(arena.stop().await.success());
}

/// `knobel bot add` and Admin.AddBot refuse names that break the name rule, or that count
/// as a registered one, with a message that names the character or the bot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_and_look_alike_names_are_refused() {
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)],
    )
    .await;
    arena.add_bot("heur").await;
    arena.add_bot("alice").await;

    let add = |name: &str| {
        let name = name.to_owned();
        let database_url = arena.database_url.clone();
        async move {
            let output = tokio::process::Command::new(binaries().join("knobel"))
                .args(["bot", "add", &name, "--database-url", &database_url])
                .output()
                .await
                .unwrap();
            assert!(!output.status.success(), "{name:?} was registered");
            String::from_utf8_lossy(&output.stderr).into_owned()
        }
    };
    let stderr = add("h\u{0435}ur").await;
    assert!(
        stderr.contains(
            "a bot named \"heur\" already exists, and \"hеur\" counts as the same name (names are unique regardless of case and look-alike characters)"
        ),
        "{stderr}"
    );
    let stderr = add("builtin-heuristic-1").await;
    assert!(
        stderr.contains("a bot name cannot start with \"builtin-\""),
        "{stderr}"
    );
    let stderr = add("evil\u{202E}gnp").await;
    assert!(
        stderr.contains(
            "a bot name cannot contain a bidirectional control: character 4 is U+202E RIGHT-TO-LEFT OVERRIDE"
        ),
        "{stderr}"
    );

    let channel = tonic::transport::Channel::from_shared(arena.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut admin = AdminClient::new(channel);
    let mut add_rpc = async |name: &str| {
        admin
            .add_bot(authorized(
                pb::AddBotRequest { name: name.into() },
                ADMIN_TOKEN,
            ))
            .await
            .expect_err(name)
    };
    let status = add_rpc("ALICE").await;
    assert_eq!(status.code(), Code::AlreadyExists);
    assert_eq!(
        status.message(),
        "a bot named \"alice\" already exists, and \"ALICE\" counts as the same name (names are unique regardless of case and look-alike characters): choose another name"
    );
    let status = add_rpc("zero\u{200D}width").await;
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(
        status.message(),
        "invalid bot name \"zero\\u{200d}width\": a bot name cannot contain a zero-width character: character 4 is U+200D ZERO WIDTH JOINER"
    );
    let status = add_rpc("BUILTIN-heuristic-2").await;
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status
            .message()
            .contains("reserved for the arena's built-in players")
    );
    let status = add_rpc(&"x".repeat(33)).await;
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status
            .message()
            .ends_with("a bot name has at most 32 characters: this one has 33"),
        "{}",
        status.message()
    );

    // A Hello may not take a built-in player's name either.
    let token = arena.add_bot("zed").await;
    let mut client = arena.client().await;
    let (tx, rx) = mpsc::channel(1);
    tx.send(hello("builtin-heuristic-1", 0)).await.unwrap();
    let status = match client
        .play(authorized(ReceiverStream::new(rx), &token))
        .await
    {
        Err(status) => status,
        Ok(response) => response.into_inner().message().await.expect_err("refused"),
    };
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status
            .message()
            .starts_with("hello.name: a bot name cannot start with \"builtin-\""),
        "{}",
        status.message()
    );
    assert!(arena.stop().await.success());
}

/// `knobel serve` refuses settings it cannot honour, naming the flag and the range, before
/// it listens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_settings_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let database_url = format!("sqlite://{}", dir.path().join("arena.db").display());
    for (args, message) in [
        (
            &["--zokken-rounds", "0"][..],
            "--zokken-rounds (env KNOBEL_ZOKKEN_ROUNDS) = 0 cannot be played: preset zokken: rounds = 0 is out of range: it must be 1..=100000",
        ),
        (
            &["--decision-ms", "4294967296"][..],
            "--decision-ms (env KNOBEL_DECISION_MS) = 4294967296 is out of range: it must be 1..=3600000 milliseconds",
        ),
        (
            &["--seats", "11"][..],
            "--seats (env KNOBEL_SEATS) = 11 is out of range: it must be 2..=10",
        ),
    ] {
        let output = tokio::time::timeout(
            Duration::from_secs(30),
            tokio::process::Command::new(binaries().join("knobel"))
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
                .args(args)
                .env("RUST_LOG", "warn")
                .env_remove("RUST_BACKTRACE")
                .env_remove("RUST_LIB_BACKTRACE")
                .output(),
        )
        .await
        .expect("knobel serve exits at once")
        .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(!stdout.contains("listening"), "{args:?}: {stdout}");
    }
    // The environment variable is checked the same way.
    let output = tokio::process::Command::new(binaries().join("knobel"))
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
        .env("KNOBEL_TIME_BANK_MS", "3600001")
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(
            "--time-bank-ms (env KNOBEL_TIME_BANK_MS) = 3600001 is out of range: it must be 0..=3600000 milliseconds"
        )
    );
}
