//! Group commit for match records: the writes of matches that start and end while the
//! previous transaction is being committed go into the next one together. Writes that
//! cannot be committed because the database is unavailable are kept and retried, with
//! backoff, until it is back.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tracing::{debug, error, info, warn};

use super::observer::{StoreObserver, StoreOperation};
use super::{MatchWrite, Store, StoreError};

/// The most writes committed in one transaction.
pub const MAX_BATCH: usize = 64;

/// How many writes the retry backlog holds before the arena stops starting matches: at
/// this bound [`Recorder::is_full`] is true and the lobby starts no new match (its bots keep
/// waiting) until the backlog has shrunk, so that results are never dropped for want of
/// room. Matches already running still add their results (at most one each), so the
/// backlog can exceed the bound by the number of running matches.
pub const MAX_PENDING: usize = 10_000;

/// The first pause before a write is retried; it doubles with each failed retry, up to
/// [`MAX_BACKOFF`].
pub const MIN_BACKOFF: Duration = Duration::from_millis(100);

/// The longest pause between retries.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// How many writes may wait for the recorder before their senders wait too.
const QUEUE: usize = 1_024;

/// A write waiting for the recorder, and where its result goes.
struct Job {
    write: MatchWrite,
    done: oneshot::Sender<Result<(), StoreError>>,
    /// Keep the write for a retry if the database is unavailable.
    keep: bool,
}

/// The retry backlog's door: where writes to retry go, and how many wait.
#[derive(Clone)]
struct Backlog {
    retries: mpsc::UnboundedSender<MatchWrite>,
    /// Writes in the retry backlog (queued or being retried).
    pending: Arc<AtomicUsize>,
    observer: Option<Arc<dyn StoreObserver>>,
}

impl Backlog {
    fn push(&self, write: MatchWrite) {
        let pending = self.pending.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(observer) = &self.observer {
            observer.pending_writes(pending);
        }
        if self.retries.send(write).is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// What became of a write given to [`Recorder::record`].
#[derive(Debug)]
pub enum Recorded {
    /// Committed.
    Written,
    /// The database is unavailable: the write is kept and retried until it is committed.
    Pending,
    /// Refused for what it found (e.g. the match is not running), or a fault that a retry
    /// would not mend: nothing was written.
    Refused(StoreError),
}

/// Writes match records through a task that commits whatever has queued up in one
/// transaction ([`Store::write_matches`]), so that a busy arena pays for one commit per
/// batch instead of one per write. A lone write is committed at once: nothing waits for a
/// batch to fill. On PostgreSQL several such tasks ([`Store::writers`]) commit at once on
/// connections of their own (the server syncs their commits together); the writes of one
/// match always go to the same task, in order. SQLite has one writer connection: one task.
///
/// [`Recorder::write`] tries once and says what came of it; [`Recorder::record`] keeps a
/// write that failed because the database is unavailable in a backlog, retried by a second
/// task with backoff ([`MIN_BACKOFF`] doubling to [`MAX_BACKOFF`]) until it is committed.
/// Retries are safe: the same finish or abort written twice is written once (see
/// [`Store::write_matches`]).
///
/// Cheap to clone; the tasks end when the last clone is dropped (a backlog still waiting
/// then is lost: see [`Recorder::drain`]).
#[derive(Clone)]
pub struct Recorder {
    /// One queue per writer task ([`Store::writers`]); a match's writes always take the
    /// same one, so that they are committed in order.
    queues: Arc<[mpsc::Sender<Job>]>,
    backlog: Backlog,
    /// How long one write may wait for the recorder and its commit.
    timeout: Duration,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("pending", &self.pending())
            .finish_non_exhaustive()
    }
}

/// The operation a write is counted as.
fn operation(write: &MatchWrite) -> StoreOperation {
    match write {
        MatchWrite::Start(_) => StoreOperation::Start,
        MatchWrite::Finish(_) | MatchWrite::FinishLeague(..) => StoreOperation::Finish,
        MatchWrite::Abort(_) => StoreOperation::Abort,
    }
}

/// The match id of a write.
fn match_id(write: &MatchWrite) -> &str {
    match write {
        MatchWrite::Start(new) => &new.id,
        MatchWrite::Finish(finished) | MatchWrite::FinishLeague(finished, _) => &finished.id,
        MatchWrite::Abort(aborted) => &aborted.id,
    }
}

/// The writer task (of `writers`) that commits the writes of match `id`.
fn writer_of(id: &str, writers: usize) -> usize {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut hasher);
    (hasher.finish() % writers.max(1) as u64) as usize
}

