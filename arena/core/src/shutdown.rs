//! The arena's shutdown signal: one `watch` of "shutting down" that `serve` turns true, held
//! by every task that must stop or stop taking work (the referee's abort, the lobby, the
//! instance heartbeat, the revocation watch, each Play connection), and work on a blocking
//! thread that the runtime's shutdown may cancel ([`on_blocking_thread`]).

use tokio::sync::watch;

/// Resolves once `shutdown` turns true (never, if its sender is gone: nothing will ask).
pub async fn requested(shutdown: &mut watch::Receiver<bool>) {
    if shutdown.wait_for(|&down| down).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Runs `work` on a blocking thread, off the runtime's workers. A panic in it goes on in
/// the caller. When the runtime shuts down before `work` ran, its task is cancelled and
/// this never resolves (it is dropped with the runtime), rather than panicking.
pub async fn on_blocking_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done,
        Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
        Err(_) => std::future::pending().await,
    }
}
