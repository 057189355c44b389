//! The web viewer end to end, in a real browser: an arena process (`knobel serve`, web
//! viewer on port 0), three built-in bots as real gRPC clients (one named
//! `<script>alert(1)</script>`, the most hostile name the name rule allows, and one that
//! answers late so that matches run long enough to be seen running), a league, and a
//! headless Chromium driven over WebDriver (chromedriver on a free port).
//!
//! A second league (`web-rogue`) runs alongside: `ace` against `rogue`, a bot that never
//! answers (timeouts, strikes, forfeits), enough matches that `ace` has more than one page.
//!
//! Checked: the standings page shows the ranking, ratings, intervals, matches and forfeits
//! GetStandings and the stored results give, and its head-to-head matrix and paired
//! comparison are GetStandings' pairs; it updates by itself (server-sent events) when a
//! match finishes; a running match's page shows no die; a finished Zokken and a finished
//! Schocken match step through every throw and reveal of their logs (keys and buttons) and
//! link to that very log; a bot page's totals are those of all its stored matches, with its
//! rating chart per league and a working `?page=` link; bad ids and bad query parameters
//! get 404 and 400 pages naming the value; the hostile name shows as text; the pages fit a
//! phone's width (a second session emulating a 390-pixel phone); the standings and a
//! match's steps read without JavaScript (a third session with JavaScript off); and
//! axe-core (vendored, `tests/vendor/axe.min.js`) finds no critical violation and no
//! critical or serious result left to review on any page. Screenshots of every page go to
//! `$CARGO_TARGET_DIR/web-screenshots/` (or `target/web-screenshots/`).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use knobel_bots::{BearerAuth, Bot, BotConfig, Game, Misbehave, Token, strategy};
use knobel_e2e::{Arena, ArenaOptions, http_get, poll_every, poll_until, workspace};
use knobel_engine::{Event, LogEntry, MatchLog, StrikeReason};
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

/// Repetitions of `web-rogue` (two Zokken matches each).
const ROGUE_REPETITIONS: u32 = 16;

/// `web-cup`'s matches of each of its bots: Schocken 6 and Zokken 4 per repetition.
const CUP_MATCHES_PER_BOT: u32 = 2 * (6 + 4);

