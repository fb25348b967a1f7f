//! The latency bound by the thesis's kernel execution graph (seed 004, section 5.2.2, after
//! Volkov): one node per executed instruction; an edge to the next instruction labelled with
//! the ILP latency (0 inside a dual-issued pair, the branch latency after a branch, taken or
//! not); an edge from each register's producer labelled with the producer's latency (a
//! load's: the memory level it hits); the end node's inbound edge labelled with the
//! terminated-block replacement latency. The critical path is found in one pass, since the
//! graph is in instruction order (CPM on a DAG).
//!
//! Latency tables are data files, one per architecture family (`kernel/data/latency/`).

use crate::arch::{pipe, Arch, Pipe};
use crate::cfg::{Cfg, Exit};
use crate::error::{Error, Result};
use crate::poly::Poly;
use crate::regs;
use crate::sass::{Instruction, Kernel, Register};
use serde::{Deserialize, Serialize};

/// Producer latencies of instructions by class, in cycles.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionLatencies {
    /// add, sub, logic, shifts, moves, compares (`IADD3`, `LOP3`, `ISETP`, `MOV`).
    pub int: f64,
    /// integer multiply and multiply-add (`IMAD`, `XMAD`).
    pub int_mul: f64,
    pub fp32: f64,
    pub fp16: f64,
    pub fp64: f64,
    pub sfu: f64,
    pub tensor: f64,
    pub uniform: f64,
    /// `S2R`, `CS2R`, `SHFL`, `VOTE` and other moves between register files.
    pub misc: f64,
}

/// Load latencies by the level they hit, in cycles.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryLatencies {
    /// A global load that misses the caches (the thesis's saxpy2: 0 % hits).
    pub global: f64,
    pub l2: f64,
    pub shared: f64,
    pub local: f64,
    pub constant: f64,
}

/// One architecture family's latencies, with where each number comes from.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyTable {
    pub name: String,
    pub source: String,
    /// Compute-capability majors the table was measured or sourced for (`[5, 6]`).
    pub majors: Vec<u8>,
    /// Majors with no table of their own that this one serves, said as a stand-in wherever
    /// it is used (`[7, 8]` for Hopper's: no Volta or Ampere latencies were measured).
    #[serde(default)]
    pub stands_in_for: Vec<u8>,
    /// Between two consecutive independent instructions of one warp.
    pub ilp: f64,
    /// Between the two instructions of a dual-issued pair.
    pub dual_issue: f64,
    pub branch_taken: f64,
    pub branch_not_taken: f64,
    pub block_replacement: f64,
    pub instruction: InstructionLatencies,
    pub memory: MemoryLatencies,
}

const TABLES: [(&str, &str); 2] = [
    ("maxwell.toml", include_str!("../data/latency/maxwell.toml")),
    ("hopper.toml", include_str!("../data/latency/hopper.toml")),
];

impl LatencyTable {
    /// The shipped table for `arch`'s family; the nearest older family where none matches
    /// exactly (say so to the user: `LatencyTable::name` is reported).
    pub fn for_arch(arch: Arch) -> Result<LatencyTable> {
        let tables = TABLES
            .iter()
            .map(|(file, text)| {
                LatencyTable::parse(text)
                    .map_err(|e| Error::new(format!("kernel/data/latency/{file}: {}", e.message)))
            })
            .collect::<Result<Vec<_>>>()?;
        let exact = tables
            .iter()
            .find(|t| t.majors.contains(&arch.major))
            .or_else(|| tables.iter().find(|t| t.stands_in_for.contains(&arch.major)));
        let nearest = || {
            tables
                .iter()
                .filter(|t| t.majors.iter().any(|&m| m <= arch.major))
                .max_by_key(|t| t.majors.iter().copied().filter(|&m| m <= arch.major).max())
        };
        exact
            .or_else(nearest)
            .or(tables.first())
            .cloned()
            .ok_or_else(|| Error::new("no latency table ships"))
    }

