//! Zokken policies. Skeleton: being written.

use crate::action::Action;
use crate::zokken::ZokkenObservation;

pub(super) fn timid(_o: &ZokkenObservation) -> Action {
    Action::Check
}

pub(super) fn heuristic(_o: &ZokkenObservation) -> Action {
    Action::Check
}
