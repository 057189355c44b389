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
//!   the engine's [`Outcome`] (placings, strikes, timeouts, forfeits) is what every seat,
//!   the store and the metrics get.
//! - Simultaneous Zokken reroll choices are requested from all seats at once.
//! - Nothing a bot does can stall the match beyond its own time: sends never block (a bot
//!   that does not read its messages is forfeited), and waits are bounded.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker, ready};
use std::time::Duration;

use bytes::Bytes;
use futures_util::task::AtomicWaker;
use knobel_engine::policy::Policy;
use knobel_engine::{
    Action, Event, ForfeitReason, Match, MatchLog, Observation, Outcome, Rules, Seat, StrikeReason,
};
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

/// Strikes that forfeit a seat.
pub const MAX_STRIKES: u8 = 3;
/// The longest a public event waits for later ones before it is sent to a seat. Events
/// are batched: a seat's pending events go out with its next message, at the latest this
/// long after the first of them happened, and at the end of the match.
pub const EVENTS_MAX_DELAY: Duration = Duration::from_millis(50);

/// How long a seat may think.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Deadline of every decision.
    pub decision: Duration,
    /// Time bank per seat per match, spent on answers later than `decision`.
    pub bank: Duration,
}

impl Default for TimeControl {
    fn default() -> TimeControl {
        TimeControl {
            decision: Duration::from_secs(1),
            bank: Duration::from_secs(10),
        }
    }
}

/// What every seat learns when the match starts.
#[derive(Clone, Debug)]
pub struct MatchInfo {
    /// The match id.
    pub match_id: String,
    /// The preset the rules came from.
    pub preset: String,
    /// The rules played.
    pub rules: Rules,
    /// The name of the player in each seat.
    pub seat_names: Vec<String>,
    /// The registered bot in each seat, by id (`None` for a built-in player).
    pub seat_bot_ids: Vec<Option<i64>>,
    /// The time control.
    pub time_control: TimeControl,
}

/// A decision the referee asks of a seat.
#[derive(Clone, Debug)]
pub struct DecisionRequest {
    /// Unique among all requests of this arena; the answer must carry it.
    pub request_id: u64,
    /// What the seat may see.
    pub observation: Observation,
    /// Every legal action.
    pub legal_actions: Vec<Action>,
    /// What the referee does if the seat does not answer in time.
    pub default_action: Action,
    /// Time until the deadline.
    pub deadline: Duration,
    /// The seat's remaining time bank.
    pub time_bank: Duration,
}

/// What went wrong with a seat's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// No answer within the deadline and the time bank.
    Timeout,
    /// The action is not legal now.
    IllegalAction,
    /// The answer could not be read as an action.
    Malformed,
    /// The answer names a request that is not the seat's open one.
    StaleRequest,
}

/// A notice to a seat about its answer (or its absence).
#[derive(Clone, Debug)]
pub struct Notice {
    /// The request concerned.
    pub request_id: u64,
    /// What went wrong.
    pub problem: Problem,
    /// A message that names the problem and what would have been legal.
    pub message: String,
    /// The action the referee applied instead, if any.
    pub applied: Option<Action>,
    /// Strikes so far.
    pub strikes: u8,
    /// Whether the seat is now forfeited.
    pub forfeited: bool,
}

/// A message from the referee to a bot seat.
#[derive(Clone, Debug)]
pub enum ToSeat {
    /// The match starts; `seat` is the bot's own.
    Start {
        /// The match.
        info: Arc<MatchInfo>,
        /// The bot's seat.
        seat: Seat,
    },
    /// A decision to make.
    Request(DecisionRequest),
    /// A problem with the bot's answer.
    Notice(Notice),
    /// The match is over.
    Result {
        /// The engine's outcome: final placings (forfeited seats last), strikes, timeouts
        /// and forfeits included.
        outcome: Outcome,
    },
    /// The match was stopped before its end (the arena is shutting down).
    Aborted {
        /// Why.
        reason: String,
    },
}

