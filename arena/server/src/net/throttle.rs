//! Failed logins: [`AuthThrottle`], a leaky bucket per peer address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tracing::warn;

use super::{NetLimits, RateLimitedLog, peer_key};

/// Throttles failed logins per peer address: a leaky bucket per address that fills by one
/// per failure and drains `max_failures` per window. An address whose bucket is full is
/// refused before any lookup until it has drained enough for one more attempt.
pub struct AuthThrottle {
    max_failures: u32,
    window: Duration,
    pub(super) buckets: Mutex<HashMap<IpAddr, Bucket>>,
    /// The size at which drained buckets are swept next.
    prune_at: Mutex<usize>,
    refusals: Mutex<RateLimitedLog>,
    /// Who else is told of this arena's failed logins (cluster mode: the other arenas).
    tell: OnceLock<Box<dyn Fn(IpAddr) + Send + Sync>>,
}

#[derive(Clone, Copy)]
pub(super) struct Bucket {
    level: f64,
    at: std::time::Instant,
}

/// Buckets kept before drained ones are dropped.
pub(super) const AUTH_BUCKETS_PRUNE_AT: usize = 4096;
/// Most buckets kept at all: past this, the emptiest is dropped for a new one.
const AUTH_BUCKETS_MAX: usize = 65_536;

impl AuthThrottle {
    /// A throttle allowing `max_failures` failures per `window` and address.
    pub fn new(max_failures: u32, window: Duration) -> AuthThrottle {
        AuthThrottle {
            max_failures,
            window,
            buckets: Mutex::new(HashMap::new()),
            prune_at: Mutex::new(AUTH_BUCKETS_PRUNE_AT),
            refusals: Mutex::new(RateLimitedLog::new()),
            tell: OnceLock::new(),
        }
    }

    /// Tells `tell` of every failed login counted here from now on (not of those counted
    /// through [`AuthThrottle::failed_elsewhere`]); once per throttle.
    pub fn tell_failures(&self, tell: impl Fn(IpAddr) + Send + Sync + 'static) {
        let _ = self.tell.set(Box::new(tell));
    }

    /// Logs a refused login (at most once per [`super::REFUSAL_LOG_INTERVAL`]).
    pub fn log_refusal(&self, peer: IpAddr, wait: Duration) {
        if let Some(suppressed) = self.refusals.lock().expect("log lock").due() {
            warn!(
                %peer,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                suppressed,
                "login refused: too many failed logins from this address"
            );
        }
    }

    /// The throttle of `limits`.
    pub fn from_limits(limits: &NetLimits) -> AuthThrottle {
        AuthThrottle::new(limits.max_auth_failures, limits.auth_failure_window)
    }

    fn drain_rate(&self) -> f64 {
        f64::from(self.max_failures) / self.window.as_secs_f64()
    }

    fn level(&self, bucket: &Bucket, now: std::time::Instant) -> f64 {
        let drained = now.saturating_duration_since(bucket.at).as_secs_f64() * self.drain_rate();
        (bucket.level - drained).max(0.0)
    }

    /// `Err(wait)` if `peer` must wait this long before it may try to log in again.
    pub fn check(&self, peer: IpAddr) -> Result<(), Duration> {
        self.check_at(peer, std::time::Instant::now())
    }

    /// [`AuthThrottle::check`] at `now`.
    pub fn check_at(&self, peer: IpAddr, now: std::time::Instant) -> Result<(), Duration> {
        let buckets = self.buckets.lock().expect("buckets lock");
        let Some(bucket) = buckets.get(&peer_key(peer)) else {
            return Ok(());
        };
        let level = self.level(bucket, now);
        let room = f64::from(self.max_failures) - 1.0;
        if level <= room {
            Ok(())
        } else {
            Err(Duration::from_secs_f64((level - room) / self.drain_rate()))
        }
    }

    /// Counts a failed login of `peer` here.
    pub fn failed(&self, peer: IpAddr) {
        self.failed_at(peer, std::time::Instant::now());
        if let Some(tell) = self.tell.get() {
            tell(peer);
        }
    }

    /// Counts a failed login of `peer` at another arena of the cluster.
    pub fn failed_elsewhere(&self, peer: IpAddr) {
        self.failed_at(peer, std::time::Instant::now());
    }

    /// [`AuthThrottle::failed`] at `now`.
    pub fn failed_at(&self, peer: IpAddr, now: std::time::Instant) {
        let mut buckets = self.buckets.lock().expect("buckets lock");
        let key = peer_key(peer);
        let mut prune_at = self.prune_at.lock().expect("prune lock");
        if buckets.len() >= *prune_at && !buckets.contains_key(&key) {
            // Drained buckets go; the next sweep waits until the map has doubled again, so
            // sweeps cost O(1) per failure on average.
            buckets.retain(|_, bucket| self.level(bucket, now) > 0.0);
            *prune_at = (2 * buckets.len()).max(AUTH_BUCKETS_PRUNE_AT);
        }
        if buckets.len() >= AUTH_BUCKETS_MAX && !buckets.contains_key(&key) {
            // Full of live buckets (failures from very many addresses): one goes.
            let any = buckets.keys().next().copied();
            if let Some(any) = any {
                buckets.remove(&any);
            }
        }
        drop(prune_at);
        let level = buckets
            .get(&key)
            .map_or(0.0, |bucket| self.level(bucket, now));
        buckets.insert(
            key,
            Bucket {
                level: level + 1.0,
                at: now,
            },
        );
    }

    /// The message for a refused peer that must wait `wait`.
    pub fn message(&self, peer: IpAddr, wait: Duration) -> String {
        format!(
            "too many failed logins from {peer}: try again in {:.1} s (at most {} failures per {} s and address)",
            wait.as_secs_f64().max(0.1),
            self.max_failures,
            self.window.as_secs()
        )
    }
}
