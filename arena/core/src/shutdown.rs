//! The arena's shutdown signal: one `watch` of "shutting down" that `serve` turns true, held
//! by every task that must stop or stop taking work (the referee's abort, the lobby, the
//! instance heartbeat, the revocation watch, each Play connection).

use tokio::sync::watch;

/// Resolves once `shutdown` turns true (never, if its sender is gone: nothing will ask).
pub async fn requested(shutdown: &mut watch::Receiver<bool>) {
    if shutdown.wait_for(|&down| down).await.is_err() {
        std::future::pending::<()>().await;
    }
}
