//! The `knobel` command line against a real arena process: `match show` for any stored
//! match, logs without colour codes in files.

use std::time::Duration;

use knobel_e2e::{Arena, ArenaOptions, binaries, finish, poll_every, poll_until};

/// Runs `knobel ARGS`; its exit status, stdout and stderr.
async fn knobel(args: &[&str]) -> (bool, String, String) {
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(binaries().join("knobel"))
            .args(args)
            .env_remove("KNOBEL_ADMIN_TOKEN")
            .env_remove("KNOBEL_ARENA")
            .output(),
    )
    .await
    .expect("knobel did not finish within 120 s")
    .expect("cannot run knobel");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_show_tells_a_match_older_than_the_newest_hundred() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("arena.log");
    let arena = Arena::start_with_env(
        ArenaOptions {
            log_file: Some(log.clone()),
            args: ["--practice", "--practice-wait-ms", "0", "--seats", "2"]
                .into_iter()
                .chain(["--zokken-rounds", "1"])
                .map(String::from)
                .collect(),
        },
        &[("RUST_LOG", "info")],
    )
    .await;
    let token = arena.add_bot("veteran").await;
    let bot = arena.bot(&token, &["--games", "zokken", "--matches", "103"]);
    let (status, lines) = finish(bot, Duration::from_secs(600)).await;
    assert!(status.success(), "{lines:?}");
    let matches = arena.matches().await;
    assert!(matches.len() > 100, "{} matches", matches.len());
    let oldest = &matches.last().expect("a match").match_id;
    let (ok, out, err) = knobel(&["match", "show", oldest, "--arena", &arena.url]).await;
    assert!(ok, "knobel match show {oldest} failed: {err}");
    assert!(
        out.contains("Seats: veteran (seat 0), builtin-heuristic-1 (seat 1)"),
        "{out}"
    );

    // The arena's log went to a file: no colour codes in it.
    let text = std::fs::read_to_string(&log).expect("the arena's log");
    assert!(text.contains("match started"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "colour codes in a log file: {:?}",
        text.lines().next()
    );
    assert!(arena.stop().await.success());
}

