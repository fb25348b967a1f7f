//! The control-flow graph of a kernel: basic blocks, their successors, dominators and
//! post-dominators, and the natural loops found from back edges, named L0, L1, … in order of
//! header address.

use crate::error::{Error, Result};
use crate::sass::{Instruction, Kernel};
use serde::Serialize;
use std::collections::BTreeSet;

/// How control leaves a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Falls into the next block.
    FallThrough,
    /// `BRA` without a guard.
    Jump { target: usize },
    /// `@P BRA`: taken or falls through.
    Branch { target: usize },
    /// `EXIT` or `RET` without a guard (the warp ends).
    End,
    /// `@P EXIT`: ends the lanes whose guard holds; the rest fall through.
    ConditionalEnd,
    /// An indirect branch (`BRX`, `JMX`): its targets are unknown.
    Indirect,
}

/// A run of instructions entered only at the top and left only at the bottom.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Index of the first instruction in the kernel.
    pub start: usize,
    /// One past the last instruction.
    pub end: usize,
    pub exit: Exit,
    /// Successor blocks: the branch target first, then the fall-through.
    pub successors: Vec<usize>,
}

impl Block {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The block after this one in address order, if control can fall into it.
    pub fn fall_through(&self) -> Option<usize> {
        match self.exit {
            Exit::FallThrough | Exit::Branch { .. } | Exit::ConditionalEnd => self.successors.last().copied(),
            _ => None,
        }
    }
}

/// A natural loop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Loop {
    /// `L0`, `L1`, … by header address.
    pub id: String,
    /// Address of the header's first instruction.
    pub header: u64,
    /// Address of the (last) branch that jumps back to the header.
    pub back_edge: u64,
    /// Instructions in the body, nested loops included.
    pub body_instructions: usize,
    /// 1 for a loop in no other loop, 2 inside one loop, …
    pub depth: usize,
    #[serde(skip)]
    pub header_block: usize,
    /// Blocks of the loop, sorted.
    #[serde(skip)]
    pub blocks: Vec<usize>,
    /// Index in `Cfg::loops` of the innermost enclosing loop.
    #[serde(skip)]
    pub parent: Option<usize>,
}

/// Blocks and loops of one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// Block of each instruction.
    pub block_of: Vec<usize>,
    pub loops: Vec<Loop>,
}

/// Instruction index of a branch target address: the first instruction at or after it (on
/// Maxwell, a target may name the control word in front of an instruction).
fn target_index(instructions: &[Instruction], address: u64, line: usize) -> Result<usize> {
    let index = instructions.partition_point(|i| i.address < address);
    if index == instructions.len() {
        return Err(Error::at(
            line,
            format!("branch target {address:#x} lies past the kernel's last instruction"),
        ));
    }
    Ok(index)
}

fn is_end(instruction: &Instruction) -> bool {
    matches!(instruction.opcode.as_str(), "EXIT" | "RET" | "KILL" | "KIL")
}

fn is_indirect(instruction: &Instruction) -> bool {
    matches!(instruction.opcode.as_str(), "BRX" | "JMX")
}

/// A guard that can be false. `@PT` always holds; `@!PT` never does.
fn is_conditional(instruction: &Instruction) -> bool {
    instruction
        .guard
        .is_some_and(|g| !g.reg.is_constant() || g.negated)
}

impl Cfg {
    /// Builds the graph. Instructions after the last reachable one (the `BRA` to itself and the
    /// `NOP` padding that close every cuobjdump listing) form unreachable blocks.
    pub fn build(kernel: &Kernel) -> Result<Cfg> {
        let ins = &kernel.instructions;
        if ins.is_empty() {
            return Err(Error::at(kernel.line, "the kernel has no instruction"));
        }
        let mut leaders = BTreeSet::from([0usize]);
        for (i, instruction) in ins.iter().enumerate() {
            let transfers =
                instruction.branch_target().is_some() || is_end(instruction) || is_indirect(instruction);
            if transfers && instruction.opcode != "CALL" {
                leaders.insert(i + 1);
            }
            if let Some(target) = instruction.branch_target() {
                if instruction.opcode != "CALL" {
                    leaders.insert(target_index(ins, target, instruction.line)?);
                }
            }
        }
        leaders.retain(|&l| l < ins.len());
        let starts: Vec<usize> = leaders.into_iter().collect();
        let mut block_of = vec![0; ins.len()];
        let mut blocks = Vec::with_capacity(starts.len());
        for (b, &start) in starts.iter().enumerate() {
            let end = starts.get(b + 1).copied().unwrap_or(ins.len());
            block_of[start..end].fill(b);
            blocks.push(Block {
                start,
                end,
                exit: Exit::FallThrough,
                successors: Vec::new(),
            });
        }
        for b in 0..blocks.len() {
            let last = &ins[blocks[b].end - 1];
            let next = (b + 1 < blocks.len()).then_some(b + 1);
            let conditional = is_conditional(last);
            let (exit, successors) = if last.opcode == "CALL" {
                (Exit::FallThrough, next.into_iter().collect())
            } else if let Some(target) = last.branch_target() {
                let target = block_of[target_index(ins, target, last.line)?];
                if conditional {
                    (
                        Exit::Branch { target },
                        std::iter::once(target).chain(next).collect(),
                    )
                } else {
                    (Exit::Jump { target }, vec![target])
                }
            } else if is_end(last) {
                if conditional {
                    (Exit::ConditionalEnd, next.into_iter().collect())
                } else {
                    (Exit::End, Vec::new())
                }
            } else if is_indirect(last) {
                (Exit::Indirect, Vec::new())
            } else {
                (Exit::FallThrough, next.into_iter().collect())
            };
            blocks[b].exit = exit;
            blocks[b].successors = successors;
        }
        let mut cfg = Cfg {
            blocks,
            block_of,
            loops: Vec::new(),
        };
        cfg.loops = cfg.find_loops(ins);
        Ok(cfg)
    }

