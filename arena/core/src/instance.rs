//! This arena process as an instance among others on one database: its id, its lease and
//! the heartbeat that renews it (see [`crate::store`]'s `instances` for the table).
//!
//! At start-up the arena takes a lease; the heartbeat renews it every third of its length.
//! After a renewal the arena aborts the running matches of arenas whose lease has run out
//! (never those of a live arena), but only once it has held its own lease without a lapse
//! for a full lease period ([`Holding`]): an arena that has just started, or is just back
//! from a database outage, first gives the other arenas a lease period to renew theirs, so
//! the first arena back after an outage does not abort everyone's matches. Lease times are
//! the database's clock ([`Store::db_now_ms`]), not the arenas'.
//!
//! If the heartbeat cannot reach the database, the arena keeps playing (its matches do not
//! need the database until they end, and their results are kept and retried) and logs
//! every failed renewal. If it stays cut off for longer than its lease, other arenas may
//! abort its running matches: once the database is back it takes its lease again (and says
//! so in the log), its results for matches that are still running are written, and those
//! for matches another arena has aborted meanwhile are refused (the abort stands, so a
//! match is never recorded twice) and logged.

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use tracing::{error, info, warn};

use crate::store::{InstanceId, Store, StoreError, StoreObserver, StoreOperation};

/// Why a sweep aborts a match.
pub const ORPHAN_REASON: &str =
    "the arena running the match stopped (its lease ran out) before the match was over";

/// The shortest lease: the heartbeat renews it every third.
pub const MIN_LEASE: Duration = Duration::from_secs(1);

/// This arena as a registered instance.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Its id.
    pub id: InstanceId,
    /// How long each renewal of its lease holds.
    pub lease: Duration,
    /// When it started, in unix milliseconds.
    pub started_at_ms: i64,
}

impl Instance {
    /// Registers a new instance with a random id and a `lease` (at least [`MIN_LEASE`]).
    /// Its heartbeat sweeps once it has held the lease for a full period.
    pub async fn register(store: &Store, lease: Duration) -> Result<Instance, StoreError> {
        let now = store.db_now_ms().await?;
        let instance = Instance {
            id: InstanceId::random(),
            lease: lease.max(MIN_LEASE),
            started_at_ms: now,
        };
        store
            .renew_lease(&instance.id, instance.lease, now, now)
            .await?;
        info!(
            instance = %instance.id,
            lease_secs = instance.lease.as_secs_f64(),
            "arena instance registered"
        );
        Ok(instance)
    }

    /// Aborts every running match whose owner's lease has run out by the database's clock
    /// (or that has no owner).
    pub async fn sweep(&self, store: &Store) -> Result<u64, StoreError> {
        let now = store.db_now_ms().await?;
        let aborted = store.abort_orphaned_matches(ORPHAN_REASON, now).await?;
        if aborted > 0 {
            info!(
                aborted,
                "running matches of arenas that are gone (lease run out) marked aborted"
            );
        }
        Ok(aborted)
    }

    /// Renews the lease every third of its length, and sweeps after each renewal once the
    /// lease has been held for a full period ([`Holding`]), until `stop` turns true.
    /// Failures are logged, counted by `observer` where the database is unavailable, and
    /// never fatal.
    pub async fn heartbeat(
        self,
        store: Store,
        observer: impl StoreObserver + Clone,
        mut stop: watch::Receiver<bool>,
    ) {
        let sweeping = store
            .clone()
            .counting_errors(&observer, StoreOperation::Sweep);
        let store = store.counting_errors(&observer, StoreOperation::Heartbeat);
        let every = self.lease / 3;
        let mut holding = Holding::new(self.lease, Instant::now());
        let mut lapsed = false;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = crate::shutdown::requested(&mut stop) => return,
            }
            let attempt = Instant::now();
            match self.renew(&store).await {
                Ok(()) => {
                    if holding.renewed(attempt) {
                        warn!(
                            instance = %self.id,
                            "the arena's lease is renewed after it had run out: other arenas may have aborted its running matches meanwhile, and their results will be refused; it sweeps again once it has held its lease for a full period"
                        );
                    }
                    lapsed = false;
                    if holding.may_sweep(Instant::now())
                        && let Err(error) = self.sweep(&sweeping).await
                    {
                        warn!(error = %error, "cannot abort the matches of arenas that are gone");
                    }
                }
                Err(error) => {
                    let since = holding.since_renewal(Instant::now());
                    warn!(
                        instance = %self.id,
                        error = %error,
                        since_renewal_secs = since.as_secs_f64(),
                        "cannot renew the arena's lease: matches go on"
                    );
                    if since > self.lease && !lapsed {
                        lapsed = true;
                        error!(
                            instance = %self.id,
                            lease_secs = self.lease.as_secs_f64(),
                            "the arena's lease has run out: other arenas may abort its running matches"
                        );
                    }
                }
            }
        }
    }
}