/// A message from a bot seat to the referee.
#[derive(Clone, Debug)]
pub enum FromSeat {
    /// An answer; `action` is `Err(message)` when the wire message was not a valid action.
    Decision {
        /// The request answered.
        request_id: u64,
        /// The action, or why it could not be read.
        action: Result<Action, String>,
    },
    /// The bot's connection is gone.
    Disconnected,
}

/// Public events of one step of a match, shared by every seat they are sent to.
#[derive(Debug)]
pub struct EventBatch {
    events: Vec<Event>,
    /// The batch's wire form, made by the first link that sends it and reused by the
    /// others: events are encoded once per match, not once per seat.
    wire: OnceLock<Bytes>,
}

impl EventBatch {
    /// A batch of `events`, oldest first.
    pub fn new(events: Vec<Event>) -> EventBatch {
        EventBatch {
            events,
            wire: OnceLock::new(),
        }
    }

    /// The events, oldest first.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The batch's wire form: `encode` makes it the first time, later calls share it.
    pub fn wire(&self, encode: impl FnOnce(&[Event]) -> Bytes) -> Bytes {
        self.wire.get_or_init(|| encode(&self.events)).clone()
    }
}

/// The referee's end of a bot's connection, lent to the match for its duration.
pub trait BotLink: Send {
    /// Queues one message for the bot without waiting: public `events` (oldest first) that
    /// happened before `message`, and the message itself, if any. False if the bot is gone
    /// or has stopped reading (too many messages queued): it can no longer play.
    fn send(&mut self, events: &[Arc<EventBatch>], message: Option<ToSeat>) -> bool;
    /// Polls for the bot's next decision, or learns that the bot is gone. While it is
    /// pending, `cx`'s waker is woken once there may be more to read. The referee polls each
    /// seat with a waker of its own, so that a wake-up tells it which seat to read.
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<FromSeat>;
    /// Gives the connection back after the match (once its last message is sent).
    fn release(self: Box<Self>);
    /// Why the bot can no longer play, once [`BotLink::send`] returned false or
    /// [`BotLink::poll_recv`] gave [`FromSeat::Disconnected`]: the seat forfeits for this
    /// reason. A link that ends its stream for a reason of its own (e.g. the bot's token
    /// was revoked: [`ForfeitReason::Revoked`]) says so here.
    fn gone_reason(&self) -> ForfeitReason {
        ForfeitReason::Disconnected
    }
}

/// The link of a bot that left before its match began: it is forfeited at once.
#[derive(Debug, Default)]
pub struct AbsentBot;

impl BotLink for AbsentBot {
    fn send(&mut self, _: &[Arc<EventBatch>], _: Option<ToSeat>) -> bool {
        false
    }
    fn poll_recv(&mut self, _: &mut Context<'_>) -> Poll<FromSeat> {
        Poll::Ready(FromSeat::Disconnected)
    }
    fn release(self: Box<Self>) {}
    fn gone_reason(&self) -> ForfeitReason {
        ForfeitReason::Absent
    }
}

/// Who plays a seat.
pub enum Player {
    /// A connected bot.
    Bot(Box<dyn BotLink>),
    /// A built-in policy.
    Builtin(Box<dyn Policy + Send>),
}

/// The result of a refereed match.
#[derive(Clone, Debug)]
pub struct MatchReport {
    /// The complete engine log (strikes and forfeits included).
    pub log: MatchLog,
    /// The engine outcome, `None` if the match was aborted: final placings (forfeited seats
    /// last), strikes, timeouts and forfeits per seat.
    pub outcome: Option<Outcome>,
    /// Decisions asked of connected bots.
    pub decisions: u64,
    /// Timeouts over all seats (from the engine; also for an aborted match).
    pub timeouts: u64,
    /// Seats forfeited (from the engine; also for an aborted match).
    pub forfeits: u64,
}

static NEXT_REQUEST_ID: AtomicU64 = AtomicU64::new(1);

