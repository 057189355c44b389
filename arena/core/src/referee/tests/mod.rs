//! The referee's tests: event delivery and penalties, each played through [`super::run_match`].

mod event_delivery;
mod penalties;
