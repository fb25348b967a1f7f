//! A whole launch from one SM (seed 002, section 4, scaled to the grid): blocks are dealt to
//! SMs round-robin, so the busiest SM runs `⌈blocks / SMs⌉` of them, a wave of resident
//! blocks at a time (the occupancy calculator's, or `--warps-per-sm`). That SM is simulated
//! cycle by cycle on its own blocks' instruction streams, from the emulator.
//!
//! **Scaling.** An SM with more blocks than [`Options::max_blocks`] runs a sample of them
//! instead: that many blocks spread evenly over its sequence (first and last included), back
//! to back. Its time is the sample's plus, for each block left out, the steady-state period:
//! the time between block completions in the middle of the sample, from the first wave's end
//! to the start of the drain. So the cost is that of the sample, whatever the grid: 10⁶ blocks
//! cost what 64 do. A launch whose blocks differ only somewhere the sample misses is
//! mistimed; blocks that differ (a stencil's edges, a tail block) at evenly spread places are
//! in it.
//!
//! **GPU-wide limits.** The block dispatcher starts `launch_rate` blocks a second across the
//! GPU, so one SM receives a block no more often than every `active SMs × clock /
//! launch_rate` cycles. Each SM may have `C_mem = efficiency × bandwidth × global latency /
//! (SMs × 32 B × clock)` DRAM requests in flight (seed 002, section 3.2.4, in 32-byte
//! sectors), which holds a streaming kernel near `efficiency ×` eq. 4.7's bandwidth; the launch
//! takes at least its DRAM bytes (L1 and L2 hits left out, 64-byte pairs counted whole, see
//! [`dram_fraction`]) over eq. 4.7's bandwidth itself, since reads of whole pairs for half
//! their bytes sustain more than a stream does. Time = launch overhead + cycles / clock.

use crate::arch::ArchParams;
use crate::engine::{self, Block, SmConfig, SmRun};
use crate::error::{Error, Result};
use crate::program::ops;
use hetsim_kernel::analysis::estimated_registers;
use hetsim_kernel::arch::Arch;
use hetsim_kernel::cfg::Cfg;
use hetsim_kernel::emulate::{block_streams, launch_shape, traffic, Launch, Traffic};
use hetsim_kernel::latency::LatencyTable;
use hetsim_kernel::sass::Kernel;
use hetsim_models::catalog::{self, Component, ComponentKind};
use hetsim_models::occupancy;
use hetsim_models::params::{ParamReader, Params};
use hetsim_models::{hierarchy, queueing};
use serde::Serialize;

/// The GPU a launch runs on: what TEG needs of a catalog entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gpu {
    pub sms: u32,
    pub clock_hz: f64,
    /// Peak DRAM bandwidth, bytes a second (eq. 4.7 before the SM/clock split).
    pub bandwidth: f64,
    pub compute_capability: String,
    /// `L2Size` [bytes] where the component gives it; else the architecture file's.
    pub l2_size: Option<f64>,
    /// `blockLaunchRate` [blocks/s] and `kernelLaunchOverhead` [s] where the component gives
    /// them (a calibrated catalog entry, `hetsim calibrate gpu`); else the architecture file's.
    pub block_launch_rate: Option<f64>,
    pub launch_overhead: Option<f64>,
}

impl Gpu {
    /// From a GPU component's attributes: `SMs`, `SMCoreClock` [MHz], `memoryClock` [MHz],
    /// `busWidth` [bits], `dataRate`, `computeCapability`, and `L2Size` [bytes] if given.
    pub fn from_params(params: &Params) -> std::result::Result<Gpu, hetsim_models::params::ParamError> {
        let mut r = ParamReader::new(params.clone());
        let sms = r.positive("SMs")?;
        let clock = r.positive("SMCoreClock")?;
        let memory_clock = r.positive("memoryClock")?;
        let bus = r.positive("busWidth")?;
        let rate = r.positive("dataRate")?;
        let compute_capability = r.text("computeCapability")?;
        Ok(Gpu {
            sms: sms.round() as u32,
            clock_hz: clock * 1e6,
            bandwidth: memory_clock * 1e6 * bus / 8.0 * rate,
            compute_capability,
            l2_size: r.optional_positive(hierarchy::keys::L2_SIZE)?,
            block_launch_rate: r.optional_positive(queueing::keys::BLOCK_LAUNCH_RATE)?,
            launch_overhead: r.optional_non_negative(queueing::keys::LAUNCH_OVERHEAD)?,
        })
    }

