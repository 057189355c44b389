//! The Knobel arena's runtime, below every adapter (gRPC, web, metrics, CLI: the crate
//! `knobel-arena`): the referee that plays one match with bots under time limits
//! ([`referee`]); the lobby that seats waiting bots and runs each match from its recorded
//! start to its recorded end ([`lobby`]); leagues at run time, their scheduler and service
//! ([`league`]); each bot's open streams ([`streams`]); this arena's lease on its matches
//! ([`instance`]); what an ended match may show ([`disclosure`]); the shutdown signal every task holds ([`shutdown`]). It reports through
//! [`observer::RuntimeObserver`], which the arena's metrics implement, and returns domain
//! errors, never wire statuses.
#![warn(missing_docs)]

pub mod disclosure;
pub mod instance;
pub mod league;
pub mod lobby;
pub mod observer;
pub mod referee;
pub mod shutdown;
pub use knobel_store as store;
pub mod streams;
