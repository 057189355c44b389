//! Metrics end to end, with real processes: the arena binary, bots as real gRPC clients (two
//! of them misbehaving), and a real Prometheus server (Debian's package) scraping the arena
//! on 127.0.0.1 with the configuration and rules of deploy/prometheus/.
//!
//! During a short league across the three games the test checks that:
//! - a league created and not yet started already has every entrant's series for each of
//!   its games (initial rating, 0 matches, 0 at every place);
//! - `promtool check metrics` accepts the arena's output;
//! - every bot's rating in Prometheus equals the standings from GetStandings, per game and
//!   overall, once the league is over;
//! - every panel query of the Grafana dashboard names only metrics the arena exports (or
//!   recording rules of deploy/prometheus whose own expressions name only exported metrics)
//!   and evaluates in that Prometheus without error; the leaderboard queries return every
//!   bot of the league, and each leaderboard table, sorted as the dashboard sorts it, lists
//!   the bots in GetStandings' order;
//! - the decision metrics agree with the stored results: timeouts, illegal actions (the bot
//!   that plays them, on their own), strikes by reason and forfeits by reason per bot equal
//!   what the database recorded.
//!
//! A second test plays practice matches with a bot that answers after the deadline but
//! within its time bank: those decisions are counted `late`. A third has 40 scrapers ask at
//! once from one address: all are answered.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use knobel_bots::{Bot, BotConfig, Game, Misbehave, Token, strategy};
use knobel_e2e::{Arena, ArenaOptions, poll_every, poll_until, scrape, workspace};
use knobel_proto::v1 as pb;
use serde_json::Value;
use sqlx::Connection;

const ADMIN_TOKEN: &str = "observability-admin-token-0123456789";

/// The bots: two that play, one that never answers (timeouts, then forfeits), one that
/// answers with illegal actions (strikes, then forfeits).
const BOTS: [(&str, Option<Misbehave>); 4] = [
    ("ada", None),
    ("bert", None),
    ("sleepy", Some(Misbehave::NeverAnswer)),
    ("crook", Some(Misbehave::Illegal)),
];

const LEAGUE: &str = r#"
name = "observed"
seed = 7
bots = ["ada", "bert", "sleepy", "crook"]
concurrency = 4

[time]
decision_ms = 150
time_bank_ms = 100

[games.schocken]
table_size = 3

[games.sjokken]
table_size = 3

[games.zokken]
settings = { rounds = 5 }
"#;

