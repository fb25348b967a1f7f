//! The issue engine of one SM (seed 002, section 3 and Figure 2): warps dealt round-robin to
//! the schedulers; each cycle each scheduler issues one instruction of one ready warp, staying
//! on the warp it issued last while that warp is ready (greedy-then-oldest).
//!
//! A warp's next instruction is ready when
//! - its own issue gap since the warp's previous instruction has passed: the compiler's stall
//!   count on sm_70+ listings, else the pipe's same-warp issue latency (seed 002, Table 1),
//!   plus the fetch after a taken branch;
//! - its operands are ready: on sm_70+ the scoreboard barriers in its wait mask are released
//!   (the compiler's own dependency tracking), else every register it reads or writes is
//!   written (a register scoreboard with the pipes' execution latencies);
//! - its pipe's unit on the scheduler is free: each issue holds it `interval` cycles (seed
//!   002's issue latency across warps), a memory access once per wavefront of sectors, so an
//!   uncoalesced access replays;
//! - for DRAM, its 32-byte sectors wait for one of the SM's `C_mem` slots of the memory
//!   pipeline, each held for the global latency (seed 002, section 3.2.4);
//! - it is not waiting at a block barrier: a warp that issues `BAR.SYNC` waits until every
//!   live warp of its block has (warps that ended count as arrived), then the `barrier`
//!   latency.
//!
//! A global load's sectors that its block loaded before are L1 hits (the emulator tells them
//! apart); of the others, the launch's DRAM fraction (its distinct sectors over its L1
//! misses, see `hetsim_kernel::emulate::traffic`) go to DRAM, and the rest are L2 hits. The
//! result comes back after the slowest level's latency. A shared access replays once per
//! wavefront its bank conflicts take (seed 002, section 3.3.3), its result after the last.
//!
//! Blocks occupy slots; when a block's last warp ends, its successor starts after the block
//! replacement latency and no sooner than the GPU's block dispatch allows this SM.

use crate::program::{Op, Source, REGISTER_SLOTS};
use hetsim_kernel::emulate::{Issued, SECTORS_PER_LINE};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

/// A block: the instruction streams of its warps.
pub type Block = Vec<Arc<[Issued]>>;

/// The SM's parameters, in whole cycles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmConfig {
    pub schedulers: usize,
    /// Blocks resident at once.
    pub resident_blocks: usize,
    pub taken_branch: u64,
    pub replacement: u64,
    /// Cycles between two block starts on this SM (the GPU's dispatch rate shared by SMs).
    pub dispatch_interval: u64,
    /// The memory pipeline's slots; `None` for unbounded (a "what if").
    pub memory_slots: Option<usize>,
    /// DRAM's queueing delay scale: a request that finds a fraction `ρ` of the slots held
    /// returns `memory_queue_cycles · ρ/(1 − ρ)` later (ρ at most 0.9).
    pub memory_queue_cycles: f64,
    /// Count a global access's sectors as if perfectly coalesced (a "what if").
    pub perfect_coalescing: bool,
    /// Count a shared access's wavefronts as if conflict-free (a "what if").
    pub conflict_free_shared: bool,
    /// Latencies of an L1 and an L2 hit.
    pub l1_latency: u64,
    pub l2_latency: u64,
    /// DRAM sectors per L1-missing sector (at most 2: DRAM reads 64-byte pairs); `None` for a
    /// GPU without data caches, where every sector goes to DRAM.
    pub dram_fraction: Option<f64>,
    /// Cycles from the last arrival at a block barrier to the release.
    pub barrier: u64,
    /// The `per_sm` pipes share one unit, the L1 data path ([`unit`]).
    pub one_l1_data_path: bool,
}

/// What one SM did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SmRun {
    /// From the first block's start to the last warp's end.
    pub cycles: u64,
    /// When each block ended, in the order the blocks were given.
    pub block_ends: Vec<u64>,
    pub issued: u64,
    /// 32-byte DRAM sectors moved.
    pub sectors: u64,
    /// Slot-cycles the memory pipeline was held.
    pub memory_slot_cycles: u64,
}

