//! GPU kernel time with loaded latency: Volkov's latency and throughput bounds (seed 004,
//! eqs. 4.1–4.6) joined the way a closed queueing network joins them, instead of by `min()`.
//!
//! One SM holds `N` resident warps (the occupancy calculator's, section 4.4.1). Each warp,
//! alone, lives `latencyBound` cycles (eq. 5.1's critical path). Sharing the SM, a warp also
//! waits at each throughput resource `k` it uses: the issue slots of the schedulers, the FP32,
//! INT, SFU and FP64 pipes, the memory system and the GPU's block launcher. With `D_k` the
//! cycles of resource `k` one warp needs (the terms of eq. 4.5) and `ρ_k = X·D_k` its
//! utilisation at warp throughput `X`, the waiting time is `q_k·ρ_k / (1 − ρ_k)` (M/M/1), so a
//! warp's lifetime is
//!
//! ```text
//! R(X) = latencyBound + Σ_k q_k · ρ_k / (1 − ρ_k)        and    X = N_eff / R(X)   (Little)
//! ```
//!
//! solved for `X`. At low occupancy `X → N / latencyBound` (Volkov's latency bound); at high
//! occupancy `X → 1 / max D_k` (eq. 4.6); in between the transition is smooth, as measured on
//! the H100 between 28 and 40 warps per SM. For the pipes and the launcher `q_k = D_k`. For
//! memory `q` is `memoryQueueCycles`, a calibrated device attribute: DRAM latency grows with
//! load far more than one request's transfer time (Hong & Kim's departure delay, seed 000
//! eqs. 6–11, and Volkov's gradual saturation), which is why a memory-bound kernel reaches
//! only ≈ 68 % of eq. 4.7's bandwidth on the H100 at full occupancy and why a GPU with more
//! bandwidth and the same SMs gains less than its spec sheet says.
//!
//! Two effects of blocks: a block keeps its warps' slots until its slowest warp ends, which
//! costs `warpSkew · (H_m − 1)` of a lifetime for `m` warps per block (the expected maximum
//! of `m` exponential spreads, `H_m` the harmonic number); and the last wave of a grid that is
//! not a whole number of waves runs at its own, lower occupancy (wave quantisation). The
//! CUDA-event time of a launch adds `kernelLaunchOverhead`.

pub mod calibration;
mod error_bars;
mod traffic;

pub use error_bars::{Domain, ErrorBar, ErrorBars, Scored, DEFAULT_EXTRAPOLATION};
pub use traffic::{traffic_keys, Traffic};

use traffic::{dram_bytes, latency_bound, memory_demands, Warps};

use serde::Serialize;

use crate::hierarchy::Hierarchy;
use crate::occupancy::{self, limits_of, Limits, COMPUTE_CAPABILITIES};
use crate::params::{ParamError, ParamReader, Params};

/// Lanes per SM of each pipe: a warp instruction on a pipe of `lanes` lanes holds it for
/// `warpSize / lanes` cycles.
#[derive(Clone, Debug, PartialEq)]
pub struct Lanes {
    pub fp32: f64,
    pub int: f64,
    pub sfu: f64,
    pub fp64: f64,
}

/// A GPU's attributes: the thesis's (Figure 5.20) plus the calibrated ones of this model.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub limits: &'static Limits,
    /// `SMs`.
    pub sms: f64,
    /// `SMCoreClock` [MHz].
    pub sm_clock_mhz: f64,
    /// `schedulers` per SM.
    pub schedulers: f64,
    pub warp_size: f64,
    /// `memoryBandwidth` [bytes/s]: the spec sheet's peak (eq. 4.7 for the whole device).
    pub memory_bandwidth: f64,
    /// `memoryQueueCycles`: the scale of the memory system's waiting time (calibrated).
    pub memory_queue_cycles: f64,
    /// `issueEfficiency`: the fraction of issue slots a saturated scheduler fills (calibrated).
    pub issue_efficiency: f64,
    /// `blockLaunchRate` [blocks/s], GPU-wide (calibrated from launch or kernel timings).
    pub block_launch_rate: f64,
    /// `warpSkew`: the spread of warp lifetimes within a block, as a fraction of a lifetime.
    pub warp_skew: f64,
    /// `kernelLaunchOverhead` [s]: what CUDA events around an empty launch measure.
    pub launch_overhead: f64,
    pub lanes: Lanes,
    /// Board power by what the kernel keeps busy, where calibrated.
    pub power: Option<Power>,
    /// Error bars by regime, where calibrated.
    pub error_bars: Option<ErrorBars>,
    /// L1, L2, shared memory and barriers, where described: without them every requested
    /// byte goes to DRAM (the thesis's model).
    pub hierarchy: Option<Hierarchy>,
}

