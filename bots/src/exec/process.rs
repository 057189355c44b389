//! The program behind the bridge: started with piped stdin, stdout and stderr. The bot's
//! own task writes its stdin and reads its stdout (no task or channel in between: each
//! hop would cost a wake-up per decision); a task copies its stderr to the log.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::process::Stdio;
use std::time::Duration;

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncBufReadExt, AsyncWrite, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tracing::{debug, info, warn};

use super::lines::{Line, LineReader, MAX_LINE_BYTES};
use crate::error::BotError;

/// Lines waiting to be written to the program's stdin. A program that lets this many pile
/// up is not reading: the bridge restarts it.
pub const STDIN_QUEUE_LINES: usize = 4096;

/// How long a program may take to exit after its stdin is closed, before it is killed.
pub const EXIT_GRACE: Duration = Duration::from_secs(1);

/// The program to run: a command and its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The command (a path, or a name looked up in `PATH`).
    pub command: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
}

impl Program {
    /// The command with its arguments, for logs and errors.
    pub fn display(&self) -> String {
        std::iter::once(&self.command)
            .chain(&self.args)
            .map(|part| part.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A running program.
pub(crate) struct Running {
    child: Child,
    stdin: Stdin,
    stdout: LineReader<BufReader<ChildStdout>>,
}

/// Why a line could not be queued for the program.
pub(crate) enum Unsent {
    /// [`STDIN_QUEUE_LINES`] lines are waiting: it is not reading.
    Full,
    /// Its stdin is closed: it has exited (or closed it).
    Closed,
}

/// The program's stdin: lines are written at once, as far as the pipe takes them; the
/// rest waits here and is written while the bot waits for the program's next line.
struct Stdin {
    /// The pipe; `None` once closed.
    pipe: Option<ChildStdin>,
    /// Lines with their newlines, not yet fully written: the front one from `written` on.
    waiting: VecDeque<Vec<u8>>,
    written: usize,
}

impl Stdin {
    /// Queues `line` and writes what the pipe takes now, without waiting.
    fn send(&mut self, line: String) -> Result<(), Unsent> {
        if self.pipe.is_none() {
            return Err(Unsent::Closed);
        }
        if self.waiting.len() >= STDIN_QUEUE_LINES {
            return Err(Unsent::Full);
        }
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        self.waiting.push_back(bytes);
        self.write_now();
        Ok(())
    }

    /// Writes waiting lines without waiting: what the pipe takes now.
    fn write_now(&mut self) {
        // A waker that does nothing: `Pending` means the pipe is full, and `flush` waits
        // for it with a real waker.
        let _ = self.poll_write(&mut Context::from_waker(Waker::noop()));
    }

    /// Writes every waiting line, waiting for the pipe as needed. Cancel safe: what is
    /// not written yet stays queued.
    async fn flush(&mut self) {
        std::future::poll_fn(|context| self.poll_write(context)).await
    }

    /// Writes waiting lines until nothing waits (or the pipe is closed): `Ready`; or until
    /// the pipe is full: `Pending`, with `context`'s waker woken when it takes more.
    fn poll_write(&mut self, context: &mut Context<'_>) -> Poll<()> {
        while let Some(pipe) = self.pipe.as_mut()
            && let Some(line) = self.waiting.front()
        {
            match Pin::new(pipe).poll_write(context, &line[self.written..]) {
                Poll::Ready(Ok(n)) => self.wrote(n),
                Poll::Ready(Err(error)) => self.failed(&error),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(())
    }

    /// `n` more bytes of the front line are written.
    fn wrote(&mut self, n: usize) {
        if n == 0 {
            // A pipe that takes nothing of a line that is not empty will never take it.
            debug!("the program's stdin takes no more bytes: closing it");
            self.close();
            return;
        }
        self.written += n;
        if self
            .waiting
            .front()
            .is_some_and(|line| self.written >= line.len())
        {
            self.waiting.pop_front();
            self.written = 0;
        }
    }

    /// A write failed: the program has exited or closed its stdin (a broken pipe).
    fn failed(&mut self, error: &io::Error) {
        if error.kind() != io::ErrorKind::Interrupted {
            debug!(%error, "cannot write the program's stdin: closing it");
            self.close();
        }
    }

    /// Whether lines wait for the pipe.
    fn is_waiting(&self) -> bool {
        self.pipe.is_some() && !self.waiting.is_empty()
    }

    /// Closes the pipe: the program reads the end of its input.
    fn close(&mut self) {
        self.pipe = None;
        self.waiting.clear();
        self.written = 0;
    }
}

impl Running {
    /// Starts `program` with its stderr copied to the log (target `program`, level info).
    pub(crate) fn start(program: &Program) -> Result<Running, BotError> {
        let mut child = Command::new(&program.command)
            .args(&program.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| BotError::Program {
                command: program.display(),
                reason: e.to_string(),
            })?;
        let pid = child.id().unwrap_or(0);
        info!(pid, program = %program.display(), "program started");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");

        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                info!(target: "program", pid, "{line}");
            }
        });

        Ok(Running {
            child,
            stdin: Stdin {
                pipe: Some(stdin),
                waiting: VecDeque::new(),
                written: 0,
            },
            stdout: LineReader::new(BufReader::new(stdout), MAX_LINE_BYTES),
        })
    }

    /// Sends `line` (without a newline) to the program's stdin; never waits: what the pipe
    /// does not take at once is written while [`Running::next_line`] waits.
    pub(crate) fn send(&mut self, line: String) -> Result<(), Unsent> {
        self.stdin.send(line)
    }

    /// The program's next line on stdout; `None` once it has closed its stdout (it exited).
    /// Writes waiting lines to its stdin meanwhile. Cancel safe.
    pub(crate) async fn next_line(&mut self) -> Option<Line> {
        loop {
            tokio::select! {
                biased;
                line = self.stdout.next_line() => {
                    return match line {
                        Ok(line) => line,
                        Err(error) => {
                            warn!(error = %error, "cannot read the program's stdout");
                            None
                        }
                    };
                }
                () = self.stdin.flush(), if self.stdin.is_waiting() => {}
            }
        }
    }

    /// Writes the lines still waiting, closes the program's stdin, gives it
    /// [`EXIT_GRACE`] to exit, and kills it if it has not (also when its stdin does not
    /// take the waiting lines within [`EXIT_GRACE`]).
    pub(crate) async fn stop(mut self) {
        let flushed = tokio::time::timeout(EXIT_GRACE, self.stdin.flush())
            .await
            .is_ok();
        self.stdin.close();
        let exited = if flushed {
            tokio::time::timeout(EXIT_GRACE, self.child.wait())
                .await
                .ok()
                .and_then(Result::ok)
        } else {
            None
        };
        match exited {
            Some(status) => debug!(%status, "program exited"),
            None => {
                info!("program still running {EXIT_GRACE:?} after its stdin closed: killing it");
                let _ = self.child.kill().await;
            }
        }
    }

    /// How the program exited, if it has (without waiting).
    pub(crate) fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}
