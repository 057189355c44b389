//! [`ClusterPool`]: the league scheduler's seats in cluster mode, this arena's lobby and the
//! streams waiting on the other arenas.
//!
//! A league match is refereed preferably by the arena holding most of its seats (ties: the
//! smallest instance id); another arena holding one of its seats takes it once it has been
//! ready, without a break, for [`PREFERRED_DELAY`] without starting. An arena holding none
//! of its seats never referees it (each of its seats would be relayed). Either way the
//! store's claim decides who plays it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::{BoxFuture, join_all};
use knobel_engine::Game;

use super::Cluster;
use super::reserve::Reservation;
use crate::lobby::{ClaimLeagueMatch, LeagueMatchEnded, Lobby, MatchFault, RemoteSeats, SeatPool};
use crate::referee::{BotLink, TimeControl};
use crate::store::OpenLeagueMatch;

/// How long a league match ready to start waits for its preferred referee before any arena
/// holding one of its seats may take it.
pub const PREFERRED_DELAY: Duration = Duration::from_millis(400);

/// The longest time between two sightings of a league match ready to start that still counts
/// as ready without a break: the scheduler looks at least every
/// [`LOOK_AT_LEAST_EVERY`](crate::league::scheduler::LOOK_AT_LEAST_EVERY) (250 ms) while a
/// league runs; a longer gap means its bots were busy meanwhile or it was not looked at, and
/// its wait for the preferred referee begins again.
const READY_GAP: Duration = Duration::from_millis(600);

/// When a league match was first seen ready to start without a break, and last seen so.
#[derive(Clone, Copy, Debug)]
struct Ready {
    since: Instant,
    last: Instant,
}

impl Ready {
    /// A sighting at `now` of a match last known as `known`: how long it has been ready
    /// without a break.
    fn seen(known: Option<Ready>, now: Instant) -> Ready {
        match known {
            Some(r) if now.saturating_duration_since(r.last) <= READY_GAP => Ready {
                since: r.since,
                last: now,
            },
            _ => Ready {
                since: now,
                last: now,
            },
        }
    }
}

/// The league scheduler's seats in cluster mode.
pub struct ClusterPool {
    lobby: Arc<Lobby>,
    cluster: Arc<Cluster>,
    /// Since when each league match (league, ordinal) has been seen ready without a break,
    /// for the preferred referee's delay.
    ready_since: Mutex<HashMap<(i64, u32), Ready>>,
    /// Reservations asked and not answered yet, per (arena, bot): not offered twice.
    asking: Arc<Mutex<HashMap<(String, String), usize>>>,
}

impl ClusterPool {
    /// The seats of `lobby` and of the arenas `cluster` knows.
    pub fn new(lobby: Arc<Lobby>, cluster: Arc<Cluster>) -> Arc<ClusterPool> {
        Arc::new(ClusterPool {
            lobby,
            cluster,
            ready_since: Mutex::default(),
            asking: Arc::default(),
        })
    }

    /// Where each seat of `m` would be played: `None` for this arena, or the holder; `None`
    /// overall if a bot waits nowhere.
    fn placement(&self, m: &OpenLeagueMatch) -> Option<Vec<Option<super::presence::Holder>>> {
        let game = m.rules.game();
        let asking = self.asking.lock().expect("pool lock");
        let mut placed = Vec::with_capacity(m.seats.len());
        for bot in &m.seats {
            if self.lobby.has_waiting(bot, game) {
                placed.push(None);
                continue;
            }
            let asked = |instance: &str| {
                asking
                    .iter()
                    .find(|((i, b), _)| i == instance && b == bot)
                    .map_or(0, |(_, n)| *n)
            };
            placed.push(Some(self.cluster.presence.holder(bot, game, asked)?));
        }
        Some(placed)
    }

