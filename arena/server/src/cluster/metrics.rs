//! The cluster's metrics (docs/metrics.md): seats relayed between arenas, reservations and
//! the relay's round trip.

use prometheus::{Histogram, HistogramOpts, IntCounter, IntCounterVec, Opts, Registry};

/// The cluster's series (in the arena's registry).
#[derive(Clone)]
pub struct ClusterMetrics {
    /// Seats this arena refereed through a link to another arena.
    pub relayed_seats: IntCounter,
    /// Reservations by outcome: `made`, `failed` (as referee), `expired` (as holder).
    pub reservations: IntCounterVec,
    /// A relayed decision's time at the referee less the bot's own time at the holder.
    pub relay_round_trip: Histogram,
    /// Seat links that broke before their match's end (seen here as referee or holder).
    pub links_broken: IntCounter,
}

impl ClusterMetrics {
    /// Registers the series in `registry`.
    pub fn new(registry: &Registry) -> ClusterMetrics {
        let relayed_seats = IntCounter::new(
            "relayed_seats_total",
            "Seats of matches refereed here whose bot's stream is on another arena.",
        )
        .expect("valid metric");
        let reservations = IntCounterVec::new(
            Opts::new(
                "seat_reservations_total",
                "Seat reservations between arenas: made and failed (asked by this arena), expired (held here, never used).",
            ),
            &["outcome"],
        )
        .expect("valid metric");
        for outcome in ["made", "failed", "expired"] {
            reservations.with_label_values(&[outcome]);
        }
        let relay_round_trip = Histogram::with_opts(
            HistogramOpts::new(
                "relay_round_trip_seconds",
                "What relaying adds to a decision: its time at the referee less the bot's time at the arena holding its stream.",
            )
            .buckets(vec![
                0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
            ]),
        )
        .expect("valid metric");
        let links_broken = IntCounter::new(
            "relay_links_broken_total",
            "Seat links between arenas that broke before their match's end, as this arena saw them (referee or holder): each aborted a match.",
        )
        .expect("valid metric");
        for metric in [
            Box::new(links_broken.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(relayed_seats.clone()),
            Box::new(reservations.clone()),
            Box::new(relay_round_trip.clone()),
        ] {
            registry.register(metric).expect("unique metric");
        }
        ClusterMetrics {
            relayed_seats,
            reservations,
            relay_round_trip,
            links_broken,
        }
    }
}