    /// Blocks reachable from the entry, in reverse post-order.
    pub fn reverse_post_order(&self) -> Vec<usize> {
        let successors: Vec<Vec<usize>> = self.blocks.iter().map(|b| b.successors.clone()).collect();
        reverse_post_order(&successors, 0)
    }

    /// Immediate dominators; `None` for unreachable blocks, the entry's is itself.
    pub fn dominators(&self) -> Vec<Option<usize>> {
        let successors: Vec<Vec<usize>> = self.blocks.iter().map(|b| b.successors.clone()).collect();
        immediate_dominators(&successors, 0)
    }

    /// Each block's predecessors.
    pub fn predecessors(&self) -> Vec<Vec<usize>> {
        let mut predecessors = vec![Vec::new(); self.blocks.len()];
        for (b, block) in self.blocks.iter().enumerate() {
            for &s in &block.successors {
                predecessors[s].push(b);
            }
        }
        predecessors
    }

    fn dominates(idom: &[Option<usize>], a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match idom[b] {
                Some(d) if d != b => b = d,
                _ => return false,
            }
        }
    }

    fn find_loops(&self, ins: &[Instruction]) -> Vec<Loop> {
        let idom = self.dominators();
        let predecessors = self.predecessors();
        // header → (latches)
        let mut headers: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for (b, block) in self.blocks.iter().enumerate() {
            if idom[b].is_none() {
                continue;
            }
            for &s in &block.successors {
                if Self::dominates(&idom, s, b) {
                    headers.entry(s).or_default().push(b);
                }
            }
        }
        let mut loops: Vec<Loop> = headers
            .into_iter()
            .map(|(header, latches)| {
                let mut body = BTreeSet::from([header]);
                let mut work: Vec<usize> = latches.clone();
                while let Some(b) = work.pop() {
                    if body.insert(b) {
                        work.extend(predecessors[b].iter().copied().filter(|p| idom[*p].is_some()));
                    }
                }
                let latch = latches
                    .iter()
                    .copied()
                    .max_by_key(|&l| self.blocks[l].end)
                    .unwrap_or(header);
                Loop {
                    id: String::new(),
                    header: ins[self.blocks[header].start].address,
                    back_edge: ins[self.blocks[latch].end - 1].address,
                    body_instructions: body.iter().map(|&b| self.blocks[b].len()).sum(),
                    depth: 1,
                    header_block: header,
                    blocks: body.into_iter().collect(),
                    parent: None,
                }
            })
            .collect();
        loops.sort_by_key(|l| l.header);
        for (i, l) in loops.iter_mut().enumerate() {
            l.id = format!("L{i}");
        }
        for i in 0..loops.len() {
            // The innermost enclosing loop is the smallest one holding this header.
            let parent = (0..loops.len())
                .filter(|&j| j != i && loops[j].blocks.binary_search(&loops[i].header_block).is_ok())
                .min_by_key(|&j| loops[j].blocks.len());
            loops[i].parent = parent;
        }
        for i in 0..loops.len() {
            let mut depth = 1;
            let mut p = loops[i].parent;
            while let Some(j) = p {
                depth += 1;
                p = loops[j].parent;
            }
            loops[i].depth = depth;
        }
        loops
    }

    /// The loops holding `block`, innermost first.
    pub fn loops_of(&self, block: usize) -> Vec<usize> {
        let mut inner: Vec<usize> = (0..self.loops.len())
            .filter(|&l| self.loops[l].blocks.binary_search(&block).is_ok())
            .collect();
        inner.sort_by_key(|&l| std::cmp::Reverse(self.loops[l].depth));
        inner
    }

    /// The loop whose header is `block`.
    pub fn loop_with_header(&self, block: usize) -> Option<usize> {
        self.loops.iter().position(|l| l.header_block == block)
    }

    /// Whether loop `l` holds `block`.
    pub fn loop_contains(&self, l: usize, block: usize) -> bool {
        self.loops[l].blocks.binary_search(&block).is_ok()
    }

    /// Whether `from → to` jumps back to the header of a loop holding `from`.
    pub fn is_back_edge(&self, from: usize, to: usize) -> bool {
        self.loop_with_header(to)
            .is_some_and(|l| self.loop_contains(l, from))
    }

    /// Loop id (`L0`) → index.
    pub fn loop_index(&self, id: &str) -> Option<usize> {
        self.loops.iter().position(|l| l.id == id)
    }
}

