//! League matches in the lobby: the bots of running leagues wait for league matches only,
//! and a league match takes the oldest waiting stream of each of its bots. The league
//! scheduler sees the lobby as a [`SeatPool`]: the seats it plays league matches with.

use std::collections::HashSet;
use std::sync::Arc;

use knobel_engine::Game;

use futures_util::future::BoxFuture;

use super::{Lobby, MatchInfo, Planned, TimeControl, Waiting, new_match_id};
use crate::store::OpenLeagueMatch;

/// Claims a league match for a match id (`None`: it cannot be had), giving the attempt's
/// seed; called with the streams taken, before anything is sent on them.
pub type ClaimLeagueMatch = Box<dyn FnOnce(&str) -> BoxFuture<'static, Option<u64>> + Send>;

/// Told a league match's id when it is over (`true`: recorded, or kept for retry) or did
/// not start (`false`: its claim may be held; give it back).
pub type LeagueMatchEnded = Box<dyn FnOnce(&str, bool) + Send>;

/// The seats the league scheduler plays its matches with: the waiting streams of the bots
/// of running leagues. This arena's [`Lobby`] is one; a pool that also reaches streams
/// waiting on other arenas would be another, and the scheduler would not change.
pub trait SeatPool: Send + Sync {
    /// Sets the bots of running leagues: their streams are kept for league matches.
    fn set_league_bots(&self, bots: HashSet<String>);
    /// Notified when a stream of a bot of a running league starts waiting.
    fn league_joined(&self) -> &tokio::sync::Notify;
    /// Whether `bot` has a stream waiting that plays `game`.
    fn has_waiting(&self, bot: &str, game: Game) -> bool;
    /// Whether `bot` is connected: playing a match or waiting.
    fn is_connected(&self, bot: &str) -> bool;
    /// Starts league match `m` if every one of its bots has a stream waiting for it (see
    /// [`Lobby::start_league_match`]); whether it was started.
    fn start_league_match(
        self: Arc<Self>,
        m: &OpenLeagueMatch,
        time_control: TimeControl,
        claim: ClaimLeagueMatch,
        ended: LeagueMatchEnded,
    ) -> bool;
}

impl SeatPool for Lobby {
    fn set_league_bots(&self, bots: HashSet<String>) {
        Lobby::set_league_bots(self, bots)
    }

    fn league_joined(&self) -> &tokio::sync::Notify {
        Lobby::league_joined(self)
    }

    fn has_waiting(&self, bot: &str, game: Game) -> bool {
        Lobby::has_waiting(self, bot, game)
    }

    fn is_connected(&self, bot: &str) -> bool {
        Lobby::is_connected(self, bot)
    }

    fn start_league_match(
        self: Arc<Self>,
        m: &OpenLeagueMatch,
        time_control: TimeControl,
        claim: ClaimLeagueMatch,
        ended: LeagueMatchEnded,
    ) -> bool {
        Lobby::start_league_match(&self, m, time_control, claim, ended)
    }
}

impl Lobby {
    /// Puts streams taken for a match that did not start back in their places.
    fn wait_again(&self, group: Vec<Waiting>) {
        let mut waiting = self.waiting.lock().expect("lobby lock");
        waiting.extend(group);
        waiting.sort_by_key(|w| w.ticket);
    }

    /// Sets the bots of running leagues: their streams are kept for league matches.
    pub fn set_league_bots(&self, bots: HashSet<String>) {
        *self.league_bots.lock().expect("lobby lock") = bots;
    }

    /// Notified when a stream of a bot of a running league starts waiting.
    pub fn league_joined(&self) -> &tokio::sync::Notify {
        &self.league_joined
    }

    /// Whether `bot` has a stream waiting that plays `game`.
    pub fn has_waiting(&self, bot: &str, game: Game) -> bool {
        self.waiting
            .lock()
            .expect("lobby lock")
            .iter()
            .any(|w| w.seats(bot, game) && !w.claim.is_closed())
    }

    /// Starts league match `m` as match `match_id` if every one of its bots has a stream
    /// waiting that plays its game (the oldest such stream of each is taken), with
    /// `time_control`; `claim` is called first, with the streams taken, and the match
    /// starts only if it gives the claimed attempt's seed (else the streams wait again,
    /// untouched). `ended`
    /// is called with the match id when the match is over (recorded or kept for retry),
    /// with `true`, or did not start, with `false` (the claim may be held: give it back).
    pub fn start_league_match(
        self: &Arc<Self>,
        m: &OpenLeagueMatch,
        time_control: TimeControl,
        claim: impl FnOnce(&str) -> futures_util::future::BoxFuture<'static, Option<u64>>
        + Send
        + 'static,
        ended: impl FnOnce(&str, bool) + Send + 'static,
    ) -> bool {
        if self.runner.shutting_down() {
            return false;
        }
        let game = m.rules.game();
        let group = {
            let mut waiting = self.waiting.lock().expect("lobby lock");
            waiting.retain(|w| !w.claim.is_closed());
            let mut picked = Vec::with_capacity(m.seats.len());
            for bot in &m.seats {
                match waiting
                    .iter()
                    .enumerate()
                    .find(|(i, w)| w.seats(bot, game) && !picked.contains(i))
                {
                    Some((i, _)) => picked.push(i),
                    None => return false,
                }
            }
            // Take them out, keeping seat order.
            let mut order: Vec<(usize, usize)> = picked.iter().copied().enumerate().collect();
            order.sort_by_key(|&(_, i)| std::cmp::Reverse(i));
            let mut taken: Vec<(usize, Waiting)> = order
                .into_iter()
                .map(|(seat, i)| (seat, waiting.remove(i)))
                .collect();
            taken.sort_by_key(|&(seat, _)| seat);
            taken.into_iter().map(|(_, w)| w).collect::<Vec<_>>()
        };
        let info = Arc::new(MatchInfo {
            match_id: new_match_id(),
            preset: m.preset.clone(),
            rules: m.rules.clone(),
            seat_names: group.iter().map(|w| w.bot_name.clone()).collect(),
            seat_bot_ids: group.iter().map(|w| Some(w.bot_id)).collect(),
            time_control,
        });
        let slot = crate::store::LeagueSlot {
            league_id: m.league_id,
            ordinal: m.ordinal,
        };
        let lobby = self.clone();
        let claiming = claim(&info.match_id);
        self.runner.spawn(async move {
            let Some(seed) = claiming.await else {
                // Another arena has it, or the store cannot say: the streams wait again,
                // in their places (nothing was sent on them).
                lobby.wait_again(group);
                ended(&info.match_id, false);
                return;
            };
            let players: Vec<Planned> = group.into_iter().map(|w| Planned::Bot(w.claim)).collect();
            let started = lobby
                .runner
                .play(info.clone(), seed, players, Some(slot))
                .await;
            ended(&info.match_id, started);
        });
        true
    }
}
