//! The lobby: seats waiting bots into matches. Its own job is the queue of waiting streams
//! and pick-up matchmaking (here, and `league.rs` for league matches); each match's life,
//! from its recorded start to its recorded end, is the match runner's (`runner.rs`).
//!
//! Bots wait per preset. As soon as `seats` distinct bots wait for the same preset they play
//! each other: a match never seats one bot twice (two streams of one bot wait for separate
//! matches, the earliest waiting streams of distinct bots first). In practice mode a bot that has waited `practice_wait` without company is seated
//! at once against built-in players (`practice_opponents`: heuristic by default, or expert, or a line-up), so a bot author sees a full match within
//! seconds of connecting.
//!
//! A match starts only once its start is recorded: if the store cannot record it (the
//! database is unavailable, or the recorder's retry backlog is full), the claimed streams
//! are handed back to their connections untouched (nothing was sent on them) and the bots
//! wait in the lobby again. The end of a match is recorded through the recorder, which
//! keeps it and retries it if the database is unavailable: the bots are told the result
//! without waiting for the database to come back.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use knobel_engine::{Game, Rules};
use rand::RngExt;
use tokio::sync::{oneshot, watch};
use tracing::warn;

mod league;
mod presets;
mod remote;
mod runner;

pub use league::{ClaimLeagueMatch, LeagueMatchEnd, LeagueMatchEnded, SeatPool};
pub use presets::PresetRules;
pub use remote::{HeldStream, MatchFault, RemoteSeats, WaitingStream};
use runner::MatchRunner;
pub use runner::UNCONFIRMED_START_REASON;

use crate::observer::RuntimeObserver;
use crate::referee::{BotLink, MatchInfo, TimeControl};
use crate::store::{Store, now_ms};
use crate::streams::StreamRegistry;

/// How the lobby forms matches.
#[derive(Clone, Debug)]
pub struct LobbyConfig {
    /// Seats per match (2..=10).
    pub seats: usize,
    /// Seat a lone bot against built-in players after `practice_wait`.
    pub practice: bool,
    /// How long a bot waits for other bots before practice fills its match.
    pub practice_wait: Duration,
    /// The built-in players practice seats, in seat order after the bot's (each one of
    /// `knobel_engine::policy::POLICY_NAMES`; `heuristic` by default, `expert` for the
    /// strongest), repeated from the first when a match has more seats to fill. Never empty.
    pub practice_opponents: Vec<&'static str>,
    /// The time control of every match.
    pub time_control: TimeControl,
    /// The rules of every preset, checked when they were built (e.g. Zokken's rounds, see
    /// [`PresetRules::new`]): looking one up cannot fail.
    pub presets: PresetRules,
}

impl LobbyConfig {
    /// Builds the tables of the built-in experts practice mode seats (every preset at this
    /// lobby's seats), so that their first decisions are as fast as the rest: blocking, call
    /// it before the arena listens (a few seconds at most; nothing without an expert).
    pub fn prepare_builtins(&self) {
        if !self.practice || !self.practice_opponents.contains(&"expert") {
            return;
        }
        for preset in knobel_engine::PRESETS {
            if let Some(rules) = self.presets.get(preset) {
                knobel_engine::policy::ExpertPolicy::prepare(rules, self.seats);
            }
        }
    }
}

impl Default for LobbyConfig {
    fn default() -> LobbyConfig {
        LobbyConfig {
            seats: 4,
            practice: false,
            practice_wait: Duration::from_millis(500),
            practice_opponents: vec!["heuristic"],
            time_control: TimeControl::default(),
            presets: PresetRules::default(),
        }
    }
}

struct Waiting {
    ticket: u64,
    bot_id: i64,
    bot_name: String,
    /// The presets this stream plays in pick-up matches, the one it asked for first.
    presets: Vec<String>,
    /// The games it plays (league matches seat it in any of them).
    games: Vec<Game>,
    claim: Claim,
}

impl Waiting {
    fn plays(&self, preset: &str) -> bool {
        self.presets.iter().any(|p| p == preset)
    }

