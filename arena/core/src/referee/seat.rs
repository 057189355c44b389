//! A seat as the referee keeps it: its player, clock, open request and pending events, how
//! its link is read and its deadlines kept, and the penalties it is given.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker, ready};
use std::time::Duration;

use knobel_engine::{Action, ForfeitReason, Match, Seat, StrikeReason};
use tokio::time::{Instant, Sleep};

use super::MAX_STRIKES;
use super::events::EventBatch;
use super::events::broadcast;
use super::link::{FromSeat, Notice, Player, Problem, TimeControl, ToSeat};
use super::report::{DecisionOutcome, SeatDecisions};
use super::waker::SeatWaker;

/// One seat of a match, as the referee keeps it.
pub(super) struct SeatState {
    /// Who plays the seat.
    pub(super) player: Player,
    /// The seat's remaining time bank.
    pub(super) time_bank: Duration,
    /// Why the seat forfeits, once the referee has decided it; given to the engine by
    /// [`record_forfeits`] at the next point where the match can take it.
    forfeit: Option<ForfeitReason>,
    /// The open request, while the referee waits for this seat.
    pub(super) open_request: Option<u64>,
    /// When the open request was sent.
    pub(super) asked_at: Instant,
    /// The answer to the open request, once the wait for it has ended.
    pub(super) answer: Option<Answer>,
    /// A notice to send once the action applied instead is known.
    pub(super) notice: Option<Notice>,
    /// Public events not yet sent to this seat, and when the first of them happened.
    pub(super) pending: Vec<Arc<EventBatch>>,
    pub(super) pending_since: Option<Instant>,
    /// The bot's connection is gone.
    gone: bool,
    /// The answer to the open request came after its deadline (paid from the bank).
    pub(super) late: bool,
    /// How this seat's decisions have gone so far.
    pub(super) decisions: SeatDecisions,
    /// What this seat's link is polled with: it marks the seat as ready to read.
    pub(super) waker: Arc<SeatWaker>,
}

impl SeatState {
    /// A seat played by `player`, its bank full, its link polled with `waker`.
    pub(super) fn new(player: Player, time_bank: Duration, waker: Arc<SeatWaker>) -> SeatState {
        SeatState {
            player,
            time_bank,
            forfeit: None,
            open_request: None,
            asked_at: Instant::now(),
            answer: None,
            notice: None,
            pending: Vec::new(),
            pending_since: None,
            gone: false,
            late: false,
            decisions: SeatDecisions::default(),
            waker,
        }
    }

    /// Sends `message` with the seat's pending events.
    pub(super) fn send(&mut self, message: ToSeat) {
        self.send_with_pending(Some(message));
    }

    /// Sends the seat's pending events, if any, on their own.
    pub(super) fn flush(&mut self) {
        if !self.pending.is_empty() {
            self.send_with_pending(None);
        }
    }

    fn send_with_pending(&mut self, message: Option<ToSeat>) {
        self.pending_since = None;
        if let Player::Bot(link) = &mut self.player
            && !link.send(&self.pending, message)
        {
            // Closed, or full because the bot does not read: it can no longer play.
            let reason = link.gone_reason();
            self.forfeit.get_or_insert(reason);
        }
        self.pending.clear();
    }

    pub(super) fn is_bot(&self) -> bool {
        matches!(self.player, Player::Bot(_))
    }

    pub(super) fn forfeited(&self) -> bool {
        self.forfeit.is_some()
    }

    /// The seat's bot is gone: it forfeits for the reason its link gives.
    pub(super) fn gone(&mut self) {
        if let Player::Bot(link) = &self.player {
            let reason = link.gone_reason();
            self.forfeit.get_or_insert(reason);
        }
    }

    /// Polls the seat's link with the seat's own waker; `None` for a built-in player.
    fn poll_link(&mut self) -> Option<Poll<FromSeat>> {
        let Player::Bot(link) = &mut self.player else {
            return None;
        };
        let waker = Waker::from(self.waker.clone());
        Some(link.poll_recv(&mut Context::from_waker(&waker)))
    }
}

/// How a bot's wait for an answer ended.
pub(super) enum Answer {
    Action(Action),
    Malformed(String),
    Timeout,
    Disconnected,
}