/// Board power [W]: `idle`, plus `compute` × the busiest compute resource's utilisation
/// (issue slots or a pipe), plus `memory` × the memory system's (calibrated from the
/// compute- and memory-bound phases of power.csv).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Power {
    pub idle: f64,
    pub compute: f64,
    pub memory: f64,
}

/// A launch, as the kernel analyser describes it (per-warp counts) plus its resources.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub grid_size: f64,
    pub block_size: f64,
    /// `issuedInstructions` per warp.
    pub issued_instructions: f64,
    /// `GMEMBytesTransferred` per warp: the 32-byte sectors its global accesses request.
    pub gmem_bytes: f64,
    /// What the requested bytes become in the memory hierarchy, where the analyser measured it.
    pub traffic: Option<Traffic>,
    /// `latencyBound` [cycles]: one warp alone, start to end.
    pub latency_bound: f64,
    /// Warp instructions per warp on the FP32, INT, SFU and FP64 pipes.
    pub fp32_instructions: f64,
    pub int_instructions: f64,
    pub sfu_instructions: f64,
    pub fp64_instructions: f64,
    pub registers_per_thread: u32,
    /// Static plus dynamic shared memory per block [bytes].
    pub shared_memory_per_block: u32,
    /// `occupancy` [warps/SM]: overrides the calculator when given.
    pub occupancy: Option<f64>,
}

/// The complete input of one evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub device: Device,
    pub kernel: Kernel,
}

/// Device attribute keys, for [`Input::from_params`] and the catalog.
pub mod keys {
    pub const MEMORY_BANDWIDTH: &str = "memoryBandwidth";
    pub const MEMORY_QUEUE_CYCLES: &str = "memoryQueueCycles";
    pub const ISSUE_EFFICIENCY: &str = "issueEfficiency";
    pub const BLOCK_LAUNCH_RATE: &str = "blockLaunchRate";
    pub const WARP_SKEW: &str = "warpSkew";
    pub const LAUNCH_OVERHEAD: &str = "kernelLaunchOverhead";
    pub const POWER_IDLE: &str = "powerIdle";
    pub const POWER_COMPUTE: &str = "powerCompute";
    pub const POWER_MEMORY: &str = "powerMemory";
    pub const ERROR_COMPUTE: &str = "errorCompute";
    pub const ERROR_MEMORY: &str = "errorMemory";
    pub const ERROR_LATENCY: &str = "errorLatency";
    pub const ERROR_LAUNCH: &str = "errorLaunch";
    pub const ERROR_EXTRAPOLATION: &str = "errorExtrapolation";
    pub const CALIBRATED_WARPS_MIN: &str = "calibratedWarpsMin";
    pub const CALIBRATED_WARPS_MAX: &str = "calibratedWarpsMax";
    pub const CALIBRATED_RESIDENT_WARPS_MIN: &str = "calibratedResidentWarpsMin";
    pub const CALIBRATED_RESIDENT_WARPS_MAX: &str = "calibratedResidentWarpsMax";
}

fn compute_capability(text: &str) -> Result<&'static Limits, ParamError> {
    limits_of(text).ok_or_else(|| {
        let known: Vec<_> = COMPUTE_CAPABILITIES
            .iter()
            .map(|l| l.compute_capability)
            .collect();
        ParamError::invalid("computeCapability", format!("one of {}", known.join(", ")), text)
    })
}

fn whole(key: &str, x: f64) -> Result<u32, ParamError> {
    if x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&x) {
        Ok(x as u32)
    } else {
        Err(ParamError::invalid(key, "a whole number", x))
    }
}

