//! Failed logins across the cluster: each arena tells the others, over NATS, the addresses
//! of its failed logins, and counts theirs in its own login throttle
//! (`--max-auth-failures` per `--auth-failure-window-secs`), so that an address spreading
//! its attempts over the replicas behind one Service gets no more tries than against one
//! arena.

use std::net::IpAddr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tracing::{debug, warn};

use super::{Cluster, SUBJECT_PREFIX};
use crate::net::AuthThrottle;

/// Addresses told in one message at most; a burst beyond it waits for the next message,
/// and beyond [`QUEUED`] it is not told (each arena still counts its own).
const MAX_PER_MESSAGE: usize = 1024;
/// Failed logins waiting to be told.
const QUEUED: usize = 4 * MAX_PER_MESSAGE;

/// One arena's failed logins, by address (an address once per failure).
#[derive(Serialize, Deserialize)]
struct FailedLogins {
    instance: String,
    addresses: Vec<IpAddr>,
}

/// Tells the other arenas of this arena's failed logins in `throttle`, and counts theirs in
/// it, until NATS's subscription ends (`Cluster::join` flushes the subscription before the
/// arena serves).
pub(super) async fn share(cluster: Arc<Cluster>, throttle: Arc<AuthThrottle>) {
    let subject = format!("{SUBJECT_PREFIX}.failed_logins");
    let (tell, told) = mpsc::channel(QUEUED);
    throttle.tell_failures(move |address| {
        let _ = tell.try_send(address);
    });
    match cluster.nats.subscribe(subject.clone()).await {
        Ok(mut subscriber) => {
            let (cluster, throttle) = (cluster.clone(), throttle.clone());
            tokio::spawn(async move {
                while let Some(message) = subscriber.next().await {
                    count_theirs(&cluster, &throttle, &message.payload);
                }
            });
        }
        Err(error) => warn!(%error, "cannot subscribe to the cluster's failed logins"),
    }
    tokio::spawn(publish(cluster, subject, told));
}

/// Counts another arena's failed logins (at most [`MAX_PER_MESSAGE`] of a message).
fn count_theirs(cluster: &Cluster, throttle: &AuthThrottle, payload: &[u8]) {
    match serde_json::from_slice::<FailedLogins>(payload) {
        Ok(failed) if failed.instance != cluster.instance => {
            for address in failed.addresses.into_iter().take(MAX_PER_MESSAGE) {
                throttle.failed_elsewhere(address);
            }
        }
        Ok(_) => {}
        Err(error) => debug!(%error, "a failed-logins message that does not read"),
    }
}

/// Publishes this arena's failed logins as they come: one message per failure, or per
/// [`MAX_PER_MESSAGE`] of a burst.
async fn publish(cluster: Arc<Cluster>, subject: String, mut told: mpsc::Receiver<IpAddr>) {
    let mut addresses = Vec::with_capacity(MAX_PER_MESSAGE);
    while told.recv_many(&mut addresses, MAX_PER_MESSAGE).await > 0 {
        let failed = FailedLogins {
            instance: cluster.instance.clone(),
            addresses: std::mem::take(&mut addresses),
        };
        let Ok(payload) = serde_json::to_vec(&failed) else {
            continue;
        };
        if let Err(error) = cluster.nats.publish(subject.clone(), payload.into()).await {
            debug!(%error, "cannot tell the other arenas of failed logins");
        }
    }
}
