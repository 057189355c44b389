//! The generated server and client work together: the generated `ArenaClient` calls a toy
//! `ArenaServer` in memory (no network, no runtime: the client drives the server's
//! service directly), through real gRPC framing and metadata.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use knobel_engine::Action;
use knobel_proto::arena_client::ArenaClient;
use knobel_proto::arena_server::{Arena, ArenaServer};
use knobel_proto::{self as pb, BotDecision, BotHello};
use tonic::codegen::tokio_stream::{self, Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};

/// Runs a future to completion on this thread.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// A toy arena: welcomes a valid Hello, answers pings, and rejects malformed decisions the
/// way the real arena should (an ErrorEvent with code MALFORMED).
struct ToyArena;

type ArenaStream = Pin<Box<dyn Stream<Item = Result<pb::ArenaMessage, Status>> + Send>>;

#[tonic::async_trait]
impl Arena for ToyArena {
    type PlayStream = ArenaStream;

    async fn play(
        &self,
        request: Request<Streaming<pb::BotMessage>>,
    ) -> Result<Response<ArenaStream>, Status> {
        let token = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned);
        if token.as_deref() != Some("secret") {
            return Err(Status::unauthenticated("a bearer token is required"));
        }
        let mut inbound = request.into_inner();
        let mut replies = Vec::new();
        while let Some(message) = inbound.next().await {
            use pb::arena_message::Kind as Out;
            use pb::bot_message::Kind as In;
            let reply = match message?.kind {
                Some(In::Hello(hello)) => {
                    let hello = BotHello::try_from(&hello)
                        .map_err(|e| Status::invalid_argument(e.to_string()))?;
                    Out::Welcome(pb::Welcome {
                        server_version: "toy".into(),
                        limits: Some(pb::Limits::default()),
                        bot_name: hello.name,
                    })
                }
                Some(In::Ping(ping)) => Out::Pong(pb::Pong {
                    nonce: ping.nonce,
                    server_time_unix_ms: 0,
                }),
                Some(In::Decision(decision)) => match BotDecision::try_from(&decision) {
                    Ok(decision) => {
                        replies.push(Ok(knobel_proto::convert::arena_message(
                            &[knobel_engine::Event::Betting {
                                seat: knobel_engine::Seat(0),
                                action: decision.action,
                                chips: 0,
                            }],
                            None,
                        )));
                        continue;
                    }
                    Err(error) => Out::Error(pb::ErrorEvent {
                        request_id: decision.request_id,
                        code: pb::ErrorCode::Malformed as i32,
                        message: error.to_string(),
                        applied: Some(Action::STOP.into()),
                        strikes: 1,
                        forfeited: false,
                    }),
                },
                None => continue,
            };
            replies.push(Ok(pb::ArenaMessage::from(reply)));
        }
        Ok(Response::new(Box::pin(tokio_stream::iter(replies))))
    }

    async fn list_matches(
        &self,
        request: Request<pb::ListMatchesRequest>,
    ) -> Result<Response<pb::ListMatchesResponse>, Status> {
        let limit = request.get_ref().limit;
        Ok(Response::new(pb::ListMatchesResponse {
            matches: (0..limit)
                .map(|i| pb::MatchSummary {
                    match_id: format!("m-{i}"),
                    game: pb::Game::Sjokken as i32,
                    status: pb::MatchStatus::Running as i32,
                    ..Default::default()
                })
                .collect(),
            next_page_token: String::new(),
        }))
    }

    async fn get_match_log(
        &self,
        request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<pb::MatchLogResponse>, Status> {
        Err(Status::failed_precondition(format!(
            "match {} is still running",
            request.get_ref().match_id
        )))
    }

    async fn get_match_record(
        &self,
        request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<pb::MatchRecordResponse>, Status> {
        Err(Status::failed_precondition(format!(
            "match {} is still running",
            request.get_ref().match_id
        )))
    }

    type ExportLeagueStream =
        Pin<Box<dyn Stream<Item = Result<pb::LeagueArchiveChunk, Status>> + Send>>;

    async fn export_league(
        &self,
        request: Request<pb::ExportLeagueRequest>,
    ) -> Result<Response<Self::ExportLeagueStream>, Status> {
        Err(Status::not_found(format!(
            "no league {:?}",
            request.get_ref().league
        )))
    }

    type StreamMatchLogStream =
        Pin<Box<dyn Stream<Item = Result<pb::MatchLogChunk, Status>> + Send>>;

    async fn stream_match_log(
        &self,
        request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<Self::StreamMatchLogStream>, Status> {
        Err(Status::failed_precondition(format!(
            "match {} is still running",
            request.get_ref().match_id
        )))
    }

    async fn get_standings(
        &self,
        _request: Request<pb::GetStandingsRequest>,
    ) -> Result<Response<pb::GetStandingsResponse>, Status> {
        Err(Status::unimplemented("no leagues here"))
    }

    async fn list_leagues(
        &self,
        _request: Request<pb::ListLeaguesRequest>,
    ) -> Result<Response<pb::ListLeaguesResponse>, Status> {
        Err(Status::unimplemented("no leagues here"))
    }
}

fn client() -> ArenaClient<ArenaServer<ToyArena>> {
    ArenaClient::new(ArenaServer::new(ToyArena))
}

fn bot(kind: pb::bot_message::Kind) -> pb::BotMessage {
    kind.into()
}

#[test]
fn play_stream_round_trip() {
    use pb::bot_message::Kind;
    let outbound = vec![
        bot(Kind::Hello(pb::Hello {
            name: "toy bot".into(),
            games: vec![pb::Game::Zokken as i32],
            client_version: "test".into(),
            preset: None,
            max_matches: 0,
        })),
        bot(Kind::Ping(pb::Ping { nonce: 42 })),
        bot(Kind::Decision(pb::Decision {
            request_id: 1,
            action: Some(Action::Raise.into()),
        })),
        bot(Kind::Decision(pb::Decision {
            request_id: 2,
            action: Some(pb::Action {
                kind: Some(pb::action::Kind::Reroll(pb::Reroll {
                    dice: vec![3],
                    turn: vec![],
                })),
            }),
        })),
    ];
    let replies: Vec<pb::ArenaMessage> = block_on(async {
        let mut request = Request::new(tokio_stream::iter(outbound));
        request
            .metadata_mut()
            .insert("authorization", "Bearer secret".parse().unwrap());
        let mut stream = client().play(request).await.unwrap().into_inner();
        let mut replies = Vec::new();
        while let Some(reply) = stream.message().await.unwrap() {
            replies.push(reply);
        }
        replies
    });
    use pb::arena_message::Kind as Out;
    assert_eq!(replies.len(), 4);
    assert!(replies[2].kind.is_none() && replies[2].events.len() == 1);
    let kinds: Vec<Option<&Out>> = replies.iter().map(|r| r.kind.as_ref()).collect();
    assert!(matches!(kinds[0], Some(Out::Welcome(w)) if w.bot_name == "toy bot"));
    assert!(matches!(kinds[1], Some(Out::Pong(p)) if p.nonce == 42));
    let Some(Out::Error(error)) = kinds[3] else {
        panic!("a bad die slot is an error event: {kinds:?}");
    };
    assert_eq!(error.request_id, 2);
    assert_eq!(error.code, pb::ErrorCode::Malformed as i32);
    assert_eq!(
        error.message,
        "reroll.dice: cannot reroll die 3: dice are numbered 0..=2"
    );
}

#[test]
fn play_needs_a_token_and_a_good_hello() {
    let status = block_on(async {
        let request = Request::new(tokio_stream::iter(Vec::<pb::BotMessage>::new()));
        client().play(request).await.unwrap_err()
    });
    assert_eq!(status.code(), tonic::Code::Unauthenticated);

    let status = block_on(async {
        let hello = bot(pb::bot_message::Kind::Hello(pb::Hello {
            name: String::new(),
            games: vec![1],
            ..Default::default()
        }));
        let mut request = Request::new(tokio_stream::iter(vec![hello]));
        request
            .metadata_mut()
            .insert("authorization", "Bearer secret".parse().unwrap());
        match client().play(request).await {
            Err(status) => status,
            Ok(response) => response.into_inner().message().await.unwrap_err(),
        }
    });
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert_eq!(
        status.message(),
        "hello.name: a bot name cannot be empty: it has 1..=32 characters"
    );
}

#[test]
fn read_only_rpcs() {
    let (list, log) = block_on(async {
        let mut client = client();
        let list = client
            .list_matches(pb::ListMatchesRequest {
                limit: 3,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let log = client
            .get_match_log(pb::GetMatchLogRequest {
                match_id: "m-0".into(),
            })
            .await
            .unwrap_err();
        (list, log)
    });
    assert_eq!(list.matches.len(), 3);
    assert_eq!(list.matches[2].match_id, "m-2");
    assert_eq!(log.code(), tonic::Code::FailedPrecondition);
}
