//! The client library against a real arena, started in-process on 127.0.0.1:0 with a
//! temporary SQLite store and practice mode (built-in players fill the empty seats).

use std::time::Duration;

use knobel_arena::auth;
use knobel_arena::lobby::LobbyConfig;
use knobel_arena::referee::TimeControl;
use knobel_arena::server::{ServeError, ServerConfig, serve};
use knobel_arena::store::Store;
use knobel_bots::{Backoff, BotConfig, BotError, Game, Misbehave, RunReport, run_bot};
use knobel_engine::policy::{HeuristicPolicy, RandomPolicy, TimidPolicy};
use knobel_engine::{LogEntry, MatchLog};
use knobel_proto::v1 as pb;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running in-process arena.
struct TestArena {
    url: String,
    token: String,
    shutdown: oneshot::Sender<()>,
    server: JoinHandle<Result<(), ServeError>>,
    store: Store,
    _dir: tempfile::TempDir,
}

impl TestArena {
    /// An arena in practice mode with 3 seats, 5-round Zokken matches and `time_control`,
    /// and one registered bot.
    async fn start(time_control: TimeControl) -> TestArena {
        TestArena::start_with(time_control, Duration::ZERO).await
    }

    /// The same, with bots waiting `practice_wait` before practice fills their table.
    async fn start_with(time_control: TimeControl, practice_wait: Duration) -> TestArena {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("arena.db").display());
        let store = Store::connect(&url).await.expect("open the store");
        let token = auth::generate_token();
        store
            .add_bot("tester", &auth::hash_token(&token))
            .await
            .expect("register the bot");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        // `..default()` keeps settings added to the arena later at their defaults.
        #[allow(clippy::needless_update)]
        let lobby = LobbyConfig {
            seats: 3,
            practice: true,
            practice_wait,
            time_control,
            presets: knobel_arena::lobby::PresetRules::new(Some(5)).unwrap(),
            ..LobbyConfig::default()
        };
        #[allow(clippy::needless_update)]
        let config = ServerConfig {
            lobby,
            max_streams_per_bot: 16,
            shutdown_grace: Duration::from_secs(2),
            ..ServerConfig::default()
        };
        let (shutdown, signal) = oneshot::channel::<()>();
        let server = tokio::spawn(serve(config, store.clone(), listener, None, async move {
            let _ = signal.await;
        }));
        TestArena {
            url: format!("http://{addr}"),
            token,
            shutdown,
            server,
            store,
            _dir: dir,
        }
    }

    /// How many decisions `seat` made in the stored log of the finished match `id`.
    async fn decisions_of(&self, id: &str, seat: u32) -> usize {
        let (_, log) = self
            .store
            .match_log(id)
            .await
            .expect("read the match log")
            .expect("the match is stored");
        let log = MatchLog::from_json(&log.expect("a finished match has a log")).expect("log");
        log.entries
            .iter()
            .filter(|e| matches!(e, LogEntry::Decision { seat: s, .. } if u32::from(s.0) == seat))
            .count()
    }

    fn config(&self, game: Game) -> BotConfig {
        let mut config = BotConfig::new(&self.url, self.token.as_str(), "tester", [game]);
        config.max_matches = Some(1);
        config.max_attempts = Some(5);
        config.backoff = Backoff::new(Duration::from_millis(20), Duration::from_millis(200));
        config
    }

    /// Shuts the arena down and checks that it stops cleanly.
    async fn stop(self) {
        let _ = self.shutdown.send(());
        tokio::time::timeout(Duration::from_secs(20), self.server)
            .await
            .expect("the arena did not stop within 20 s")
            .expect("the server task panicked")
            .expect("the arena failed");
    }
}

const WITHIN: Duration = Duration::from_secs(90);

async fn within(run: impl Future<Output = Result<RunReport, BotError>>) -> RunReport {
    tokio::time::timeout(WITHIN, run)
        .await
        .expect("the bot did not finish in time")
        .expect("the bot failed")
}