struct Warp {
    stream: Arc<[Issued]>,
    pc: usize,
    /// The earliest cycle of its next issue, by its own issue gap.
    ready: u64,
    scheduler: usize,
    slot: usize,
    /// When each scoreboard barrier is released (sm_70+).
    barriers: [u64; 6],
    /// When each register is written (listings without control bits); empty otherwise.
    registers: Vec<u64>,
    /// When the last of its loads arrives: a warp ends no sooner, since the registers they
    /// write are freed only then.
    outstanding: u64,
    /// Waiting at a block barrier for the rest of its block.
    at_barrier: bool,
}

/// The DRAM side of the memory pipeline.
struct Memory {
    /// When each slot frees; empty when unbounded.
    slots: BinaryHeap<Reverse<u64>>,
    bounded: bool,
    queue_cycles: f64,
}

/// The highest slot occupancy the queueing delay is taken at: beyond it the slots themselves
/// make requests wait.
const MAX_RHO: f64 = 0.9;

impl Memory {
    fn new(slots: Option<usize>, queue_cycles: f64) -> Memory {
        Memory {
            slots: (0..slots.unwrap_or(0)).map(|_| Reverse(0)).collect(),
            bounded: slots.is_some(),
            queue_cycles,
        }
    }

    /// When the last of `sectors` issued at `now` returns: each waits for a slot and holds it
    /// for the unloaded latency; the result comes back later by DRAM's queueing delay at the
    /// occupancy the request found (Hong & Kim's departure delay grows the same way, seed 000).
    fn request(&mut self, now: u64, sectors: u64, latency: u64) -> u64 {
        if !self.bounded {
            return now + latency;
        }
        let held = self.slots.iter().filter(|Reverse(free)| *free > now).count();
        let rho = (held as f64 / self.slots.len().max(1) as f64).min(MAX_RHO);
        let delay = (self.queue_cycles * rho / (1.0 - rho)).round() as u64;
        let mut done = now + latency;
        for _ in 0..sectors {
            let Some(Reverse(free)) = self.slots.pop() else {
                break;
            };
            let end = free.max(now) + latency;
            self.slots.push(Reverse(end));
            done = done.max(end);
        }
        done + delay
    }
}

/// Runs `blocks`, in order, on one SM.
pub fn run(ops: &[Op], config: &SmConfig, blocks: &[Block]) -> SmRun {
    Sm::new(ops, config).run(blocks)
}

struct Sm<'a> {
    ops: &'a [Op],
    config: &'a SmConfig,
    scoreboard: bool,
    warps: Vec<Option<Warp>>,
    /// Live warps of each scheduler, oldest first.
    queues: Vec<Vec<usize>>,
    /// The warp each scheduler issued last.
    last: Vec<Option<usize>>,
    /// When each scheduler's unit of each pipe frees, and the SM's L1 data path ([`unit`]).
    pipe_free: Vec<Vec<u64>>,
    memory: Memory,
    /// Warps still running in each block slot, those of them waiting at a barrier, and the
    /// block there.
    slot_warps: Vec<usize>,
    slot_arrived: Vec<usize>,
    slot_block: Vec<usize>,
    /// Fractional DRAM sectors carried from one access to the next, so that the DRAM
    /// fraction holds on average over the SM's accesses.
    dram_credit: f64,
    next_scheduler: usize,
    out: SmRun,
}

