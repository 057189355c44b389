//! The smallest useful Rust bot: plays one Zokken match with a policy of its own.
//!
//! ```sh
//! KNOBEL_TOKEN=knb_... cargo run -p knobel-bots --example minimal
//! ```

use knobel_bots::{BotConfig, Game, run_bot};
use knobel_engine::{Action, Observation};

/// Raises or bets when it can, otherwise takes the first legal action.
fn eager(_seen: &Observation, legal: &[Action]) -> Action {
    legal
        .iter()
        .copied()
        .find(|a| matches!(a, Action::Raise | Action::Bet))
        .unwrap_or(legal[0])
}

#[tokio::main]
async fn main() -> Result<(), knobel_bots::BotError> {
    let token = std::env::var("KNOBEL_TOKEN").expect("set KNOBEL_TOKEN to the bot's token");
    let server =
        std::env::var("KNOBEL_SERVER").unwrap_or_else(|_| "http://127.0.0.1:50051".to_owned());
    let mut config = BotConfig::new(server, token, "minimal", [Game::Zokken]);
    config.max_matches = Some(1);
    let report = run_bot(config, eager).await?;
    for summary in &report.matches {
        println!("{summary}");
    }
    Ok(())
}
