//! The Play loop: connect, Hello, answer decision requests, reconnect.

use std::fmt;
use std::time::Duration;

use http::uri::PathAndQuery;
use knobel_proto::v1 as pb;
use knobel_proto::{BotHello, convert};
use pb::arena_client::ArenaClient;
use pb::arena_message::Kind;
use tokio::sync::mpsc;
use tokio::time::{Instant, Interval};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Endpoint;
use tracing::{debug, info, warn};

use crate::answer::PolicyResponder;
use crate::auth::BearerAuth;
use crate::codec::{Outgoing, PlayCodec};
use crate::config::{Backoff, BotConfig};
use crate::error::BotError;
use crate::policy::BotPolicy;
use crate::summary::{MatchSummary, RunReport};

/// The gRPC path of `knobel.v1.Arena/Play`.
const PLAY_PATH: &str = "/knobel.v1.Arena/Play";

/// A callback for every match result.
pub(crate) type MatchHook = Box<dyn FnMut(&MatchSummary) + Send>;

/// A bot: a configuration, a policy and an optional callback for every match result.
///
/// ```no_run
/// # async fn example() -> Result<(), knobel_bots::BotError> {
/// use knobel_bots::{Bot, BotConfig, Game};
/// use knobel_engine::policy::HeuristicPolicy;
///
/// let config = BotConfig::new("http://127.0.0.1:50051", "knb_...", "mybot", [Game::Schocken]);
/// let report = Bot::new(config, HeuristicPolicy)
///     .on_match_end(|summary| println!("{summary}"))
///     .run()
///     .await?;
/// println!("{} matches", report.matches.len());
/// # Ok(()) }
/// ```
pub struct Bot<P> {
    config: BotConfig,
    policy: P,
    on_match_end: Option<MatchHook>,
}

impl<P> fmt::Debug for Bot<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bot")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Plays with `policy` as `config` says until `config.max_matches` match results have
/// arrived (forever if `None`), reconnecting with backoff when the connection fails.
///
/// With several addresses in `config.server` ([`endpoints`](crate::endpoints)), each
/// reconnect after a failed or closed stream goes to the next one.
///
/// Ends with an error at once when the arena refuses the token (UNAUTHENTICATED) or the
/// Hello (INVALID_ARGUMENT), and after `config.max_attempts` failed attempts in a row.
pub async fn run_bot(config: BotConfig, policy: impl BotPolicy) -> Result<RunReport, BotError> {
    Bot::new(config, policy).run().await
}

/// State kept across the streams of one run.
#[derive(Default)]
struct RunState {
    report: RunReport,
    /// Whether the current stream got a Welcome.
    welcomed: bool,
}

/// The match being played on the current stream.
struct CurrentMatch {
    summary: MatchSummary,
}

/// How a stream ended without an error.
enum SessionEnd {
    /// Enough matches played.
    Done,
    /// The arena ended the call with status OK.
    Closed,
    /// The responder dropped the stream (misbehaving, or its program must be restarted);
    /// reconnect once it is ready.
    Dropped,
}

/// What a [`Responder`] does.
pub(crate) enum Step {
    /// Send a message to the arena.
    Send(Outgoing),
    /// Send a message to the arena after a delay (the reading goes on meanwhile).
    SendAfter(Duration, Outgoing),
    /// Drop the stream without a word; the run connects again once the responder is
    /// [`ready`](Responder::ready).
    Drop,
}

/// What answers the arena on a Play stream: a [`BotPolicy`] (`crate::answer`), or a
/// program behind the stdin/stdout bridge (`crate::exec`). The [`Runner`] does the rest:
/// connecting, the Hello, pings, match summaries, reconnecting.
pub(crate) trait Responder: Send {
    /// Waits until the responder can play; awaited before every connection. An error ends
    /// the run.
    fn ready(&mut self) -> impl Future<Output = Result<(), BotError>> + Send {
        async { Ok(()) }
    }

    /// Whether the next stream sends through the raw codec (`Misbehave::Garbage`).
    fn raw_stream(&self) -> bool {
        false
    }

    /// What to do about `message`: called with every message from the arena, in order.
    fn on_message(&mut self, message: &pb::ArenaMessage) -> Vec<Step>;

    /// The next step the responder takes on its own (not in answer to a message); never
    /// resolves for one that takes none. Cancel safe: the runner polls it beside the stream.
    fn next_step(&mut self) -> impl Future<Output = Step> + Send {
        std::future::pending()
    }

