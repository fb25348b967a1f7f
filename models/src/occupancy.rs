//! Theoretical occupancy by the rules of NVIDIA's CUDA Occupancy Calculator, which the thesis
//! uses to obtain the `occupancy` of eq. 4.3 (seed 004, section 4.4.1, Figure 4.2).
//!
//! Registers are allocated per warp in units of 256, and warps are placed on the SM's
//! scheduler partitions, each holding an equal share of the register file; shared memory is
//! allocated per block in units of 256 bytes before compute capability 8.0 and of 128 bytes
//! from 8.0, where the driver also reserves 1 KiB per block. Each limit is taken at the
//! largest shared-memory configuration of the architecture.

use serde::Serialize;

use crate::params::{ParamError, ParamReader, Params};

/// The per-SM limits of one compute capability (CUDA C Programming Guide, "Compute
/// Capabilities" table; CUDA Occupancy Calculator, "GPU Data" sheet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub compute_capability: &'static str,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_block: u32,
    pub registers_per_sm: u32,
    pub max_registers_per_thread: u32,
    pub register_allocation_unit: u32,
    /// Warp-scheduler partitions sharing the register file equally.
    pub scheduler_partitions: u32,
    pub shared_memory_per_sm: u32,
    pub max_shared_memory_per_block: u32,
    pub shared_memory_allocation_unit: u32,
    pub reserved_shared_memory_per_block: u32,
}

const fn limits(
    compute_capability: &'static str,
    max_warps_per_sm: u32,
    max_blocks_per_sm: u32,
    scheduler_partitions: u32,
    shared_memory_per_sm: u32,
    max_shared_memory_per_block: u32,
) -> Limits {
    let ampere_or_later = compute_capability.as_bytes()[0] >= b'8';
    Limits {
        compute_capability,
        max_warps_per_sm,
        max_blocks_per_sm,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        max_registers_per_thread: 255,
        register_allocation_unit: 256,
        scheduler_partitions,
        shared_memory_per_sm,
        max_shared_memory_per_block,
        shared_memory_allocation_unit: if ampere_or_later { 128 } else { 256 },
        reserved_shared_memory_per_block: if ampere_or_later { 1024 } else { 0 },
    }
}

/// The compute capabilities supported, Maxwell (5.2) to Hopper (9.0).
pub const COMPUTE_CAPABILITIES: [Limits; 9] = [
    limits("5.2", 64, 32, 4, 98_304, 49_152),
    limits("6.0", 64, 32, 2, 65_536, 49_152),
    limits("6.1", 64, 32, 4, 98_304, 49_152),
    limits("7.0", 64, 32, 4, 98_304, 98_304),
    limits("7.5", 32, 16, 4, 65_536, 65_536),
    limits("8.0", 64, 32, 4, 167_936, 166_912),
    limits("8.6", 48, 16, 4, 102_400, 101_376),
    limits("8.9", 48, 24, 4, 102_400, 101_376),
    limits("9.0", 64, 32, 4, 233_472, 232_448),
];

pub fn limits_of(compute_capability: &str) -> Option<&'static Limits> {
    COMPUTE_CAPABILITIES
        .iter()
        .find(|l| l.compute_capability == compute_capability)
}

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub limits: &'static Limits,
    pub threads_per_block: u32,
    pub registers_per_thread: u32,
    pub shared_memory_per_block: u32,
}

fn whole(key: &str, x: f64, max: u32) -> Result<u32, ParamError> {
    if x.fract() == 0.0 && (0.0..=f64::from(max)).contains(&x) {
        Ok(x as u32)
    } else {
        Err(ParamError::invalid(
            key,
            format!("a whole number from 0 to {max}"),
            x,
        ))
    }
}

