//! Prometheus metrics, served on their own port (`--metrics-listen`).
//!
//! Labels come from small, bounded sets: the game, fixed outcome and reason names, the
//! registered bots (at most [`MAX_BOT_LABELS`]; later ones share the label value
//! [`OTHER_BOTS`]), and the leagues shown ([`leagues::MAX_LEAGUE_LABELS`]). Never a match id.
//! Series whose labels are known at start-up (every game, outcome and reason; the registered
//! bots; the leagues) exist from start-up, at zero. docs/metrics.md lists every series.
//!
//! Metrics cost the arena time on its hot path only once per seat of a match: the referee
//! keeps a seat's decisions in its report ([`SeatDecisions`]) and they are counted here when
//! the match ends. When the arena runs without a metrics listener, nothing is counted.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use knobel_engine::{ForfeitReason, Game, StrikeReason};
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};
use tokio::net::TcpListener;

use crate::referee::{DecisionOutcome, MatchInfo, MatchReport, TimeControl};
use crate::store::{StoreObserver, StoreOperation};
use knobel_core::observer::{RuntimeObserver, StreamGuard};

pub mod leagues;

/// Registered bots that get a label value of their own, in the order the arena learns of
/// them (at start-up, by registration; then as they are added or first connect).
pub const MAX_BOT_LABELS: usize = 200;

/// The label value the bots beyond [`MAX_BOT_LABELS`] share.
pub const OTHER_BOTS: &str = "(other)";

/// Scrapes within this time of a scrape's rendering get the text it rendered
/// ([`Metrics::scrape_shared`]), or within [`SCRAPE_REUSE_PER_RENDER`] times what the
/// rendering took if that is longer: however many scrapers ask, the series are rendered at
/// most ten times a second, and rendering takes at most a tenth of the time.
pub const SCRAPE_REUSE: Duration = Duration::from_millis(100);

/// See [`SCRAPE_REUSE`]: with 200 bots (24,000 series, 1.8 MB of text), a rendering takes
/// tens of milliseconds, and its text is reused for ten times that.
pub const SCRAPE_REUSE_PER_RENDER: u32 = 10;

/// Every strike reason.
const STRIKE_REASONS: [StrikeReason; 3] = [
    StrikeReason::Timeout,
    StrikeReason::IllegalAction,
    StrikeReason::Malformed,
];

/// Bucket bounds of the decision latency histogram, in seconds; the arena's deadline, twice
/// it and the deadline plus the whole time bank are added (leagues may set their own
/// deadlines: the fixed bounds reach a minute), so that late answers and timeouts fall
/// into buckets of their own.
const DECISION_BUCKETS: [f64; 16] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0,
];

/// The arena's metrics.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    /// False: nothing is counted (the arena serves no metrics).
    enabled: bool,
    registry: Registry,
    bots: Mutex<HashSet<String>>,
    matches_started: IntCounterVec,
    matches_ended: IntCounterVec,
    decisions: IntCounterVec,
    decision_seconds: HistogramVec,
    strikes: IntCounterVec,
    forfeits: IntCounterVec,
    streams: IntGaugeVec,
    store_commit_seconds: HistogramVec,
    store_errors: IntCounterVec,
    store_pending: IntGauge,
    stale_results: IntCounter,
    leagues: leagues::LeagueGauges,
    /// The last scrape's text, when its rendering began and how long it took: served again
    /// to the scrapes within `reuse` of that, or `reuse_per_render` times what it took
    /// ([`Metrics::scrape_shared`]).
    scraped: tokio::sync::Mutex<Option<(Instant, Duration, Bytes)>>,
    reuse: Duration,
    reuse_per_render: u32,
    /// Texts rendered for scrapes.
    renders: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new(TimeControl::default())
    }
}

/// Series known at start-up exist from start-up: matches started and ended per game and
/// status, store errors per operation, commits per result.
fn start_up_series(
    matches_started: &IntCounterVec,
    matches_ended: &IntCounterVec,
    store_errors: &IntCounterVec,
    store_commit_seconds: &HistogramVec,
) {
    for game in Game::ALL {
        let g = game.name();
        matches_started.with_label_values(&[g]);
        for status in ["finished", "aborted"] {
            matches_ended.with_label_values(&[g, status]);
        }
    }
    for operation in StoreOperation::ALL {
        store_errors.with_label_values(&[operation.name()]);
    }
    for result in ["ok", "error"] {
        store_commit_seconds.with_label_values(&[result]);
    }
}

