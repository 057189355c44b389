//! This arena process as an instance among others on one database: its id, its lease and
//! the heartbeat that renews it (see [`crate::store`]'s `instances` for the table).
//!
//! At start-up the arena takes a lease, then aborts the running matches of arenas whose
//! lease has run out (never those of a live arena); the heartbeat renews the lease every
//! third of its length and repeats that sweep each time.
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

use crate::store::{InstanceId, Store, StoreError, StoreObserver, StoreOperation, now_ms};

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
    /// Registers a new instance with a random id and a `lease` (at least [`MIN_LEASE`]),
    /// then aborts the running matches of instances that are gone (see [`Instance::sweep`]).
    pub async fn register(store: &Store, lease: Duration) -> Result<Instance, StoreError> {
        let instance = Instance {
            id: InstanceId::random(),
            lease: lease.max(MIN_LEASE),
            started_at_ms: now_ms(),
        };
        store
            .renew_lease(
                &instance.id,
                instance.lease,
                instance.started_at_ms,
                now_ms(),
            )
            .await?;
        info!(
            instance = %instance.id,
            lease_secs = instance.lease.as_secs_f64(),
            "arena instance registered"
        );
        instance.sweep(store).await?;
        Ok(instance)
    }

    /// Aborts every running match whose owner's lease has run out (or that has no owner).
    pub async fn sweep(&self, store: &Store) -> Result<u64, StoreError> {
        let aborted = store
            .abort_orphaned_matches(ORPHAN_REASON, now_ms())
            .await?;
        if aborted > 0 {
            info!(
                aborted,
                "running matches of arenas that are gone (lease run out) marked aborted"
            );
        }
        Ok(aborted)
    }

    /// Renews the lease every third of its length, and sweeps after each renewal, until
    /// `stop` turns true. Failures are logged, counted by `observer` where the database is
    /// unavailable, and never fatal.
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
        let mut renewed = Instant::now();
        let mut lapsed = false;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = crate::shutdown::requested(&mut stop) => return,
            }
            match store
                .renew_lease(&self.id, self.lease, self.started_at_ms, now_ms())
                .await
            {
                Ok(()) => {
                    if lapsed {
                        warn!(
                            instance = %self.id,
                            cut_off_secs = renewed.elapsed().as_secs_f64(),
                            "the arena's lease is renewed after it had run out: other arenas may have aborted its running matches meanwhile, and their results will be refused"
                        );
                    }
                    renewed = Instant::now();
                    lapsed = false;
                    if let Err(error) = self.sweep(&sweeping).await {
                        warn!(error = %error, "cannot abort the matches of arenas that are gone");
                    }
                }
                Err(error) => {
                    let since = renewed.elapsed();
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
