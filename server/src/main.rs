//! `hetsim`: simulate parallel applications on heterogeneous hardware.

mod charts;
mod cli;
mod commands;
mod execute;
mod http;
mod input;
mod limits;
mod measurements;
mod queue;
mod redact;
mod saxpy2;
mod storage;
mod table;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