impl Input {
    /// Reads the device's attributes and the launch's parameters from one map (what the
    /// `gpu-queueing` model builds from a component and `sim.compute`'s argument).
    pub fn from_params(params: Params) -> Result<Self, ParamError> {
        let mut r = ParamReader::new(params);
        let limits = compute_capability(&r.text("computeCapability")?)?;
        let device = Device {
            limits,
            sms: r.positive("SMs")?,
            sm_clock_mhz: r.positive("SMCoreClock")?,
            schedulers: r.positive("schedulers")?,
            warp_size: r.positive_or("warpSize", 32.0)?,
            memory_bandwidth: r.positive(keys::MEMORY_BANDWIDTH)?,
            memory_queue_cycles: r.non_negative(keys::MEMORY_QUEUE_CYCLES)?,
            issue_efficiency: r.positive(keys::ISSUE_EFFICIENCY)?,
            block_launch_rate: r.positive(keys::BLOCK_LAUNCH_RATE)?,
            warp_skew: r.non_negative(keys::WARP_SKEW)?,
            launch_overhead: r.non_negative(keys::LAUNCH_OVERHEAD)?,
            lanes: Lanes {
                fp32: r.positive("fp32Lanes")?,
                int: r.positive("intLanes")?,
                sfu: r.positive("sfuLanes")?,
                fp64: r.positive("fp64Lanes")?,
            },
            power: match r.optional_non_negative(keys::POWER_IDLE)? {
                Some(idle) => Some(Power {
                    idle,
                    compute: r.non_negative(keys::POWER_COMPUTE)?,
                    memory: r.non_negative(keys::POWER_MEMORY)?,
                }),
                None => None,
            },
            error_bars: ErrorBars::read(&mut r)?,
            hierarchy: Hierarchy::read(&mut r)?,
        };
        let kernel = Kernel::read(&mut r)?;
        r.finish()?;
        Ok(Input { device, kernel })
    }
}

impl Kernel {
    /// A launch's parameters alone, as `kernel_params()` gives them (less Volkov's
    /// `CUDACoreInstructions` and TEG's `launch`): what a calibration needs of each measured
    /// launch, the device coming from elsewhere.
    pub fn from_params(params: Params) -> Result<Self, ParamError> {
        let mut r = ParamReader::new(params);
        let kernel = Kernel::read(&mut r)?;
        r.finish()?;
        Ok(kernel)
    }

    fn read(r: &mut ParamReader) -> Result<Self, ParamError> {
        Ok(Kernel {
            grid_size: r.positive("gridSize")?,
            block_size: r.positive("blockSize")?,
            issued_instructions: r.non_negative("issuedInstructions")?,
            gmem_bytes: r.non_negative("GMEMBytesTransferred")?,
            traffic: Traffic::read(r)?,
            latency_bound: r.positive("latencyBound")?,
            fp32_instructions: r.non_negative_or("fp32Instructions", 0.0)?,
            int_instructions: r.non_negative_or("intInstructions", 0.0)?,
            sfu_instructions: r.non_negative_or("sfuInstructions", 0.0)?,
            fp64_instructions: r.non_negative_or("fp64Instructions", 0.0)?,
            registers_per_thread: whole("registersPerThread", r.positive_or("registersPerThread", 32.0)?)?,
            shared_memory_per_block: whole(
                "sharedMemoryPerBlock",
                r.non_negative_or("sharedMemoryPerBlock", 0.0)?,
            )? + whole(
                "dynamicSharedMemory",
                r.non_negative_or("dynamicSharedMemory", 0.0)?,
            )?,
            occupancy: r.optional_positive("occupancy")?,
        })
    }
}

/// What limits the kernel: the resource with the highest utilisation, or latency when none
/// is busy half the time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    Latency,
    Issue,
    Fp32,
    Int,
    Sfu,
    Fp64,
    /// The SM's L1 and shared-memory data path.
    L1,
    L2,
    Memory,
    BlockLaunch,
}

