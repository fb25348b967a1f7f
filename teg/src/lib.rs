//! TEG (Lai & Seznec, seed 002): a cycle-approximate issue engine for GPU kernels, fed by
//! the kernel analyser's emulation (`hetsim-kernel`), which gives each warp's dynamic
//! instruction stream (TEG's authors took theirs from the Barra simulator).
//!
//! - [`arch`]: an architecture's parameters, from `teg/data/*.toml`;
//! - [`program`]: a kernel's instructions as the engine sees them;
//! - [`engine`]: one SM issuing its warps' streams cycle by cycle;
//! - [`launch`]: a whole launch, from the busiest SM, the GPU's block dispatch and bandwidth;
//! - [`clock`]: seed 002's latency measurement by `clock()`, worked.

pub mod arch;
pub mod clock;
pub mod engine;
pub mod error;
pub mod launch;
pub mod program;

pub use arch::ArchParams;
pub use error::{Error, Result};
pub use launch::{
    plan, run, simulate, simulate_with_bottlenecks, Bottleneck, Gpu, Options, Plan, Prepared, Simulation,
    WhatIf,
};
