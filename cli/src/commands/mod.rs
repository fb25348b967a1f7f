//! One module per `hetsim` command.

mod calibrate;
mod client;
mod components;
mod kernel;
mod kernel_input;
mod kernel_predict;
mod local_sweep;
mod model;
mod replay;
mod run;
mod serve;
mod token;
mod traces;
mod validate;

use anyhow::Result;

use crate::cli::{Cli, Command};

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) if local_sweep::asked(&args) => local_sweep::run(&args),
        Command::Run(args) => run::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Model(args) => model::run(args),
        Command::Components(args) => components::run(args),
        Command::Calibrate(command) => calibrate::run(command),
        Command::Kernel(command) => kernel::run(command),
        Command::Validate(args) => validate::run(args),
        Command::Serve(args) => runtime()?.block_on(serve::serve(args)),
        Command::Worker(args) => runtime()?.block_on(serve::worker(args)),
        Command::Submit(args) => runtime()?.block_on(client::submit(args, false)),
        Command::Sweep(args) => runtime()?.block_on(client::submit(args, true)),
        Command::Results(args) => runtime()?.block_on(client::results(args)),
        Command::Cancel(args) => runtime()?.block_on(client::cancel(args)),
        Command::Delete(args) => runtime()?.block_on(client::delete(args)),
        Command::Catalog(command) => runtime()?.block_on(client::catalog(command)),
        Command::Traces(command) => runtime()?.block_on(traces::run(command)),
        Command::Token(command) => runtime()?.block_on(token::run(command)),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

/// Prints `value` as pretty JSON on standard output.
fn print_json(value: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