    /// The catalog's GPU `name` (`hetsim components --kind GPU`).
    pub fn from_catalog(name: &str) -> Result<Gpu> {
        let gpus: Vec<Component> = catalog::components()
            .into_iter()
            .filter(|c| c.kind == ComponentKind::Gpu)
            .collect();
        let Some(gpu) = gpus.iter().find(|c| c.name == name) else {
            let names: Vec<&str> = gpus.iter().map(|c| c.name.as_str()).collect();
            return Err(Error::new(format!(
                "no such GPU in the catalog; expected one of: {}",
                names.join(", ")
            )));
        };
        Gpu::from_params(&gpu.attributes).map_err(|e| Error::new(e.to_string()))
    }

    /// The GPU's compute capability as an architecture (`9.0` → sm_90): what a listing
    /// without one is analysed for, and what a listing's own must run on.
    pub fn arch(&self) -> Result<Arch> {
        self.compute_capability
            .parse::<Arch>()
            .map_err(|e| Error::new(format!("computeCapability: {e}")))
    }

    /// `C_mem`: the 32-byte sectors one SM may have in flight (seed 002, section 3.2.4).
    pub fn memory_slots(&self, params: &ArchParams) -> usize {
        let m = &params.memory;
        let bytes_per_cycle = m.efficiency * self.bandwidth / self.clock_hz / f64::from(self.sms);
        (bytes_per_cycle * m.global / 32.0).round().max(1.0) as usize
    }
}

/// "What if" switches (seed 002, section 5: TEG removes one bottleneck at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct WhatIf {
    pub perfect_coalescing: bool,
    pub no_bank_conflicts: bool,
    pub infinite_memory_concurrency: bool,
    /// Blocks start the moment a slot frees: no dispatch rate, no replacement latency.
    pub free_block_launch: bool,
}

/// How to simulate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Resident warps per SM, instead of the occupancy calculator's (rounded down to whole
    /// blocks, at least one).
    pub warps_per_sm: Option<u32>,
    pub what_if: WhatIf,
    /// Blocks of the busiest SM simulated before scaling takes over (at least four waves).
    pub max_blocks: usize,
    /// The launch's traffic, where the caller measured it already on the same kernel and
    /// architecture (`hetsim_kernel::analysis::Report::block_traffic`): it is then not
    /// emulated again.
    pub traffic: Option<Traffic>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            warps_per_sm: None,
            what_if: WhatIf::default(),
            max_blocks: 16,
            traffic: None,
        }
    }
}

/// One launch's predicted time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Simulation {
    pub seconds: f64,
    /// The busiest SM's cycles (or the bandwidth bound's, where higher).
    pub cycles: f64,
    pub blocks: u64,
    pub active_sms: u32,
    pub blocks_on_busiest_sm: u64,
    pub resident_blocks: u32,
    pub warps_per_sm: u32,
    /// Blocks simulated; fewer than `blocks_on_busiest_sm` means scaled.
    pub simulated_blocks: usize,
    pub memory_slots: usize,
    /// Instructions issued over the schedulers' cycles.
    pub issue_utilization: f64,
    /// Memory-pipeline slots held over those available.
    pub memory_utilization: f64,
    /// `memory`, `issue`, `block launch` or `latency`.
    pub limiter: &'static str,
    pub what_if: WhatIf,
}

/// Everything TEG needs about one kernel, prepared once (and cloned where launches of one
/// kernel run with parameters of their own, as a fit's do).
#[derive(Clone)]
pub struct Prepared<'a> {
    pub kernel: &'a Kernel,
    pub cfg: Cfg,
    pub arch: Arch,
    pub table: LatencyTable,
    pub params: ArchParams,
}

