//! The Play loop: connect, Hello, answer decision requests, reconnect.

use std::fmt;
use std::time::Duration;

use http::uri::PathAndQuery;
use knobel_engine::{Action, Game, Observation};
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

use crate::auth::BearerAuth;
use crate::codec::{Outgoing, PlayCodec};
use crate::config::{Backoff, BotConfig};
use crate::error::BotError;
use crate::misbehave::{self, Misbehave};
use crate::policy::BotPolicy;

/// The gRPC path of `knobel.v1.Arena/Play`.
const PLAY_PATH: &str = "/knobel.v1.Arena/Play";

/// How one match went for this bot. Its `Display` is the one-line summary
/// `match <id> <game> place <p>/<n>` (with ` aborted` appended, and place 0, when the match
/// was aborted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchSummary {
    /// The match id.
    pub match_id: String,
    /// The game, if the MatchStart named a known one.
    pub game: Option<Game>,
    /// The preset the rules started from.
    pub preset: String,
    /// Seats at the table.
    pub seats: u32,
    /// This bot's seat.
    pub your_seat: u32,
    /// This bot's place (1 is best); 0 when the match was aborted.
    pub place: u32,
    /// Whether the match was played to its end (else it was aborted).
    pub finished: bool,
    /// How the match ended, when it finished.
    pub outcome: Option<pb::Outcome>,
    /// Decision requests received.
    pub requests: u32,
    /// Error events received, by code, in order.
    pub errors: Vec<pb::ErrorCode>,
    /// Strikes collected (from the last error event).
    pub strikes: u32,
    /// Whether the seat was forfeited.
    pub forfeited: bool,
}

impl MatchSummary {
    /// The game's name ("schocken", "sjokken", "zokken"), or "unknown".
    pub fn game_name(&self) -> &'static str {
        self.game.map_or("unknown", |g| g.name())
    }
}

impl fmt::Display for MatchSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "match {} {} place {}/{}",
            self.match_id,
            self.game_name(),
            self.place,
            self.seats
        )?;
        if !self.finished {
            f.write_str(" aborted")?;
        }
        write!(
            f,
            " requests {} strikes {} forfeited {} errors [",
            self.requests, self.strikes, self.forfeited
        )?;
        for (i, code) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(code.as_str_name())?;
        }
        f.write_str("]")
    }
}

/// What a run of a bot did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunReport {
    /// Every match result received, in order.
    pub matches: Vec<MatchSummary>,
    /// Play streams opened (the first one and every reconnect).
    pub connections: u32,
    /// Pongs received (answers to the keep-alive Pings).
    pub pongs: u32,
}

/// A callback for every match result.
type MatchHook = Box<dyn FnMut(&MatchSummary) + Send>;

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
/// Ends with an error at once when the arena refuses the token (UNAUTHENTICATED) or the
/// Hello (INVALID_ARGUMENT), and after `config.max_attempts` failed attempts in a row.
pub async fn run_bot(config: BotConfig, policy: impl BotPolicy) -> Result<RunReport, BotError> {
    Bot::new(config, policy).run().await
}

/// State kept across the streams of one run.
#[derive(Default)]
struct RunState {
    report: RunReport,
    /// Decisions answered over the whole run.
    answered: u64,
    /// Whether a once-per-run misbehaviour (disconnect, garbage, oversized) has happened.
    misbehaved: bool,
    /// Which illegal kind to try next.
    rotation: usize,
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
    /// The bot dropped the stream on purpose (misbehaving); reconnect at once.
    Dropped,
}

/// What to do with one decision request.
enum Step {
    Send(Outgoing),
    SendAfter(Duration, Outgoing),
    Drop,
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

