//! Seat reservations between arenas, by NATS request-reply.
//!
//! The referee asks the holder (`knobel.cluster.reserve.<instance>`) for one waiting stream
//! of a bot for a game. The holder takes it out of its lobby exactly as a local match would
//! ([`Lobby::hold_stream`]) and answers with a single-use ticket; the stream is claimed when
//! the referee links the seat with that ticket (`relay.rs`), and waits again, untouched, if
//! the ticket is given back (`knobel.cluster.release.<instance>`) or not used within
//! [`TICKET_TTL`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use knobel_engine::Game;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tracing::{debug, warn};

use super::{Cluster, NATS_TIMEOUT};
use crate::lobby::{HeldStream, Lobby};

/// How long a ticket holds before its stream waits again.
pub const TICKET_TTL: Duration = Duration::from_secs(5);
/// How often expired tickets are swept.
const SWEEP_EVERY: Duration = Duration::from_millis(500);
/// At most this many tickets held at once (each holds one waiting stream).
pub const MAX_TICKETS: usize = 4096;

/// A reservation request.
#[derive(Debug, Serialize, Deserialize)]
pub struct ReserveRequest {
    /// The bot's name.
    pub bot: String,
    /// The match's game.
    pub game: Game,
    /// The referee's instance id (for the holder's log).
    pub referee: String,
}

/// The holder's answer.
#[derive(Debug, Serialize, Deserialize)]
pub struct ReserveReply {
    /// The ticket, or `None`: no stream of that bot waits for that game here.
    pub ticket: Option<String>,
    /// The bot's id.
    pub bot_id: i64,
}

/// The streams this arena holds for other arenas' matches, by ticket.
#[derive(Default)]
pub struct Tickets {
    held: Mutex<HashMap<String, (Instant, HeldStream)>>,
}

impl Tickets {
    /// Holds `stream` under a new ticket; `None` if too many are held.
    fn hold(&self, stream: HeldStream) -> Option<String> {
        let mut held = self.held.lock().expect("tickets lock");
        if held.len() >= MAX_TICKETS {
            return None;
        }
        let ticket = hex::encode(rand::rng().random::<[u8; 16]>());
        held.insert(ticket.clone(), (Instant::now() + TICKET_TTL, stream));
        Some(ticket)
    }

    /// Takes the stream held under `ticket` (once): `None` if it is unknown or expired.
    pub(super) fn redeem(&self, ticket: &str) -> Option<HeldStream> {
        let (expires, stream) = self.held.lock().expect("tickets lock").remove(ticket)?;
        (Instant::now() < expires).then_some(stream)
    }

    /// Drops expired tickets (their streams wait again); how many.
    fn sweep(&self) -> usize {
        let now = Instant::now();
        let mut held = self.held.lock().expect("tickets lock");
        let before = held.len();
        held.retain(|_, (expires, _)| *expires > now);
        before - held.len()
    }
}

/// Answers reservations and releases addressed to this arena, and sweeps expired tickets.
pub(super) async fn start(
    cluster: Arc<Cluster>,
    lobby: Arc<Lobby>,
    shutdown: watch::Receiver<bool>,
) {
    let reserve = cluster.subject("reserve", &cluster.instance);
    let release = cluster.subject("release", &cluster.instance);
    match cluster.nats.subscribe(reserve).await {
        Ok(mut requests) => {
            let (cluster, lobby) = (cluster.clone(), lobby.clone());
            tokio::spawn(async move {
                while let Some(message) = requests.next().await {
                    let reply = answer(&cluster, &lobby, &message.payload);
                    if let (Some(to), Ok(body)) = (message.reply, serde_json::to_vec(&reply))
                        && cluster.nats.publish(to, body.into()).await.is_err()
                    {
                        // The reply is lost: the ticket expires unused.
                        debug!("cannot answer a reservation");
                    }
                }
            });
        }
        Err(error) => warn!(%error, "cannot subscribe to reservations"),
    }
    match cluster.nats.subscribe(release).await {
        Ok(mut releases) => {
            let cluster = cluster.clone();
            tokio::spawn(async move {
                while let Some(message) = releases.next().await {
                    let ticket = String::from_utf8_lossy(&message.payload);
                    // Dropped: the stream waits again.
                    drop(cluster.tickets.redeem(&ticket));
                }
            });
        }
        Err(error) => warn!(%error, "cannot subscribe to releases"),
    }
    tokio::spawn(sweep(cluster, shutdown));
}

