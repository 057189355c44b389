//! Waiting in the end-to-end tests: [`poll_until`] looks at a condition again and again
//! until it holds, or fails the test once a time bound has passed, saying what it waited
//! for, how long, and what it saw last. The tests wait through it (or [`poll_every`])
//! rather than with deadline loops of their own, and never by sleeping a fixed time.
//!
//! A check is a closure returning a future (`|| async { ... }`) that gives one of
//! - `bool`: whether the condition holds;
//! - `Option<T>`: `Some(value)` once it holds, the value returned;
//! - `Result<T, E>` with `E: Display`: `Ok(value)` once it holds; `Err(seen)` while not,
//!   `seen` what it found (shown if the wait times out), so `?` in a check means "not yet".
//!
//! The future may borrow what the closure borrows, but not mutably: a check that needs a
//! client's `&mut self` clones the client for each look (tonic clients are cheap handles),
//! and one that keeps state between looks changes it in the closure's body, before its
//! `async` block. (Async closures, `AsyncFnMut`, would lend mutable borrows, but their
//! futures cannot be proven `Send` in a spawned task.)
//!
//! ```no_run
//! # async fn example(arena: &knobel_e2e::Arena) {
//! use std::time::Duration;
//! use knobel_e2e::poll_until;
//!
//! let matches = poll_until(Duration::from_secs(30), "two matches are stored", || async {
//!     let matches = arena.matches().await;
//!     if matches.len() >= 2 { Ok(matches) } else { Err(format!("{} stored", matches.len())) }
//! })
//! .await;
//! # }
//! ```

use std::fmt::Display;
use std::time::Duration;

use tokio::time::Instant;

/// The pause after [`poll_until`]'s first look; each next pause is twice the one before, up
/// to [`MAX_PAUSE`]: a state that comes at once is seen at once, one that takes minutes is
/// not asked for more than five times a second.
pub const FIRST_PAUSE: Duration = Duration::from_millis(10);

/// The longest pause between two looks of [`poll_until`].
pub const MAX_PAUSE: Duration = Duration::from_millis(200);

/// What one look of a wait found: the condition holds (with a value), or not yet (with
/// what was seen, if the check says). See the [module](self) for the three kinds.
pub trait Outcome {
    /// What the wait gives once the condition holds.
    type Value;

    /// `Ok(value)` if the condition holds, else `Err` with what was seen, if anything.
    fn ready(self) -> Result<Self::Value, Option<String>>;
}

impl Outcome for bool {
    type Value = ();

    fn ready(self) -> Result<(), Option<String>> {
        if self { Ok(()) } else { Err(None) }
    }
}

impl<T> Outcome for Option<T> {
    type Value = T;

    fn ready(self) -> Result<T, Option<String>> {
        self.ok_or(None)
    }
}

impl<T, E: Display> Outcome for Result<T, E> {
    type Value = T;

    fn ready(self) -> Result<T, Option<String>> {
        self.map_err(|seen| Some(seen.to_string()))
    }
}

/// Runs `check` until it says its condition holds and gives what it gave (a `bool` check
/// gives `()`), looking again after [`FIRST_PAUSE`], then after pauses twice as long each
/// time up to [`MAX_PAUSE`]. Once `within` has passed since the start (the last look is at
/// the bound), panics: "timed out after {within:?} waiting until {what} ...", with what the
/// last look saw if the check says (`Err(seen)`). Phrase `what` to follow "until": "the
/// league has finished".
///
/// A look is not cut short: a check that hangs holds the wait up (bound the check itself
/// with a timeout where it can hang).
pub async fn poll_until<F, Fut>(
    within: Duration,
    what: &str,
    check: F,
) -> <Fut::Output as Outcome>::Value
where
    F: FnMut() -> Fut,
    Fut: Future,
    Fut::Output: Outcome,
{
    poll(Pauses::Growing(FIRST_PAUSE), within, what, check).await
}

/// [`poll_until`], pausing `every` between two looks: for a state that may last only a
/// moment (a match running, a server shutting down), looked for often from the start, or
/// for a check too heavy to run five times a second.
pub async fn poll_every<F, Fut>(
    every: Duration,
    within: Duration,
    what: &str,
    check: F,
) -> <Fut::Output as Outcome>::Value
where
    F: FnMut() -> Fut,
    Fut: Future,
    Fut::Output: Outcome,
{
    poll(Pauses::Fixed(every), within, what, check).await
}

/// The pauses between two looks.
#[derive(Clone, Copy, Debug)]
enum Pauses {
    /// This one next, then twice as long, up to [`MAX_PAUSE`].
    Growing(Duration),
    /// Always this one.
    Fixed(Duration),
}

