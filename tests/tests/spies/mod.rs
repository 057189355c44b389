//! Spy bots for the fair-play tests (issue 22), written against the public contract only:
//! a bot token for Play, and the read-only RPCs that need no token.
//!
//! Each spy plays its league matches like any other bot (the engine's heuristic decides)
//! and, at the start of every round, writes down a prediction of every die of that round
//! it has not seen yet ([`play`]): the other seats' dice (under the cup, blind, or not
//! thrown yet) and its own throws to come. A prediction is *informed* when the spy's
//! intelligence gives one, and a guess (uniform over the six faces) otherwise. Once the
//! league has ended, the full logs give the truth and the [`ledger`] scores them.
//!
//! - [`seed_spy`]: seeds from served logs, the duplicate sets' shared seed, the set-seed
//!   chain run backwards, league seed 1.
//! - [`memory_spy`]: nothing but its own streams: it remembers every die it saw and
//!   recognises a duplicate set by its public opening throw-off.
//! - [`dice`]: the dice function of docs/rules.md A.8 and the old set-seed chain, from the
//!   documents; [`table`]: one match as a seat sees it.

pub mod dice;
pub mod ledger;
pub mod memory_spy;
pub mod play;
pub mod seed_spy;
pub mod table;
