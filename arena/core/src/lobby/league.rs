//! League matches in the lobby: the bots of running leagues wait for league matches only,
//! and a league match takes the oldest waiting stream of each of its bots. The league
//! scheduler sees the lobby as a [`SeatPool`]: the seats it plays league matches with.

use std::collections::HashSet;
use std::sync::Arc;

use knobel_engine::Game;

use futures_util::future::BoxFuture;

use super::remote::{MatchFault, RemoteSeats};
use super::{Lobby, MatchInfo, Planned, TimeControl, Waiting, new_match_id};
use crate::referee::BotLink;
use crate::store::OpenLeagueMatch;

/// Claims a league match for a match id (`None`: it cannot be had), giving the attempt's
/// seed; called with the streams taken, before anything is sent on them.
pub type ClaimLeagueMatch = Box<dyn FnOnce(&str) -> BoxFuture<'static, Option<u64>> + Send>;

/// How a league match handed to the lobby came to an end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeagueMatchEnd {
    /// It was played: recorded, or kept for retry.
    Played,
    /// It did not start, and its claim may be held: give it back.
    Unstarted,
    /// It did not start and was never claimed (a seat on another arena could not be
    /// reserved): there is nothing to give back.
    Unclaimed,
}

/// Told a league match's id and how it came to an end.
pub type LeagueMatchEnded = Box<dyn FnOnce(&str, LeagueMatchEnd) + Send>;

/// The seats the league scheduler plays its matches with: the waiting streams of the bots
/// of running leagues. This arena's [`Lobby`] is one; a pool that also reaches streams
/// waiting on other arenas would be another, and the scheduler would not change.
pub trait SeatPool: Send + Sync {
    /// Sets the bots of running leagues: their streams are kept for league matches.
    fn set_league_bots(&self, bots: HashSet<String>);
    /// Adds `bots` to the bots of running leagues (a league just started).
    fn add_league_bots(&self, bots: &[String]);
    /// Notified when a stream of a bot of a running league starts waiting.
    fn league_joined(&self) -> &tokio::sync::Notify;
    /// Whether `bot` has a stream waiting that plays `game`.
    fn has_waiting(&self, bot: &str, game: Game) -> bool;
    /// Whether `bot` is connected: playing a match or waiting.
    fn is_connected(&self, bot: &str) -> bool;
    /// A number that grows whenever what the pool offers may have changed without
    /// [`SeatPool::league_joined`] being notified (in cluster mode: another arena's
    /// presence); it stays 0 for a pool that announces every change. The scheduler skips
    /// the store on a tick that finds it unchanged and nothing woken (see
    /// [`LOOK_AT_LEAST_EVERY`](crate::league::scheduler::LOOK_AT_LEAST_EVERY)).
    fn generation(&self) -> u64 {
        0
    }
    /// Whether the pool plays with other arenas (cluster mode): a league's concurrency then
    /// counts the matches playing in every arena, by the store.
    fn counts_every_arena(&self) -> bool {
        false
    }
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