    /// The run is over (also after an error).
    fn finish(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

/// What the runner's loop woke up for (one at a time, on the stack: its size is no cost).
#[allow(clippy::large_enum_variant)]
enum Wake {
    Message(Result<Option<pb::ArenaMessage>, tonic::Status>),
    Ping,
    Step(Step),
}

impl<P: BotPolicy> Bot<P> {
    /// A bot playing with `policy` as `config` says.
    pub fn new(config: BotConfig, policy: P) -> Bot<P> {
        Bot {
            config,
            policy,
            on_match_end: None,
        }
    }

    /// Calls `hook` with every match result as it arrives (for example to print a line).
    pub fn on_match_end(mut self, hook: impl FnMut(&MatchSummary) + Send + 'static) -> Bot<P> {
        self.on_match_end = Some(Box::new(hook));
        self
    }

    /// Plays until enough matches have been played (see [`run_bot`]).
    pub async fn run(self) -> Result<RunReport, BotError> {
        let responder = PolicyResponder::new(self.policy, self.config.misbehave());
        Runner {
            config: self.config,
            responder,
            on_match_end: self.on_match_end,
        }
        .run()
        .await
    }
}

/// Plays the Play loop of one run for a [`Responder`].
pub(crate) struct Runner<R> {
    pub(crate) config: BotConfig,
    pub(crate) responder: R,
    pub(crate) on_match_end: Option<MatchHook>,
}

impl<R: Responder> Runner<R> {
    /// The Hello this bot sends, checked as the arena checks it.
    fn hello(&self) -> Result<pb::Hello, BotError> {
        if self.config.games.is_empty() {
            return Err(BotError::InvalidConfig(
                "no games: name at least one of schocken, sjokken, zokken".to_owned(),
            ));
        }
        let hello = pb::Hello {
            name: self.config.name.clone(),
            games: self
                .config
                .games
                .iter()
                .map(|&g| pb::Game::from(g) as i32)
                .collect(),
            client_version: self.config.client_version.clone(),
            preset: self.config.preset.clone(),
            max_matches: self.config.max_matches.unwrap_or(0),
        };
        BotHello::try_from(&hello).map_err(|e| BotError::InvalidConfig(e.to_string()))?;
        Ok(hello)
    }

    fn enough(&self, run: &RunState) -> bool {
        self.config
            .max_matches
            .is_some_and(|max| run.report.matches.len() as u64 >= u64::from(max))
    }

    /// Plays until enough matches have been played (see [`run_bot`]), then lets the
    /// responder finish.
    pub(crate) async fn run(mut self) -> Result<RunReport, BotError> {
        let result = self.play().await;
        self.responder.finish().await;
        result
    }

    async fn play(&mut self) -> Result<RunReport, BotError> {
        let hello = self.hello()?;
        let endpoints = crate::endpoints(&self.config.server)?;
        let mut next = 0;
        let auth = BearerAuth::new(&self.config.token)?;
        let mut backoff = self.config.backoff.clone();
        backoff.reset();
        let mut run = RunState::default();
        let mut failures = 0u32;
        loop {
            if self.enough(&run) {
                return Ok(run.report);
            }
            self.responder.ready().await?;
            run.welcomed = false;
            let endpoint = &endpoints[next % endpoints.len()];
            let result = self
                .session(endpoint, &auth, &hello, &mut backoff, &mut run)
                .await;
            let last = match result {
                Ok(SessionEnd::Done) => return Ok(run.report),
                Ok(SessionEnd::Dropped) => {
                    info!("dropped the stream on purpose; reconnecting when ready");
                    continue;
                }
                Ok(SessionEnd::Closed) => {
                    info!("the arena closed the stream");
                    "the arena closed the stream before a Welcome".to_owned()
                }
                Err(error) if error.is_fatal() => return Err(error),
                Err(error) => {
                    warn!(server = %endpoint.uri(), error = %error, "the connection failed");
                    error.to_string()
                }
            };
            // With several addresses, the next connection tries the next one.
            next += 1;
            failures = if run.welcomed { 0 } else { failures + 1 };
            if let Some(max) = self.config.max_attempts
                && failures >= max
            {
                return Err(BotError::GaveUp {
                    attempts: failures,
                    last,
                });
            }
            let delay = backoff.next_delay();
            info!(delay_ms = delay.as_millis() as u64, "reconnecting");
            tokio::time::sleep(delay).await;
        }
    }

    /// One Play stream, from connecting to its end.
    async fn session(
        &mut self,
        endpoint: &Endpoint,
        auth: &BearerAuth,
        hello: &pb::Hello,
        backoff: &mut Backoff,
        run: &mut RunState,
    ) -> Result<SessionEnd, BotError> {
        let (tx, mut inbound) = self.open_stream(endpoint, auth, hello, run).await?;
        let mut ping = self
            .config
            .ping_interval
            .filter(|every| !every.is_zero())
            .map(|every| tokio::time::interval_at(Instant::now() + every, every));
        let mut nonce = 0u64;
        let mut current: Option<CurrentMatch> = None;
        loop {
            let wake = tokio::select! {
                message = inbound.message() => Wake::Message(message),
                _ = tick(&mut ping) => Wake::Ping,
                step = self.responder.next_step() => Wake::Step(step),
            };
            let message = match wake {
                Wake::Ping => {
                    nonce += 1;
                    let _ = tx
                        .send(Outgoing::from(pb::bot_message::Kind::Ping(pb::Ping {
                            nonce,
                        })))
                        .await;
                    continue;
                }
                Wake::Step(step) => {
                    if execute(step, &tx).await {
                        return Ok(SessionEnd::Dropped);
                    }
                    continue;
                }
                Wake::Message(message) => message,
            };
            let message = match message {
                Ok(Some(message)) => message,
                Ok(None) => return Ok(SessionEnd::Closed),
                Err(status) => return Err(BotError::from_status(&status)),
            };
            for event in &message.events {
                debug!(event = ?event.kind, "event");
            }
            let steps = self.responder.on_message(&message);
            if self.take(message.kind, &mut current, backoff, run) {
                return Ok(SessionEnd::Done);
            }
            for step in steps {
                if execute(step, &tx).await {
                    return Ok(SessionEnd::Dropped);
                }
            }
        }
    }

    /// Connects and opens a Play stream (typed, or raw if the responder asks for it) with
    /// the Hello waiting in its outgoing channel: the channel's sender and the inbound
    /// messages.
    async fn open_stream(
        &mut self,
        endpoint: &Endpoint,
        auth: &BearerAuth,
        hello: &pb::Hello,
        run: &mut RunState,
    ) -> Result<(mpsc::Sender<Outgoing>, Streaming<pb::ArenaMessage>), BotError> {
        let channel = endpoint.connect().await?;
        let (tx, rx) = mpsc::channel::<Outgoing>(64);
        // The Hello waits in the channel until the stream is open. It asks for the matches
        // still to play, so that the arena does not seat the stream in one it would leave.
        let mut hello = hello.clone();
        if hello.max_matches > 0 {
            let played = run.report.matches.len() as u32;
            hello.max_matches = hello.max_matches.saturating_sub(played).max(1);
        }
        let _ = tx
            .send(Outgoing::from(pb::bot_message::Kind::Hello(hello)))
            .await;
        run.report.connections += 1;
        let raw = self.responder.raw_stream();
        let inbound: Streaming<pb::ArenaMessage> = if raw {
            let service = InterceptedService::new(channel, auth.clone());
            let mut grpc = tonic::client::Grpc::new(service);
            grpc.ready().await.map_err(|e| BotError::Status {
                code: tonic::Code::Unavailable,
                message: e.to_string(),
            })?;
            let request = tonic::Request::new(ReceiverStream::new(rx));
            grpc.streaming(request, PathAndQuery::from_static(PLAY_PATH), PlayCodec)
                .await?
                .into_inner()
        } else {
            let mut client = ArenaClient::with_interceptor(channel, auth.clone());
            let outgoing = ReceiverStream::new(rx).filter_map(Outgoing::into_message);
            client.play(outgoing).await?.into_inner()
        };
        debug!(server = %endpoint.uri(), "play stream open");
        Ok((tx, inbound))
    }

    /// Takes note of a message of the arena (logs it, follows the current match, adds a
    /// result to the report): true once enough matches have been played.
    fn take(
        &mut self,
        kind: Option<Kind>,
        current: &mut Option<CurrentMatch>,
        backoff: &mut Backoff,
        run: &mut RunState,
    ) -> bool {
        match kind {
            Some(Kind::Welcome(welcome)) => {
                run.welcomed = true;
                backoff.reset();
                let limits = welcome.limits.unwrap_or_default();
                info!(
                    server_version = %welcome.server_version,
                    bot_name = %welcome.bot_name,
                    max_message_bytes = limits.max_message_bytes,
                    max_strikes = limits.max_strikes,
                    "welcomed by the arena"
                );
            }
            Some(Kind::MatchStart(start)) => *current = Some(match_started(start)),
            Some(Kind::DecisionRequest(_)) => {
                if let Some(current) = current.as_mut() {
                    current.summary.requests += 1;
                }
            }
            Some(Kind::Error(error)) => refused(&error, current.as_mut()),
            Some(Kind::MatchResult(result)) => {
                let summary = match_over(result, current.take());
                if let Some(hook) = self.on_match_end.as_mut() {
                    hook(&summary);
                }
                run.report.matches.push(summary);
                return self.enough(run);
            }
            Some(Kind::Waiting(waiting)) => {
                info!(
                    waited_secs = waiting.waited_secs,
                    preset = %waiting.preset,
                    "still waiting for a match: {}",
                    waiting.reason
                );
            }
            Some(Kind::Pong(pong)) => {
                run.report.pongs += 1;
                debug!(nonce = pong.nonce, "pong");
            }
            None => debug!("a message of a kind this client does not know"),
        }
        false
    }
}

/// The match a MatchStart begins, logged.
fn match_started(start: pb::MatchStart) -> CurrentMatch {
    let game = convert::game_from_wire("match_start.game", start.game).ok();
    info!(
        match_id = %start.match_id,
        game = game.map_or("unknown", |g| g.name()),
        preset = %start.preset,
        seat = start.your_seat,
        seats = ?start.seat_names,
        "match started"
    );
    CurrentMatch {
        summary: MatchSummary {
            match_id: start.match_id,
            game,
            preset: start.preset,
            seats: start.seats,
            your_seat: start.your_seat,
            ..MatchSummary::default()
        },
    }
}

/// Logs an Error of the arena and counts it in the current match, if any.
fn refused(error: &pb::ErrorEvent, current: Option<&mut CurrentMatch>) {
    let code = pb::ErrorCode::try_from(error.code).unwrap_or_default();
    warn!(
        request_id = error.request_id,
        code = code.as_str_name(),
        strikes = error.strikes,
        forfeited = error.forfeited,
        message = %error.message,
        "the arena refused a message"
    );
    if let Some(current) = current {
        let summary = &mut current.summary;
        summary.errors.push(code);
        summary.error_messages.push(error.message.clone());
        summary.strikes = summary.strikes.max(error.strikes);
        summary.forfeited |= error.forfeited;
    }
}

/// The summary of the match a MatchResult ends (the `current` one if it is that match),
/// logged.
fn match_over(result: pb::MatchResult, current: Option<CurrentMatch>) -> MatchSummary {
    let mut summary = match current {
        Some(current) if current.summary.match_id == result.match_id => current.summary,
        _ => MatchSummary {
            match_id: result.match_id.clone(),
            your_seat: result.your_seat,
            ..MatchSummary::default()
        },
    };
    summary.finished = result.status == pb::MatchStatus::Finished as i32;
    summary.place = result.your_place;
    if summary.seats == 0
        && let Some(outcome) = &result.outcome
    {
        summary.seats = outcome.placings.len() as u32;
    }
    summary.outcome = result.outcome;
    info!(
        match_id = %summary.match_id,
        game = summary.game_name(),
        place = summary.place,
        seats = summary.seats,
        finished = summary.finished,
        strikes = summary.strikes,
        "match over"
    );
    summary
}

/// Takes `step`; true if it drops the stream.
async fn execute(step: Step, tx: &mpsc::Sender<Outgoing>) -> bool {
    match step {
        Step::Send(message) => {
            let _ = tx.send(message).await;
        }
        Step::SendAfter(delay, message) => {
            let tx = tx.clone();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let _ = tx.send(message).await;
            });
        }
        Step::Drop => return true,
    }
    false
}

/// Waits for the next tick of `interval`, or forever without one.
async fn tick(interval: &mut Option<Interval>) {
    match interval {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending::<()>().await,
    }
}

/// The rules a MatchStart names: its preset with its variants and numeric settings (`None`
/// for an unknown preset; a variant or setting the engine refuses is left as the preset has
/// it).
pub(crate) fn start_rules(start: &pb::MatchStart) -> Option<knobel_engine::Rules> {
    let mut rules = knobel_engine::Rules::preset(&start.preset).ok()?;
    for variant in &start.variants {
        let _ = rules.set_variant(variant, true);
    }
    for (name, &value) in &start.settings {
        let _ = rules.set_number(name, value);
    }
    Some(rules)
}
