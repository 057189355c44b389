//! The lobby: seats waiting bots into matches.
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

use knobel_engine::policy::by_name;
use knobel_engine::{Game, Rules};
use rand::RngExt;
use tokio::sync::{oneshot, watch};
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

mod league;
mod presets;

pub use presets::PresetRules;

use crate::league::luck::adjusted_scores_blocking;
use crate::observer::{Observer, RuntimeObserver};
use crate::referee::{AbsentBot, BotLink, MatchInfo, MatchReport, Player, TimeControl, run_match};
use crate::store::{
    AbortedMatch, FinishedMatch, MatchWrite, NewMatch, Recorded, Recorder, Store, now_ms,
};

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
enum Planned {
    Bot(Claim),
    /// A built-in player of this strategy.
    Builtin(&'static str),
}

/// Seats waiting bots into matches and runs them.
pub struct Lobby {
    config: LobbyConfig,
    recorder: Recorder,
    observer: Observer,
    shutdown: watch::Receiver<bool>,
    /// Turned true when running matches must stop now (the shutdown grace is over); the
    /// shutdown signal itself only stops new matches.
    abort: watch::Sender<bool>,
    /// Every waiting stream, oldest first.
    waiting: Mutex<Vec<Waiting>>,
    /// Matches in progress per bot name (pick-up and league), for "busy or offline".
    playing: Mutex<std::collections::HashMap<String, usize>>,
    /// Bots of running leagues: their streams wait for league matches only.
    league_bots: Mutex<HashSet<String>>,
    /// Notified when a stream of a league bot starts waiting (the league scheduler can
    /// seat it now rather than at its next tick).
    league_joined: tokio::sync::Notify,
    next_ticket: Mutex<u64>,
    matches: TaskTracker,
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
        store: Store,
        observer: impl RuntimeObserver,
        shutdown: watch::Receiver<bool>,
    ) -> Arc<Lobby> {
        let observer: Observer = Arc::new(observer);
        Arc::new(Lobby {
            config,
            recorder: Recorder::spawn_observed(store, observer.clone()),
            observer,
            shutdown,
            abort: watch::channel(false).0,
            waiting: Mutex::new(Vec::new()),
            playing: Mutex::new(std::collections::HashMap::new()),
            league_bots: Mutex::new(HashSet::new()),
            league_joined: tokio::sync::Notify::new(),
            next_ticket: Mutex::new(0),
            matches: TaskTracker::new(),
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

    /// Whether the bot `bot_name` is connected: playing a match or waiting in the lobby.
    pub fn is_connected(&self, bot_name: &str) -> bool {
        let playing = self
            .playing
            .lock()
            .expect("lobby lock")
            .get(bot_name)
            .is_some_and(|&n| n > 0);
        playing
            || self
                .waiting
                .lock()
                .expect("lobby lock")
                .iter()
                .any(|w| w.bot_name == bot_name && !w.claim.is_closed())
    }

    /// Counts the registered bots of `info` as playing (`by` 1) or no longer (`by` -1).
    fn count_playing(&self, info: &MatchInfo, starting: bool) {
        let mut playing = self.playing.lock().expect("lobby lock");
        for (name, id) in info.seat_names.iter().zip(&info.seat_bot_ids) {
            if id.is_none() {
                continue;
            }
            let n = playing.entry(name.clone()).or_default();
            *n = if starting {
                *n + 1
            } else {
                n.saturating_sub(1)
            };
            if *n == 0 {
                playing.remove(name);
            }
        }
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
        if let Some((preset, group)) = full {
            self.start(preset, group);
        } else if self.config.practice
            && let Some(preset) = first
        {
            let lobby = self.clone();
            self.matches.spawn(async move {
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
        if *self.shutdown.borrow() {
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
        self.matches.spawn(async move {
            lobby.play(info, seed, players, None).await;
        });
    }

    /// Plays a match and records it; whether it started (false: its streams were handed
    /// back, e.g. because its start could not be recorded).
    async fn play(
        &self,
        info: Arc<MatchInfo>,
        seed: u64,
        players: Vec<Planned>,
        league: Option<crate::store::LeagueSlot>,
    ) -> bool {
        let players = claim_all(players, &info.rules, seed).await;
        if !self.may_start(&info, players.len()) || !self.record_start(&info, seed, league).await {
            hand_back(players);
            return false;
        }
        let game = info.rules.game();
        info!(match_id = %info.match_id, preset = %info.preset, seats = ?info.seat_names, bot_ids = ?info.seat_bot_ids, "match started");
        self.observer.match_started(game);
        self.count_playing(&info, true);
        let played = run_match(info.clone(), seed, players, self.abort.subscribe()).await;
        self.count_playing(&info, false);
        let (report, mut announcement) = match played {
            Ok(played) => played,
            Err(error) => {
                // Checked before the start: not reached. Were it, the match is aborted, not
                // left running.
                self.abort_unplayable(&info, &error).await;
                return true;
            }
        };
        let record = self.record(&info, &report, league);
        let mut record = std::pin::pin!(record);
        // The last events ride on the result, unless recording outlasts their delay.
        let recorded = match announcement.events_due() {
            Some(due) => tokio::select! {
                () = &mut record => true,
                () = tokio::time::sleep_until(due) => {
                    announcement.flush_events();
                    false
                }
            },
            None => false,
        };
        if !recorded {
            record.await;
        }
        announcement.send();
        true
    }

    /// Whether a match of `info` for `seats` may start now: its rules can be played by its
    /// seats, the arena is not shutting down, and the store can take its results.
    fn may_start(&self, info: &MatchInfo, seats: usize) -> bool {
        if let Err(error) = knobel_engine::Match::check_setup(&info.rules, seats) {
            // The store checks what it reads; this is the last line of defence.
            tracing::error!(match_id = %info.match_id, error = %error, "match not started: its rules cannot be played by its seats");
            return false;
        }
        if *self.shutdown.borrow() {
            // Shutting down while the streams were being claimed: no new match.
            return false;
        }
        if self.recorder.is_full() {
            warn!(
                match_id = %info.match_id,
                pending = self.recorder.pending(),
                "match not started: the store has too many results waiting to be written"
            );
            return false;
        }
        true
    }

    /// Records the start of match `info` on `seed`; whether it was recorded (if not, its
    /// bots wait again).
    async fn record_start(
        &self,
        info: &MatchInfo,
        seed: u64,
        league: Option<crate::store::LeagueSlot>,
    ) -> bool {
        let game = info.rules.game();
        let new = NewMatch {
            id: info.match_id.clone(),
            game: game.name().to_owned(),
            preset: info.preset.clone(),
            rules_json: serde_json::to_string(&info.rules).unwrap_or_default(),
            seed: seed as i64,
            seat_names: info.seat_names.clone(),
            seat_bot_ids: info.seat_bot_ids.clone(),
            started_at_ms: now_ms(),
            league,
        };
        if let Err(error) = self.recorder.write(MatchWrite::Start(new)).await {
            warn!(match_id = %info.match_id, error = %error, "match not started: its start cannot be recorded; its bots wait again");
            if error.maybe_written() {
                // The start may have been committed after all: make sure it does not stay
                // "running".
                self.recorder.retry_later(MatchWrite::Abort(AbortedMatch {
                    id: info.match_id.clone(),
                    reason: "the match did not start: its start could not be confirmed".to_owned(),
                    log_json: None,
                    finished_at_ms: now_ms(),
                }));
            }
            return false;
        }
        true
    }

    /// Records match `info`, whose start was recorded, as aborted: it cannot be set up.
    async fn abort_unplayable(&self, info: &MatchInfo, error: &knobel_engine::SetupError) {
        tracing::error!(match_id = %info.match_id, error = %error, "match aborted: it cannot be set up");
        let abort = MatchWrite::Abort(AbortedMatch {
            id: info.match_id.clone(),
            reason: "internal error".to_owned(),
            log_json: None,
            finished_at_ms: now_ms(),
        });
        if let Recorded::Refused(error) = self.recorder.record(abort).await {
            warn!(match_id = %info.match_id, error = %error, "cannot record the match's abort");
        }
    }

    async fn record(
        &self,
        info: &MatchInfo,
        report: &MatchReport,
        league: Option<crate::store::LeagueSlot>,
    ) {
        self.observer.match_ended(info, report);
        let log_json = report.log.to_json();
        let match_id = info.match_id.clone();
        let write = if let Some(outcome) = &report.outcome {
            info!(match_id = %info.match_id, bot_ids = ?info.seat_bot_ids, placings = ?outcome.placings, forfeits = ?outcome.forfeits, strikes = ?outcome.strikes, "match finished");
            // Only league matches: their standings read them (crate::league::luck).
            let adjusted = match league {
                Some(_) => adjusted_scores_blocking(&match_id, report.log.clone()).await,
                None => None,
            };
            let finished = FinishedMatch {
                id: match_id,
                log_json,
                outcome: outcome.clone(),
                finished_at_ms: now_ms(),
                adjusted,
            };
            match league {
                Some(slot) => MatchWrite::FinishLeague(finished, slot),
                None => MatchWrite::Finish(finished),
            }
        } else {
            info!(match_id = %info.match_id, "match aborted");
            MatchWrite::Abort(AbortedMatch {
                id: match_id,
                reason: "the arena shut down".to_owned(),
                log_json: Some(log_json),
                finished_at_ms: now_ms(),
            })
        };
        match self.recorder.record(write).await {
            Recorded::Written | Recorded::Pending => {}
            Recorded::Refused(error) => {
                warn!(match_id = %info.match_id, error = %error, "cannot record the match result");
            }
        }
    }

    /// Bots waiting for a match, over all presets.
    pub fn waiting(&self) -> usize {
        self.waiting.lock().expect("lobby lock").len()
    }

    /// Stops seating bots and waits (at most `grace`) for running matches to end; then
    /// aborts the matches still running (they are recorded as aborted and their bots told),
    /// and waits (at most `records`) for the recorder to write what it still holds.
    ///
    /// Call once the shutdown signal is on (so that no new match starts).
    pub async fn drain(&self, grace: Duration, records: Duration) {
        self.waiting.lock().expect("lobby lock").clear();
        self.matches.close();
        if tokio::time::timeout(grace, self.matches.wait())
            .await
            .is_err()
        {
            warn!(
                grace_secs = grace.as_secs_f64(),
                "matches still running after the shutdown grace: aborting them"
            );
            let _ = self.abort.send(true);
            self.matches.wait().await;
        }
        let lost = self.recorder.drain(records).await;
        if lost > 0 {
            tracing::error!(
                lost,
                "match records could not be written before the arena stopped: they are lost"
            );
        }
    }
}

/// Gives the claimed streams of a match that did not start back to their connections, which
/// put their bots in the lobby again.
fn hand_back(players: Vec<Player>) {
    for player in players {
        if let Player::Bot(link) = player {
            link.release();
        }
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

/// Claims the streams of the planned bots (all at once) and builds the players; a bot
/// whose connection is gone, or does not hand its stream over in time, is absent.
/// Built-in players are told the rules and seeded from the match seed and their seat.
async fn claim_all(planned: Vec<Planned>, rules: &Rules, seed: u64) -> Vec<Player> {
    // `None`: a built-in player. A claim that cannot be sent (the connection is gone) drops
    // its sender, so the handoff fails at once.
    let handoffs: Vec<_> = planned
        .into_iter()
        .map(|p| match p {
            Planned::Bot(claim) => {
                let (give, taken) = oneshot::channel::<Box<dyn BotLink>>();
                let _ = claim.send(give);
                Ok(taken)
            }
            Planned::Builtin(strategy) => Err(strategy),
        })
        .collect();
    let mut players = Vec::with_capacity(handoffs.len());
    for (seat, handoff) in handoffs.into_iter().enumerate() {
        players.push(match handoff {
            Err(strategy) => {
                let mut policy = by_name(strategy, seed ^ (seat as u64) << 32)
                    .or_else(|| by_name("heuristic", seed))
                    .expect("heuristic is a built-in player");
                policy.begin_match(rules);
                Player::Builtin(policy)
            }
            Ok(taken) => match tokio::time::timeout(HANDOFF_TIMEOUT, taken).await {
                Ok(Ok(link)) => Player::Bot(link),
                _ => Player::Bot(Box::new(AbsentBot)),
            },
        });
    }
    players
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