/// Registers metrics in one registry, panicking on a programming error (a bad or duplicate
/// name), which the unit tests catch.
pub(crate) struct Register<'a>(pub(crate) &'a Registry);

impl Register<'_> {
    /// `build_info`: always 1, the arena's version in a label.
    fn build_info(&self) {
        let build_info = self.gauge(
            "build_info",
            "The arena's version: always 1, the version in a label.",
            &["version"],
        );
        build_info
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1);
    }

    /// The store's metrics: commit durations by result, failed calls by operation, the
    /// records kept for a retry, and the late results refused.
    fn store_metrics(&self) -> (HistogramVec, IntCounterVec, IntGauge, IntCounter) {
        let store_commit_seconds = self.histogram(
            "store_commit_duration_seconds",
            "Time to commit one batch of match records (starts, results, aborts), by whether \
             it went through.",
            vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ],
            &["result"],
        );
        let store_errors = self.counter(
            "store_errors_total",
            "Store calls that failed because the database was unavailable (down, unreachable \
             or too slow), by operation.",
            &["operation"],
        );
        let store_pending = IntGauge::new(
            "store_pending_writes",
            "Match records kept for a retry while the database is unavailable.",
        )
        .expect("valid metric");
        self.0
            .register(Box::new(store_pending.clone()))
            .expect("unique metric");
        let stale_results = IntCounter::new(
            "stale_results_refused_total",
            "Match results refused because their match was no longer running: another arena \
             aborted it after this arena's lease ran out (a paused or cut-off arena's late \
             result; the match is played again, the result never counted).",
        )
        .expect("valid metric");
        self.0
            .register(Box::new(stale_results.clone()))
            .expect("unique metric");
        (
            store_commit_seconds,
            store_errors,
            store_pending,
            stale_results,
        )
    }

    pub(crate) fn counter(&self, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
        let c = IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric");
        self.0.register(Box::new(c.clone())).expect("unique metric");
        c
    }

    pub(crate) fn gauge(&self, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
        let g = IntGaugeVec::new(Opts::new(name, help), labels).expect("valid metric");
        self.0.register(Box::new(g.clone())).expect("unique metric");
        g
    }

    pub(crate) fn float_gauge(
        &self,
        name: &str,
        help: &str,
        labels: &[&str],
    ) -> prometheus::GaugeVec {
        let g = prometheus::GaugeVec::new(Opts::new(name, help), labels).expect("valid metric");
        self.0.register(Box::new(g.clone())).expect("unique metric");
        g
    }

    pub(crate) fn histogram(
        &self,
        name: &str,
        help: &str,
        buckets: Vec<f64>,
        labels: &[&str],
    ) -> HistogramVec {
        let h = HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets), labels)
            .expect("valid metric");
        self.0.register(Box::new(h.clone())).expect("unique metric");
        h
    }
}

/// The decision histogram's buckets for `time`: [`DECISION_BUCKETS`], the deadline, twice
/// it, and the deadline plus the bank.
fn decision_buckets(time: TimeControl) -> Vec<f64> {
    let deadline = time.decision.as_secs_f64();
    let mut buckets = DECISION_BUCKETS.to_vec();
    buckets.extend([
        deadline,
        2.0 * deadline,
        (time.decision + time.time_bank).as_secs_f64(),
    ]);
    buckets.sort_by(f64::total_cmp);
    buckets.dedup();
    buckets
}

impl Metrics {
    /// Fresh metrics in their own registry; decision buckets fit `time`.
    pub fn new(time: TimeControl) -> Metrics {
        Metrics::build(time, true)
    }

    /// Metrics that count nothing (the arena serves none): their registry stays empty of
    /// values.
    pub fn disabled() -> Metrics {
        Metrics::build(TimeControl::default(), false)
    }