    /// Whether this stream can take `bot`'s seat in a league match of `game`.
    fn seats(&self, bot: &str, game: Game) -> bool {
        self.bot_name == bot && self.games.contains(&game)
    }
}

/// How a waiting connection is claimed for a match: the lobby sends it a sender through
/// which the connection hands over its stream (a [`BotLink`]) for the match.
pub type Claim = oneshot::Sender<Handoff>;

/// Where a claimed connection hands over its stream.
pub type Handoff = oneshot::Sender<Box<dyn BotLink>>;

/// How long a starting match waits for a claimed connection to hand over its stream.
const HANDOFF_TIMEOUT: Duration = Duration::from_secs(1);

/// Who a starting match seats: a waiting bot (claimed when the match task starts) or a
/// built-in player.
pub(super) enum Planned {
    Bot(Claim),
    /// A bot waiting on another arena, its seat linked (cluster mode).
    Linked(Box<dyn BotLink>),
    /// A bot that cannot be reached: it forfeits at once.
    Absent,
    /// A built-in player of this strategy.
    Builtin(&'static str),
}

/// Seats waiting bots into matches and runs them.
pub struct Lobby {
    config: LobbyConfig,
    /// Each match's life, from its recorded start to its recorded end.
    runner: MatchRunner,
    /// Every waiting stream, oldest first.
    waiting: Mutex<Vec<Waiting>>,
    /// Bots of running leagues: their streams wait for league matches only.
    league_bots: Mutex<HashSet<String>>,
    /// The arena's open Play streams, per bot.
    streams: StreamRegistry,
    /// Notified when a stream of a league bot starts waiting (the league scheduler can
    /// seat it now rather than at its next tick).
    league_joined: tokio::sync::Notify,
    /// Notified when streams start or stop waiting (the cluster's presence publishes them
    /// now rather than at its next check).
    waiting_changed: tokio::sync::Notify,
    next_ticket: Mutex<u64>,
}

/// A new match id: time-ordered and unique (milliseconds, then 64 random bits), in hex.
pub fn new_match_id() -> String {
    let random: u64 = rand::rng().random();
    format!("{:012x}{random:016x}", now_ms())
}

impl Lobby {
    /// A lobby writing its matches to `store`, through a [`Recorder`] (group commit).
    ///
    /// Must be called within a tokio runtime: it starts the recorder's task.
    pub fn new(
        config: LobbyConfig,
        (store, streams): (Store, StreamRegistry),
        observer: impl RuntimeObserver,
        shutdown: watch::Receiver<bool>,
    ) -> Arc<Lobby> {
        Arc::new(Lobby {
            config,
            streams,
            runner: MatchRunner::new(store, Arc::new(observer), shutdown),
            waiting: Mutex::new(Vec::new()),
            league_bots: Mutex::new(HashSet::new()),
            league_joined: tokio::sync::Notify::new(),
            waiting_changed: tokio::sync::Notify::new(),
            next_ticket: Mutex::new(0),
        })
    }

    /// The lobby's settings.
    pub fn config(&self) -> &LobbyConfig {
        &self.config
    }

    /// The rules a preset stands for in this lobby; `None` only for a name that is not a
    /// preset (the rules of every preset were built and checked at start-up).
    pub fn rules_for(&self, preset: &str) -> Option<Rules> {
        self.config.presets.get(preset).cloned()
    }

    /// What a waiting stream of bot `bot_name` is told about its wait for `preset`: how many
    /// distinct bots wait for that preset now (it included), and whether the bot is in a
    /// running league (then it waits for league matches only).
    pub fn waiting_for(&self, bot_name: &str, preset: &str) -> (usize, bool) {
        let league = self
            .league_bots
            .lock()
            .expect("lobby lock")
            .contains(bot_name);
        let waiting = self.waiting.lock().expect("lobby lock");
        let mut bots: Vec<i64> = waiting
            .iter()
            .filter(|w| w.plays(preset) && !w.claim.is_closed())
            .map(|w| w.bot_id)
            .collect();
        bots.sort_unstable();
        bots.dedup();
        (bots.len(), league)
    }