impl<'a> Sm<'a> {
    fn new(ops: &'a [Op], config: &'a SmConfig) -> Sm<'a> {
        Sm {
            ops,
            config,
            scoreboard: ops.iter().any(|o| o.control.is_none()),
            warps: Vec::new(),
            queues: vec![Vec::new(); config.schedulers],
            last: vec![None; config.schedulers],
            pipe_free: vec![vec![0; L1_DATA_PATH + 1]; config.schedulers],
            memory: Memory::new(config.memory_slots, config.memory_queue_cycles),
            slot_warps: vec![0; config.resident_blocks],
            slot_arrived: vec![0; config.resident_blocks],
            dram_credit: 0.0,
            slot_block: vec![0; config.resident_blocks],
            next_scheduler: 0,
            out: SmRun::default(),
        }
    }

    fn run(mut self, blocks: &[Block]) -> SmRun {
        self.out.block_ends = vec![0; blocks.len()];
        let mut dispatch = Dispatch {
            pending: VecDeque::new(),
            last: None,
            interval: self.config.dispatch_interval,
        };
        for slot in 0..self.config.resident_blocks.min(blocks.len()) {
            dispatch.queue(0, slot);
        }
        let mut next_block = 0;
        let mut now = 0;
        loop {
            // Blocks that ended this cycle: (slot, end cycle).
            let mut ended = Vec::new();
            while let Some(&(at, slot)) = dispatch.pending.front() {
                if at > now || next_block >= blocks.len() {
                    break;
                }
                dispatch.pending.pop_front();
                if !self.start(&blocks[next_block], next_block, slot, now) {
                    ended.push((slot, now));
                }
                next_block += 1;
            }
            let (issued, earliest) = self.cycle(now);
            ended.extend(issued.ended);
            for (slot, end) in ended {
                self.out.block_ends[self.slot_block[slot]] = end;
                self.out.cycles = self.out.cycles.max(end);
                if next_block + dispatch.pending.len() < blocks.len() {
                    dispatch.queue(end + self.config.replacement, slot);
                }
            }
            let live = self.queues.iter().any(|q| !q.is_empty());
            if !live && dispatch.pending.is_empty() {
                break;
            }
            let wake = dispatch
                .pending
                .front()
                .map_or(earliest, |&(at, _)| earliest.min(at));
            now = if issued.any { now + 1 } else { wake.max(now + 1) };
        }
        self.out
    }

    /// Puts block `index`'s warps into `slot` at `now`; false if it has none.
    fn start(&mut self, block: &Block, index: usize, slot: usize, now: u64) -> bool {
        self.slot_block[slot] = index;
        self.slot_warps[slot] = 0;
        self.slot_arrived[slot] = 0;
        for stream in block.iter().filter(|s| !s.is_empty()) {
            let scheduler = self.next_scheduler;
            self.next_scheduler = (self.next_scheduler + 1) % self.config.schedulers;
            let warp = Warp {
                stream: stream.clone(),
                pc: 0,
                ready: now,
                scheduler,
                slot,
                barriers: [0; 6],
                registers: if self.scoreboard {
                    vec![0; REGISTER_SLOTS]
                } else {
                    Vec::new()
                },
                outstanding: now,
                at_barrier: false,
            };
            let id = match self.warps.iter().position(Option::is_none) {
                Some(free) => {
                    self.warps[free] = Some(warp);
                    free
                }
                None => {
                    self.warps.push(Some(warp));
                    self.warps.len() - 1
                }
            };
            self.queues[scheduler].push(id);
            self.slot_warps[slot] += 1;
        }
        self.out.block_ends[index] = now;
        self.slot_warps[slot] > 0
    }

    /// One cycle of every scheduler: what issued, which blocks ended, and the earliest cycle
    /// at which any waiting warp could issue.
    fn cycle(&mut self, now: u64) -> (Issue, u64) {
        let mut issue = Issue::default();
        let mut earliest = u64::MAX;
        for s in 0..self.config.schedulers {
            let mut chosen = None;
            let preferred = self.last[s].filter(|w| self.queues[s].contains(w));
            for w in preferred.into_iter().chain(self.queues[s].iter().copied()) {
                let t = self.ready_at(w);
                if t <= now {
                    chosen = Some(w);
                    break;
                }
                earliest = earliest.min(t);
            }
            let Some(w) = chosen else { continue };
            issue.any = true;
            self.last[s] = Some(w);
            let slot = self.warps[w].as_ref().map_or(0, |x| x.slot);
            match self.issue(w, now) {
                Some(end) => {
                    self.queues[s].retain(|&x| x != w);
                    self.warps[w] = None;
                    self.slot_warps[slot] -= 1;
                    let block_end = self.out.block_ends[self.slot_block[slot]].max(end);
                    self.out.block_ends[self.slot_block[slot]] = block_end;
                    if self.slot_warps[slot] == 0 {
                        issue.ended.push((slot, block_end));
                    }
                }
                None if self.warps[w].as_ref().is_some_and(|x| x.at_barrier) => {
                    self.slot_arrived[slot] += 1;
                }
                None => {}
            }
            self.release_barrier(slot, now);
        }
        (issue, earliest)
    }

    /// Releases the warps of `slot` waiting at its barrier once every live one is there.
    fn release_barrier(&mut self, slot: usize, now: u64) {
        let arrived = self.slot_arrived[slot];
        if arrived == 0 || arrived < self.slot_warps[slot] {
            return;
        }
        self.slot_arrived[slot] = 0;
        let release = now + self.config.barrier;
        for warp in self
            .warps
            .iter_mut()
            .flatten()
            .filter(|x| x.slot == slot && x.at_barrier)
        {
            warp.at_barrier = false;
            warp.ready = warp.ready.max(release);
        }
    }

    /// The cycle at which warp `w`'s next instruction can issue.
    fn ready_at(&self, w: usize) -> u64 {
        let Some(warp) = self.warps[w].as_ref().filter(|x| !x.at_barrier) else {
            return u64::MAX;
        };
        let op = &self.ops[warp.stream[warp.pc].instruction as usize];
        let (scheduler, pipe) = unit(op, warp.scheduler, self.config.one_l1_data_path);
        let mut t = warp.ready.max(self.pipe_free[scheduler][pipe]);
        match op.control {
            Some(c) => {
                for (b, &released) in warp.barriers.iter().enumerate() {
                    if c.wait_mask & (1 << b) != 0 {
                        t = t.max(released);
                    }
                }
            }
            None => {
                for &r in op.reads.iter().chain(&op.writes) {
                    t = t.max(warp.registers[usize::from(r)]);
                }
            }
        }
        t
    }

    /// Issues warp `w`'s next instruction at `now`; the warp's end if that was its last.
    fn issue(&mut self, w: usize, now: u64) -> Option<u64> {
        let config = self.config;
        let warp = self.warps[w].as_mut()?;
        let entry = warp.stream[warp.pc];
        let op = &self.ops[entry.instruction as usize];
        self.out.issued += 1;
        let (wavefronts, result) = match op.source {
            Source::Unit => (1, now + op.latency),
            Source::Shared => {
                let wavefronts = shared_wavefronts(entry, config.conflict_free_shared);
                (wavefronts, now + op.latency + (wavefronts - 1) * op.interval)
            }
            Source::Dram => {
                let (sectors, missed) = global_sectors(entry, config.perfect_coalescing);
                let dram = match config.dram_fraction {
                    None => sectors,
                    Some(f) => {
                        self.dram_credit += f * missed as f64;
                        let whole = self.dram_credit.floor();
                        self.dram_credit -= whole;
                        (whole as u64).min(2 * missed)
                    }
                };
                let result = if dram > 0 {
                    // DRAM moves whole 64-byte pairs, but a pair is one request: the second
                    // sector costs bandwidth, not a slot of its own.
                    let requests = dram.min(missed.max(1));
                    self.out.sectors += dram;
                    self.out.memory_slot_cycles += requests * op.latency;
                    self.memory.request(now, requests, op.latency)
                } else if missed > 0 {
                    now + config.l2_latency
                } else if sectors > 0 {
                    now + config.l1_latency
                } else {
                    now + 1
                };
                (l1_wavefronts(entry, sectors, config.perfect_coalescing), result)
            }
        };
        let (scheduler, pipe) = unit(op, warp.scheduler, self.config.one_l1_data_path);
        self.pipe_free[scheduler][pipe] = now + op.interval * wavefronts;
        if op.source == Source::Dram && !op.writes.is_empty() {
            warp.outstanding = warp.outstanding.max(result);
        }
        let mut gap = match op.control {
            Some(c) => {
                if let Some(b) = c.write_barrier {
                    warp.barriers[usize::from(b)] = warp.barriers[usize::from(b)].max(result);
                }
                if let Some(b) = c.read_barrier {
                    let read = now + op.interval * wavefronts;
                    warp.barriers[usize::from(b)] = warp.barriers[usize::from(b)].max(read);
                }
                u64::from(c.stall).max(1)
            }
            None => {
                for &r in &op.writes {
                    warp.registers[usize::from(r)] = result;
                }
                op.same_warp
            }
        };
        warp.pc += 1;
        match warp.stream.get(warp.pc) {
            None => Some((now + 1).max(warp.outstanding)),
            Some(next) => {
                warp.at_barrier = op.barrier;
                if next.instruction != entry.instruction + 1 {
                    gap += config.taken_branch;
                }
                warp.ready = now + gap;
                None
            }
        }
    }
}

