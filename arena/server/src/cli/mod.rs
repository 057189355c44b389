//! The commands of `knobel` that talk to an arena over gRPC: `league`, `match`, `health`,
//! and the `demo`, which starts one.

pub mod demo;
pub mod fair_play;
pub mod health;
pub mod league;
pub mod play;
