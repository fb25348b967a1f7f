//! Kernel execution time after Volkov, as simplified and extended by Gajger
//! (seed 004, section 4.4, eqs. 4.1–4.3 and 4.5–4.7).

use serde::Serialize;

use crate::params::{ParamError, ParamReader, Params};

/// Hardware and kernel parameters, named as in the thesis (Figures 5.20 and 5.23).
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// `SMs`: streaming multiprocessors.
    pub sms: f64,
    /// `SMCoreClock` [MHz].
    pub sm_core_clock_mhz: f64,
    /// `CUDACores` per SM.
    pub cuda_cores: f64,
    /// `schedulers`: warp schedulers per SM.
    pub schedulers: f64,
    /// `warpSize` (32 on every NVIDIA architecture).
    pub warp_size: f64,
    /// `GMEMThroughput` [bytes/cycle/SM], eq. 4.7.
    pub gmem_throughput: f64,
    /// `gridSize`: blocks in the grid.
    pub grid_size: f64,
    /// `blockSize`: threads per block.
    pub block_size: f64,
    /// `CUDACoreInstructions` per warp (INS_CUDA).
    pub cuda_core_instructions: f64,
    /// `issuedInstructions` per warp (INS_issued, after dual-issues and re-issues).
    pub issued_instructions: f64,
    /// `GMEMBytesTransferred` per warp.
    pub gmem_bytes_transferred: f64,
    /// `latencyBound` [cycles]: critical path of the kernel's execution graph.
    pub latency_bound: f64,
    /// `occupancy` [warps/SM].
    pub occupancy: f64,
    /// `kernelExecutionLambda` (λ of eq. 4.1, calibrated by eq. 4.4).
    pub kernel_execution_lambda: f64,
}

impl Input {
    pub fn from_params(params: Params) -> Result<Self, ParamError> {
        let mut r = ParamReader::new(params);
        let input = Input {
            sms: r.positive("SMs")?,
            sm_core_clock_mhz: r.positive("SMCoreClock")?,
            cuda_cores: r.positive("CUDACores")?,
            schedulers: r.positive("schedulers")?,
            warp_size: r.positive_or("warpSize", 32.0)?,
            gmem_throughput: r.positive("GMEMThroughput")?,
            grid_size: r.non_negative("gridSize")?,
            block_size: r.non_negative("blockSize")?,
            cuda_core_instructions: r.non_negative("CUDACoreInstructions")?,
            issued_instructions: r.non_negative("issuedInstructions")?,
            gmem_bytes_transferred: r.non_negative("GMEMBytesTransferred")?,
            latency_bound: r.positive("latencyBound")?,
            occupancy: r.positive("occupancy")?,
            kernel_execution_lambda: r.positive_or("kernelExecutionLambda", 1.0)?,
        };
        r.finish()?;
        Ok(input)
    }
}

impl Input {
    /// The thesis's saxpy2 kernel on the GTX 970 (seed 004, Figure 5.23 with Table 6.1's
    /// GPU): `computeIntensity` = `a`, occupancy 64, blockSize 256, 4·10⁸ elements, λ from
    /// section 6. INS_CUDA = 23 + 4a, INS_issued = 26 + 4a, 384 bytes per warp, latency
    /// bound 942 + 24a (eq. 5.1).
    pub fn gajger_saxpy2_gtx970(a: f64) -> Self {
        let elements = 4e8_f64;
        Input {
            sms: 13.0,
            sm_core_clock_mhz: 1253.0,
            cuda_cores: 128.0,
            schedulers: 4.0,
            warp_size: 32.0,
            gmem_throughput: 13.78,
            grid_size: ((elements + 255.0) / 256.0).floor(),
            block_size: 256.0,
            cuda_core_instructions: 23.0 + 4.0 * a,
            issued_instructions: 26.0 + 4.0 * a,
            gmem_bytes_transferred: 384.0,
            latency_bound: 942.0 + 24.0 * a,
            occupancy: 64.0,
            kernel_execution_lambda: 0.703787,
        }
    }
}

/// What limits the warp throughput (eq. 4.3 and the max of eq. 4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    Latency,
    CudaCores,
    Issue,
    GlobalMemory,
}

impl Limiter {
    pub fn as_str(self) -> &'static str {
        match self {
            Limiter::Latency => "latency",
            Limiter::CudaCores => "cuda_cores",
            Limiter::Issue => "issue",
            Limiter::GlobalMemory => "global_memory",
        }
    }
}

