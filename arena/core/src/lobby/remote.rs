//! Seats of other arenas (cluster mode, docs/operations.md "Several arenas"): the lobby's two
//! sides of a seat relayed between arenas.
//!
//! - As the **referee**, a league match may seat bots whose streams wait on other arenas:
//!   [`Lobby::start_league_match_with`] takes this arena's streams for the local seats and a
//!   [`RemoteSeats`] for the others, which reserves them (all or none) before the match is
//!   claimed and links them once it is. A failure at any step gives every reservation back
//!   and puts the local streams back in their places, untouched.
//! - As the **holder**, [`Lobby::hold_stream`] takes one waiting stream of a bot out of the
//!   queue for another arena's match ([`HeldStream`]): claimed when that arena links the
//!   seat, or back in its place when dropped unclaimed (the reservation expired or was
//!   given back).
//!
//! A link between arenas that breaks during a match trips the match's [`MatchFault`]: the
//! match is aborted (never scored, and a league match is played again), as when the arena
//! shuts down; no seat forfeits for the arena's failure.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use knobel_engine::Game;
use tokio::sync::{oneshot, watch};

use super::{HANDOFF_TIMEOUT, Lobby, Waiting};
use crate::referee::BotLink;

/// Trips the abort of one match: a link between arenas that one of its seats is played
/// through broke. Cloned into every relayed seat's link.
#[derive(Clone, Debug)]
pub struct MatchFault(Arc<watch::Sender<bool>>);

impl MatchFault {
    /// A fault not tripped yet, and what the match watches.
    pub(super) fn new() -> (MatchFault, watch::Receiver<bool>) {
        let (tx, rx) = watch::channel(false);
        (MatchFault(Arc::new(tx)), rx)
    }

    /// The match is aborted: a link it is played through broke.
    pub fn trip(&self) {
        self.0.send_replace(true);
    }

    /// Whether it was tripped.
    pub fn tripped(&self) -> bool {
        *self.0.borrow()
    }
}

/// The seats of a league match whose bots wait on other arenas, as the referee's arena
/// reaches them (the cluster's implementation: reservations over the broker, links over the
/// arenas' peer port). Seats are given in seat order of the match's remote seats.
pub trait RemoteSeats: Send + 'static {
    /// Reserves one waiting stream of each remote seat's bot on its arena, all or none:
    /// each reserved seat's bot id, in order, or `None` (what was reserved is given back).
    fn reserve(&mut self) -> BoxFuture<'_, Option<Vec<i64>>>;
    /// Links every reserved seat for the match (its abort tripped by `fault` if a link
    /// breaks): the links in order, or `None` (every reservation and link given back).
    fn link(&mut self, fault: MatchFault) -> BoxFuture<'_, Option<Vec<Box<dyn BotLink>>>>;
    /// Gives back whatever is reserved and not linked (the match does not start).
    fn release(&mut self);
}

/// A waiting stream taken out of the lobby for another arena's match. Dropped unclaimed,
/// it waits again in its place (nothing was sent on it).
pub struct HeldStream {
    lobby: Arc<Lobby>,
    waiting: Option<Waiting>,
}

impl HeldStream {
    /// The bot's id.
    pub fn bot_id(&self) -> i64 {
        self.waiting.as_ref().map_or(0, |w| w.bot_id)
    }

    /// The bot's name.
    pub fn bot_name(&self) -> &str {
        self.waiting.as_ref().map_or("", |w| w.bot_name.as_str())
    }

    /// Claims the stream for the other arena's match: its link, counted as playing here
    /// until [`HeldStream::ended`]; `None` if its connection is gone (or does not hand the
    /// stream over in time).
    pub async fn claim(mut self) -> Option<Box<dyn BotLink>> {
        let waiting = self.waiting.take()?;
        let (give, taken) = oneshot::channel::<Box<dyn BotLink>>();
        waiting.claim.send(give).ok()?;
        let link = tokio::time::timeout(HANDOFF_TIMEOUT, taken)
            .await
            .ok()?
            .ok()?;
        self.lobby.runner.count_bot(&waiting.bot_name, true);
        Some(link)
    }

    /// The relayed match of bot `bot_name`, claimed through [`HeldStream::claim`], is over.
    pub fn ended(lobby: &Lobby, bot_name: &str) {
        lobby.runner.count_bot(bot_name, false);
    }
}

impl Drop for HeldStream {
    fn drop(&mut self) {
        if let Some(waiting) = self.waiting.take() {
            self.lobby.wait_again(vec![waiting]);
            self.lobby.league_joined.notify_one();
        }
    }
}

/// One waiting stream as the cluster's presence publishes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitingStream {
    /// The bot's id.
    pub bot_id: i64,
    /// The bot's name.
    pub bot_name: String,
    /// The games it plays in league matches.
    pub games: Vec<Game>,
}

impl Lobby {
    /// Takes the oldest waiting stream of bot `bot` that plays `game` out of the queue, for
    /// another arena's match; `None` if there is none (or the arena is shutting down).
    pub fn hold_stream(self: &Arc<Self>, bot: &str, game: Game) -> Option<HeldStream> {
        if self.runner.shutting_down() {
            return None;
        }
        let mut waiting = self.waiting.lock().expect("lobby lock");
        waiting.retain(|w| !w.claim.is_closed());
        let i = waiting.iter().position(|w| w.seats(bot, game))?;
        let taken = waiting.remove(i);
        self.waiting_changed.notify_one();
        Some(HeldStream {
            lobby: self.clone(),
            waiting: Some(taken),
        })
    }

    /// Every stream waiting now, oldest first.
    pub fn waiting_streams(&self) -> Vec<WaitingStream> {
        let waiting = self.waiting.lock().expect("lobby lock");
        waiting
            .iter()
            .filter(|w| !w.claim.is_closed())
            .map(|w| WaitingStream {
                bot_id: w.bot_id,
                bot_name: w.bot_name.clone(),
                games: w.games.clone(),
            })
            .collect()
    }

    /// The bots playing a match here now (their own or one relayed through this arena).
    pub fn playing_bots(&self) -> Vec<String> {
        self.runner.playing_bots()
    }
}
