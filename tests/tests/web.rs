//! The web viewer end to end, in a real browser: an arena process (`knobel serve`, web
//! viewer on port 0), three built-in bots as real gRPC clients (one named
//! `<script>alert(1)</script>`, the most hostile name the name rule allows, and one that
//! answers late so that matches run long enough to be seen running), a league, and a
//! headless Chromium driven over WebDriver (chromedriver on a free port).
//!
//! Checked: the standings page shows the ranking and the ratings GetStandings gives; it
//! updates by itself (server-sent events) when a match finishes; a running match's page
//! shows no die; a finished match's page steps through every throw of its log with the
//! arrow keys and links to that very log; bad ids and bad query parameters get 404 and 400
//! pages naming the value; the hostile name shows as text; and axe-core (vendored,
//! `tests/vendor/axe.min.js`) finds no critical violation on any page. Screenshots of
//! every page go to `$CARGO_TARGET_DIR/web-screenshots/` (or `target/web-screenshots/`).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use knobel_bots::{BearerAuth, Bot, BotConfig, Game, Misbehave, Token, strategy};
use knobel_e2e::{Arena, ArenaOptions, http_get, workspace};
use knobel_engine::{LogEntry, MatchLog};
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use knobel_proto::v1::arena_client::ArenaClient;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// The Admin client, authenticated.
type Admin = AdminClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, BearerAuth>,
>;

/// The most hostile name the name rule allows: markup, no spaces.
const HOSTILE: &str = "<script>alert(1)</script>";

/// Bots: name, strategy, answer delay (ms; 0 answers at once).
const BOTS: [(&str, &str, u64); 3] = [
    ("ace", "heuristic", 0),
    (HOSTILE, "heuristic-60", 0),
    ("slowpoke", "heuristic-80", 20),
];

const ADMIN_TOKEN: &str = "web-test-admin-token-0123456789";

/// How long any awaited condition may take (generous: the machine is shared).
const PATIENCE: Duration = Duration::from_secs(240);

fn league_file() -> String {
    format!(
        r#"
name = "web-cup"
seed = 12
bots = ["ace", {HOSTILE:?}, "slowpoke"]
repetitions = 2
concurrency = 1

[games.schocken]
table_size = 3

[games.zokken]
settings = {{ rounds = 10 }}
"#
    )
}

/// Where the screenshots go.
fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"));
    let dir = target.join("web-screenshots");
    std::fs::create_dir_all(&dir).expect("create the screenshot folder");
    dir
}

/// chromedriver on a free port, and a headless Chromium session through it.
struct Browser {
    driver: Child,
    client: Client,
}

impl Browser {
    async fn start() -> Browser {
        // chromedriver takes a port number: a free one is bound, read and released, and
        // chromedriver binds it next. Should another process take it in between,
        // chromedriver exits and is started again on another free port.
        let deadline = Instant::now() + Duration::from_secs(60);
        let (driver, url) = 'started: loop {
            let port = knobel_e2e::free_port();
            let mut driver = Command::new("/usr/bin/chromedriver")
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("start chromedriver (apt-get install chromium-driver)");
            let url = format!("http://127.0.0.1:{port}");
            loop {
                assert!(Instant::now() < deadline, "chromedriver did not start");
                if let Ok(Some(status)) = driver.try_wait() {
                    eprintln!("chromedriver on port {port} exited ({status}): trying another port");
                    continue 'started;
                }
                let ready = tokio::time::timeout(
                    Duration::from_secs(5),
                    tokio::net::TcpStream::connect(("127.0.0.1", port)),
                )
                .await;
                if matches!(ready, Ok(Ok(_))) {
                    let (status, body) = http_get(&format!("{url}/status")).await;
                    if status == 200 && body.contains("\"ready\":true") {
                        break 'started (driver, url);
                    }
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,1000"],
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(capabilities)
            .connect(&url)
            .await
            .expect("a Chromium session");
        Browser { driver, client }
    }

    async fn stop(mut self) {
        let _ = self.client.close().await;
        let _ = self.driver.kill().await;
    }
}

/// Runs `script` (a function body) in the page.
async fn js(client: &Client, script: &str) -> Value {
    client
        .execute(script, vec![])
        .await
        .unwrap_or_else(|e| panic!("script failed: {e}: {script}"))
}

/// Waits, polling, until `check` gives `Some`.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Axe-core, injected into the page: no critical violation. Then a screenshot.
async fn audit(client: &Client, name: &str) {
    eprintln!("web test: auditing {name}");
    let axe = std::fs::read_to_string(workspace().join("tests/vendor/axe.min.js"))
        .expect("tests/vendor/axe.min.js");
    client.execute(&axe, vec![]).await.expect("inject axe-core");
    let result = client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document).then(r => done(r.violations.map(v =>
                 ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.html)}))),
               e => done([{id: 'axe failed', impact: 'critical', nodes: [String(e)]}]));",
            vec![],
        )
        .await
        .expect("run axe-core");
    let violations = result.as_array().expect("a list of violations");
    let critical: Vec<&Value> = violations
        .iter()
        .filter(|v| v["impact"] == "critical")
        .collect();
    assert!(
        critical.is_empty(),
        "{name}: critical violations: {critical:#?}"
    );
    if !violations.is_empty() {
        eprintln!("{name}: axe (not critical): {violations:?}");
    }
    let png = client.screenshot().await.expect("a screenshot");
    std::fs::write(screenshot_dir().join(format!("{name}.png")), png).expect("write it");
}