    /// Fresh metrics whose scrapes reuse a text for `reuse`, or `per_render` times what it
    /// took to render ([`SCRAPE_REUSE`] and [`SCRAPE_REUSE_PER_RENDER`] for
    /// [`Metrics::new`]).
    #[cfg(test)]
    pub(crate) fn reusing_scrapes_for(reuse: Duration, per_render: u32) -> Metrics {
        Metrics::build_with(TimeControl::default(), true, (reuse, per_render))
    }

    fn build(time: TimeControl, enabled: bool) -> Metrics {
        Metrics::build_with(time, enabled, (SCRAPE_REUSE, SCRAPE_REUSE_PER_RENDER))
    }

    fn build_with(time: TimeControl, enabled: bool, reuse: (Duration, u32)) -> Metrics {
        let registry = Registry::new_custom(Some("knobel".to_owned()), None).expect("valid prefix");
        let r = Register(&registry);
        r.build_info();
        let matches_started = r.counter("matches_started_total", "Matches started.", &["game"]);
        let matches_ended = r.counter(
            "matches_ended_total",
            "Matches ended, by status (finished or aborted).",
            &["game", "status"],
        );
        let decisions = r.counter(
            "decisions_total",
            "Decisions asked of connected bots, by how they ended: ok (a legal action within \
             the deadline), late (legal, after the deadline, paid from the time bank), timeout, \
             illegal, malformed (the last three are strikes), forfeited (the seat forfeited \
             before it answered). Counted when the match ends.",
            &["game", "bot", "outcome"],
        );
        let decision_seconds = r.histogram(
            "decision_duration_seconds",
            "Time from a decision request to the bot's answer; a timeout counts the whole \
             deadline and time bank it waited. Buckets include the deadline, twice it, and the \
             deadline plus the bank.",
            decision_buckets(time),
            &["game", "bot"],
        );
        let strikes = r.counter(
            "strikes_total",
            "Strikes given to bots, by reason (timeout, illegal_action, malformed).",
            &["game", "bot", "reason"],
        );
        let forfeits = r.counter(
            "forfeits_total",
            "Seats forfeited by bots, by reason (strikes, disconnected, not_reading, revoked, \
             absent).",
            &["game", "bot", "reason"],
        );
        let streams = r.gauge("play_streams", "Open Play streams, per bot.", &["bot"]);
        let (store_commit_seconds, store_errors, store_pending, stale_results) = r.store_metrics();
        let leagues = leagues::LeagueGauges::new();
        start_up_series(
            &matches_started,
            &matches_ended,
            &store_errors,
            &store_commit_seconds,
        );
        Metrics {
            inner: Arc::new(Inner {
                enabled,
                registry,
                bots: Mutex::new(HashSet::new()),
                matches_started,
                matches_ended,
                decisions,
                decision_seconds,
                strikes,
                forfeits,
                streams,
                store_commit_seconds,
                store_errors,
                store_pending,
                stale_results,
                leagues,
                scraped: tokio::sync::Mutex::new(None),
                reuse: reuse.0,
                reuse_per_render: reuse.1,
                renders: AtomicU64::new(0),
            }),
        }
    }

    /// Whether anything is counted.
    pub fn enabled(&self) -> bool {
        self.inner.enabled
    }

    /// The registry the metrics are in (other modules register theirs here).
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The label value of bot `name`: its name if it has (or now gets) a label of its own,
    /// [`OTHER_BOTS`] once [`MAX_BOT_LABELS`] are taken.
    fn bot_label(&self, name: &str) -> String {
        let mut bots = self.inner.bots.lock().expect("metrics lock");
        if bots.contains(name) {
            return name.to_owned();
        }
        if bots.len() >= MAX_BOT_LABELS {
            return OTHER_BOTS.to_owned();
        }
        bots.insert(name.to_owned());
        drop(bots);
        self.create_bot_series(name);
        name.to_owned()
    }

