//! Emulation of a launch: the integer, predicate and uniform instructions of each warp are
//! run on the launch's grid, block and arguments, so that trip counts, branch outcomes and
//! the 32-byte sectors of every global access are known rather than assumed.
//!
//! Decisions:
//!
//! - **Values.** Each lane's register is a known 32-bit word or unknown; uniform registers and
//!   predicates are one value per warp; predicates one bit per lane; the sm_5x–6x condition
//!   code one carry per lane. Registers start unknown. Unknown is contagious: an instruction
//!   with any unknown input gives unknown results in that lane. What is modelled exactly is
//!   listed in `alu::Op` (moves, `IMAD` in all forms, `IADD3`/`IADD` with carries, `XMAD`,
//!   `ISETP` with `.EX`, `LEA`, `SHF`, `LOP3`, `PLOP3`, `SEL`, `VOTE`, `R2UR`, … and their
//!   uniform forms); loads, floating point, conversions and shuffles write unknown values.
//! - **Constant bank 0** (`launch::ConstBank`): the parameters from [`Arch::param_base`]
//!   (0x210 on sm_90, 0x160 on sm_7x–8x, 0x140 on sm_5x–6x), in the order `--args` gives them:
//!   an `Arg::Int` as a 4-byte int, an `Arg::Float` as a 4-byte `f32`, each aligned to 4; a
//!   pointer (`_`) as 8 bytes aligned to 8, holding the symbolic base `(k + 1) << 40` for
//!   argument `k`. Block dimensions sit at 0x0/0x4/0x8 and grid dimensions at 0xc/0x10/0x14 on
//!   sm_70 and later, 8 bytes further on sm_5x–6x (the thesis's listing reads `blockDim.x`
//!   at 0x8); the stack top is a known word. Every other constant is unknown. A kernel that
//!   reads parameter bytes past the arguments given is refused.
//! - **Counting.** A warp instruction counts once whenever the warp reaches it, whatever its
//!   guard (as Nsight Compute's `smsp__inst_executed`); `thread_executed` counts the lanes
//!   whose guard holds (or is unknown), `active_thread_executed` every active lane (Nsight
//!   Compute's `smsp__thread_inst_executed`). Issued, CUDA-core and per-pipe counts follow
//!   [`counts::static_counts`](crate::counts::static_counts): the first of a dual-issued pair
//!   does not issue on its own on sm_5x–6x. The latency bound is
//!   [`CriticalPath`](crate::latency::CriticalPath) over the warp's trace.
//! - **Control flow.** Divergent lanes run one side of a branch, then the other, and
//!   reconverge at the branch's immediate post-dominator (or, where only the kernel's end
//!   post-dominates, at the enclosing reconvergence point). sm_70+ `BSSY`/`BSYNC` are then
//!   no-ops; sm_5x–6x `SSY`/`SYNC`, `PBK`/`BRK` and indirect branches are refused with an
//!   error naming the line. `CALL` is not followed (as static mode), the registers its callee
//!   writes become unknown. `EXIT` ends the lanes its guard selects.
//! - **Unresolved branches.** A branch (or `EXIT`) whose guard is unknown in some active lane
//!   is reported once, with the instruction that made it unknown; those lanes take the side
//!   that leaves the innermost loop around the branch if exactly one side does (a loop with an
//!   unknown trip count runs once per entry, static mode's `--trip L=1`), else fall through.
//!   A warp that executes more than 10^8 instructions is an error naming its loop.
//! - **Global memory.** For each global access, the addresses of the lanes whose guard holds
//!   (or is unknown) are computed (register or pair base, uniform term, offset) and the distinct 32-byte
//!   sectors they touch counted; when an address is unknown the access counts as fully
//!   coalesced and `unknown_address_accesses` grows.
//! - **Long loops** (`simt::skip`): the middle trips of a loop whose trips repeat with a
//!   fixed step in every register and address are replayed (their accesses counted at the
//!   predicted addresses, their other counts added) instead of interpreted; probes find where
//!   the loop leaves. The counts and streams are those of running every trip. Without a
//!   stream (the traffic tiles), an access that moves by whole sectors is counted for all the
//!   skipped trips at once, its sectors entering the sets of distinct sectors as progressions
//!   (`memory::Distinct`).
//! - **Grouping** (`group`): warps are points of (warp within block) × (block x, y, z), and
//!   that box is covered by sub-boxes whose corners, centre and one pseudo-random warp behave
//!   alike (equal counts, bytes, latency and block path — not equal addresses); others are
//!   cut along the longest axis on which two corners disagree: a slab at either end peeled
//!   off where the behaviour changes right there, halved otherwise. Behaviour set by
//!   thresholds on the coordinates (`i < n`,
//!   a domain's edges, partial warps) is found exactly; a launch of 12.5 million alike warps
//!   emulates six. A behaviour confined to the inside of a box whose probed warps agree is
//!   missed. Past [`MAX_EMULATED_WARPS`] emulated warps, the boxes left are sampled uniformly
//!   (at most as many warps again) and `coverage` says "sampled". Averages weigh each
//!   behaviour by its warps; warps are numbered block-major (block `x + y·gx + z·gx·gy`).

