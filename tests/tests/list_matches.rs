//! ListMatches over real gRPC against a running arena, on matches written straight into
//! the arena's store: keyset paging while matches are being added, the limit's default
//! and cap, the filters, refused page tokens and the full outcome.

use std::collections::BTreeSet;

use knobel_arena::store::{FinishedMatch, MatchWrite, NewMatch, Store};
use knobel_e2e::{Arena, ArenaOptions};
use knobel_engine::{ForfeitReason, Outcome, Seat};
use knobel_proto::v1 as pb;
use tonic::Code;

const GAMES: [&str; 3] = ["schocken", "sjokken", "zokken"];

fn new_match(id: &str, game: &str, seats: &[&str], started_at_ms: i64) -> NewMatch {
    NewMatch {
        id: id.to_owned(),
        game: game.to_owned(),
        preset: format!("{game}-classic"),
        rules_json: "{}".to_owned(),
        seed: 7,
        seat_names: seats.iter().map(|s| s.to_string()).collect(),
        seat_bot_ids: Vec::new(),
        started_at_ms,
        league: None,
    }
}

/// A finished match's outcome that uses every field.
fn outcome(game: &str) -> Outcome {
    let zokken = game == "zokken";
    Outcome {
        placings: vec![1, 3, 2],
        loser: (!zokken).then_some(Seat(1)),
        tokens: if zokken { vec![0; 3] } else { vec![0, 9, 4] },
        halves_lost: if game == "schocken" {
            vec![0, 2, 1]
        } else {
            vec![0; 3]
        },
        chips: if zokken {
            vec![30, -45, 15]
        } else {
            vec![0; 3]
        },
        strikes: vec![0, 3, 1],
        timeouts: vec![0, 2, 0],
        forfeits: vec![None, Some(ForfeitReason::Strikes), None],
    }
}

/// Writes match number `i` as `id`, started at `started_at_ms`: of game `i % 3`
/// (schocken, sjokken, zokken), with bob (even `i`) or cy (odd `i`) in seat 1, and by
/// `i / 3 % 3` finished, aborted or left running.
async fn add(store: &Store, i: usize, id: &str, started_at_ms: i64) {
    let game = GAMES[i % 3];
    let seats = ["ann", ["bob", "cy"][i % 2], "builtin-random-1"];
    let mut writes = vec![MatchWrite::Start(new_match(
        id,
        game,
        &seats,
        started_at_ms,
    ))];
    match i / 3 % 3 {
        0 => writes.push(MatchWrite::Finish(FinishedMatch {
            id: id.to_owned(),
            log_json: "{}".to_owned(),
            outcome: outcome(game),
            finished_at_ms: started_at_ms + 10,
            adjusted: None,
        })),
        1 => writes.push(MatchWrite::Abort(knobel_arena::store::AbortedMatch {
            id: id.to_owned(),
            reason: "a test".to_owned(),
            log_json: None,
            finished_at_ms: started_at_ms + 10,
        })),
        _ => {}
    }
    for result in store.write_matches(&writes).await {
        result.unwrap();
    }
}

async fn list(arena: &Arena, request: pb::ListMatchesRequest) -> pb::ListMatchesResponse {
    arena
        .client()
        .await
        .list_matches(request)
        .await
        .expect("list matches")
        .into_inner()
}

/// Every page of `request`, following the tokens, calling `between` before each next page.
async fn all_pages(
    arena: &Arena,
    request: pb::ListMatchesRequest,
    mut between: impl AsyncFnMut(usize),
) -> Vec<Vec<pb::MatchSummary>> {
    let mut pages = Vec::new();
    let mut token = String::new();
    loop {
        let page = list(
            arena,
            pb::ListMatchesRequest {
                page_token: token,
                ..request.clone()
            },
        )
        .await;
        assert!(page.matches.len() <= request.limit.max(1) as usize);
        pages.push(page.matches);
        if page.next_page_token.is_empty() {
            return pages;
        }
        token = page.next_page_token;
        between(pages.len()).await;
        assert!(pages.len() < 10_000, "paging does not end");
    }
}