    /// Whether this arena referees a match placed so, now: it is the preferred referee, or
    /// it holds one of its seats and the match has been ready for long enough.
    fn referees(&self, m: &OpenLeagueMatch, placed: &[Option<super::presence::Holder>]) -> bool {
        let here = self.cluster.instance.as_str();
        let holders = placed
            .iter()
            .map(|holder| holder.as_ref().map_or(here, |h| h.instance.as_str()));
        match role(holders, here) {
            Role::Preferred => return true,
            Role::NoSeat => return false,
            Role::Other => {}
        }
        let mut ready = self.ready_since.lock().expect("pool lock");
        let now = Instant::now();
        if ready.len() > 10_000 {
            ready.retain(|_, r| now.saturating_duration_since(r.last) < Duration::from_secs(60));
        }
        let key = (m.league_id, m.ordinal);
        let seen = Ready::seen(ready.get(&key).copied(), now);
        ready.insert(key, seen);
        now.saturating_duration_since(seen.since) >= PREFERRED_DELAY
    }
}

/// What arena `here` is to a match whose seats are held by `holders` (an instance id per
/// seat).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// It holds most seats (ties: the smallest instance id): it referees at once.
    Preferred,
    /// It holds a seat, fewer than the preferred referee: it may take the match later.
    Other,
    /// It holds none: it never referees the match.
    NoSeat,
}

fn role<'a>(holders: impl IntoIterator<Item = &'a str>, here: &str) -> Role {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for arena in holders {
        *count.entry(arena).or_default() += 1;
    }
    let preferred = count
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(arena, _)| *arena);
    if preferred == Some(here) {
        Role::Preferred
    } else if count.contains_key(here) {
        Role::Other
    } else {
        Role::NoSeat
    }
}

impl SeatPool for ClusterPool {
    fn set_league_bots(&self, bots: HashSet<String>) {
        self.lobby.set_league_bots(bots);
    }

    fn add_league_bots(&self, bots: &[String]) {
        self.lobby.add_league_bots(bots);
    }

    fn league_joined(&self) -> &tokio::sync::Notify {
        self.lobby.league_joined()
    }

    fn has_waiting(&self, bot: &str, game: Game) -> bool {
        self.lobby.has_waiting(bot, game)
            || self.cluster.presence.holder(bot, game, |_| 0).is_some()
    }

    fn is_connected(&self, bot: &str) -> bool {
        self.lobby.is_connected(bot) || self.cluster.presence.is_connected(bot)
    }

    fn generation(&self) -> u64 {
        self.cluster.presence.generation()
    }

    fn counts_every_arena(&self) -> bool {
        true
    }

    fn start_league_match(
        self: Arc<Self>,
        m: &OpenLeagueMatch,
        time_control: TimeControl,
        claim: ClaimLeagueMatch,
        ended: LeagueMatchEnded,
    ) -> bool {
        let Some(placed) = self.placement(m) else {
            // Not ready: a later sighting starts its wait again.
            self.ready_since
                .lock()
                .expect("pool lock")
                .remove(&(m.league_id, m.ordinal));
            return false;
        };
        if placed.iter().all(Option::is_none) {
            return Lobby::start_league_match(&self.lobby, m, time_control, claim, ended);
        }
        if !self.referees(m, &placed) {
            return false;
        }
        let game = m.rules.game();
        let mut indexes = Vec::new();
        let mut seats = Vec::new();
        for (seat, holder) in placed.into_iter().enumerate() {
            if let Some(holder) = holder {
                indexes.push(seat);
                seats.push((m.seats[seat].clone(), holder));
            }
        }
        let remote = ClusterSeats {
            cluster: self.cluster.clone(),
            asking: self.asking.clone(),
            game,
            seats,
            reserved: Vec::new(),
            asking_counted: false,
        };
        let mut remote = remote;
        remote.count_asking(1);
        let started = self.lobby.start_league_match_with(
            m,
            time_control,
            claim,
            ended,
            Some((indexes, Box::new(remote))),
        );
        if started {
            self.ready_since
                .lock()
                .expect("pool lock")
                .remove(&(m.league_id, m.ordinal));
        }
        started
    }
}

/// The seats of one league match on other arenas.
struct ClusterSeats {
    cluster: Arc<Cluster>,
    asking: Arc<Mutex<HashMap<(String, String), usize>>>,
    game: Game,
    /// Each remote seat's bot and where it waits, in seat order.
    seats: Vec<(String, super::presence::Holder)>,
    reserved: Vec<Reservation>,
    /// Counted in `asking` (until the reservations are answered).
    asking_counted: bool,
}