    /// Plays until enough matches have been played (see [`run_bot`]).
    pub async fn run(mut self) -> Result<RunReport, BotError> {
        let hello = self.hello()?;
        let endpoint = crate::endpoint(&self.config.server)?;
        let auth = BearerAuth::new(&self.config.token)?;
        let mut backoff = self.config.backoff.clone();
        backoff.reset();
        let mut run = RunState::default();
        let mut failures = 0u32;
        loop {
            if self.enough(&run) {
                return Ok(run.report);
            }
            run.welcomed = false;
            let result = self
                .session(&endpoint, &auth, &hello, &mut backoff, &mut run)
                .await;
            let last = match result {
                Ok(SessionEnd::Done) => return Ok(run.report),
                Ok(SessionEnd::Dropped) => {
                    info!("dropped the stream on purpose; reconnecting");
                    continue;
                }
                Ok(SessionEnd::Closed) => {
                    info!("the arena closed the stream");
                    "the arena closed the stream before a Welcome".to_owned()
                }
                Err(error) if error.is_fatal() => return Err(error),
                Err(error) => {
                    warn!(error = %error, "the connection failed");
                    error.to_string()
                }
            };
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
        let raw = matches!(self.config.misbehave(), Some(Misbehave::Garbage)) && !run.misbehaved;
        let mut inbound: Streaming<pb::ArenaMessage> = if raw {
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
        debug!(server = %self.config.server, "play stream open");

        let mut ping = self
            .config
            .ping_interval
            .filter(|every| !every.is_zero())
            .map(|every| tokio::time::interval_at(Instant::now() + every, every));
        let mut nonce = 0u64;
        let mut current: Option<CurrentMatch> = None;
        loop {
            let message = tokio::select! {
                message = inbound.message() => message,
                _ = tick(&mut ping) => {
                    nonce += 1;
                    let _ = tx.send(Outgoing::from(pb::bot_message::Kind::Ping(pb::Ping { nonce }))).await;
                    continue;
                }
            };
            let message = match message {
                Ok(Some(message)) => message,
                Ok(None) => return Ok(SessionEnd::Closed),
                Err(status) => return Err(BotError::from_status(&status)),
            };
            for event in &message.events {
                debug!(event = ?event.kind, "event");
            }
            match message.kind {
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
                Some(Kind::MatchStart(start)) => {
                    let game = convert::game_from_wire("match_start.game", start.game).ok();
                    if let Some(rules) = start_rules(&start) {
                        self.policy.begin_match(&rules);
                    }
                    info!(
                        match_id = %start.match_id,
                        game = game.map_or("unknown", |g| g.name()),
                        preset = %start.preset,
                        seat = start.your_seat,
                        seats = ?start.seat_names,
                        "match started"
                    );
                    current = Some(CurrentMatch {
                        summary: MatchSummary {
                            match_id: start.match_id,
                            game,
                            preset: start.preset,
                            seats: start.seats,
                            your_seat: start.your_seat,
                            ..MatchSummary::default()
                        },
                    });
                }
                Some(Kind::DecisionRequest(request)) => {
                    if let Some(current) = current.as_mut() {
                        current.summary.requests += 1;
                    }
                    for step in self.answer(&request, run) {
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
                            Step::Drop => return Ok(SessionEnd::Dropped),
                        }
                    }
                }
                Some(Kind::Error(error)) => {
                    let code = pb::ErrorCode::try_from(error.code).unwrap_or_default();
                    warn!(
                        request_id = error.request_id,
                        code = code.as_str_name(),
                        strikes = error.strikes,
                        forfeited = error.forfeited,
                        message = %error.message,
                        "the arena refused a message"
                    );
                    if let Some(current) = current.as_mut() {
                        let summary = &mut current.summary;
                        summary.errors.push(code);
                        summary.strikes = summary.strikes.max(error.strikes);
                        summary.forfeited |= error.forfeited;
                    }
                }
                Some(Kind::MatchResult(result)) => {
                    let mut summary = match current.take() {
                        Some(current) if current.summary.match_id == result.match_id => {
                            current.summary
                        }
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
                    if let Some(hook) = self.on_match_end.as_mut() {
                        hook(&summary);
                    }
                    run.report.matches.push(summary);
                    if self.enough(run) {
                        return Ok(SessionEnd::Done);
                    }
                }
                Some(Kind::Pong(pong)) => {
                    run.report.pongs += 1;
                    debug!(nonce = pong.nonce, "pong");
                }
                None => debug!("a message of a kind this client does not know"),
            }
        }
    }

    /// The policy's answer to `request` as a wire action: the request's default action
    /// when the observation cannot be read or the policy picks an action that is not legal.
    fn decide(&mut self, request: &pb::DecisionRequest) -> (pb::Action, Vec<Action>) {
        let fallback = request
            .default_action
            .clone()
            .or_else(|| request.legal_actions.first().cloned())
            .unwrap_or_else(|| Action::STOP.into());
        let legal: Vec<Action> = request
            .legal_actions
            .iter()
            .filter_map(|a| Action::try_from(a).ok())
            .collect();
        let observation = match request.observation.as_ref() {
            Some(observation) => Observation::try_from(observation),
            None => {
                warn!(
                    request_id = request.request_id,
                    "a decision request without an observation; sending the default action"
                );
                return (fallback, legal);
            }
        };
        let action = match observation {
            Ok(observation) => {
                let action = self.policy.decide(&observation, &legal);
                if legal.contains(&action) {
                    action.into()
                } else {
                    warn!(%action, "the policy chose an action that is not legal; sending the default action");
                    fallback
                }
            }
            Err(error) => {
                warn!(error = %error, "cannot read the observation; sending the default action");
                fallback
            }
        };
        (action, legal)
    }

    /// What to send for `request`, misbehaving as configured.
    fn answer(&mut self, request: &pb::DecisionRequest, run: &mut RunState) -> Vec<Step> {
        let id = request.request_id;
        let decision = |request_id: u64, action: pb::Action| {
            Outgoing::from(pb::bot_message::Kind::Decision(pb::Decision {
                request_id,
                action: Some(action),
            }))
        };
        let once = !run.misbehaved;
        let steps = match self.config.misbehave() {
            Some(Misbehave::NeverAnswer) => Vec::new(),
            Some(Misbehave::DisconnectAfter(n)) if once && run.answered >= u64::from(n) => {
                run.misbehaved = true;
                vec![Step::Drop]
            }
            Some(Misbehave::Garbage) if once => {
                run.misbehaved = true;
                vec![Step::Send(Outgoing::Raw(misbehave::GARBAGE.to_vec()))]
            }
            Some(Misbehave::Oversized) if once => {
                run.misbehaved = true;
                let padded = pb::Action {
                    kind: Some(pb::action::Kind::Reroll(pb::Reroll {
                        dice: vec![0; misbehave::OVERSIZED_SLOTS],
                        turn: Vec::new(),
                    })),
                };
                vec![Step::Send(decision(id, padded))]
            }
            Some(Misbehave::Illegal) => {
                let (action, legal) = self.decide(request);
                let illegal = misbehave::illegal_action(&legal, run.rotation);
                run.rotation += 1;
                vec![Step::Send(decision(
                    id,
                    illegal.map_or(action, pb::Action::from),
                ))]
            }
            Some(Misbehave::Late(delay)) => {
                let (action, _) = self.decide(request);
                vec![Step::SendAfter(delay, decision(id, action))]
            }
            Some(Misbehave::Stale) => {
                let (action, _) = self.decide(request);
                vec![
                    Step::Send(decision(id.wrapping_sub(1), action.clone())),
                    Step::Send(decision(id, action)),
                ]
            }
            _ => {
                let (action, _) = self.decide(request);
                vec![Step::Send(decision(id, action))]
            }
        };
        if steps
            .iter()
            .any(|s| matches!(s, Step::Send(_) | Step::SendAfter(..)))
        {
            run.answered += 1;
        }
        steps
    }
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
fn start_rules(start: &pb::MatchStart) -> Option<knobel_engine::Rules> {
    let mut rules = knobel_engine::Rules::preset(&start.preset).ok()?;
    for variant in &start.variants {
        let _ = rules.set_variant(variant, true);
    }
    for (name, &value) in &start.settings {
        let _ = rules.set_number(name, value);
    }
    Some(rules)
}
