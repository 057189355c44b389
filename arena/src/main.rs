//! `knobel`: the Knobel command line.

mod simulate;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// Knobel: a tournament arena for bots playing Schocken, Sjokken and Zokken.
#[derive(Parser, Debug)]
#[command(name = "knobel", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Play a league of the built-in policies in-process and print standings per game.
    Simulate(simulate::SimulateArgs),
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Simulate(args) => simulate::run(&args),
    }
}
