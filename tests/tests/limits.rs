//! Limits at their documented edge, end to end on real arena processes (issue 26):
//!
//! - two arenas on one host, started the documented way (docs/operations.md, "Several
//!   arenas on one host"): gRPC and metrics ports given, the web viewer left at its default,
//!   which one of them (or neither, if something else holds it) gets;
//! - the league file's size limit (64 KiB): a file of exactly 65,536 bytes is taken, one
//!   byte more and a 65 KiB file get INVALID_ARGUMENT naming the limit, not the transport's
//!   message limit;
//! - a 10,000-character league name, read by a grpcio client (whose metadata limit is
//!   8 KiB): INVALID_ARGUMENT with a message of under 200 bytes.

use std::net::{Ipv4Addr, TcpListener};
use std::process::Stdio;
use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, binaries, http_get, python_with_stubs, workspace};
use knobel_proto::v1 as pb;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const ADMIN_TOKEN: &str = "limits-admin-token-0123456789abcdef";

/// A `knobel serve` started as docs/operations.md says for a second arena on a host: its own
/// database, gRPC and metrics ports, and the web viewer at its default.
async fn serve_with_default_web(dir: &std::path::Path) -> (Child, Vec<String>) {
    let mut child = Command::new(binaries().join("knobel"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(["--metrics-listen", "127.0.0.1:0"])
        .arg("--database-url")
        .arg(format!("sqlite://{}", dir.join("arena.db").display()))
        .env_remove("KNOBEL_WEB_LISTEN")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start knobel serve");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|l: &String| l.starts_with("knobel web on "))
    {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("the arena did not start within 60 s")
            .expect("read the arena's output");
        match line {
            Some(line) => seen.push(line),
            None => {
                let mut stderr = String::new();
                let mut err = child.stderr.take().expect("piped stderr");
                tokio::io::AsyncReadExt::read_to_string(&mut err, &mut stderr)
                    .await
                    .ok();
                panic!("the arena exited before listening: {seen:?}\n{stderr}");
            }
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, seen)
}

fn address_after<'a>(lines: &'a [String], prefix: &str) -> &'a str {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in {lines:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_arenas_run_on_one_host_with_the_web_viewer_at_its_default() {
    // Hold the web viewer's usual port, as a first arena (or anything else) would; if
    // something holds it already, that does the same.
    let _holder = TcpListener::bind((Ipv4Addr::LOCALHOST, 8080));
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut a, lines_a) = serve_with_default_web(dir_a.path()).await;
    let (mut b, lines_b) = serve_with_default_web(dir_b.path()).await;
    let web_a = address_after(&lines_a, "knobel web on ");
    let web_b = address_after(&lines_b, "knobel web on ");
    assert_ne!(web_a, web_b);
    for (web, lines) in [(web_a, &lines_a), (web_b, &lines_b)] {
        assert!(!web.contains(":8080/"), "{lines:?}");
        let (status, body) = http_get(web).await;
        assert_eq!(status, 200, "{web}: {body}");
        let grpc = address_after(lines, "knobel arena listening on ");
        let grpc = format!("http://{grpc}");
        let (healthy, out, err) =
            knobel(&["health", "--arena", &grpc, "--timeout-ms", "30000"]).await;
        assert!(healthy, "{grpc}: {out}{err}");
    }
    for child in [&mut a, &mut b] {
        assert!(child.try_wait().unwrap().is_none(), "an arena exited");
        child.start_kill().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_given_and_taken_is_refused_with_what_to_do() {
    let holder = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let taken = holder.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("arena.db").display());
    for flag in ["--web-listen", "--metrics-listen", "--listen"] {
        let mut args = vec!["serve", "--database-url", &database];
        for other in ["--web-listen", "--metrics-listen", "--listen"] {
            args.extend([other, if other == flag { &taken } else { "127.0.0.1:0" }]);
        }
        let (ok, out, err) = knobel(&args).await;
        assert!(!ok, "{flag} {taken}: {out}");
        assert!(
            err.contains(&format!("on {taken}"))
                && err.contains("the address is taken, perhaps by another arena")
                && err.contains(&format!("give {flag} 127.0.0.1:0")),
            "{flag}: {err}"
        );
    }
}

/// `knobel` with `args`: whether it succeeded, its stdout and its stderr.
async fn knobel(args: &[&str]) -> (bool, String, String) {
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(binaries().join("knobel"))
            .args(args)
            .env_remove("KNOBEL_ARENA")
            .env_remove("KNOBEL_WEB_LISTEN")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("knobel did not end within 60 s")
    .expect("cannot run knobel");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A league file of exactly `bytes` bytes: a valid league, padded with a comment.
fn league_file(name: &str, bytes: usize) -> String {
    let league = format!("name = \"{name}\"\nbots = [\"ann\", \"ben\"]\n[games.zokken]\n");
    let padding = bytes - league.len() - 3;
    let file = format!("{league}# {}\n", "x".repeat(padding));
    assert_eq!(file.len(), bytes);
    file
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_league_file_limit_holds_at_its_edge() {
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)],
    )
    .await;
    let mut admin = arena.admin(ADMIN_TOKEN).await;
    for name in ["ann", "ben"] {
        admin
            .add_bot(pb::AddBotRequest { name: name.into() })
            .await
            .unwrap();
    }
    // 64 KiB is the documented limit (docs/leagues.md, CreateLeagueRequest): taken.
    admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: league_file("edge", 65_536),
        })
        .await
        .expect("a league file of exactly 64 KiB is taken");
    for bytes in [65_537, 65 * 1024] {
        let refused = admin
            .create_league(pb::CreateLeagueRequest {
                config_toml: league_file("over", bytes),
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
        assert!(
            refused.message().contains(&format!("has {bytes} bytes"))
                && refused.message().contains("at most 65536 bytes (64 KiB)"),
            "{refused:?}"
        );
    }
    assert!(arena.stop().await.success());
}

/// What a grpcio client reads for each call with a 10,000-character league name: one line
/// per call, `<call> <code> <bytes of the message> <message>`.
const GRPCIO_CLIENT: &str = r#"
import sys
sys.path.insert(0, sys.argv[1])
import grpc
from knobel.v1 import arena_pb2 as pb, arena_pb2_grpc as rpc
channel = grpc.insecure_channel(sys.argv[2])
auth = [("authorization", "Bearer " + sys.argv[3])]
name = "n" * 10000
toml = 'name = "%s"\nbots = ["ann", "ben"]\n[games.zokken]\n' % name
calls = [
    ("create", lambda: rpc.AdminStub(channel).CreateLeague(
        pb.CreateLeagueRequest(config_toml=toml), metadata=auth)),
    ("start", lambda: rpc.AdminStub(channel).StartLeague(
        pb.LeagueRequest(name=name), metadata=auth)),
    ("standings", lambda: rpc.ArenaStub(channel).GetStandings(
        pb.GetStandingsRequest(league=name))),
]
for call, run in calls:
    try:
        run()
        print(call, "OK", 0, "")
    except grpc.RpcError as e:
        details = e.details() or ""
        print(call, e.code().name, len(details.encode()), details)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_name_gets_a_short_answer_that_a_grpcio_client_reads() {
    let python = python_with_stubs().await;
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)],
    )
    .await;
    let output = Command::new(python)
        .arg("-c")
        .arg(GRPCIO_CLIENT)
        .arg(workspace().join("bots/python/gen"))
        .arg(arena.url.trim_start_matches("http://"))
        .arg(ADMIN_TOKEN)
        .output()
        .await
        .expect("run the grpcio client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<(&str, &str, usize, &str)> = stdout
        .lines()
        .map(|line| {
            let mut parts = line.splitn(4, ' ');
            let mut next = || parts.next().unwrap_or_default();
            (next(), next(), next().parse().unwrap(), next())
        })
        .collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    for (call, code, bytes, message) in lines {
        let expected = if call == "create" {
            "INVALID_ARGUMENT"
        } else {
            "NOT_FOUND"
        };
        assert_eq!(code, expected, "{call}: {message}");
        assert!(bytes < 200, "{call}: {bytes} bytes: {message}");
        assert!(
            message.contains("nnnn") && message.contains("... (10000 bytes)"),
            "{call}: the message names a bounded prefix of the name and its length: {message}"
        );
    }
    assert!(arena.stop().await.success());
}