    /// Reads a table in the data-file format.
    pub fn parse(text: &str) -> Result<LatencyTable> {
        toml::from_str(text).map_err(|e| Error::new(e.to_string()))
    }

    /// The latency after which `instruction`'s results can be used.
    pub fn producer(&self, instruction: &Instruction, arch: Arch) -> f64 {
        let i = &self.instruction;
        let m = &self.memory;
        match pipe(instruction, arch) {
            Pipe::Fp32 => i.fp32,
            Pipe::Fp16 => i.fp16,
            Pipe::Fp64 => i.fp64,
            Pipe::Sfu => i.sfu,
            Pipe::Tensor => i.tensor,
            Pipe::Uniform => i.uniform,
            Pipe::Misc => i.misc,
            Pipe::Int
                if matches!(
                    instruction.opcode.as_str(),
                    "IMAD" | "XMAD" | "IMUL" | "IMUL32I" | "IMAD32I" | "IDP" | "IDP4A"
                ) =>
            {
                // `IMAD.MOV` and `IMAD.IADD` are moves and adds on the FMA-heavy pipe.
                i.int_mul
            }
            Pipe::Int | Pipe::Control => i.int,
            Pipe::GlobalLoad | Pipe::GlobalAtomic | Pipe::Texture => m.global,
            Pipe::GlobalStore => 0.0,
            Pipe::Shared => m.shared,
            Pipe::Local => m.local,
            Pipe::Constant => m.constant,
        }
    }
}

fn register_slot(r: Register) -> usize {
    match r {
        Register::General(n) => n as usize,
        Register::Uniform(n) => 256 + n as usize,
        Register::Predicate(n) => 320 + n as usize,
        Register::UniformPredicate(n) => 328 + n as usize,
        Register::Barrier(n) => 336 + n as usize,
        Register::ConditionCode => 352,
    }
}

/// Critical path through a warp's instruction trace, streamed so that a trace of millions of
/// instructions costs no memory: feed instructions in execution order, then `finish`.
pub struct CriticalPath<'a> {
    kernel: &'a Kernel,
    arch: Arch,
    table: &'a LatencyTable,
    ready: Vec<f64>,
    producers: Vec<Vec<Register>>,
    reads: Vec<Vec<Register>>,
    latency: Vec<f64>,
    previous: Option<(usize, f64)>,
}

impl<'a> CriticalPath<'a> {
    pub fn new(kernel: &'a Kernel, arch: Arch, table: &'a LatencyTable) -> CriticalPath<'a> {
        let ins = &kernel.instructions;
        CriticalPath {
            kernel,
            arch,
            table,
            ready: vec![0.0; 353],
            producers: ins.iter().map(regs::writes).collect(),
            reads: ins.iter().map(regs::reads).collect(),
            latency: ins.iter().map(|i| table.producer(i, arch)).collect(),
            previous: None,
        }
    }

    /// The edge from the instruction before to instruction `next`.
    fn sequence_edge(&self, previous: usize, next: usize) -> f64 {
        let p = &self.kernel.instructions[previous];
        let is_branch = p.branch_target().is_some() || (p.opcode == "EXIT" && p.guard.is_some());
        if is_branch {
            if next == previous + 1 {
                self.table.branch_not_taken
            } else {
                self.table.branch_taken
            }
        } else if p.dual_issue_with_next && self.arch.has_dual_issue() && next == previous + 1 {
            self.table.dual_issue
        } else {
            self.table.ilp
        }
    }

    /// Adds the next executed instruction; returns when it issues.
    pub fn push(&mut self, index: usize) -> f64 {
        let mut start = match self.previous {
            Some((p, t)) => t + self.sequence_edge(p, index),
            None => 0.0,
        };
        for r in &self.reads[index] {
            start = start.max(self.ready[register_slot(*r)]);
        }
        let done = start + self.latency[index];
        for r in &self.producers[index] {
            self.ready[register_slot(*r)] = done;
        }
        self.previous = Some((index, start));
        start
    }

    /// The path's length: the last instruction's issue plus the block replacement latency.
    pub fn finish(&self) -> f64 {
        self.previous.map_or(0.0, |(_, t)| t) + self.table.block_replacement
    }
}

