//! hetsim-scripting: application models and computational models written in Rhai.
//!
//! System models (the files, their schema, their resolution) are hetsim-system's; this crate
//! runs them:
//!
//! - [`computational`]: `compute_time` / `transfer_time` models with attributes as constants;
//! - [`process`] and [`sim`]: an application script as an engine process, and its `sim` API;
//! - [`resumable`]: a script that keeps to loops around `sim` calls as a state machine, with no
//!   stack of its own;
//! - [`kernels`]: the `kernel_params` function over a system's analysed GPU kernels;
//! - [`stack`]: the one coroutine stack the processes of a run take turns on;
//! - [`sandbox`]: the limits every script runs under, and [`memory`] its run's memory budget;
//! - [`inputs`]: the variables an app reads, required or not, and the one check of a
//!   run's variables against them;
//! - [`nccl`]: a collective's NCCL algorithm, protocol and costs from the system's fabric;
//! - [`run`]: one simulation run, end to end;
//! - [`report`]: its report by level of detail (summary, processes, computes), JSON or CSV;
//! - [`ScriptError`]: the error of this crate's functions, with the script's line and column
//!   where known.

pub mod activities;
pub mod computational;
mod errors;
pub mod functions;
pub mod inputs;
pub mod kernels;
pub mod memory;
pub mod nccl;
#[cfg(test)]
mod plan_reuse;
pub mod process;
pub mod report;
pub mod resumable;
pub mod run;
pub mod sandbox;
pub mod sim;
pub mod stack;
mod typos;

pub use errors::ScriptError;
pub use inputs::{
    app_inputs, check_variables, declared_defaults, with_declared_defaults, AppInput, VariableError,
};
pub use report::Detail;
pub use run::{
    check_app, check_labels, check_process_count, default_labels, labels_over_defaults, platform, run,
    run_with_kernels, runs_on_machine, Interpreter, RunOptions, RunReport,
};
pub use sandbox::{CancelFlag, Limits, CANCELLED};