/// What every client says when pointed at a port that answers HTTP but not gRPC.
const WRONG_PORT: &str = "this address answered as a web page (HTTP 404), not as the arena's \
                          gRPC port: see the 'knobel arena listening on' line";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_pointed_at_the_web_or_metrics_port_are_told_so() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let token = arena.add_bot("lost").await;
    let web = arena.web_url.trim_end_matches('/').to_owned();
    let metrics = arena.metrics_url.trim_end_matches("/metrics").to_owned();
    for address in [&web, &metrics] {
        // knobel-bot gives up at once (retrying cannot help) and says why.
        let output = tokio::time::timeout(
            Duration::from_secs(60),
            tokio::process::Command::new(binaries().join("knobel-bot"))
                .args(["--server", address, "--token", &token])
                .env("RUST_LOG", "warn")
                .output(),
        )
        .await
        .expect("knobel-bot kept retrying a port that is not gRPC")
        .expect("run knobel-bot");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert!(stderr.contains(WRONG_PORT), "{address}: {stderr}");
        // So do the CLI's gRPC clients.
        for args in [
            vec!["health", "--server", address],
            vec!["health", "--arena", address],
            vec!["league", "status", "demo", "--arena", address],
            vec![
                "match",
                "show",
                "01a23d276a4645679e8a61ec5d40",
                "--arena",
                address,
            ],
        ] {
            let (ok, _, err) = knobel(&args).await;
            assert!(!ok, "{args:?}");
            assert!(err.contains(WRONG_PORT), "{args:?}: {err}");
        }
    }
    assert!(arena.stop().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_waits_is_told_why_in_its_log() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    // No practice mode: a lone bot waits for three more.
    let arena = Arena::start(ArenaOptions::default()).await;
    let token = arena.add_bot("lonely").await;
    let mut bot = arena
        .bot_command(&token, &["--games", "sjokken"])
        .env("RUST_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start knobel-bot");
    let mut log = BufReader::new(bot.stderr.take().expect("piped")).lines();
    let told = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = log.next_line().await.expect("read the bot's log") {
            if line.contains("still waiting for a match") {
                return line;
            }
        }
        panic!("the bot's log ended without saying why it waits");
    })
    .await
    .expect("the bot was not told within 60 s why it waits");
    assert!(
        told.contains(
            "the lobby seats 4 bots per match and 1 bot waits for preset sjokken; practice mode is off (knobel serve --practice seats built-in players after a short wait)"
        ),
        "{told}"
    );
    let _ = bot.kill().await;
    assert!(arena.stop().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bot_add_writes_only_to_an_existing_store_or_through_the_arena() {
    // In a folder without a store, `bot add` refuses to make one and says where it looked.
    let dir = tempfile::tempdir().unwrap();
    let output = tokio::process::Command::new(binaries().join("knobel"))
        .current_dir(dir.path())
        .args(["bot", "add", "stray"])
        .env_remove("DATABASE_URL")
        .env_remove("KNOBEL_ADMIN_TOKEN")
        .output()
        .await
        .expect("run knobel bot add");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("there is no store at knobel.db"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--arena ADDRESS --admin-token TOKEN"),
        "{stderr}"
    );
    assert!(!dir.path().join("knobel.db").exists());
    // --create makes one, and says which.
    let output = tokio::process::Command::new(binaries().join("knobel"))
        .current_dir(dir.path())
        .args(["bot", "add", "stray", "--create"])
        .env_remove("DATABASE_URL")
        .output()
        .await
        .expect("run knobel bot add --create");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.starts_with("registered bot stray in the store sqlite://knobel.db;"),
        "{stdout}"
    );

    // Through a running arena's Admin service: the arena knows the bot at once.
    let admin_token = "an-admin-token-of-some-length";
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", admin_token)],
    )
    .await;
    let (ok, out, err) = knobel(&[
        "bot",
        "add",
        "remote",
        "--arena",
        &arena.url,
        "--admin-token",
        admin_token,
    ])
    .await;
    assert!(ok, "{err}");
    assert!(
        out.starts_with(&format!(
            "registered bot remote with the arena at {};",
            arena.url
        )),
        "{out}"
    );
    let (ok, listed, err) = knobel(&["bot", "list", "--database-url", &arena.database_url]).await;
    assert!(ok, "{err}");
    assert!(listed.contains("remote"), "{listed}");
    assert!(arena.stop().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_expert_answers_its_first_decisions_within_a_short_deadline() {
    // No time bank: a decision later than 1 s is a timeout. Building the expert's tables on
    // its first decision takes several seconds in a debug build; prepared before its Hello,
    // every answer is in time.
    let options = ArenaOptions {
        args: [
            "--practice",
            "--practice-wait-ms",
            "0",
            "--decision-ms",
            "1000",
        ]
        .into_iter()
        .chain(["--time-bank-ms", "0"])
        .map(String::from)
        .collect(),
        log_file: None,
    };
    let arena = Arena::start(options).await;
    let token = arena.add_bot("sage").await;
    let bot = arena.bot(
        &token,
        &[
            "--strategy",
            "expert",
            "--games",
            "schocken",
            "--matches",
            "1",
        ],
    );
    let (status, lines) = finish(bot, Duration::from_secs(300)).await;
    assert!(status.success(), "{lines:?}");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains(" strikes 0 forfeited false errors []"),
        "{}",
        lines[0]
    );
    assert!(arena.stop().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn league_commands_list_keep_the_arena_flag_and_estimate_the_time_left() {
    let admin_token = "an-admin-token-of-some-length";
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", admin_token)],
    )
    .await;
    let url = arena.url.as_str();
    let (ok, out, err) = knobel(&["league", "list", "--arena", url]).await;
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!(
            "no leagues yet: create one with `knobel league create FILE --arena {url}`"
        )),
        "{out}"
    );
    let tokens = [arena.add_bot("ada").await, arena.add_bot("bert").await];
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("duo.toml");
    std::fs::write(
        &file,
        "name = \"duo\"\nseed = 7\nbots = [\"ada\", \"bert\"]\nrepetitions = 300\n\n\
         [games.schocken]\ntable_size = 2\n",
    )
    .unwrap();
    let file = file.to_string_lossy().into_owned();
    let admin = ["--arena", url, "--admin-token", admin_token];
    let (ok, out, err) = knobel(&[&["league", "create", &file][..], &admin].concat()).await;
    assert!(ok, "{err}");
    // The hint keeps the address the user gave (not the token).
    assert!(
        out.contains(&format!(
            "start it with `knobel league start duo --arena {url}`"
        )),
        "{out}"
    );
    let (ok, out, err) = knobel(&["league", "list", "--arena", url]).await;
    assert!(ok, "{err}");
    assert!(
        out.starts_with("duo [") && out.contains("(created)"),
        "{out}"
    );
    let (ok, _, err) = knobel(&["league", "status", "nope", "--arena", url]).await;
    assert!(!ok);
    assert!(err.contains("`knobel league list`"), "{err}");

    let (ok, _, err) = knobel(&[&["league", "start", "duo"][..], &admin].concat()).await;
    assert!(ok, "{err}");
    // "Waiting for" says of each bot whether it is offline or busy (connected, but playing
    // or waiting for something else: here another game).
    let status_shows = |what: &'static str| async move {
        poll_every(
            Duration::from_millis(200),
            Duration::from_secs(60),
            &format!("league status shows {what:?}"),
            || async {
                let (ok, out, err) = knobel(&["league", "status", "duo", "--arena", url]).await;
                assert!(ok, "{err}");
                if out.contains(what) { Ok(()) } else { Err(out) }
            },
        )
        .await
    };
    status_shows("waiting for ada (offline), bert (offline)").await;
    let mut elsewhere = arena.bot(&tokens[0], &["--games", "sjokken"]);
    status_shows("waiting for ada (busy), bert (offline)").await;
    let _ = elsewhere.kill().await;
    let _bots: Vec<_> = tokens
        .iter()
        .map(|token| arena.bot(token, &["--games", "schocken"]))
        .collect();
    // Once matches have finished, status estimates the time left from their pace.
    poll_every(
        Duration::from_millis(200),
        Duration::from_secs(120),
        "league status shows the time left",
        || async {
            let (ok, out, err) = knobel(&["league", "status", "duo", "--arena", url]).await;
            assert!(ok, "{err}");
            if out.contains(" s left") {
                return Ok(());
            }
            assert!(!out.contains("(finished)"), "no time left shown: {out}");
            Err(out)
        },
    )
    .await;
    never_offline_while_connected(&arena, "duo").await;
    assert!(arena.stop().await.success());
}