/// Nodes reachable from `entry` in a graph given by its `successors`, in reverse post-order.
pub fn reverse_post_order(successors: &[Vec<usize>], entry: usize) -> Vec<usize> {
    let mut seen = vec![false; successors.len()];
    let mut order = Vec::with_capacity(successors.len());
    let mut stack = vec![(entry, 0usize)];
    seen[entry] = true;
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        if let Some(&s) = successors[b].get(*next) {
            *next += 1;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            order.push(b);
            stack.pop();
        }
    }
    order.reverse();
    order
}

/// Immediate dominators of a graph given by its `successors` (Cooper, Harvey and Kennedy's
/// iterative algorithm): `None` for nodes unreachable from `entry`, whose own is itself. On the
/// reversed graph from a virtual exit, the same gives post-dominators.
pub fn immediate_dominators(successors: &[Vec<usize>], entry: usize) -> Vec<Option<usize>> {
    let n = successors.len();
    let rpo = reverse_post_order(successors, entry);
    let mut position = vec![usize::MAX; n];
    for (i, &b) in rpo.iter().enumerate() {
        position[b] = i;
    }
    let mut predecessors = vec![Vec::new(); n];
    for (b, out) in successors.iter().enumerate() {
        for &s in out {
            predecessors[s].push(b);
        }
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[entry] = Some(entry);
    let intersect = |idom: &[Option<usize>], mut a: usize, mut b: usize| {
        while a != b {
            while position[a] > position[b] {
                a = idom[a].unwrap_or(entry);
            }
            while position[b] > position[a] {
                b = idom[b].unwrap_or(entry);
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new = None;
            for &p in &predecessors[b] {
                if idom[p].is_some() {
                    new = Some(match new {
                        None => p,
                        Some(x) => intersect(&idom, p, x),
                    });
                }
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

/// Immediate post-dominators (Cooper, Harvey and Kennedy on the reversed graph, with a virtual
/// exit after every block that has no successor); `None` where only the exit post-dominates.
/// A guarded `EXIT` counts as falling through: the threads it ends need no reconvergence.
pub fn immediate_post_dominators(cfg: &Cfg) -> Vec<Option<usize>> {
    let n = cfg.blocks.len();
    let exit = n;
    let forward = |b: usize| -> Vec<usize> {
        if b == exit {
            Vec::new()
        } else if cfg.blocks[b].successors.is_empty() {
            vec![exit]
        } else {
            cfg.blocks[b].successors.clone()
        }
    };
    let mut backward = vec![Vec::new(); n + 1];
    for b in 0..n {
        for s in forward(b) {
            backward[s].push(b);
        }
    }
    let mut idom = immediate_dominators(&backward, exit);
    idom.truncate(n);
    idom.into_iter().map(|d| d.filter(|&d| d != exit)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::parse;

    fn cfg(body: &[&str]) -> Cfg {
        let mut text = "\tcode for sm_90\n\t\tFunction : test\n".to_string();
        for (k, ins) in body.iter().enumerate() {
            text += &format!("        /*{:04x}*/ {ins} ;\n", 16 * k);
        }
        let listing = parse(&text).expect("parses");
        Cfg::build(&listing.kernels[0]).expect("builds")
    }

    #[test]
    fn a_diamond_joins_at_its_bottom() {
        // 0: branch; 1: then; 2: else; 3: join.
        let g = cfg(&["@P0 BRA 0x30", "NOP", "BRA 0x40", "NOP", "EXIT"]);
        let ipdom = immediate_post_dominators(&g);
        let join = g.block_of[4];
        assert_eq!(ipdom[g.block_of[0]], Some(join));
        assert_eq!(ipdom[g.block_of[1]], Some(join));
        assert_eq!(ipdom[g.block_of[3]], Some(join));
        assert_eq!(ipdom[join], None, "only the exit follows");
    }

    #[test]
    fn a_loop_latch_joins_at_the_exit_and_an_exiting_side_does_not_join() {
        let g = cfg(&["NOP", "@P0 BRA 0x0", "@P1 BRA 0x40", "NOP", "EXIT"]);
        let ipdom = immediate_post_dominators(&g);
        assert_eq!(ipdom[g.block_of[1]], Some(g.block_of[2]));
        // One side of the second branch exits at once, the other later: no common block.
        let g = cfg(&["@P0 BRA 0x30", "NOP", "EXIT", "NOP", "EXIT"]);
        assert_eq!(immediate_post_dominators(&g)[g.block_of[0]], None);
        // A guarded EXIT falls through for reconvergence.
        let g = cfg(&["@P0 BRA 0x30", "@P1 EXIT", "NOP", "EXIT"]);
        assert_eq!(immediate_post_dominators(&g)[g.block_of[0]], Some(g.block_of[3]));
    }
}