impl Limiter {
    pub fn as_str(self) -> &'static str {
        match self {
            Limiter::Latency => "latency",
            Limiter::Issue => "issue",
            Limiter::Fp32 => "fp32",
            Limiter::Int => "int",
            Limiter::Sfu => "sfu",
            Limiter::Fp64 => "fp64",
            Limiter::L1 => "l1",
            Limiter::L2 => "l2",
            Limiter::Memory => "memory",
            Limiter::BlockLaunch => "block_launch",
        }
    }

    /// The regime a prediction falls in, for its error bar and its power.
    pub fn regime(self) -> Regime {
        match self {
            Limiter::Latency => Regime::Latency,
            Limiter::Memory | Limiter::L2 => Regime::Memory,
            Limiter::BlockLaunch => Regime::Launch,
            _ => Regime::Compute,
        }
    }
}

/// Compute-, memory-, latency- or launch-bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    Compute,
    Memory,
    Latency,
    Launch,
}

impl Regime {
    pub const ALL: [Regime; 4] = [Regime::Compute, Regime::Memory, Regime::Latency, Regime::Launch];

    pub fn as_str(self) -> &'static str {
        match self {
            Regime::Compute => "compute",
            Regime::Memory => "memory",
            Regime::Latency => "latency",
            Regime::Launch => "launch",
        }
    }
}

/// One throughput resource of an SM: its demand per warp and its waiting-time scale.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Station {
    pub limiter: Limiter,
    /// `D_k` [cycles per warp].
    pub demand: f64,
    /// `q_k` [cycles].
    pub queue_scale: f64,
    /// `ρ_k = X·D_k` at the solution.
    pub utilisation: f64,
}

impl Station {
    fn wait(&self, throughput: f64) -> f64 {
        let rho = throughput * self.demand;
        self.queue_scale * rho / (1.0 - rho)
    }

    /// d wait / d throughput.
    fn wait_slope(&self, throughput: f64) -> f64 {
        let free = 1.0 - throughput * self.demand;
        self.queue_scale * self.demand / (free * free)
    }
}

/// The intermediates of one evaluation and the kernel time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Output {
    pub warps_per_block: f64,
    /// Eq. 4.2.
    pub warps_launched: f64,
    /// Blocks resident per SM (occupancy calculator, or `occupancy` / warps per block).
    pub active_blocks_per_sm: f64,
    /// `N` [warps/SM].
    pub active_warps_per_sm: f64,
    /// SMs given at least one block.
    pub active_sms: f64,
    /// Blocks of the busiest SM, in full waves and in the last, partial wave.
    pub full_waves: f64,
    pub tail_blocks: f64,
    pub stations: Vec<Station>,
    /// `X` [warps/cycle/SM] in the full waves.
    pub warp_throughput: f64,
    /// `R` [cycles]: a warp's lifetime under load in the full waves.
    pub warp_lifetime: f64,
    pub cycles: f64,
    pub launch_overhead: f64,
    /// Launch overhead plus cycles / clock [s].
    pub seconds: f64,
    /// DRAM bytes of the grid / time [bytes/s].
    pub effective_bandwidth: f64,
    pub limiter: Limiter,
    /// The busiest compute resource's and the memory system's utilisation.
    pub compute_utilisation: f64,
    pub memory_utilisation: f64,
    /// Mean board power over `seconds` (idle during the launch overhead) [W], if calibrated.
    pub power: Option<f64>,
    /// The compute-, memory-, latency- or launch-bound regime of `limiter`.
    pub regime: Regime,
    /// The error bar of `seconds`, if the device has error bars.
    pub error_bar: Option<ErrorBar>,
}

impl Power {
    /// Board power at these utilisations [W].
    pub fn at(&self, compute_utilisation: f64, memory_utilisation: f64) -> f64 {
        self.idle + self.compute * compute_utilisation + self.memory * memory_utilisation
    }
}

/// `H_m − 1`: the expected maximum of `m` unit exponentials, less their mean.
fn harmonic_excess(m: f64) -> f64 {
    (2..=m.round().max(1.0) as u64).map(|k| 1.0 / k as f64).sum()
}

