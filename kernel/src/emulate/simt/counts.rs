//! What a warp counts: its profile, the stream of what it executed, what each instruction
//! costs, and the traffic sums of the warps run.

use super::super::memory::Moved;
use crate::arch::Pipe;

/// What one warp did: the counts the report averages, and a hash of its block path. Warps
/// with equal profiles are one group.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Profile {
    pub executed: u64,
    pub issued: u64,
    pub cuda_core: u64,
    /// Thread instructions whose guard held (or was unknown).
    pub thread_executed: u64,
    /// Thread instructions of every active lane, guard or not (Nsight Compute's
    /// `smsp__thread_inst_executed`).
    pub active_thread_executed: u64,
    /// Per pipe, in [`Pipe::ALL`] order.
    pub by_pipe: [u64; Pipe::ALL.len()],
    pub gmem_bytes: u64,
    pub unknown_address_accesses: u64,
    /// Block barriers waited at.
    pub barriers: u64,
    /// Runs of each loop's header, by loop index.
    pub loop_runs: Vec<u64>,
    /// The critical path of the warp's trace, as `f64` bits.
    pub latency_bits: u64,
    /// FNV-1a hash of the blocks the warp ran, in order.
    pub path: u64,
}

/// One instruction a warp executed, in the order it ran: the stream an issue engine replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Issued {
    /// Index of the instruction in the kernel.
    pub instruction: u32,
    /// Lanes that execute it (guard true or unknown).
    pub lanes: u8,
    /// 32-byte sectors a global access touches; 0 for any other instruction.
    pub sectors: u16,
    /// Sectors the same lanes would touch if perfectly coalesced.
    pub coalesced_sectors: u16,
    /// Of `sectors`, those that leave the SM: a load's sectors its block had not loaded before
    /// (see [`super::Program::start_block`]); every sector of a store or atomic.
    pub missed_sectors: u16,
    /// L1 wavefronts of a global access: the distinct 128-byte lines it touches.
    pub l1_wavefronts: u8,
    /// Wavefronts a shared access takes through the banks; 0 for any other instruction.
    pub wavefronts: u8,
    /// Wavefronts it would take without bank conflicts.
    pub conflict_free_wavefronts: u8,
}

impl Issued {
    /// Instruction `i` run by `lanes`, moving `m`.
    pub(super) fn new(i: usize, lanes: u32, m: &Moved) -> Issued {
        let narrow = |x: u64| u16::try_from(x).unwrap_or(u16::MAX);
        let byte = |x: u64| u8::try_from(x).unwrap_or(u8::MAX);
        Issued {
            instruction: i as u32,
            lanes: lanes.count_ones() as u8,
            sectors: narrow(m.sectors),
            coalesced_sectors: narrow(m.coalesced_sectors),
            missed_sectors: narrow(m.missed_sectors),
            l1_wavefronts: byte(m.l1_wavefronts),
            wavefronts: byte(m.wavefronts),
            conflict_free_wavefronts: byte(m.conflict_free_wavefronts),
        }
    }
}

/// What each instruction adds to the counts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cost {
    pub(super) pipe: usize,
    pub(super) cuda_core: bool,
    /// Issues on its own: not the first of a dual-issued pair (as `counts::static_counts`).
    pub(super) issues: bool,
    /// A global load: its sectors may hit what its block loaded before.
    pub(super) global_load: bool,
    /// Waits at a block barrier.
    pub(super) barrier: bool,
}

/// The traffic counts a profile lacks, summed over the warps run since
/// [`super::Program::take_sums`]: the traffic tiles' sums.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sums {
    /// Sectors that leave the SM: the distinct sectors each block loaded (its set's count, so
    /// that a replayed access's trips enter it at once), every sector stored, and those of
    /// accesses whose addresses are unknown.
    pub missed: u64,
    /// L1 wavefronts of global accesses.
    pub l1_wavefronts: u64,
    /// Wavefronts of shared accesses, and the same without bank conflicts.
    pub wavefronts: u64,
    pub conflict_free: u64,
}

impl Sums {
    /// Adds `times` accesses that each moved `m`; a known load's misses are left to its
    /// block's set (`by_set`).
    pub(super) fn add(&mut self, m: &Moved, times: u64, by_set: bool) {
        if !by_set || m.unknown {
            self.missed += m.missed_sectors * times;
        }
        self.l1_wavefronts += m.l1_wavefronts * times;
        self.wavefronts += m.wavefronts * times;
        self.conflict_free += m.conflict_free_wavefronts * times;
    }
}

impl Profile {
    /// What `self` counted beyond `earlier`.
    pub(super) fn since(&self, earlier: &Profile) -> Profile {
        let mut d = self.clone();
        d.add(earlier, u64::MAX);
        d
    }

    /// Adds `times` × `other` (wrapping: `u64::MAX` subtracts).
    pub(super) fn add(&mut self, other: &Profile, times: u64) {
        let add = |x: &mut u64, y: u64| *x = x.wrapping_add(y.wrapping_mul(times));
        add(&mut self.executed, other.executed);
        add(&mut self.issued, other.issued);
        add(&mut self.cuda_core, other.cuda_core);
        add(&mut self.thread_executed, other.thread_executed);
        add(&mut self.active_thread_executed, other.active_thread_executed);
        add(&mut self.gmem_bytes, other.gmem_bytes);
        add(&mut self.unknown_address_accesses, other.unknown_address_accesses);
        add(&mut self.barriers, other.barriers);
        for (x, &y) in self.by_pipe.iter_mut().zip(&other.by_pipe) {
            add(x, y);
        }
        for (x, &y) in self.loop_runs.iter_mut().zip(&other.loop_runs) {
            add(x, y);
        }
    }
}
