//! A kernel's instructions as the issue engine sees them: pipe, timing, registers, memory
//! level and the compiler's scheduling bits, decided once per instruction.

use crate::arch::{pipe_index, ArchParams};
use hetsim_kernel::arch::{memory_space, pipe, Arch, Pipe, Space};
use hetsim_kernel::regs;
use hetsim_kernel::sass::{Control, Kernel, Register};

/// Where an instruction's result comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A functional unit: ready `latency` cycles after issue.
    Unit,
    /// Global memory through the SM's memory pipeline (global and local accesses): sectors
    /// the block loaded before hit in L1; of the rest, L2 holds a share and each 32-byte sector
    /// that goes on to DRAM waits for one of `C_mem` slots.
    Dram,
    /// Shared memory: one pass through the banks per wavefront, so a bank conflict replays.
    Shared,
}

/// One instruction, ready for the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// Index in [`Pipe::ALL`].
    pub pipe: usize,
    /// Cycles the scheduler's unit of the pipe is busy per issue (per wavefront for memory).
    pub interval: u64,
    /// The SM's schedulers share the pipe's one unit.
    pub per_sm: bool,
    /// Cycles before the same warp issues again, where `control` is absent.
    pub same_warp: u64,
    /// Cycles from issue to result for a [`Source::Unit`]; the unloaded latency for DRAM.
    pub latency: u64,
    pub source: Source,
    /// Register slots read and written (see [`slot`]), for the scoreboard.
    pub reads: Vec<u16>,
    pub writes: Vec<u16>,
    pub control: Option<Control>,
    /// A block barrier (`BAR.SYNC`, `BAR.RED`): the warp waits for every live warp of its block.
    pub barrier: bool,
}

/// Registers the scoreboard tracks: 255 general, 63 uniform, 7 + 7 predicates, 16 barriers,
/// the condition code.
pub const REGISTER_SLOTS: usize = 256 + 64 + 8 + 8 + 16 + 1;

/// A register's scoreboard slot; `None` for the constant registers (`RZ`, `PT`, …).
pub fn slot(r: Register) -> Option<u16> {
    if r.is_constant() {
        return None;
    }
    Some(match r {
        Register::General(n) => u16::from(n),
        Register::Uniform(n) => 256 + u16::from(n),
        Register::Predicate(n) => 320 + u16::from(n),
        Register::UniformPredicate(n) => 328 + u16::from(n),
        Register::Barrier(n) => 336 + u16::from(n),
        Register::ConditionCode => 352,
    })
}

/// Cycles as the engine counts them: whole, at least `min`.
fn cycles(x: f64, min: u64) -> u64 {
    (x.round().max(0.0) as u64).max(min)
}

/// The kernel's instructions for `params`.
pub fn ops(kernel: &Kernel, arch: Arch, params: &ArchParams) -> Vec<Op> {
    kernel
        .instructions
        .iter()
        .map(|ins| {
            let p = pipe(ins, arch);
            let timing = params.pipe(p);
            let m = &params.memory;
            let (source, latency) = match memory_space(ins, arch) {
                Some(Space::Global | Space::Local) => (Source::Dram, m.global),
                Some(Space::Shared) => (Source::Shared, m.shared),
                Some(Space::Constant) => (Source::Unit, m.constant),
                _ if p == Pipe::Texture => (Source::Dram, m.global),
                _ => (Source::Unit, timing.latency),
            };
            let slots = |rs: Vec<Register>| rs.into_iter().filter_map(slot).collect::<Vec<_>>();
            Op {
                pipe: pipe_index(p),
                interval: cycles(timing.interval, 1),
                per_sm: timing.per_sm,
                same_warp: cycles(timing.same_warp, 1),
                latency: cycles(latency, 1),
                source,
                reads: slots(regs::reads(ins)),
                writes: slots(regs::writes(ins)),
                control: ins.control,
                barrier: ins.waits_at_barrier(),
            }
        })
        .collect()
}