/// Warp throughput `X` with `warps` resident: the root of `g(X) = X·R(X) − warps`, which
/// exists and is unique since `R` grows with `X` from `latency_bound` to infinity at
/// `1 / max D`. `g` is increasing and convex there, so Newton's method, kept inside the
/// bracket of the root (bisection where a step would leave it), converges in a few steps
/// where bisection alone takes some forty; calibrations evaluate the model millions of times.
fn warp_throughput(warps: f64, latency_bound: f64, stations: &[Station]) -> f64 {
    let max_demand = stations.iter().map(|s| s.demand).fold(0.0, f64::max);
    let saturation = if max_demand > 0.0 {
        1.0 / max_demand
    } else {
        f64::INFINITY
    };
    let (mut lo, mut hi) = (0.0, (warps / latency_bound).min(saturation));
    let mut x = if hi < saturation { hi } else { 0.5 * hi };
    for _ in 0..200 {
        let lifetime = latency_bound + stations.iter().map(|s| s.wait(x)).sum::<f64>();
        let slope: f64 = stations.iter().map(|s| s.wait_slope(x)).sum();
        let g = x * lifetime - warps;
        let newton = x - g / (lifetime + x * slope);
        // Converged before the bracket test: a step below the last bit lands on `x` itself,
        // which the open bracket would reject and halve.
        if g == 0.0 || (newton - x).abs() <= x * 1e-13 {
            return newton;
        }
        if g < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        if hi - lo <= hi * 1e-13 {
            return 0.5 * (lo + hi);
        }
        x = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
    }
    x
}

/// The blocks of `k` resident on one SM with `limits` (the kernel's `occupancy` where it
/// states one, else the occupancy calculator's): the model's rule, which a calibration that
/// counts a launch's rounds of resident warps takes too (hetsim_lab's latency fit).
pub fn resident_blocks(limits: &'static occupancy::Limits, k: &Kernel, warps_per_block: f64) -> f64 {
    match k.occupancy {
        Some(warps) => (warps / warps_per_block).max(1.0),
        None => {
            let threads = k.block_size.min(f64::from(limits.max_threads_per_block)) as u32;
            let out = occupancy::evaluate(&occupancy::Input {
                limits,
                threads_per_block: threads,
                registers_per_thread: k.registers_per_thread.clamp(1, limits.max_registers_per_thread),
                shared_memory_per_block: k.shared_memory_per_block,
            });
            f64::from(out.active_blocks_per_sm)
        }
    }
}

fn stations(d: &Device, k: &Kernel, active_sms: f64, warps_per_block: f64, warps: Warps) -> Vec<Station> {
    let clock = d.sm_clock_mhz * 1e6;
    let pipe = |limiter, count: f64, lanes: f64| {
        let demand = count * d.warp_size / lanes;
        (limiter, demand, demand)
    };
    let issue = k.issued_instructions / (d.schedulers * d.issue_efficiency);
    let [memory, l2, l1] = memory_demands(d, k, active_sms, warps);
    let launch = active_sms * clock / (d.block_launch_rate * warps_per_block);
    [
        (Limiter::Issue, issue, issue),
        pipe(Limiter::Fp32, k.fp32_instructions, d.lanes.fp32),
        pipe(Limiter::Int, k.int_instructions, d.lanes.int),
        pipe(Limiter::Sfu, k.sfu_instructions, d.lanes.sfu),
        pipe(Limiter::Fp64, k.fp64_instructions, d.lanes.fp64),
        (Limiter::L1, l1, l1),
        (Limiter::L2, l2, l2),
        (Limiter::Memory, memory, d.memory_queue_cycles),
        (Limiter::BlockLaunch, launch, launch),
    ]
    .into_iter()
    .filter(|(_, demand, _)| *demand > 0.0)
    .map(|(limiter, demand, queue_scale)| Station {
        limiter,
        demand,
        queue_scale,
        utilisation: 0.0,
    })
    .collect()
}