mod alu;
mod decode;
mod group;
mod lanes;
mod launch;
mod memory;
mod simt;
mod traffic;
mod warp;

use crate::arch::{Arch, Pipe};
use crate::cfg::Cfg;
use crate::error::{Error, Result};
use crate::latency::LatencyTable;
use crate::sass::{Kernel, Operand};
use launch::{ConstBank, Geometry};
use serde::Serialize;
use simt::{Profile, Program};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

pub use memory::SECTORS_PER_LINE;
pub use simt::Issued;
pub use traffic::{traffic, Traffic, WarpTraffic};

/// The most warps emulated by grouping before the rest of the launch is sampled.
pub const MAX_EMULATED_WARPS: usize = 4096;

/// Bounds on one emulation's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Limits {
    /// Warps grouping may emulate (sampling may emulate as many again).
    warps: usize,
    /// Instructions one warp may execute.
    instructions: u64,
}

const LIMITS: Limits = Limits {
    warps: MAX_EMULATED_WARPS,
    instructions: simt::MAX_WARP_INSTRUCTIONS,
};

/// A kernel argument: a number, or a pointer (`_`) taken as an aligned symbolic base.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    Int(i64),
    Float(f64),
    Pointer,
}

/// Grid and block dimensions and the arguments in the kernel's parameter order.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<Arg>,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared: u32,
}

impl Launch {
    /// A two-dimensional launch without dynamic shared memory, its arguments integers or
    /// pointers (`None`).
    pub fn plane(grid: [u32; 2], block: [u32; 2], args: &[Option<i64>]) -> Launch {
        Launch {
            grid: [grid[0], grid[1], 1],
            block: [block[0], block[1], 1],
            args: args.iter().map(|a| a.map_or(Arg::Pointer, Arg::Int)).collect(),
            dynamic_shared: 0,
        }
    }
}

/// A branch whose outcome depends on values loaded from memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unresolved {
    pub address: u64,
    pub line: usize,
    pub instruction: String,
    pub reason: String,
}

/// Per-warp dynamic counts averaged over a launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Emulation {
    /// Warps in the launch.
    pub warps: u64,
    /// Distinct warp behaviours found, each emulated once.
    pub groups: usize,
    /// Warps actually emulated.
    pub emulated_warps: u64,
    /// How the launch was covered ("grouped", or "sampled: …" where grouping could not work).
    pub coverage: String,
    pub executed: f64,
    pub issued: f64,
    pub cuda_core: f64,
    /// Thread-level instructions (active, guard true or unknown) per warp.
    pub thread_executed: f64,
    /// Thread-level instructions of every active lane, guard or not, per warp (Nsight
    /// Compute's `smsp__thread_inst_executed` over warps launched).
    pub active_thread_executed: f64,
    pub by_pipe: BTreeMap<Pipe, f64>,
    pub gmem_bytes: f64,
    /// Global accesses per warp whose addresses could not be known (counted as coalesced).
    pub unknown_address_accesses: f64,
    /// Mean over warps of the critical path of each warp's trace.
    pub latency_bound: f64,
    /// Mean runs of each loop's header per warp, by loop id.
    pub loop_runs: BTreeMap<String, f64>,
    pub unresolved: Vec<Unresolved>,
}

/// Emulates `launch` of `kernel`.
pub fn emulate(
    kernel: &Kernel,
    cfg: &Cfg,
    arch: Arch,
    table: &LatencyTable,
    launch: &Launch,
) -> Result<Emulation> {
    emulate_within(kernel, cfg, arch, table, launch, LIMITS)
}

