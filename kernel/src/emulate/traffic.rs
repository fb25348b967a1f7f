//! A launch's traffic through the memory hierarchy, measured once on emulated blocks: the
//! sectors its global accesses request from L1, those that miss there and go on to L2, those
//! that DRAM must move when L2 holds everything the launch touches, the wavefronts of its
//! shared accesses, and its block barriers. Both kernel-time models take their memory
//! traffic from here: the closed-form `gpu-queueing` model through `kernel_params` (its
//! `L2BytesTransferred`, `DRAMBytesTransferred`, `sharedWavefronts` and `barriers`) and TEG,
//! whose issue engine replays the same blocks. L2's capacity is the device's, so it is
//! weighed in by `hetsim_models::hierarchy`, not here.
//!
//! - **L1.** Within a block the warps run nearly in step, so whichever warp loads a sector
//!   first misses and the others hit; blocks resident together share little, so nothing
//!   carries over from block to block ([`Program::start_block`]). Stores always leave the SM.
//! - **L2** (unbounded). Of the sectors blocks miss in L1, only the distinct ones of the
//!   launch reach DRAM. Sharing between blocks makes that share fall with the blocks counted,
//!   as a power of their number (a naive SGEMM's row and column reuse halves it for each
//!   doubling of a square tile's side; a stencil's halo leaves it flat), so it is measured on
//!   two corner tiles of the grid and extrapolated to the whole grid as that power law, its
//!   exponent clamped to [−1, 0].
//! - **DRAM.** A loaded sector is read with the other half of its 64-byte pair
//!   ([`Program::touched_dram_sectors`]).
//!
//! The tiles keep no instruction stream: their sums are the warps' profiles and the program's
//! [`Sums`](super::simt::Sums), so a long loop's skipped trips are counted at once
//! (`simt::skip`) where every access of the loop moves by whole sectors or whole rows of
//! banks a trip (the SGEMMs': at N = 16384 they cost about what they do at 4096); what is
//! left per trip is the block path's entries.

use super::launch::Geometry;
use super::memory::SECTOR;
use super::simt::Program;
use super::{checked_launch, Launch, LIMITS};
use crate::arch::Arch;
use crate::cfg::Cfg;
use crate::error::Result;
use crate::latency::LatencyTable;
use crate::sass::Kernel;
use serde::Serialize;

/// Warps [`traffic`] emulates at most.
const TILE_WARPS: u64 = 512;

/// Warp instructions [`traffic`] emulates at most, beyond the first block and the smallest
/// tiles (2 × 2 blocks, or 4 in a row).
const TILE_INSTRUCTIONS: u64 = 1 << 19;

/// The DRAM fraction of a 2D grid of `blocks` blocks as `a + b / √n`, through the fractions
/// `f` of the two tiles of `n` blocks: a tile's distinct sectors are its blocks' own (∝ n) plus
/// what it shares along its perimeter (∝ √n). A stencil's halo keeps `a` > 0, where a power
/// law would let its fraction fall without end; a naive SGEMM's rows and columns make `a` = 0,
/// the power law's −½. `None` where the tiles fall faster than a perimeter allows (`a` < 0),
/// for the power law to take over.
fn perimeter_law(n: [f64; 2], f: [f64; 2], blocks: f64) -> Option<f64> {
    let edge = |n: f64| n.max(1.0).powf(-0.5);
    if n[1] <= n[0] || f[0] <= f[1] {
        return (n[1] > n[0]).then_some(f[1]);
    }
    let b = (f[0] - f[1]) / (edge(n[0]) - edge(n[1]));
    let a = f[1] - b * edge(n[1]);
    (a >= 0.0).then(|| a + b * edge(blocks))
}

/// A launch's memory traffic per block, from the blocks [`traffic`] emulates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Traffic {
    pub warps_per_block: f64,
    /// Sectors the block's global accesses request (L1's requests).
    pub requested_sectors_per_block: f64,
    /// Sectors the block misses in L1 (its distinct loaded sectors plus every stored one):
    /// L2's requests.
    pub missed_sectors_per_block: f64,
    /// Distinct sectors the launch touches over the sectors its blocks miss in L1: the share
    /// of L1 misses that an unbounded L2 sends on to DRAM, where the rest hit.
    pub dram_fraction: f64,
    /// DRAM sectors per distinct sector (1 to 2): loads read whole 64-byte pairs.
    pub dram_granularity: f64,
    /// How the share of L1 misses that are the launch's distinct sectors falls with the blocks
    /// counted: `dram_fraction(n) ∝ n^reuse_exponent`, from −1 (every block shares with every
    /// other) to 0 (no sharing beyond neighbours).
    pub reuse_exponent: f64,
    /// L1 wavefronts of the block's global accesses: the distinct 128-byte lines of each.
    pub l1_wavefronts_per_block: f64,
    /// Wavefronts of the block's shared accesses (bank conflicts replay).
    pub shared_wavefronts_per_block: f64,
    /// The same without bank conflicts.
    pub conflict_free_wavefronts_per_block: f64,
    /// Block barriers the block's warps wait at, summed over its warps.
    pub barriers_per_block: f64,
}