impl ClusterSeats {
    /// Counts this match's reservations as asked (`+1`) or answered (`-1`).
    fn count_asking(&mut self, delta: isize) {
        if self.asking_counted == (delta > 0) {
            return;
        }
        self.asking_counted = delta > 0;
        let mut asking = self.asking.lock().expect("pool lock");
        for (bot, holder) in &self.seats {
            let key = (holder.instance.clone(), bot.clone());
            let n = asking.entry(key.clone()).or_default();
            *n = n.saturating_add_signed(delta);
            if *n == 0 {
                asking.remove(&key);
            }
        }
    }
}

impl Drop for ClusterSeats {
    fn drop(&mut self) {
        self.count_asking(-1);
        self.cluster.release(std::mem::take(&mut self.reserved));
    }
}

impl RemoteSeats for ClusterSeats {
    fn reserve(&mut self) -> BoxFuture<'_, Option<Vec<i64>>> {
        Box::pin(async move {
            let asked = self
                .seats
                .iter()
                .map(|(bot, h)| self.cluster.reserve(&h.instance, &h.peer, bot, self.game));
            let answers = join_all(asked).await;
            self.count_asking(-1);
            let all = answers.iter().all(Option::is_some);
            self.reserved = answers.into_iter().flatten().collect();
            if !all {
                self.cluster.release(std::mem::take(&mut self.reserved));
                return None;
            }
            Some(self.reserved.iter().map(|r| r.bot_id).collect())
        })
    }

    fn link(&mut self, fault: MatchFault) -> BoxFuture<'_, Option<Vec<Box<dyn BotLink>>>> {
        Box::pin(async move {
            let reserved = std::mem::take(&mut self.reserved);
            let linking = reserved.iter().map(|r| self.cluster.link(r, fault.clone()));
            let links = join_all(linking).await;
            if links.iter().any(Option::is_none) {
                // Unused tickets are given back; linked seats' streams go back to their
                // connections untouched when their links drop (nothing was sent).
                let unused = reserved
                    .into_iter()
                    .zip(&links)
                    .filter(|(_, link)| link.is_none())
                    .map(|(reservation, _)| reservation)
                    .collect();
                self.cluster.release(unused);
                return None;
            }
            self.cluster
                .metrics
                .relayed_seats
                .inc_by(links.len() as u64);
            Some(
                links
                    .into_iter()
                    .flatten()
                    .map(|l| Box::new(l) as Box<dyn BotLink>)
                    .collect(),
            )
        })
    }

    fn release(&mut self) {
        self.cluster.release(std::mem::take(&mut self.reserved));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arena_holding_most_seats_referees_and_one_holding_none_never_does() {
        assert_eq!(role(["b", "a", "a", "c"], "a"), Role::Preferred);
        assert_eq!(role(["b", "a", "a", "c"], "b"), Role::Other);
        // A tie goes to the smallest instance id.
        assert_eq!(role(["b", "a", "b", "a"], "a"), Role::Preferred);
        assert_eq!(role(["b", "a", "b", "a"], "b"), Role::Other);
        // Every seat elsewhere: each would be relayed.
        assert_eq!(role(["a", "a", "b", "b"], "c"), Role::NoSeat);
    }

    #[test]
    fn a_match_is_ready_without_a_break_only_while_it_is_seen_within_the_gap() {
        let t0 = Instant::now();
        let first = Ready::seen(None, t0);
        assert_eq!(first.since, t0);
        let step = READY_GAP / 2;
        let second = Ready::seen(Some(first), t0 + step);
        let third = Ready::seen(Some(second), t0 + step * 2);
        assert_eq!((second.since, third.since), (t0, t0), "seen within the gap");
        assert_eq!(third.last, t0 + step * 2);
        // Not seen for longer than the gap: its wait begins again.
        let later = t0 + step * 2 + READY_GAP + Duration::from_millis(1);
        assert_eq!(Ready::seen(Some(third), later).since, later);
    }
}