fn emulate_within(
    kernel: &Kernel,
    cfg: &Cfg,
    arch: Arch,
    table: &LatencyTable,
    launch: &Launch,
    limits: Limits,
) -> Result<Emulation> {
    let (geometry, bank) = checked_launch(kernel, arch, launch)?;
    let mut program = Program::new(kernel, cfg, arch, table, &bank, limits.instructions);
    let mut behaviours: Vec<Profile> = Vec::new();
    let mut ids: HashMap<Profile, usize> = HashMap::new();
    let cover = group::cover(geometry.extent(), limits.warps, |w| {
        let profile = program.run(w, geometry.warp(w))?;
        let next = behaviours.len();
        let id = *ids.entry(profile.clone()).or_insert(next);
        if id == next {
            behaviours.push(profile);
        }
        Ok(id)
    })?;
    let coverage = match cover.sampled {
        None => format!(
            "grouped: {} warps in {} groups ({} emulated)",
            geometry.warps,
            cover.weights.len(),
            cover.emulated
        ),
        Some(s) => format!(
            "sampled: {} of {} warps emulated; grouping reached its cap of {} \
             emulated warps with {} warps ({:.1} %) in {} boxes whose warps behave differently \
             left, estimated from {} warps drawn uniformly from them",
            cover.emulated,
            geometry.warps,
            limits.warps,
            s.warps,
            100.0 * s.warps as f64 / geometry.warps as f64,
            s.boxes,
            s.draws
        ),
    };
    let mut e = average(cfg, &behaviours, &cover.weights);
    e.warps = geometry.warps;
    e.emulated_warps = cover.emulated;
    e.coverage = coverage;
    e.unresolved = program.unresolved.into_values().collect();
    Ok(e)
}

/// A launch's blocks and the warps in each.
pub fn launch_shape(launch: &Launch) -> Result<(u64, u32)> {
    let geometry = Geometry::new(launch)?;
    Ok((
        geometry.warps / u64::from(geometry.warps_per_block),
        geometry.warps_per_block,
    ))
}

/// The instruction streams of blocks `blocks` (block-major indices: `x + y·gx + z·gx·gy`) of
/// `launch`, one per warp, as the issue engine (`hetsim-teg`) replays them. Equal streams are
/// shared, so a block of alike warps costs one stream. A global load's `missed_sectors` are
/// those its block had not loaded before ([`Program::start_block`]).
pub fn block_streams(
    kernel: &Kernel,
    cfg: &Cfg,
    arch: Arch,
    table: &LatencyTable,
    launch: &Launch,
    blocks: &[u64],
) -> Result<Vec<Vec<Arc<[Issued]>>>> {
    let (geometry, bank) = checked_launch(kernel, arch, launch)?;
    let mut program = Program::new(kernel, cfg, arch, table, &bank, LIMITS.instructions).without_latency();
    let mut distinct: HashSet<Arc<[Issued]>> = HashSet::new();
    blocks
        .iter()
        .map(|&b| {
            let traces = run_block(&mut program, &geometry, b)?;
            Ok(traces
                .into_iter()
                .map(|trace| {
                    let trace: Arc<[Issued]> = trace.into();
                    match distinct.get(&trace) {
                        Some(same) => same.clone(),
                        None => {
                            distinct.insert(trace.clone());
                            trace
                        }
                    }
                })
                .collect())
        })
        .collect()
}

/// The streams of block `b`'s warps, the block's loads split into hits and misses from its
/// start ([`Program::start_block`]).
fn run_block(program: &mut Program, geometry: &Geometry, b: u64) -> Result<Vec<Vec<Issued>>> {
    program.start_block();
    geometry
        .warps_of(b)
        .map(|w| Ok(program.run_traced(w, geometry.warp(w))?.1))
        .collect()
}

/// The means over warps, each behaviour weighted by its warps.
fn average(cfg: &Cfg, behaviours: &[Profile], weights: &HashMap<usize, f64>) -> Emulation {
    // Summed in the behaviours' order, not the map's (which changes from run to run), so that
    // a launch's report is the same to the last bit every time.
    let mut weighted: Vec<(usize, f64)> = weights.iter().map(|(&b, &w)| (b, w)).collect();
    weighted.sort_unstable_by_key(|&(b, _)| b);
    let total: f64 = weighted.iter().map(|&(_, w)| w).sum();
    let mean = |f: &dyn Fn(&Profile) -> f64| {
        if total == 0.0 {
            return 0.0;
        }
        weighted.iter().map(|&(b, w)| w * f(&behaviours[b])).sum::<f64>() / total
    };
    let by_pipe = Pipe::ALL
        .iter()
        .enumerate()
        .map(|(i, &p)| (p, mean(&|x| x.by_pipe[i] as f64)))
        .filter(|&(_, v)| v > 0.0)
        .collect();
    let loop_runs = cfg
        .loops
        .iter()
        .enumerate()
        .map(|(l, lp)| (lp.id.clone(), mean(&|x| x.loop_runs[l] as f64)))
        .collect();
    Emulation {
        warps: 0,
        groups: weights.len(),
        emulated_warps: 0,
        coverage: String::new(),
        executed: mean(&|x| x.executed as f64),
        issued: mean(&|x| x.issued as f64),
        cuda_core: mean(&|x| x.cuda_core as f64),
        thread_executed: mean(&|x| x.thread_executed as f64),
        active_thread_executed: mean(&|x| x.active_thread_executed as f64),
        by_pipe,
        gmem_bytes: mean(&|x| x.gmem_bytes as f64),
        unknown_address_accesses: mean(&|x| x.unknown_address_accesses as f64),
        latency_bound: mean(&|x| f64::from_bits(x.latency_bits)),
        loop_runs,
        unresolved: Vec::new(),
    }
}

