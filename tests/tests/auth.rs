//! Authentication over real gRPC: bot tokens, the per-bot stream limit and the admin token.

use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, authorized, probe_hello};
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bot_tokens_are_checked_before_any_seat_is_taken() {
    let arena = Arena::start(ArenaOptions {
        log_file: None,
        args: vec![
            "--max-streams-per-bot".into(),
            "2".into(),
            "--seats".into(),
            "4".into(),
        ],
    })
    .await;
    let token = arena.add_bot("alice").await;

    // A wrong token, a missing token and a malformed header are refused.
    let status = arena.open_stream("knb_0000").await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    let mut client = arena.client().await;
    let (tx, rx) = mpsc::channel(1);
    tx.send(probe_hello()).await.unwrap();
    let status = client.play(ReceiverStream::new(rx)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    assert!(
        status.message().contains("authorization: Bearer"),
        "{}",
        status.message()
    );

    // The right token gets a Welcome, up to the per-bot stream limit.
    let (first, _a) = arena.open_stream(&token).await.unwrap();
    assert!(matches!(
        first.kind,
        Some(pb::arena_message::Kind::Welcome(_))
    ));
    let (_, _b) = arena.open_stream(&token).await.unwrap();
    let status = arena.open_stream(&token).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(
        status.message().contains("at most 2"),
        "{}",
        status.message()
    );

    // Nobody was seated: no match started.
    assert!(arena.matches().await.is_empty());
    assert!(arena.stop().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_token_guards_bot_registration() {
    let admin_token = "knb_admin_e2e_secret";
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", admin_token)],
    )
    .await;
    let channel = tonic::transport::Channel::from_shared(arena.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut admin = AdminClient::new(channel);

    let status = admin
        .add_bot(pb::AddBotRequest {
            name: "mallory".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    let status = admin
        .add_bot(authorized(
            pb::AddBotRequest {
                name: "mallory".into(),
            },
            "wrong",
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);

    let added = admin
        .add_bot(authorized(
            pb::AddBotRequest { name: "bob".into() },
            admin_token,
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(added.token.starts_with("knb_"));
    let status = admin
        .add_bot(authorized(
            pb::AddBotRequest { name: "bob".into() },
            admin_token,
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::AlreadyExists);
    let status = admin
        .add_bot(authorized(
            pb::AddBotRequest {
                name: " bob".into(),
            },
            admin_token,
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);

    // The new token works; once revoked it does not.
    let (first, _stream) = arena.open_stream(&added.token).await.unwrap();
    assert!(matches!(
        first.kind,
        Some(pb::arena_message::Kind::Welcome(_))
    ));
    let listed = admin
        .list_bots(authorized(pb::ListBotsRequest {}, admin_token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.bots.len(), 1);
    assert!(listed.bots[0].revoked_unix_ms.is_none());
    let revoked = admin
        .revoke_bot(authorized(
            pb::RevokeBotRequest { name: "bob".into() },
            admin_token,
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(revoked.revoked);
    let status = arena.open_stream(&added.token).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    assert!(arena.stop().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_admin_token_admin_operations_are_disabled() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let channel = tonic::transport::Channel::from_shared(arena.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let status = AdminClient::new(channel)
        .list_bots(authorized(pb::ListBotsRequest {}, "anything"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied);
    assert!(arena.stop().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_never_appear_in_the_arena_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("arena.log");
    let admin_token = "knb_admin_secret_for_the_log_test";
    let mut arena = Arena::start_with_env(
        ArenaOptions {
            log_file: Some(log.clone()),
            args: vec!["--practice".into(), "--practice-wait-ms".into(), "0".into()],
        },
        &[("RUST_LOG", "debug"), ("KNOBEL_ADMIN_TOKEN", admin_token)],
    )
    .await;
    let token = arena.add_bot("quiet").await;
    let bot = arena.bot(&token, &["--games", "sjokken", "--matches", "1"]);
    let (status, _) = knobel_e2e::finish(bot, Duration::from_secs(60)).await;
    assert!(status.success());
    // A wrong token and a wrong admin token are logged nowhere either.
    let _ = arena.open_stream("knb_wrong_token_for_the_log_test").await;
    assert!(arena.terminate().await.success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("match finished"),
        "the log is empty or not at debug level"
    );
    for secret in [
        token.as_str(),
        admin_token,
        "knb_wrong_token_for_the_log_test",
    ] {
        assert!(!text.contains(secret), "a token appears in the arena's log");
    }
}
