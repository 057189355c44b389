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
    joined(tokio::task::spawn_blocking(work).await).await
}

/// What a joined task gave: its value; its panic, raised again; or, if it was cancelled,
/// nothing ever.
async fn joined<T>(result: Result<T, tokio::task::JoinError>) -> T {
    match result {
        Ok(done) => done,
        Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
        Err(_) => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::joined;

    #[tokio::test]
    async fn a_joined_task_gives_its_value_its_panic_or_if_cancelled_nothing() {
        let done = tokio::spawn(async { 7 }).await;
        assert_eq!(joined(done).now_or_never(), Some(7));

        let cancelled = tokio::spawn(std::future::pending::<u8>());
        cancelled.abort();
        let cancelled = cancelled.await;
        assert!(cancelled.as_ref().is_err_and(|e| e.is_cancelled()));
        let mut waiting = Box::pin(joined(cancelled));
        assert_eq!((&mut waiting).now_or_never(), None);
        assert_eq!(
            waiting.now_or_never(),
            None,
            "still nothing when polled again"
        );

        let panicked = tokio::spawn(async { panic!("the work failed") }).await;
        let raised = std::panic::AssertUnwindSafe(joined::<()>(panicked))
            .catch_unwind()
            .await
            .expect_err("the panic is raised again");
        assert_eq!(raised.downcast_ref::<&str>(), Some(&"the work failed"));
    }
}