impl<'a> Prepared<'a> {
    pub fn new(kernel: &'a Kernel, arch: Arch) -> Result<Prepared<'a>> {
        Ok(Prepared {
            kernel,
            cfg: Cfg::build(kernel)?,
            arch,
            table: LatencyTable::for_arch(arch)?,
            params: ArchParams::for_major(arch.major)?,
        })
    }
}

/// A launch's busiest SM and the instruction streams of the blocks it simulates: everything
/// the emulator provides, kept so that the engine can rerun without it (what-ifs, fits, and
/// the `gpu-teg` model's cache).
#[derive(Debug, Clone)]
pub struct Plan {
    pub blocks: u64,
    pub warps_per_block: u32,
    pub resident_blocks: u32,
    pub active_sms: u32,
    pub blocks_on_busiest_sm: u64,
    /// The blocks simulated (as many as the busiest SM runs, or a sample of them).
    pub streams: Vec<Block>,
    /// The share of L1-missing sectors that reach DRAM ([`dram_fraction`]); `None` without
    /// data caches.
    pub dram_fraction: Option<f64>,
}

/// Emulates the blocks of `launch` that the busiest SM runs (or a sample of them).
pub fn plan(p: &Prepared, launch: &Launch, gpu: &Gpu, options: &Options) -> Result<Plan> {
    let (blocks, warps_per_block) = launch_shape(launch)?;
    let resident = resident_blocks(p, launch, gpu, warps_per_block, options.warps_per_sm)?;
    let active_sms = u32::try_from(blocks.min(u64::from(gpu.sms))).unwrap_or(gpu.sms);
    let on_busiest = blocks.div_ceil(u64::from(active_sms));
    let sample = sample_positions(on_busiest, options.max_blocks.max(4 * resident as usize));
    let ids: Vec<u64> = sample.iter().map(|&k| k * u64::from(active_sms)).collect();
    let l2_size = gpu.l2_size.unwrap_or(p.params.memory.l2_bytes);
    let dram_fraction = if l2_size > 0.0 {
        let r = match options.traffic {
            Some(measured) => measured,
            None => traffic(p.kernel, &p.cfg, p.arch, &p.table, launch)?,
        };
        let wave = f64::from(active_sms) * f64::from(resident);
        Some(dram_fraction(&r, blocks, wave, l2_size))
    } else {
        None
    };
    Ok(Plan {
        dram_fraction,
        blocks,
        warps_per_block,
        resident_blocks: resident,
        active_sms,
        blocks_on_busiest_sm: on_busiest,
        streams: block_streams(p.kernel, &p.cfg, p.arch, &p.table, launch, &ids)?,
    })
}

/// DRAM sectors per L1-missing sector: the launch's traffic ([`traffic`]) on an L2 of
/// `l2_bytes` when `wave_blocks` blocks run at once ([`hierarchy::dram_bytes`] of
/// [`hierarchy::wave_footprint`], the closed-form model's equations); above 1 where DRAM reads
/// whole 64-byte pairs of which the SM asked for one sector.
pub fn dram_fraction(traffic: &Traffic, blocks: u64, wave_blocks: f64, l2_bytes: f64) -> f64 {
    let warp = traffic.per_warp(32.0 * traffic.requested_sectors_per_block / traffic.warps_per_block);
    if warp.l2_bytes <= 0.0 {
        return 1.0;
    }
    let warps = blocks as f64 * traffic.warps_per_block;
    let wave = wave_blocks * traffic.warps_per_block;
    let footprint = hierarchy::wave_footprint(warp.dram_bytes, wave, warps, warp.reuse_exponent);
    hierarchy::dram_bytes(warp.l2_bytes, warp.dram_bytes, footprint, l2_bytes) / warp.l2_bytes
}

/// Simulates `launch` on `gpu`.
pub fn simulate(p: &Prepared, launch: &Launch, gpu: &Gpu, options: &Options) -> Result<Simulation> {
    Ok(run(p, &plan(p, launch, gpu, options)?, gpu, options.what_if))
}

/// Runs a planned launch through the engine.
pub fn run(p: &Prepared, plan: &Plan, gpu: &Gpu, what_if: WhatIf) -> Simulation {
    let resident = plan.resident_blocks;
    let on_busiest = plan.blocks_on_busiest_sm;
    let config = sm_config(&p.params, gpu, plan, what_if);
    let ops = ops(p.kernel, p.arch, &p.params);
    let run = engine::run(&ops, &config, &plan.streams);
    let sm_cycles = scaled_cycles(&run, on_busiest, resident as usize);
    let scale = on_busiest as f64 / plan.streams.len().max(1) as f64;
    let sectors = run.sectors as f64 * scale * f64::from(plan.active_sms);
    let bandwidth = gpu.bandwidth;
    let bandwidth_cycles = if what_if.infinite_memory_concurrency {
        0.0
    } else {
        sectors * 32.0 / bandwidth * gpu.clock_hz
    };
    let cycles = sm_cycles.max(bandwidth_cycles);
    let issue_utilization = run.issued as f64 / (run.cycles.max(1) as f64 * config.schedulers as f64);
    let memory_utilization = match config.memory_slots {
        // Slots taken near the end are held past the last warp: at most all of them.
        Some(slots) => (run.memory_slot_cycles as f64 / (run.cycles.max(1) as f64 * slots as f64)).min(1.0),
        None => 0.0,
    };
    let launch_cycles = on_busiest as f64 * config.dispatch_interval as f64;
    let limiter = if memory_utilization >= 0.8 || bandwidth_cycles >= sm_cycles {
        "memory"
    } else if issue_utilization >= 0.8 {
        "issue"
    } else if launch_cycles >= 0.8 * sm_cycles {
        "block launch"
    } else {
        "latency"
    };
    Simulation {
        seconds: gpu.launch_overhead.unwrap_or(p.params.blocks.launch_overhead) + cycles / gpu.clock_hz,
        cycles,
        blocks: plan.blocks,
        active_sms: plan.active_sms,
        blocks_on_busiest_sm: on_busiest,
        resident_blocks: resident,
        warps_per_sm: resident * plan.warps_per_block,
        simulated_blocks: plan.streams.len(),
        memory_slots: config.memory_slots.unwrap_or(0),
        issue_utilization,
        memory_utilization,
        limiter,
        what_if,
    }
}

/// What removing one bottleneck would save (seed 002, section 5.1, Table 3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bottleneck {
    pub what: &'static str,
    /// The launch's time with the bottleneck removed.
    pub seconds_without: f64,
    /// The share of the launch's time it costs.
    pub share: f64,
}

