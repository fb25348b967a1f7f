//! Runs one warp through the control-flow graph: a reconvergence stack at immediate
//! post-dominators, per-lane guards, exits; counts what the warp executes.

use super::decode::{Decoded, Decoder, Kind, Reg};
use super::launch::{ConstBank, WarpPlace};
use super::memory::{moved, Distinct, Moved, Seen, Target, Touched, SECTOR};
use super::warp::{Step, Warp, NEVER_WRITTEN};
use super::Unresolved;
use crate::arch::{memory_space, pipe, Arch, Pipe, Space};
use crate::cfg::{immediate_post_dominators, Cfg, Exit};
use crate::error::{Error, Result};
use crate::latency::{CriticalPath, LatencyTable};
use crate::sass::Kernel;
use std::collections::{BTreeMap, HashMap};

mod counts;
mod skip;

use counts::Cost;
pub use counts::{Issued, Profile, Sums};

/// The most instructions one warp may execute before the emulator calls its loop endless.
pub const MAX_WARP_INSTRUCTIONS: u64 = 100_000_000;

/// A stack entry: lanes running from `block` until they reach `join`, where the entry below
/// them waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Frame {
    block: usize,
    mask: u32,
    join: Option<usize>,
}

/// A kernel decoded for one launch, ready to run warps.
pub struct Program<'a> {
    kernel: &'a Kernel,
    cfg: &'a Cfg,
    arch: Arch,
    table: &'a LatencyTable,
    bank: &'a ConstBank,
    decoded: Vec<Decoded>,
    costs: Vec<Cost>,
    ipdom: Vec<Option<usize>>,
    /// The loop whose header each block is.
    header_of: Vec<Option<usize>>,
    /// The innermost loop holding each block.
    innermost: Vec<Option<usize>>,
    /// Critical paths of the block paths met so far; `None` where none is wanted.
    latencies: Option<HashMap<Vec<u32>, f64>>,
    /// Branches whose guard was unknown, by instruction.
    pub unresolved: BTreeMap<usize, Unresolved>,
    /// Instructions one warp may execute before its loop is called endless.
    max_instructions: u64,
    /// The running warp's stream, when asked for.
    trace: Option<Vec<Issued>>,
    /// The last traced warp's stream length: the next one's first capacity.
    last_trace_len: usize,
    /// Sectors the running warp's block has loaded, when its loads are to be told apart into
    /// hits and misses.
    block_loads: Option<Distinct>,
    /// The registers each loop's instructions write.
    loop_writes: Vec<Vec<Reg>>,
    /// Whether affine loops' middle trips are skipped (`skip`).
    skip_loops: bool,
    watch: skip::Watch,
    /// Every sector global accesses have touched, when asked for (see [`Program::touched`]).
    touched: Option<Touched>,
    sums: Sums,
}

