//! What the store reports about itself, to whoever watches it (the metrics, in the arena):
//! calls that failed because the database was unavailable, by [`StoreOperation`], the
//! recorder's retry backlog and its commits. The store owns the trait so that it depends on
//! no observer; the arena's metrics implement it.

use std::time::Duration;

/// The paths of the arena that call the store, each counted on its own when the database is
/// unavailable (`knobel_store_errors_total{operation}`): the recorder's writes, the
/// instance's lease, the Arena RPCs (`standings`: GetStandings and ListLeagues), the league
/// scheduler (reading leagues, claims, releases, finishing a league), every Admin RPC, the
/// web viewer, the league metrics' refresh, and the watch for revoked bots.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StoreOperation {
    /// Recording a match's start.
    Start,
    /// Recording a match's result (a league match's too).
    Finish,
    /// Recording an aborted match.
    Abort,
    /// Renewing the instance's lease.
    Heartbeat,
    /// Aborting the matches of instances whose lease ran out.
    Sweep,
    /// Checking a bot's token.
    Auth,
    /// ListMatches.
    ListMatches,
    /// GetMatchLog and StreamMatchLog.
    GetMatchLog,
    /// GetStandings and ListLeagues.
    Standings,
    /// The league scheduler.
    LeagueScheduler,
    /// Every Admin RPC.
    Admin,
    /// The web viewer.
    Web,
    /// The league snapshot (the metrics' league series and the live pages read it).
    LeagueSnapshot,
    /// The watch for revoked bots.
    Revocations,
}

impl StoreOperation {
    /// Every operation, in the order the metrics list them.
    pub const ALL: [StoreOperation; 14] = [
        StoreOperation::Start,
        StoreOperation::Finish,
        StoreOperation::Abort,
        StoreOperation::Heartbeat,
        StoreOperation::Sweep,
        StoreOperation::Auth,
        StoreOperation::ListMatches,
        StoreOperation::GetMatchLog,
        StoreOperation::Standings,
        StoreOperation::LeagueScheduler,
        StoreOperation::Admin,
        StoreOperation::Web,
        StoreOperation::LeagueSnapshot,
        StoreOperation::Revocations,
    ];

    /// Its name: the `operation` label of `knobel_store_errors_total`.
    pub fn name(self) -> &'static str {
        match self {
            StoreOperation::Start => "start",
            StoreOperation::Finish => "finish",
            StoreOperation::Abort => "abort",
            StoreOperation::Heartbeat => "heartbeat",
            StoreOperation::Sweep => "sweep",
            StoreOperation::Auth => "auth",
            StoreOperation::ListMatches => "list_matches",
            StoreOperation::GetMatchLog => "get_match_log",
            StoreOperation::Standings => "standings",
            StoreOperation::LeagueScheduler => "league_scheduler",
            StoreOperation::Admin => "admin",
            StoreOperation::Web => "web",
            StoreOperation::LeagueSnapshot => "league_snapshot",
            StoreOperation::Revocations => "revocations",
        }
    }
}

/// Who watches the store: told of every call that failed because the database was
/// unavailable ([`Store::counting_errors`](super::Store::counting_errors)) and of the
/// recorder's backlog and commits ([`Recorder::spawn_observed`](super::Recorder::spawn_observed)).
/// Called on the store's paths: implementations must be quick and must not call the store.
pub trait StoreObserver: Send + Sync + 'static {
    /// A call of `operation` failed because the database was unavailable.
    fn failed(&self, operation: StoreOperation);
    /// `writes` match records wait in the recorder's retry backlog.
    fn pending_writes(&self, writes: usize);
    /// A batch of match records was committed (`ok`) or failed, after `took`.
    fn committed(&self, ok: bool, took: Duration);
    /// A match result was refused because its match was no longer running: another arena
    /// aborted it after this arena's lease ran out (the late result of an arena that was
    /// paused or cut off from the database). The match is played again; this result never
    /// counts.
    fn stale_result_refused(&self);
}

/// A shared observer observes as the one it shares (the runtime keeps its observer as an
/// `Arc<dyn ...>`).
impl<T: StoreObserver + ?Sized> StoreObserver for std::sync::Arc<T> {
    fn failed(&self, operation: StoreOperation) {
        (**self).failed(operation)
    }
    fn pending_writes(&self, writes: usize) {
        (**self).pending_writes(writes)
    }
    fn committed(&self, ok: bool, took: Duration) {
        (**self).committed(ok, took)
    }
    fn stale_result_refused(&self) {
        (**self).stale_result_refused()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_its_own_name() {
        let names: std::collections::HashSet<&str> =
            StoreOperation::ALL.iter().map(|op| op.name()).collect();
        assert_eq!(names.len(), StoreOperation::ALL.len());
    }
}
