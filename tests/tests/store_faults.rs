//! A PostgreSQL outage mid-league, on a PostgreSQL server of the test's own (initdb in a
//! temporary folder, its own port), stopped with an immediate shutdown and started again:
//! every match the bots were told finished is in the database exactly once, the arena kept
//! answering (ListMatches said UNAVAILABLE within the store's timeout, running matches
//! played on without stalls), no match started while its start could not be recorded, and
//! waiting bots were told why.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use knobel_arena::store::{MatchStatus, Store};
use knobel_e2e::postgres::{self, PrivateServer};
use knobel_e2e::{Arena, ArenaOptions, authorized, poll_until};
use knobel_proto::v1 as pb;
use tokio::io::{AsyncBufReadExt, BufReader};

/// What a bot was told, with when.
#[derive(Clone, Debug)]
enum Told {
    Start(Instant, String),
    Request(Instant),
    Result {
        at: Instant,
        match_id: String,
        finished: bool,
        place: u32,
    },
    Unavailable(Instant),
}

type Log = Arc<Mutex<Vec<Told>>>;

/// A bot process's result lines, with when they came.
type Lines = Arc<Mutex<Vec<(Instant, String)>>>;

/// A bot over raw gRPC that plays every request's default action at once and logs what
/// it is told.
async fn raw_bot(arena: &Arena, token: &str, log: Log) -> tokio::task::JoinHandle<()> {
    let mut client = arena.client().await;
    let (to_arena, from_bot) = tokio::sync::mpsc::channel::<pb::BotMessage>(64);
    to_arena
        .send(pb::BotMessage {
            kind: Some(pb::bot_message::Kind::Hello(pb::Hello {
                name: "raw".into(),
                games: vec![pb::Game::Sjokken as i32],
                ..Default::default()
            })),
        })
        .await
        .unwrap();
    let mut stream = client
        .play(authorized(
            tokio_stream::wrappers::ReceiverStream::new(from_bot),
            token,
        ))
        .await
        .expect("the stream opens")
        .into_inner();
    tokio::spawn(async move {
        while let Ok(Some(message)) = stream.message().await {
            let now = Instant::now();
            let told = match message.kind {
                Some(pb::arena_message::Kind::MatchStart(start)) => {
                    Told::Start(now, start.match_id)
                }
                Some(pb::arena_message::Kind::DecisionRequest(request)) => {
                    let _ = to_arena
                        .send(pb::BotMessage {
                            kind: Some(pb::bot_message::Kind::Decision(pb::Decision {
                                request_id: request.request_id,
                                action: request.default_action,
                            })),
                        })
                        .await;
                    Told::Request(now)
                }
                Some(pb::arena_message::Kind::MatchResult(result)) => Told::Result {
                    at: now,
                    finished: result.status == pb::MatchStatus::Finished as i32,
                    match_id: result.match_id,
                    place: result.your_place,
                },
                Some(pb::arena_message::Kind::Error(error))
                    if error.code == pb::ErrorCode::ArenaUnavailable as i32 =>
                {
                    assert_eq!(error.request_id, 0);
                    assert!(error.message.contains("not a strike"), "{error:?}");
                    Told::Unavailable(now)
                }
                _ => continue,
            };
            log.lock().unwrap().push(told);
        }
    })
}

/// A `knobel-bot` process's result lines (`match <id> <game> place <p>/<n>[ aborted]`),
/// with when they came.
fn read_lines(child: &mut tokio::process::Child, lines: Lines) {
    let stdout = child.stdout.take().expect("piped stdout");
    tokio::spawn(async move {
        let mut reader = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = reader.next_line().await {
            lines.lock().unwrap().push((Instant::now(), line));
        }
    });
}

