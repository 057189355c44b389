//! The match runner: the lobby's second job, one match's life from its recorded start to its
//! recorded end. It claims the seats' streams, records the start (or hands the streams back
//! untouched), runs the referee, records the end through the recorder (group commit, kept
//! and retried), and tells the observer. The lobby's queue decides who plays; the runner
//! does not care where a seat's stream came from.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use knobel_engine::Rules;
use knobel_engine::policy::by_name;
use tokio::sync::{oneshot, watch};
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use super::{HANDOFF_TIMEOUT, Planned};
use crate::league::luck::adjusted_scores_blocking;
use crate::observer::Observer;
use crate::referee::{AbsentBot, BotLink, MatchInfo, MatchReport, Player, run_match};
use crate::store::{
    AbortedMatch, FinishedMatch, MatchWrite, NewMatch, Recorded, Recorder, Store, now_ms,
};

/// The abort reason of a match whose start the store may have written without confirming
/// it (a timeout, a broken connection): the match never started, its bots wait again, and
/// the record is closed so that it does not stay running.
pub const UNCONFIRMED_START_REASON: &str =
    "the match did not start: its start could not be confirmed";

/// Runs the lobby's matches and records them.
pub(super) struct MatchRunner {
    recorder: Recorder,
    observer: Observer,
    shutdown: watch::Receiver<bool>,
    /// Turned true when running matches must stop now (the shutdown grace is over); the
    /// shutdown signal itself only stops new matches.
    abort: watch::Sender<bool>,
    /// Matches in progress per bot name (pick-up and league), for "busy or offline".
    playing: Mutex<HashMap<String, usize>>,
    /// The lobby's tasks: matches, and practice mode's timers.
    matches: TaskTracker,
}

impl MatchRunner {
    /// A runner recording to `store` through a [`Recorder`] (it starts the recorder's task:
    /// call within a tokio runtime), reporting to `observer`; no match starts once
    /// `shutdown` is true.
    pub(super) fn new(
        store: Store,
        observer: Observer,
        shutdown: watch::Receiver<bool>,
    ) -> MatchRunner {
        MatchRunner {
            recorder: Recorder::spawn_observed(store, observer.clone()),
            observer,
            shutdown,
            abort: watch::channel(false).0,
            playing: Mutex::new(HashMap::new()),
            matches: TaskTracker::new(),
        }
    }

    /// Whether the arena is shutting down (no new match starts).
    pub(super) fn shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Runs `task` (a match, or what leads to one) among the lobby's tasks, which
    /// [`MatchRunner::drain`] waits for.
    pub(super) fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.matches.spawn(task);
    }

    /// Whether bot `bot_name` plays a match now.
    pub(super) fn is_playing(&self, bot_name: &str) -> bool {
        self.playing
            .lock()
            .expect("lobby lock")
            .get(bot_name)
            .is_some_and(|&n| n > 0)
    }

    /// Counts the registered bots of `info` as playing (`starting`) or no longer.
    fn count_playing(&self, info: &MatchInfo, starting: bool) {
        for (name, id) in info.seat_names.iter().zip(&info.seat_bot_ids) {
            if id.is_some() {
                self.count_bot(name, starting);
            }
        }
    }

    /// Counts bot `name` as playing one more match (`starting`) or one fewer.
    pub(super) fn count_bot(&self, name: &str, starting: bool) {
        let mut playing = self.playing.lock().expect("lobby lock");
        let n = playing.entry(name.to_owned()).or_default();
        *n = if starting {
            *n + 1
        } else {
            n.saturating_sub(1)
        };
        if *n == 0 {
            playing.remove(name);
        }
    }

    /// The bots playing a match now.
    pub(super) fn playing_bots(&self) -> Vec<String> {
        let playing = self.playing.lock().expect("lobby lock");
        playing.keys().cloned().collect()
    }

    /// Plays a match and records it; whether it started (false: its streams were handed
    /// back, e.g. because its start could not be recorded). A match with seats linked from
    /// other arenas is aborted (never scored) once `fault` turns true: a link broke.
    pub(super) async fn play(
        &self,
        info: Arc<MatchInfo>,
        seed: u64,
        players: Vec<Planned>,
        league: Option<crate::store::LeagueSlot>,
        fault: Option<watch::Receiver<bool>>,
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
        let stop = match &fault {
            Some(fault) => stop_on_either(self.abort.subscribe(), fault.clone()),
            None => self.abort.subscribe(),
        };
        let played = run_match(info.clone(), seed, players, stop).await;
        let broken = fault.is_some_and(|f| *f.borrow());
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
        let record = self.record(&info, &report, league, broken);
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
                    reason: UNCONFIRMED_START_REASON.to_owned(),
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
        broken: bool,
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
            let reason = if broken {
                "a link between arenas broke"
            } else {
                "the arena shut down"
            };
            info!(match_id = %info.match_id, reason, "match aborted");
            MatchWrite::Abort(AbortedMatch {
                id: match_id,
                reason: reason.to_owned(),
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

    /// Waits (at most `grace`) for running matches to end; then aborts the matches still
    /// running (they are recorded as aborted and their bots told), and waits (at most
    /// `records`) for the recorder to write what it still holds.
    pub(super) async fn drain(&self, grace: Duration, records: Duration) {
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

/// A stop signal that turns true once `abort` (the arena's) or `fault` (the match's) does;
/// its task ends with the match (once the receiver is dropped).
fn stop_on_either(
    mut abort: watch::Receiver<bool>,
    mut fault: watch::Receiver<bool>,
) -> watch::Receiver<bool> {
    let (stop, stopped) = watch::channel(false);
    tokio::spawn(async move {
        tokio::select! {
            _ = crate::shutdown::requested(&mut abort) => {}
            _ = crate::shutdown::requested(&mut fault) => {}
            () = stop.closed() => return,
        }
        let _ = stop.send(true);
    });
    stopped
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
                Ok(Ok(taken))
            }
            Planned::Linked(link) => Ok(Err(link)),
            Planned::Absent => Ok(Err(Box::new(AbsentBot) as Box<dyn BotLink>)),
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
            Ok(Err(link)) => Player::Bot(link),
            Ok(Ok(taken)) => match tokio::time::timeout(HANDOFF_TIMEOUT, taken).await {
                Ok(Ok(link)) => Player::Bot(link),
                _ => Player::Bot(Box::new(AbsentBot)),
            },
        });
    }
    players
}