/// One warp's share of a launch's traffic, in the units the models take.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WarpTraffic {
    /// Bytes requested from L1 (the thesis's `GMEMBytesTransferred`).
    pub requested_bytes: f64,
    /// Bytes that miss in L1 and are requested from L2.
    pub l2_bytes: f64,
    /// Bytes DRAM moves if L2 keeps everything the launch touches (its compulsory traffic).
    pub dram_bytes: f64,
    /// [`Traffic::reuse_exponent`]: how much of the launch's reuse spans more blocks than
    /// run at once (`hetsim_models::hierarchy::wave_footprint`).
    pub reuse_exponent: f64,
    /// L1 wavefronts of its global accesses (one per 128-byte line an access touches).
    pub l1_wavefronts: f64,
    pub shared_wavefronts: f64,
    pub barriers: f64,
}

impl Traffic {
    /// The share of requested sectors that miss in L1.
    pub fn l1_miss_ratio(&self) -> f64 {
        if self.requested_sectors_per_block > 0.0 {
            (self.missed_sectors_per_block / self.requested_sectors_per_block).min(1.0)
        } else {
            1.0
        }
    }

    /// A warp's share, given the bytes a warp requests on average over the whole launch (the
    /// emulation's `gmem_bytes`, which covers every warp, where the tiles cover a corner).
    pub fn per_warp(&self, requested_bytes: f64) -> WarpTraffic {
        let l2_bytes = requested_bytes * self.l1_miss_ratio();
        let per_warp = |x: f64| x / self.warps_per_block.max(1.0);
        WarpTraffic {
            requested_bytes,
            l2_bytes,
            dram_bytes: l2_bytes * self.dram_fraction * self.dram_granularity,
            reuse_exponent: self.reuse_exponent,
            l1_wavefronts: per_warp(self.l1_wavefronts_per_block),
            shared_wavefronts: per_warp(self.shared_wavefronts_per_block),
            barriers: per_warp(self.barriers_per_block),
        }
    }
}

/// Sums over the blocks emulated so far.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    requested: u64,
    missed: u64,
    l1_wavefronts: u64,
    wavefronts: u64,
    conflict_free: u64,
    barriers: u64,
    distinct: u64,
    dram: u64,
}

impl Tally {
    /// Runs block `b` (its loads split into hits and misses from its start, no stream kept)
    /// and adds its traffic; returns its warp instructions.
    fn add_block(&mut self, program: &mut Program, geometry: &Geometry, b: u64) -> Result<u64> {
        program.start_block();
        let mut instructions = 0;
        for w in geometry.warps_of(b) {
            let profile = program.run(w, geometry.warp(w))?;
            instructions += profile.executed;
            self.requested += profile.gmem_bytes / SECTOR;
            self.barriers += profile.barriers;
        }
        let sums = program.take_sums();
        self.missed += sums.missed;
        self.l1_wavefronts += sums.l1_wavefronts;
        self.wavefronts += sums.wavefronts;
        self.conflict_free += sums.conflict_free;
        Ok(instructions)
    }
}

