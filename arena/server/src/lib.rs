//! The Knobel arena: referees matches between bots connected over gRPC, runs leagues and
//! keeps results in a store (SQLite by default, PostgreSQL on request).
#![warn(missing_docs)]

pub mod auth;
pub mod cluster;
pub mod config;
pub mod match_text;
pub mod metrics;
pub mod net;
pub mod page_token;
pub mod server;
pub mod settings;
pub use knobel_core::{disclosure, instance, league, lobby, observer, referee, shutdown, streams};
pub use knobel_store as store;
pub mod web;
mod wire;
