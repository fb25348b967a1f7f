//! `hetsim`'s command line, HTTP service, storage, queues and workers. The binary
//! (`main.rs`) only parses the command line and calls [`main`]; the crate is a library so that
//! its tests can build it with the `fault-injection` feature.

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
mod run;
mod saxpy2;
mod storage;
mod table;

use clap::Parser;

/// Runs the command of the process's arguments; prints the error, if any, to stderr.
pub fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
