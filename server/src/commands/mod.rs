//! One module per `hetsim` command.

mod calibrate;
mod components;
mod model;
mod run;

use anyhow::Result;

use crate::cli::{Cli, Command};

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Model(args) => model::run(args),
        Command::Components(args) => components::run(args),
        Command::Calibrate(command) => calibrate::run(command),
    }
}

/// Prints `value` as pretty JSON on standard output.
fn print_json(value: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
