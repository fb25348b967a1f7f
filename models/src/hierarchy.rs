//! The memory hierarchy's part in a kernel's time, shared by the closed-form `gpu-queueing`
//! model and TEG: what a launch's traffic (measured by the kernel analyser on emulated blocks,
//! `hetsim_kernel::emulate::traffic`) costs on one GPU.
//!
//! Per warp, the analyser gives the bytes requested from L1 (`GMEMBytesTransferred`), the L1
//! wavefronts of those requests (`L1Wavefronts`, one per 128-byte line an access touches),
//! the bytes that miss in L1 and go to L2 (`L2BytesTransferred`), the bytes DRAM must move if
//! L2 kept everything the launch touches (`DRAMBytesTransferred`, its compulsory traffic), the
//! shared-memory wavefronts (`sharedWavefronts`) and the block barriers (`barriers`). The GPU
//! adds its L2 capacity and bandwidths; the equations (docs/MODELS.md, "The memory
//! hierarchy") are:
//!
//! ```text
//! footprint   F = DRAM · W · (W / warps)^e          (bytes a wave of W resident warps touches)
//! overflow    o = max(0, 1 − L2Size / F)             (share of L2's reuse lost to eviction)
//! dram        = DRAM + (L2 − DRAM)⁺ · o              (bytes DRAM moves per warp)
//! D_L1        = L1Wavefronts / L1WavefrontsPerCycle + sharedWavefronts / sharedWavefrontsPerCycle
//! D_L2        = L2 · SMs · clock / L2Bandwidth       (cycles per warp, as eq. 4.7's memory)
//! latency    += barriers · barrierCycles
//! ```
//!
//! The footprint is what L2 must hold for the reuse to happen: the distinct bytes of the
//! blocks that run at once (a wave: every SM's resident warps), where `e = reuseExponent`
//! (from the analyser, −1 to 0) says how the distinct bytes of `n` blocks grow slower than `n`
//! when blocks share (a naive SGEMM's B matrix is read by every block row; a stencil's halo is
//! its neighbours'). A footprint twice L2's capacity lets half of the reuse through, as if
//! what L2 cannot hold were evicted before its reuse.

use std::sync::OnceLock;

use serde::Serialize;

use crate::data_file;
use crate::params::{ParamError, ParamReader};

/// A GPU's memory hierarchy beyond DRAM.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hierarchy {
    /// `L2Size` [bytes].
    pub l2_size: f64,
    /// `L2Bandwidth` [bytes/s], the whole GPU's.
    pub l2_bandwidth: f64,
    /// `L1WavefrontsPerCycle`: 128-byte lines one SM's L1 looks up a cycle.
    pub l1_wavefronts_per_cycle: f64,
    /// `sharedWavefrontsPerCycle`: passes through the shared-memory banks an SM makes a cycle.
    pub shared_wavefronts_per_cycle: f64,
    /// `barrierCycles`: from the last warp's arrival at a block barrier to its release.
    pub barrier_cycles: f64,
}

/// Device attribute keys.
pub mod keys {
    pub const L2_SIZE: &str = "L2Size";
    pub const L2_BANDWIDTH: &str = "L2Bandwidth";
    pub const L1_WAVEFRONTS_PER_CYCLE: &str = "L1WavefrontsPerCycle";
    pub const SHARED_WAVEFRONTS_PER_CYCLE: &str = "sharedWavefrontsPerCycle";
    pub const BARRIER_CYCLES: &str = "barrierCycles";
    /// Every key, for models that pass them on.
    pub const ALL: [&str; 5] = [
        L2_SIZE,
        L2_BANDWIDTH,
        L1_WAVEFRONTS_PER_CYCLE,
        SHARED_WAVEFRONTS_PER_CYCLE,
        BARRIER_CYCLES,
    ];
}

impl Hierarchy {
    /// Reads the hierarchy's attributes: all of them, or none (a GPU described only by the
    /// thesis's attributes, whose kernels then move every requested byte to DRAM).
    pub fn read(r: &mut ParamReader) -> Result<Option<Hierarchy>, ParamError> {
        let Some(l2_size) = r.optional_positive(keys::L2_SIZE)? else {
            return Ok(None);
        };
        Ok(Some(Hierarchy {
            l2_size,
            l2_bandwidth: r.positive(keys::L2_BANDWIDTH)?,
            l1_wavefronts_per_cycle: r.positive(keys::L1_WAVEFRONTS_PER_CYCLE)?,
            shared_wavefronts_per_cycle: r.positive(keys::SHARED_WAVEFRONTS_PER_CYCLE)?,
            barrier_cycles: r.non_negative(keys::BARRIER_CYCLES)?,
        }))
    }
}