fn ids(matches: &[pb::MatchSummary]) -> Vec<String> {
    matches.iter().map(|m| m.match_id.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_while_matches_start_lists_each_existing_match_once() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let store = Store::connect(&arena.database_url).await.unwrap();
    // 40 matches, several of them started in the same millisecond.
    let base = 1_000_000;
    let mut existing = BTreeSet::new();
    for i in 0..40 {
        let id = format!("old-{i:02}");
        add(&store, i, &id, base + (i as i64 / 4) * 100).await;
        existing.insert(id);
    }
    // Between pages: new matches, newer than every listed one; and running old ones end
    // (their place in the list stays).
    let mut added = 0;
    let pages = all_pages(
        &arena,
        pb::ListMatchesRequest {
            limit: 3,
            ..Default::default()
        },
        async |page| {
            for _ in 0..2 {
                let id = format!("new-{added:03}");
                // Two in the same millisecond now and then.
                add(&store, added, &id, base + 1_000 + (added / 3) as i64).await;
                added += 1;
            }
            if let Some(running) = 38usize.checked_sub(page * 3) {
                // Refused if it is not running: that is fine.
                let _ = store
                    .abort_match(&format!("old-{running:02}"), "ended", None, base + 5_000)
                    .await;
            }
        },
    )
    .await;
    assert!(pages.len() >= 14, "{} pages", pages.len());
    assert!(added > 20);
    let listed: Vec<String> = pages.iter().flat_map(|page| ids(page)).collect();
    let unique: BTreeSet<String> = listed.iter().cloned().collect();
    assert_eq!(
        unique.len(),
        listed.len(),
        "a match was listed twice: {listed:?}"
    );
    assert_eq!(
        unique, existing,
        "the pages list exactly the matches that existed when paging began"
    );
    // Newest first, ties by id descending, across page boundaries.
    let order: Vec<(u64, String)> = pages
        .iter()
        .flatten()
        .map(|m| (m.started_unix_ms, m.match_id.clone()))
        .collect();
    assert!(order.windows(2).all(|w| w[0] > w[1]), "{order:?}");

    // The first page again shows the newest matches.
    let first = list(&arena, pb::ListMatchesRequest::default()).await;
    assert!(first.matches[0].match_id.starts_with("new-"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_has_a_default_and_a_cap() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let store = Store::connect(&arena.database_url).await.unwrap();
    let writes: Vec<MatchWrite> = (0..520)
        .map(|i| {
            MatchWrite::Start(new_match(
                &format!("m-{i:04}"),
                "schocken",
                &["ann"],
                10_000 + i,
            ))
        })
        .collect();
    for result in store.write_matches(&writes).await {
        result.unwrap();
    }
    // 0: the default, 100.
    let default = list(&arena, pb::ListMatchesRequest::default()).await;
    assert_eq!(default.matches.len(), 100);
    assert_eq!(default.matches[0].match_id, "m-0519");
    // Over the cap: clamped to 500, and the rest on the next page.
    let capped = list(
        &arena,
        pb::ListMatchesRequest {
            limit: u32::MAX,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(capped.matches.len(), 500);
    assert!(!capped.next_page_token.is_empty());
    let rest = list(
        &arena,
        pb::ListMatchesRequest {
            limit: 501,
            page_token: capped.next_page_token,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(rest.matches.len(), 20);
    assert_eq!(rest.matches[19].match_id, "m-0000");
    assert!(
        rest.next_page_token.is_empty(),
        "the last page has no token"
    );
    // The harness's helper pages through all of them.
    assert_eq!(arena.matches().await.len(), 520);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_combine_and_the_outcome_is_whole() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let store = Store::connect(&arena.database_url).await.unwrap();
    for i in 0..12 {
        add(&store, i, &format!("m-{i:02}"), 50_000 + i as i64).await;
    }
    let request = |game: pb::Game, status: pb::MatchStatus, bot: &str| pb::ListMatchesRequest {
        limit: 2,
        game: game as i32,
        status: status as i32,
        bot_name: bot.to_owned(),
        page_token: String::new(),
    };
    let listed = async |request: pb::ListMatchesRequest| -> Vec<String> {
        all_pages(&arena, request, async |_| {})
            .await
            .iter()
            .flat_map(|page| ids(page))
            .collect()
    };
    use pb::Game as G;
    use pb::MatchStatus as S;
    // See `add`: finished 0..=2 and 9..=11, aborted 3..=5, running 6..=8.
    assert_eq!(
        listed(request(G::Zokken, S::Unspecified, "")).await,
        ["m-11", "m-08", "m-05", "m-02"]
    );
    assert_eq!(
        listed(request(G::Unspecified, S::Finished, "")).await,
        ["m-11", "m-10", "m-09", "m-02", "m-01", "m-00"]
    );
    assert_eq!(
        listed(request(G::Unspecified, S::Unspecified, "bob")).await,
        ["m-10", "m-08", "m-06", "m-04", "m-02", "m-00"]
    );
    assert_eq!(
        listed(request(G::Unspecified, S::Finished, "cy")).await,
        ["m-11", "m-09", "m-01"]
    );
    assert_eq!(
        listed(request(G::Sjokken, S::Aborted, "bob")).await,
        ["m-04"]
    );
    assert_eq!(
        listed(request(G::Unspecified, S::Unspecified, "builtin-random-1"))
            .await
            .len(),
        12
    );
    assert!(
        listed(request(G::Unspecified, S::Unspecified, "Ann"))
            .await
            .is_empty()
    );

    // The full outcome of a finished match of each game.
    let finished = list(
        &arena,
        pb::ListMatchesRequest {
            limit: 10,
            ..request(G::Unspecified, S::Finished, "")
        },
    )
    .await;
    assert_eq!(finished.matches.len(), 6);
    for summary in &finished.matches {
        let game = GAMES[summary.game as usize - 1];
        assert_eq!(
            summary.outcome.as_ref(),
            Some(&pb::Outcome::from(&outcome(game))),
            "{}",
            summary.match_id
        );
        let outcome = summary.outcome.as_ref().unwrap();
        assert_eq!(outcome.strikes, [0, 3, 1]);
        assert_eq!(outcome.timeouts, [0, 2, 0]);
        assert_eq!(outcome.forfeits[1], pb::ForfeitReason::Strikes as i32);
        assert_eq!(summary.seat_names[2], "builtin-random-1");
        assert!(summary.finished_unix_ms.is_some());
    }
    let games: BTreeSet<i32> = finished.matches.iter().map(|m| m.game).collect();
    assert_eq!(games.len(), 3, "a finished match of each game");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_page_tokens_and_names_are_refused() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let mut client = arena.client().await;
    for token in ["3", "not a token", "bTE6eDph", &"A".repeat(200)] {
        let status = client
            .list_matches(pb::ListMatchesRequest {
                page_token: token.to_owned(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{token}");
        assert!(
            status.message().contains("page_token")
                && status.message().contains("pass next_page_token unchanged"),
            "{token}: {}",
            status.message()
        );
    }
    let status = client
        .list_matches(pb::ListMatchesRequest {
            bot_name: "x".repeat(129),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status.message().contains("bot_name is 129 bytes"),
        "{}",
        status.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_page_token_is_refused() {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let arena = Arena::start(ArenaOptions::default()).await;
    let store = Store::connect(&arena.database_url).await.unwrap();
    let writes: Vec<MatchWrite> = (0..3)
        .map(|i| MatchWrite::Start(new_match(&format!("t-{i}"), "zokken", &["ann"], 5_000 + i)))
        .collect();
    for result in store.write_matches(&writes).await {
        result.unwrap();
    }
    let first = list(
        &arena,
        pb::ListMatchesRequest {
            limit: 1,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(ids(&first.matches), ["t-2"]);
    // The token the arena gave works; one changed in any part (a cursor that decodes but
    // that no arena gave: another start time, another match id, another MAC) is refused.
    let given = String::from_utf8(URL_SAFE_NO_PAD.decode(&first.next_page_token).unwrap()).unwrap();
    let parts: Vec<&str> = given.splitn(4, ':').collect();
    assert_eq!(
        (parts[0], parts[1], parts[3]),
        ("m2", "5002", "t-2"),
        "{given}"
    );
    let mac = parts[2];
    let flipped: String = mac
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i == 0 {
                if c == '0' { '1' } else { '0' }
            } else {
                c
            }
        })
        .collect();
    for tampered in [
        format!("m2:5001:{mac}:t-2"),
        format!("m2:5002:{mac}:t-1"),
        format!("m2:5002:{flipped}:t-2"),
    ] {
        let status = arena
            .client()
            .await
            .list_matches(pb::ListMatchesRequest {
                limit: 1,
                page_token: URL_SAFE_NO_PAD.encode(&tampered),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{tampered}");
        assert!(
            status.message().contains("page_token"),
            "{tampered}: {}",
            status.message()
        );
    }
    let next = list(
        &arena,
        pb::ListMatchesRequest {
            limit: 1,
            page_token: first.next_page_token,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(ids(&next.matches), ["t-1"]);
}