/// A Prometheus server of the test's own, on a free port of 127.0.0.1, with its data in a
/// temporary folder; killed when dropped.
struct Prometheus {
    child: tokio::process::Child,
    url: String,
    client: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts Prometheus with deploy/prometheus/prometheus.yml, its target rewritten to
    /// `target` (`host:port`), scraping and evaluating rules every second.
    async fn start(target: &str) -> Prometheus {
        let deploy = workspace().join("deploy/prometheus");
        let dir = tempfile::tempdir().unwrap();
        let mut config: serde_yaml_ng::Value = serde_yaml_ng::from_str(
            &std::fs::read_to_string(deploy.join("prometheus.yml")).unwrap(),
        )
        .unwrap();
        config["global"]["scrape_interval"] = "1s".into();
        config["global"]["evaluation_interval"] = "1s".into();
        config["scrape_configs"][0]["static_configs"][0]["targets"] =
            serde_yaml_ng::Value::Sequence(vec![target.into()]);
        let rules: Vec<serde_yaml_ng::Value> = config["rule_files"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|f| {
                deploy
                    .join(f.as_str().unwrap())
                    .display()
                    .to_string()
                    .into()
            })
            .collect();
        config["rule_files"] = serde_yaml_ng::Value::Sequence(rules);
        let config_path = dir.path().join("prometheus.yml");
        std::fs::write(&config_path, serde_yaml_ng::to_string(&config).unwrap()).unwrap();
        // A free port: taken from the kernel, then handed to Prometheus.
        let port = knobel_e2e::free_port();
        let child = tokio::process::Command::new(prometheus_binary())
            .arg(format!("--config.file={}", config_path.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("prometheus is missing: install Debian's prometheus package, or build with KNOBEL_TEST_WITHOUT=prometheus");
        let prometheus = Prometheus {
            child,
            url: format!("http://127.0.0.1:{port}"),
            client: reqwest::Client::new(),
            _dir: dir,
        };
        poll_until(Duration::from_secs(60), "prometheus is ready", || async {
            prometheus
                .client
                .get(format!("{}/-/ready", prometheus.url))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
        })
        .await;
        prometheus
    }

    /// Evaluates `query` now: the `data` of a successful answer; panics on an error.
    async fn query(&self, query: &str) -> Value {
        let answer: Value = self
            .client
            .get(format!("{}/api/v1/query", self.url))
            .query(&[("query", query)])
            .send()
            .await
            .expect("ask prometheus")
            .json()
            .await
            .expect("a JSON answer");
        assert_eq!(answer["status"], "success", "{query}: {answer}");
        answer["data"].clone()
    }

    /// The instant vector of `query`: each series' labels and value.
    async fn vector(&self, query: &str) -> Vec<(BTreeMap<String, String>, f64)> {
        let data = self.query(query).await;
        data["result"]
            .as_array()
            .unwrap_or_else(|| panic!("{query}: {data}"))
            .iter()
            .map(|series| {
                let labels = series["metric"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                    .collect();
                let value = series["value"][1].as_str().unwrap().parse().unwrap();
                (labels, value)
            })
            .collect()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn prometheus_binary() -> PathBuf {
    PathBuf::from(std::env::var_os("KNOBEL_PROMETHEUS").unwrap_or_else(|| "prometheus".into()))
}

/// `promtool check metrics` on `text`: its findings (empty when it accepts it).
fn promtool_check_metrics(text: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool is missing: install Debian's prometheus package");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let findings = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.success() {
        String::new()
    } else {
        findings
    }
}

async fn standings(arena: &Arena) -> pb::GetStandingsResponse {
    arena
        .client()
        .await
        .get_standings(pb::GetStandingsRequest {
            league: "observed".into(),
        })
        .await
        .unwrap()
        .into_inner()
}

fn game_name(game: i32) -> &'static str {
    match pb::Game::try_from(game).unwrap() {
        pb::Game::Schocken => "schocken",
        pb::Game::Sjokken => "sjokken",
        pb::Game::Zokken => "zokken",
        pb::Game::Unspecified => panic!("a game"),
    }
}

/// Every (game, bot) to (mu, sigma, conservative, matches), per game and `overall`.
fn ratings_of(s: &pb::GetStandingsResponse) -> BTreeMap<(String, String), [f64; 4]> {
    let mut ratings = BTreeMap::new();
    let mut put = |game: &str, b: &pb::BotStanding| {
        ratings.insert(
            (game.to_owned(), b.bot.clone()),
            [b.mu, b.sigma, b.conservative, f64::from(b.matches)],
        );
    };
    for g in &s.games {
        for b in &g.bots {
            put(game_name(g.game), b);
        }
    }
    for b in &s.overall {
        put("overall", b);
    }
    ratings
}

/// The same from Prometheus.
async fn ratings_in(prometheus: &Prometheus) -> BTreeMap<(String, String), [f64; 4]> {
    let mut ratings: BTreeMap<(String, String), [f64; 4]> = BTreeMap::new();
    for (i, metric) in [
        "knobel_league_rating_mu",
        "knobel_league_rating_sigma",
        "knobel_league_rating_conservative",
        "knobel_league_bot_matches",
    ]
    .into_iter()
    .enumerate()
    {
        for (labels, value) in prometheus
            .vector(&format!(r#"{metric}{{league="observed"}}"#))
            .await
        {
            let key = (labels["game"].clone(), labels["bot"].clone());
            ratings.entry(key).or_insert([f64::NAN; 4])[i] = value;
        }
    }
    ratings
}

/// Metric names a PromQL expression refers to: `knobel_*` series and `knobel:*` recording
/// rules (the words that are not functions, keywords or label names).
fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut word = String::new();
    let mut in_braces = 0;
    for c in expr.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
            word.push(c);
            continue;
        }
        if in_braces == 0 && word.starts_with("knobel") {
            names.insert(std::mem::take(&mut word));
        }
        word.clear();
        match c {
            '{' => in_braces += 1,
            '}' => in_braces -= 1,
            _ => {}
        }
    }
    names
}

/// The metric names of a scrape (histograms by their base name too).
fn scraped_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let name = line.split(['{', ' ']).next().unwrap().to_owned();
        for suffix in ["_bucket", "_count", "_sum"] {
            if let Some(base) = name.strip_suffix(suffix) {
                names.insert(base.to_owned());
            }
        }
        names.insert(name);
    }
    names
}