    fn add_league_bots(&self, bots: &[String]) {
        Lobby::add_league_bots(self, bots)
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
    pub(super) fn wait_again(&self, group: Vec<Waiting>) {
        let mut waiting = self.waiting.lock().expect("lobby lock");
        waiting.extend(group);
        waiting.sort_by_key(|w| w.ticket);
        self.waiting_changed.notify_one();
    }

    /// Sets the bots of running leagues: their streams are kept for league matches.
    pub fn set_league_bots(&self, bots: HashSet<String>) {
        *self.league_bots.lock().expect("lobby lock") = bots;
    }

    /// Adds `bots` to the bots of running leagues.
    pub fn add_league_bots(&self, bots: &[String]) {
        let mut league_bots = self.league_bots.lock().expect("lobby lock");
        league_bots.extend(bots.iter().cloned());
    }

    /// Notified when a stream of a bot of a running league starts waiting.
    pub fn league_joined(&self) -> &tokio::sync::Notify {
        &self.league_joined
    }

    /// Notified when streams start or stop waiting (one waiter: the cluster's presence).
    pub fn waiting_changed(&self) -> &tokio::sync::Notify {
        &self.waiting_changed
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
    /// untouched). `ended` is called with the match id and how it came to an end
    /// ([`LeagueMatchEnd`]).
    pub fn start_league_match(
        self: &Arc<Self>,
        m: &OpenLeagueMatch,
        time_control: TimeControl,
        claim: ClaimLeagueMatch,
        ended: LeagueMatchEnded,
    ) -> bool {
        self.start_league_match_with(m, time_control, claim, ended, None)
    }

    /// [`Lobby::start_league_match`], the seats listed in `remote` (seat indexes, ascending)
    /// played by bots waiting on other arenas: reserved before the claim, linked after it
    /// (see [`RemoteSeats`]). Only the other seats need a stream waiting here.
    pub fn start_league_match_with(
        self: &Arc<Self>,
        m: &OpenLeagueMatch,
        time_control: TimeControl,
        claim: ClaimLeagueMatch,
        ended: LeagueMatchEnded,
        remote: Option<(Vec<usize>, Box<dyn RemoteSeats>)>,
    ) -> bool {
        if self.runner.shutting_down() {
            return false;
        }
        let remote_seats = remote.as_ref().map(|(s, _)| s.clone()).unwrap_or_default();
        let Some(local) = self.take_local_seats(m, &remote_seats) else {
            return false;
        };
        let match_id = new_match_id();
        let slot = crate::store::LeagueSlot {
            league_id: m.league_id,
            ordinal: m.ordinal,
        };
        let (preset, rules, names) = (m.preset.clone(), m.rules.clone(), m.seats.clone());
        let lobby = self.clone();
        self.runner.spawn(async move {
            let mut remote = remote.map(|(_, r)| r);
            let remote_ids = match &mut remote {
                Some(r) => match r.reserve().await {
                    Some(ids) => ids,
                    None => {
                        lobby.wait_again(local.into_iter().map(|(_, w)| w).collect());
                        ended(&match_id, LeagueMatchEnd::Unclaimed);
                        return;
                    }
                },
                None => Vec::new(),
            };
            let seat_bot_ids = seat_bot_ids(names.len(), &local, remote_ids);
            let info = Arc::new(MatchInfo {
                match_id,
                preset,
                rules,
                seat_names: names,
                seat_bot_ids,
                time_control,
            });
            let Some(seed) = claim(&info.match_id).await else {
                // Another arena has it, or the store cannot say: the streams wait again,
                // in their places (nothing was sent on them).
                if let Some(r) = remote.as_mut() {
                    r.release();
                }
                lobby.wait_again(local.into_iter().map(|(_, w)| w).collect());
                ended(&info.match_id, LeagueMatchEnd::Unstarted);
                return;
            };
            let Some((links, watched)) = link_remote(remote.as_mut()).await else {
                lobby.wait_again(local.into_iter().map(|(_, w)| w).collect());
                ended(&info.match_id, LeagueMatchEnd::Unstarted);
                return;
            };
            let mut links = links.into_iter();
            let mut local = local.into_iter().peekable();
            let players: Vec<Planned> = (0..info.seat_names.len())
                .map(|seat| match local.next_if(|(s, _)| *s == seat) {
                    Some((_, w)) => Planned::Bot(w.claim),
                    None => links.next().map_or(Planned::Absent, Planned::Linked),
                })
                .collect();
            let started = lobby
                .runner
                .play(info.clone(), seed, players, Some(slot), watched)
                .await;
            let end = if started {
                LeagueMatchEnd::Played
            } else {
                LeagueMatchEnd::Unstarted
            };
            ended(&info.match_id, end);
        });
        true
    }
}

/// Links the remote seats, if any, for a match aborted when one of their links breaks: the
/// links and what the match watches for that; `None` if a seat could not be linked.
async fn link_remote(
    remote: Option<&mut Box<dyn RemoteSeats>>,
) -> Option<(
    Vec<Box<dyn BotLink>>,
    Option<tokio::sync::watch::Receiver<bool>>,
)> {
    let Some(remote) = remote else {
        return Some((Vec::new(), None));
    };
    let (fault, watched) = MatchFault::new();
    let links = remote.link(fault).await?;
    Some((links, Some(watched)))
}

/// The bot id of each of `seats` seats: the local streams' (`local`, by seat) and, in the
/// other seats in order, the remote ones'.
fn seat_bot_ids(seats: usize, local: &[(usize, Waiting)], remote: Vec<i64>) -> Vec<Option<i64>> {
    let mut remote = remote.into_iter();
    (0..seats)
        .map(|seat| match local.iter().find(|(s, _)| *s == seat) {
            Some((_, w)) => Some(w.bot_id),
            None => remote.next(),
        })
        .collect()
}

impl Lobby {
    /// Takes the oldest waiting stream of each bot of `m` that plays its game, for every
    /// seat not in `remote`, by seat; `None` (nothing taken) if one is missing.
    fn take_local_seats(
        &self,
        m: &OpenLeagueMatch,
        remote: &[usize],
    ) -> Option<Vec<(usize, Waiting)>> {
        let game = m.rules.game();
        let mut waiting = self.waiting.lock().expect("lobby lock");
        waiting.retain(|w| !w.claim.is_closed());
        let mut picked: Vec<(usize, usize)> = Vec::with_capacity(m.seats.len());
        for (seat, bot) in m.seats.iter().enumerate() {
            if remote.contains(&seat) {
                continue;
            }
            let (i, _) = waiting
                .iter()
                .enumerate()
                .find(|(i, w)| w.seats(bot, game) && !picked.iter().any(|(_, p)| p == i))?;
            picked.push((seat, i));
        }
        // Take them out from the back, keeping seat order.
        picked.sort_by_key(|&(_, i)| std::cmp::Reverse(i));
        let mut taken: Vec<(usize, Waiting)> = picked
            .into_iter()
            .map(|(seat, i)| (seat, waiting.remove(i)))
            .collect();
        taken.sort_by_key(|&(seat, _)| seat);
        self.waiting_changed.notify_one();
        Some(taken)
    }
}