fn quick() -> TimeControl {
    TimeControl {
        decision: Duration::from_millis(2000),
        time_bank: Duration::from_millis(5000),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plays_one_full_match_of_every_game() {
    let arena = TestArena::start(quick()).await;
    let mut bots = Vec::new();
    for game in Game::ALL {
        bots.push(tokio::spawn(run_bot(arena.config(game), HeuristicPolicy)));
    }
    for (game, bot) in Game::ALL.into_iter().zip(bots) {
        let report = within(async { bot.await.expect("bot task") }).await;
        assert_eq!(report.matches.len(), 1, "{game}: {report:?}");
        let summary = &report.matches[0];
        assert_eq!(summary.game, Some(game));
        assert!(summary.finished, "{summary:?}");
        assert_eq!(summary.seats, 3);
        assert!((1..=3).contains(&summary.place), "{summary:?}");
        // Every request was answered once and logged; a seat can have none (a SJOK1 in
        // its first throw frees it before it decides anything).
        let decided = arena
            .decisions_of(&summary.match_id, summary.your_seat)
            .await;
        assert_eq!(summary.requests as usize, decided, "{summary:?}");
        assert!(summary.errors.is_empty(), "{summary:?}");
        assert!(!summary.forfeited);
        let line = summary.to_string();
        assert!(
            line.starts_with(&format!(
                "match {} {} place ",
                summary.match_id,
                game.name()
            )),
            "{line}"
        );
        assert!(
            line.contains(&format!(
                " place {}/3 requests {} strikes 0 forfeited false errors []",
                summary.place, summary.requests
            )),
            "{line}"
        );
        assert_eq!(report.connections, 1);
    }
    arena.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_pings_are_answered() {
    // The bot waits a second in the lobby before practice seats it: time for a few pings.
    let arena = TestArena::start_with(quick(), Duration::from_secs(1)).await;
    let mut config = arena.config(Game::Sjokken);
    config.ping_interval = Some(Duration::from_millis(100));
    let report = within(run_bot(config, HeuristicPolicy)).await;
    assert!(report.pongs >= 3, "{report:?}");
    assert!(report.matches[0].finished);
    assert!(report.matches[0].errors.is_empty(), "{report:?}");
    arena.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closures_and_every_reference_strategy_play() {
    let arena = TestArena::start(quick()).await;
    let first_legal = |_: &knobel_bots::Observation, legal: &[knobel_bots::Action]| legal[0];
    let runs = vec![
        tokio::spawn(run_bot(arena.config(Game::Zokken), first_legal)),
        tokio::spawn(run_bot(arena.config(Game::Sjokken), RandomPolicy::new(7))),
        tokio::spawn(run_bot(arena.config(Game::Schocken), TimidPolicy)),
        tokio::spawn(run_bot(
            arena.config(Game::Zokken),
            knobel_bots::strategy("random", 1).unwrap(),
        )),
    ];
    for run in runs {
        let report = within(async { run.await.expect("bot task") }).await;
        assert!(report.matches[0].finished);
        assert!(report.matches[0].errors.is_empty(), "{report:?}");
    }
    arena.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_stops_the_bot_at_once() {
    let arena = TestArena::start(quick()).await;
    let mut config = arena.config(Game::Schocken);
    config.token = "knb_not-a-registered-token".into();
    config.max_attempts = None;
    let error = tokio::time::timeout(Duration::from_secs(10), run_bot(config, HeuristicPolicy))
        .await
        .expect("a refused token must not be retried")
        .expect_err("a wrong token fails");
    assert!(matches!(error, BotError::Unauthenticated(_)), "{error}");
    assert!(!error.to_string().contains("not-a-registered"), "{error}");
    arena.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_hello_is_refused_before_connecting() {
    let mut config = BotConfig::new("http://127.0.0.1:1", "knb_x", "", [Game::Schocken]);
    config.max_attempts = Some(1);
    let error = run_bot(config, HeuristicPolicy).await.unwrap_err();
    assert!(matches!(error, BotError::InvalidConfig(_)), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_arena_is_retried_then_given_up() {
    // A port nobody listens on: bind, then drop the listener.
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = BotConfig::new(format!("127.0.0.1:{port}"), "knb_x", "b", [Game::Schocken]);
    config.max_attempts = Some(3);
    config.backoff = Backoff::new(Duration::from_millis(10), Duration::from_millis(40));
    let error = run_bot(config, HeuristicPolicy).await.unwrap_err();
    assert!(
        matches!(error, BotError::GaveUp { attempts: 3, .. }),
        "{error}"
    );
}

/// Plays one match of `game` misbehaving as `mode`, on an arena with a tight clock.
async fn misbehave(arena: &TestArena, game: Game, mode: Misbehave) -> RunReport {
    let mut config = arena.config(game);
    config.misbehave = Some(mode);
    config.max_attempts = Some(5);
    within(run_bot(config, HeuristicPolicy)).await
}

fn tight() -> TimeControl {
    TimeControl {
        decision: Duration::from_millis(300),
        time_bank: Duration::from_millis(300),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn illegal_answers_are_struck_and_forfeit_the_seat() {
    let arena = TestArena::start(tight()).await;
    for game in Game::ALL {
        // A practice match's dice are fresh each time, and now and then (about one match in
        // thirty, in Sjokken) the match ends before the bot is asked a third time: each of
        // its illegal answers is struck all the same, and another match is played, up to 5.
        let mut forfeited = None;
        for _ in 0..5 {
            let report = misbehave(&arena, game, Misbehave::Illegal).await;
            let summary = report.matches[0].clone();
            assert!(summary.finished, "{summary:?}");
            let struck = summary.errors.len();
            if summary.requests == 0 {
                // Rarer still, the bot is never asked (in Sjokken its first throw, which
                // is no decision, or another seat's can be SJOK1 and end its game): nothing
                // to strike.
                assert_eq!((struck, summary.strikes), (0, 0), "{game}: {summary:?}");
                assert!(!summary.forfeited, "{game}: {summary:?}");
                continue;
            }
            assert!((1..=3).contains(&struck), "{game}: {summary:?}");
            assert_eq!(
                summary.errors,
                vec![pb::ErrorCode::IllegalAction; struck],
                "{game}: {summary:?}"
            );
            assert_eq!(summary.strikes as usize, struck, "{game}: {summary:?}");
            assert_eq!(summary.forfeited, struck == 3, "{game}: {summary:?}");
            if summary.forfeited {
                forfeited = Some(summary);
                break;
            }
        }
        let summary = forfeited.unwrap_or_else(|| panic!("{game}: no match reached 3 strikes"));
        assert_eq!(summary.place, 3, "a forfeited seat is last");
    }
    arena.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_answers_are_refused_without_strikes() {
    let arena = TestArena::start(quick()).await;
    let report = misbehave(&arena, Game::Zokken, Misbehave::Stale).await;
    let summary = &report.matches[0];
    assert!(summary.finished);
    assert!(!summary.errors.is_empty());
    assert!(
        summary
            .errors
            .iter()
            .all(|&c| c == pb::ErrorCode::StaleRequest),
        "{summary:?}"
    );
    assert_eq!(summary.strikes, 0);
    assert!(!summary.forfeited);
    arena.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_late_bots_time_out_and_forfeit() {
    let arena = TestArena::start(tight()).await;
    for mode in [
        Misbehave::NeverAnswer,
        Misbehave::Late(Duration::from_millis(1500)),
    ] {
        let report = misbehave(&arena, Game::Schocken, mode).await;
        let summary = &report.matches[0];
        assert!(summary.finished, "{mode}: {summary:?}");
        assert!(
            summary.errors.contains(&pb::ErrorCode::Timeout),
            "{mode}: {summary:?}"
        );
        assert!(summary.forfeited, "{mode}: {summary:?}");
        assert_eq!(summary.place, 3, "{mode}: {summary:?}");
    }
    arena.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_streams_are_dropped_and_the_bot_plays_on_after_reconnecting() {
    let arena = TestArena::start(quick()).await;
    for mode in [
        Misbehave::DisconnectAfter(2),
        Misbehave::Garbage,
        Misbehave::Oversized,
    ] {
        let report = misbehave(&arena, Game::Zokken, mode).await;
        assert_eq!(report.connections, 2, "{mode}: {report:?}");
        assert_eq!(report.matches.len(), 1, "{mode}: {report:?}");
        let summary = &report.matches[0];
        assert!(summary.finished, "{mode}: {summary:?}");
        assert!(summary.errors.is_empty(), "{mode}: {summary:?}");
    }
    arena.stop().await;
}