/// An architecture's hierarchy per SM and cycle, for [`Hierarchy::of`].
#[derive(Clone, Debug, PartialEq)]
struct PerSm {
    compute_capability: String,
    l1_wavefronts_per_cycle: f64,
    shared_wavefronts_per_cycle: f64,
    /// L2 bytes a cycle per SM.
    l2_bytes_per_cycle: f64,
    barrier_cycles: f64,
}

/// The architecture data files (models/data/, [`crate::data_file`]): per SM and cycle, each
/// number with what it is (datasheet, fitted, assumed) and from what. Hopper's L2 bandwidth is
/// fitted on the H100's L2-resident saxpy2 launches; lab/src/l2_fit.rs fits it again.
const ARCHITECTURE_FILES: [(&str, &str); 1] =
    [("models/data/hopper.toml", include_str!("../data/hopper.toml"))];

/// The key of an architecture file's L2 bandwidth per SM and cycle.
pub const L2_BYTES_PER_CYCLE_PER_SM: &str = "L2BytesPerCyclePerSM";

/// The architecture files, read once.
fn architectures() -> &'static [PerSm] {
    static READ: OnceLock<Vec<PerSm>> = OnceLock::new();
    READ.get_or_init(|| {
        ARCHITECTURE_FILES
            .iter()
            .map(|(path, text)| read_architecture(text).unwrap_or_else(|e| panic!("{path}: {e}")))
            .collect()
    })
}

fn read_architecture(text: &str) -> Result<PerSm, String> {
    let numbers = data_file::values(text)?;
    let get = |key: &str| numbers.get(key).copied().ok_or_else(|| format!("no [{key}]"));
    Ok(PerSm {
        compute_capability: data_file::text_field(text, "computeCapability")?,
        l1_wavefronts_per_cycle: get(keys::L1_WAVEFRONTS_PER_CYCLE)?,
        shared_wavefronts_per_cycle: get(keys::SHARED_WAVEFRONTS_PER_CYCLE)?,
        l2_bytes_per_cycle: get(L2_BYTES_PER_CYCLE_PER_SM)?,
        barrier_cycles: get(keys::BARRIER_CYCLES)?,
    })
}

/// An architecture file's number `key` for compute capability `compute_capability`: what TEG
/// reads of it, and what a calibration's fit is checked against.
pub fn architecture_value(compute_capability: &str, key: &str) -> Option<f64> {
    let (_, text) = ARCHITECTURE_FILES.iter().find(|(_, text)| {
        data_file::text_field(text, "computeCapability").as_deref() == Ok(compute_capability)
    })?;
    data_file::values(text).ok()?.get(key).copied()
}

impl Hierarchy {
    /// The hierarchy of a GPU of compute capability `cc` with `sms` SMs at `sm_clock_mhz` and
    /// `l2_size` bytes of L2, where an architecture file gives its figures (Hopper only; other
    /// GPUs keep the thesis's model until measured).
    pub fn of(cc: &str, sms: f64, sm_clock_mhz: f64, l2_size: f64) -> Option<Hierarchy> {
        let a = architectures().iter().find(|a| a.compute_capability == cc)?;
        Some(Hierarchy {
            l2_size,
            l2_bandwidth: a.l2_bytes_per_cycle * sms * sm_clock_mhz * 1e6,
            l1_wavefronts_per_cycle: a.l1_wavefronts_per_cycle,
            shared_wavefronts_per_cycle: a.shared_wavefronts_per_cycle,
            barrier_cycles: a.barrier_cycles,
        })
    }