    /// Every per-bot series of `bot`, at zero.
    fn create_bot_series(&self, bot: &str) {
        let inner = &self.inner;
        for game in Game::ALL {
            let g = game.name();
            for outcome in DecisionOutcome::ALL {
                inner.decisions.with_label_values(&[g, bot, outcome.name()]);
            }
            inner.decision_seconds.with_label_values(&[g, bot]);
            for reason in STRIKE_REASONS {
                inner.strikes.with_label_values(&[g, bot, reason.name()]);
            }
            for reason in ForfeitReason::ALL {
                inner.forfeits.with_label_values(&[g, bot, reason.name()]);
            }
        }
        inner.streams.with_label_values(&[bot]);
    }

    /// Bot `name` is registered (at start-up, in registration order, or by AddBot): it gets
    /// its series now if there is room for its label.
    pub fn bot_registered(&self, name: &str) {
        if self.inner.enabled {
            self.bot_label(name);
        }
    }

    /// A match of `game` started.
    pub fn match_started(&self, game: Game) {
        if !self.inner.enabled {
            return;
        }
        self.inner
            .matches_started
            .with_label_values(&[game.name()])
            .inc();
    }

    /// The match of `info` ended with `report`: its status, and every bot seat's decisions,
    /// strikes and forfeit.
    pub fn match_ended(&self, info: &MatchInfo, report: &MatchReport) {
        let inner = &self.inner;
        if !inner.enabled {
            return;
        }
        let game = info.rules.game().name();
        let status = if report.outcome.is_some() {
            "finished"
        } else {
            "aborted"
        };
        inner.matches_ended.with_label_values(&[game, status]).inc();
        for (seat, decisions) in report.seats.iter().enumerate() {
            if info.seat_bot_ids.get(seat).is_none_or(Option::is_none) {
                continue;
            }
            let bot = self.bot_label(&info.seat_names[seat]);
            for outcome in DecisionOutcome::ALL {
                let n = decisions.count(outcome);
                if n > 0 {
                    inner
                        .decisions
                        .with_label_values(&[game, &bot, outcome.name()])
                        .inc_by(n);
                }
            }
            let histogram = inner.decision_seconds.with_label_values(&[game, &bot]);
            for &seconds in &decisions.seconds {
                histogram.observe(seconds);
            }
            for reason in STRIKE_REASONS {
                let n = decisions.count(DecisionOutcome::of_strike(reason));
                if n > 0 {
                    inner
                        .strikes
                        .with_label_values(&[game, &bot, reason.name()])
                        .inc_by(n);
                }
            }
            if let Some(Some(reason)) = report.forfeit_reasons.get(seat) {
                inner
                    .forfeits
                    .with_label_values(&[game, &bot, reason.name()])
                    .inc();
            }
        }
    }

    /// A Play stream of bot `name` opened; the gauge goes down again when the returned
    /// handle is dropped.
    pub fn stream_opened(&self, name: &str) -> StreamGauge {
        if !self.inner.enabled {
            return StreamGauge(None);
        }
        let gauge = self
            .inner
            .streams
            .with_label_values(&[&self.bot_label(name)]);
        gauge.inc();
        StreamGauge(Some(gauge))
    }

    /// The league gauges.
    pub(crate) fn leagues(&self) -> Option<&leagues::LeagueGauges> {
        self.inner.enabled.then_some(&self.inner.leagues)
    }

    /// The metrics in Prometheus' text format, every series as it is now (the league
    /// series too, rendered anew: see [`Metrics::scrape`] for what a scrape gets).
    pub fn render(&self) -> String {
        let mut buffer = self.render_own();
        buffer.extend_from_slice(&self.inner.leagues.render());
        String::from_utf8(buffer).unwrap_or_default()
    }

    /// The series of the arena's own registry (all but the league series), as text.
    fn render_own(&self) -> Vec<u8> {
        let mut buffer = Vec::new();
        let encoder = TextEncoder::new();
        encoder
            .encode(&self.inner.registry.gather(), &mut buffer)
            .expect("text encoding cannot fail");
        buffer
    }

    /// What a scrape of `/metrics` gets: the arena's own series as they are now, then the
    /// league series as the refresh last published them ([`leagues::refresh`], with each
    /// league snapshot that changed them). Its cost does not depend on the
    /// leagues or on what is stored: no store call, no standings, no league series
    /// rendered.
    pub fn scrape(&self) -> Bytes {
        self.inner.renders.fetch_add(1, Ordering::Relaxed);
        let leagues = self.inner.leagues.published();
        let mut buffer = self.render_own();
        buffer.extend_from_slice(&leagues);
        Bytes::from(buffer)
    }

