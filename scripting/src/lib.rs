//! hetsim-scripting: application models and computational models written in Rhai.
//!
//! - [`system`]: system models (TOML/JSON) resolved against the catalog and model files;
//! - [`computational`]: `compute_time` / `transfer_time` models with attributes as constants;
//! - [`process`] and [`sim`]: an application script as an engine process, and its `sim` API;
//! - [`kernels`]: analysed GPU kernels in system models, and the `kernel_params` function;
//! - [`stack`]: the one coroutine stack the processes of a run take turns on;
//! - [`sandbox`]: the limits every script runs under;
//! - [`schema`]: the JSON Schema of system files, and the check against it;
//! - [`run`]: one simulation run, end to end.

pub mod computational;
mod errors;
pub mod functions;
pub mod kernels;
pub mod process;
pub mod run;
pub mod sandbox;
pub mod schema;
pub mod sim;
pub mod stack;
pub mod system;

pub use run::{
    check_app, check_labels, check_process_count, default_labels, labels_over_defaults, run, RunOptions,
    RunReport, Variable, RESERVED_NAMES,
};
pub use sandbox::{CancelFlag, Limits, CANCELLED};
pub use system::{load as load_system, System, SystemFile};
