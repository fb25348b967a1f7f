//! Static per-warp counts: how often each block runs, as a polynomial in the loops' trip
//! counts, from the control-flow graph alone.
//!
//! The rules (a static analysis must guess branch outcomes; emulation knows them):
//! - a loop's header runs `N` times per entry into the loop (`--trip L0=N`); for the
//!   bottom-tested loops nvcc emits, that is the number of times the body runs, so the
//!   listing's one pass plus `body × (N − 1)`;
//! - a conditional branch that leaves a loop is taken once per entry into that loop;
//! - any other conditional branch, and a guarded `EXIT`, is assumed not taken (the
//!   fall-through path is the one the listing shows running, as in seed 004, Figure 5.6).

use crate::arch::{access_bytes, memory_space, pipe, Arch, Pipe, Space};
use crate::cfg::{Cfg, Exit};
use crate::poly::Poly;
use crate::sass::Kernel;
use std::collections::BTreeMap;

/// How often each block runs per warp.
pub fn block_frequencies(cfg: &Cfg) -> Vec<Poly> {
    let n = cfg.blocks.len();
    let mut inflow = vec![Poly::zero(); n];
    let mut freq = vec![Poly::zero(); n];
    inflow[0] = Poly::constant(1.0);
    // Loops `from` is in and `to` is not, i.e. the loops an edge leaves.
    let exited = |from: usize, to: usize| -> Vec<usize> {
        (0..cfg.loops.len())
            .filter(|&l| cfg.loop_contains(l, from) && !cfg.loop_contains(l, to))
            .collect()
    };
    let once_per_entry =
        |f: &Poly, loops: &[usize]| loops.iter().try_fold(f.clone(), |p, &l| p.divide_by_var(l));
    for b in cfg.reverse_post_order() {
        freq[b] = match cfg.loop_with_header(b) {
            Some(l) => inflow[b].mul(&Poly::var(l)),
            None => inflow[b].clone(),
        };
        let f = freq[b].clone();
        let block = &cfg.blocks[b];
        let mut send = |to: usize, flow: Poly| {
            if !cfg.is_back_edge(b, to) {
                inflow[to] = inflow[to].add(&flow);
            }
        };
        match block.exit {
            Exit::FallThrough | Exit::Jump { .. } | Exit::ConditionalEnd => {
                if let Some(&to) = block.successors.first() {
                    let leaves = exited(b, to);
                    let flow = if leaves.is_empty() {
                        f.clone()
                    } else {
                        once_per_entry(&f, &leaves).unwrap_or(f.clone())
                    };
                    send(to, flow);
                }
            }
            Exit::Branch { target } => {
                let Some(fall) = block.fall_through() else {
                    continue;
                };
                // The side that leaves its loop once per entry: the other side of a back edge,
                // else the only side that leaves a loop; the other side takes the rest.
                let taken_exits = !exited(b, target).is_empty();
                let fall_exits = !exited(b, fall).is_empty();
                let leaving = if cfg.is_back_edge(b, target) {
                    fall
                } else if cfg.is_back_edge(b, fall) || (taken_exits && !fall_exits) {
                    target
                } else if fall_exits && !taken_exits {
                    fall
                } else {
                    send(fall, f.clone());
                    continue;
                };
                let staying = if leaving == fall { target } else { fall };
                let loops = exited(b, leaving);
                let out = if loops.is_empty() {
                    Poly::zero()
                } else {
                    once_per_entry(&f, &loops).unwrap_or_default()
                };
                send(staying, f.add(&out.scale(-1.0)));
                send(leaving, out);
            }
            Exit::End | Exit::Indirect => {}
        }
    }
    freq
}

/// Per-warp counts as polynomials in the trip counts.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticCounts {
    pub executed: Poly,
    pub issued: Poly,
    pub cuda_core: Poly,
    pub by_pipe: BTreeMap<Pipe, Poly>,
    /// Global-memory bytes per warp, every access taken as fully coalesced (static mode
    /// cannot see addresses; emulation counts the sectors).
    pub gmem_bytes: Poly,
}

/// Counts for `kernel` on `arch` from block frequencies.
pub fn static_counts(kernel: &Kernel, cfg: &Cfg, freq: &[Poly], arch: Arch) -> StaticCounts {
    let mut counts = StaticCounts {
        executed: Poly::zero(),
        issued: Poly::zero(),
        cuda_core: Poly::zero(),
        by_pipe: BTreeMap::new(),
        gmem_bytes: Poly::zero(),
    };
    for (b, block) in cfg.blocks.iter().enumerate() {
        let f = &freq[b];
        if *f == Poly::zero() {
            continue;
        }
        for instruction in &kernel.instructions[block.start..block.end] {
            let p = pipe(instruction, arch);
            counts.executed = counts.executed.add(f);
            let pair = instruction.dual_issue_with_next && arch.has_dual_issue();
            if !pair {
                counts.issued = counts.issued.add(f);
            }
            if p.uses_cuda_cores() {
                counts.cuda_core = counts.cuda_core.add(f);
            }
            let entry = counts.by_pipe.entry(p).or_default();
            *entry = entry.add(f);
            if memory_space(instruction, arch) == Some(Space::Global) {
                let bytes = 32.0 * f64::from(access_bytes(instruction));
                counts.gmem_bytes = counts.gmem_bytes.add(&f.scale(bytes));
            }
        }
    }
    counts
}
