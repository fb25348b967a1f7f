//! A launch's traffic through the memory hierarchy in the loaded-latency model: the kernel
//! keys `kernel_params` returns for it, and the demands it puts on DRAM, L2 and the L1/shared
//! data path ([`crate::hierarchy`] has the equations).

use crate::hierarchy;
use crate::params::{ParamError, ParamReader};

use super::{Device, Kernel};

/// A warp's traffic beyond L1's requests (`hetsim_kernel::emulate::WarpTraffic`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Traffic {
    /// `L2BytesTransferred`: bytes that miss in L1.
    pub l2_bytes: f64,
    /// `DRAMBytesTransferred`: bytes DRAM moves if L2 keeps what the launch touches.
    pub dram_bytes: f64,
    /// `L1Wavefronts`: the 128-byte lines its global accesses touch, access by access.
    pub l1_wavefronts: f64,
    /// `reuseExponent`: how the launch's reuse spans its blocks ([`hierarchy::wave_footprint`]).
    pub reuse_exponent: f64,
    /// `sharedWavefronts`.
    pub shared_wavefronts: f64,
    /// `barriers`: block barriers the warp waits at.
    pub barriers: f64,
}

/// Kernel parameter keys of the memory hierarchy, as `kernel_params` returns them.
pub mod traffic_keys {
    pub const L2_BYTES: &str = "L2BytesTransferred";
    pub const DRAM_BYTES: &str = "DRAMBytesTransferred";
    pub const L1_WAVEFRONTS: &str = "L1Wavefronts";
    pub const REUSE_EXPONENT: &str = "reuseExponent";
    pub const SHARED_WAVEFRONTS: &str = "sharedWavefronts";
    pub const BARRIERS: &str = "barriers";
}

impl Traffic {
    /// Reads the traffic keys: all of them, or none.
    pub(super) fn read(r: &mut ParamReader) -> Result<Option<Traffic>, ParamError> {
        let Some(l2_bytes) = r.optional_non_negative(traffic_keys::L2_BYTES)? else {
            return Ok(None);
        };
        Ok(Some(Traffic {
            l2_bytes,
            dram_bytes: r.non_negative(traffic_keys::DRAM_BYTES)?,
            l1_wavefronts: r.non_negative(traffic_keys::L1_WAVEFRONTS)?,
            reuse_exponent: r.within_or(traffic_keys::REUSE_EXPONENT, [-1.0, 0.0], 0.0)?,
            shared_wavefronts: r.non_negative_or(traffic_keys::SHARED_WAVEFRONTS, 0.0)?,
            barriers: r.non_negative_or(traffic_keys::BARRIERS, 0.0)?,
        }))
    }
}

/// The warps of a launch, and of one wave of it (every active SM's resident warps).
#[derive(Clone, Copy)]
pub(super) struct Warps {
    pub(super) launched: f64,
    pub(super) wave: f64,
}

/// Bytes DRAM moves per warp: every requested byte where the device or the kernel lacks the
/// hierarchy (the thesis's model), else [`hierarchy::dram_bytes`] of a wave's footprint.
pub(super) fn dram_bytes(d: &Device, k: &Kernel, warps: Warps) -> f64 {
    match (&d.hierarchy, &k.traffic) {
        (Some(h), Some(t)) => {
            let footprint =
                hierarchy::wave_footprint(t.dram_bytes, warps.wave, warps.launched, t.reuse_exponent);
            hierarchy::dram_bytes(t.l2_bytes, t.dram_bytes, footprint, h.l2_size)
        }
        _ => k.gmem_bytes,
    }
}

/// DRAM's, L2's and L1's demands per warp [cycles] (see [`crate::hierarchy`]).
pub(super) fn memory_demands(d: &Device, k: &Kernel, active_sms: f64, warps: Warps) -> [f64; 3] {
    let per_byte = active_sms * d.sm_clock_mhz * 1e6;
    let dram = dram_bytes(d, k, warps) * per_byte / d.memory_bandwidth;
    match (&d.hierarchy, &k.traffic) {
        (Some(h), Some(t)) => [
            dram,
            t.l2_bytes * per_byte / h.l2_bandwidth,
            t.l1_wavefronts / h.l1_wavefronts_per_cycle + t.shared_wavefronts / h.shared_wavefronts_per_cycle,
        ],
        _ => [dram, 0.0, 0.0],
    }
}

/// `latencyBound` plus the barriers' releases.
pub(super) fn latency_bound(d: &Device, k: &Kernel) -> f64 {
    match (&d.hierarchy, &k.traffic) {
        (Some(h), Some(t)) => k.latency_bound + t.barriers * h.barrier_cycles,
        _ => k.latency_bound,
    }
}