/// The static path with every loop run once (seed 004, Figure 5.6): conditional branches are
/// not taken, except one that leaves a loop whose header has already run twice (a top-tested
/// loop's exit); back edges are not taken unless unconditional.
pub fn single_pass_trace(kernel: &Kernel, cfg: &Cfg) -> Result<Vec<usize>> {
    let mut visits = vec![0usize; cfg.loops.len()];
    let mut trace = Vec::new();
    let mut b = 0usize;
    let limit = 64 * kernel.instructions.len() + 64;
    loop {
        if let Some(l) = cfg.loop_with_header(b) {
            visits[l] += 1;
        }
        let block = &cfg.blocks[b];
        trace.extend(block.start..block.end);
        if trace.len() > limit {
            let line = kernel.instructions[block.start].line;
            return Err(Error::at(
                line,
                "the single-pass path does not reach an EXIT: a loop with no exit?",
            ));
        }
        let leaves_done_loop = |to: usize| {
            (0..cfg.loops.len())
                .any(|l| cfg.loop_contains(l, b) && !cfg.loop_contains(l, to) && visits[l] >= 2)
        };
        b = match block.exit {
            Exit::End | Exit::Indirect => break,
            Exit::FallThrough | Exit::ConditionalEnd | Exit::Jump { .. } => match block.successors.first() {
                Some(&s) => s,
                None => break,
            },
            Exit::Branch { target } => {
                let Some(fall) = block.fall_through() else { break };
                if cfg.is_back_edge(b, target) || !leaves_done_loop(target) {
                    fall
                } else {
                    target
                }
            }
        };
    }
    Ok(trace)
}

/// Steady-state latency of one more iteration of loop `l`: the issue-time difference between
/// the third and second of three passes through its body, with the back edge taken.
pub fn iteration_latency(
    kernel: &Kernel,
    cfg: &Cfg,
    trace: &[usize],
    l: usize,
    arch: Arch,
    table: &LatencyTable,
) -> f64 {
    let lp = &cfg.loops[l];
    let header = cfg.blocks[lp.header_block].start;
    // The body as the single pass runs it: from the header's first run to the loop's exit.
    let Some(first) = trace.iter().position(|&i| i == header) else {
        return 0.0;
    };
    let body: Vec<usize> = trace[first..]
        .iter()
        .copied()
        .take_while(|&i| lp.blocks.binary_search(&cfg.block_of[i]).is_ok())
        .collect();
    let mut path = CriticalPath::new(kernel, arch, table);
    let mut starts = Vec::new();
    for _ in 0..3 {
        starts.push(path.push(body[0]));
        for &i in &body[1..] {
            path.push(i);
        }
    }
    starts[2] - starts[1]
}

/// The latency bound as a polynomial in the trip counts: the single pass's critical path plus,
/// for each loop, its extra iterations times its steady-state iteration latency.
pub fn static_latency_bound(
    kernel: &Kernel,
    cfg: &Cfg,
    freq: &[Poly],
    arch: Arch,
    table: &LatencyTable,
) -> Result<Poly> {
    let trace = single_pass_trace(kernel, cfg)?;
    let mut path = CriticalPath::new(kernel, arch, table);
    for &i in &trace {
        path.push(i);
    }
    let mut bound = Poly::constant(path.finish());
    for (l, lp) in cfg.loops.iter().enumerate() {
        let runs = &freq[lp.header_block];
        let extra = runs.add(&runs.divide_by_var(l).unwrap_or_default().scale(-1.0));
        bound = bound.add(&extra.scale(iteration_latency(kernel, cfg, &trace, l, arch, table)));
    }
    Ok(bound)
}
