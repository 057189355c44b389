//! A league end to end: an arena (in-process, on a fresh SQLite file) and five built-in
//! bots of clearly different strength as real gRPC clients play a round-robin league over
//! Schocken, Sjokken and Zokken. The test then checks, from the stored results alone:
//! every scheduled match has exactly one result; the standings the arena serves
//! (GetStandings) are recomputed figure by figure, the Weng-Lin ratings with `skillratings`
//! called here in schedule order; the stronger bots stand above the weaker; and the matches
//! of each duplicate set drew the same dice for the same seat, round, throw and die slot.

use std::collections::BTreeMap;
use std::time::Duration;

use knobel_arena::auth::{AdminToken, generate_token};
use knobel_arena::server::{ServerConfig, serve};
use knobel_arena::store::Store;
use knobel_bots::{BearerAuth, Bot, BotConfig, Game, Token, strategy};
use knobel_e2e::poll_until;
use knobel_engine::MatchLog;
use knobel_engine::policy::HEURISTIC_LADDER;
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_client::AdminClient;
use knobel_proto::v1::arena_client::ArenaClient;
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};
use sqlx::Connection;

/// Strongest first.
const BOTS: [(&str, &str); 5] = [
    ("ace", "heuristic"),
    ("canny", HEURISTIC_LADDER[0].0),
    ("dicey", HEURISTIC_LADDER[1].0),
    ("erratic", HEURISTIC_LADDER[3].0),
    ("fumble", "random"),
];

const LEAGUE: &str = r#"
name = "class"
seed = 99
dice = "duplicate"
bots = ["ace", "canny", "dicey", "erratic", "fumble"]
repetitions = 3
concurrency = 6

[games.schocken]
table_size = 4

[games.sjokken]
table_size = 3

[games.zokken]
settings = { rounds = 20 }
"#;

/// One stored seat: ordinal, game, set, rules, bot, place, chips.
type Row = (i64, String, i64, String, String, i64, Option<i64>);

/// A seat's result: bot, place, chips.
type Seat = (String, u8, Option<i64>);

/// A league match as stored: ordinal, game, set, rounds (Zokken), seats.
type Played = (i64, String, i64, u32, Vec<Seat>);