/// `pipe_free`'s column for the SM's one L1 data path, past the pipes'.
const L1_DATA_PATH: usize = hetsim_kernel::arch::Pipe::ALL.len();

/// The unit a warp on `scheduler` takes for `op`, as `[scheduler][pipe]` of `pipe_free`: its
/// scheduler's unit of the pipe, or for a pipe the SM shares (`per_sm`) the SM's unit, kept as
/// scheduler 0's. Where the architecture has `one_l1_data_path`, every such pipe takes the
/// same unit, the extra column: on sm_70+ global and shared accesses pass one wavefront stage
/// (Nsight Compute counts both in `l1tex__data_pipe_lsu_wavefronts`), so a conflicted shared
/// access delays the global ones behind it.
fn unit(op: &Op, scheduler: usize, one_l1_data_path: bool) -> (usize, usize) {
    match (op.per_sm, one_l1_data_path) {
        (true, true) => (0, L1_DATA_PATH),
        (true, false) => (0, op.pipe),
        (false, _) => (scheduler, op.pipe),
    }
}

/// The sectors one global access touches and those of them that miss in L1: the emulator's
/// counts (or, perfectly coalesced, as many as the coalesced count allows); an access whose
/// addresses the emulator does not follow (local memory) counts 4 bytes a lane, coalesced and
/// missing.
fn global_sectors(entry: Issued, perfect_coalescing: bool) -> (u64, u64) {
    let (touched, missed) = (u64::from(entry.sectors), u64::from(entry.missed_sectors));
    let (touched, missed) = if perfect_coalescing {
        let c = u64::from(entry.coalesced_sectors);
        (c.min(touched), c.min(missed))
    } else {
        (touched, missed)
    };
    match touched {
        0 => {
            let n = (u64::from(entry.lanes) * 4).div_ceil(32);
            (n, n)
        }
        n => (n, missed),
    }
}

