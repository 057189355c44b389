//! Counting per peer address: [`PeerCounter`] holds connections or streams within a bound
//! in all and per address, keyed by [`peer_key`].

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex};

use prometheus::IntGauge;

/// The key a peer address is counted under: an IPv4 address (also one mapped into IPv6)
/// as it is, an IPv6 address by its /64 prefix.
pub fn peer_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(bits))
            }
        },
    }
}

/// Which bound a new connection or stream is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    /// The bound in all: `open` are open, at most `max` allowed.
    Total {
        /// Open now.
        open: usize,
        /// The bound.
        max: usize,
    },
    /// The bound per peer address.
    Peer {
        /// Open now from that address.
        open: usize,
        /// The bound.
        max: usize,
    },
}

impl Over {
    /// A message: "`what` from `peer`: ..." naming the bound and its flag.
    pub fn message(&self, what: &str, peer: IpAddr, flag_total: &str, flag_peer: &str) -> String {
        match *self {
            Over::Total { open, max } => format!(
                "too many {what}: {open} are open, at most {max} are allowed ({flag_total}); try again later"
            ),
            Over::Peer { open, max } => format!(
                "too many {what} from {peer}: {open} are open, at most {max} are allowed per address ({flag_peer}); try again later"
            ),
        }
    }
}

#[derive(Default)]
struct Counts {
    total: usize,
    per_peer: HashMap<IpAddr, usize>,
}

/// Counts things held open (connections, streams waiting for their Hello), in all and per
/// peer address, within bounds.
#[derive(Clone)]
pub struct PeerCounter {
    inner: Arc<CounterInner>,
}

struct CounterInner {
    max_total: usize,
    max_per_peer: usize,
    counts: Mutex<Counts>,
    /// Follows the count in all, if set.
    gauge: Option<IntGauge>,
}

/// One counted thing; uncounted when dropped.
pub struct Permit {
    inner: Arc<CounterInner>,
    peer: IpAddr,
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").field("peer", &self.peer).finish()
    }
}

impl PeerCounter {
    /// A counter allowing `max_total` in all and `max_per_peer` per peer address.
    pub fn new(max_total: usize, max_per_peer: usize) -> PeerCounter {
        PeerCounter::with_gauge(max_total, max_per_peer, None)
    }

    /// Like [`PeerCounter::new`], with a gauge that follows the count in all.
    pub fn with_gauge(
        max_total: usize,
        max_per_peer: usize,
        gauge: Option<IntGauge>,
    ) -> PeerCounter {
        PeerCounter {
            inner: Arc::new(CounterInner {
                max_total,
                max_per_peer,
                counts: Mutex::new(Counts::default()),
                gauge,
            }),
        }
    }

    /// Counts one more for `peer` (keyed by [`peer_key`]), or says which bound it is over.
    pub fn acquire(&self, peer: IpAddr) -> Result<Permit, Over> {
        let peer = peer_key(peer);
        let mut counts = self.inner.counts.lock().expect("counts lock");
        if counts.total >= self.inner.max_total {
            return Err(Over::Total {
                open: counts.total,
                max: self.inner.max_total,
            });
        }
        let open = counts.per_peer.get(&peer).copied().unwrap_or(0);
        if open >= self.inner.max_per_peer {
            return Err(Over::Peer {
                open,
                max: self.inner.max_per_peer,
            });
        }
        counts.total += 1;
        counts.per_peer.insert(peer, open + 1);
        if let Some(gauge) = &self.inner.gauge {
            gauge.inc();
        }
        Ok(Permit {
            inner: self.inner.clone(),
            peer,
        })
    }

    /// How many are open in all.
    pub fn open(&self) -> usize {
        self.inner.counts.lock().expect("counts lock").total
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut counts = self.inner.counts.lock().expect("counts lock");
        counts.total -= 1;
        if let Some(gauge) = &self.inner.gauge {
            gauge.dec();
        }
        if let Some(open) = counts.per_peer.get_mut(&self.peer) {
            *open -= 1;
            if *open == 0 {
                counts.per_peer.remove(&self.peer);
            }
        }
    }
}
