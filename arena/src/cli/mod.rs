//! The commands of `knobel` that talk to an arena over gRPC: `league`, `match`, and the
//! `demo`, which starts one.

pub mod demo;
pub mod league;
