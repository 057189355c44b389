//! Server hygiene over real gRPC: health (grpc.health.v1) and reflection (v1 and v1alpha),
//! and the read-only RPCs' answers to bad or early requests.

use knobel_e2e::{Arena, ArenaOptions};
use knobel_proto::v1 as pb;
use tokio_stream::StreamExt;
use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reflection_and_read_only_rpcs() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let channel = tonic::transport::Channel::from_shared(arena.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();

    let mut health = HealthClient::new(channel.clone());
    for service in ["", "knobel.v1.Arena"] {
        let status = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap()
            .into_inner()
            .status;
        assert_eq!(status, ServingStatus::Serving as i32, "{service:?}");
    }

    // Reflection v1 lists the services.
    {
        use tonic_reflection::pb::v1::ServerReflectionRequest;
        use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let mut responses = ServerReflectionClient::new(channel.clone())
            .server_reflection_info(tokio_stream::iter([request]))
            .await
            .unwrap()
            .into_inner();
        let response = responses.next().await.unwrap().unwrap();
        let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else {
            panic!("not a service list: {response:?}");
        };
        let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
        for name in [
            "knobel.v1.Arena",
            "knobel.v1.Admin",
            "grpc.health.v1.Health",
        ] {
            assert!(
                names.iter().any(|n| n == name),
                "{name} missing from {names:?}"
            );
        }
    }
    // And so does v1alpha.
    {
        use tonic_reflection::pb::v1alpha::ServerReflectionRequest;
        use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let mut responses = ServerReflectionClient::new(channel.clone())
            .server_reflection_info(tokio_stream::iter([request]))
            .await
            .unwrap()
            .into_inner();
        let response = responses.next().await.unwrap().unwrap();
        assert!(matches!(
            response.message_response,
            Some(MessageResponse::ListServicesResponse(_))
        ));
    }

    // Read-only RPCs: an unknown match, a bad id, a bad filter.
    let mut client = arena.client().await;
    let status = client
        .get_match_log(pb::GetMatchLogRequest {
            match_id: "nope".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    let status = client
        .get_match_log(pb::GetMatchLogRequest {
            match_id: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let status = client
        .list_matches(pb::ListMatchesRequest {
            game: 42,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("42"), "{}", status.message());
    assert!(arena.stop().await.success());
}

/// ListMatches shows a match's preset and the rule variants it plays with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_matches_shows_preset_and_variants() {
    let arena = Arena::start(ArenaOptions {
        log_file: None,
        args: vec!["--practice".into(), "--practice-wait-ms".into(), "0".into()],
    })
    .await;
    let token = arena.add_bot("lister").await;
    let bot = arena.bot(
        &token,
        &["--preset", "schocken-typenclub", "--matches", "1"],
    );
    let (status, lines) = knobel_e2e::finish(bot, std::time::Duration::from_secs(60)).await;
    assert!(status.success(), "{lines:?}");
    let matches = arena.matches().await;
    assert_eq!(matches.len(), 1, "{matches:?}");
    assert_eq!(matches[0].preset, "schocken-typenclub");
    assert_eq!(matches[0].game, pb::Game::Schocken as i32);
    let mut variants = matches[0].variants.clone();
    variants.sort();
    assert_eq!(variants, ["tie_later_loses", "turn_on_last_throw"]);
    assert!(arena.stop().await.success());
}