/// The rules of `file` in deploy/prometheus/: each one's name (the recorded series or the
/// alert) and expression.
fn rules(file: &str) -> BTreeMap<String, String> {
    let rules: serde_yaml_ng::Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(workspace().join("deploy/prometheus").join(file)).unwrap(),
    )
    .unwrap();
    rules["groups"]
        .as_sequence()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_sequence().unwrap().iter())
        .map(|r| {
            let name = r["record"].as_str().or(r["alert"].as_str()).unwrap();
            (name.to_owned(), r["expr"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// The Grafana dashboard, deploy/grafana/dashboards/knobel.json.
fn dashboard() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(workspace().join("deploy/grafana/dashboards/knobel.json"))
            .unwrap(),
    )
    .unwrap()
}

/// Every query of the dashboard: (panel title, expression), the template variable's query
/// included.
fn dashboard_queries() -> Vec<(String, String)> {
    let dashboard = dashboard();
    let mut queries = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            queries.push((
                panel["title"].as_str().unwrap().to_owned(),
                target["expr"].as_str().unwrap().to_owned(),
            ));
        }
    }
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        if variable["type"] == "query" {
            let query = variable["query"]["query"].as_str().unwrap();
            // label_values(METRIC, LABEL) is Grafana's: Prometheus is asked for METRIC.
            let metric = query
                .strip_prefix("label_values(")
                .and_then(|q| q.split(',').next())
                .unwrap_or(query);
            queries.push((format!("variable {}", variable["name"]), metric.to_owned()));
        }
    }
    queries
}

/// A dashboard expression with Grafana's variables given values.
fn with_variables(expr: &str, game: &str) -> String {
    expr.replace("$league", "observed")
        .replace("$game", game)
        .replace("$__rate_interval", "1m")
        .replace("$__range", "5m")
        .replace("$__interval", "15s")
}

/// The sums of the non-zero series of `metric` in the scrape `text` whose labels `keep`
/// accepts, keyed by the values of the labels `by`.
fn sums(
    text: &str,
    metric: &str,
    by: [&str; 2],
    keep: impl Fn(&BTreeMap<&str, &str>) -> bool,
) -> BTreeMap<(String, String), f64> {
    let mut sums = BTreeMap::new();
    for line in text.lines() {
        let Some((labels, value)) = line
            .strip_prefix(metric)
            .and_then(|rest| rest.strip_prefix('{'))
            .and_then(|rest| rest.split_once("} "))
        else {
            continue;
        };
        let labels: BTreeMap<&str, &str> = labels
            .split(',')
            .filter_map(|kv| kv.split_once("=\""))
            .map(|(k, v)| (k, v.trim_end_matches('"')))
            .collect();
        let value: f64 = value.parse().unwrap();
        if value > 0.0 && keep(&labels) {
            let key = (labels[by[0]].to_owned(), labels[by[1]].to_owned());
            *sums.entry(key).or_insert(0.0) += value;
        }
    }
    sums
}