/// While league `name` plays and each of its bots keeps a stream open, a bot its next
/// matches wait for is never shown offline, not even while its last match's result is
/// being recorded (200 looks, 10 ms apart; the league must still be running).
async fn never_offline_while_connected(arena: &Arena, name: &str) {
    let mut client = arena.client().await;
    let mut waited_for = 0;
    for _ in 0..200 {
        let request = knobel_proto::v1::GetStandingsRequest {
            league: name.to_owned(),
        };
        let standings = client.get_standings(request).await.unwrap().into_inner();
        let league = standings.league.expect("the league");
        assert_eq!(
            league.status,
            knobel_proto::v1::LeagueStatus::Running as i32
        );
        for bot in &league.waiting_for {
            assert!(
                league.waiting_for_connected.contains(bot),
                "{bot} is shown offline, but its stream is open: {league:?}"
            );
            waited_for += 1;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        waited_for > 0,
        "the league never waited for a bot in 200 looks: nothing was checked"
    );
}

/// The largest league the arena takes (200,000 matches: five bots at Zokken tables of 2, in
/// 10,000 repetitions) is created through `knobel league create` on an arena with its
/// default store timeout, and the command says first that it takes a moment. A league over
/// the limit is refused with the limit named, and nothing of it is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_largest_league_is_created_and_a_larger_one_is_refused() {
    let admin_token = "an-admin-token-of-some-length";
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", admin_token)],
    )
    .await;
    for name in ["ann", "ben", "cat", "dan", "eve", "fay"] {
        arena.add_bot(name).await;
    }
    let dir = tempfile::tempdir().unwrap();
    let league_file = |name: &str, bots: &str| {
        let file = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &file,
            format!(
                "name = \"{name}\"\nbots = {bots}\nrepetitions = 10000\n\n\
                 [games.zokken]\ntable_size = 2\n"
            ),
        )
        .unwrap();
        file.to_string_lossy().into_owned()
    };
    let admin = ["--arena", arena.url.as_str(), "--admin-token", admin_token];

    let too_big = league_file("too-big", "\"all\"");
    let (ok, out, err) = knobel(&[&["league", "create", &too_big][..], &admin].concat()).await;
    assert!(!ok, "{out}");
    assert!(
        err.contains("the league would schedule 300000 matches (at most 200000)"),
        "{err}"
    );
    assert!(!err.contains("creating league"), "{err}");

    let big = league_file("big", r#"["ann", "ben", "cat", "dan", "eve"]"#);
    let (ok, out, err) = knobel(&[&["league", "create", &big][..], &admin].concat()).await;
    assert!(ok, "{err}");
    assert!(
        err.contains("creating league big: 200,000 matches, this takes a few seconds..."),
        "{err}"
    );
    assert!(
        out.contains("created league big with 200000 matches among 5 bots"),
        "{out}"
    );
    let (ok, out, err) = knobel(&["league", "list", "--arena", &arena.url]).await;
    assert!(ok, "{err}");
    assert!(
        out.starts_with("big [") && !out.contains("too-big"),
        "{out}"
    );
    assert!(arena.stop().await.success());
}

