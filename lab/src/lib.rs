//! hetsim-lab: hetsim's models against real hardware, the one home of calibration outside
//! the pure fits of hetsim-models. Measurement folders as bench/gpu writes them
//! ([`measurements`]), the saxpy2 benchmark's launches ([`saxpy2`]), a GPU's calibration for
//! the `gpu-queueing` model ([`gpu`]), links' and kernels' λ ([`calibrate`]), and the
//! validation report that predicts every measurement and scores it ([`validate`]).
//!
//! Benchmark sets of any kernels ([`benchset`]) are validated per kernel family, and their launches
//! calibrate the `gpu-queueing` model as saxpy2's do ([`set_samples`]) and TEG's four fitted
//! numbers ([`teg_fit`]).
//!
//! Modules, lowest first (each uses only those above it): [`files`], [`toml_lines`], [`launch`],
//! [`calibrate`], [`measurements`], [`app_run`], [`benchset`], [`saxpy2`], [`set_samples`], [`teg_fit`],
//! [`gpu`], [`validate`].

pub mod app_run;
pub mod benchset;
pub mod calibrate;
pub mod files;
pub mod gpu;
pub mod gpu_file;
pub mod l2_fit;
pub mod latency_fit;
pub mod launch;
pub mod measurements;
pub mod saxpy2;
pub mod set_samples;
pub mod teg_fit;
pub mod toml_lines;
pub mod validate;