impl<'a> Program<'a> {
    pub fn new(
        kernel: &'a Kernel,
        cfg: &'a Cfg,
        arch: Arch,
        table: &'a LatencyTable,
        bank: &'a ConstBank,
        max_instructions: u64,
    ) -> Program<'a> {
        let decoder = Decoder {
            arch,
            bank,
            instructions: &kernel.instructions,
        };
        let decoded: Vec<Decoded> = (0..kernel.instructions.len())
            .map(|i| decoder.decode(i))
            .collect();
        let costs = kernel
            .instructions
            .iter()
            .map(|ins| {
                let p = pipe(ins, arch);
                Cost {
                    pipe: Pipe::ALL.iter().position(|&x| x == p).unwrap_or(0),
                    cuda_core: p.uses_cuda_cores(),
                    issues: !(ins.dual_issue_with_next && arch.has_dual_issue()),
                    global_load: p == Pipe::GlobalLoad,
                    barrier: ins.waits_at_barrier(),
                }
            })
            .collect();
        let mut header_of = vec![None; cfg.blocks.len()];
        let mut innermost = vec![None; cfg.blocks.len()];
        for (l, lp) in cfg.loops.iter().enumerate() {
            header_of[lp.header_block] = Some(l);
        }
        for (b, slot) in innermost.iter_mut().enumerate() {
            *slot = cfg.loops_of(b).first().copied();
        }
        let loop_writes = loop_writes(cfg, &decoded);
        Program {
            kernel,
            cfg,
            arch,
            table,
            bank,
            decoded,
            costs,
            ipdom: immediate_post_dominators(cfg),
            header_of,
            innermost,
            latencies: Some(HashMap::new()),
            unresolved: BTreeMap::new(),
            max_instructions,
            trace: None,
            last_trace_len: 0,
            block_loads: None,
            loop_writes,
            skip_loops: true,
            watch: skip::Watch::default(),
            touched: None,
            sums: Sums::default(),
        }
    }

    /// Leaves the critical path out of the profiles (`latency_bits` 0): the traffic tiles and
    /// the issue engine's streams do without it, and a long loop's path is long.
    pub fn without_latency(mut self) -> Self {
        self.latencies = None;
        self
    }

    /// Runs every trip of every loop (for comparing with the skipping that is the default).
    #[cfg(test)]
    pub fn without_skipping(mut self) -> Self {
        self.skip_loops = false;
        self
    }

    /// Runs warp `index` as [`Program::run`] does, and returns the instructions it executed.
    pub fn run_traced(&mut self, index: u64, place: WarpPlace) -> Result<(Profile, Vec<Issued>)> {
        // Warps of a launch run alike, so the previous warp's length is a good first size.
        self.trace = Some(Vec::with_capacity(self.last_trace_len));
        let profile = self.run(index, place);
        let trace = self.trace.take().unwrap_or_default();
        self.last_trace_len = trace.len();
        Ok((profile?, trace))
    }

    /// Runs warp `index` of the launch, at `place`, to its end.
    pub fn run(&mut self, index: u64, place: WarpPlace) -> Result<Profile> {
        let mut warp = Warp::new(place, self.bank);
        let mut active = warp.launched();
        let mut stack = vec![Frame {
            block: 0,
            mask: active,
            join: None,
        }];
        let mut tally = Profile {
            executed: 0,
            issued: 0,
            cuda_core: 0,
            thread_executed: 0,
            active_thread_executed: 0,
            by_pipe: [0; Pipe::ALL.len()],
            gmem_bytes: 0,
            unknown_address_accesses: 0,
            barriers: 0,
            loop_runs: vec![0; self.cfg.loops.len()],
            latency_bits: 0,
            path: 0,
        };
        let mut path: Vec<u32> = Vec::new();
        self.watch.reset(self.skip_loops, self.cfg.loops.len());
        while let Some(&top) = stack.last() {
            let mask = top.mask & active;
            if Some(top.block) == top.join || mask == 0 {
                stack.pop();
                continue;
            }
            let b = top.block;
            path.push(b as u32);
            if let Some(l) = self.header_of[b] {
                tally.loop_runs[l] += 1;
                self.at_header(l, &mut warp, &stack, active, &mut tally, &mut path);
            }
            let block = &self.cfg.blocks[b];
            let mut last = Step::default();
            for i in block.start..block.end {
                last = self.step(&mut warp, i, mask, &mut tally)?;
            }
            if tally.executed > self.max_instructions {
                return Err(self.endless(index, b));
            }
            let exits = match block.exit {
                Exit::End => mask,
                Exit::ConditionalEnd => {
                    if last.exec | last.unsure != 0 {
                        self.watch.split();
                    }
                    if last.unsure != 0 {
                        self.record(&warp, block.end - 1, "not taken: those threads go on".to_string());
                    }
                    last.exec
                }
                _ => 0,
            };
            active &= !exits;
            let next = match block.exit {
                Exit::FallThrough | Exit::ConditionalEnd => block.successors.last().copied(),
                Exit::Jump { target } => Some(target),
                Exit::End => None,
                Exit::Branch { target } => {
                    let fall = block.fall_through();
                    let taken = self.taken_lanes(&warp, b, target, fall, last);
                    if last.unsure != 0 || (taken != 0 && taken != mask) {
                        self.watch.split();
                    }
                    self.diverge(&mut stack, b, (target, taken), fall.map(|f| (f, mask & !taken)));
                    continue;
                }
                Exit::Indirect => {
                    let line = self.kernel.instructions[block.end - 1].line;
                    return Err(Error::at(
                        line,
                        "an indirect branch: the emulator cannot follow it",
                    ));
                }
            };
            match (next, stack.last_mut()) {
                (Some(next), Some(frame)) if mask & active != 0 => frame.block = next,
                _ => {
                    // Every lane of the frame has exited, or runs off the kernel's end.
                    active &= !mask;
                    stack.pop();
                }
            }
        }
        tally.latency_bits = self.latency(&path).map_or(0, f64::to_bits);
        tally.path = fnv1a(&path);
        Ok(tally)
    }

    /// Runs instruction `i` on `mask` and counts it.
    fn step(&mut self, warp: &mut Warp, i: usize, mask: u32, tally: &mut Profile) -> Result<Step> {
        let d = &self.decoded[i];
        if d.kind == Kind::Unfollowed {
            let ins = &self.kernel.instructions[i];
            return Err(Error::at(
                ins.line,
                format!(
                    "`{ins}`: the emulator does not follow {} (indirect branches, sm_5x–6x SSY/SYNC, \
                     PBK/BRK, PCNT/CONT); analyse this kernel in static mode",
                    ins.opcode
                ),
            ));
        }
        let step = warp.guard(d, mask);
        let cost = self.costs[i];
        tally.executed += 1;
        tally.issued += u64::from(cost.issues);
        tally.cuda_core += u64::from(cost.cuda_core);
        tally.by_pipe[cost.pipe] += 1;
        tally.barriers += u64::from(cost.barrier);
        tally.active_thread_executed += u64::from(mask.count_ones());
        tally.thread_executed += u64::from((step.exec | step.unsure).count_ones());
        let lanes = step.exec | step.unsure;
        // Addresses are taken before the access writes: a load may overwrite its own.
        let addresses = match &d.kind {
            Kind::Memory(access) => Some(warp.addresses(access, lanes)),
            _ => None,
        };
        let traffic = match addresses {
            Some(addresses) => {
                self.watch.log(i, lanes, addresses.as_ref());
                self.account(i, lanes, Target::Lanes(addresses.as_deref()), tally, 1)
            }
            None => Moved::default(),
        };
        if let Some(trace) = &mut self.trace {
            trace.push(Issued::new(i, lanes, &traffic));
        }
        warp.execute(&self.decoded[i], i as u32, step);
        Ok(step)
    }

    /// What access `i` by `lanes` at `target` moves, counted `times` in `tally` and the sums
    /// and once in the sectors seen so far.
    fn account(&mut self, i: usize, lanes: u32, target: Target, tally: &mut Profile, times: u64) -> Moved {
        let Kind::Memory(access) = &self.decoded[i].kind else {
            return Moved::default();
        };
        let load = self.costs[i].global_load;
        let m = moved(target, access.space, access.bytes, lanes, load, self.seen());
        self.count(i, &m, tally, times);
        m
    }

    /// Where accesses record the sectors they touch: the running block's loads and every
    /// sector touched, where counted.
    fn seen(&mut self) -> Seen<'_> {
        Seen {
            block_loads: self.block_loads.as_mut(),
            touched: self.touched.as_mut(),
        }
    }

    /// Counts `times` in `tally` and the sums what access `i` moved (`m`).
    fn count(&mut self, i: usize, m: &Moved, tally: &mut Profile, times: u64) {
        tally.gmem_bytes += m.sectors * SECTOR * times;
        tally.unknown_address_accesses += u64::from(m.unknown) * times;
        let by_set = self.costs[i].global_load && self.block_loads.is_some();
        self.sums.add(m, times, by_set);
    }

    /// Starts counting the distinct sectors global accesses touch from now on, and ends the
    /// block (until [`Program::start_block`]), whose loads were not counted.
    pub fn count_touched(&mut self) {
        self.touched = Some(Touched::default());
        self.block_loads = None;
        self.sums = Sums::default();
    }

    /// The distinct sectors loaded plus the distinct sectors stored since
    /// [`Program::count_touched`]; an access whose addresses are unknown counts its sectors as
    /// distinct.
    pub fn touched(&self) -> u64 {
        self.touched.as_ref().map_or(0, Touched::count)
    }

    /// The sectors DRAM moves for [`Program::touched`]'s sectors ([`Touched::dram_sectors`]).
    pub fn touched_dram_sectors(&self) -> u64 {
        self.touched.as_ref().map_or(0, Touched::dram_sectors)
    }

    /// Starts a new block for the hit/miss split of global loads: from now on, a load's sectors
    /// that an earlier load since this call touched are L1 hits. Within a block the warps run
    /// nearly in step, so whichever warp loads a sector first misses and the rest hit, however
    /// far apart they run here; blocks resident together on an SM are far apart in the grid
    /// and share little, so nothing carries over from block to block.
    pub fn start_block(&mut self) {
        self.end_block();
        self.block_loads.get_or_insert_with(Distinct::default);
    }

    /// Counts the running block's distinct loads as its misses and forgets them.
    fn end_block(&mut self) {
        if let Some(loads) = &mut self.block_loads {
            self.sums.missed += loads.len();
            loads.clear();
        }
    }

    /// The [`Sums`] of the warps run since the last call, which ends the running block.
    pub fn take_sums(&mut self) -> Sums {
        self.end_block();
        std::mem::take(&mut self.sums)
    }

    /// Lanes taking the branch that ends block `b`: where the guard holds, and where it is
    /// unknown when the default outcome is "taken" (see [`Program::default_outcome`]).
    fn taken_lanes(&mut self, warp: &Warp, b: usize, target: usize, fall: Option<usize>, last: Step) -> u32 {
        if last.unsure == 0 {
            return last.exec;
        }
        let (taken, outcome) = self.default_outcome(b, target, fall);
        let branch = self.cfg.blocks[b].end - 1;
        self.record(warp, branch, outcome);
        if taken {
            last.exec | last.unsure
        } else {
            last.exec
        }
    }

    /// An unresolved branch's outcome: the side that leaves the innermost loop holding it,
    /// if exactly one side does (so that a loop whose trip count is unknown runs once per
    /// entry, as static mode with trip 1 has it); else not taken.
    fn default_outcome(&self, b: usize, target: usize, fall: Option<usize>) -> (bool, String) {
        if let (Some(l), Some(fall)) = (self.innermost[b], fall) {
            let lp = &self.cfg.loops[l];
            let inside = |x: usize| lp.blocks.binary_search(&x).is_ok();
            match (inside(target), inside(fall)) {
                (false, true) => {
                    return (
                        true,
                        format!("taken, leaving loop {} (it runs once per entry)", lp.id),
                    )
                }
                (true, false) => {
                    return (
                        false,
                        format!("not taken, leaving loop {} (it runs once per entry)", lp.id),
                    )
                }
                _ => {}
            }
        }
        (false, "not taken".to_string())
    }

    /// Notes that the branch or exit at instruction `i` has an unknown guard.
    fn record(&mut self, warp: &Warp, i: usize, outcome: String) {
        if self.unresolved.contains_key(&i) {
            return;
        }
        let ins = &self.kernel.instructions[i];
        let guard = self.decoded[i].guard.reg;
        let cause = guard.map_or_else(
            || "an unknown guard".to_string(),
            |r| self.describe_origin(r, warp.origin(r)),
        );
        self.unresolved.insert(
            i,
            Unresolved {
                address: ins.address,
                line: ins.line,
                instruction: ins.to_string(),
                reason: format!("{cause}; taken as {outcome}"),
            },
        );
    }

    /// Why `reg` is unknown: the instruction `origin` that made it so.
    fn describe_origin(&self, reg: Reg, origin: u32) -> String {
        let name = match reg {
            Reg::R(n) => format!("R{n}"),
            Reg::Ur(n) => format!("UR{n}"),
            Reg::P(n) => format!("P{n}"),
            Reg::Up(n) => format!("UP{n}"),
            Reg::Cc => "CC".to_string(),
        };
        if origin == NEVER_WRITTEN {
            return format!("{name} is never written before it is read");
        }
        let i = origin as usize;
        let ins = &self.kernel.instructions[i];
        let what = match (&self.decoded[i].kind, memory_space(ins, self.arch)) {
            (Kind::Memory(a), _) if a.space == Space::Global => "loads it from global memory",
            (_, Some(Space::Shared)) => "loads it from shared memory",
            (_, Some(Space::Local)) => "loads it from local memory",
            (_, Some(Space::Constant)) => "reads a constant the launch does not fill",
            (Kind::Call, _) => "is a call the emulator does not follow",
            (Kind::Unmodeled, _) => {
                "computes it in a way the emulator does not model (floating point, conversions, shuffles, …)"
            }
            _ => "reads a value the emulator cannot know",
        };
        format!("{name} depends on `{ins}` (line {}), which {what}", ins.line)
    }

    /// Replaces the top frame by the sides of a branch; lanes that diverge reconverge at the
    /// block's immediate post-dominator (or, with none, at the enclosing join).
    fn diverge(&self, stack: &mut Vec<Frame>, b: usize, taken: (usize, u32), fall: Option<(usize, u32)>) {
        let Some(top) = stack.pop() else { return };
        let mut sides: Vec<(usize, u32)> = Vec::new();
        for (block, mask) in fall.into_iter().chain([taken]).filter(|s| s.1 != 0) {
            match sides.iter_mut().find(|s| s.0 == block) {
                Some(side) => side.1 |= mask,
                None => sides.push((block, mask)),
            }
        }
        match sides.as_slice() {
            [] => {}
            [(block, _)] => stack.push(Frame { block: *block, ..top }),
            _ => {
                let join = match self.ipdom[b] {
                    Some(r) => {
                        stack.push(Frame { block: r, ..top });
                        Some(r)
                    }
                    None => top.join,
                };
                for &(block, mask) in &sides {
                    if Some(block) != join {
                        stack.push(Frame { block, mask, join });
                    }
                }
            }
        }
    }

    /// The error for a warp that does not end.
    fn endless(&self, index: u64, b: usize) -> Error {
        let line = self.kernel.instructions[self.cfg.blocks[b].start].line;
        let place = match self.innermost[b] {
            Some(l) => {
                let lp = &self.cfg.loops[l];
                let header = self.kernel.instructions[self.cfg.blocks[lp.header_block].start].line;
                format!("loop {} (header at line {header})", lp.id)
            }
            None => "this block".to_string(),
        };
        Error::at(
            line,
            format!(
                "warp {index} executed more than {} instructions: {place} does not end with these \
                 arguments (check --args; a trip count that large needs static mode with --trip)",
                self.max_instructions
            ),
        )
    }

    /// The critical path of a warp that ran `path`'s blocks in order.
    fn latency(&mut self, path: &[u32]) -> Option<f64> {
        let latencies = self.latencies.as_mut()?;
        if let Some(&l) = latencies.get(path) {
            return Some(l);
        }
        let mut critical = CriticalPath::new(self.kernel, self.arch, self.table);
        for &b in path {
            let block = &self.cfg.blocks[b as usize];
            for i in block.start..block.end {
                critical.push(i);
            }
        }
        let l = critical.finish();
        latencies.insert(path.to_vec(), l);
        Some(l)
    }
}

/// The registers each loop's instructions write (results, flags and what they make unknown;
/// `R2P` writes every predicate), for [`skip`] to follow from trip to trip.
fn loop_writes(cfg: &Cfg, decoded: &[Decoded]) -> Vec<Vec<Reg>> {
    cfg.loops
        .iter()
        .map(|lp| {
            let mut regs: Vec<Reg> = Vec::new();
            for &b in &lp.blocks {
                let block = &cfg.blocks[b];
                for d in &decoded[block.start..block.end] {
                    let predicates = match d.kind {
                        Kind::R2p { .. } => (0..7).map(Reg::P).collect(),
                        _ => Vec::new(),
                    };
                    let written = d.words.iter().chain(&d.flags).flatten();
                    for &r in written.chain(&d.clobbers).chain(&predicates) {
                        if !regs.contains(&r) {
                            regs.push(r);
                        }
                    }
                }
            }
            regs
        })
        .collect()
}

fn fnv1a(path: &[u32]) -> u64 {
    path.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        b.to_le_bytes()
            .iter()
            .fold(h, |h, &byte| (h ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
    })
}