    /// Whether the bot `bot_name` is connected: it has a Play stream open here (waiting,
    /// playing, or between the two while a match is claimed or its result recorded), or
    /// plays a match here through another arena.
    pub fn is_connected(&self, bot_name: &str) -> bool {
        self.streams.is_open(bot_name) || self.runner.is_playing(bot_name)
    }

    /// A seat of the bot `bot_id` waits for a match of `preset`.
    pub fn join(self: &Arc<Self>, bot_id: i64, bot_name: String, preset: String, claim: Claim) {
        self.join_any(bot_id, bot_name, vec![preset], claim);
    }

    /// A seat of the bot `bot_id` waits for a match of any of `presets` (for a pick-up
    /// match, the first of them that fills a table; for a league match, any of their games).
    /// A bot of a running league waits for league matches only.
    pub fn join_any(
        self: &Arc<Self>,
        bot_id: i64,
        bot_name: String,
        presets: Vec<String>,
        claim: Claim,
    ) {
        let ticket = {
            let mut next = self.next_ticket.lock().expect("lobby lock");
            *next += 1;
            *next
        };
        let games = presets
            .iter()
            .filter_map(|p| self.rules_for(p).map(|r| r.game()))
            .collect();
        let first = presets.first().cloned();
        let full = {
            let league_bots = self.league_bots.lock().expect("lobby lock");
            if league_bots.contains(&bot_name) {
                self.league_joined.notify_one();
            }
            let mut waiting = self.waiting.lock().expect("lobby lock");
            waiting.retain(|w| !w.claim.is_closed());
            waiting.push(Waiting {
                ticket,
                bot_id,
                bot_name,
                presets: presets.clone(),
                games,
                claim,
            });
            presets.into_iter().find_map(|preset| {
                take_group_where(&mut waiting, self.config.seats, |w| {
                    w.plays(&preset) && !league_bots.contains(&w.bot_name)
                })
                .map(|group| (preset, group))
            })
        };
        self.waiting_changed.notify_one();
        if let Some((preset, group)) = full {
            self.start(preset, group);
        } else if self.config.practice
            && let Some(preset) = first
        {
            let lobby = self.clone();
            self.runner.spawn(async move {
                tokio::time::sleep(lobby.config.practice_wait).await;
                let entry = {
                    let league_bots = lobby.league_bots.lock().expect("lobby lock");
                    let mut waiting = lobby.waiting.lock().expect("lobby lock");
                    waiting
                        .iter()
                        .position(|w| w.ticket == ticket && !league_bots.contains(&w.bot_name))
                        .map(|i| waiting.remove(i))
                };
                if let Some(entry) = entry
                    && !entry.claim.is_closed()
                {
                    lobby.start(preset, vec![entry]);
                }
            });
        }
    }

    /// Starts a match of `bots`, filling the other seats with built-in players.
    fn start(self: &Arc<Self>, preset: String, bots: Vec<Waiting>) {
        if self.runner.shutting_down() {
            return;
        }
        let Some(rules) = self.rules_for(&preset) else {
            warn!(%preset, "a bot waits for an unknown preset");
            return;
        };
        let mut seat_names = Vec::new();
        let mut seat_bot_ids = Vec::new();
        let mut players = Vec::new();
        for bot in bots {
            debug_assert!(
                !seat_bot_ids.contains(&Some(bot.bot_id)),
                "one bot seated twice"
            );
            seat_names.push(bot.bot_name);
            seat_bot_ids.push(Some(bot.bot_id));
            players.push(Planned::Bot(bot.claim));
        }
        let mut builtin = 0;
        while players.len() < self.config.seats {
            builtin += 1;
            // In the reserved name space: no registered bot can have this name.
            let opponents = &self.config.practice_opponents;
            let strategy = opponents
                .get((builtin - 1) % opponents.len().max(1))
                .copied()
                .unwrap_or("heuristic");
            seat_names.push(knobel_proto::names::builtin_name(strategy, builtin));
            seat_bot_ids.push(None);
            players.push(Planned::Builtin(strategy));
        }
        let info = Arc::new(MatchInfo {
            match_id: new_match_id(),
            preset,
            rules,
            seat_names,
            seat_bot_ids,
            time_control: self.config.time_control,
        });
        let seed: u64 = rand::rng().random();
        let lobby = self.clone();
        self.runner.spawn(async move {
            lobby.runner.play(info, seed, players, None, None).await;
        });
    }