/// The answer to one reservation request.
fn answer(cluster: &Cluster, lobby: &Arc<Lobby>, payload: &[u8]) -> ReserveReply {
    let refused = ReserveReply {
        ticket: None,
        bot_id: 0,
    };
    let Ok(request) = serde_json::from_slice::<ReserveRequest>(payload) else {
        return refused;
    };
    let Some(stream) = lobby.hold_stream(&request.bot, request.game) else {
        return refused;
    };
    let bot_id = stream.bot_id();
    match cluster.tickets.hold(stream) {
        Some(ticket) => {
            debug!(bot = %request.bot, referee = %request.referee, "stream reserved for another arena");
            ReserveReply {
                ticket: Some(ticket),
                bot_id,
            }
        }
        None => refused,
    }
}

async fn sweep(cluster: Arc<Cluster>, mut shutdown: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(SWEEP_EVERY) => {}
            () = crate::shutdown::requested(&mut shutdown) => {
                cluster.tickets.held.lock().expect("tickets lock").clear();
                return;
            }
        }
        let expired = cluster.tickets.sweep();
        if expired > 0 {
            cluster
                .metrics
                .reservations
                .with_label_values(&["expired"])
                .inc_by(expired as u64);
        }
    }
}

/// A reservation this arena holds on another: the ticket and where to use it.
#[derive(Clone, Debug)]
pub struct Reservation {
    /// The holder's instance id.
    pub instance: String,
    /// Its peer address.
    pub peer: String,
    /// The ticket.
    pub ticket: String,
    /// The bot's id.
    pub bot_id: i64,
}

impl Cluster {
    /// Asks arena `instance` (at `peer`) for one waiting stream of `bot` for `game`.
    pub(super) async fn reserve(
        &self,
        instance: &str,
        peer: &str,
        bot: &str,
        game: Game,
    ) -> Option<Reservation> {
        let request = ReserveRequest {
            bot: bot.to_owned(),
            game,
            referee: self.instance.clone(),
        };
        if !self.nats_connected() {
            self.metrics
                .reservations
                .with_label_values(&["failed"])
                .inc();
            return None;
        }
        let body = serde_json::to_vec(&request).ok()?;
        let subject = self.subject("reserve", instance);
        let reply = match self.nats.request(subject, body.into()).await {
            Ok(reply) => reply,
            Err(error) => {
                debug!(%error, %instance, bot, "no answer to a reservation");
                self.metrics
                    .reservations
                    .with_label_values(&["failed"])
                    .inc();
                return None;
            }
        };
        let reply: ReserveReply = serde_json::from_slice(&reply.payload).ok()?;
        let Some(ticket) = reply.ticket else {
            self.metrics
                .reservations
                .with_label_values(&["failed"])
                .inc();
            return None;
        };
        self.metrics.reservations.with_label_values(&["made"]).inc();
        Some(Reservation {
            instance: instance.to_owned(),
            peer: peer.to_owned(),
            ticket,
            bot_id: reply.bot_id,
        })
    }

    /// Gives `reservations` back unused: their streams wait again on their arenas. Sent in
    /// the background (within [`NATS_TIMEOUT`], else the tickets expire by themselves), so
    /// that no match start waits for the broker.
    pub(super) fn release(self: &Arc<Self>, reservations: Vec<Reservation>) {
        if reservations.is_empty() {
            return;
        }
        let cluster = self.clone();
        tokio::spawn(async move {
            for reservation in reservations {
                let subject = cluster.subject("release", &reservation.instance);
                let ticket = reservation.ticket.into_bytes();
                let sent = cluster.nats.publish(subject, ticket.into());
                if !matches!(tokio::time::timeout(NATS_TIMEOUT, sent).await, Ok(Ok(()))) {
                    debug!("cannot give a reservation back: its ticket expires by itself");
                    return;
                }
            }
        });
    }
}