/// Cycles a global access holds the load/store path: one L1 wavefront per 128-byte line it
/// touches (the emulator's count), or as many as its sectors perfectly coalesced need; at
/// least one.
fn l1_wavefronts(entry: Issued, sectors: u64, perfect_coalescing: bool) -> u64 {
    let lines = if perfect_coalescing || entry.l1_wavefronts == 0 {
        sectors.div_ceil(SECTORS_PER_LINE)
    } else {
        u64::from(entry.l1_wavefronts)
    };
    lines.max(1)
}

/// Wavefronts a shared access takes (at least one), or would take without bank conflicts.
fn shared_wavefronts(entry: Issued, conflict_free: bool) -> u64 {
    let w = if conflict_free {
        entry.conflict_free_wavefronts
    } else {
        entry.wavefronts
    };
    u64::from(w).max(1)
}

/// Blocks waiting for their slot, in the order they start, and the dispatcher's pace.
struct Dispatch {
    /// (start cycle, slot); start cycles never decrease.
    pending: VecDeque<(u64, usize)>,
    /// When the dispatcher last started a block here.
    last: Option<u64>,
    /// Cycles between two starts on this SM.
    interval: u64,
}

impl Dispatch {
    /// Queues a block for `slot`, starting at `ready` or when the dispatcher next can.
    fn queue(&mut self, ready: u64, slot: usize) {
        let at = self.last.map_or(ready, |t| ready.max(t + self.interval));
        self.last = Some(at);
        self.pending.push_back((at, slot));
    }
}

/// What one cycle issued.
#[derive(Default)]
struct Issue {
    any: bool,
    /// Blocks whose last warp ended: (slot, end cycle).
    ended: Vec<(usize, u64)>,
}
