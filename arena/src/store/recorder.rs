//! Group commit for match records: the writes of matches that start and end while the
//! previous transaction is being committed go into the next one together.

use tokio::sync::{mpsc, oneshot};

use super::{MatchWrite, Store, StoreError};

/// The most writes committed in one transaction.
pub const MAX_BATCH: usize = 64;

/// How many writes may wait for the recorder before their senders wait too.
const QUEUE: usize = 1_024;

/// A write waiting for the recorder, and where its result goes.
struct Job {
    write: MatchWrite,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// Writes match records through one task that commits whatever has queued up in one
/// transaction ([`Store::write_matches`]), so that a busy arena pays for one commit per
/// batch instead of one per write. A lone write is committed at once: nothing waits for a
/// batch to fill.
///
/// Cheap to clone; the task ends when the last clone is dropped. Each
/// [`write`](Recorder::write) returns only once its write is committed (or refused), so a
/// caller that has its answer knows the record is in the database.
#[derive(Clone, Debug)]
pub struct Recorder {
    queue: mpsc::Sender<Job>,
}

impl Recorder {
    /// Starts the recorder's task on the current tokio runtime.
    pub fn spawn(store: Store) -> Recorder {
        let (queue, jobs) = mpsc::channel(QUEUE);
        tokio::spawn(run(store, jobs));
        Recorder { queue }
    }

    /// Records `write`, committed together with whatever other writes are waiting; gives
    /// what [`Store::write_matches`] gives for it, or [`StoreError::RecorderStopped`] if the
    /// task is gone (its runtime is shutting down).
    pub async fn write(&self, write: MatchWrite) -> Result<(), StoreError> {
        let (done, result) = oneshot::channel();
        if self.queue.send(Job { write, done }).await.is_err() {
            return Err(StoreError::RecorderStopped);
        }
        result.await.unwrap_or(Err(StoreError::RecorderStopped))
    }
}

/// The recorder's task: takes every write waiting (up to [`MAX_BATCH`]), commits them
/// together and hands each its result, until every [`Recorder`] is dropped.
async fn run(store: Store, mut jobs: mpsc::Receiver<Job>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while jobs.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let (writes, dones): (Vec<_>, Vec<_>) =
            batch.drain(..).map(|job| (job.write, job.done)).unzip();
        let results = store.write_matches(&writes).await;
        for (done, result) in dones.into_iter().zip(results) {
            // A caller that stopped waiting does not need its result.
            let _ = done.send(result);
        }
    }
}
