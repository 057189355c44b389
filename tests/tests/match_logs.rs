//! GetMatchLog and StreamMatchLog over real gRPC: a log over GetMatchLog's 4 MiB message
//! limit (a long Zokken match's) is refused there, pointing to StreamMatchLog, and
//! StreamMatchLog serves it whole in chunks; small logs come the same from both.

use knobel_arena::store::{NewMatch, Store};
use knobel_e2e::{Arena, ArenaOptions, poll_until};
use knobel_engine::Outcome;
use knobel_proto::v1 as pb;
use tokio_stream::StreamExt;
use tonic::Code;

const MIB: usize = 1024 * 1024;

fn zokken_match(id: &str) -> NewMatch {
    NewMatch {
        id: id.to_owned(),
        game: "zokken".to_owned(),
        preset: "zokken-classic".to_owned(),
        rules_json: "{}".to_owned(),
        seed: 11,
        seat_names: vec!["ann".to_owned(), "bob".to_owned()],
        seat_bot_ids: Vec::new(),
        started_at_ms: 1_000,
        league: None,
    }
}

fn outcome() -> Outcome {
    Outcome {
        placings: vec![1, 2],
        loser: None,
        tokens: vec![0; 2],
        halves_lost: vec![0; 2],
        chips: vec![5, -5],
        strikes: vec![0; 2],
        timeouts: vec![0; 2],
        forfeits: vec![None; 2],
    }
}