#[cfg_attr(
    knobel_without_postgres,
    ignore = "built with KNOBEL_TEST_WITHOUT=postgres: needs PostgreSQL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_outage_loses_no_result_and_stalls_nobody() {
    postgres::require_binaries();
    let server = PrivateServer::start();
    let mut arena = Arena::start_on(
        ArenaOptions {
            args: [
                "--seats",
                "2",
                "--decision-ms",
                "1000",
                "--store-timeout-ms",
                "1000",
                // Shorter than the outage: the arena's own lease runs out while it is cut
                // off, and must not cost it its matches once the database is back.
                "--instance-lease-secs",
                "3",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            log_file: None,
        },
        &server.url,
    )
    .await;
    let names = ["proc-1", "proc-2", "raw-1", "raw-2"];
    let mut tokens = HashMap::new();
    for name in names {
        tokens.insert(name, arena.add_bot(name).await);
    }
    // Two bot processes play Schocken against each other, two raw bots Sjokken: two
    // tables, a match after the other.
    let mut lines: HashMap<&str, Lines> = HashMap::new();
    let mut processes = Vec::new();
    for name in ["proc-1", "proc-2"] {
        let mut child = arena.bot(&tokens[name], &["--games", "schocken"]);
        let out = Arc::new(Mutex::new(Vec::new()));
        read_lines(&mut child, out.clone());
        lines.insert(name, out);
        processes.push(child);
    }
    let mut logs: HashMap<&str, Log> = HashMap::new();
    let mut raw = Vec::new();
    for name in ["raw-1", "raw-2"] {
        let log: Log = Arc::default();
        raw.push(raw_bot(&arena, &tokens[name], log.clone()).await);
        logs.insert(name, log);
    }
    let results = |logs: &HashMap<&str, Log>, lines: &HashMap<&str, Lines>| {
        let raw: usize = logs
            .values()
            .map(|l| {
                l.lock()
                    .unwrap()
                    .iter()
                    .filter(|t| matches!(t, Told::Result { .. }))
                    .count()
            })
            .sum();
        let told: usize = lines.values().map(|l| l.lock().unwrap().len()).sum();
        (raw, told)
    };
    poll_until(Duration::from_secs(60), "the bots have played", || async {
        let (raw, told) = results(&logs, &lines);
        if raw >= 4 && told >= 4 {
            Ok(())
        } else {
            Err(format!("{raw} raw / {told} process results"))
        }
    })
    .await;

    // The outage.
    let down = Instant::now();
    server.stop_immediately();
    let mut client = arena.client().await;
    let mut unavailable = 0;
    let mut slowest = Duration::ZERO;
    while down.elapsed() < Duration::from_secs(7) {
        let asked = Instant::now();
        let answer = tokio::time::timeout(
            Duration::from_secs(10),
            client.list_matches(pb::ListMatchesRequest::default()),
        )
        .await
        .expect("ListMatches hung while the database was down");
        slowest = slowest.max(asked.elapsed());
        match answer {
            Err(status) => {
                assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
                unavailable += 1;
            }
            Ok(_) => panic!("ListMatches answered from a database that is down"),
        }
        let asked = Instant::now();
        let log = tokio::time::timeout(
            Duration::from_secs(10),
            client.get_match_log(pb::GetMatchLogRequest {
                match_id: "01a2334b9d4d1ca7df18dcaa632b".into(),
            }),
        )
        .await
        .expect("GetMatchLog hung while the database was down");
        slowest = slowest.max(asked.elapsed());
        let status = log.expect_err("GetMatchLog answered from a database that is down");
        assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(unavailable > 0);
    assert!(
        slowest < Duration::from_secs(3),
        "ListMatches or GetMatchLog took {slowest:?} while the database was down"
    );
    let metrics = arena.metrics_text().await;
    for operation in ["list_matches", "heartbeat"] {
        let name = format!("knobel_store_errors_total{{operation=\"{operation}\"}}");
        assert!(
            arena.metric(&name).await > 0.0,
            "no {operation} store errors counted: {metrics}"
        );
    }
    let up = Instant::now();
    server.start_again();

    // Back: the kept results are written, and the bots play on.
    let (raw_before, told_before) = results(&logs, &lines);
    poll_until(
        Duration::from_secs(60),
        "the arena has recovered",
        || async {
            let (raw_now, told_now) = results(&logs, &lines);
            let pending = arena.metric("knobel_store_pending_writes").await;
            if pending == 0.0 && raw_now >= raw_before + 4 && told_now >= told_before + 4 {
                Ok(())
            } else {
                Err(format!(
                    "{raw_now} raw / {told_now} process results (from {raw_before} / \
                 {told_before}), {pending} pending writes"
                ))
            }
        },
    )
    .await;
    // The arena takes its lease again (it ran out during the outage).
    let store = Store::connect(&server.url).await.unwrap();
    let some_match = store
        .list_matches(&knobel_arena::store::MatchFilter::default())
        .await
        .unwrap()[0]
        .id
        .clone();
    let owner = store
        .match_owner(&some_match)
        .await
        .unwrap()
        .expect("an owner");
    let back_ms = knobel_arena::store::now_ms();
    poll_until(
        Duration::from_secs(30),
        "the arena has renewed its lease",
        || async {
            let lease = store.lease(&owner).await.unwrap();
            if lease
                .as_ref()
                .is_some_and(|lease| lease.heartbeat_at_ms >= back_ms)
            {
                Ok(())
            } else {
                Err(format!("{lease:?} (back at {back_ms} ms)"))
            }
        },
    )
    .await;
    for child in &mut processes {
        child.kill().await.unwrap();
    }
    for task in &raw {
        task.abort();
    }
    assert!(arena.terminate().await.success());

    // What the raw bots saw: no match started while the database was down, they were told
    // why they waited, and no decision waited on the store.
    let mut told_during_outage = 0;
    for (name, log) in &logs {
        let log = log.lock().unwrap().clone();
        let mut last_request: Option<Instant> = None;
        let mut notices = 0;
        for told in &log {
            match told {
                Told::Start(at, id) => {
                    assert!(
                        !(*at > down + Duration::from_secs(1) && *at < up),
                        "{name}: match {id} started while the database was down"
                    );
                    last_request = None;
                }
                Told::Request(at) => {
                    if let Some(last) = last_request {
                        let gap = at.duration_since(last);
                        assert!(
                            gap < Duration::from_secs(3),
                            "{name}: a decision waited {gap:?}"
                        );
                    }
                    last_request = Some(*at);
                }
                Told::Result { at, .. } => {
                    if *at > down && *at < up {
                        told_during_outage += 1;
                    }
                    last_request = None;
                }
                Told::Unavailable(at) => {
                    assert!(*at > down, "{name}: told unavailable before the outage");
                    notices += 1;
                }
            }
        }
        assert!(notices > 0, "{name} was never told why it waited: {log:?}");
    }
    for out in lines.values() {
        for (at, line) in out.lock().unwrap().iter() {
            if *at > down && *at < up && !line.contains("aborted") {
                told_during_outage += 1;
            }
        }
    }
    assert!(
        told_during_outage > 0,
        "no match ended while the database was down: the outage tested nothing"
    );

    // Every match a bot was told finished is in the database, finished, once, with the
    // place the bot was told.
    let mut told: Vec<(String, String, u32)> = Vec::new();
    for (name, log) in &logs {
        for entry in log.lock().unwrap().iter() {
            if let Told::Result {
                match_id,
                finished: true,
                place,
                ..
            } = entry
            {
                told.push((name.to_string(), match_id.clone(), *place));
            }
        }
    }
    for (name, out) in &lines {
        for (_, line) in out.lock().unwrap().iter() {
            // match <id> <game> place <p>/<n>
            let words: Vec<&str> = line.split_whitespace().collect();
            if line.contains("aborted") {
                continue;
            }
            let place: u32 = words[4].split('/').next().unwrap().parse().unwrap();
            told.push((name.to_string(), words[1].to_owned(), place));
        }
    }
    assert!(told.len() >= 16, "{told:?}");
    let mut per_bot: HashMap<String, Vec<knobel_arena::store::BotResult>> = HashMap::new();
    for name in names {
        per_bot.insert(name.to_owned(), store.results_for_bot(name).await.unwrap());
    }
    for (name, id, place) in &told {
        let record = store.get_match(id).await.unwrap();
        let record =
            record.unwrap_or_else(|| panic!("{name} was told match {id} ended: not stored"));
        assert_eq!(record.summary.status, MatchStatus::Finished, "{record:?}");
        let rows: Vec<_> = per_bot[name].iter().filter(|r| &r.match_id == id).collect();
        assert_eq!(rows.len(), 1, "{name} in {id}: {rows:?}");
        assert_eq!(u32::from(rows[0].place), *place, "{name} in {id}");
    }
    // No match is left running, and none has more seat results than seats.
    let all = store
        .list_matches(&knobel_arena::store::MatchFilter {
            limit: 500,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        all.iter().all(|m| m.status != MatchStatus::Running),
        "{all:?}"
    );
    // The arena did not abort its own matches as orphans after its lease ran out.
    assert!(
        all.iter()
            .all(|m| m.abort_reason.as_deref() != Some(knobel_arena::instance::ORPHAN_REASON)),
        "{all:?}"
    );
    let seats: usize = per_bot.values().map(Vec::len).sum();
    let finished = all
        .iter()
        .filter(|m| m.status == MatchStatus::Finished)
        .count();
    assert_eq!(seats, 2 * finished);
    store.close().await;
}