/// The launch as it is, and each bottleneck's cost: the launch re-simulated without it.
pub fn simulate_with_bottlenecks(
    p: &Prepared,
    launch: &Launch,
    gpu: &Gpu,
    options: &Options,
) -> Result<(Simulation, Vec<Bottleneck>)> {
    let plan = plan(p, launch, gpu, options)?;
    let base = run(p, &plan, gpu, options.what_if);
    let switches: [(&str, WhatIf); 4] = [
        (
            "uncoalesced accesses",
            WhatIf {
                perfect_coalescing: true,
                ..WhatIf::default()
            },
        ),
        (
            "shared-memory bank conflicts",
            WhatIf {
                no_bank_conflicts: true,
                ..WhatIf::default()
            },
        ),
        (
            "memory concurrency (C_mem)",
            WhatIf {
                infinite_memory_concurrency: true,
                ..WhatIf::default()
            },
        ),
        (
            "block launch",
            WhatIf {
                free_block_launch: true,
                ..WhatIf::default()
            },
        ),
    ];
    let mut out = Vec::new();
    for (what, what_if) in switches {
        let without = run(p, &plan, gpu, what_if);
        out.push(Bottleneck {
            what,
            seconds_without: without.seconds,
            share: ((base.seconds - without.seconds) / base.seconds).max(0.0),
        });
    }
    Ok((base, out))
}