impl Recorder {
    /// Starts the recorder's tasks on the current tokio runtime.
    pub fn spawn(store: Store) -> Recorder {
        Recorder::start(store, None)
    }

    /// Like [`Recorder::spawn`], reporting failed writes, the retry backlog and commits to
    /// `observer`.
    pub fn spawn_observed(store: Store, observer: impl StoreObserver) -> Recorder {
        Recorder::start(store, Some(Arc::new(observer)))
    }

    fn start(store: Store, observer: Option<Arc<dyn StoreObserver>>) -> Recorder {
        let (retries, backlog) = mpsc::unbounded_channel();
        let pending = Arc::new(AtomicUsize::new(0));
        // Waiting for the queue, then for the batch ahead and this one.
        let timeout = store.timeout().saturating_mul(3);
        let door = Backlog {
            retries,
            pending: pending.clone(),
            observer: observer.clone(),
        };
        let queues: Vec<mpsc::Sender<Job>> = (0..store.writers())
            .map(|_| {
                let (queue, jobs) = mpsc::channel(QUEUE);
                tokio::spawn(run(store.clone(), jobs, door.clone()));
                queue
            })
            .collect();
        tokio::spawn(retry(store, backlog, pending, observer));
        Recorder {
            queues: queues.into(),
            backlog: door,
            timeout,
        }
    }

    /// Records `write`, committed together with whatever other writes are waiting; gives
    /// what [`Store::write_matches`] gives for it, [`StoreError::Timeout`] if it was not
    /// confirmed within three times the store's timeout (it may still be committed), or
    /// [`StoreError::RecorderStopped`] if the task is gone (its runtime is shutting down).
    pub async fn write(&self, write: MatchWrite) -> Result<(), StoreError> {
        self.submit(write, false).await
    }

    /// Records `write` like [`Recorder::write`]; if the database is unavailable (or the
    /// write is not confirmed in time), keeps it and retries it until it is committed
    /// ([`Recorded::Pending`]).
    pub async fn record(&self, write: MatchWrite) -> Recorded {
        let id = match_id(&write).to_owned();
        let result = matches!(write, MatchWrite::Finish(_) | MatchWrite::FinishLeague(..));
        match self.submit(write, true).await {
            Ok(()) => Recorded::Written,
            Err(error) if error.is_unavailable() => {
                warn!(
                    match_id = id,
                    error = %error,
                    "the store is unavailable: the match record is kept and retried"
                );
                Recorded::Pending
            }
            Err(error) => {
                if result && matches!(error, StoreError::MatchNotRunning { .. }) {
                    self.stale_result_refused();
                }
                Recorded::Refused(error)
            }
        }
    }

    /// Queues `write` for the recorder's task and waits for its result (at most
    /// `self.timeout`). With `keep`, a write the database cannot take is put in the retry
    /// backlog (by the task, or here if the task is gone).
    async fn submit(&self, write: MatchWrite, keep: bool) -> Result<(), StoreError> {
        let (done, result) = oneshot::channel();
        let queue = &self.queues[writer_of(match_id(&write), self.queues.len())];
        let job = async {
            if let Err(refused) = queue.send(Job { write, done, keep }).await {
                if keep {
                    self.backlog.push(refused.0.write);
                }
                return Err(StoreError::RecorderStopped);
            }
            result.await.unwrap_or(Err(StoreError::RecorderStopped))
        };
        super::timed(self.timeout, job).await
    }

    /// Counts the refused result of a match that is no longer running (the caller, given
    /// [`Recorded::Refused`], logs it).
    fn stale_result_refused(&self) {
        if let Some(observer) = &self.backlog.observer {
            observer.stale_result_refused();
        }
    }

    /// Puts `write` in the retry backlog without trying it now.
    pub fn retry_later(&self, write: MatchWrite) {
        self.backlog.push(write);
    }

    /// Writes in the retry backlog.
    pub fn pending(&self) -> usize {
        self.backlog.pending.load(Ordering::SeqCst)
    }

    /// Whether the backlog has reached [`MAX_PENDING`]: no new match should start.
    pub fn is_full(&self) -> bool {
        self.pending() >= MAX_PENDING
    }

    /// Waits until the retry backlog is empty, at most `limit`; gives how many writes are
    /// still in it (lost if the process exits now).
    pub async fn drain(&self, limit: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + limit;
        while self.pending() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.pending()
    }
}