/// The kernel time and its intermediates (see the module's equations).
pub fn evaluate(input: &Input) -> Output {
    let (d, k) = (&input.device, &input.kernel);
    let warps_per_block = (k.block_size / d.warp_size).ceil();
    let warps_launched = k.grid_size * warps_per_block;
    let active_sms = d.sms.min(k.grid_size);
    let active_blocks_per_sm = resident_blocks(d.limits, k, warps_per_block);
    let blocks_of_busiest_sm = (k.grid_size / active_sms).ceil();
    let full_waves = (blocks_of_busiest_sm / active_blocks_per_sm).floor();
    let tail_blocks = blocks_of_busiest_sm - full_waves * active_blocks_per_sm;
    let warps = Warps {
        launched: warps_launched,
        wave: active_sms * active_blocks_per_sm * warps_per_block,
    };
    let mut stations = stations(d, k, active_sms, warps_per_block, warps);
    let latency_bound = latency_bound(d, k);
    let skew = 1.0 + d.warp_skew * harmonic_excess(warps_per_block);
    let throughput = |blocks: f64| warp_throughput(blocks * warps_per_block / skew, latency_bound, &stations);
    let steady = if full_waves > 0.0 {
        active_blocks_per_sm
    } else {
        tail_blocks
    };
    let warp_throughput = throughput(steady);
    let tail = if full_waves > 0.0 && tail_blocks > 0.0 {
        tail_blocks * warps_per_block / throughput(tail_blocks)
    } else {
        0.0
    };
    let cycles = full_waves.max(1.0) * steady * warps_per_block / warp_throughput + tail;
    for s in &mut stations {
        s.utilisation = warp_throughput * s.demand;
    }
    let busiest = stations
        .iter()
        .copied()
        .fold(None::<Station>, |best, s| match best {
            Some(b) if b.utilisation >= s.utilisation => Some(b),
            _ => Some(s),
        });
    let limiter = match busiest {
        Some(s) if s.utilisation >= 0.5 => s.limiter,
        _ => Limiter::Latency,
    };
    let running = cycles / (d.sm_clock_mhz * 1e6);
    let seconds = d.launch_overhead + running;
    let utilisation = |memory: bool| {
        stations
            .iter()
            .filter(|s| (s.limiter.regime() == Regime::Memory) == memory && s.limiter != Limiter::BlockLaunch)
            .map(|s| s.utilisation)
            .fold(0.0, f64::max)
    };
    let (compute_utilisation, memory_utilisation) = (utilisation(false), utilisation(true));
    let power = d.power.as_ref().map(|p| {
        (p.idle * d.launch_overhead + p.at(compute_utilisation, memory_utilisation) * running) / seconds
    });
    Output {
        warps_per_block,
        warps_launched,
        active_blocks_per_sm,
        active_warps_per_sm: active_blocks_per_sm * warps_per_block,
        active_sms,
        full_waves,
        tail_blocks,
        stations,
        warp_throughput,
        warp_lifetime: steady * warps_per_block / warp_throughput,
        cycles,
        launch_overhead: d.launch_overhead,
        seconds,
        effective_bandwidth: warps_launched * dram_bytes(d, k, warps) / seconds,
        limiter,
        compute_utilisation,
        memory_utilisation,
        power,
        regime: limiter.regime(),
        error_bar: d.error_bars.as_ref().map(|bars| {
            bars.bar(
                limiter.regime(),
                warps_launched,
                active_blocks_per_sm * warps_per_block,
            )
        }),
    }
}

/// The pipe lanes per SM of a compute capability (CUDA C++ Programming Guide, "Throughput of
/// Native Arithmetic Instructions", in results per clock per SM: FP32 add/multiply, 32-bit
/// integer add, reciprocal/exp (SFU), FP64 add/multiply).
pub fn lanes_of(compute_capability: &str) -> Option<Lanes> {
    let (fp32, int, sfu, fp64) = match compute_capability {
        "5.2" | "6.1" => (128.0, 128.0, 32.0, 4.0),
        "6.0" => (64.0, 64.0, 16.0, 32.0),
        "7.0" | "8.0" => (64.0, 64.0, 16.0, 32.0),
        "7.5" => (64.0, 64.0, 16.0, 2.0),
        "8.6" | "8.9" => (128.0, 64.0, 16.0, 2.0),
        "9.0" => (128.0, 64.0, 16.0, 64.0),
        _ => return None,
    };
    Some(Lanes { fp32, int, sfu, fp64 })
}
