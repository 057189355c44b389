//! The benches' field of known strength.

use knobel_engine::policy::HEURISTIC_LADDER;

/// Six built-in players of known, distinct strength, strongest first: the heuristic, its
/// noisier versions ([`HEURISTIC_LADDER`]) and random. Their names are valid bot names.
pub const LADDER: [&str; 6] = [
    "heuristic",
    HEURISTIC_LADDER[0].0,
    HEURISTIC_LADDER[1].0,
    HEURISTIC_LADDER[2].0,
    HEURISTIC_LADDER[3].0,
    "random",
];