/// The page's title and first heading.
async fn title_and_heading(client: &Client) -> (String, String) {
    let title = client.title().await.unwrap();
    let h1 = client
        .find(Locator::Css("h1"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    (title, h1)
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn standings(arena: &mut ArenaClient<tonic::transport::Channel>) -> pb::GetStandingsResponse {
    arena
        .get_standings(pb::GetStandingsRequest {
            league: "web-cup".into(),
        })
        .await
        .unwrap()
        .into_inner()
}

async fn matches(
    arena: &mut ArenaClient<tonic::transport::Channel>,
    status: pb::MatchStatus,
) -> Vec<pb::MatchSummary> {
    arena
        .list_matches(pb::ListMatchesRequest {
            status: status as i32,
            limit: 500,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .matches
}

/// The rows of the standings tables on the page: per table (game id), (bot, μ, σ, μ − 3σ).
async fn page_rows(client: &Client) -> Value {
    js(
        client,
        "const out = {};
         for (const t of document.querySelectorAll('table.standings')) {
           out[t.dataset.game] = [...t.querySelectorAll('tr.standing')].map(r =>
             [r.dataset.bot, r.querySelector('.mu').textContent,
              r.querySelector('.sigma').textContent, r.querySelector('.conservative').textContent]);
         }
         return out;",
    )
    .await
}

/// GetStandings' rows in the page's terms.
fn wire_rows(s: &pb::GetStandingsResponse) -> Value {
    let rows = |bots: &[pb::BotStanding]| -> Value {
        bots.iter()
            .map(|b| {
                json!([
                    b.bot,
                    format!("{:.2}", b.mu),
                    format!("{:.2}", b.sigma),
                    format!("{:.2}", b.conservative)
                ])
            })
            .collect()
    };
    let mut out = serde_json::Map::new();
    for g in &s.games {
        let game = pb::Game::try_from(g.game).unwrap();
        let name = match game {
            pb::Game::Schocken => "schocken",
            pb::Game::Sjokken => "sjokken",
            pb::Game::Zokken => "zokken",
            pb::Game::Unspecified => unreachable!(),
        };
        out.insert(name.into(), rows(&g.bots));
    }
    out.insert("overall".into(), rows(&s.overall));
    Value::Object(out)
}

async fn press(client: &Client, key: Key) {
    let keys = KeyActions::new("keyboard".into())
        .then(KeyAction::Down { value: key.into() })
        .then(KeyAction::Up { value: key.into() });
    client.perform_actions(keys).await.expect("press a key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    knobel_without_chromium,
    ignore = "KNOBEL_TEST_WITHOUT=chromium: chromium and chromedriver are not installed"
)]
async fn the_web_viewer_in_a_real_browser() {
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)],
    )
    .await;
    let web = arena.web_url.clone();
    let mut tokens = Vec::new();
    for (name, _, _) in BOTS {
        tokens.push(arena.add_bot(name).await);
    }
    let channel = tonic::transport::Endpoint::from_shared(arena.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let auth = BearerAuth::new(&Token::new(ADMIN_TOKEN.to_owned())).unwrap();
    let mut admin = AdminClient::with_interceptor(channel.clone(), auth);
    let rpc = ArenaClient::new(channel);
    let mut bots = tokio::task::JoinSet::new();
    for (i, (name, strat, delay_ms)) in BOTS.iter().enumerate() {
        let mut config = BotConfig::new(
            arena.url.clone(),
            Token::new(tokens[i].clone()),
            *name,
            Game::ALL,
        );
        if *delay_ms > 0 {
            config.misbehave = Some(Misbehave::Late(Duration::from_millis(*delay_ms)));
        }
        bots.spawn(Bot::new(config, strategy(strat, i as u64).unwrap()).run());
    }
    admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: league_file(),
        })
        .await
        .unwrap();

    eprintln!("web test: league created, starting the browser");
    let browser = Browser::start().await;
    eprintln!("web test: browser started");
    // The checks run in a task of their own so that the browser is closed however they end
    // (a failed check would leave Chromium running without its driver).
    let checks = tokio::spawn(check_pages(browser.client.clone(), web, rpc, admin, bots));
    let outcome = checks.await;
    browser.stop().await;
    arena.stop().await;
    if let Err(failed) = outcome {
        std::panic::resume_unwind(failed.into_panic());
    }
}

/// Every page, in the browser, against the league as it runs and once it has finished.
async fn check_pages(
    client: Client,
    web: String,
    mut rpc: ArenaClient<tonic::transport::Channel>,
    mut admin: Admin,
    mut bots: tokio::task::JoinSet<Result<knobel_bots::RunReport, knobel_bots::BotError>>,
) {
    let client = &client;

    // The leagues page, before the league starts.
    client.goto(&web).await.unwrap();
    let (title, h1) = title_and_heading(client).await;
    assert_eq!(
        (title.as_str(), h1.as_str()),
        ("Leagues · Knobel", "Leagues")
    );
    let row = client
        .find(Locator::Css("#leagues tr[data-league='web-cup'] td"))
        .await
        .unwrap();
    assert_eq!(row.text().await.unwrap(), "created");
    audit(client, "leagues").await;

    // The standings page of the running league updates by itself (server-sent events).
    admin
        .start_league(pb::LeagueRequest {
            name: "web-cup".into(),
        })
        .await
        .unwrap();
    let standings_url = format!("{web}leagues/web-cup");
    client.goto(&standings_url).await.unwrap();
    let (title, h1) = title_and_heading(client).await;
    assert_eq!(title, "web-cup: standings · Knobel");
    assert_eq!(h1, "web-cup: standings");
    js(client, "window.knobelMark = 'not reloaded';").await;
    let first = js(
        client,
        "return Number(document.getElementById('finished').textContent);",
    )
    .await
    .as_u64()
    .unwrap();
    let total = standings(&mut rpc).await.league.unwrap().total_matches as u64;
    assert_eq!(total, 2 * (6 + 6));
    assert!(
        first < total,
        "the league is still running: {first} of {total}"
    );
    let later = eventually("the standings page updates by itself", || async {
        let state = js(
            client,
            "return [Number(document.getElementById('finished').textContent),
                     Number(document.getElementById('live').dataset.updates || 0),
                     window.knobelMark || ''];",
        )
        .await;
        let finished = state[0].as_u64().unwrap();
        (finished > first && state[1].as_u64().unwrap() > 0).then(|| {
            assert_eq!(state[2], "not reloaded", "updated in place, not reloaded");
            finished
        })
    })
    .await;
    assert!(later > first);
    audit(client, "standings-live").await;

    // A running match's page: seats and status only, no die, no seed.
    let mut seen_running = false;
    let deadline = Instant::now() + PATIENCE;
    while !seen_running {
        assert!(Instant::now() < deadline, "never caught a match running");
        let running = matches(&mut rpc, pb::MatchStatus::Running).await;
        let Some(m) = running.first() else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        client
            .goto(&format!("{web}matches/{}", m.match_id))
            .await
            .unwrap();
        let status = client
            .find(Locator::Css("#match-status"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let source = client.source().await.unwrap();
        if status != "running" {
            continue; // It ended in between: try the next one.
        }
        seen_running = true;
        let shown = js(
            client,
            "return [document.querySelectorAll('svg.die, [data-dice], li.step').length,
                     document.getElementById('no-steps').textContent,
                     document.querySelectorAll('#log-link').length];",
        )
        .await;
        assert_eq!(shown[0], 0, "no die, no step of a running match");
        assert!(shown[1].as_str().unwrap().contains("running"), "{shown}");
        assert_eq!(shown[2], 0, "no log link while it runs");
        assert!(!source.to_lowercase().contains("seed"), "no seed");
        for name in &m.seat_names {
            assert!(
                js(
                    client,
                    "return document.getElementById('seats').textContent;"
                )
                .await
                .as_str()
                .unwrap()
                .contains(name.as_str()),
                "the seats are shown"
            );
        }
        let (status, body) = http_get(&format!("{web}matches/{}/log.json", m.match_id)).await;
        if status != 200 {
            assert_eq!(status, 409, "{body}");
            assert!(body.contains("still running"), "{body}");
        }
        audit(client, "match-running").await;
    }

    // Once the league is over, the page shows the ranking and ratings of GetStandings.
    let finished = eventually("the league finishes", || {
        let mut rpc = rpc.clone();
        async move {
            let s = standings(&mut rpc).await;
            (s.league.as_ref().unwrap().status == pb::LeagueStatus::Finished as i32).then_some(s)
        }
    })
    .await;
    bots.abort_all();
    client.goto(&standings_url).await.unwrap();
    assert_eq!(page_rows(client).await, wire_rows(&finished));
    assert_eq!(
        js(
            client,
            "return document.getElementById('league-status').textContent;"
        )
        .await,
        "finished"
    );
    // The hostile name is text: shown as typed, never run. (Read in one script: a live
    // update may still replace the table, which would leave an element found before stale.)
    let names = js(
        client,
        "return [...document.querySelectorAll('table[data-game=overall] th.bot a')].map(a => a.textContent);",
    )
    .await;
    assert!(
        names.as_array().unwrap().contains(&json!(HOSTILE)),
        "{names}"
    );
    assert!(
        names
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n.as_str().is_some_and(|n| !n.is_empty())),
        "{names}"
    );
    assert_eq!(
        js(client, "return document.querySelectorAll('script').length;").await,
        1,
        "only the page's own script"
    );
    assert!(client.get_alert_text().await.is_err(), "no alert ran");
    audit(client, "standings-finished").await;

    // The paired comparison of two bots, and a bad one.
    client
        .goto(&format!(
            "{standings_url}?a=ace&b={}",
            percent_encode(HOSTILE)
        ))
        .await
        .unwrap();
    let pair = js(
        client,
        "return document.getElementById('pair').textContent;",
    )
    .await;
    assert!(pair.as_str().unwrap().contains("Schocken"), "{pair}");
    audit(client, "standings-pair").await;
    let (status, body) = http_get(&format!("{standings_url}?a=ace&b=nobody")).await;
    assert_eq!(status, 400);
    assert!(
        body.contains(
            "b = &#34;nobody&#34; is not legal: it must be one of ace, \
             &#60;script&#62;alert(1)&#60;/script&#62;, slowpoke"
        ),
        "{body}"
    );
    assert!(!body.contains(HOSTILE), "escaped: {body}");
    client
        .goto(&format!("{standings_url}?a=ace&b=nobody"))
        .await
        .unwrap();
    assert_eq!(title_and_heading(client).await.1, "Bad request");
    audit(client, "error-400").await;

    // Ratings over time: one line per bot, ending at the standings' ratings.
    client
        .goto(&format!("{standings_url}/ratings?game=schocken"))
        .await
        .unwrap();
    let lines = js(
        client,
        "return [...document.querySelectorAll('svg.chart polyline.series')].map(p => p.dataset.bot);",
    )
    .await;
    assert_eq!(lines.as_array().unwrap().len(), 3, "{lines}");
    let last = js(
        client,
        "return [...document.querySelectorAll('#final-ratings tr[data-bot]')].map(r =>
             [r.dataset.bot, r.cells[1].textContent]);",
    )
    .await;
    let schocken = &finished.games[0];
    for row in last.as_array().unwrap() {
        let bot = row[0].as_str().unwrap();
        let wire = schocken.bots.iter().find(|b| b.bot == bot).unwrap();
        assert_eq!(row[1], format!("{:.2}", wire.mu), "{bot}");
    }
    audit(client, "ratings").await;
    let (status, body) = http_get(&format!("{standings_url}/ratings?game=chess")).await;
    assert_eq!(status, 400);
    assert!(
        body.contains(
            "game = &#34;chess&#34; is not legal: it must be one of overall, schocken, zokken"
        ),
        "{body}"
    );
    // A game the league does not play is not offered either.
    let (status, body) = http_get(&format!("{standings_url}/ratings?game=sjokken")).await;
    assert_eq!(status, 400);
    assert!(
        body.contains("it must be one of overall, schocken, zokken"),
        "{body}"
    );

    // A bot's page: its matches with their placings.
    client
        .goto(&format!("{web}bots/{}", percent_encode(HOSTILE)))
        .await
        .unwrap();
    let (title, h1) = title_and_heading(client).await;
    assert_eq!(title, format!("Bot {HOSTILE} · Knobel"));
    assert_eq!(h1, format!("Bot {HOSTILE}"));
    let rows = js(
        client,
        "return document.querySelectorAll('#matches tr[data-match]').length;",
    )
    .await;
    assert_eq!(
        rows,
        2 * (6 + 4),
        "every match of the bot: Schocken 6, Zokken 4 per repetition"
    );
    assert!(client.get_alert_text().await.is_err(), "no alert ran");
    audit(client, "bot").await;

    // A finished match: step through every throw with the arrow keys; it matches the log.
    let done = matches(&mut rpc, pb::MatchStatus::Finished).await;
    let zokken = done
        .iter()
        .find(|m| m.game == pb::Game::Zokken as i32)
        .expect("a finished Zokken match");
    let log_json = rpc
        .get_match_log(pb::GetMatchLogRequest {
            match_id: zokken.match_id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .log_json;
    let log = MatchLog::from_json(&log_json).unwrap();
    let logged: Vec<Value> = log
        .entries
        .iter()
        .filter_map(|e| match e {
            LogEntry::Throw { seat, dice, .. } => Some(json!([
                seat.0.to_string(),
                format!("{} {} {}", dice[0], dice[1], dice[2])
            ])),
            _ => None,
        })
        .collect();
    assert!(!logged.is_empty());
    client
        .goto(&format!("{web}matches/{}", zokken.match_id))
        .await
        .unwrap();
    assert_eq!(
        title_and_heading(client).await.1,
        format!("Match {}", zokken.match_id)
    );
    let steps = js(
        client,
        "return document.querySelectorAll('#steps li.step').length;",
    )
    .await
    .as_u64()
    .unwrap();
    let current = "const s = document.querySelector('#steps li.step.current');
                   return [Number(document.getElementById('steps').dataset.current),
                           s.dataset.kind, s.dataset.seat || '', s.dataset.dice || '',
                           s.querySelectorAll('svg.die').length,
                           getComputedStyle(s).display];";
    let mut thrown = Vec::new();
    for i in 0..steps {
        let step = js(client, current).await;
        assert_eq!(step[0], i, "step {i} is shown");
        assert_eq!(step[5], "list-item", "the current step is visible");
        if step[1] == "throw" {
            assert_eq!(step[4], 3, "a throw shows its three dice");
            thrown.push(json!([step[2], step[3]]));
        }
        press(client, Key::Right).await;
    }
    assert_eq!(
        thrown, logged,
        "every throw of the log, in order, with its dice"
    );
    let last = js(client, current).await;
    assert_eq!(last[0], steps - 1, "the last step stays");
    press(client, Key::Left).await;
    assert_eq!(js(client, current).await[0], steps - 2);
    press(client, Key::Home).await;
    assert_eq!(js(client, current).await[0], 0);
    let hidden = js(
        client,
        "return [...document.querySelectorAll('#steps li.step')].filter(s => getComputedStyle(s).display !== 'none').length;",
    )
    .await;
    assert_eq!(hidden, 1, "with the script, one step at a time");
    let linked = client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             fetch(document.getElementById('log-link').href).then(r => r.text()).then(done);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        linked.as_str().unwrap(),
        log_json,
        "the linked log is GetMatchLog's"
    );
    audit(client, "match-finished").await;
    // Without the script every step is in the page, as a list.
    let (status, body) = http_get(&format!("{web}matches/{}", zokken.match_id)).await;
    assert_eq!(status, 200);
    assert_eq!(body.matches("<li class=\"step").count() as u64, steps);

    // Unknown ids: clear 404 pages.
    for (path, message) in [
        ("leagues/nope".to_owned(), "no league named &#34;nope&#34;"),
        ("bots/nobody".to_owned(), "no bot named &#34;nobody&#34;"),
        ("matches/01NOPE".to_owned(), "no match &#34;01NOPE&#34;"),
        (
            "matches/01NOPE/log.json".to_owned(),
            "no match &#34;01NOPE&#34;",
        ),
        ("elsewhere".to_owned(), "no such page"),
    ] {
        let (status, body) = http_get(&format!("{web}{path}")).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body.contains(message), "{path}: {body}");
    }
    client.goto(&format!("{web}leagues/nope")).await.unwrap();
    assert_eq!(
        title_and_heading(client).await,
        ("Not found · Knobel".to_owned(), "Not found".to_owned())
    );
    audit(client, "error-404").await;

    // A phone's width: the pages still fit (tables scroll inside their region).
    client.set_window_size(390, 844).await.unwrap();
    client.goto(&standings_url).await.unwrap();
    let overflow = js(
        client,
        "return document.documentElement.scrollWidth <= window.innerWidth + 1;",
    )
    .await;
    assert_eq!(
        overflow, true,
        "no sideways scrolling of the page on a phone"
    );
    audit(client, "standings-phone").await;
}
