//! The referee: drives one engine [`Match`] with its seats under a time control.
//!
//! A seat is played by a connected bot (a [`BotLink`]: the bot's Play stream, lent to the
//! match, which the referee reads and writes directly) or by a built-in policy. The referee
//! speaks engine types only; the gRPC layer converts them at the wire boundary
//! (`knobel_proto::convert`).
//!
//! Fairness rules (RULES.md and the arena's contract):
//! - Each decision has a deadline `D` plus a per-match time bank `B` that pays for overruns.
//!   When both are spent: a timeout, the engine's default action, a strike and a notice.
//! - An illegal or malformed action gets a notice naming the problem, the default action and
//!   a strike. An answer to a request that is not the seat's open one is ignored with a
//!   notice (no strike).
//! - Three strikes, a disconnect, a bot that stops reading its messages or that never took
//!   its seat forfeit the seat: it is played by default actions to the end and placed after
//!   every seat that did not forfeit.
//! - Every strike and forfeit is given to the engine ([`Match::strike`], [`Match::forfeit`])
//!   at the point it happens: the match log records it, a forfeit is a public event, and
//!   the engine's [`Outcome`](knobel_engine::Outcome) (placings, strikes, timeouts,
//!   forfeits) is what every seat, the store and the metrics get.
//! - Simultaneous Zokken reroll choices are requested from all seats at once.
//! - Nothing a bot does can stall the match beyond its own time: sends never block (a bot
//!   that does not read its messages is forfeited), and waits are bounded.
//!
//! The parts: `link` (the public types the referee and a seat exchange), `seat` (a seat's
//! state, reading its link, its deadlines and penalties), `waker` (which seat woke the match
//! task), `events` (batching public events per seat) and `report` (the match's report and
//! last message). The `Referee` here drives them, one step of the match after another.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use knobel_engine::{Action, Match, Seat, SetupError, StrikeReason};
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

mod events;
mod link;
mod report;
mod seat;
#[cfg(test)]
mod tests;
mod waker;

pub use events::{EVENTS_MAX_DELAY, EventBatch};
pub use link::{
    AbsentBot, BotLink, DecisionRequest, EncodedToSeat, FromSeat, MatchInfo, Notice, Player,
    Problem, SeatNote, TimeControl, ToSeat,
};
pub use report::{Announcement, DecisionOutcome, MatchReport, SeatDecisions};

use events::{broadcast, flush_due, next_flush};
use seat::{Answer, SeatState, poll_deadlines, read_seat, record_forfeits, strike};
use waker::{Readiness, SeatWaker, Woke};

/// Strikes that forfeit a seat.
pub const MAX_STRIKES: u8 = 3;

static NEXT_REQUEST_ID: AtomicU64 = AtomicU64::new(1);

/// Plays a match to its end (or until `shutdown` turns true, then it is aborted). Returns
/// the report, and the result (or abort notice) for the bots, to send once recorded; an
/// error, before anything is sent, if `info`'s rules cannot be played by `players`
/// ([`Match::check_setup`]).
pub async fn run_match(
    info: Arc<MatchInfo>,
    seed: u64,
    players: Vec<Player>,
    shutdown: watch::Receiver<bool>,
) -> Result<(MatchReport, Announcement), SetupError> {
    Ok(Referee::new(info, seed, players, shutdown)?.run().await)
}

/// One match being refereed: the engine's match, its seats under the time control, and the
/// step in progress.
struct Referee {
    info: Arc<MatchInfo>,
    game: Match,
    time: TimeControl,
    readiness: Arc<Readiness>,
    seats: Vec<SeatState>,
    shutdown: watch::Receiver<bool>,
    /// Decisions asked of connected bots so far.
    decisions: u64,
    /// The bot seats asked in this step, waited for.
    asked: Vec<Seat>,
    /// The actions of this step's seats, `None` for the default action.
    answers: Vec<(Seat, Option<Action>)>,
}

/// What else may end a wait for answers, made once per match and reset as needed rather
/// than made anew for every decision.
struct Alarms<'a, S> {
    /// The next deadline of the asked seats.
    deadline: Pin<&'a mut Sleep>,
    /// When pending events are due.
    flush: Pin<&'a mut Sleep>,
    /// The arena's shutdown.
    stopping: Pin<&'a mut S>,
}

impl Referee {
    /// A referee for a new match of `info`'s rules, its seats played by `players` in order;
    /// an error if the rules cannot be played by that many seats.
    fn new(
        info: Arc<MatchInfo>,
        seed: u64,
        players: Vec<Player>,
        shutdown: watch::Receiver<bool>,
    ) -> Result<Referee, SetupError> {
        let n = players.len();
        let game = Match::new_with_log(info.rules.clone(), seed, n)?;
        let time = info.time_control;
        let readiness = Arc::new(Readiness::default());
        let seats = players
            .into_iter()
            .enumerate()
            .map(|(seat, player)| {
                let waker = Arc::new(SeatWaker {
                    readiness: readiness.clone(),
                    seat,
                });
                SeatState::new(player, time.time_bank, waker)
            })
            .collect();
        Ok(Referee {
            info,
            game,
            time,
            readiness,
            seats,
            shutdown,
            decisions: 0,
            asked: Vec::new(),
            answers: Vec::new(),
        })
    }