/// Blocks resident per SM: the occupancy calculator's for the kernel's registers and the
/// launch's shared memory, or as many whole blocks as `warps_per_sm` holds.
fn resident_blocks(
    p: &Prepared,
    launch: &Launch,
    gpu: &Gpu,
    warps_per_block: u32,
    warps_per_sm: Option<u32>,
) -> Result<u32> {
    let limits = occupancy::limits_of(&gpu.compute_capability).ok_or_else(|| {
        Error::new(format!(
            "compute capability {} has no occupancy limits in the catalog",
            gpu.compute_capability
        ))
    })?;
    if let Some(w) = warps_per_sm {
        let most = limits.max_warps_per_sm / warps_per_block;
        return Ok((w / warps_per_block).clamp(1, most.clamp(1, limits.max_blocks_per_sm)));
    }
    let threads_per_block = launch.block.iter().product::<u32>();
    let out = occupancy::evaluate(&occupancy::Input {
        limits,
        threads_per_block,
        registers_per_thread: estimated_registers(p.kernel, p.arch).unwrap_or(32),
        shared_memory_per_block: launch.dynamic_shared,
    });
    if out.active_blocks_per_sm == 0 {
        return Err(Error::new(format!(
            "no block of {threads_per_block} threads with {} B of shared memory fits an SM of compute capability {}",
            launch.dynamic_shared, gpu.compute_capability
        )));
    }
    Ok(out.active_blocks_per_sm)
}

/// The SM's parameters in whole cycles.
fn sm_config(params: &ArchParams, gpu: &Gpu, plan: &Plan, what_if: WhatIf) -> SmConfig {
    let cycles = |x: f64| x.round().max(0.0) as u64;
    let b = &params.blocks;
    let free = what_if.free_block_launch;
    SmConfig {
        schedulers: params.schedulers as usize,
        resident_blocks: plan.resident_blocks as usize,
        taken_branch: cycles(params.taken_branch),
        replacement: if free { 0 } else { cycles(b.replacement) },
        dispatch_interval: if free {
            0
        } else {
            cycles(f64::from(plan.active_sms) * gpu.clock_hz / gpu.block_launch_rate.unwrap_or(b.launch_rate))
        },
        memory_slots: (!what_if.infinite_memory_concurrency).then(|| gpu.memory_slots(params)),
        memory_queue_cycles: params.memory.queue_cycles,
        perfect_coalescing: what_if.perfect_coalescing,
        conflict_free_shared: what_if.no_bank_conflicts,
        l1_latency: cycles(params.memory.l1).max(1),
        l2_latency: cycles(params.memory.l2).max(1),
        dram_fraction: plan.dram_fraction,
        barrier: cycles(b.barrier),
        one_l1_data_path: params.one_l1_data_path,
    }
}

/// The positions in the busiest SM's sequence of `n` blocks to simulate: all of them, or
/// `max` spread evenly with the first and the last.
fn sample_positions(n: u64, max: usize) -> Vec<u64> {
    if n <= max as u64 {
        return (0..n).collect();
    }
    let last = (n - 1) as f64;
    (0..max)
        .map(|j| (j as f64 * last / (max - 1) as f64).round() as u64)
        .collect()
}

/// The SM's cycles for `n` blocks from a run of a sample of them: the sample's, plus the
/// steady-state period for each block left out, measured over whole waves between the
/// first wave's end and the last wave.
fn scaled_cycles(run: &SmRun, n: u64, resident: usize) -> f64 {
    let simulated = run.block_ends.len();
    let waves = (simulated / resident.max(1)).saturating_sub(2);
    if n as usize <= simulated || waves == 0 {
        return run.cycles as f64;
    }
    let mut ends = run.block_ends.clone();
    ends.sort_unstable();
    let (from, to) = (resident - 1, resident - 1 + waves * resident);
    let period = (ends[to] - ends[from]) as f64 / (to - from) as f64;
    run.cycles as f64 + (n - simulated as u64) as f64 * period
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_spread_over_the_sequence() {
        assert_eq!(sample_positions(5, 8), vec![0, 1, 2, 3, 4]);
        let s = sample_positions(1000, 5);
        assert_eq!(s, vec![0, 250, 500, 749, 999]);
    }

    #[test]
    fn scaling_adds_the_steady_period() {
        // Two resident blocks ending together, a wave every 200 cycles.
        let run = SmRun {
            cycles: 800,
            block_ends: (0..8).map(|k| 200 * (k / 2 + 1)).collect(),
            ..SmRun::default()
        };
        assert_eq!(scaled_cycles(&run, 8, 2), 800.0);
        assert_eq!(scaled_cycles(&run, 18, 2), 800.0 + 10.0 * 100.0);
    }
}
