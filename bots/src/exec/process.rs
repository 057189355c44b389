//! The program behind the bridge: started with piped stdin, stdout and stderr; a task
//! writes its stdin, one reads its stdout in bounded lines, one copies its stderr to the
//! log.

use std::ffi::OsString;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
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
    /// Lines to its stdin; `None` once closed.
    stdin: Option<mpsc::Sender<String>>,
    /// Lines from its stdout; ends when the program closes its stdout (it exited).
    pub(crate) stdout: mpsc::Receiver<Line>,
    /// The writer task, to wait for its last lines when closing stdin.
    writer: tokio::task::JoinHandle<()>,
}

/// Why a line could not be queued for the program.
pub(crate) enum Unsent {
    /// Its stdin queue is full: it is not reading.
    Full,
    /// Its stdin is closed: it has exited (or closed it).
    Closed,
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

        let (to_program, mut queued) = mpsc::channel::<String>(STDIN_QUEUE_LINES);
        let writer = tokio::spawn(async move {
            let mut stdin = BufWriter::new(stdin);
            while let Some(line) = queued.recv().await {
                let mut line = line;
                line.push('\n');
                if stdin.write_all(line.as_bytes()).await.is_err() {
                    return;
                }
                // Write what is queued in one go; flush when nothing more is waiting.
                if queued.is_empty() && stdin.flush().await.is_err() {
                    return;
                }
            }
            let _ = stdin.shutdown().await;
        });

        let (lines_tx, lines) = mpsc::channel::<Line>(64);
        tokio::spawn(async move {
            let mut reader = LineReader::new(BufReader::new(stdout), MAX_LINE_BYTES);
            loop {
                match reader.next_line().await {
                    Ok(Some(line)) => {
                        if lines_tx.send(line).await.is_err() {
                            return;
                        }
                    }
                    Ok(None) => return,
                    Err(error) => {
                        warn!(pid, error = %error, "cannot read the program's stdout");
                        return;
                    }
                }
            }
        });

        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                info!(target: "program", pid, "{line}");
            }
        });

        Ok(Running {
            child,
            stdin: Some(to_program),
            stdout: lines,
            writer,
        })
    }

    /// Queues `line` (without a newline) for the program's stdin; never waits.
    pub(crate) fn send(&mut self, line: String) -> Result<(), Unsent> {
        let Some(stdin) = &self.stdin else {
            return Err(Unsent::Closed);
        };
        stdin.try_send(line).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => Unsent::Full,
            mpsc::error::TrySendError::Closed(_) => Unsent::Closed,
        })
    }

    /// Closes the program's stdin once its queued lines are written, gives it
    /// [`EXIT_GRACE`] to exit, and kills it if it has not.
    pub(crate) async fn stop(mut self) {
        self.stdin = None;
        let writer = tokio::time::timeout(EXIT_GRACE, &mut self.writer);
        let exited = match writer.await {
            Ok(_) => tokio::time::timeout(EXIT_GRACE, self.child.wait())
                .await
                .ok()
                .and_then(Result::ok),
            Err(_) => None,
        };
        match exited {
            Some(status) => debug!(%status, "program exited"),
            None => {
                info!("program still running {EXIT_GRACE:?} after its stdin closed: killing it");
                self.writer.abort();
                let _ = self.child.kill().await;
            }
        }
    }

    /// How the program exited, if it has (without waiting).
    pub(crate) fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}
