//! Standings figures as the benches print them in their Markdown tables.

use knobel_arena::league::standings::BotStanding;

/// A bot's score with its 95% interval: its loss rate (Schocken, Sjokken) or its net chips
/// per 100 rounds (Zokken).
pub fn score_cell(b: &BotStanding) -> String {
    match (b.loss_rate, b.chips_per_100_rounds) {
        (Some(l), _) => format!(
            "loss {:.1}% ({:.1}–{:.1})",
            100.0 * l.estimate,
            100.0 * l.low,
            100.0 * l.high
        ),
        (_, Some(c)) => format!(
            "{:+.1} chips/100 rounds ({:+.1}…{:+.1})",
            c.estimate, c.low, c.high
        ),
        _ => String::new(),
    }
}