/// Measures [`Traffic`] on two corner tiles of the grid, the larger with four times the
/// blocks: up to 8 × 8 blocks, or 32 in a row for a one-dimensional grid, and fewer where the
/// blocks are large or long, so that the tiles cost at most [`TILE_WARPS`] warps and
/// [`TILE_INSTRUCTIONS`] warp instructions (the first block, emulated first, tells).
pub fn traffic(
    kernel: &Kernel,
    cfg: &Cfg,
    arch: Arch,
    table: &LatencyTable,
    launch: &Launch,
) -> Result<Traffic> {
    let (geometry, bank) = checked_launch(kernel, arch, launch)?;
    let per_block = u64::from(geometry.warps_per_block);
    let [gx, gy, _] = geometry.grid.map(u64::from);
    let mut program = Program::new(kernel, cfg, arch, table, &bank, LIMITS.instructions).without_latency();
    program.count_touched();
    let mut tally = Tally::default();
    let first_block_instructions = tally.add_block(&mut program, &geometry, 0)?;
    let budget = (TILE_WARPS / per_block)
        .min(TILE_INSTRUCTIONS / first_block_instructions.max(1))
        .max(4);
    let (small, large) = if gy > 1 {
        let side = ((budget as f64).sqrt() as u64).clamp(2, 8);
        ([gx.min(side / 2), gy.min(side / 2)], [gx.min(side), gy.min(side)])
    } else {
        let row = budget.min(32);
        ([gx.min(row / 4).max(1), 1], [gx.min(row), 1])
    };
    let in_small = |x: u64, y: u64| x < small[0] && y < small[1];
    // The small tile's blocks first, so that both tiles are prefixes of one sequence; block
    // 0 leads both and has run.
    let mut order: Vec<u64> = Vec::new();
    for first in [true, false] {
        for y in 0..large[1] {
            for x in (0..large[0]).filter(|&x| in_small(x, y) == first) {
                order.push(x + y * gx);
            }
        }
    }
    let n_small = (small[0] * small[1]) as usize;
    let mut small_tile = Tally {
        distinct: program.touched(),
        ..tally
    };
    for (k, &b) in order.iter().enumerate().skip(1) {
        tally.add_block(&mut program, &geometry, b)?;
        if k + 1 == n_small {
            small_tile = Tally {
                distinct: program.touched(),
                ..tally
            };
        }
    }
    tally.distinct = program.touched();
    tally.dram = program.touched_dram_sectors();
    let fraction = |t: &Tally| {
        if t.missed > 0 {
            (t.distinct as f64 / t.missed as f64).min(1.0)
        } else {
            1.0
        }
    };
    let blocks = (geometry.warps / per_block) as f64;
    let n = [n_small as f64, order.len() as f64];
    let (f_small, f_large) = (fraction(&small_tile), fraction(&tally));
    let exponent = if n[1] > n[0] && f_small > 0.0 && f_large > 0.0 {
        ((f_large / f_small).ln() / (n[1] / n[0]).ln()).clamp(-1.0, 0.0)
    } else {
        0.0
    };
    let per = |x: u64| x as f64 / n[1].max(1.0);
    let dram_fraction = if gy > 1 {
        perimeter_law(n, [f_small, f_large], blocks)
    } else {
        None
    }
    .unwrap_or(f_large * (blocks / n[1]).powf(exponent));
    Ok(Traffic {
        warps_per_block: per_block as f64,
        requested_sectors_per_block: per(tally.requested),
        missed_sectors_per_block: per(tally.missed),
        dram_fraction: dram_fraction.min(1.0),
        reuse_exponent: exponent,
        dram_granularity: if tally.distinct > 0 {
            (tally.dram as f64 / tally.distinct as f64).clamp(1.0, 2.0)
        } else {
            1.0
        },
        l1_wavefronts_per_block: per(tally.l1_wavefronts),
        shared_wavefronts_per_block: per(tally.wavefronts),
        conflict_free_wavefronts_per_block: per(tally.conflict_free),
        barriers_per_block: per(tally.barriers),
    })
}

#[cfg(test)]
mod tests {
    use super::perimeter_law;

    fn near(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn a_halo_keeps_its_floor_and_shared_rows_fall_as_the_perimeter() {
        // A stencil-like tile pair: f = 0.64 + 0.64/√n gives 0.8 at 16 blocks and 0.72 at
        // 64; a million blocks keep the floor, 0.64 + 0.64/1000.
        assert!(near(perimeter_law([16.0, 64.0], [0.8, 0.72], 1e6), 0.64064));
        // A naive SGEMM's: f = 2/√n (0.5, 0.25), no floor: 4096 blocks give 2/64, as the
        // power law n^−½ does.
        assert!(near(perimeter_law([16.0, 64.0], [0.5, 0.25], 4096.0), 0.03125));
        // Falling faster than a perimeter allows (a < 0): left to the power law.
        assert_eq!(perimeter_law([16.0, 64.0], [0.5, 0.1], 4096.0), None);
        // Not falling: the larger tile's share.
        assert!(near(perimeter_law([16.0, 64.0], [0.5, 0.6], 4096.0), 0.6));
    }
}