/// A writer task: takes every write waiting in its queue (up to [`MAX_BATCH`]), commits
/// them together and hands each its result, until every [`Recorder`] is dropped.
async fn run(store: Store, mut jobs: mpsc::Receiver<Job>, backlog: Backlog) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while jobs.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let (writes, rest): (Vec<_>, Vec<_>) = batch
            .drain(..)
            .map(|job| (job.write, (job.done, job.keep)))
            .unzip();
        let started = std::time::Instant::now();
        let results = store.write_matches(&writes).await;
        if let Some(observer) = &backlog.observer {
            let unavailable = results
                .iter()
                .any(|r| r.as_ref().is_err_and(StoreError::is_unavailable));
            observer.committed(!unavailable, started.elapsed());
        }
        for ((write, (done, keep)), result) in writes.into_iter().zip(rest).zip(results) {
            if let Err(error) = &result
                && error.is_unavailable()
            {
                if let Some(observer) = &backlog.observer {
                    observer.failed(operation(&write));
                }
                if keep {
                    backlog.push(write);
                }
            }
            // A caller that stopped waiting does not need its result.
            let _ = done.send(result);
        }
    }
}

/// The retry task: writes the backlog, oldest first, until it is committed. While the
/// database stays unavailable it tries one write at a time, pausing [`MIN_BACKOFF`]
/// doubling to [`MAX_BACKOFF`] between tries; once a write goes through, the rest follows
/// in batches.
async fn retry(
    store: Store,
    mut incoming: mpsc::UnboundedReceiver<MatchWrite>,
    pending: Arc<AtomicUsize>,
    observer: Option<Arc<dyn StoreObserver>>,
) {
    let mut backlog: VecDeque<MatchWrite> = VecDeque::new();
    let mut delay = MIN_BACKOFF;
    let mut failing = true;
    loop {
        if backlog.is_empty() {
            match incoming.recv().await {
                Some(write) => backlog.push_back(write),
                None => return,
            }
            // A write comes here because it has just failed.
            failing = true;
        }
        while let Ok(write) = incoming.try_recv() {
            backlog.push_back(write);
        }
        if failing {
            tokio::time::sleep(delay).await;
        }
        let take = if failing {
            1
        } else {
            MAX_BATCH.min(backlog.len())
        };
        let batch: Vec<MatchWrite> = backlog.drain(..take).collect();
        let results = store.write_matches(&batch).await;
        let kept: Vec<(MatchWrite, StoreError)> = batch
            .into_iter()
            .zip(results)
            .filter_map(|(write, result)| retried(write, result, observer.as_deref()))
            .collect();
        if kept.is_empty() {
            delay = MIN_BACKOFF;
            failing = false;
        } else {
            let (_, error) = &kept[0];
            warn!(error = %error, pending = backlog.len() + kept.len(), retry_in_ms = delay.as_millis() as u64, "the store is still unavailable");
            delay = (delay * 2).min(MAX_BACKOFF);
            failing = true;
        }
        let left = kept.len();
        for (write, _) in kept.into_iter().rev() {
            backlog.push_front(write);
        }
        let done = take - left;
        let now = pending.fetch_sub(done, Ordering::SeqCst) - done;
        if let Some(observer) = &observer {
            observer.pending_writes(now);
        }
    }
}

/// What became of a kept write retried: logged; the write and its error back if the store is
/// still unavailable (counted as a failed `observer` operation), to keep it for later.
fn retried(
    write: MatchWrite,
    result: Result<(), StoreError>,
    observer: Option<&dyn StoreObserver>,
) -> Option<(MatchWrite, StoreError)> {
    let id = match_id(&write);
    match result {
        Ok(()) => info!(
            match_id = id,
            "a match record kept while the store was unavailable is written"
        ),
        Err(error) if error.is_unavailable() => {
            if let Some(observer) = observer {
                observer.failed(operation(&write));
            }
            return Some((write, error));
        }
        // An abort with nothing to abort: the start it undoes was never written, or the
        // match is over already.
        Err(StoreError::MatchNotRunning { .. }) if matches!(write, MatchWrite::Abort(_)) => {
            debug!(
                match_id = id,
                "a kept abort found its match not running: nothing to do"
            );
        }
        Err(StoreError::MatchNotRunning { .. }) => {
            warn!(
                match_id = id,
                "a match result kept while the store was unavailable is refused: the match is no longer running (another arena aborted it after this arena's lease ran out)"
            );
            if let Some(observer) = observer {
                observer.stale_result_refused();
            }
        }
        Err(error) => {
            error!(match_id = id, error = %error, "a match record kept while the store was unavailable cannot be written: it is dropped")
        }
    }
    None
}
