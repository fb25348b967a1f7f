//! `hetsim`: simulate parallel applications on heterogeneous hardware. This binary only
//! parses the command line ([`cli`]) and calls the library crates, one module per command
//! ([`commands`]): the engine and its models (hetsim-scripting), the service
//! (hetsim-service), its HTTP face (hetsim-web), the lab (hetsim-lab) and the charts
//! (hetsim-charts).

mod cli;
mod commands;
mod input;
mod progress;

use clap::Parser;

/// Counts each thread's allocations, so that a worker can hold each run to its memory budget
/// (`serve`/`worker --max-run-memory`) and fail the run, not the process. The allocations
/// themselves are mimalloc's: a million scripted processes hold millions of small objects,
/// and against glibc's malloc it cut the run's resident memory by 14 % and its time by 9 %
/// (docs/PERFORMANCE.md, issue 46).
#[global_allocator]
static ALLOCATOR: hetsim_scripting::memory::CountingAllocator<mimalloc::MiMalloc> =
    hetsim_scripting::memory::CountingAllocator(mimalloc::MiMalloc);

/// Runs the command of the process's arguments; prints the error, if any, to stderr.
fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    if !matches!(cli.command, cli::Command::Serve(_)) {
        end_quietly_on_a_closed_stdout();
    }
    match commands::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `hetsim … | head`: once the reader has gone, `println!` panics on the broken pipe. A
/// command-line tool ends there, as one killed by SIGPIPE would, without a panic message
/// (exit status 141, 128 + SIGPIPE, as shells report it). Not for `serve`, whose output is
/// logs that a closed terminal must not stop.
fn end_quietly_on_a_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}