    /// Plays the match to its end, or aborts it once the arena shuts down.
    async fn run(mut self) -> (MatchReport, Announcement) {
        self.start();
        let mut alarms = Alarms {
            deadline: pin!(tokio::time::sleep_until(Instant::now())),
            flush: pin!(tokio::time::sleep_until(Instant::now())),
            stopping: pin!({
                let mut shutdown = self.shutdown.clone();
                async move { crate::shutdown::requested(&mut shutdown).await }
            }),
        };
        while !self.game.is_over() {
            if *self.shutdown.borrow() {
                return self.abort();
            }
            self.ask();
            if !self.asked.is_empty() {
                if let Woke::Shutdown = self.await_answers(&mut alarms).await {
                    continue;
                }
                self.take_answers();
            }
            self.apply();
        }
        self.finish()
    }

    /// Every seat learns the match and its opening events; bots that were gone before the
    /// match began forfeit now.
    fn start(&mut self) {
        // Every seat is read once before the first wake-up.
        self.seats.iter().for_each(|seat| seat.waker.mark());
        for (i, seat) in self.seats.iter_mut().enumerate() {
            seat.send(ToSeat::Start {
                info: self.info.clone(),
                seat: Seat(i as u8),
            });
        }
        broadcast(&mut self.seats, self.game.last_events());
        record_forfeits(&mut self.game, &mut self.seats);
    }

    /// Asks every bot that must act, at once; built-ins and forfeited seats answer now.
    fn ask(&mut self) {
        record_forfeits(&mut self.game, &mut self.seats);
        self.asked.clear();
        self.answers.clear();
        let m = &self.game;
        let time = self.time;
        for seat in m.to_act().iter() {
            let state = &mut self.seats[seat.index()];
            let forfeited = state.forfeited();
            match &mut state.player {
                Player::Builtin(policy) => {
                    let legal = if policy.wants_legal_actions() {
                        m.legal_actions(seat)
                    } else {
                        Vec::new()
                    };
                    self.answers
                        .push((seat, Some(policy.decide(&m.observe(seat), &legal))));
                }
                Player::Bot(_) if forfeited => self.answers.push((seat, None)),
                Player::Bot(_) => {
                    // Answers that came while no request was open are stale: say so first.
                    read_seat(state, m, seat, false, time);
                    if state.forfeited() {
                        self.answers.push((seat, None));
                        continue;
                    }
                    let request_id = NEXT_REQUEST_ID.fetch_add(1, Ordering::Relaxed);
                    state.send(ToSeat::Request(DecisionRequest {
                        request_id,
                        observation: m.observe(seat),
                        legal_actions: m.legal_actions(seat),
                        default_action: m
                            .default_action(seat)
                            .expect("a seat to act has a default action"),
                        deadline: time.decision,
                        time_bank: state.time_bank,
                    }));
                    if state.forfeited() {
                        self.answers.push((seat, None));
                    } else {
                        state.open_request = Some(request_id);
                        state.asked_at = Instant::now();
                        state.answer = None;
                        self.asked.push(seat);
                    }
                }
            }
        }
        self.decisions += self.asked.len() as u64;
    }

    /// Waits for every asked seat (its answer, or its time is up: [`Woke::Answered`]) or the
    /// arena's shutdown ([`Woke::Shutdown`]). Meanwhile the other bots are read too (their
    /// pings, stale answers and disconnects are handled at once), and events of the others
    /// that have waited long enough are sent.
    async fn await_answers<S: Future<Output = ()>>(&mut self, alarms: &mut Alarms<'_, S>) -> Woke {
        loop {
            flush_due(&mut self.seats, Instant::now());
            let flush_at = next_flush(&self.seats);
            if let Some(at) = flush_at
                && alarms.flush.deadline() != at
            {
                alarms.flush.as_mut().reset(at);
            }
            match std::future::poll_fn(|cx| self.poll_wait(flush_at, alarms, cx)).await {
                Woke::Flush => continue,
                woke => return woke,
            }
        }
    }