    /// What a scrape of `/metrics` is served: [`Metrics::scrape`], rendered (off the
    /// runtime's workers) at most once per [`SCRAPE_REUSE`], or per
    /// [`SCRAPE_REUSE_PER_RENDER`] times what rendering took. A scrape within that time of
    /// a rendering gets its text; scrapes that arrive while one is rendered wait for it. So
    /// many scrapers at once cost about what one costs, and a text is at most that much
    /// older than its scrape (plus the time a rendering takes).
    pub async fn scrape_shared(&self) -> Bytes {
        let inner = &self.inner;
        let mut last = inner.scraped.lock().await;
        if let Some((at, took, text)) = &*last
            && at.elapsed() < inner.reuse.max(took.saturating_mul(inner.reuse_per_render))
        {
            return text.clone();
        }
        let began = Instant::now();
        let metrics = self.clone();
        let text = crate::shutdown::on_blocking_thread(move || metrics.scrape()).await;
        *last = Some((began, began.elapsed(), text.clone()));
        text
    }

    /// Texts rendered for scrapes so far.
    #[cfg(test)]
    pub(crate) fn renders(&self) -> u64 {
        self.inner.renders.load(Ordering::Relaxed)
    }

    /// Serves `GET /metrics` on `listener` until `shutdown` resolves; fails with the error
    /// that leaves the listening socket unusable (it was closed or shut down).
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let app = axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let metrics = self.clone();
                async move {
                    (
                        [(axum::http::header::CONTENT_TYPE, prometheus::TEXT_FORMAT)],
                        metrics.scrape_shared().await,
                    )
                }
            }),
        );
        let mut listener = crate::net::MetricsListener::new(listener);
        let failure = listener.failure();
        let served = axum::serve(listener, app).with_graceful_shutdown(shutdown);
        tokio::select! {
            served = served => served,
            Ok(error) = failure => Err(error),
        }
    }
}

/// One open Play stream, counted in `knobel_play_streams` until dropped.
pub struct StreamGauge(Option<prometheus::IntGauge>);

impl Drop for StreamGauge {
    fn drop(&mut self) {
        if let Some(gauge) = &self.0 {
            gauge.dec();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;

/// The runtime's matches and streams, as `knobel_matches_started_total`,
/// `knobel_matches_ended_total` (with every seat's decisions, strikes and forfeits) and
/// `knobel_play_streams`.
impl RuntimeObserver for Metrics {
    fn match_started(&self, game: Game) {
        Metrics::match_started(self, game)
    }

    fn match_ended(&self, info: &MatchInfo, report: &MatchReport) {
        Metrics::match_ended(self, info, report)
    }

    fn stream_opened(&self, bot: &str) -> StreamGuard {
        StreamGuard::holding(Metrics::stream_opened(self, bot))
    }
}

/// The store's failures, retry backlog, commits and refused late results, as
/// `knobel_store_errors_total`, `knobel_store_pending_writes`,
/// `knobel_store_commit_duration_seconds` and `knobel_stale_results_refused_total`.
impl StoreObserver for Metrics {
    fn failed(&self, operation: StoreOperation) {
        if !self.inner.enabled {
            return;
        }
        self.inner
            .store_errors
            .with_label_values(&[operation.name()])
            .inc();
    }

    fn pending_writes(&self, writes: usize) {
        if !self.inner.enabled {
            return;
        }
        self.inner
            .store_pending
            .set(i64::try_from(writes).unwrap_or(i64::MAX));
    }

    fn committed(&self, ok: bool, took: Duration) {
        if !self.inner.enabled {
            return;
        }
        self.inner
            .store_commit_seconds
            .with_label_values(&[if ok { "ok" } else { "error" }])
            .observe(took.as_secs_f64());
    }

    fn stale_result_refused(&self) {
        if self.inner.enabled {
            self.inner.stale_results.inc();
        }
    }
}
