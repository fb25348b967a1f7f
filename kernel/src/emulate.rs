//! Emulation of a launch (placeholder: being written).

use crate::arch::{Arch, Pipe};
use crate::cfg::Cfg;
use crate::error::{Error, Result};
use crate::latency::LatencyTable;
use crate::sass::Kernel;
use serde::Serialize;
use std::collections::BTreeMap;

/// A kernel argument: a number, or a pointer (`_`) taken as an aligned symbolic base.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    Int(i64),
    Float(f64),
    Pointer,
}

/// Grid and block dimensions and the arguments in the kernel's parameter order.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<Arg>,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared: u32,
}

/// A branch whose outcome depends on values loaded from memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unresolved {
    pub address: u64,
    pub line: usize,
    pub instruction: String,
    pub reason: String,
}

/// Per-warp dynamic counts averaged over a launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Emulation {
    /// Warps in the launch.
    pub warps: u64,
    /// Distinct warp behaviours found, each emulated once.
    pub groups: usize,
    /// Warps actually emulated.
    pub emulated_warps: u64,
    /// How the launch was covered ("grouped", or "sampled: …" where grouping could not work).
    pub coverage: String,
    pub executed: f64,
    pub issued: f64,
    pub cuda_core: f64,
    /// Thread-level instructions (active, guard true) per warp.
    pub thread_executed: f64,
    pub by_pipe: BTreeMap<Pipe, f64>,
    pub gmem_bytes: f64,
    /// Global accesses per warp whose addresses could not be known (counted as coalesced).
    pub unknown_address_accesses: f64,
    /// Mean over warps of the critical path of each warp's trace.
    pub latency_bound: f64,
    /// Mean runs of each loop's header per warp, by loop id.
    pub loop_runs: BTreeMap<String, f64>,
    pub unresolved: Vec<Unresolved>,
}

/// Emulates `launch` of `kernel`.
pub fn emulate(
    kernel: &Kernel,
    cfg: &Cfg,
    arch: Arch,
    table: &LatencyTable,
    launch: &Launch,
) -> Result<Emulation> {
    let _ = (kernel, cfg, arch, table, launch);
    Err(Error::new("emulation is not implemented yet"))
}