/// The intermediate values of eqs. 4.1–4.6 and the kernel time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Output {
    /// Eq. 4.2.
    pub warps_launched: f64,
    /// warpSize × INS_CUDA / CUDA cores [cycles/warp], first term of eq. 4.5.
    pub cpw_cuda: f64,
    /// INS_issued / schedulers [cycles/warp], second term of eq. 4.5.
    pub cpw_issue: f64,
    /// GMem bytes / GMem bandwidth [cycles/warp], third term of eq. 4.5.
    pub cpw_gmem: f64,
    /// Eq. 4.6 [warps/cycle].
    pub throughput_bound: f64,
    /// occupancy / latency bound [warps/cycle], first term of eq. 4.3.
    pub latency_bound_throughput: f64,
    /// Eq. 4.3 [warps/cycle/SM].
    pub warp_throughput: f64,
    /// Eq. 4.1 in SM cycles.
    pub cycles: f64,
    /// Eq. 4.1 [s].
    pub seconds: f64,
    pub limiter: Limiter,
}

/// Eq. 4.2: grid size × ⌈block size / warp size⌉.
pub fn warps_launched(grid_size: f64, block_size: f64, warp_size: f64) -> f64 {
    grid_size * (block_size / warp_size).ceil()
}

/// Eqs. 4.1–4.6: the kernel time and every intermediate of it.
pub fn evaluate(i: &Input) -> Output {
    let warps_launched = warps_launched(i.grid_size, i.block_size, i.warp_size);
    let cpw_cuda = i.warp_size * i.cuda_core_instructions / i.cuda_cores;
    let cpw_issue = i.issued_instructions / i.schedulers;
    let cpw_gmem = i.gmem_bytes_transferred / i.gmem_throughput;
    let (cpw_bound, throughput_limiter) = [
        (cpw_cuda, Limiter::CudaCores),
        (cpw_issue, Limiter::Issue),
        (cpw_gmem, Limiter::GlobalMemory),
    ]
    .into_iter()
    .fold((f64::NEG_INFINITY, Limiter::CudaCores), |best, term| {
        if term.0 > best.0 {
            term
        } else {
            best
        }
    });
    let throughput_bound = 1.0 / cpw_bound;
    let latency_bound_throughput = i.occupancy / i.latency_bound;
    let (warp_throughput, limiter) = if latency_bound_throughput < throughput_bound {
        (latency_bound_throughput, Limiter::Latency)
    } else {
        (throughput_bound, throughput_limiter)
    };
    let cycles = warps_launched / (warp_throughput * i.sms * i.kernel_execution_lambda);
    Output {
        warps_launched,
        cpw_cuda,
        cpw_issue,
        cpw_gmem,
        throughput_bound,
        latency_bound_throughput,
        warp_throughput,
        cycles,
        seconds: cycles / (i.sm_core_clock_mhz * 1e6),
        limiter,
    }
}

/// Eq. 4.7: peak global-memory throughput per SM per SM cycle [bytes/cycle].
/// Clocks in MHz (only their ratio matters), bus width in bits, data rate 2 (GDDR3, HBM)
/// or 4 (GDDR5).
pub fn gmem_throughput(
    memory_clock_mhz: f64,
    bus_width_bits: f64,
    data_rate: f64,
    sms: f64,
    sm_clock_mhz: f64,
) -> f64 {
    memory_clock_mhz * (bus_width_bits / 8.0) * data_rate / (sms * sm_clock_mhz)
}

/// Inputs of [`gmem_throughput`], read by the key names of the catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct GmemInput {
    pub memory_clock_mhz: f64,
    pub bus_width_bits: f64,
    pub data_rate: f64,
    pub sms: f64,
    pub sm_clock_mhz: f64,
}

/// Eq. 4.7 with its one output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GmemOutput {
    #[serde(rename = "GMEMThroughput")]
    pub gmem_throughput: f64,
    /// The whole device's peak bandwidth [bytes/s].
    pub device_bandwidth: f64,
}

impl GmemInput {
    pub fn from_params(params: Params) -> Result<Self, ParamError> {
        let mut r = ParamReader::new(params);
        let input = GmemInput {
            memory_clock_mhz: r.positive("memoryClock")?,
            bus_width_bits: r.positive("busWidth")?,
            data_rate: r.positive("dataRate")?,
            sms: r.positive("SMs")?,
            sm_clock_mhz: r.positive("SMCoreClock")?,
        };
        r.finish()?;
        Ok(input)
    }

    pub fn evaluate(&self) -> GmemOutput {
        GmemOutput {
            gmem_throughput: gmem_throughput(
                self.memory_clock_mhz,
                self.bus_width_bits,
                self.data_rate,
                self.sms,
                self.sm_clock_mhz,
            ),
            device_bandwidth: self.memory_clock_mhz * 1e6 * (self.bus_width_bits / 8.0) * self.data_rate,
        }
    }
}