impl Input {
    pub fn from_params(params: Params) -> Result<Self, ParamError> {
        let mut r = ParamReader::new(params);
        let cc = r.text("compute_capability")?;
        let limits = limits_of(&cc).ok_or_else(|| {
            let known: Vec<_> = COMPUTE_CAPABILITIES
                .iter()
                .map(|l| l.compute_capability)
                .collect();
            ParamError::invalid("compute_capability", format!("one of {}", known.join(", ")), &cc)
        })?;
        let threads_per_block = whole(
            "threads_per_block",
            r.positive("threads_per_block")?,
            limits.max_threads_per_block,
        )?;
        let registers_per_thread = whole(
            "registers_per_thread",
            r.positive("registers_per_thread")?,
            limits.max_registers_per_thread,
        )?;
        let shared_memory_per_block = whole(
            "shared_memory_per_block",
            r.non_negative_or("shared_memory_per_block", 0.0)?,
            limits.max_shared_memory_per_block,
        )?;
        r.finish()?;
        Ok(Input {
            limits,
            threads_per_block,
            registers_per_thread,
            shared_memory_per_block,
        })
    }
}

/// The resource that caps the resident blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    Warps,
    Blocks,
    Registers,
    SharedMemory,
}

impl Limiter {
    pub fn as_str(self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Blocks => "blocks",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared_memory",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Output {
    pub warps_per_block: u32,
    /// Registers one warp is given, rounded to the allocation unit.
    pub registers_per_warp: u32,
    /// Shared memory one block is given, with the reserved part, rounded to the unit.
    pub shared_memory_per_block_allocated: u32,
    pub blocks_limit_warps: u32,
    pub blocks_limit_blocks: u32,
    pub blocks_limit_registers: u32,
    pub blocks_limit_shared_memory: u32,
    pub active_blocks_per_sm: u32,
    pub active_warps_per_sm: u32,
    pub active_threads_per_sm: u32,
    /// Active warps / maximum warps per SM.
    pub occupancy: f64,
    pub limiter: Limiter,
}

fn round_up(x: u32, unit: u32) -> u32 {
    x.div_ceil(unit) * unit
}

pub fn evaluate(i: &Input) -> Output {
    let l = i.limits;
    let warps_per_block = i.threads_per_block.div_ceil(32);
    let registers_per_warp = round_up(i.registers_per_thread * 32, l.register_allocation_unit);
    let warps_per_partition = l.registers_per_sm / l.scheduler_partitions / registers_per_warp;
    let blocks_limit_registers = warps_per_partition * l.scheduler_partitions / warps_per_block;
    let shared_memory_per_block_allocated = round_up(
        i.shared_memory_per_block + l.reserved_shared_memory_per_block,
        l.shared_memory_allocation_unit,
    );
    let blocks_limit_shared_memory = l
        .shared_memory_per_sm
        .checked_div(shared_memory_per_block_allocated)
        .unwrap_or(l.max_blocks_per_sm);
    let limits = [
        (l.max_warps_per_sm / warps_per_block, Limiter::Warps),
        (l.max_blocks_per_sm, Limiter::Blocks),
        (blocks_limit_registers, Limiter::Registers),
        (blocks_limit_shared_memory, Limiter::SharedMemory),
    ];
    // The first smallest limit names the limiter, in the calculator's order.
    let (active_blocks_per_sm, limiter) =
        limits
            .into_iter()
            .fold(limits[0], |best, l| if l.0 < best.0 { l } else { best });
    let active_warps_per_sm = active_blocks_per_sm * warps_per_block;
    Output {
        warps_per_block,
        registers_per_warp,
        shared_memory_per_block_allocated,
        blocks_limit_warps: limits[0].0,
        blocks_limit_blocks: limits[1].0,
        blocks_limit_registers,
        blocks_limit_shared_memory,
        active_blocks_per_sm,
        active_warps_per_sm,
        active_threads_per_sm: active_blocks_per_sm * i.threads_per_block,
        occupancy: f64::from(active_warps_per_sm) / f64::from(l.max_warps_per_sm),
        limiter,
    }
}
