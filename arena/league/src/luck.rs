//! A league match's luck-adjusted scores ([`knobel_engine::match_luck`], docs/luck.md),
//! computed once, when its result is recorded, and stored with its seats' results
//! (`match_seats.adjusted_score`); a league stores the [`knobel_engine::LUCK_VERSION`] they
//! are computed with, and its scores are read only while that is the arena's.
//!
//! A match with a forfeit has none: a forfeit decides the match whatever the dice, and the
//! value functions do not model a seat that has left. Neither has a match whose luck cannot
//! be computed ([`knobel_engine::LuckError`]): its result is recorded without them, with a
//! warning. Pick-up and practice matches are not computed (nothing reads them, and the
//! terms cost up to tens of milliseconds of CPU per match).

use knobel_engine::{LogEntry, LuckError, MatchLog};

/// Why a match has no luck-adjusted scores.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoAdjustedScores {
    /// A seat forfeited.
    #[error("a seat forfeited: a forfeit decides the match whatever the dice")]
    Forfeit,
    /// The engine cannot compute the luck of the log.
    #[error(transparent)]
    Luck(#[from] LuckError),
    /// A score is not a finite number.
    #[error("the adjusted score of seat {seat} is not a finite number")]
    NotFinite {
        /// The seat.
        seat: usize,
    },
}

/// Every seat's luck-adjusted score of the finished match `log`, in seat order (the
/// [`knobel_engine::LuckScale::Loss`] scale of the standings' paired difference). Costs up
/// to tens of milliseconds: in async code, run it on a blocking thread.
pub fn adjusted_scores(log: &MatchLog) -> Result<Vec<f64>, NoAdjustedScores> {
    if log
        .entries
        .iter()
        .any(|entry| matches!(entry, LogEntry::Forfeit { .. }))
    {
        return Err(NoAdjustedScores::Forfeit);
    }
    let adjusted = knobel_engine::match_luck(log)?.adjusted;
    match adjusted.iter().position(|score| !score.is_finite()) {
        Some(seat) => Err(NoAdjustedScores::NotFinite { seat }),
        None => Ok(adjusted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use knobel_engine::{ForfeitReason, Match, Rules, Seat};

    /// A Sjokken match of three timid players, played out with its log.
    fn played(forfeit: bool) -> MatchLog {
        let rules = Rules::preset("sjokken").expect("a preset");
        let mut game = Match::new_with_log(rules, 7, 3).expect("a match");
        if forfeit {
            game.forfeit(Seat(1), ForfeitReason::Disconnected)
                .expect("a seat can forfeit");
        }
        while game.outcome().is_none() {
            let seat = game.to_act().iter().next().expect("someone acts");
            let action = game.default_action(seat).expect("a default action");
            game.apply(seat, action).expect("the default is legal");
        }
        game.log().cloned().expect("a logged match")
    }

    #[test]
    fn a_played_match_has_the_engines_adjusted_scores() {
        let log = played(false);
        let scores = adjusted_scores(&log).expect("scores");
        assert_eq!(scores, knobel_engine::match_luck(&log).unwrap().adjusted);
        assert_eq!(scores.len(), 3);
    }

    #[test]
    fn a_forfeit_or_an_unfinished_log_has_none() {
        assert_eq!(
            adjusted_scores(&played(true)),
            Err(NoAdjustedScores::Forfeit)
        );
        let mut log = played(false);
        log.entries.pop();
        assert!(matches!(
            adjusted_scores(&log),
            Err(NoAdjustedScores::Luck(LuckError::NotOver))
        ));
    }
}