/// Refuses a launch whose arguments end before a parameter the kernel reads.
/// The launch's geometry and constant bank, its parameters checked against what the kernel
/// reads.
fn checked_launch(kernel: &Kernel, arch: Arch, launch: &Launch) -> Result<(Geometry, ConstBank)> {
    let geometry = Geometry::new(launch)?;
    let bank = ConstBank::new(arch, launch)?;
    check_parameters(kernel, &bank, launch)?;
    Ok((geometry, bank))
}

fn check_parameters(kernel: &Kernel, bank: &ConstBank, launch: &Launch) -> Result<()> {
    let params = bank.params();
    for ins in &kernel.instructions {
        for o in &ins.operands {
            let Operand::Constant { bank: 0, address, .. } = o else {
                continue;
            };
            let fixed = address
                .base
                .as_ref()
                .is_none_or(|b| b.reg == crate::sass::Register::General(crate::sass::RZ))
                && address.uniform.is_none();
            let Ok(offset) = u64::try_from(address.offset) else {
                continue;
            };
            if fixed && offset >= params.end {
                return Err(Error::at(
                    ins.line,
                    format!(
                        "`{ins}` reads parameter bytes at {offset:#x}, past the {} argument(s) given (they \
                         end at {:#x}): give every argument in the kernel's parameter order, `_` for a pointer",
                        launch.args.len(),
                        params.end
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::parse;

    const SAXPY2_SM90: &str = include_str!("../../examples/kernels/saxpy2-sm90.sass");
    const STENCIL5_SM90: &str = include_str!("../tests/sass/stencil5_sm90.sass");

    fn run(text: &str, grid: [u32; 3], block: [u32; 3], args: Vec<Arg>, limits: Limits) -> Result<Emulation> {
        let listing = parse(text)?;
        let kernel = &listing.kernels[0];
        let arch = kernel.arch.unwrap_or(Arch::HOPPER);
        let cfg = Cfg::build(kernel)?;
        let table = LatencyTable::for_arch(arch)?;
        let launch = Launch {
            grid,
            block,
            args,
            dynamic_shared: 0,
        };
        emulate_within(kernel, &cfg, arch, &table, &launch, limits)
    }

    #[test]
    fn a_loop_past_the_instruction_limit_is_named() {
        let limits = Limits {
            instructions: 1000,
            ..LIMITS
        };
        let args = vec![Arg::Int(1 << 20), Arg::Int(1_000_000), Arg::Pointer, Arg::Pointer];
        let e = run(SAXPY2_SM90, [4096, 1, 1], [256, 1, 1], args, limits).expect_err("too long");
        assert!(e.line.is_some());
        assert!(e.message.contains("loop L0"), "{e}");
        assert!(e.message.contains("more than 1000 instructions"), "{e}");
    }

    #[test]
    fn the_warp_cap_turns_to_sampling() {
        let args = vec![Arg::Int(512), Arg::Int(512), Arg::Pointer, Arg::Pointer];
        let exact = run(STENCIL5_SM90, [32, 32, 1], [16, 16, 1], args.clone(), LIMITS).expect("emulates");
        assert!(exact.coverage.starts_with("grouped"), "{}", exact.coverage);
        let limits = Limits { warps: 64, ..LIMITS };
        let sampled = run(STENCIL5_SM90, [32, 32, 1], [16, 16, 1], args, limits).expect("emulates");
        assert!(sampled.coverage.starts_with("sampled"), "{}", sampled.coverage);
        assert!(
            sampled.emulated_warps <= 2 * 64 + 32,
            "{}",
            sampled.emulated_warps
        );
        assert!((sampled.executed - exact.executed).abs() < 0.05 * exact.executed);
        assert!((sampled.gmem_bytes - exact.gmem_bytes).abs() < 0.05 * exact.gmem_bytes);
    }
}