/// Reads what a bot seat has sent, until its link has nothing more or, for an asked seat,
/// until its answer is in `state.answer`. An asked seat's answer to another request gets a
/// stale-request notice; any answer of a seat that is not asked is refused the same way.
/// A seat whose bot is gone is marked so (and, if not asked, forfeited at once).
pub(super) fn read_seat(
    state: &mut SeatState,
    m: &Match,
    seat: Seat,
    asked: bool,
    time: TimeControl,
) {
    while !(state.gone || (asked && state.answer.is_some())) {
        let Some(Poll::Ready(from)) = state.poll_link() else {
            return;
        };
        match from {
            FromSeat::Disconnected => {
                state.gone = true;
                if asked {
                    state.answer = Some(Answer::Disconnected);
                } else {
                    state.gone();
                }
            }
            FromSeat::Decision { request_id, action } if asked => {
                let open = state.open_request.unwrap_or(0);
                if request_id == open {
                    let elapsed = state.asked_at.elapsed();
                    state.late = elapsed > time.decision;
                    state.decisions.seconds.push(elapsed.as_secs_f64());
                    state.time_bank = state
                        .time_bank
                        .saturating_sub(elapsed.saturating_sub(time.decision));
                    state.answer = Some(match action {
                        Ok(action) => Answer::Action(action),
                        Err(message) => Answer::Malformed(message),
                    });
                    // More may be waiting behind the answer: read the seat again next time.
                    state.waker.mark();
                } else {
                    let notice = stale_notice(
                        state,
                        m.strikes_of(seat),
                        request_id,
                        format!(
                            "request {request_id} is not your open request: answer request {open}; this answer is ignored"
                        ),
                    );
                    state.send(notice);
                    if state.forfeited() {
                        state.answer = Some(Answer::Disconnected);
                    }
                }
            }
            FromSeat::Decision { request_id, .. } => {
                refuse_unasked(state, m.strikes_of(seat), request_id)
            }
        }
    }
}

/// The latest time an asked seat may answer: its deadline plus its time bank, counted from
/// when it was asked.
fn hard_deadline(state: &SeatState, time: TimeControl) -> Instant {
    state.asked_at + time.decision + state.time_bank
}

/// Gives every asked seat whose time is up a timeout (its bank spent) and keeps `timer` set
/// to the next deadline of the others. Ready once every asked seat has its answer.
pub(super) fn poll_deadlines(
    seats: &mut [SeatState],
    asked: &[Seat],
    time: TimeControl,
    mut timer: Pin<&mut Sleep>,
    cx: &mut Context<'_>,
) -> Poll<()> {
    loop {
        let Some(deadline) = asked
            .iter()
            .map(|seat| &seats[seat.index()])
            .filter(|state| state.answer.is_none())
            .map(|state| hard_deadline(state, time))
            .min()
        else {
            return Poll::Ready(());
        };
        if timer.deadline() != deadline {
            timer.as_mut().reset(deadline);
        }
        ready!(timer.as_mut().poll(cx));
        let now = Instant::now();
        for seat in asked {
            let state = &mut seats[seat.index()];
            if state.answer.is_none() && hard_deadline(state, time) <= now {
                state
                    .decisions
                    .seconds
                    .push((now - state.asked_at).as_secs_f64());
                state.time_bank = Duration::ZERO;
                state.answer = Some(Answer::Timeout);
            }
        }
    }
}

fn stale_notice(state: &SeatState, strikes: u32, request_id: u64, message: String) -> ToSeat {
    ToSeat::Notice(Notice {
        request_id,
        problem: Problem::StaleRequest,
        message,
        applied: None,
        strikes: strikes.min(u8::MAX.into()) as u8,
        forfeited: state.forfeited(),
    })
}

/// Tells a seat that its answer to `request_id` is ignored: no request is open for it.
fn refuse_unasked(state: &mut SeatState, strikes: u32, request_id: u64) {
    let notice = stale_notice(
        state,
        strikes,
        request_id,
        format!("request {request_id} is not open for your seat: this answer is ignored"),
    );
    state.send(notice);
}

/// Gives the engine the forfeits the referee has decided since the last call (a lost or
/// full connection, three strikes), and queues the public `Forfeited` events for every bot.
/// Call it only where the step's events have been broadcast (it replaces
/// [`Match::last_events`]) and before the next action is applied. Once the match is over a
/// forfeit is no longer taken: the outcome is final.
pub(super) fn record_forfeits(m: &mut Match, seats: &mut [SeatState]) {
    for i in 0..seats.len() {
        let seat = Seat(i as u8);
        let Some(reason) = seats[i].forfeit else {
            continue;
        };
        if m.forfeit_of(seat).is_some() {
            continue;
        }
        match m.forfeit(seat, reason) {
            Ok(events) => {
                let events = events.to_vec();
                broadcast(seats, &events);
            }
            // Over: the match's result stands as it is.
            Err(_) => return,
        }
    }
}

/// Gives `seat` a strike in the match (three forfeit the seat) and prepares the notice to
/// send with the action applied instead.
pub(super) fn strike(
    m: &mut Match,
    seat: Seat,
    state: &mut SeatState,
    request_id: u64,
    reason: StrikeReason,
    message: String,
) {
    let problem = match reason {
        StrikeReason::Timeout => Problem::Timeout,
        StrikeReason::IllegalAction => Problem::IllegalAction,
        StrikeReason::Malformed => Problem::Malformed,
    };
    // Refused only for a forfeited seat or an ended match: then it is no strike.
    if m.strike(seat, reason).is_ok() {
        state.decisions.add(DecisionOutcome::of_strike(reason));
        if m.strikes_of(seat) >= u32::from(MAX_STRIKES) {
            state.forfeit.get_or_insert(ForfeitReason::Strikes);
        }
    } else {
        state.decisions.add(DecisionOutcome::Forfeited);
    }
    state.notice = Some(Notice {
        request_id,
        problem,
        message,
        applied: None,
        strikes: m.strikes_of(seat).min(u8::MAX.into()) as u8,
        forfeited: state.forfeited(),
    });
}
