//! Numbers, intervals and times as the pages show them.

use crate::league::confidence::{Bounds, MIN_OBSERVATIONS};
use crate::league::standings::Interval;

/// `x` with two decimals ("–" for not a number).
pub(super) fn num(x: f64) -> String {
    if x.is_nan() {
        "–".to_owned()
    } else {
        format!("{x:.2}")
    }
}

/// A share as a percentage with its interval: "12.5% (8.1–17.9)".
pub(super) fn percent(i: Interval) -> String {
    if i.estimate.is_nan() {
        return "–".to_owned();
    }
    format!(
        "{:.1}% ({:.1}–{:.1})",
        100.0 * i.estimate,
        100.0 * i.low,
        100.0 * i.high
    )
}

/// A signed estimate with its interval: "+12.3 (+1.0…+23.6)"; an unbounded end is "∞".
pub(super) fn signed(i: Interval, scale: f64) -> String {
    if i.estimate.is_nan() {
        return "–".to_owned();
    }
    format!(
        "{:+.1} ({}…{})",
        scale * i.estimate,
        end(i.low, scale),
        end(i.high, scale)
    )
}

/// A range without an estimate: "+1.0…+23.6"; an unbounded end is "∞". A confidence
/// sequence unbounded at both ends has drawn nothing yet: "none before 16 sets".
pub(super) fn bounds(b: Bounds, scale: f64) -> String {
    if b.low == f64::NEG_INFINITY && b.high == f64::INFINITY {
        return format!("none before {MIN_OBSERVATIONS} sets");
    }
    format!("{}…{}", end(b.low, scale), end(b.high, scale))
}

/// A signed number, one decimal ("–" for not a number).
pub(super) fn signed_number(x: f64, scale: f64) -> String {
    if x.is_nan() {
        "–".to_owned()
    } else {
        format!("{:+.1}", scale * x)
    }
}

/// One end of an interval, scaled: "+1.0", or "+∞", "−∞".
fn end(x: f64, scale: f64) -> String {
    if x.is_infinite() {
        if x > 0.0 {
            "+∞".to_owned()
        } else {
            "−∞".to_owned()
        }
    } else {
        format!("{:+.1}", scale * x)
    }
}

/// Unix milliseconds as "2026-12-02 13:48:47 UTC" (a time beyond the calendar's range, which
/// no stored time is, as its milliseconds).
pub(super) fn time(unix_ms: i64) -> String {
    match time::OffsetDateTime::from_unix_timestamp(unix_ms.div_euclid(1000)) {
        Ok(t) => format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        ),
        Err(_) => format!("{unix_ms} ms after 1970-01-01 UTC"),
    }
}