    /// The device attributes, by [`keys`].
    pub fn attributes(&self) -> [(&'static str, f64); 5] {
        [
            (keys::L2_SIZE, self.l2_size),
            (keys::L2_BANDWIDTH, self.l2_bandwidth),
            (keys::L1_WAVEFRONTS_PER_CYCLE, self.l1_wavefronts_per_cycle),
            (
                keys::SHARED_WAVEFRONTS_PER_CYCLE,
                self.shared_wavefronts_per_cycle,
            ),
            (keys::BARRIER_CYCLES, self.barrier_cycles),
        ]
    }
}

/// The distinct bytes a wave of `wave_warps` warps touches, of a launch of `warps` warps that
/// touches `dram` bytes per warp with reuse exponent `exponent`.
pub fn wave_footprint(dram: f64, wave_warps: f64, warps: f64, exponent: f64) -> f64 {
    let wave = wave_warps.clamp(1.0, warps.max(1.0));
    dram * wave * (wave / warps.max(1.0)).powf(exponent.clamp(-1.0, 0.0))
}

/// Bytes DRAM moves per warp: the compulsory `dram` bytes, plus the share `o` of the L2 hits
/// (`l2 − dram`) that a `footprint` overflowing `l2_size` evicts before their reuse.
pub fn dram_bytes(l2: f64, dram: f64, footprint: f64, l2_size: f64) -> f64 {
    let overflow = if footprint > l2_size {
        1.0 - l2_size / footprint
    } else {
        0.0
    };
    dram + (l2 - dram).max(0.0) * overflow
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hopper_comes_from_its_architecture_file() {
        let h = Hierarchy::of("9.0", 132.0, 1980.0, 52_428_800.0).expect("Hopper");
        // 15.3 bytes a cycle per SM × 132 SMs × 1.98 GHz.
        assert!((h.l2_bandwidth - 15.3 * 132.0 * 1.98e9).abs() < 1.0);
        assert_eq!((h.shared_wavefronts_per_cycle, h.barrier_cycles), (1.0, 20.0));
        assert_eq!(architecture_value("9.0", L2_BYTES_PER_CYCLE_PER_SM), Some(15.3));
        assert!(Hierarchy::of("8.0", 108.0, 1410.0, 4e7).is_none());
        let e = read_architecture("computeCapability = \"9.0\"\n").expect_err("no numbers");
        assert!(e.contains("[L1WavefrontsPerCycle]"), "{e}");
    }

    #[test]
    fn a_footprint_within_l2_keeps_its_reuse() {
        // A 1 MiB footprint in a 50 MiB L2: only the compulsory bytes.
        assert_eq!(dram_bytes(4096.0, 1024.0, 1048576.0, 50.0 * 1048576.0), 1024.0);
        // Twice L2: half of the 3 KiB of L2 hits go on to DRAM.
        assert_eq!(
            dram_bytes(4096.0, 1024.0, 1_024_000.0, 512_000.0),
            1024.0 + 3072.0 * 0.5
        );
        // A streaming kernel has no reuse to lose; DRAM's 64-byte reads may exceed L2's bytes.
        assert_eq!(dram_bytes(128.0, 256.0, 1e12, 1.0), 256.0);
    }

    #[test]
    fn a_wave_touches_its_share_unless_blocks_share_beyond_it() {
        // No sharing (a stencil, a stream): 1000 of 10⁶ warps touch 1000 × their bytes.
        assert_eq!(wave_footprint(256.0, 1000.0, 1e6, 0.0), 256_000.0);
        // Square-tile sharing (e = −½): a thousandth of the blocks touches √1000 times more
        // than its share; every block sharing with every other (e = −1): the whole launch.
        let half = wave_footprint(256.0, 1000.0, 1e6, -0.5);
        assert!((half / (256_000.0 * 1000f64.sqrt()) - 1.0).abs() < 1e-12);
        assert!((wave_footprint(256.0, 1000.0, 1e6, -1.0) / 256e6 - 1.0).abs() < 1e-12);
        // A wave larger than the launch is the launch.
        assert_eq!(wave_footprint(256.0, 1e9, 1e6, -0.5), 256e6);
    }

    proptest! {
        #[test]
        fn dram_lies_between_compulsory_and_every_l1_miss(
            l2 in 0.0f64..1e6, share in 0.0f64..=1.0, footprint in 0.0f64..1e12, size in 1.0f64..1e9,
        ) {
            let dram = l2 * share;
            let moved = dram_bytes(l2, dram, footprint, size);
            prop_assert!(moved >= dram - 1e-9 && moved <= l2 + 1e-9);
        }
    }
}
