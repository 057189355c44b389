//! Commit, withhold, reveal, verify (docs/fair-play.md), end to end: a league of real gRPC
//! bots on a real arena process with the default, independent dice.
//!
//! - At creation the league shows a commitment and no secret; `knobel league verify` says it
//!   cannot verify before the secret is revealed.
//! - While it runs (paused, to hold it there), a finished match's full log is refused by
//!   GetMatchLog, StreamMatchLog and the web's `log.json`, and its public record (no seed) is
//!   served by GetMatchRecord.
//! - Once it has finished: the secret is published and matches the commitment;
//!   `knobel league verify` (against the arena, and offline from `knobel league export`'s
//!   archive) passes; the stranger's Python implementation recomputes every seed and die
//!   from the archive; an archive with one die altered fails, naming the match.
//! - Bad league files: `dice = "dublicate"` and a `seed` that is not a number are refused
//!   naming the field and the line.

use std::time::Duration;

use knobel_bots::{BotConfig, Game, Token, run_bot, strategy};
use knobel_e2e::{Arena, ArenaOptions, binaries, http_get, poll_until, workspace};
use knobel_proto::v1 as pb;

const ADMIN_TOKEN: &str = "league-verify-admin-token-0123456789";
const BOTS: [&str; 3] = ["ann", "ben", "cat"];
/// 1 Schocken table x 6 seat orders, 3 Zokken tables x 2: 12 matches.
const LEAGUE: &str = "name = \"fair\"\nbots = [\"ann\", \"ben\", \"cat\"]\nconcurrency = 2\n\
    [games.schocken]\ntable_size = 3\n[games.zokken]\nsettings = { rounds = 3 }\n";
/// How long any awaited condition may take (generous: the machine is shared).
const PATIENCE: Duration = Duration::from_secs(240);