impl Instance {
    /// Renews the lease at the database's clock.
    async fn renew(&self, store: &Store) -> Result<(), StoreError> {
        let now = store.db_now_ms().await?;
        store
            .renew_lease(&self.id, self.lease, self.started_at_ms, now)
            .await
    }
}

/// How long this arena has held its lease without a lapse: it sweeps only once that is a
/// full lease period. A lapse is a gap between two renewals (their attempts) longer than
/// the lease: the lease ran out in between, and other arenas may have taken it for gone.
#[derive(Debug, Clone, Copy)]
pub struct Holding {
    lease: Duration,
    /// The renewal that began the current unbroken hold.
    since: Instant,
    /// The last renewal that went through (when it was attempted).
    last: Instant,
}

impl Holding {
    /// A lease of `lease` taken at `now`.
    pub fn new(lease: Duration, now: Instant) -> Holding {
        Holding {
            lease,
            since: now,
            last: now,
        }
    }

    /// A renewal attempted at `attempt` went through; whether the lease had run out before
    /// it (then the hold starts again from it).
    pub fn renewed(&mut self, attempt: Instant) -> bool {
        let lapsed = attempt.saturating_duration_since(self.last) > self.lease;
        if lapsed {
            self.since = attempt;
        }
        self.last = self.last.max(attempt);
        lapsed
    }

    /// How long it is at `now` since the last renewal that went through.
    pub fn since_renewal(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.last)
    }

    /// Whether the arena may sweep at `now`: it has held its lease, renewed without a lapse,
    /// for a full lease period, and the last renewal still holds.
    pub fn may_sweep(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.since) >= self.lease
            && self.since_renewal(now) <= self.lease
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arena_sweeps_only_after_holding_its_lease_for_a_full_period() {
        let lease = Duration::from_secs(3);
        let every = lease / 3;
        let start = Instant::now();
        let mut holding = Holding::new(lease, start);
        // Renewed every third: no sweep before a full period has passed since it started.
        for i in 1..=2 {
            assert!(!holding.renewed(start + every * i));
            assert!(!holding.may_sweep(start + every * i), "renewal {i}");
        }
        assert!(!holding.renewed(start + lease));
        assert!(holding.may_sweep(start + lease));
        // A renewal that fails for a while, within the lease: still held.
        assert!(!holding.renewed(start + lease + lease));
        assert!(holding.may_sweep(start + lease + lease));
        // Cut off from the database for longer than the lease: the first renewal after it is
        // a lapse, and the arena waits a full period again before it sweeps.
        let back = start + lease * 4;
        assert!(holding.renewed(back));
        assert!(!holding.may_sweep(back));
        assert!(!holding.may_sweep(back + every * 2));
        assert!(!holding.renewed(back + every));
        assert!(!holding.renewed(back + every * 2));
        assert!(!holding.renewed(back + lease));
        assert!(holding.may_sweep(back + lease));
        // Its last renewal too old (the renewals now fail): no sweep either.
        assert!(!holding.may_sweep(back + lease * 3));
        assert_eq!(holding.since_renewal(back + lease * 3), lease * 2);
    }
}
