//! Prometheus metrics, served on their own port. Labels are few and fixed: the game, and for
//! finished matches the status. Never a match id or a bot name.

use std::sync::Arc;

use knobel_engine::Game;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, Opts, Registry, TextEncoder,
};
use tokio::net::TcpListener;

use crate::referee::MatchReport;

/// The arena's metrics.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    matches_started: IntCounterVec,
    matches_ended: IntCounterVec,
    decisions: IntCounterVec,
    timeouts: IntCounterVec,
    forfeits: IntCounterVec,
    streams: IntGauge,
    decision_seconds: HistogramVec,
    store_errors: IntCounterVec,
    store_pending: IntGauge,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// Fresh metrics in their own registry.
    pub fn new() -> Metrics {
        let registry = Registry::new_custom(Some("knobel".to_owned()), None).expect("valid prefix");
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let c = IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric");
            registry
                .register(Box::new(c.clone()))
                .expect("unique metric");
            c
        };
        let matches_started = counter("matches_started_total", "Matches started.", &["game"]);
        let matches_ended = counter(
            "matches_ended_total",
            "Matches ended, by status (finished or aborted).",
            &["game", "status"],
        );
        let decisions = counter(
            "decisions_total",
            "Decisions asked of connected bots.",
            &["game"],
        );
        let timeouts = counter("timeouts_total", "Decisions that timed out.", &["game"]);
        let forfeits = counter(
            "forfeits_total",
            "Seats forfeited (three strikes, a disconnect, a bot that does not read or never took its seat).",
            &["game"],
        );
        let streams = IntGauge::new("play_streams", "Open Play streams.").expect("valid metric");
        registry
            .register(Box::new(streams.clone()))
            .expect("unique metric");
        let decision_seconds = HistogramVec::new(
            HistogramOpts::new(
                "decision_seconds",
                "Time from a decision request to the bot's answer.",
            )
            .buckets(vec![
                0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["game"],
        )
        .expect("valid metric");
        registry
            .register(Box::new(decision_seconds.clone()))
            .expect("unique metric");
        let store_errors = counter(
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
        registry
            .register(Box::new(store_pending.clone()))
            .expect("unique metric");
        Metrics {
            inner: Arc::new(Inner {
                registry,
                matches_started,
                matches_ended,
                decisions,
                timeouts,
                forfeits,
                streams,
                decision_seconds,
                store_errors,
                store_pending,
            }),
        }
    }

    /// The registry the metrics are in (other modules register theirs here).
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// A match of `game` started.
    pub fn match_started(&self, game: Game) {
        self.inner
            .matches_started
            .with_label_values(&[game.name()])
            .inc();
    }

    /// A match of `game` ended with `report`.
    pub fn match_ended(&self, game: Game, report: &MatchReport) {
        let status = if report.outcome.is_some() {
            "finished"
        } else {
            "aborted"
        };
        let g = game.name();
        self.inner
            .matches_ended
            .with_label_values(&[g, status])
            .inc();
        self.inner
            .decisions
            .with_label_values(&[g])
            .inc_by(report.decisions);
        self.inner
            .timeouts
            .with_label_values(&[g])
            .inc_by(report.timeouts);
        self.inner
            .forfeits
            .with_label_values(&[g])
            .inc_by(report.forfeits);
    }

    /// A bot answered a decision request of `game` after `seconds`.
    pub fn decision_answered(&self, game: Game, seconds: f64) {
        self.inner
            .decision_seconds
            .with_label_values(&[game.name()])
            .observe(seconds);
    }

    /// A Play stream opened (`+1`) or closed (`-1`).
    pub fn stream_delta(&self, delta: i64) {
        self.inner.streams.add(delta);
    }

    /// A store call failed because the database was unavailable. `operation` is one of a
    /// fixed few: start, finish, abort, heartbeat, sweep, auth, list_matches,
    /// get_match_log.
    pub fn store_error(&self, operation: &'static str) {
        self.inner
            .store_errors
            .with_label_values(&[operation])
            .inc();
    }

    /// `pending` match records wait for a retry.
    pub fn store_pending(&self, pending: usize) {
        self.inner
            .store_pending
            .set(i64::try_from(pending).unwrap_or(i64::MAX));
    }

    /// The metrics in Prometheus' text format.
    pub fn render(&self) -> String {
        let mut buffer = Vec::new();
        let encoder = TextEncoder::new();
        encoder
            .encode(&self.inner.registry.gather(), &mut buffer)
            .expect("text encoding cannot fail");
        String::from_utf8(buffer).unwrap_or_default()
    }

    /// Serves `GET /metrics` on `listener` until `shutdown` resolves.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let app = axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let metrics = self.clone();
                async move { metrics.render() }
            }),
        );
        axum::serve(crate::net::MetricsListener::new(listener), app)
            .with_graceful_shutdown(shutdown)
            .await
    }
}
