//! A league match's luck-adjusted scores computed off the async executor: the scores
//! themselves are [`knobel_league::luck`]'s (docs/luck.md).

use knobel_engine::MatchLog;
pub use knobel_league::luck::{NoAdjustedScores, adjusted_scores};

/// [`adjusted_scores`] of match `match_id` on a blocking thread (never on the async
/// executor); `None`, with a warning unless it is a forfeit, where it has none.
pub async fn adjusted_scores_blocking(match_id: &str, log: MatchLog) -> Option<Vec<f64>> {
    match tokio::task::spawn_blocking(move || adjusted_scores(&log)).await {
        Ok(Ok(scores)) => Some(scores),
        Ok(Err(NoAdjustedScores::Forfeit)) => None,
        Ok(Err(error)) => {
            tracing::warn!(%match_id, %error, "no luck-adjusted scores for the match: recorded without them");
            None
        }
        Err(error) => {
            tracing::warn!(%match_id, %error, "computing the match's luck-adjusted scores failed: recorded without them");
            None
        }
    }
}