/// Bots: name, strategy, misbehaviour, and how many matches it plays (those of its leagues:
/// it then stops, so that no pick-up match follows the leagues).
const BOTS: [(&str, &str, Option<Misbehave>, u32); 4] = [
    (
        "ace",
        "heuristic",
        None,
        CUP_MATCHES_PER_BOT + 2 * ROGUE_REPETITIONS,
    ),
    (HOSTILE, "heuristic-60", None, CUP_MATCHES_PER_BOT),
    (
        "slowpoke",
        "heuristic-80",
        Some(Misbehave::Late(Duration::from_millis(20))),
        CUP_MATCHES_PER_BOT,
    ),
    (
        "rogue",
        "heuristic",
        Some(Misbehave::NeverAnswer),
        2 * ROGUE_REPETITIONS,
    ),
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

/// The second league: `ace` and `rogue`, short Zokken matches under a short deadline.
fn rogue_league_file() -> String {
    format!(
        r#"
name = "web-rogue"
seed = 13
bots = ["ace", "rogue"]
repetitions = {ROGUE_REPETITIONS}
concurrency = 1

[time]
decision_ms = 150
time_bank_ms = 100

[games.zokken]
settings = {{ rounds = 3 }}
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

/// chromedriver on a free port, and headless Chromium sessions through it.
struct Browser {
    driver: Child,
    url: String,
    clients: Vec<Client>,
}

impl Browser {
    async fn start() -> Browser {
        // chromedriver takes a port number: a free one is bound, read and released, and
        // chromedriver binds it next. Should another process take it in between,
        // chromedriver exits and is started again on another free port.
        let (mut driver, mut port) = Browser::spawn_driver();
        poll_every(
            Duration::from_millis(100),
            Duration::from_secs(60),
            "chromedriver has started",
            || {
                if let Ok(Some(status)) = driver.try_wait() {
                    eprintln!("chromedriver on port {port} exited ({status}): trying another port");
                    (driver, port) = Browser::spawn_driver();
                }
                let port = port;
                async move {
                    let ready = tokio::time::timeout(
                        Duration::from_secs(5),
                        tokio::net::TcpStream::connect(("127.0.0.1", port)),
                    )
                    .await;
                    if !matches!(ready, Ok(Ok(_))) {
                        return Err(format!("port {port} is closed"));
                    }
                    let (status, body) = http_get(&format!("http://127.0.0.1:{port}/status")).await;
                    if status == 200 && body.contains("\"ready\":true") {
                        Ok(())
                    } else {
                        Err(format!("status {status}: {body}"))
                    }
                }
            },
        )
        .await;
        Browser {
            driver,
            url: format!("http://127.0.0.1:{port}"),
            clients: Vec::new(),
        }
    }

    /// chromedriver on a free port: the process and the port.
    fn spawn_driver() -> (Child, u16) {
        let port = knobel_e2e::free_port();
        let driver = Command::new("/usr/bin/chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start chromedriver (apt-get install chromium-driver)");
        (driver, port)
    }

    /// A new Chromium session, its `goog:chromeOptions` those of every session with
    /// `options` added (for example `mobileEmulation` or `prefs`).
    async fn session(&mut self, options: Value) -> Client {
        let mut chrome = json!({
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1280,1000"],
        });
        for (key, value) in options.as_object().expect("options are an object") {
            chrome[key] = value.clone();
        }
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("goog:chromeOptions".into(), chrome);
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .expect("a Chromium session");
        self.clients.push(client.clone());
        client
    }

    async fn stop(mut self) {
        for client in self.clients {
            let _ = client.close().await;
        }
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

/// Axe-core, injected into the page: no critical violation, and no critical or serious
/// result axe could not decide (some rules, such as duplicate-id-aria, report there), but
/// for the contrast of text axe cannot measure: inside an SVG chart (its text is #333 on
/// white: `arena/server/src/web/svg.rs`), or cut off by a table's scrolling region on a phone
/// ("partially obscured": the same cells are measured on the desktop pages). Then a
/// screenshot.
async fn audit(client: &Client, name: &str) {
    eprintln!("web test: auditing {name}");
    let axe = std::fs::read_to_string(workspace().join("tests/vendor/axe.min.js"))
        .expect("tests/vendor/axe.min.js");
    client.execute(&axe, vec![]).await.expect("inject axe-core");
    let result = client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             const list = rs => rs.map(v =>
                 ({id: v.id, impact: v.impact, nodes: v.nodes.map(n =>
                     n.html + ': ' + [...n.any, ...n.all, ...n.none].map(c => c.message).join('; '))}));
             const clipped = el => {
                 const region = el.closest('.scroll');
                 if (!region) return false;
                 const a = el.getBoundingClientRect(), b = region.getBoundingClientRect();
                 return a.right > b.right + 0.5 || a.left < b.left - 0.5;
             };
             const measurable = r => r.id !== 'color-contrast' ? r : Object.assign({}, r, {
                 nodes: r.nodes.filter(n => {
                     const el = document.querySelector(n.target[0]);
                     return !(el instanceof SVGElement) && !clipped(el);
                 })});
             axe.run(document).then(r => done([list(r.violations),
                     list(r.incomplete.map(measurable).filter(v => v.nodes.length > 0))]),
               e => done([[{id: 'axe failed', impact: 'critical', nodes: [String(e)]}], []]));",
            vec![],
        )
        .await
        .expect("run axe-core");
    let violations = result[0].as_array().expect("a list of violations");
    let critical: Vec<&Value> = violations
        .iter()
        .filter(|v| v["impact"] == "critical")
        .collect();
    assert!(
        critical.is_empty(),
        "{name}: critical violations: {critical:#?}"
    );
    let undecided: Vec<&Value> = result[1]
        .as_array()
        .expect("a list of incomplete results")
        .iter()
        .filter(|v| v["impact"] == "critical" || v["impact"] == "serious")
        .collect();
    assert!(
        undecided.is_empty(),
        "{name}: critical or serious results to review: {undecided:#?}"
    );
    if !violations.is_empty() {
        eprintln!("{name}: axe (not critical): {violations:?}");
    }
    screenshot(client, name).await;
}

/// A screenshot of the page, for review.
async fn screenshot(client: &Client, name: &str) {
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
    standings_of(arena, "web-cup").await
}

async fn standings_of(
    arena: &mut ArenaClient<tonic::transport::Channel>,
    league: &str,
) -> pb::GetStandingsResponse {
    arena
        .get_standings(pb::GetStandingsRequest {
            league: league.into(),
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
    for (name, ..) in BOTS {
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
    // rogue plays only once the leagues run: four bots outside a league would fill a
    // pick-up table before.
    let mut rogue = None;
    for (i, (name, strat, misbehave, matches)) in BOTS.iter().enumerate() {
        let mut config = BotConfig::new(
            arena.url.clone(),
            Token::new(tokens[i].clone()),
            *name,
            Game::ALL,
        );
        config.misbehave = *misbehave;
        config.max_matches = Some(*matches);
        let run = Bot::new(config, strategy(strat, i as u64).unwrap()).run();
        if *name == "rogue" {
            rogue = Some(run);
        } else {
            bots.spawn(run);
        }
    }
    for config_toml in [league_file(), rogue_league_file()] {
        admin
            .create_league(pb::CreateLeagueRequest { config_toml })
            .await
            .unwrap();
    }

    eprintln!("web test: leagues created, starting the browser");
    let mut browser = Browser::start().await;
    let sessions = Sessions {
        desk: browser.session(json!({})).await,
        // A phone: 390 CSS pixels wide (a desktop window cannot be made that narrow).
        phone: browser
            .session(json!({"mobileEmulation": {"deviceMetrics":
                {"width": 390, "height": 844, "pixelRatio": 3.0}}}))
            .await,
        // JavaScript off for every site.
        no_script: browser
            .session(json!({"prefs": {"profile.managed_default_content_settings.javascript": 2}}))
            .await,
    };
    eprintln!("web test: browser started");
    // The checks run in a task of their own so that the browser is closed however they end
    // (a failed check would leave Chromium running without its driver).
    let checks = tokio::spawn(check_pages(
        sessions,
        web,
        rpc,
        admin,
        (bots, rogue.expect("a rogue bot")),
    ));
    let outcome = checks.await;
    browser.stop().await;
    arena.stop().await;
    if let Err(failed) = outcome {
        std::panic::resume_unwind(failed.into_panic());
    }
}

/// The browser sessions of the test.
struct Sessions {
    /// A desktop window, JavaScript on.
    desk: Client,
    /// A phone's screen (mobile emulation), JavaScript on.
    phone: Client,
    /// A desktop window, JavaScript off.
    no_script: Client,
}

/// Every page, in the browser, against the league as it runs and once it has finished.
async fn check_pages(
    sessions: Sessions,
    web: String,
    mut rpc: ArenaClient<tonic::transport::Channel>,
    mut admin: Admin,
    (mut bots, rogue): (
        tokio::task::JoinSet<Result<knobel_bots::RunReport, knobel_bots::BotError>>,
        impl Future<Output = Result<knobel_bots::RunReport, knobel_bots::BotError>> + Send + 'static,
    ),
) {
    let client = &sessions.desk;

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
    for name in ["web-cup", "web-rogue"] {
        admin
            .start_league(pb::LeagueRequest { name: name.into() })
            .await
            .unwrap();
    }
    bots.spawn(rogue);
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
    let later = poll_until(PATIENCE, "the standings page updates by itself", || async {
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
    let (m, source) = poll_every(
        Duration::from_millis(50),
        PATIENCE,
        "a match's page is caught while it runs",
        || async {
            let running = matches(&mut rpc.clone(), pb::MatchStatus::Running).await;
            let Some(m) = running.into_iter().next() else {
                return Err("no match running".to_owned());
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
            if status == "running" {
                Ok((m, source))
            } else {
                // It ended in between: try the next one.
                Err(format!("match {} ended: {status}", m.match_id))
            }
        },
    )
    .await;
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
        // Refused while the match runs, or, if it ended meanwhile, until its league ends.
        assert_eq!(status, 409, "{body}");
        assert!(
            body.contains("still running") || body.contains("which has not ended"),
            "{body}"
        );
    }
    audit(client, "match-running").await;

    // Once the league is over, the page shows the ranking and ratings of GetStandings.
    let league_over = |name: &'static str| {
        let rpc = rpc.clone();
        async move {
            poll_until(PATIENCE, &format!("league {name} has finished"), || async {
                let s = standings_of(&mut rpc.clone(), name).await;
                (s.league.as_ref().unwrap().status == pb::LeagueStatus::Finished as i32)
                    .then_some(s)
            })
            .await
        }
    };
    let finished = league_over("web-cup").await;
    let rogue_finished = league_over("web-rogue").await;
    bots.abort_all();
    let done = matches(&mut rpc, pb::MatchStatus::Finished).await;
    let (rogue_done, cup_done): (Vec<pb::MatchSummary>, Vec<pb::MatchSummary>) = done
        .iter()
        .cloned()
        .partition(|m| m.seat_names.iter().any(|n| n == "rogue"));
    assert_eq!(rogue_done.len() as u32, 2 * ROGUE_REPETITIONS);
    assert_eq!(cup_done.len(), 2 * (6 + 6));
    client.goto(&standings_url).await.unwrap();
    assert_eq!(page_rows(client).await, wire_rows(&finished));
    standing_numbers(client, &finished, &cup_done).await;
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

    // The paired comparison of two bots (in GetStandings' order of the pair), and a bad one.
    let (a, b) = {
        let p = finished.games[0]
            .pairs
            .iter()
            .find(|p| {
                [&p.a, &p.b].contains(&&"ace".to_owned())
                    && [&p.a, &p.b].contains(&&HOSTILE.to_owned())
            })
            .expect("ace and the hostile bot met");
        (p.a.clone(), p.b.clone())
    };
    client
        .goto(&format!(
            "{standings_url}?a={}&b={}",
            percent_encode(&a),
            percent_encode(&b)
        ))
        .await
        .unwrap();
    let shown = js(
        client,
        "return [...document.querySelectorAll('#pair tbody tr')].map(r => [r.dataset.game,
             ...['matches', 'a-above', 'b-above', 'sets', 'difference'].map(c =>
                 r.querySelector('.' + c).textContent)]);",
    )
    .await;
    let expected: Vec<Value> = finished
        .games
        .iter()
        .map(|g| {
            let p = g.pairs.iter().find(|p| p.a == a && p.b == b).unwrap();
            let zokken = g.game == pb::Game::Zokken as i32;
            json!([
                if zokken { "Zokken" } else { "Schocken" },
                p.matches.to_string(),
                p.a_above.to_string(),
                p.b_above.to_string(),
                p.sets.to_string(),
                signed(
                    p.paired_difference.as_ref().unwrap(),
                    if zokken { 1.0 } else { 100.0 }
                )
            ])
        })
        .collect();
    assert_eq!(
        shown,
        json!(expected),
        "the paired comparison is GetStandings'"
    );
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
    let standings_both = [finished.clone(), rogue_finished.clone()];
    bot_page(client, &web, &mut rpc, HOSTILE, &done, &standings_both).await;
    // ace plays both leagues: two charts, and more matches than one page lists.
    bot_page(client, &web, &mut rpc, "ace", &done, &standings_both).await;
    // rogue never answers: timeouts, strikes and forfeits, as its logs tell.
    bot_page(client, &web, &mut rpc, "rogue", &done, &standings_both).await;
    client
        .goto(&format!("{web}leagues/web-rogue"))
        .await
        .unwrap();
    standing_numbers(client, &rogue_finished, &rogue_done).await;
    audit(client, "standings-rogue").await;

    // Finished matches of web-cup: step through every throw with the keys and the buttons;
    // they match their logs.
    let game_match = |game: pb::Game| {
        cup_done
            .iter()
            .find(|m| m.game == game as i32)
            .expect("a finished match of each game")
            .clone()
    };
    let zokken = game_match(pb::Game::Zokken);
    let zokken_steps = step_through(client, &web, &mut rpc, &zokken).await;
    let schocken = game_match(pb::Game::Schocken);
    step_through(client, &web, &mut rpc, &schocken).await;
    listings(client, &web, &done).await;

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
    let phone = &sessions.phone;
    for (name, url) in [
        ("standings", standings_url.clone()),
        ("ratings", format!("{standings_url}/ratings")),
        ("bot", format!("{web}bots/ace")),
        ("match", format!("{web}matches/{}", schocken.match_id)),
        (
            "match-seat",
            format!("{web}matches/{}?step=20&seat=1", schocken.match_id),
        ),
        ("matches", format!("{web}matches?game=zokken")),
        ("bots", format!("{web}bots")),
    ] {
        phone.goto(&url).await.unwrap();
        let width = js(
            phone,
            "return [window.innerWidth, document.documentElement.scrollWidth];",
        )
        .await;
        let (inner, scroll) = (width[0].as_u64().unwrap(), width[1].as_u64().unwrap());
        assert!(inner <= 400, "{name}: a phone's width, not {inner} pixels");
        assert!(
            scroll <= inner + 1,
            "{name}: no sideways scrolling of the page on a phone ({scroll} > {inner})"
        );
        audit(phone, &format!("{name}-phone")).await;
    }

    // Without JavaScript: the standings are there (not waiting for an update), and a
    // match's every step is shown as a list.
    let bare = &sessions.no_script;
    bare.goto(&standings_url).await.unwrap();
    assert_eq!(
        js(
            bare,
            "return document.documentElement.classList.contains('js');"
        )
        .await,
        false,
        "the page's script did not run"
    );
    assert_eq!(page_rows(bare).await, wire_rows(&finished));
    // (axe-core needs the page's own script to run: no audit here, the same page is
    // audited with it.)
    screenshot(bare, "standings-no-script").await;
    bare.goto(&format!(
        "{web}matches/{}?step=2&view=public",
        zokken.match_id
    ))
    .await
    .unwrap();
    let shown = js(
        bare,
        "return [document.documentElement.classList.contains('js'),
                 [...document.querySelectorAll('#steps li.step')]
                     .filter(s => getComputedStyle(s).display === 'list-item').length,
                 document.getElementById('table').dataset.step,
                 document.querySelectorAll('#table li.seat svg.die').length];",
    )
    .await;
    assert_eq!(
        shown,
        json!([false, zokken_steps, "2", 3 * zokken.seat_names.len()]),
        "without the script: the table at the step asked for, and every step listed"
    );
    click(bare, Locator::Id("step-next")).await;
    poll_until(
        PATIENCE,
        "the next step is shown, without the script",
        || async {
            let step = js(
                bare,
                "return document.getElementById('table').dataset.step;",
            )
            .await;
            (step == "3").then_some(())
        },
    )
    .await;
    assert!(
        bare.current_url()
            .await
            .unwrap()
            .as_str()
            .ends_with("?step=3&view=public"),
        "a link to the next step"
    );
    screenshot(bare, "match-no-script").await;
}

/// An interval as the pages write it: the estimate, then its ends in brackets joined by
/// `dash`, each written by `estimate` and `end`; "–" without an estimate.
fn interval_text(
    i: &pb::Interval,
    estimate: impl Fn(f64) -> String,
    end: impl Fn(f64) -> String,
    dash: &str,
) -> String {
    if i.estimate.is_nan() {
        "–".to_owned()
    } else {
        format!(
            "{} ({}{dash}{})",
            estimate(i.estimate),
            end(i.low),
            end(i.high)
        )
    }
}

/// A signed interval, `scale` applied: "+12.3 (+1.0…+23.6)", an unbounded end "±∞".
fn signed(i: &pb::Interval, scale: f64) -> String {
    let value = |x: f64| format!("{:+.1}", scale * x);
    let end = |x: f64| match x {
        x if x == f64::INFINITY => "+∞".to_owned(),
        x if x == f64::NEG_INFINITY => "−∞".to_owned(),
        x => value(x),
    };
    interval_text(i, value, end, "…")
}

/// A share: "12.5% (8.1–17.9)".
fn percent(i: &pb::Interval) -> String {
    interval_text(
        i,
        |x| format!("{:.1}%", 100.0 * x),
        |x| format!("{:.1}", 100.0 * x),
        "–",
    )
}

/// The game's id in the pages.
fn game_id(game: i32) -> &'static str {
    match pb::Game::try_from(game).unwrap() {
        pb::Game::Schocken => "schocken",
        pb::Game::Sjokken => "sjokken",
        pb::Game::Zokken => "zokken",
        pb::Game::Unspecified => unreachable!(),
    }
}

/// How many of `matches` (of `game`, or of every game) `bot` forfeited.
fn forfeits_of(matches: &[pb::MatchSummary], game: Option<i32>, bot: &str) -> u64 {
    matches
        .iter()
        .filter(|m| game.is_none_or(|g| m.game == g))
        .filter_map(|m| {
            let seat = m.seat_names.iter().position(|n| n == bot)?;
            let forfeit = *m.outcome.as_ref()?.forfeits.get(seat)?;
            Some(u64::from(forfeit != pb::ForfeitReason::None as i32))
        })
        .sum()
}

/// The standings page shown (of a finished league): per table, every row's interval,
/// matches and forfeits are GetStandings' and the stored results' (`matches`, the league's
/// finished matches); each game's head-to-head matrix is GetStandings' pairs.
async fn standing_numbers(
    client: &Client,
    wire: &pb::GetStandingsResponse,
    matches: &[pb::MatchSummary],
) {
    let page = js(
        client,
        "const out = {};
         for (const t of document.querySelectorAll('table.standings')) {
           out[t.dataset.game] = [...t.querySelectorAll('tr.standing')].map(r =>
             [r.dataset.bot, r.querySelector('.stat') ? r.querySelector('.stat').textContent : '',
              r.querySelector('.adjusted') ? r.querySelector('.adjusted').textContent : '',
              r.querySelector('.matches').textContent, r.querySelector('.forfeits').textContent]);
         }
         const h2h = {};
         for (const t of document.querySelectorAll('table.head-to-head')) {
           h2h[t.dataset.game] = [...t.querySelectorAll('tbody tr')].map(r =>
             [r.dataset.bot, ...[...r.querySelectorAll('td')].map(c => c.textContent)]);
         }
         const neighbours = {};
         for (const t of document.querySelectorAll('table.neighbours')) {
           neighbours[t.dataset.game] = [t.dataset.settled, ...[...t.querySelectorAll('tr.neighbour')].map(r =>
             [r.dataset.above, r.dataset.below, r.querySelector('.sets').textContent, r.dataset.verdict])];
         }
         return [out, h2h, neighbours];",
    )
    .await;
    let mut rows = serde_json::Map::new();
    let mut h2h = serde_json::Map::new();
    let mut neighbours = serde_json::Map::new();
    let mut forfeited = 0;
    for g in &wire.games {
        let line = |b: &pb::BotStanding| {
            let stat = match (&b.loss_rate, &b.chips_per_100_rounds) {
                (Some(rate), _) => percent(rate),
                (_, Some(chips)) => signed(chips, 1.0),
                _ => String::new(),
            };
            let adjusted = match (&b.adjusted, &b.chips_per_100_rounds) {
                (None, _) => "–".to_owned(),
                (Some(adjusted), None) => percent(adjusted),
                (Some(adjusted), Some(_)) => signed(adjusted, 1.0),
            };
            let forfeits = forfeits_of(matches, Some(g.game), &b.bot);
            json!([
                b.bot,
                stat,
                adjusted,
                b.matches.to_string(),
                forfeits.to_string()
            ])
        };
        forfeited += g
            .bots
            .iter()
            .map(|b| forfeits_of(matches, Some(g.game), &b.bot))
            .sum::<u64>();
        rows.insert(game_id(g.game).into(), g.bots.iter().map(line).collect());
        let matrix: Vec<Value> = g
            .bots
            .iter()
            .map(|row| {
                let mut cells = vec![json!(row.bot)];
                for col in &g.bots {
                    let cell = g
                        .pairs
                        .iter()
                        .find_map(|p| {
                            if p.a == row.bot && p.b == col.bot {
                                Some(format!("{}–{}", p.a_above, p.b_above))
                            } else if p.b == row.bot && p.a == col.bot {
                                Some(format!("{}–{}", p.b_above, p.a_above))
                            } else {
                                None
                            }
                        })
                        .unwrap_or_else(|| "–".to_owned());
                    cells.push(json!(cell));
                }
                Value::Array(cells)
            })
            .collect();
        h2h.insert(game_id(g.game).into(), Value::Array(matrix));
        let verdicts = g.neighbours.iter().map(|n| {
            let verdict = pb::PairVerdict::try_from(n.verdict).unwrap().as_str_name();
            let verdict = verdict.trim_start_matches("PAIR_VERDICT_").to_lowercase();
            json!([n.above, n.below, n.sets.to_string(), verdict])
        });
        neighbours.insert(
            game_id(g.game).into(),
            std::iter::once(json!(g.settled.to_string()))
                .chain(verdicts)
                .collect(),
        );
    }
    rows.insert(
        "overall".into(),
        wire.overall
            .iter()
            .map(|b| {
                json!([
                    b.bot,
                    "",
                    "",
                    b.matches.to_string(),
                    forfeits_of(matches, None, &b.bot).to_string()
                ])
            })
            .collect(),
    );
    assert_eq!(
        page[0],
        Value::Object(rows),
        "intervals, matches and forfeits"
    );
    assert_eq!(page[1], Value::Object(h2h), "the head-to-head matrices");
    assert_eq!(
        page[2],
        Value::Object(neighbours),
        "the neighbours and their verdicts"
    );
    let league = wire.league.as_ref().unwrap();
    if league.name == "web-rogue" {
        assert!(forfeited > 0, "the rogue forfeited: {page}");
    }
}

/// A bot's page: its totals are those of all its stored matches (ListMatches' outcomes,
/// GetStandings' matches, and the strikes and forfeits its match logs record); one rating
/// chart per league it plays; its matches over as many pages as needed, all of them listed.
async fn bot_page(
    client: &Client,
    web: &str,
    rpc: &mut ArenaClient<tonic::transport::Channel>,
    bot: &str,
    done: &[pb::MatchSummary],
    leagues: &[pb::GetStandingsResponse],
) {
    let mine: Vec<(&pb::MatchSummary, usize)> = done
        .iter()
        .filter_map(|m| Some((m, m.seat_names.iter().position(|n| n == bot)?)))
        .collect();
    let mut places = std::collections::BTreeMap::<String, u64>::new();
    let (mut strikes, mut timeouts, mut forfeits) = (0u64, 0u64, 0u64);
    let (mut logged_strikes, mut logged_timeouts, mut logged_forfeits) = (0u64, 0u64, 0u64);
    for (m, seat) in &mine {
        let o = m.outcome.as_ref().unwrap();
        *places.entry(o.placings[*seat].to_string()).or_default() += 1;
        strikes += u64::from(o.strikes[*seat]);
        timeouts += u64::from(o.timeouts[*seat]);
        forfeits += u64::from(o.forfeits[*seat] != pb::ForfeitReason::None as i32);
        if o.strikes[*seat] > 0 {
            let log = log_of(rpc, &m.match_id).await;
            for entry in MatchLog::from_json(&log).unwrap().entries {
                match entry {
                    LogEntry::Strike { seat: s, reason } if s.index() == *seat => {
                        logged_strikes += 1;
                        logged_timeouts += u64::from(reason == StrikeReason::Timeout);
                    }
                    LogEntry::Forfeit { seat: s, .. } if s.index() == *seat => logged_forfeits += 1,
                    _ => {}
                }
            }
        }
    }
    assert_eq!(
        (strikes, timeouts, forfeits),
        (logged_strikes, logged_timeouts, logged_forfeits),
        "{bot}: the results and the logs agree"
    );
    let in_leagues: Vec<&pb::GetStandingsResponse> = leagues
        .iter()
        .filter(|s| s.overall.iter().any(|b| b.bot == bot))
        .collect();
    let standing_matches: u64 = in_leagues
        .iter()
        .flat_map(|s| s.overall.iter().filter(|b| b.bot == bot))
        .map(|b| u64::from(b.matches))
        .sum();
    assert_eq!(
        standing_matches,
        mine.len() as u64,
        "{bot}: GetStandings' matches"
    );
    if bot == "rogue" {
        assert!(
            strikes > 0 && timeouts > 0 && forfeits > 0,
            "{bot} misbehaved"
        );
    }
    let expected = json!([
        mine.len().to_string(),
        places,
        strikes.to_string(),
        timeouts.to_string(),
        forfeits.to_string()
    ]);
    let totals = "const text = id => document.getElementById(id).textContent;
                  const places = {};
                  for (const p of document.querySelectorAll('#summary li.place'))
                    places[p.dataset.place] = Number(p.querySelector('.count').textContent);
                  return [text('total-matches'), places, text('total-strikes'),
                          text('total-timeouts'), text('total-forfeits')];";
    let listed = "return [...document.querySelectorAll('#matches tr[data-match]')].map(r => r.dataset.match);";
    client
        .goto(&format!("{web}bots/{}", percent_encode(bot)))
        .await
        .unwrap();
    assert_eq!(
        js(client, totals).await,
        expected,
        "{bot}: the totals of all its matches"
    );
    let said = js(
        client,
        "return document.querySelector('#h-summary + p').textContent;",
    )
    .await;
    assert!(
        said.as_str().unwrap().contains("outside them"),
        "{bot}: the totals say they count matches outside leagues too: {said}"
    );
    let charts = js(
        client,
        "return [...document.querySelectorAll('svg.chart')].map(c =>
             [c.id, c.getAttribute('aria-labelledby'), c.querySelector('title').id,
              c.querySelectorAll('polyline.series').length]);",
    )
    .await;
    let charts = charts.as_array().unwrap();
    assert_eq!(
        charts.len(),
        in_leagues.len(),
        "{bot}: a chart per league: {charts:?}"
    );
    let ids: std::collections::HashSet<&str> =
        charts.iter().map(|c| c[0].as_str().unwrap()).collect();
    assert_eq!(
        ids.len(),
        charts.len(),
        "{bot}: every chart has an id of its own"
    );
    for c in charts {
        assert_eq!(c[1], c[2], "{bot}: a chart is labelled by its own title");
        assert_eq!(c[3], 1, "{bot}: its rating line");
    }
    audit(
        client,
        &format!("bot-{}", if bot == HOSTILE { "hostile" } else { bot }),
    )
    .await;
    let mut seen: Vec<String> = Vec::new();
    let mut pages = 0;
    loop {
        pages += 1;
        let ids = js(client, listed).await;
        let ids = ids.as_array().unwrap();
        assert!(ids.len() as u32 <= 50, "{bot}: at most a page");
        seen.extend(ids.iter().map(|v| v.as_str().unwrap().to_owned()));
        let next = js(
            client,
            "const a = document.querySelector('a[rel=next]'); return a ? a.href : null;",
        )
        .await;
        let Some(next) = next.as_str() else { break };
        assert!(next.contains("?page="), "{next}");
        click(client, Locator::Css("a[rel=next]")).await;
        poll_until(PATIENCE, "the next page is shown", || async {
            (client.current_url().await.unwrap().as_str() == next).then_some(())
        })
        .await;
        assert_eq!(
            js(client, totals).await,
            expected,
            "{bot}: the same totals on every page"
        );
    }
    let mut all: Vec<String> = mine.iter().map(|(m, _)| m.match_id.clone()).collect();
    all.sort();
    let listed_count = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), listed_count, "{bot}: no match on two pages");
    assert_eq!(seen, all, "{bot}: every match, over {pages} pages");
    if mine.len() > 50 {
        assert!(pages > 1, "{bot}: more than a page");
    }
}

/// Each seat's dice after each number of public events of `log` (index k: after the first
/// k events): as they lie (the truth) and as everybody sees them (`None` under the cup),
/// folded from the log independently of the arena's table builder. A round clears the dice
/// (Zokken's tie replay only those of its seats); a throw lays its dice, a turn makes sixes
/// ones, a reveal shows a hand.
type SeatDice = ([Option<u8>; 3], [Option<u8>; 3]);
fn dice_by_events(log: &MatchLog) -> Vec<Vec<SeatDice>> {
    let mut now: Vec<SeatDice> = vec![([None; 3], [None; 3]); log.seats as usize];
    let mut by_events = vec![now.clone()];
    let mut landed = [0u8; 3];
    for entry in &log.entries {
        let event = match entry {
            LogEntry::Throw { dice, .. } => {
                landed = *dice;
                continue;
            }
            LogEntry::Event { event } => *event,
            _ => continue,
        };
        match event {
            Event::OpeningThrow { seat, dice, .. } | Event::Revealed { seat, dice, .. } => {
                now[seat.index()] = (dice.map(Some), dice.map(Some));
            }
            Event::HalfStarted { .. } => now.fill(([None; 3], [None; 3])),
            Event::RoundStarted {
                replay,
                seats,
                starter,
                ..
            } => {
                for (i, d) in now.iter_mut().enumerate() {
                    if starter.is_some()
                        || replay == 0
                        || seats.contains(knobel_engine::Seat(i as u8))
                    {
                        *d = ([None; 3], [None; 3]);
                    }
                }
            }
            Event::Thrown { seat, dice, .. } => now[seat.index()] = (landed.map(Some), dice),
            Event::Turned { seat, dice } => {
                for slot in dice.slots() {
                    now[seat.index()].0[slot] = Some(1);
                    now[seat.index()].1[slot] = Some(1);
                }
            }
            _ => {}
        }
        by_events.push(now.clone());
    }
    by_events
}

/// Every step, in every view: the full one, the public one, and two seats' own (see
/// [`check_table`]); every throw and reveal of the log has a step right after it. Gives how
/// many of a viewing seat's own dice under the cup were shown, and a step worth a
/// screenshot: a seat's own dice under the cup beside covered ones (a seat's view), or a
/// Zokken reroll, the dice kept set aside (the full view).
async fn every_view(
    client: &Client,
    url: &str,
    log: &MatchLog,
    m: &pb::MatchSummary,
    steps: u64,
) -> (u32, Option<(usize, &'static str)>) {
    let expected = dice_by_events(log);
    let mut own_hidden = 0;
    let mut telling = None;
    for (view, seat) in [
        ("view=full", None),
        ("view=public", None),
        ("seat=0", Some(0)),
        ("seat=1", Some(1)),
    ] {
        let tables = every_table(client, url, view, steps).await;
        assert_eq!(tables.len() as u64, steps, "{view}");
        let name = if seat.is_some() { "seat" } else { &view[5..] };
        let mut events_shown = std::collections::BTreeSet::new();
        for (n, table) in tables.iter().enumerate() {
            assert_eq!(table[0], n + 1, "{view}: the step asked for");
            let own = check_table(table, &expected, name, seat);
            own_hidden += own;
            let lies = table[2].to_string();
            if telling.is_none()
                && ((own > 0 && lies.contains("[null,\"cup\"]"))
                    || (view == "view=full"
                        && lies.contains("\"held\"")
                        && table[3].as_str().is_some_and(|l| l.contains(" rerolls "))
                        && m.game == pb::Game::Zokken as i32))
            {
                telling = Some((n + 1, view));
            }
            events_shown.insert(table[1].as_u64().unwrap());
        }
        // Every throw and reveal of the log has a step of its own, right after it.
        let mut count = 0;
        for entry in &log.entries {
            if let LogEntry::Event { event } = entry {
                count += 1;
                if matches!(
                    event,
                    Event::Thrown { .. } | Event::Revealed { .. } | Event::OpeningThrow { .. }
                ) {
                    assert!(
                        events_shown.contains(&count),
                        "{view}: a step right after event {count}"
                    );
                }
            }
        }
    }
    (own_hidden, telling)
}

/// Bad steps and views of the match at `url`: 400 pages naming them.
async fn bad_match_queries(url: &str, m: &pb::MatchSummary, steps: u64) {
    for (query, message) in [
        (
            "step=0".to_owned(),
            format!("step = &#34;0&#34; is not legal: it must be a number from 1 to {steps}"),
        ),
        (format!("step={}", steps + 1), "is not legal".to_owned()),
        (format!("seat={}", m.seat_names.len()), "seat = ".to_owned()),
        (
            "view=all".to_owned(),
            "view = &#34;all&#34; is not legal: it must be one of full, public".to_owned(),
        ),
        ("view=full&seat=0".to_owned(), "not both".to_owned()),
    ] {
        let (status, body) = http_get(&format!("{url}?{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body.contains(&message), "{query}: {body}");
    }
}

/// Reads the table shown: its step, events taken in, and each seat's dice (face or null,
/// and where it lies), from `root` (a document).
const READ_TABLE: &str = "const read = root => {
    const t = root.getElementById('table');
    return [Number(t.dataset.step), Number(t.dataset.events),
            [...t.querySelectorAll('li.seat')].map(s => [...s.querySelectorAll('svg.die')]
                .map(d => [d.dataset.face ? Number(d.dataset.face) : null, d.dataset.lie])),
            root.getElementById('step-line').textContent];
};";

/// The table of every step of a view (`view`: the query naming it), fetched in the page
/// and read there: one WebDriver call for all steps.
async fn every_table(client: &Client, url: &str, view: &str, steps: u64) -> Vec<Value> {
    let mut all = Vec::new();
    // 25 steps a call, well within WebDriver's script timeout on a busy machine.
    for first in (1..=steps).step_by(25) {
        let last = (first + 24).min(steps);
        let script = format!(
            "{READ_TABLE}
             const done = arguments[arguments.length - 1];
             (async () => {{
                 const out = [];
                 for (let n = {first}; n <= {last}; n++) {{
                     const text = await (await fetch('{url}?step=' + n + '&{view}')).text();
                     out.push(read(new DOMParser().parseFromString(text, 'text/html')));
                 }}
                 return out;
             }})().then(done, e => done(String(e)));"
        );
        let tables = client.execute_async(&script, vec![]).await.unwrap();
        all.extend(
            tables
                .as_array()
                .unwrap_or_else(|| panic!("{view}: {tables}"))
                .iter()
                .cloned(),
        );
    }
    all
}

/// Checks a table read by [`READ_TABLE`] against the log's dice (`expected`, by events):
/// the full view shows the truth, the public view what everybody saw, a seat's view
/// (`seat`) the public dice and, of its own seat, possibly its dice under the cup (the
/// truth). Gives how many of the viewing seat's own dice under the cup it showed.
fn check_table(table: &Value, expected: &[Vec<SeatDice>], view: &str, seat: Option<usize>) -> u32 {
    let (step, events) = (table[0].as_u64().unwrap(), table[1].as_u64().unwrap());
    let want = &expected[events as usize];
    let seats = table[2].as_array().unwrap();
    assert_eq!(
        seats.len(),
        want.len(),
        "{view} step {step}: a card per seat"
    );
    let mut own_hidden = 0;
    for (i, (card, (truth, public))) in seats.iter().zip(want).enumerate() {
        let shown: Vec<Option<u8>> = card
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d[0].as_u64().map(|f| f as u8))
            .collect();
        let lies: Vec<&str> = card
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d[1].as_str().unwrap())
            .collect();
        for slot in 0..3 {
            let covered = public[slot].is_none() && truth[slot].is_some();
            assert_eq!(
                lies[slot] == "cup",
                covered,
                "{view} step {step} seat {i} slot {slot}: {table}"
            );
            let expected = match (view, seat) {
                ("full", _) => truth[slot],
                (_, Some(me)) if me == i && covered && shown[slot].is_some() => {
                    own_hidden += 1;
                    truth[slot]
                }
                _ => public[slot],
            };
            assert_eq!(
                shown[slot], expected,
                "{view} step {step} seat {i} slot {slot}: {table}"
            );
        }
    }
    own_hidden
}

/// A finished match's page, stepped through: its table at every step shows each seat's
/// dice as the log has them at that step, in the full view (every die), the public view
/// (dice under the cup covered) and a seat's view (its own dice under the cup, not the
/// others'); every throw and reveal has its step; the list of steps names every stop and
/// token move of the log; the keys and the buttons step in place. Gives the number of
/// steps.
async fn step_through(
    client: &Client,
    web: &str,
    rpc: &mut ArenaClient<tonic::transport::Channel>,
    m: &pb::MatchSummary,
) -> u64 {
    let log_json = log_of(rpc, &m.match_id).await;
    let log = MatchLog::from_json(&log_json).unwrap();
    let expected = dice_by_events(&log);
    let url = format!("{web}matches/{}", m.match_id);
    client.goto(&url).await.unwrap();
    assert_eq!(
        title_and_heading(client).await.1,
        format!("Match {}", m.match_id)
    );
    let steps = js(
        client,
        "return document.querySelectorAll('#steps li.step').length;",
    )
    .await
    .as_u64()
    .unwrap();
    let (own_hidden, telling) = every_view(client, &url, &log, m, steps).await;
    if m.game == pb::Game::Schocken as i32 {
        assert!(
            own_hidden > 0,
            "a seat's view shows its own dice under the cup"
        );
    }
    step_lines(client, &log, m).await;
    step_keys(client, &expected, steps).await;
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
    audit(client, &format!("match-finished-{}", game_id(m.game))).await;
    let (step, view) = telling.expect("a step worth a screenshot");
    let game = game_id(m.game);
    for view in [view, "view=public"] {
        client
            .goto(&format!("{url}?step={step}&{view}"))
            .await
            .unwrap();
        let name = &view[view.find('=').unwrap() + 1..];
        audit(client, &format!("table-{game}-{name}")).await;
        // The table alone, for docs/web.md.
        js(client, "document.getElementById('table').scrollIntoView();").await;
        let table = client.find(Locator::Id("table")).await.unwrap();
        let png = table.screenshot().await.expect("a screenshot of the table");
        std::fs::write(
            screenshot_dir().join(format!("web-table-{game}-{name}.png")),
            png,
        )
        .expect("write it");
    }
    bad_match_queries(&url, m, steps).await;
    // Without the script every step is in the page, as a list of links.
    let (status, body) = http_get(&url).await;
    assert_eq!(status, 200);
    assert_eq!(body.matches("<li class=\"step").count() as u64, steps);
    steps
}

/// The list of steps names every stop and every token move of the log, in order.
async fn step_lines(client: &Client, log: &MatchLog, m: &pb::MatchSummary) {
    let name = |seat: knobel_engine::Seat| m.seat_names[seat.index()].clone();
    let (mut stops, mut tokens) = (Vec::new(), Vec::new());
    for entry in &log.entries {
        if let LogEntry::Event { event } = entry {
            match *event {
                Event::Stopped { seat, throws } => stops.push((
                    name(seat),
                    format!(
                        "stops after {throws} throw{}",
                        if throws == 1 { "" } else { "s" }
                    ),
                )),
                Event::TokensMoved { from, to, count } => tokens.push(match from {
                    None => (
                        format!("{} takes {count} ", name(to)),
                        "from the middle".to_owned(),
                    ),
                    Some(giver) => (
                        format!("{} passes {count} ", name(giver)),
                        format!(" to {}", name(to)),
                    ),
                }),
                _ => {}
            }
        }
    }
    let lines = js(
        client,
        "return [...document.querySelectorAll('#steps li.step')].map(s => s.textContent);",
    )
    .await;
    let lines: Vec<String> = lines
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_owned())
        .collect();
    let stopped: Vec<String> = lines
        .iter()
        .filter(|t| t.contains(" stops after "))
        .cloned()
        .collect();
    let moved: Vec<String> = lines
        .iter()
        .filter(|t| t.contains(" from the middle (") || t.contains(" passes "))
        .cloned()
        .collect();
    lines_of_log("stop", &stopped, &stops);
    lines_of_log("token move", &moved, &tokens);
}

