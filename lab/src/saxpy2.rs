//! The measured saxpy2 launches of a measurement folder as inputs of the loaded-latency model:
//! the device from `props.csv` and the spec sheet's rules, each launch's per-warp parameters
//! from the kernel analyser emulating that very launch on the measured SASS.

use std::collections::HashMap;

use anyhow::{anyhow, Result};
use hetsim_kernel::{analyze, parse, Arg, Launch, Listing, Options};
use hetsim_models::hierarchy::Hierarchy;
use hetsim_models::occupancy::{self, Limits};
use hetsim_models::queueing::{lanes_of, Device, Kernel, Traffic};

use crate::measurements::{KernelRun, Measurements};

/// The device a measurement folder describes, with the calibrated attributes at neutral
/// starting values (`hetsim calibrate gpu` fits them).
pub fn device(m: &Measurements) -> Result<Device> {
    let cc = m
        .props
        .get("compute_capability")
        .ok_or_else(|| anyhow!("{}: no compute_capability", m.dir.join("props.csv").display()))?;
    let limits = m.occupancy_limits()?;
    let lanes = lanes_of(cc).ok_or_else(|| anyhow!("compute capability {cc} has no pipe table"))?;
    let memory_clock_hz = m.prop("mem_clock_khz_max")? * 1e3;
    let (sms, sm_clock_mhz) = (m.prop("sms")?, m.prop("sm_clock_khz_max")? / 1e3);
    Ok(Device {
        limits,
        sms,
        sm_clock_mhz,
        schedulers: 4.0,
        warp_size: m.prop("warp_size")?,
        // Eq. 4.7 for the whole device: HBM and GDDR6 move data on both clock edges.
        memory_bandwidth: memory_clock_hz * m.prop("mem_bus_width_bits")? / 8.0 * 2.0,
        memory_queue_cycles: 300.0,
        issue_efficiency: 0.95,
        block_launch_rate: 1.6e9,
        warp_skew: 0.05,
        launch_overhead: 4e-6,
        lanes,
        power: None,
        error_bars: None,
        hierarchy: Hierarchy::of(cc, sms, sm_clock_mhz, m.prop("l2_bytes")?),
    })
}

/// Resident warps per SM of a measured saxpy2 launch, by the occupancy calculator: its blocks
/// of `run.block` threads, saxpy2's 8 registers a thread (its SASS) and the launch's dynamic
/// shared memory, which limits occupancy_block256.csv's launches.
pub fn resident_warps(limits: &'static Limits, run: &KernelRun) -> f64 {
    let blocks = occupancy::evaluate(&occupancy::Input {
        limits,
        threads_per_block: run.block as u32,
        registers_per_thread: 8,
        shared_memory_per_block: run.dynamic_shared as u32,
    })
    .active_blocks_per_sm;
    f64::from(blocks) * (run.block / 32.0).ceil()
}

/// Analyses saxpy2 launches, each distinct launch once.
pub struct Saxpy2 {
    listing: Listing,
    memo: HashMap<[u64; 4], Kernel>,
}

impl Saxpy2 {
    pub fn new(sass: &str) -> Result<Saxpy2> {
        Ok(Saxpy2 {
            listing: parse(sass).map_err(|e| anyhow!("saxpy2 SASS: {e}"))?,
            memo: HashMap::new(),
        })
    }

    /// The model's kernel input for one measured launch.
    pub fn kernel(&mut self, run: &KernelRun) -> Result<Kernel> {
        let key = [run.n, run.intensity, run.block, run.dynamic_shared].map(f64::to_bits);
        if let Some(k) = self.memo.get(&key) {
            return Ok(k.clone());
        }
        let options = Options {
            launch: Some(launch(run)?),
            ..Options::default()
        };
        let report = analyze(&self.listing, &options).map_err(|e| anyhow!("saxpy2: {e}"))?;
        let value = |q: &hetsim_kernel::Quantity, what: &str| {
            q.value()
                .ok_or_else(|| anyhow!("saxpy2: {what} is a formula in an emulated launch"))
        };
        let pipe = |name: &str| {
            report
                .per_warp
                .by_pipe
                .get(name)
                .and_then(|q| q.value())
                .unwrap_or(0.0)
        };
        let kernel = Kernel {
            grid_size: run.grid,
            block_size: run.block,
            issued_instructions: value(&report.per_warp.issued, "issued")?,
            gmem_bytes: value(&report.gmem_bytes_per_warp, "bytes")?,
            traffic: report.memory.map(|w| Traffic {
                l2_bytes: w.l2_bytes,
                dram_bytes: w.dram_bytes,
                l1_wavefronts: w.l1_wavefronts,
                reuse_exponent: w.reuse_exponent,
                shared_wavefronts: w.shared_wavefronts,
                barriers: w.barriers,
            }),
            latency_bound: value(&report.latency_bound, "latency bound")?,
            fp32_instructions: pipe("fp32"),
            int_instructions: pipe("int"),
            sfu_instructions: pipe("sfu"),
            fp64_instructions: pipe("fp64"),
            registers_per_thread: report.registers.unwrap_or(32),
            shared_memory_per_block: whole(run, run.dynamic_shared, "dynamic_smem")?,
            occupancy: None,
        };
        self.memo.insert(key, kernel.clone());
        Ok(kernel)
    }
}

/// The launch one measured run made: saxpy2's `n, a, x, y` on a one-dimensional grid.
pub fn launch(run: &KernelRun) -> Result<Launch> {
    Ok(Launch {
        grid: [whole(run, run.grid, "grid")?, 1, 1],
        block: [whole(run, run.block, "block")?, 1, 1],
        args: vec![
            Arg::Int(i64::from(whole(run, run.n, "n")?)),
            Arg::Int(i64::from(whole(run, run.intensity, "intensity")?)),
            Arg::Pointer,
            Arg::Pointer,
        ],
        dynamic_shared: whole(run, run.dynamic_shared, "dynamic_smem")?,
    })
}

/// `x` of `run`'s column `what` as a count, or an error naming the row.
fn whole(run: &KernelRun, x: f64, what: &str) -> Result<u32> {
    if x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&x) {
        Ok(x as u32)
    } else {
        Err(anyhow!(
            "{} line {}: {what} {x} is not a whole number",
            run.file,
            run.line
        ))
    }
}