    /// Reads the seats that woke the match task, then polls the asked seats' deadlines, the
    /// flush timer (if events are pending) and the shutdown, in this order.
    fn poll_wait<S: Future<Output = ()>>(
        &mut self,
        flush_at: Option<Instant>,
        alarms: &mut Alarms<'_, S>,
        cx: &mut Context<'_>,
    ) -> Poll<Woke> {
        self.readiness.task.register(cx.waker());
        let ready = self.readiness.take();
        for (i, state) in self.seats.iter_mut().enumerate() {
            if ready & (1 << i) != 0 && state.is_bot() {
                let is_asked = self.asked.iter().any(|s| s.index() == i);
                read_seat(state, &self.game, Seat(i as u8), is_asked, self.time);
            }
        }
        let asked = &self.asked;
        if poll_deadlines(
            &mut self.seats,
            asked,
            self.time,
            alarms.deadline.as_mut(),
            cx,
        )
        .is_ready()
        {
            return Poll::Ready(Woke::Answered);
        }
        if flush_at.is_some() && alarms.flush.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Woke::Flush);
        }
        if alarms.stopping.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Woke::Shutdown);
        }
        Poll::Pending
    }

    /// Turns each asked seat's answer into its action, or into a strike (a timeout, a
    /// malformed answer) or a forfeit (a lost bot) and the default action.
    fn take_answers(&mut self) {
        let m = &mut self.game;
        let time = self.time;
        for &seat in &self.asked {
            let state = &mut self.seats[seat.index()];
            let request_id = state.open_request.unwrap_or(0);
            match state.answer.take().unwrap_or(Answer::Disconnected) {
                Answer::Action(action) => self.answers.push((seat, Some(action))),
                Answer::Disconnected => {
                    state.decisions.add(DecisionOutcome::Forfeited);
                    state.gone();
                    self.answers.push((seat, None));
                }
                Answer::Timeout => {
                    let message = format!(
                        "request {request_id} timed out: no answer within the deadline of {} ms and the time bank",
                        time.decision.as_millis()
                    );
                    strike(m, seat, state, request_id, StrikeReason::Timeout, message);
                    self.answers.push((seat, None));
                }
                Answer::Malformed(message) => {
                    strike(m, seat, state, request_id, StrikeReason::Malformed, message);
                    self.answers.push((seat, None));
                }
            }
        }
    }

    /// Applies this step's actions in seat order; an illegal answer gets a strike and the
    /// default action. The engine learns every forfeit before the next action is applied.
    fn apply(&mut self) {
        let m = &mut self.game;
        let seats = &mut self.seats;
        record_forfeits(m, seats);
        self.answers.sort_by_key(|(seat, _)| *seat);
        for (seat, action) in self.answers.drain(..) {
            let default = m
                .default_action(seat)
                .expect("a seat to act has a default action");
            let applied = match action {
                Some(action) => match m.apply(seat, action) {
                    Ok(_) => {
                        // A bot's answer (a built-in player's action is not a decision
                        // asked).
                        let state = &mut seats[seat.index()];
                        if state.is_bot() {
                            state.decisions.add(if state.late {
                                DecisionOutcome::Late
                            } else {
                                DecisionOutcome::Ok
                            });
                        }
                        None
                    }
                    Err(error) => {
                        let state = &mut seats[seat.index()];
                        let request_id = state.open_request.unwrap_or(0);
                        strike(
                            m,
                            seat,
                            state,
                            request_id,
                            StrikeReason::IllegalAction,
                            format!("illegal action {action}: {error}"),
                        );
                        Some(default)
                    }
                },
                None => Some(default),
            };
            if let Some(default) = applied {
                // A strike may have forfeited the seat, a notice may have failed: the
                // engine learns of it before the seat's action is applied.
                record_forfeits(m, seats);
                m.apply(seat, default)
                    .expect("the default action is always legal");
                let state = &mut seats[seat.index()];
                if let Some(mut notice) = state.notice.take() {
                    notice.applied = Some(default);
                    state.send(ToSeat::Notice(notice));
                }
            }
            seats[seat.index()].open_request = None;
            broadcast(seats, m.last_events());
            // Before the next seat's action: forfeits the sends above caused.
            if !m.is_over() {
                record_forfeits(m, seats);
            }
        }
    }

    /// Stops the match before its end: the report as it stands, the bots' pending events
    /// sent, and the abort notice for them.
    fn abort(mut self) -> (MatchReport, Announcement) {
        let seats = self.seat_decisions();
        let report = MatchReport::new(&self.game, self.decisions, seats);
        self.seats.iter_mut().for_each(SeatState::flush);
        let announcement = Announcement::new(
            self.seats,
            ToSeat::Aborted {
                reason: "the arena is shutting down".to_owned(),
            },
        );
        (report, announcement)
    }

    /// How each seat's decisions went (taken out of the seats).
    fn seat_decisions(&mut self) -> Vec<SeatDecisions> {
        self.seats
            .iter_mut()
            .map(|seat| std::mem::take(&mut seat.decisions))
            .collect()
    }

    /// The report of the ended match, and its result for the bots.
    fn finish(mut self) -> (MatchReport, Announcement) {
        let outcome = self.game.outcome().expect("an ended match has an outcome");
        let seats = self.seat_decisions();
        let mut report = MatchReport::new(&self.game, self.decisions, seats);
        report.outcome = Some(outcome.clone());
        let result = ToSeat::Result { outcome };
        (report, Announcement::new(self.seats, result))
    }
}