/// The keys and the buttons step through the full view in place (the page is not
/// reloaded), each table the log's.
async fn step_keys(client: &Client, expected: &[Vec<SeatDice>], steps: u64) {
    js(client, "window.knobelMark = 'not reloaded';").await;
    let shown = || async {
        js(
            client,
            &format!(
                "{READ_TABLE} return [read(document), window.knobelMark || '',
            document.querySelector('#steps [aria-current]').dataset.step];"
            ),
        )
        .await
    };
    let at = |n: u64| async move {
        poll_until(PATIENCE, &format!("step {n} is shown"), || async {
            let now = shown().await;
            (now[0][0] == n).then_some(now)
        })
        .await
    };
    let first = at(1).await;
    check_table(&first[0], expected, "full", None);
    for n in 2..=steps.min(40) {
        press(client, Key::Right).await;
        let now = at(n).await;
        check_table(&now[0], expected, "full", None);
        assert_eq!(now[1], "not reloaded", "stepped in place");
        assert_eq!(now[2], n.to_string(), "the list marks the step shown");
    }
    press(client, Key::End).await;
    at(steps).await;
    press(client, Key::Right).await;
    press(client, Key::Left).await;
    at(steps - 1).await;
    press(client, Key::Home).await;
    at(1).await;
    for (button, n) in [
        ("step-next", 2),
        ("step-next", 3),
        ("step-prev", 2),
        ("step-last", steps),
        ("step-first", 1),
    ] {
        click(client, Locator::Id(button)).await;
        at(n).await;
    }
    assert_eq!(shown().await[1], "not reloaded");
    assert!(
        client
            .current_url()
            .await
            .unwrap()
            .as_str()
            .contains("step=1"),
        "the address follows"
    );
}