/// A log of about `bytes` bytes shaped like a long match's, with seat names of
/// several-byte characters, so that chunk boundaries fall inside characters.
fn long_log(bytes: usize) -> String {
    let entry = r#"{"kind":"throw","seat":1,"round":RRR,"dice":[3,5,6],"by":"Zoë ☃ 🎲"},"#;
    let mut log = String::from(r#"{"rules":{"game":"zokken"},"seed":11,"entries":["#);
    let mut round = 0;
    while log.len() < bytes {
        log.push_str(&entry.replace("RRR", &round.to_string()));
        round += 1;
    }
    log.push_str(r#"{"kind":"match_over"}]}"#);
    log
}

/// Every chunk of `id`'s log, checked for contiguous offsets and one total size, and the
/// log they make.
async fn streamed(
    arena: &Arena,
    id: &str,
) -> Result<(Vec<pb::MatchLogChunk>, String), tonic::Status> {
    let mut stream = arena
        .client()
        .await
        .stream_match_log(pb::GetMatchLogRequest {
            match_id: id.to_owned(),
        })
        .await?
        .into_inner();
    let mut chunks = Vec::new();
    let mut data = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        assert_eq!(chunk.match_id, id);
        assert_eq!(chunk.offset, data.len() as u64, "offsets are contiguous");
        assert!(
            chunk.data.len() <= MIB,
            "a chunk of {} bytes",
            chunk.data.len()
        );
        assert!(!chunk.data.is_empty() || chunk.total_bytes == 0);
        data.extend_from_slice(&chunk.data);
        chunks.push(chunk);
    }
    let total = chunks.first().expect("at least one chunk").total_bytes;
    assert!(chunks.iter().all(|c| c.total_bytes == total));
    assert_eq!(
        data.len() as u64,
        total,
        "the last chunk ends at total_bytes"
    );
    Ok((
        chunks,
        String::from_utf8(data).expect("the log is UTF-8 text"),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_over_the_message_limit_is_streamed_in_chunks() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let store = Store::connect(&arena.database_url).await.unwrap();
    // About 2 400 Zokken rounds' worth: over 4 MiB, and not a whole number of chunks.
    let log = long_log(9 * MIB + 12_345);
    store.insert_match(&zokken_match("long")).await.unwrap();
    store
        .finish_match("long", &log, &outcome(), 2_000)
        .await
        .unwrap();

    let refused = arena
        .client()
        .await
        .get_match_log(pb::GetMatchLogRequest {
            match_id: "long".to_owned(),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(
        refused.message().contains("use StreamMatchLog")
            && refused
                .message()
                .contains("over GetMatchLog's limit of 4194304 bytes"),
        "{}",
        refused.message()
    );

    let (chunks, streamed_log) = streamed(&arena, "long").await.unwrap();
    assert_eq!(chunks.len(), 10);
    assert!(chunks[..9].iter().all(|c| c.data.len() == MIB));
    assert!(
        chunks.iter().any(|c| std::str::from_utf8(&c.data).is_err()),
        "the test cuts inside a character somewhere"
    );
    assert_eq!(streamed_log.len(), log.len());
    assert!(streamed_log == log, "the streamed log is the stored one");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_logs_come_the_same_from_both_and_refusals_match() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let store = Store::connect(&arena.database_url).await.unwrap();
    // Just under the limit: still served by GetMatchLog.
    let near = long_log(4 * MIB - 64 * 1024);
    store.insert_match(&zokken_match("near")).await.unwrap();
    store
        .finish_match("near", &near, &outcome(), 2_000)
        .await
        .unwrap();
    let small = r#"{"rules":{},"seed":11,"entries":[]}"#;
    store.insert_match(&zokken_match("small")).await.unwrap();
    store
        .finish_match("small", small, &outcome(), 2_000)
        .await
        .unwrap();
    store.insert_match(&zokken_match("running")).await.unwrap();

    let mut client = arena.client().await;
    for (id, log) in [("near", near.as_str()), ("small", small)] {
        let got = client
            .get_match_log(pb::GetMatchLogRequest {
                match_id: id.to_owned(),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(got.log_json == log, "{id}");
        let (chunks, streamed_log) = streamed(&arena, id).await.unwrap();
        assert!(streamed_log == log, "{id}");
        assert_eq!(chunks.len(), log.len().div_ceil(MIB), "{id}");
    }

    // The same refusals from both, before any chunk.
    for (id, code) in [
        ("running", Code::FailedPrecondition),
        ("nope", Code::NotFound),
        ("", Code::InvalidArgument),
    ] {
        let one = client
            .get_match_log(pb::GetMatchLogRequest {
                match_id: id.to_owned(),
            })
            .await
            .unwrap_err();
        let streamed = streamed(&arena, id).await.unwrap_err();
        assert_eq!((one.code(), streamed.code()), (code, code), "{id:?}");
        assert_eq!(one.message(), streamed.message());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_long_zokken_match_is_served_by_stream_match_log() {
    // A practice match of 1 100 Zokken rounds against the built-in players: a log of
    // about 5 MiB (some 4.7 KB a round), over GetMatchLog's limit.
    let arena = Arena::start(ArenaOptions {
        log_file: None,
        args: [
            "--practice",
            "--practice-wait-ms",
            "0",
            "--zokken-rounds",
            "1100",
            "--decision-ms",
            "2000",
        ]
        .map(str::to_owned)
        .to_vec(),
    })
    .await;
    let token = arena.add_bot("long-player").await;
    let bot = arena.bot(
        &token,
        &[
            "--games",
            "zokken",
            "--strategy",
            "random",
            "--matches",
            "1",
        ],
    );
    let (status, lines) = knobel_e2e::finish(bot, std::time::Duration::from_secs(300)).await;
    assert!(status.success(), "{lines:?}");
    let matches = arena.matches().await;
    assert_eq!(matches.len(), 1);
    let id = matches[0].match_id.clone();
    assert_eq!(matches[0].status, pb::MatchStatus::Finished as i32);

    let refused = match arena
        .client()
        .await
        .get_match_log(pb::GetMatchLogRequest {
            match_id: id.clone(),
        })
        .await
    {
        Ok(got) => panic!(
            "a log of {} bytes was served by GetMatchLog",
            got.get_ref().log_json.len()
        ),
        Err(status) => status,
    };
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(refused.message().contains("use StreamMatchLog"));

    let (chunks, log) = streamed(&arena, &id).await.unwrap();
    assert!(chunks.len() > 4, "{} chunks", chunks.len());
    let parsed: serde_json::Value = serde_json::from_str(&log).expect("the log is JSON");
    assert_eq!(parsed["rules"]["game"], "zokken", "{}", &log[..200]);
    assert!(
        parsed["entries"]
            .as_array()
            .is_some_and(|e| e.len() > 1_100)
    );
    assert_eq!(
        parsed["rules"]["rounds"], 1_100,
        "the log is the long match's"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_in_flight_are_bounded() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let store = Store::connect(&arena.database_url).await.unwrap();
    store.insert_match(&zokken_match("long")).await.unwrap();
    store
        .finish_match("long", &long_log(9 * MIB), &outcome(), 2_000)
        .await
        .unwrap();
    let request = || pb::GetMatchLogRequest {
        match_id: "long".to_owned(),
    };
    // Streams that are not read stay in flight: the log does not fit the flow-control
    // windows.
    let client = arena.client().await;
    let mut held = Vec::new();
    for _ in 0..knobel_arena::server::MAX_LOGS_IN_FLIGHT {
        held.push(
            client
                .clone()
                .stream_match_log(request())
                .await
                .unwrap()
                .into_inner(),
        );
    }
    let refused = client
        .clone()
        .stream_match_log(request())
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(
        refused
            .message()
            .contains("match logs are being sent already")
            && refused.message().contains("retry in a moment"),
        "{}",
        refused.message()
    );
    let refused = client.clone().get_match_log(request()).await.unwrap_err();
    assert!(
        refused.message().contains("retry in a moment"),
        "{refused:?}"
    );
    // The others dropped (they share the connection's flow-control window) and one read
    // to its end: logs are served again.
    let mut first = held.remove(0);
    drop(held);
    let read = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        let mut read = 0;
        while let Some(chunk) = first.next().await {
            read += chunk.unwrap().data.len();
        }
        read
    })
    .await
    .expect("the held stream is read to its end");
    assert_eq!(read, long_log(9 * MIB).len());
    drop(first);
    let log = poll_until(
        std::time::Duration::from_secs(30),
        "dropped streams no longer count as in flight",
        || async {
            match streamed(&arena, "long").await {
                Ok((_, log)) => Ok(log),
                Err(status) if status.code() == Code::ResourceExhausted => {
                    Err(format!("{status:?}"))
                }
                Err(status) => panic!("{status:?}"),
            }
        },
    )
    .await;
    assert!(log == long_log(9 * MIB));
}