struct SeatState {
    player: Player,
    bank: Duration,
    /// Why the seat forfeits, once the referee has decided it; given to the engine by
    /// [`record_forfeits`] at the next point where the match can take it.
    forfeit: Option<ForfeitReason>,
    /// The open request, while the referee waits for this seat.
    open_request: Option<u64>,
    /// When the open request was sent.
    asked_at: Instant,
    /// The answer to the open request, once the wait for it has ended.
    answer: Option<Answer>,
    /// A notice to send once the action applied instead is known.
    notice: Option<Notice>,
    /// Public events not yet sent to this seat, and when the first of them happened.
    pending: Vec<Arc<EventBatch>>,
    pending_since: Option<Instant>,
    /// The bot's connection is gone.
    gone: bool,
    /// What this seat's link is polled with: it marks the seat as ready to read.
    waker: Arc<SeatWaker>,
}

impl SeatState {
    /// Sends `message` with the seat's pending events.
    fn send(&mut self, message: ToSeat) {
        self.send_with_pending(Some(message));
    }

    /// Sends the seat's pending events, if any, on their own.
    fn flush(&mut self) {
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

    fn is_bot(&self) -> bool {
        matches!(self.player, Player::Bot(_))
    }

    fn forfeited(&self) -> bool {
        self.forfeit.is_some()
    }

    /// The seat's bot is gone: it forfeits for the reason its link gives.
    fn gone(&mut self) {
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

/// Which seats' links may have something to read, and the waker of the match task.
///
/// Each seat's link is polled with a waker of its own (a [`SeatWaker`]) that sets the
/// seat's bit and wakes the match task, so a wake-up reads only the seats that woke it,
/// rather than every bot of the match.
#[derive(Default)]
struct Readiness {
    seats: AtomicU32,
    task: AtomicWaker,
}

impl Readiness {
    /// The seats marked ready since the last call (and clears the marks).
    fn take(&self) -> u32 {
        self.seats.swap(0, Ordering::AcqRel)
    }

    fn mark(&self, seat: usize) {
        self.seats.fetch_or(1 << seat, Ordering::AcqRel);
    }
}

struct SeatWaker {
    readiness: Arc<Readiness>,
    seat: usize,
}

impl SeatWaker {
    /// Marks the seat as ready to read, without waking the match task.
    fn mark(&self) {
        self.readiness.mark(self.seat);
    }
}

impl Wake for SeatWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.mark();
        self.readiness.task.wake();
    }
}

/// How a bot's wait for an answer ended.
enum Answer {
    Action(Action),
    Malformed(String),
    Timeout,
    Disconnected,
}

/// Reads what a bot seat has sent, until its link has nothing more or, for an asked seat,
/// until its answer is in `state.answer`. An asked seat's answer to another request gets a
/// stale-request notice; any answer of a seat that is not asked is refused the same way.
/// A seat whose bot is gone is marked so (and, if not asked, forfeited at once).
fn read_seat(state: &mut SeatState, m: &Match, seat: Seat, asked: bool, time: TimeControl) {
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
                    state.bank = state
                        .bank
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
    state.asked_at + time.decision + state.bank
}

/// Gives every asked seat whose time is up a timeout (its bank spent) and keeps `timer` set
/// to the next deadline of the others. Ready once every asked seat has its answer.
fn poll_deadlines(
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
                state.bank = Duration::ZERO;
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

/// What ended a wait for answers.
enum Woke {
    Answered,
    Flush,
    Shutdown,
}

/// Plays a match to its end (or until `shutdown` turns true, then it is aborted). Returns
/// the report, and the result (or abort notice) for the bots, to send once recorded.
pub async fn run_match(
    info: Arc<MatchInfo>,
    seed: u64,
    players: Vec<Player>,
    shutdown: watch::Receiver<bool>,
) -> (MatchReport, Announcement) {
    let n = players.len();
    let mut m =
        Match::new_with_log(info.rules.clone(), seed, n).expect("the lobby seats 2..=10 players");
    let time = info.time_control;
    let readiness = Arc::new(Readiness::default());
    let mut seats: Vec<SeatState> = players
        .into_iter()
        .enumerate()
        .map(|(seat, player)| SeatState {
            player,
            bank: time.bank,
            forfeit: None,
            open_request: None,
            asked_at: Instant::now(),
            answer: None,
            notice: None,
            pending: Vec::new(),
            pending_since: None,
            gone: false,
            waker: Arc::new(SeatWaker {
                readiness: readiness.clone(),
                seat,
            }),
        })
        .collect();
    // Every seat is read once before the first wake-up.
    seats.iter().for_each(|seat| seat.waker.mark());
    for (i, seat) in seats.iter_mut().enumerate() {
        seat.send(ToSeat::Start {
            info: info.clone(),
            seat: Seat(i as u8),
        });
    }
    broadcast(&mut seats, m.last_events());
    // Bots that were gone before the match began forfeit now.
    record_forfeits(&mut m, &mut seats);
    let mut decisions = 0u64;
    // One timer for the answers' deadlines and one for sending pending events, reset as
    // needed rather than made anew for every decision.
    let mut deadline_timer = std::pin::pin!(tokio::time::sleep_until(Instant::now()));
    let mut flush_timer = std::pin::pin!(tokio::time::sleep_until(Instant::now()));
    let mut stopping = std::pin::pin!({
        let mut shutdown = shutdown.clone();
        async move { shutting_down(&mut shutdown).await }
    });

    'decisions: while !m.is_over() {
        if *shutdown.borrow() {
            let report = MatchReport::new(&m, decisions);
            seats.iter_mut().for_each(SeatState::flush);
            let announcement = Announcement::new(
                seats,
                ToSeat::Aborted {
                    reason: "the arena is shutting down".to_owned(),
                },
            );
            return (report, announcement);
        }
        record_forfeits(&mut m, &mut seats);
        // Ask every bot that must act, at once; built-ins and forfeited seats answer now.
        let mut asked: Vec<Seat> = Vec::new();
        let mut answers: Vec<(Seat, Option<Action>)> = Vec::new();
        for seat in m.to_act().iter() {
            let state = &mut seats[seat.index()];
            let forfeited = state.forfeited();
            match &mut state.player {
                Player::Builtin(policy) => {
                    let legal = if policy.wants_legal_actions() {
                        m.legal_actions(seat)
                    } else {
                        Vec::new()
                    };
                    answers.push((seat, Some(policy.decide(&m.observe(seat), &legal))));
                }
                Player::Bot(_) if forfeited => answers.push((seat, None)),
                Player::Bot(_) => {
                    // Answers that came while no request was open are stale: say so first.
                    read_seat(state, &m, seat, false, time);
                    if state.forfeited() {
                        answers.push((seat, None));
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
                        time_bank: state.bank,
                    }));
                    if state.forfeited() {
                        answers.push((seat, None));
                    } else {
                        state.open_request = Some(request_id);
                        state.asked_at = Instant::now();
                        state.answer = None;
                        asked.push(seat);
                    }
                }
            }
        }
        if !asked.is_empty() {
            decisions += asked.len() as u64;
            // Wait for every asked seat; meanwhile the other bots are read too (their
            // pings, stale answers and disconnects are handled at once), and events of the
            // others that have waited long enough are sent.
            loop {
                flush_due(&mut seats, Instant::now());
                let flush_at = seats
                    .iter()
                    .filter_map(|s| s.pending_since)
                    .min()
                    .map(|since| since + EVENTS_MAX_DELAY);
                if let Some(at) = flush_at
                    && flush_timer.deadline() != at
                {
                    flush_timer.as_mut().reset(at);
                }
                let woke = std::future::poll_fn(|cx| {
                    readiness.task.register(cx.waker());
                    let ready = readiness.take();
                    for (i, state) in seats.iter_mut().enumerate() {
                        if ready & (1 << i) != 0 && state.is_bot() {
                            let is_asked = asked.iter().any(|s| s.index() == i);
                            read_seat(state, &m, Seat(i as u8), is_asked, time);
                        }
                    }
                    if poll_deadlines(&mut seats, &asked, time, deadline_timer.as_mut(), cx)
                        .is_ready()
                    {
                        return Poll::Ready(Woke::Answered);
                    }
                    if flush_at.is_some() && flush_timer.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Woke::Flush);
                    }
                    if stopping.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Woke::Shutdown);
                    }
                    Poll::Pending
                })
                .await;
                match woke {
                    Woke::Answered => break,
                    Woke::Flush => continue,
                    Woke::Shutdown => continue 'decisions,
                }
            }
            for seat in asked {
                let state = &mut seats[seat.index()];
                let request_id = state.open_request.unwrap_or(0);
                match state.answer.take().unwrap_or(Answer::Disconnected) {
                    Answer::Action(action) => answers.push((seat, Some(action))),
                    Answer::Disconnected => {
                        state.gone();
                        answers.push((seat, None));
                    }
                    Answer::Timeout => {
                        let message = format!(
                            "request {request_id} timed out: no answer within the deadline of {} ms and the time bank",
                            time.decision.as_millis()
                        );
                        strike(
                            &mut m,
                            seat,
                            state,
                            request_id,
                            StrikeReason::Timeout,
                            message,
                        );
                        answers.push((seat, None));
                    }
                    Answer::Malformed(message) => {
                        strike(
                            &mut m,
                            seat,
                            state,
                            request_id,
                            StrikeReason::Malformed,
                            message,
                        );
                        answers.push((seat, None));
                    }
                }
            }
        }
        record_forfeits(&mut m, &mut seats);
        // Apply in seat order; an illegal answer gets a strike and the default action.
        answers.sort_by_key(|(seat, _)| *seat);
        for (seat, action) in answers {
            let default = m
                .default_action(seat)
                .expect("a seat to act has a default action");
            let applied = match action {
                Some(action) => match m.apply(seat, action) {
                    Ok(_) => None,
                    Err(error) => {
                        let state = &mut seats[seat.index()];
                        let request_id = state.open_request.unwrap_or(0);
                        strike(
                            &mut m,
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
                record_forfeits(&mut m, &mut seats);
                m.apply(seat, default)
                    .expect("the default action is always legal");
                let state = &mut seats[seat.index()];
                if let Some(mut notice) = state.notice.take() {
                    notice.applied = Some(default);
                    state.send(ToSeat::Notice(notice));
                }
            }
            seats[seat.index()].open_request = None;
            broadcast(&mut seats, m.last_events());
            // Before the next seat's action: forfeits the sends above caused.
            if !m.is_over() {
                record_forfeits(&mut m, &mut seats);
            }
        }
    }

    let outcome = m.outcome().expect("an ended match has an outcome");
    let mut report = MatchReport::new(&m, decisions);
    report.outcome = Some(outcome.clone());
    let result = ToSeat::Result { outcome };
    (report, Announcement::new(seats, result))
}

impl MatchReport {
    /// The report of `m` as it stands, without an outcome (an aborted match).
    fn new(m: &Match, decisions: u64) -> MatchReport {
        let seats = (0..m.seats()).map(|s| Seat(s as u8));
        MatchReport {
            log: m.log().expect("logged").clone(),
            outcome: None,
            decisions,
            timeouts: seats.clone().map(|s| u64::from(m.timeouts_of(s))).sum(),
            forfeits: seats.filter(|&s| m.forfeit_of(s).is_some()).count() as u64,
        }
    }
}

/// Gives the engine the forfeits the referee has decided since the last call (a lost or
/// full connection, three strikes), and queues the public `Forfeited` events for every bot.
/// Call it only where the step's events have been broadcast (it replaces
/// [`Match::last_events`]) and before the next action is applied. Once the match is over a
/// forfeit is no longer taken: the outcome is final.
fn record_forfeits(m: &mut Match, seats: &mut [SeatState]) {
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

/// The last message of a match to its bots, sent once the match is recorded (so that a
/// bot that asks for the log right after its result finds the match ended).
pub struct Announcement {
    links: Vec<Box<dyn BotLink>>,
    message: ToSeat,
}

impl Announcement {
    fn new(seats: Vec<SeatState>, message: ToSeat) -> Announcement {
        let links = seats
            .into_iter()
            .filter_map(|seat| match seat.player {
                Player::Bot(link) => Some(link),
                Player::Builtin(_) => None,
            })
            .collect();
        Announcement { links, message }
    }

    /// Sends the message to every bot still connected and gives the connections back.
    pub fn send(self) {
        for mut link in self.links {
            let _ = link.send(&[], Some(self.message.clone()));
            link.release();
        }
    }
}

/// Resolves once `shutdown` turns true (never, if its sender is gone).
pub async fn shutting_down(shutdown: &mut watch::Receiver<bool>) {
    if shutdown.wait_for(|&down| down).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Gives `seat` a strike in the match (three forfeit the seat) and prepares the notice to
/// send with the action applied instead.
fn strike(
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
    if m.strike(seat, reason).is_ok() && m.strikes_of(seat) >= u32::from(MAX_STRIKES) {
        state.forfeit.get_or_insert(ForfeitReason::Strikes);
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

/// Queues public events for every bot seat; at the end of the match every seat's queue is
/// sent.
fn broadcast(seats: &mut [SeatState], events: &[Event]) {
    if events.is_empty() {
        return;
    }
    let now = Instant::now();
    let over = events.iter().any(|e| matches!(e, Event::MatchOver { .. }));
    let batch = Arc::new(EventBatch::new(events.to_vec()));
    for seat in seats.iter_mut().filter(|s| s.is_bot()) {
        seat.pending_since.get_or_insert(now);
        seat.pending.push(batch.clone());
        if over {
            seat.flush();
        }
    }
}

/// Sends the pending events of every seat whose oldest one has waited
/// [`EVENTS_MAX_DELAY`].
fn flush_due(seats: &mut [SeatState], now: Instant) {
    for seat in seats.iter_mut() {
        if seat
            .pending_since
            .is_some_and(|since| now >= since + EVENTS_MAX_DELAY)
        {
            seat.flush();
        }
    }
}

#[cfg(test)]
mod event_delivery {
    use std::sync::Mutex;

    use knobel_engine::policy::HeuristicPolicy;
    use tokio::sync::mpsc;

    use super::*;

    /// What a fake bot received: when, how many events, and the message.
    type Received = Arc<Mutex<Vec<(Instant, usize, Option<ToSeat>)>>>;

    /// A bot link over channels; the test plays the bot.
    struct FakeLink {
        received: Received,
        to_bot: mpsc::UnboundedSender<ToSeat>,
        answers: mpsc::UnboundedReceiver<FromSeat>,
    }

    impl BotLink for FakeLink {
        fn send(&mut self, events: &[Arc<EventBatch>], message: Option<ToSeat>) -> bool {
            let count = events.iter().map(|batch| batch.events().len()).sum();
            let record = (Instant::now(), count, message.clone());
            self.received.lock().unwrap().push(record);
            match message {
                Some(message) => self.to_bot.send(message).is_ok(),
                None => true,
            }
        }
        fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<FromSeat> {
            self.answers
                .poll_recv(cx)
                .map(|answer| answer.unwrap_or(FromSeat::Disconnected))
        }
        fn release(self: Box<Self>) {}
    }

    /// A bot that answers every request with its default action after `think`, and notes
    /// when it answered.
    fn fake_bot(think: Duration, answered: Arc<Mutex<Vec<Instant>>>) -> (Player, Received) {
        let received = Received::default();
        let (to_bot, mut requests) = mpsc::unbounded_channel();
        let (answer, answers) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(message) = requests.recv().await {
                if let ToSeat::Request(request) = message {
                    tokio::time::sleep(think).await;
                    answered.lock().unwrap().push(Instant::now());
                    let decision = FromSeat::Decision {
                        request_id: request.request_id,
                        action: Ok(request.default_action),
                    };
                    if answer.send(decision).is_err() {
                        return;
                    }
                }
            }
        });
        let link = FakeLink {
            received: received.clone(),
            to_bot,
            answers,
        };
        (Player::Bot(Box::new(link)), received)
    }

    /// Every event reaches every bot within [`EVENTS_MAX_DELAY`], also while another seat
    /// thinks; events never come after the request they preceded.
    #[tokio::test(start_paused = true)]
    async fn events_reach_waiting_seats_within_the_max_delay() {
        let answered = Arc::new(Mutex::new(Vec::new()));
        let (slow, _) = fake_bot(Duration::from_millis(300), answered.clone());
        let (fast, fast_received) = fake_bot(Duration::ZERO, answered.clone());
        let info = Arc::new(MatchInfo {
            match_id: "m".to_owned(),
            preset: "schocken".to_owned(),
            rules: Rules::preset("schocken").unwrap(),
            seat_names: vec!["slow".into(), "fast".into(), "builtin".into()],
            seat_bot_ids: vec![Some(1), Some(2), None],
            time_control: TimeControl::default(),
        });
        let players = vec![slow, fast, Player::Builtin(Box::new(HeuristicPolicy))];
        let (_stop, shutdown) = watch::channel(false);
        let (report, announcement) = run_match(info, 11, players, shutdown).await;
        announcement.send();
        assert!(report.outcome.is_some());
        assert_eq!(report.timeouts, 0);

        let received = fast_received.lock().unwrap();
        let answered = answered.lock().unwrap();
        assert!(answered.len() > 10);
        // Every action of a bot makes events: each must reach the fast bot within the delay.
        for &at in answered.iter() {
            assert!(
                received
                    .iter()
                    .any(|&(t, events, _)| events > 0 && t >= at && t <= at + EVENTS_MAX_DELAY),
                "events of the action at {at:?} did not arrive within {EVENTS_MAX_DELAY:?}"
            );
        }
        // Some of them came on their own, while the slow seat was thinking.
        assert!(
            received
                .iter()
                .any(|(_, events, message)| *events > 0 && message.is_none())
        );
    }
}

#[cfg(test)]
mod penalties {
    use std::sync::Mutex;

    use knobel_engine::LogEntry;
    use knobel_engine::policy::HeuristicPolicy;

    use super::*;

    /// What a silent bot received: every event and every message.
    #[derive(Default)]
    struct Inbox {
        events: Vec<Event>,
        messages: Vec<ToSeat>,
    }

    /// A bot that reads everything and never answers; `full` refuses every send after the
    /// first `n` (a bot whose queue is full).
    struct SilentLink {
        inbox: Arc<Mutex<Inbox>>,
        accept: Option<usize>,
    }

    impl BotLink for SilentLink {
        fn send(&mut self, events: &[Arc<EventBatch>], message: Option<ToSeat>) -> bool {
            if let Some(left) = self.accept.as_mut() {
                if *left == 0 {
                    return false;
                }
                *left -= 1;
            }
            let mut inbox = self.inbox.lock().unwrap();
            for batch in events {
                inbox.events.extend_from_slice(batch.events());
            }
            inbox.messages.extend(message);
            true
        }
        fn poll_recv(&mut self, _: &mut Context<'_>) -> Poll<FromSeat> {
            Poll::Pending
        }
        fn release(self: Box<Self>) {}
        fn gone_reason(&self) -> ForfeitReason {
            ForfeitReason::NotReading
        }
    }

    async fn play(preset: &str, accept: Option<usize>) -> (MatchReport, Arc<Mutex<Inbox>>) {
        let inbox = Arc::new(Mutex::new(Inbox::default()));
        let link = SilentLink {
            inbox: inbox.clone(),
            accept,
        };
        let mut rules = Rules::preset(preset).unwrap();
        if preset == "zokken" {
            rules.set_number("rounds", 5).unwrap();
        }
        let info = Arc::new(MatchInfo {
            match_id: "m".to_owned(),
            preset: preset.to_owned(),
            rules,
            seat_names: vec!["silent".into(), "a".into(), "b".into()],
            seat_bot_ids: vec![Some(1), None, None],
            time_control: TimeControl {
                decision: Duration::from_millis(100),
                bank: Duration::from_millis(50),
            },
        });
        let players = vec![
            Player::Bot(Box::new(link)),
            Player::Builtin(Box::new(HeuristicPolicy)),
            Player::Builtin(Box::new(HeuristicPolicy)),
        ];
        let (_stop, shutdown) = watch::channel(false);
        let (report, announcement) = run_match(info, 3, players, shutdown).await;
        announcement.send();
        (report, inbox)
    }

    /// A bot that never answers: three timeouts, each a strike, then it forfeits. The
    /// report, the log, the result and the events it received all say so, alike.
    #[tokio::test(start_paused = true)]
    async fn three_timeouts_forfeit_and_everything_agrees() {
        for preset in knobel_engine::PRESETS {
            let (report, inbox) = play(preset, None).await;
            let outcome = report.outcome.clone().expect("finished");
            assert_eq!(outcome.strikes, [3, 0, 0], "{preset}");
            assert_eq!(outcome.timeouts, [3, 0, 0], "{preset}");
            assert_eq!(outcome.forfeits, [Some(ForfeitReason::Strikes), None, None]);
            assert_eq!(
                outcome.placings[0], 3,
                "{preset}: the forfeited seat is last"
            );
            assert_eq!((report.timeouts, report.forfeits), (3, 1));
            let log = &report.log;
            let strikes = log
                .entries
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        LogEntry::Strike {
                            seat: Seat(0),
                            reason: StrikeReason::Timeout
                        }
                    )
                })
                .count();
            assert_eq!(strikes, 3, "{preset}");
            assert!(log.entries.contains(&LogEntry::Forfeit {
                seat: Seat(0),
                reason: ForfeitReason::Strikes
            }));
            assert_eq!(log.replay().unwrap().outcome(), Some(outcome.clone()));

            let inbox = inbox.lock().unwrap();
            let Some(ToSeat::Result { outcome: sent }) = inbox.messages.last() else {
                panic!("{preset}: no result: {:?}", inbox.messages.last());
            };
            assert_eq!(sent, &outcome);
            let notices: Vec<_> = inbox
                .messages
                .iter()
                .filter_map(|m| match m {
                    ToSeat::Notice(n) => Some((n.strikes, n.forfeited)),
                    _ => None,
                })
                .collect();
            assert_eq!(notices, [(1, false), (2, false), (3, true)], "{preset}");
            assert!(inbox.events.contains(&Event::Forfeited {
                seat: Seat(0),
                reason: ForfeitReason::Strikes
            }));
            match inbox.events.last() {
                Some(Event::MatchOver { placings }) => {
                    assert_eq!(placings.as_slice(), outcome.placings, "{preset}")
                }
                other => panic!("{preset}: last event {other:?}"),
            }
        }
    }

    /// A bot whose queue is full forfeits as not reading; one that is gone before the match
    /// as absent.
    #[tokio::test(start_paused = true)]
    async fn a_full_queue_forfeits_as_not_reading() {
        let (report, _) = play("sjokken", Some(1)).await;
        let outcome = report.outcome.unwrap();
        assert_eq!(outcome.forfeits[0], Some(ForfeitReason::NotReading));
        assert_eq!(outcome.placings[0], 3);
        assert_eq!(outcome.strikes, [0, 0, 0]);

        let info = Arc::new(MatchInfo {
            match_id: "m".to_owned(),
            preset: "schocken".to_owned(),
            rules: Rules::preset("schocken").unwrap(),
            seat_names: vec!["a".into(), "gone".into()],
            seat_bot_ids: vec![None, Some(2)],
            time_control: TimeControl::default(),
        });
        let players = vec![
            Player::Builtin(Box::new(HeuristicPolicy)),
            Player::Bot(Box::new(AbsentBot)),
        ];
        let (_stop, shutdown) = watch::channel(false);
        let (report, _) = run_match(info, 5, players, shutdown).await;
        let outcome = report.outcome.unwrap();
        assert_eq!(outcome.forfeits, [None, Some(ForfeitReason::Absent)]);
        assert_eq!(outcome.placings, [1, 2]);
    }
}