fn zokken_match(m: &pb::MatchSummary) -> bool {
    m.game == pb::Game::Zokken as i32
}

fn schocken_match(m: &pb::MatchSummary) -> bool {
    m.game == pb::Game::Schocken as i32
}

fn rogue_match(m: &pb::MatchSummary) -> bool {
    m.seat_names.iter().any(|n| n == "rogue")
}

/// `/matches` lists every match, newest first, in pages; its filters by game, status and
/// bot keep to them; `/bots` links every registered bot; `/` links both.
async fn listings(client: &Client, web: &str, done: &[pb::MatchSummary]) {
    let listed = "return [...document.querySelectorAll('#matches tr[data-match]')].map(r =>
                      [r.dataset.match, r.dataset.game, r.dataset.status]);";
    let mut seen = Vec::new();
    client.goto(&format!("{web}matches")).await.unwrap();
    audit(client, "matches").await;
    loop {
        let rows = js(client, listed).await;
        let rows = rows.as_array().unwrap();
        assert!(rows.len() <= 50, "at most a page");
        seen.extend(rows.iter().map(|r| r[0].as_str().unwrap().to_owned()));
        let next = js(
            client,
            "const a = document.querySelector('a[rel=next]'); return a ? a.href : null;",
        )
        .await;
        let Some(next) = next.as_str() else { break };
        client.goto(next).await.unwrap();
    }
    let mut all: Vec<String> = done.iter().map(|m| m.match_id.clone()).collect();
    all.sort();
    seen.sort();
    assert_eq!(seen, all, "every match, over the pages of /matches");
    for (query, keep) in [
        ("game=zokken", zokken_match as fn(&pb::MatchSummary) -> bool),
        ("game=schocken&status=finished", schocken_match),
        ("bot=rogue", rogue_match),
        ("status=aborted", |_| false),
    ] {
        client.goto(&format!("{web}matches?{query}")).await.unwrap();
        let rows = js(client, listed).await;
        let mut ids: Vec<String> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[0].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        let mut want: Vec<String> = done
            .iter()
            .filter(|m| keep(m))
            .map(|m| m.match_id.clone())
            .collect();
        want.sort();
        assert_eq!(ids, want, "/matches?{query}");
    }
    // The form fills the filters from the address, and submits them.
    client
        .goto(&format!("{web}matches?game=zokken"))
        .await
        .unwrap();
    let bot = client.find(Locator::Id("f-bot")).await.unwrap();
    bot.send_keys("rogue").await.unwrap();
    click(client, Locator::Css("#filters button[type=submit]")).await;
    poll_until(PATIENCE, "the filtered list is shown", || async {
        let url = client.current_url().await.unwrap();
        url.as_str().contains("bot=rogue").then_some(())
    })
    .await;
    assert!(
        client
            .current_url()
            .await
            .unwrap()
            .as_str()
            .contains("game=zokken")
    );
    let (status, body) = http_get(&format!("{web}matches?game=chess")).await;
    assert_eq!(status, 400);
    assert!(
        body.contains(
            "game = &#34;chess&#34; is not legal: it must be one of schocken, sjokken, zokken"
        ),
        "{body}"
    );
    client.goto(&format!("{web}bots")).await.unwrap();
    let bots = js(client, "return [...document.querySelectorAll('#bots tr[data-bot] th a')].map(a => [a.textContent, a.getAttribute('href')]);").await;
    let mut names: Vec<String> = bots
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[0].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    let mut registered: Vec<String> = BOTS.iter().map(|b| b.0.to_owned()).collect();
    registered.sort();
    assert_eq!(names, registered, "every registered bot");
    for b in bots.as_array().unwrap() {
        assert_eq!(
            b[1],
            format!("/bots/{}", percent_encode(b[0].as_str().unwrap()))
        );
    }
    audit(client, "bots").await;
    client.goto(web).await.unwrap();
    let links = js(
        client,
        "return [...document.querySelectorAll('main a')].map(a => a.getAttribute('href'));",
    )
    .await;
    assert!(
        links.as_array().unwrap().contains(&json!("/matches")),
        "{links}"
    );
    assert!(
        links.as_array().unwrap().contains(&json!("/bots")),
        "{links}"
    );
}

