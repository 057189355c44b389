//! The stdin/stdout bridge: `knobel-bot --exec CMD [ARGS...]` plays on the arena for a
//! program that reads and writes JSON lines (docs/stdio-bots.md).
//!
//! The bridge connects, says Hello, pings and reconnects like every [`crate::Bot`]; what
//! a policy would decide, the program decides:
//!
//! - every message from the arena (but Pong) goes to the program's stdin as one line: the
//!   `ArenaMessage` in the proto3 JSON mapping of [`knobel_proto::json`];
//! - every line the program prints is a `Decision` in the same mapping, sent on at once.
//!   `request_id` may be left out (or 0): it is then the open request's;
//! - a line that is not a Decision (not JSON, an unknown field or action, no action, not
//!   UTF-8, over [`MAX_LINE_BYTES`]) gets a `{"line_error": {...}}` line back and, when a
//!   request is open, counts as a malformed answer to it: the bridge sends a Decision
//!   without an action, which the arena strikes (MALFORMED) and replaces by the default
//!   action;
//! - the program's stderr goes to the log, at level info with target `program`;
//! - a program that exits (or closes its stdout) is restarted with backoff; if a match was
//!   being played, the bridge leaves it first (the arena forfeits the seat: DISCONNECTED),
//!   and joins the next one with the new program. A program that hangs (a request timed
//!   out and it printed nothing since, by the end of the match) or does not read its stdin
//!   ([`STDIN_QUEUE_LINES`] lines waiting) is stopped and restarted the same way. A
//!   program is never restarted within a match.
//!
//! The bridge adds no deadline of its own: the arena's clock decides when an answer is
//! late. Its own bounds are the line length, the stdin queue, and [`EXIT_GRACE`] for a
//! program to exit after its stdin is closed.

mod lines;
mod process;

use knobel_proto::json;
use knobel_proto::v1 as pb;
use pb::arena_message::Kind;
use tracing::{info, warn};

use lines::Line;
pub use lines::MAX_LINE_BYTES;
pub use process::{EXIT_GRACE, Program, STDIN_QUEUE_LINES};
use process::{Running, Unsent};

use crate::codec::Outgoing;
use crate::config::{Backoff, BotConfig};
use crate::error::BotError;
use crate::session::{MatchHook, Responder, Runner, Step};
use crate::summary::{MatchSummary, RunReport};

/// The actions a Decision may name, for error lines.
const ACTIONS: &str = "stop, reroll, check, bet, call, raise, fold";

/// A bot whose decisions a program makes, over its stdin and stdout.
///
/// ```no_run
/// # async fn example() -> Result<(), knobel_bots::BotError> {
/// use knobel_bots::{BotConfig, ExecBot, Game, Program};
///
/// let config = BotConfig::new("http://127.0.0.1:50051", "knb_...", "py-bot", [Game::Zokken]);
/// let program = Program { command: "python3".into(), args: vec!["bot.py".into()] };
/// let report = ExecBot::new(config, program).run().await?;
/// # Ok(()) }
/// ```
pub struct ExecBot {
    config: BotConfig,
    program: Program,
    on_match_end: Option<MatchHook>,
    restart_backoff: Backoff,
}

impl ExecBot {
    /// A bot playing as `config` says, with `program` deciding.
    pub fn new(config: BotConfig, program: Program) -> ExecBot {
        ExecBot {
            config,
            program,
            on_match_end: None,
            restart_backoff: Backoff::new(
                std::time::Duration::from_millis(200),
                std::time::Duration::from_secs(30),
            ),
        }
    }

    /// Calls `hook` with every match result as it arrives.
    pub fn on_match_end(mut self, hook: impl FnMut(&MatchSummary) + Send + 'static) -> ExecBot {
        self.on_match_end = Some(Box::new(hook));
        self
    }

    /// The backoff between restarts of the program (default: 200 ms doubling to 30 s).
    pub fn restart_backoff(mut self, backoff: Backoff) -> ExecBot {
        self.restart_backoff = backoff;
        self
    }

    /// Plays until `config.max_matches` match results have arrived (forever if `None`),
    /// like [`crate::run_bot`]. Fails at once if the program cannot be started.
    pub async fn run(self) -> Result<RunReport, BotError> {
        Runner {
            config: self.config,
            responder: Bridge {
                program: self.program,
                running: None,
                restart: false,
                backoff: self.restart_backoff,
                open: None,
                missed: None,
            },
            on_match_end: self.on_match_end,
        }
        .run()
        .await
    }
}

/// The [`Responder`] of an [`ExecBot`].
struct Bridge {
    program: Program,
    running: Option<Running>,
    /// Whether the program must be restarted before the next stream.
    restart: bool,
    backoff: Backoff,
    /// The request the program has not answered yet.
    open: Option<u64>,
    /// A request that timed out unanswered, if the program has printed nothing since.
    missed: Option<u64>,
}