/// The rolled dice of one match, by key.
type Dice = std::collections::HashMap<knobel_engine::DiceKey, u8>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_over_grpc_gives_standings_that_recompute_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("league.db").display());
    let store = Store::connect(&url).await.unwrap();
    let admin_token = generate_token();
    let config = ServerConfig {
        admin_token: Some(AdminToken::new(&admin_token)),
        ..ServerConfig::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(config, store.clone(), listener, None, async {
        let _ = stopped.await;
    }));
    let channel = connect(&addr).await;
    let auth = BearerAuth::new(&Token::new(admin_token)).unwrap();
    let mut admin = AdminClient::with_interceptor(channel.clone(), auth);
    let mut arena = ArenaClient::new(channel);

    // Bad input changes nothing: a bot that is not registered, then (bots registered) a
    // table larger than the field.
    let refusing = admin.clone();
    let refused = |file: String| {
        let mut admin = refusing.clone();
        async move {
            admin
                .create_league(pb::CreateLeagueRequest { config_toml: file })
                .await
                .unwrap_err()
        }
    };
    let err = refused(LEAGUE.to_owned()).await;
    assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
    assert!(
        err.message().contains("line 5: bots: unknown bot \"ace\""),
        "{}",
        err.message()
    );
    let tokens = register_bots(&mut admin).await;
    let err = refused(LEAGUE.replace("table_size = 3", "table_size = 6")).await;
    assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
    assert!(
        err.message().contains(
            "games.sjokken.table_size: a table of 6 seats is larger than the league's 5 bots"
        ),
        "{}",
        err.message()
    );
    let err = admin
        .start_league(pb::LeagueRequest {
            name: "nope".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::NotFound);
    let leagues = arena
        .list_leagues(pb::ListLeaguesRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(
        leagues.leagues.is_empty(),
        "nothing was created: {leagues:?}"
    );

    let mut bots = tokio::task::JoinSet::new();
    for (i, (name, strat)) in BOTS.iter().enumerate() {
        for stream in 0..3 {
            let config = BotConfig::new(
                addr.clone(),
                Token::new(tokens[*name].clone()),
                *name,
                Game::ALL,
            );
            let policy = strategy(strat, (i * 8 + stream) as u64).unwrap();
            bots.spawn(Bot::new(config, policy).run());
        }
    }
    let created = admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: LEAGUE.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .league
        .unwrap();
    // Schocken: C(5,4) = 5 tables x 4 rotations; Sjokken C(5,3) = 10 x 6 orders; Zokken
    // C(5,2) = 10 x 2; three repetitions.
    assert_eq!(created.total_matches, 3 * (20 + 60 + 20));
    let again = admin
        .create_league(pb::CreateLeagueRequest {
            config_toml: LEAGUE.into(),
        })
        .await
        .unwrap_err();
    assert_eq!(again.code(), tonic::Code::AlreadyExists);
    admin
        .start_league(pb::LeagueRequest {
            name: "class".into(),
        })
        .await
        .unwrap();

    let standings = poll_until(Duration::from_secs(900), "the league has finished", || {
        let mut arena = arena.clone();
        async move {
            let s = arena
                .get_standings(pb::GetStandingsRequest {
                    league: "class".into(),
                })
                .await
                .unwrap()
                .into_inner();
            let info = s.league.clone().unwrap();
            if info.status == pb::LeagueStatus::Finished as i32 {
                Ok(s)
            } else {
                Err(format!("{info:?}"))
            }
        }
    })
    .await;
    bots.abort_all();
    let _ = stop.send(());
    server.await.unwrap().unwrap();

    // From here on, only the database file.
    let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let (total, finished, distinct): (i64, i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), SUM(status = 'finished'), COUNT(DISTINCT match_id) FROM league_matches",
    )
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!(
        (total, finished, distinct),
        (300, 300, 300),
        "one result per scheduled match"
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT lm.ordinal, lm.game, lm.set_index, lm.rules_json, s.bot_name, s.place, s.chips \
         FROM league_matches lm JOIN match_seats s ON s.match_id = lm.match_id \
         JOIN matches m ON m.id = lm.match_id AND m.status = 'finished' \
         ORDER BY lm.ordinal, s.seat",
    )
    .fetch_all(&mut db)
    .await
    .unwrap();
    let mut matches: Vec<Played> = Vec::new();
    for (ordinal, game, set, rules, bot, place, chips) in rows {
        if matches.last().is_none_or(|m| m.0 != ordinal) {
            let rules: serde_json::Value = serde_json::from_str(&rules).unwrap();
            let rounds = rules["rounds"].as_u64().unwrap_or(1) as u32;
            matches.push((ordinal, game, set, rounds, Vec::new()));
        }
        matches
            .last_mut()
            .unwrap()
            .4
            .push((bot, place as u8, chips));
    }
    assert_eq!(matches.len(), 300);

    // Ratings, per game and overall, in schedule order, with skillratings.
    let rate = |ratings: &mut BTreeMap<String, WengLinRating>,
                seats: &[(String, u8, Option<i64>)]| {
        let teams: Vec<[WengLinRating; 1]> = seats
            .iter()
            .map(|s| [ratings.get(&s.0).copied().unwrap_or_default()])
            .collect();
        let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
            .iter()
            .zip(seats)
            .map(|(t, s)| (&t[..], MultiTeamOutcome::new(s.1 as usize)))
            .collect();
        for (s, r) in seats
            .iter()
            .zip(weng_lin_multi_team(&input, &WengLinConfig::new()))
        {
            ratings.insert(s.0.clone(), r[0]);
        }
    };
    let mut overall = BTreeMap::new();
    for m in &matches {
        rate(&mut overall, &m.4);
    }
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9 || (a.is_infinite() && b.is_infinite());
    assert!(
        standings
            .overall
            .windows(2)
            .all(|w| w[0].mean_place < w[1].mean_place
                || (w[0].mean_place == w[1].mean_place && w[0].conservative >= w[1].conservative))
    );
    for b in &standings.overall {
        let r = overall[&b.bot];
        assert!(
            close(b.mu, r.rating) && close(b.sigma, r.uncertainty),
            "overall {}: {b:?} vs {r:?}",
            b.bot
        );
        assert!(close(b.conservative, r.rating - 3.0 * r.uncertainty));
    }
    assert_eq!(standings.games.len(), 3);
    for g in &standings.games {
        let name = match pb::Game::try_from(g.game).unwrap() {
            pb::Game::Schocken => "schocken",
            pb::Game::Sjokken => "sjokken",
            _ => "zokken",
        };
        let ms: Vec<_> = matches.iter().filter(|m| m.1 == name).collect();
        assert_eq!(g.matches as usize, ms.len());
        let mut ratings = BTreeMap::new();
        for m in &ms {
            rate(&mut ratings, &m.4);
        }
        // Rows ordered by the game's score basis: where every match has luck-adjusted
        // scores (league matches record them), the adjusted loss rate (lowest first) or
        // adjusted chips (Zokken, highest first); else net chips per 100 rounds or mean
        // place. Ties by the conservative rating.
        let adjusted = g.score_basis == pb::ScoreBasis::Adjusted as i32;
        assert!(adjusted, "{name}: every league match has adjusted scores");
        let key = |b: &pb::BotStanding| {
            let score = b.adjusted.as_ref().expect("an adjusted score").estimate;
            match &b.chips_per_100_rounds {
                Some(_) => -score,
                None => score,
            }
        };
        assert!(g.bots.windows(2).all(|w| key(&w[0]) < key(&w[1])
            || (key(&w[0]) == key(&w[1]) && w[0].conservative >= w[1].conservative)));
        for b in &g.bots {
            let r = ratings[&b.bot];
            assert!(
                close(b.mu, r.rating) && close(b.sigma, r.uncertainty),
                "{name} {}",
                b.bot
            );
            let mine: Vec<(&Seat, &Vec<Seat>, u32)> = ms
                .iter()
                .flat_map(|m| {
                    m.4.iter()
                        .filter(|s| s.0 == b.bot)
                        .map(move |s| (s, &m.4, m.3))
                })
                .collect();
            assert_eq!(b.matches as usize, mine.len());
            let mean_place =
                mine.iter().map(|(s, _, _)| f64::from(s.1)).sum::<f64>() / mine.len() as f64;
            assert!(close(b.mean_place, mean_place));
            if name == "zokken" {
                let per100: Vec<f64> = mine
                    .iter()
                    .map(|(s, _, rounds)| s.2.unwrap() as f64 * 100.0 / f64::from(*rounds))
                    .collect();
                let mean = per100.iter().sum::<f64>() / per100.len() as f64;
                let sd = (per100.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
                    / (per100.len() - 1) as f64)
                    .sqrt();
                let half = 1.959_963_984_540_054 * sd / (per100.len() as f64).sqrt();
                let i = b.chips_per_100_rounds.unwrap();
                assert!(
                    close(i.estimate, mean) && (i.high - mean - half).abs() < 1e-6,
                    "{b:?}"
                );
            } else {
                let lost = mine
                    .iter()
                    .filter(|(s, all, _)| s.1 == all.iter().map(|x| x.1).max().unwrap())
                    .count();
                assert_eq!(b.losses, Some(lost as u32), "{name} {}", b.bot);
                let n = mine.len() as f64;
                let p = lost as f64 / n;
                let z = 1.959_963_984_540_054f64;
                let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
                let half =
                    z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
                let i = b.loss_rate.unwrap();
                assert!(
                    close(i.estimate, p) && (i.low - (centre - half).max(0.0)).abs() < 1e-9,
                    "{b:?}"
                );
                let k = mine[0].1.len() as f64;
                assert!(close(b.average_loss_rate.unwrap(), 1.0 / k));
            }
        }
        // Head to head and paired differences over the duplicate sets.
        for p in &g.pairs {
            let mut shared = 0;
            let (mut a_above, mut b_above) = (0, 0);
            let mut per_set: BTreeMap<i64, (f64, u32)> = BTreeMap::new();
            for m in &ms {
                let (Some(a), Some(b)) = (
                    m.4.iter().find(|s| s.0 == p.a),
                    m.4.iter().find(|s| s.0 == p.b),
                ) else {
                    continue;
                };
                shared += 1;
                a_above += u32::from(a.1 < b.1);
                b_above += u32::from(b.1 < a.1);
                let worst = m.4.iter().map(|s| s.1).max().unwrap();
                let score = |s: &(String, u8, Option<i64>)| {
                    if name == "zokken" {
                        s.2.unwrap() as f64 * 100.0 / f64::from(m.3)
                    } else {
                        f64::from(u8::from(s.1 == worst))
                    }
                };
                let e = per_set.entry(m.2).or_default();
                e.0 += score(a) - score(b);
                e.1 += 1;
            }
            assert_eq!(
                (p.matches, p.a_above, p.b_above, p.sets as usize),
                (shared, a_above, b_above, per_set.len())
            );
            let diffs: Vec<f64> = per_set.values().map(|(s, n)| s / f64::from(*n)).collect();
            let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
            assert!(close(p.paired_difference.unwrap().estimate, mean), "{p:?}");
        }
    }

    // The stronger above the weaker: overall, every two bots two or more steps apart.
    let rank = |bot: &str| standings.overall.iter().position(|b| b.bot == bot).unwrap();
    for (i, (strong, _)) in BOTS.iter().enumerate() {
        for (weak, _) in BOTS.iter().skip(i + 2) {
            assert!(
                rank(strong) < rank(weak),
                "{strong} should stand above {weak}: {:?}",
                standings.overall
            );
        }
    }
    // Per game (fewer matches each): every two bots three or more steps apart.
    for g in &standings.games {
        let rank = |bot: &str| g.bots.iter().position(|b| b.bot == bot).unwrap();
        for (i, (strong, _)) in BOTS.iter().enumerate() {
            for (weak, _) in BOTS.iter().skip(i + 3) {
                assert!(
                    rank(strong) < rank(weak),
                    "{strong} should stand above {weak}: {g:?}"
                );
            }
        }
    }

    // Duplicate sets: the same dice for the same seat, round, throw and die slot.
    let store = Store::connect(&url).await.unwrap();
    let ids: Vec<(i64, String)> =
        sqlx::query_as("SELECT set_index, match_id FROM league_matches ORDER BY ordinal")
            .fetch_all(&mut db)
            .await
            .unwrap();
    let mut sets: BTreeMap<i64, Vec<Dice>> = BTreeMap::new();
    for (set, id) in ids {
        let (_, log) = store.match_log(&id).await.unwrap().unwrap();
        let log = MatchLog::from_json(&log.unwrap()).unwrap();
        let dice = knobel_e2e::thrown_dice(&log);
        sets.entry(set).or_default().push(dice);
    }
    let mut compared = 0;
    for (set, logs) in &sets {
        assert!(logs.len() >= 2);
        for other in &logs[1..] {
            for (key, die) in &logs[0] {
                if let Some(d) = other.get(key) {
                    assert_eq!(d, die, "set {set}: die {key:?} differs between seat orders");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 10_000, "only {compared} dice compared");
}

async fn connect(addr: &str) -> tonic::transport::Channel {
    poll_until(
        Duration::from_secs(30),
        &format!("{addr} takes a connection"),
        || async {
            tonic::transport::Channel::from_shared(addr.to_owned())
                .unwrap()
                .connect()
                .await
                .map_err(|e| format!("cannot connect: {e}"))
        },
    )
    .await
}

type Admin = AdminClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, BearerAuth>,
>;

async fn register_bots(admin: &mut Admin) -> BTreeMap<String, String> {
    let mut tokens = BTreeMap::new();
    for (name, _) in BOTS {
        let token = admin
            .add_bot(pb::AddBotRequest { name: name.into() })
            .await
            .unwrap()
            .into_inner()
            .token;
        tokens.insert(name.to_owned(), token);
    }
    tokens
}