/// The step lines of one kind (`what`) are those of the log, in order: each starts with the
/// first of its pair and contains the second.
fn lines_of_log(what: &str, lines: &[String], expected: &[(String, String)]) {
    assert_eq!(
        lines.len(),
        expected.len(),
        "every {what} of the log: {lines:?}"
    );
    for (line, (start, part)) in lines.iter().zip(expected) {
        assert!(
            line.starts_with(start.as_str()) && line.contains(part.as_str()),
            "{what}: {line:?} is not {start:?}…{part:?}"
        );
    }
}

/// GetMatchLog's log of match `id`.
async fn log_of(rpc: &mut ArenaClient<tonic::transport::Channel>, id: &str) -> String {
    rpc.get_match_log(pb::GetMatchLogRequest {
        match_id: id.to_owned(),
    })
    .await
    .unwrap()
    .into_inner()
    .log_json
}

/// Clicks the element `at`.
async fn click(client: &Client, at: Locator<'_>) {
    let element = client.find(at).await.unwrap();
    element.click().await.unwrap();
}

/// A `stop = "settled"` league of two bots far apart, read over plain HTTP (no browser): the
/// standings page shows the luck-adjusted score beside the raw one, what the game is ranked
/// by, the neighbours table with the verdict GetStandings gives, and the legend.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standings_page_shows_each_neighbours_verdict() {
    let arena = Arena::start_with_env(
        ArenaOptions::default(),
        &[("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)],
    )
    .await;
    let (standings, bots) = arena.play_settled_duel(ADMIN_TOKEN, PATIENCE).await;
    drop(bots);
    let zokken = &standings.games[0];
    let wire = &zokken.neighbours[0];
    assert_eq!(wire.verdict, pb::PairVerdict::Separated as i32, "{wire:?}");
    assert!(zokken.bots.iter().all(|b| b.adjusted.is_some()));

    let (status, page) = http_get(&format!("{}leagues/duel", arena.web_url)).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("Zokken: ranked by luck-adjusted net chips per 100 rounds"),
        "{page}"
    );
    assert!(
        page.contains("<th scope=\"col\">Luck-adjusted (95% CI)</th>"),
        "{page}"
    );
    let ace = &page[page
        .find("<tr class=\"standing\" data-bot=\"ace\"")
        .expect("ace's row")..];
    let ace = &ace[..ace.find("</tr>").unwrap()];
    assert!(ace.contains("<td class=\"adjusted\">+"), "{ace}");
    assert!(
        page.contains(r#"<table class="neighbours" data-game="zokken" data-settled="true">"#),
        "{page}"
    );
    let row =
        r#"<tr class="neighbour" data-above="ace" data-below="fumble" data-verdict="separated">"#;
    let row = &page[page
        .find(row)
        .unwrap_or_else(|| panic!("no neighbours row: {page}"))..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains(&format!("<td class=\"sets\">{}</td>", wire.sets)),
        "{row}"
    );
    assert!(
        row.contains("<td class=\"verdict verdict-separated\">separated</td>"),
        "{row}"
    );
    assert!(
        page.contains("margin ±10.0; the order is settled"),
        "{page}"
    );
    for verdict in ["separated", "equivalent", "open"] {
        assert!(
            page.contains(&format!("<dt class=\"verdict-{verdict}\">{verdict}</dt>")),
            "the legend explains {verdict}: {page}"
        );
    }
    assert!(arena.stop().await.success());
}