/// A `stop = "settled"` league of two bots far apart: `league standings` shows the adjusted
/// score beside the raw one, what the game is ordered by, and the neighbours with their
/// difference, confidence sequence, verdict and margin; `league status` shows the stop rule
/// and the budget; the metrics count the pair as separated and the game as settled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn league_standings_show_the_neighbours_verdicts_and_status_the_stop_rule() {
    let admin_token = "an-admin-token-of-some-length";
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", admin_token)],
    )
    .await;
    let (standings, bots) = arena
        .play_settled_duel(admin_token, Duration::from_secs(300))
        .await;
    drop(bots);
    let info = standings.league.expect("the league");
    assert_eq!(info.status, knobel_proto::v1::LeagueStatus::Finished as i32);
    assert!(info.finished_matches < 200, "{info:?}");
    let url = arena.url.as_str();

    let (ok, out, err) = knobel(&["league", "standings", "duel", "--arena", url]).await;
    assert!(ok, "{err}");
    let heading = format!(
        "zokken ({} matches, ordered by adjusted scores)",
        info.finished_matches
    );
    assert!(out.contains(&heading), "{out}");
    assert!(out.contains("  adjusted [95% CI]"), "{out}");
    let ace = out
        .lines()
        .find(|l| l.starts_with("1    ace "))
        .unwrap_or_else(|| panic!("ace is first: {out}"));
    // The raw chips and the adjusted ones, both with intervals.
    assert_eq!(ace.matches(" [").count(), 2, "{ace}");
    assert!(
        out.contains("in chips per 100 rounds; margin ±10.0; settled)"),
        "{out}"
    );
    let pair = out
        .lines()
        .find(|l| l.trim_start().starts_with("ace "))
        .unwrap_or_else(|| panic!("no neighbours line: {out}"));
    let words: Vec<&str> = pair.split_whitespace().collect();
    assert_eq!(words[..2], ["ace", "fumble"], "{pair}");
    let sets: u32 = words[2].parse().unwrap();
    assert!(sets >= 16 && sets * 2 == info.finished_matches, "{pair}");
    assert!(words[3].starts_with('+'), "ace scored more: {pair}");
    assert!(
        words[4].starts_with("[+"),
        "the sequence is above zero: {pair}"
    );
    assert_eq!(words.last(), Some(&"separated"), "{pair}");

    let (ok, out, err) = knobel(&["league", "status", "duel", "--arena", url]).await;
    assert!(ok, "{err}");
    assert!(
        out.contains(
            "  stop: settled (when every two neighbours are separated or equivalent), budget 200 matches"
        ),
        "{out}"
    );

    // The metrics say so too, once their refresh (every second) has seen the league end.
    poll_until(
        Duration::from_secs(60),
        "the metrics say the league is settled",
        || async {
            let text = knobel_e2e::scrape(&arena.metrics_url).await;
            let series = |name: &str, labels: &str| {
                knobel_e2e::metric(
                    &text,
                    &format!("{name}{{game=\"zokken\",league=\"duel\"{labels}}}"),
                )
            };
            let separated = series("knobel_league_neighbours", ",verdict=\"separated\"");
            if separated == 1.0 && series("knobel_league_settled", "") == 1.0 {
                assert_eq!(series("knobel_league_neighbours", ",verdict=\"open\""), 0.0);
                assert_eq!(
                    series("knobel_league_neighbours", ",verdict=\"equivalent\""),
                    0.0
                );
                return Ok(());
            }
            Err(text)
        },
    )
    .await;
    assert!(arena.stop().await.success());
}