async fn poll<F, Fut>(
    mut pauses: Pauses,
    within: Duration,
    what: &str,
    mut check: F,
) -> <Fut::Output as Outcome>::Value
where
    F: FnMut() -> Fut,
    Fut: Future,
    Fut::Output: Outcome,
{
    let deadline = Instant::now() + within;
    let mut looks = 0u64;
    loop {
        looks += 1;
        let seen = match check().await.ready() {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        let now = Instant::now();
        if now >= deadline {
            let looked = if looks == 1 {
                "looked once".to_owned()
            } else {
                format!("looked {looks} times")
            };
            match seen {
                Some(seen) => panic!(
                    "timed out after {within:?} waiting until {what} ({looked}); last seen: {seen}"
                ),
                None => panic!("timed out after {within:?} waiting until {what} ({looked})"),
            }
        }
        let pause = match pauses {
            Pauses::Growing(pause) => {
                pauses = Pauses::Growing((pause * 2).min(MAX_PAUSE));
                pause
            }
            Pauses::Fixed(pause) => pause,
        };
        // The last look comes at the bound, not up to a pause after it.
        tokio::time::sleep(pause.min(deadline - now)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::time::Instant;

    use super::{poll_every, poll_until};

    #[tokio::test]
    async fn gives_the_value_as_soon_as_it_is_there() {
        let start = Instant::now();
        let mut looks = 0;
        let value = poll_until(Duration::from_secs(60), "the third look", || {
            looks += 1;
            let look = looks;
            async move { (look == 3).then_some(look * 10) }
        })
        .await;
        assert_eq!(value, 30);
        assert_eq!(looks, 3, "no look after the value came");
        // Two pauses, 10 and 20 ms: far from the bound.
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[tokio::test]
    async fn a_condition_that_holds_is_looked_at_once() {
        let mut looks = 0;
        poll_until(Duration::from_secs(60), "true", || {
            looks += 1;
            async { true }
        })
        .await;
        assert_eq!(looks, 1);
    }

    #[tokio::test]
    async fn a_result_check_gives_its_ok_value() {
        let mut looks = 0;
        let value: &str = poll_until(Duration::from_secs(60), "ok", || {
            looks += 1;
            let look = looks;
            async move { if look < 2 { Err(look) } else { Ok("ready") } }
        })
        .await;
        assert_eq!(value, "ready");
    }

    #[tokio::test]
    #[should_panic(expected = "timed out after 100ms waiting until the moon is blue (looked")]
    async fn a_condition_that_never_holds_fails_after_the_bound() {
        poll_until(Duration::from_millis(100), "the moon is blue", || async {
            false
        })
        .await;
    }

    #[tokio::test]
    #[should_panic(
        expected = "timed out after 50ms waiting until three bots are connected (looked"
    )]
    async fn the_time_out_names_what_was_awaited() {
        let _: u8 = poll_until(
            Duration::from_millis(50),
            "three bots are connected",
            || async { None::<u8> },
        )
        .await;
    }

    #[tokio::test]
    #[should_panic(expected = "; last seen: 7 connected, 1 waiting")]
    async fn the_time_out_shows_what_the_last_look_saw() {
        poll_until(Duration::from_millis(50), "all are connected", || async {
            Err::<(), _>("7 connected, 1 waiting")
        })
        .await;
    }

    #[tokio::test]
    async fn the_last_look_is_at_the_bound() {
        // Pauses of 2 s and a bound of 250 ms: the second look comes at the bound, not a
        // pause later, and sees the condition hold then.
        let start = Instant::now();
        let bound = Duration::from_millis(250);
        let seen_at = poll_every(Duration::from_secs(2), bound, "the bound", || async {
            (start.elapsed() >= Duration::from_millis(240)).then(|| start.elapsed())
        })
        .await;
        assert!(seen_at >= Duration::from_millis(240), "{seen_at:?}");
        assert!(seen_at < Duration::from_millis(1500), "{seen_at:?}");
    }

    #[tokio::test]
    async fn poll_every_pauses_as_long_as_asked() {
        let mut at = Vec::new();
        poll_every(
            Duration::from_millis(40),
            Duration::from_secs(60),
            "four looks",
            || {
                at.push(Instant::now());
                let done = at.len() == 4;
                async move { done }
            },
        )
        .await;
        for pair in at.windows(2) {
            let pause = pair[1] - pair[0];
            assert!(pause >= Duration::from_millis(40), "{pause:?}");
        }
    }
}