impl Bridge {
    /// Sends `line` to the program; a drop of the stream if it is not reading.
    fn tell(&mut self, line: String) -> Vec<Step> {
        let Some(running) = self.running.as_mut() else {
            return Vec::new();
        };
        match running.send(line) {
            Ok(()) | Err(Unsent::Closed) => Vec::new(),
            Err(Unsent::Full) => {
                warn!(
                    queued = STDIN_QUEUE_LINES,
                    "the program is not reading its stdin: restarting it"
                );
                self.restart = true;
                vec![Step::Drop]
            }
        }
    }

    /// What to send for one line of the program's stdout.
    fn answer(&mut self, line: Line) -> Option<Step> {
        self.missed = None;
        let text = match line {
            Line::Text(text) if text.trim().is_empty() => return None,
            Line::Text(text) => text,
            Line::TooLong(bytes) => {
                return self.refuse(format!(
                    "a line of {bytes} bytes is over the limit of {MAX_LINE_BYTES} bytes: print one Decision per line"
                ));
            }
            Line::NotUtf8(bytes) => {
                return self.refuse(format!(
                    "a line of {bytes} bytes is not UTF-8: print one Decision per line, as JSON"
                ));
            }
        };
        let mut decision = match json::from_json::<pb::Decision>(&text) {
            Ok(decision) => decision,
            Err(error) => {
                return self.refuse(format!(
                    "{error}; print one Decision per line, e.g. {{\"request_id\": 7, \"action\": {{\"stop\": {{}}}}}}, naming one of {ACTIONS}"
                ));
            }
        };
        if decision.action.as_ref().is_none_or(|a| a.kind.is_none()) {
            return self.refuse(format!(
                "the decision has no action: name one of {ACTIONS}, as the request's legal_actions do"
            ));
        }
        if decision.request_id == 0 {
            decision.request_id = self.open.unwrap_or(0);
        }
        if self.open == Some(decision.request_id) {
            self.open = None;
        }
        Some(Step::Send(Outgoing::from(pb::bot_message::Kind::Decision(
            decision,
        ))))
    }

    /// Tells the program what was wrong with its line and, if a request is open, sends
    /// the arena a decision without an action for it: a malformed answer.
    fn refuse(&mut self, message: String) -> Option<Step> {
        let request = self.open.take();
        warn!(request_id = request, %message, "a bad line from the program");
        let line = match request {
            Some(id) => format!(
                "{{\"line_error\":{{\"message\":{},\"request_id\":{id}}}}}",
                quote(&message)
            ),
            None => format!("{{\"line_error\":{{\"message\":{}}}}}", quote(&message)),
        };
        if let Some(Step::Drop) = self.tell(line).pop() {
            return Some(Step::Drop);
        }
        request.map(|request_id| {
            Step::Send(Outgoing::from(pb::bot_message::Kind::Decision(
                pb::Decision {
                    request_id,
                    action: None,
                },
            )))
        })
    }
}

/// `text` as a JSON string.
fn quote(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

impl Responder for Bridge {
    async fn ready(&mut self) -> Result<(), BotError> {
        if self.restart
            && let Some(running) = self.running.take()
        {
            running.stop().await;
        }
        if let Some(running) = self.running.as_mut()
            && let Some(status) = running.exit_status()
        {
            // Exited between matches: restarted with the same backoff as any other exit.
            info!(%status, "the program exited: restarting it");
            self.running = None;
            self.restart = true;
        }
        if self.running.is_none() {
            if self.restart {
                let delay = self.backoff.next_delay();
                info!(
                    delay_ms = delay.as_millis() as u64,
                    "restarting the program"
                );
                tokio::time::sleep(delay).await;
            }
            self.running = Some(Running::start(&self.program)?);
        }
        self.restart = false;
        (self.open, self.missed) = (None, None);
        Ok(())
    }

    fn on_message(&mut self, message: &pb::ArenaMessage) -> Vec<Step> {
        match &message.kind {
            Some(Kind::Pong(_)) => return Vec::new(),
            Some(Kind::DecisionRequest(request)) => self.open = Some(request.request_id),
            Some(Kind::Error(error))
                if error.code == pb::ErrorCode::Timeout as i32
                    && self.open == Some(error.request_id) =>
            {
                self.open = None;
                self.missed = Some(error.request_id);
            }
            _ => {}
        }
        let mut steps = self.tell(json::to_json(message));
        if let Some(Kind::MatchResult(_)) = &message.kind {
            self.open = None;
            if let Some(request_id) = self.missed.take() {
                warn!(
                    request_id,
                    "the program has printed nothing since request {request_id} timed out: restarting it"
                );
                self.restart = true;
                steps = vec![Step::Drop];
            } else if steps.is_empty() {
                self.backoff.reset();
            }
        }
        steps
    }

    async fn next_step(&mut self) -> Step {
        loop {
            let Some(running) = self.running.as_mut() else {
                return std::future::pending().await;
            };
            let Some(line) = running.next_line().await else {
                let status = running.exit_status();
                warn!(
                    status = status.map(|s| s.to_string()),
                    "the program closed its stdout (it exited): restarting it"
                );
                self.restart = true;
                return Step::Drop;
            };
            if let Some(step) = self.answer(line) {
                return step;
            }
        }
    }

    async fn finish(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop().await;
        }
    }
}