/// `knobel` with `args`: its exit status, stdout and stderr.
async fn knobel(args: &[&str]) -> (bool, String, String) {
    let output = tokio::process::Command::new(binaries().join("knobel"))
        .args(args)
        .env_remove("KNOBEL_ARENA")
        .output()
        .await
        .expect("cannot run knobel");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

async fn league_info(arena: &Arena) -> pb::LeagueInfo {
    arena
        .client()
        .await
        .get_standings(pb::GetStandingsRequest {
            league: "fair".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .league
        .unwrap()
}

/// Waits until `done` holds for the league (`what`), within [`PATIENCE`].
async fn wait_for(arena: &Arena, what: &str, done: impl Fn(&pb::LeagueInfo) -> bool) {
    poll_until(PATIENCE, what, || async {
        let info = league_info(arena).await;
        if done(&info) {
            Ok(())
        } else {
            Err(format!("still {info:?}"))
        }
    })
    .await;
}

async fn admin_call(arena: &Arena, name: &str, what: &str) {
    let mut admin = arena.admin(ADMIN_TOKEN).await;
    let request = pb::LeagueRequest { name: name.into() };
    match what {
        "start" => admin.start_league(request).await.map(drop),
        _ => admin.pause_league(request).await.map(drop),
    }
    .unwrap_or_else(|e| panic!("{what} {name}: {e}"));
}

/// A finished match's records while its league has not ended: the full log is refused
/// everywhere, the public record is served without a seed.
async fn check_withheld(arena: &Arena) {
    let finished = arena
        .matches()
        .await
        .into_iter()
        .find(|m| m.status == pb::MatchStatus::Finished as i32)
        .expect("a finished match");
    let id = finished.match_id;
    let mut client = arena.client().await;
    let request = || pb::GetMatchLogRequest {
        match_id: id.clone(),
    };
    let refused = client.get_match_log(request()).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert!(
        refused
            .message()
            .contains("league \"fair\", which has not ended"),
        "{refused:?}"
    );
    let streamed = client.stream_match_log(request()).await.unwrap_err();
    assert_eq!(streamed.code(), tonic::Code::FailedPrecondition);
    let (status, body) = http_get(&format!("{}matches/{id}/log.json", arena.web_url)).await;
    assert_eq!(status, 409, "{body}");
    assert!(!body.contains("\"seed\""), "{body}");
    let record = client
        .get_match_record(request())
        .await
        .unwrap()
        .into_inner();
    assert!(!record.full_log_served);
    let json: serde_json::Value = serde_json::from_str(&record.record_json).unwrap();
    assert!(
        json.get("seed").is_none() && json.get("entries").is_none(),
        "{json}"
    );
    assert!(!json["events"].as_array().unwrap().is_empty());
    // The archive is not served either.
    let archive = client
        .export_league(pb::ExportLeagueRequest {
            league: "fair".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(archive.code(), tonic::Code::FailedPrecondition);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_commits_withholds_reveals_and_verifies() {
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)],
    )
    .await;
    let mut admin = arena.admin(ADMIN_TOKEN).await;
    let mut bots = tokio::task::JoinSet::new();
    for name in BOTS {
        let token = admin
            .add_bot(pb::AddBotRequest { name: name.into() })
            .await
            .unwrap()
            .into_inner()
            .token;
        let config = BotConfig::new(arena.url.clone(), Token::new(token), name, Game::ALL);
        bots.spawn(run_bot(config, strategy("heuristic", 1).unwrap()));
    }
    // Bad input: named, with its line.
    for (file, expected) in [
        (
            LEAGUE.replace("concurrency", "dice = \"dublicate\"\nconcurrency"),
            "line 3: dice: unknown dice \"dublicate\"",
        ),
        (
            LEAGUE.replace("concurrency", "seed = \"abc\"\nconcurrency"),
            "line 3: seed: \"abc\" is not a seed",
        ),
    ] {
        let error = admin
            .create_league(pb::CreateLeagueRequest { config_toml: file })
            .await
            .unwrap_err();
        assert_eq!(error.code(), tonic::Code::InvalidArgument);
        assert!(error.message().contains(expected), "{error:?}");
    }
    admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: LEAGUE.into(),
        })
        .await
        .unwrap();
    let created = league_info(&arena).await;
    assert_eq!(created.dice, "independent");
    assert!(!created.public_dice);
    assert_eq!(created.dice_commitment.len(), 64);
    assert!(created.dice_secret.is_empty(), "no secret before the end");
    let (ok, _, stderr) = knobel(&["league", "verify", "fair", "--arena", &arena.url]).await;
    assert!(!ok);
    assert!(
        stderr.contains("cannot verify league \"fair\" before its dice secret is revealed"),
        "{stderr}"
    );

    admin_call(&arena, "fair", "start").await;
    wait_for(&arena, "a first result is in", |l| l.finished_matches >= 1).await;
    admin_call(&arena, "fair", "pause").await;
    check_withheld(&arena).await;
    admin_call(&arena, "fair", "start").await;
    wait_for(&arena, "the league has ended", |l| {
        l.status == pb::LeagueStatus::Finished as i32
    })
    .await;
    bots.abort_all();

    let ended = league_info(&arena).await;
    assert_eq!(ended.dice_commitment, created.dice_commitment);
    assert_eq!(ended.dice_secret.len(), 64, "the secret is revealed");
    let (ok, stdout, stderr) = knobel(&["league", "verify", "fair", "--arena", &arena.url]).await;
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("12 scheduled matches") && stdout.contains("12 logs replayed"),
        "{stdout}"
    );
    let (ok, status, _) = knobel(&["league", "status", "fair", "--arena", &arena.url]).await;
    assert!(ok && status.contains(&ended.dice_secret), "{status}");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fair.knobel");
    let file = file.to_str().unwrap();
    let (ok, _, stderr) = knobel(&[
        "league", "export", "fair", "--out", file, "--arena", &arena.url,
    ])
    .await;
    assert!(ok, "{stderr}");
    let (ok, stdout, stderr) = knobel(&["league", "verify", "--archive", file]).await;
    assert!(
        ok && stdout.contains("12 logs replayed"),
        "{stdout}{stderr}"
    );
    let stranger = std::process::Command::new("python3")
        .arg(workspace().join("tests/stranger/recompute_league.py"))
        .arg(file)
        .output()
        .expect("python3 runs the stranger's script");
    let said = String::from_utf8_lossy(&stranger.stdout);
    assert!(
        stranger.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&stranger.stderr)
    );
    assert!(said.contains("12 match seeds"), "{said}");

    // One die of one archived log altered: named by its match.
    let text = std::fs::read_to_string(file).unwrap();
    let (line, altered) = alter_one_die(&text);
    let tampered = dir.path().join("tampered.knobel");
    std::fs::write(&tampered, altered).unwrap();
    let (ok, _, stderr) =
        knobel(&["league", "verify", "--archive", tampered.to_str().unwrap()]).await;
    assert!(!ok);
    let id = line["match_id"].as_str().unwrap();
    assert!(
        stderr.contains(&format!("match {id} (ordinal {})", line["ordinal"])),
        "{stderr}"
    );
    arena.stop().await;
}

/// The archive `text` with the first die of the first throw of its first match line
/// changed: that match line (as it was) and the new text.
fn alter_one_die(text: &str) -> (serde_json::Value, String) {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let original: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    let mut line = original.clone();
    let throw = line["log"]["entries"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|e| e["kind"] == "throw" && e["rolled"].as_array().is_some_and(|r| r.len() == 3))
        .unwrap();
    let die = throw["dice"][0].as_u64().unwrap();
    throw["dice"][0] = serde_json::json!(die % 6 + 1);
    lines[1] = line.to_string();
    (original, lines.join("\n") + "\n")
}