    /// Stops seating bots and hands the running matches to [`MatchRunner::drain`]: they
    /// end within `grace` or are aborted, and the recorder writes what it holds within
    /// `records`. Call once the shutdown signal is on (so that no new match starts).
    pub async fn drain(&self, grace: Duration, records: Duration) {
        self.waiting.lock().expect("lobby lock").clear();
        self.runner.drain(grace, records).await;
    }

    /// Bots waiting for a match, over all presets.
    pub fn waiting(&self) -> usize {
        self.waiting.lock().expect("lobby lock").len()
    }
}

/// Takes the first group of `seats` waiting streams of distinct bots from `queue`, oldest
/// first (a stream of a bot already in the group is passed over and keeps its place), or
/// nothing if there are not `seats` distinct bots waiting.
#[cfg(test)]
fn take_group(queue: &mut Vec<Waiting>, seats: usize) -> Option<Vec<Waiting>> {
    take_group_where(queue, seats, |_| true)
}

/// [`take_group`] among the streams that `accept`.
fn take_group_where(
    queue: &mut Vec<Waiting>,
    seats: usize,
    accept: impl Fn(&Waiting) -> bool,
) -> Option<Vec<Waiting>> {
    let mut picked: Vec<usize> = Vec::with_capacity(seats);
    for (i, waiting) in queue.iter().enumerate() {
        if picked.len() == seats {
            break;
        }
        if accept(waiting) && !picked.iter().any(|&p| queue[p].bot_id == waiting.bot_id) {
            picked.push(i);
        }
    }
    if picked.len() < seats {
        return None;
    }
    // Remove from the back so the earlier indices stay valid; then put back in order.
    let mut group: Vec<Waiting> = picked.iter().rev().map(|&i| queue.remove(i)).collect();
    group.reverse();
    Some(group)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(ticket: u64, bot_id: i64) -> Waiting {
        let (claim, _claimed) = oneshot::channel();
        Waiting {
            ticket,
            bot_id,
            bot_name: format!("bot-{bot_id}"),
            presets: vec!["schocken".to_owned()],
            games: vec![Game::Schocken],
            claim,
        }
    }

    fn tickets(queue: &[Waiting]) -> Vec<u64> {
        queue.iter().map(|w| w.ticket).collect()
    }

    #[test]
    fn groups_are_of_distinct_bots_oldest_first() {
        // Bot 1 has two streams waiting, bot 2 one: no 3-seat group.
        let mut queue = vec![waiting(1, 1), waiting(2, 1), waiting(3, 2)];
        assert!(take_group(&mut queue, 3).is_none());
        assert_eq!(tickets(&queue), [1, 2, 3]);
        // A third bot arrives: bot 1's older stream plays, its younger one keeps waiting.
        queue.push(waiting(4, 3));
        let group = take_group(&mut queue, 3).expect("three distinct bots");
        assert_eq!(tickets(&group), [1, 3, 4]);
        assert_eq!(tickets(&queue), [2]);
        // Two streams of one bot never make a 2-seat match.
        let mut queue = vec![waiting(5, 7), waiting(6, 7)];
        assert!(take_group(&mut queue, 2).is_none());
        queue.push(waiting(7, 8));
        assert_eq!(tickets(&take_group(&mut queue, 2).unwrap()), [5, 7]);
        assert_eq!(tickets(&queue), [6]);
    }
}