/// The series of league "observed", not yet started, that are not at their initial values:
/// for every bot, each game and overall, the initial Weng-Lin rating, 0 matches and a rank
/// by name; for each game, 0 matches at each place of its tables (3 seats).
fn missing_initial_series(text: &str) -> Vec<String> {
    let mut missing = Vec::new();
    let mut names: Vec<&str> = BOTS.iter().map(|(name, _)| *name).collect();
    names.sort();
    let sigma = 25.0 / 3.0;
    for game in ["schocken", "sjokken", "zokken", "overall"] {
        for (rank, bot) in names.iter().enumerate() {
            let labels = format!(r#"{{bot="{bot}",game="{game}",league="observed"}}"#);
            for (metric, want) in [
                ("knobel_league_rating_mu", 25.0),
                ("knobel_league_rating_sigma", sigma),
                ("knobel_league_rating_conservative", 25.0 - 3.0 * sigma),
                ("knobel_league_bot_matches", 0.0),
                ("knobel_league_rank", rank as f64 + 1.0),
            ] {
                let series = format!("{metric}{labels}");
                if exact(text, &series).is_none_or(|v| (v - want).abs() > 1e-9) {
                    missing.push(series);
                }
            }
            if game == "schocken" || game == "sjokken" {
                for place in 1..=3 {
                    let series = format!(
                        r#"knobel_league_placings{{bot="{bot}",game="{game}",league="observed",place="{place}"}}"#
                    );
                    if exact(text, &series) != Some(0.0) {
                        missing.push(series);
                    }
                }
            }
        }
    }
    missing
}

/// The value of the one series `series` (name and labels, exactly) in the scrape `text`.
fn exact(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// The bots of each game (and `overall`) in GetStandings' order.
fn standings_order(s: &pb::GetStandingsResponse) -> BTreeMap<String, Vec<&str>> {
    let mut order: BTreeMap<String, Vec<&str>> = s
        .games
        .iter()
        .map(|g| {
            let bots = g.bots.iter().map(|b| b.bot.as_str()).collect();
            (game_name(g.game).to_owned(), bots)
        })
        .collect();
    order.insert(
        "overall".to_owned(),
        s.overall.iter().map(|b| b.bot.as_str()).collect(),
    );
    order
}

/// Every leaderboard table of the dashboard: its game (from the title "Leaderboard: GAME"),
/// the query of the column its `sortBy` transformation sorts by, and whether descending.
fn leaderboard_sorts() -> Vec<(String, String, bool)> {
    let dashboard = dashboard();
    let mut sorts = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        let Some(game) = panel["title"]
            .as_str()
            .unwrap()
            .strip_prefix("Leaderboard: ")
        else {
            continue;
        };
        let transformations = panel["transformations"].as_array().unwrap();
        let find = |id: &str| {
            transformations
                .iter()
                .find(|t| t["id"] == id)
                .unwrap_or_else(|| panic!("leaderboard {game}: no {id} transformation"))
        };
        let sort = &find("sortBy")["options"]["sort"][0];
        let field = sort["field"].as_str().unwrap();
        // The column is a query's value, renamed: "Value #REFID" -> field.
        let renamed = find("organize")["options"]["renameByName"]
            .as_object()
            .unwrap();
        let column = renamed
            .iter()
            .find(|(_, to)| *to == field)
            .map_or(field, |(from, _)| from.as_str());
        let ref_id = column
            .strip_prefix("Value #")
            .unwrap_or_else(|| panic!("leaderboard {game} sorts by {field}, not a query"));
        let target = panel["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["refId"] == ref_id)
            .unwrap_or_else(|| panic!("leaderboard {game}: no query {ref_id}"));
        sorts.push((
            game.to_owned(),
            target["expr"].as_str().unwrap().to_owned(),
            sort["desc"].as_bool().unwrap_or(false),
        ));
    }
    sorts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    knobel_without_prometheus,
    ignore = "KNOBEL_TEST_WITHOUT=prometheus: prometheus is not installed"
)]
async fn prometheus_shows_the_standings_the_dashboard_queries_work_and_the_counters_agree_with_the_store()
 {
    let mut options = ArenaOptions::default();
    // Tables of 8 never fill: the bots play league matches only.
    options.args.extend(["--seats".to_owned(), "8".to_owned()]);
    let arena = Arena::start_with_env(options, &[("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)]).await;
    let target = arena
        .metrics_url
        .strip_prefix("http://")
        .and_then(|r| r.strip_suffix("/metrics"))
        .unwrap()
        .to_owned();
    let prometheus = Prometheus::start(&target).await;

    let mut admin = arena.admin(ADMIN_TOKEN).await;
    let mut bots = tokio::task::JoinSet::new();
    for (i, (name, misbehave)) in BOTS.into_iter().enumerate() {
        let token = admin
            .add_bot(pb::AddBotRequest { name: name.into() })
            .await
            .unwrap()
            .into_inner()
            .token;
        for stream in 0..2 {
            let mut config = BotConfig::new(
                arena.url.clone(),
                Token::new(token.clone()),
                name,
                Game::ALL,
            );
            config.misbehave = misbehave;
            let policy = strategy("heuristic", (i * 2 + stream) as u64).unwrap();
            bots.spawn(Bot::new(config, policy).run());
        }
    }
    // A registered bot has its series at once, before it plays.
    let text = scrape(&arena.metrics_url).await;
    for (name, _) in BOTS {
        let series = format!(r#"knobel_play_streams{{bot="{name}"}}"#);
        assert!(text.contains(&series), "{series} in:\n{text}");
    }
    admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: LEAGUE.into(),
        })
        .await
        .unwrap();
    // Created, not started: every entrant already has its series for each game and
    // overall, at the initial rating, with 0 matches and 0 at every place.
    poll_until(
        Duration::from_secs(60),
        "a created league has every initial series",
        || async {
            let text = scrape(&arena.metrics_url).await;
            let missing = missing_initial_series(&text);
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("it lacks {missing:?}\n{text}"))
            }
        },
    )
    .await;
    admin
        .start_league(pb::LeagueRequest {
            name: "observed".into(),
        })
        .await
        .unwrap();

    // While the league plays: promtool accepts the output, with league series in it.
    poll_until(
        Duration::from_secs(120),
        "the league's series are exported",
        || async {
            let text = scrape(&arena.metrics_url).await;
            if text.contains(r#"knobel_league_matches{league="observed",state="done"}"#) {
                assert_eq!(promtool_check_metrics(&text), "", "promtool check metrics");
                Ok(())
            } else {
                Err(format!("no league series:\n{text}"))
            }
        },
    )
    .await;

    // The league ends.
    let standings = poll_until(
        Duration::from_secs(300),
        "the league has finished",
        || async {
            let s = standings(&arena).await;
            let info = s.league.clone().unwrap();
            if info.status == pb::LeagueStatus::Finished as i32 {
                Ok(s)
            } else {
                Err(format!("{info:?}"))
            }
        },
    )
    .await;
    let expected = ratings_of(&standings);
    assert_eq!(expected.len(), 4 * 4, "four bots, three games and overall");

    // Prometheus has every bot's rating as GetStandings gives it (once it has scraped the
    // final refresh).
    poll_every(
        Duration::from_millis(250),
        Duration::from_secs(60),
        "prometheus has the ratings of GetStandings",
        || async {
            let seen = ratings_in(&prometheus).await;
            let equal = seen.len() == expected.len()
                && seen.iter().zip(&expected).all(|((k1, a), (k2, b))| {
                    k1 == k2
                        && a.iter()
                            .zip(b)
                            .all(|(x, y)| (x - y).abs() <= 1e-9 * y.abs().max(1.0))
                });
            if equal {
                Ok(())
            } else {
                Err(format!(
                    "prometheus ratings differ from GetStandings:\nprometheus {seen:?}\nstandings {expected:?}"
                ))
            }
        },
    )
    .await;
    let progress = prometheus
        .vector(r#"knobel_league_matches{league="observed"}"#)
        .await;
    let total = standings.league.as_ref().unwrap().total_matches as f64;
    for (labels, value) in &progress {
        let want = if labels["state"] == "done" {
            total
        } else {
            0.0
        };
        assert_eq!(*value, want, "{labels:?}");
    }

    // The dashboard: every metric it names is exported (or recorded by a rule), and every
    // query evaluates; the leaderboards list every bot.
    let text = scrape(&arena.metrics_url).await;
    assert_eq!(promtool_check_metrics(&text), "", "promtool check metrics");
    let exported = scraped_names(&text);
    // Every recording rule (and alert) names only exported metrics or recording rules, and
    // every rule it names is one that does.
    let recorded = rules("recording.yml");
    for file in ["recording.yml", "alerts.yml"] {
        for (rule, expr) in rules(file) {
            let names = metric_names(&expr);
            // Only the alert on `up` (Prometheus's own) names no metric of the arena.
            assert!(
                !names.is_empty() || expr.starts_with("up{"),
                "{file}: {rule}: {expr} names no metric"
            );
            for name in &names {
                assert!(
                    exported.contains(name) || (recorded.contains_key(name) && *name != rule),
                    "{file}: {rule}: {expr} names {name}, which the arena does not export"
                );
            }
        }
    }
    // Rules have been evaluated over the scrapes of the league.
    poll_every(
        Duration::from_millis(250),
        Duration::from_secs(60),
        "the recording rules have run",
        || async {
            !prometheus
                .vector("knobel:matches_finished:rate1m")
                .await
                .is_empty()
        },
    )
    .await;
    let queries = dashboard_queries();
    assert!(queries.len() >= 20, "{queries:?}");
    for (title, expr) in &queries {
        let names = metric_names(expr);
        assert!(!names.is_empty(), "{title}: {expr} names no metric");
        for name in &names {
            assert!(
                exported.contains(name) || recorded.contains_key(name),
                "{title}: {expr} names {name}, which the arena does not export"
            );
        }
        for game in ["schocken", "sjokken", "zokken", "overall"] {
            let data = prometheus.query(&with_variables(expr, game)).await;
            if title.starts_with("Leaderboard") || title.starts_with("Conservative rating") {
                let bots: BTreeSet<&str> = data["result"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|s| s["metric"]["bot"].as_str())
                    .collect();
                assert_eq!(bots.len(), 4, "{title} ({game}): {expr}: {data}");
            }
        }
    }
    // Each leaderboard, sorted as the dashboard sorts it, is in GetStandings' order.
    let order = standings_order(&standings);
    let mut boards = 0;
    for (game, expr, descending) in leaderboard_sorts() {
        let mut rows = prometheus.vector(&with_variables(&expr, &game)).await;
        rows.sort_by(|a, b| {
            let by = a.1.total_cmp(&b.1);
            if descending { by.reverse() } else { by }
        });
        let seen: Vec<&str> = rows
            .iter()
            .map(|(labels, _)| labels["bot"].as_str())
            .collect();
        assert_eq!(
            seen, order[&game],
            "leaderboard {game} sorted by {expr}: {rows:?}"
        );
        boards += 1;
    }
    assert_eq!(boards, 4, "a leaderboard per game and overall");
    bots.abort_all();

    // The decision metrics agree with the store.
    let mut db = sqlx::SqliteConnection::connect(&arena.database_url)
        .await
        .unwrap();
    let rows: Vec<(String, String, i64, i64, Option<String>)> = sqlx::query_as(
        "SELECT b.name, m.game, r.strikes, r.timeouts, r.forfeit_reason
         FROM match_seats r JOIN matches m ON m.id = r.match_id JOIN bots b ON b.id = r.bot_id
         WHERE r.place IS NOT NULL",
    )
    .fetch_all(&mut db)
    .await
    .unwrap();
    let aborted: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM matches WHERE status <> 'finished'")
            .fetch_one(&mut db)
            .await
            .unwrap();
    assert_eq!(aborted, 0, "every match finished");
    let mut stored_timeouts = BTreeMap::new();
    let mut stored_strikes = BTreeMap::new();
    let mut stored_forfeits = BTreeMap::new();
    for (bot, game, strikes, timeouts, forfeit) in rows {
        *stored_timeouts
            .entry((bot.clone(), game.clone()))
            .or_insert(0.0) += timeouts as f64;
        *stored_strikes
            .entry((bot.clone(), game.clone()))
            .or_insert(0.0) += strikes as f64;
        if let Some(reason) = forfeit {
            *stored_forfeits.entry((bot, reason)).or_insert(0.0) += 1.0;
        }
    }
    stored_timeouts.retain(|_, n| *n > 0.0);
    stored_strikes.retain(|_, n| *n > 0.0);
    let by_outcome = |outcomes: &[&str]| {
        sums(&text, "knobel_decisions_total", ["bot", "game"], |l| {
            outcomes.contains(&l["outcome"])
        })
    };
    assert_eq!(by_outcome(&["timeout"]), stored_timeouts, "timeouts");
    assert_eq!(
        by_outcome(&["timeout", "illegal", "malformed"]),
        stored_strikes,
        "strikes"
    );
    assert_eq!(
        sums(&text, "knobel_strikes_total", ["bot", "game"], |_| true),
        stored_strikes,
        "knobel_strikes_total"
    );
    assert_eq!(
        sums(&text, "knobel_forfeits_total", ["bot", "reason"], |_| true),
        stored_forfeits,
        "forfeits"
    );
    // The misbehaving bots did misbehave, and were counted.
    assert!(stored_timeouts.keys().any(|(bot, _)| bot == "sleepy"));
    assert!(
        stored_forfeits.contains_key(&("crook".to_owned(), "strikes".to_owned())),
        "{stored_forfeits:?}"
    );
    // Its illegal actions are counted as such, on their own: they are crook's stored
    // strikes less its timeouts and malformed answers (it sends none of those).
    let illegal = by_outcome(&["illegal"]);
    assert!(
        illegal.keys().all(|(bot, _)| bot == "crook"),
        "only crook plays illegal actions: {illegal:?}"
    );
    let malformed = by_outcome(&["malformed"]);
    assert!(malformed.is_empty(), "{malformed:?}");
    let mut stored_illegal = stored_strikes.clone();
    stored_illegal.retain(|(bot, _), _| bot == "crook");
    for (key, n) in &mut stored_illegal {
        *n -= stored_timeouts.get(key).copied().unwrap_or(0.0);
    }
    stored_illegal.retain(|_, n| *n > 0.0);
    assert!(
        !stored_illegal.is_empty(),
        "crook was struck for illegal actions"
    );
    assert_eq!(illegal, stored_illegal, "illegal actions");
    // ...and the good bots' decisions are counted, and in the latency histogram.
    let ok = by_outcome(&["ok", "late"]);
    assert!(ok.keys().any(|(bot, _)| bot == "ada"), "{ok:?}");
    let timed = sums(
        &text,
        "knobel_decision_duration_seconds_count",
        ["bot", "game"],
        |_| true,
    );
    assert!(timed.keys().any(|(bot, _)| bot == "ada"), "{timed:?}");
    drop(prometheus);
    assert!(arena.stop().await.success());
}

/// A bot that answers every request after the deadline (50 ms) but well within its time
/// bank (60 s) has those decisions counted `late`: none `ok`, none timed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_after_the_deadline_within_the_bank_are_counted_late() {
    let options = ArenaOptions {
        args: [
            "--decision-ms",
            "50",
            "--time-bank-ms",
            "60000",
            "--seats",
            "2",
            "--practice",
            "--practice-wait-ms",
            "0",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..ArenaOptions::default()
    };
    let arena = Arena::start_with_env(options, &[("KNOBEL_ADMIN_TOKEN", ADMIN_TOKEN)]).await;
    let mut admin = arena.admin(ADMIN_TOKEN).await;
    let token = admin
        .add_bot(pb::AddBotRequest {
            name: "tardy".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .token;
    let mut config = BotConfig::new(
        arena.url.clone(),
        Token::new(token),
        "tardy",
        [Game::Schocken],
    );
    config.misbehave = Some(Misbehave::Late(Duration::from_millis(120)));
    let bot = tokio::spawn(Bot::new(config, strategy("heuristic", 1).unwrap()).run());
    let outcome = |text: &str, outcome: &str| {
        sums(text, "knobel_decisions_total", ["bot", "outcome"], |l| {
            l["outcome"] == outcome
        })
        .get(&("tardy".to_owned(), outcome.to_owned()))
        .copied()
        .unwrap_or(0.0)
    };
    // Decisions are counted when a match ends.
    let text = poll_until(
        Duration::from_secs(180),
        "a late decision is counted",
        || async {
            let text = scrape(&arena.metrics_url).await;
            if outcome(&text, "late") > 0.0 {
                Ok(text)
            } else {
                Err(format!("none in:\n{text}"))
            }
        },
    )
    .await;
    for other in ["ok", "timeout", "illegal", "malformed"] {
        assert_eq!(outcome(&text, other), 0.0, "{other}:\n{text}");
    }
    // Its decisions took longer than the deadline: none in the deadline's bucket.
    let within_deadline = sums(
        &text,
        "knobel_decision_duration_seconds_bucket",
        ["bot", "le"],
        |l| l["bot"] == "tardy" && l["le"] == "0.05",
    );
    assert!(within_deadline.is_empty(), "{within_deadline:?}");
    bot.abort();
    assert!(arena.stop().await.success());
}

/// Scrapers at once in [`many_scrapers_at_once_from_one_address_are_all_answered`], and the
/// scrapes each makes over its keep-alive connection.
const SCRAPERS: usize = 40;
const SCRAPES_EACH: usize = 25;

/// 40 scrapers at once from 127.0.0.1 (several Prometheus servers behind one address, or a
/// load test), each over a connection of its own opened before any asks, are all answered:
/// none is reset (the metrics port once held at most 16 connections per address).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_scrapers_at_once_from_one_address_are_all_answered() {
    let arena = Arena::start(ArenaOptions::default()).await;
    let host = arena
        .metrics_url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .expect("http://host:port/metrics")
        .to_owned();
    let mut connections = Vec::new();
    for _ in 0..SCRAPERS {
        connections.push(tokio::net::TcpStream::connect(&host).await.unwrap());
    }
    let scrapers: Vec<_> = connections
        .into_iter()
        .map(|mut stream| {
            let host = host.clone();
            tokio::spawn(async move {
                for _ in 0..SCRAPES_EACH {
                    let (status, body) =
                        knobel_e2e::http_request(&mut stream, &host, "/metrics", true).await;
                    assert_eq!(status, 200);
                    assert!(String::from_utf8_lossy(&body).contains("knobel_build_info"));
                }
            })
        })
        .collect();
    let mut answered = 0;
    for scraper in scrapers {
        if scraper.await.is_ok() {
            answered += 1;
        }
    }
    assert_eq!(answered, SCRAPERS, "scrapers answered every time");
    assert!(arena.stop().await.success());
}
