//! NCCL's algorithms as plans of point-to-point steps (NCCL 2.2x, `src/device/*.h` and
//! `src/graph/trees.cc`), with a protocol's costs given as a [`Pipeline`]:
//!
//! - **Ring** all-reduce, all-gather and reduce-scatter: 2(n − 1) (resp. n − 1) steps, each
//!   sending one 1/n share to the right neighbour and receiving one from the left, after the
//!   step latency. NCCL cuts each step into chunks over `NCCL_STEPS` = 8 buffer slots and
//!   channels, which keeps every link busy the whole step: one flow of the step's bytes takes
//!   the same time, so the ring is not cut further. Across nodes the ring is NCCL's
//!   rail-aligned channels, one leaving each node through each GPU ([`super::rails`]), the
//!   hops between nodes carrying `wire_net` bytes per data byte. Broadcast and reduce are a chain around
//!   the ring from (to) the root, cut into chunks that follow each other down the chain.
//! - **Tree** (all-reduce): NCCL's double binary tree — two in-order binary trees over the
//!   ranks, the second the mirror of the first (n even) or the first shifted by one (n odd),
//!   so that a rank is a leaf in one of them; each tree reduces half of the value to its root
//!   and broadcasts it back, in chunks pipelined along the tree (all chunks up, then down).
//!   Across nodes it is NCCL's tree graph instead: per channel a chain inside each node and
//!   the double binary tree between the chains' heads, one channel per rail
//!   ([`super::trees`]).
//! - **CollNet Direct** (all-reduce across nodes whose NICs reach SHARP switches): every GPU
//!   heads a share, gathered to it over NVLink and reduced across nodes by the switches
//!   ([`super::collnet`]); on one node, the ring.
//! - **NVLS-Tree** (all-reduce across nodes): NVLS inside each node and, per rail, the double
//!   binary tree between the nodes for each GPU's shard, pipelined a loop at a time as NCCL's
//!   kernel runs it (`nvls_tree.rs`); on one node, NVLS.
//! - **NVLS** (all-reduce, all-gather, reduce-scatter on an NVSwitch): the switch reduces and
//!   multicasts, so a GPU's port carries per direction about `bytes · (1 + 1/n)` in an
//!   all-reduce (its value up; the reduced shard it asked for plus the multicast of the others'
//!   shards down) and `bytes · (n − 1)/n` in an all-gather or reduce-scatter. A shift of that
//!   many bytes to the ring's right neighbour loads every port exactly so, one flow each way,
//!   so NVLS is simulated as that shift, in rounds of NCCL's NVLS chunks on every channel,
//!   each round paying the round latency (the multimem loads and stores' synchronisation).
//!   Across nodes (NCCL runs it there only with CollNet) each node's NVLS runs beside its
//!   GPUs' shares going over SHARP ([`super::collnet`]).
//!
//! Every send carries `wire` bytes per data byte (the protocol's flags, the share of a link
//! NCCL's copies reach); the plan starts with the protocol's base latency.

use super::trees::{self, double_tree};
use super::{collnet, nvls_tree, rails, Step};
use crate::Pid;

/// Which of NCCL's algorithms a plan runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Ring,
    Tree,
    Nvls,
    /// NVLS inside each node, a double binary tree between nodes (`nvls_tree.rs`).
    NvlsTree,
    /// Heads per share inside each node, SHARP between nodes ([`super::collnet`]).
    CollNetDirect,
}

/// What a protocol costs, and how a call is cut.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pipeline {
    pub shape: Shape,
    /// Wire bytes per data byte.
    pub wire: f64,
    /// Wire bytes per data byte of a ring's hops between nodes (see [`super::rails`]).
    pub wire_net: f64,
    /// Paid once before the first step [s].
    pub base_delay: f64,
    /// Paid before each step's send (ring step, NVLS round), and by the first chunk through a
    /// tree hop [s].
    pub step_delay: f64,
    /// Paid instead of `step_delay` by the first chunk through a tree hop between nodes (NCCL's
    /// network latency per hop, tuning.cc's `interLat`) [s]; rings pay `step_delay`.
    pub step_delay_net: f64,
    /// Data bytes per pipelined chunk (chain, tree) or NVLS round; 0: the call in one piece.
    pub chunk: f64,
    /// Most chunks a call is cut into (the pipeline's fill is then at most depth/max of it).
    pub max_chunks: usize,
    /// Data bytes per NVLS round where a chunk holds several (NVLS-Tree's loops); 0: a
    /// chunk is a round.
    pub round: f64,
    /// The least time per data byte a member sends in a step or stage [s/B] (rings, chains and
    /// trees: NCCL's bus bandwidth for LL and LL128; NVLS-Tree: NCCL's per-channel ceiling, per
    /// data byte of a loop); 0: none.
    pub pace: f64,
}

impl Pipeline {
    /// How many chunks `bytes` is cut into.
    fn chunk_count(&self, bytes: f64) -> usize {
        self.chunks(bytes).0
    }

    /// NVLS's rounds of `bytes`: its chunks without the `max_chunks` bound, or of `round`.
    fn rounds(&self, bytes: f64) -> usize {
        let round = if self.round > 0.0 { self.round } else { self.chunk };
        if round > 0.0 {
            (bytes / round).ceil().max(1.0) as usize
        } else {
            1
        }
    }

    /// Chunks of `bytes` and the size of each.
    fn chunks(&self, bytes: f64) -> (usize, f64) {
        let count = if self.chunk > 0.0 {
            ((bytes / self.chunk).ceil() as usize).clamp(1, self.max_chunks.max(1))
        } else {
            1
        };
        (count, bytes / count as f64)
    }
}

/// The steps of member `me` in `collective` run as `pipeline` says; `bytes` as in
/// [`super::plan`] except all-gather, whose `bytes` is the gathered whole (nccl-tests' size).
/// Collectives NCCL does not run with the shape (a tree all-gather, an NVLS broadcast) run as
/// its ring; scatter, gather and barrier, which NCCL does not have, run binomially.
/// `groups[i]` is member i's node (NVLink island): rings across several nodes run as NCCL's
/// rail-aligned channels ([`super::rails`]); a `groups` of another length is one node.
pub fn plan_nccl(
    collective: super::Collective,
    pipeline: &Pipeline,
    members: &[Pid],
    groups: &[usize],
    root: usize,
    me: usize,
    bytes: f64,
) -> Vec<Step> {
    use super::Collective as C;
    let n = members.len();
    if n < 2 {
        return Vec::new();
    }
    let share = bytes / n as f64;
    let mut steps = vec![Step::Delay {
        seconds: pipeline.base_delay,
    }];
    let shift = |volume: f64| nvls(members, me, pipeline, bytes, volume);
    let costs = trees::Costs {
        wire: pipeline.wire,
        wire_net: pipeline.wire_net,
        delay: pipeline.step_delay,
        delay_net: pipeline.step_delay_net,
        count: pipeline.chunk_count(bytes),
        rounds: pipeline.rounds(bytes),
        pace: pipeline.pace,
    };
    let wires = (pipeline.wire, pipeline.wire_net);
    let ring = |rounds| {
        let step = (share, pipeline.step_delay, pipeline.pace);
        rails::ring_steps(members, groups, me, rounds, step, wires)
    };
    steps.extend(match (collective, pipeline.shape) {
        (C::Allreduce, Shape::NvlsTree) => nvls_tree::plan(members, groups, me, &costs, bytes)
            .unwrap_or_else(|| shift(bytes * (1.0 + 1.0 / n as f64))),
        (C::Allreduce, Shape::Nvls) => collnet::nvls_sharp(members, groups, me, &costs, bytes)
            .unwrap_or_else(|| shift(bytes * (1.0 + 1.0 / n as f64))),
        (C::Allreduce, Shape::CollNetDirect) => {
            collnet::collnet_direct(members, groups, me, &costs, bytes).unwrap_or_else(|| ring(2 * (n - 1)))
        }
        (C::Allgather | C::ReduceScatter, Shape::Nvls) => shift(bytes * (n - 1) as f64 / n as f64),
        (C::Allreduce, Shape::Tree) => trees::chain_tree(members, groups, me, &costs, bytes)
            .unwrap_or_else(|| tree(members, me, pipeline, bytes)),
        (C::Allreduce, _) => ring(2 * (n - 1)),
        (C::Allgather | C::ReduceScatter, _) => ring(n - 1),
        (C::Broadcast, _) => chain(members, me, pipeline, bytes, (0..n).map(|k| (root + k) % n)),
        (C::Reduce, _) => chain(members, me, pipeline, bytes, (1..=n).map(|k| (root + k) % n)),
        (C::Alltoall, _) => {
            // NCCL's all-to-all is every pair's send and receive at once (grouped p2p).
            let others = (1..n).map(|k| (me + k) % n);
            let mut all: Vec<Step> = others
                .clone()
                .map(|i| Step::Send {
                    to: members[i],
                    bytes: bytes * pipeline.wire,
                })
                .collect();
            all.extend(others.map(|k| Step::Receive {
                from: members[(n + 2 * me - k) % n],
            }));
            all
        }
        (C::Scatter | C::Gather | C::Barrier, _) => {
            super::plan(collective, super::Algorithm::Binomial, members, root, me, bytes)
        }
    });
    steps
}

/// NVLS as rounds of a shift of `volume` bytes in all to the right neighbour; a round
/// handles `pipeline.chunk` bytes of the call's `bytes`.
fn nvls(members: &[Pid], me: usize, pipeline: &Pipeline, bytes: f64, volume: f64) -> Vec<Step> {
    let n = members.len();
    let rounds = if pipeline.chunk > 0.0 {
        (bytes / pipeline.chunk).ceil().max(1.0) as usize
    } else {
        1
    };
    let (right, left) = (members[(me + 1) % n], members[(me + n - 1) % n]);
    let step = [
        Step::Delay {
            seconds: pipeline.step_delay,
        },
        Step::Send {
            to: right,
            bytes: volume / rounds as f64 * pipeline.wire,
        },
        Step::Receive { from: left },
    ];
    (0..rounds).flat_map(|_| step).collect()
}

/// A pipelined chain through members in `order` (its first member is the source).
fn chain(
    members: &[Pid],
    me: usize,
    pipeline: &Pipeline,
    bytes: f64,
    order: impl Iterator<Item = usize>,
) -> Vec<Step> {
    let order: Vec<usize> = order.collect();
    let Some(at) = order.iter().position(|&m| m == me) else {
        return Vec::new();
    };
    let (count, size) = pipeline.chunks(bytes);
    let previous = at.checked_sub(1).map(|p| members[order[p]]);
    let next = order.get(at + 1).map(|&m| members[m]);
    let mut steps = Vec::new();
    for _ in 0..count {
        if let Some(from) = previous {
            steps.push(Step::Receive { from });
        }
        if let Some(to) = next {
            steps.extend(hop(pipeline, to, size));
            steps.push(Step::Flush);
        }
    }
    steps
}

fn hop(pipeline: &Pipeline, to: Pid, bytes: f64) -> impl Iterator<Item = Step> {
    [
        Step::Delay {
            seconds: pipeline.step_delay,
        },
        Step::Send {
            to,
            bytes: bytes * pipeline.wire,
        },
    ]
    .into_iter()
    .chain(Step::paced(bytes, pipeline.pace))
}

/// Chunks the tree where a rank waits on others runs behind the other (see `tree`).
const LAG: usize = 2;

/// The double-binary-tree all-reduce: half of `bytes` per tree, up then down, in chunks.
fn tree(members: &[Pid], me: usize, pipeline: &Pipeline, bytes: f64) -> Vec<Step> {
    let n = members.len();
    let trees = [double_tree(0, me, n), double_tree(1, me, n)];
    let (count, size) = pipeline.chunks(bytes / 2.0);
    // NCCL runs the two trees on channels of their own; a plan is one sequence, so the tree
    // where this rank waits on others (up: where it reduces its children's chunks; down: where
    // it only receives) runs one chunk behind the other. In step, a rank's sends in one tree
    // would wait on its receives in the other, and each chunk would cross both trees' depths
    // one after the other (the whole call then took depth × its bandwidth time).
    let mut steps = Vec::new();
    for up in [true, false] {
        let leads = |children: &Vec<usize>| children.is_empty() == up;
        for chunk in 0..count + LAG {
            let leading = trees.iter().filter(|(_, c)| leads(c) && chunk < count);
            let lagging = trees.iter().filter(|(_, c)| !leads(c) && chunk >= LAG);
            for (parent, children) in leading.chain(lagging) {
                if up {
                    steps.extend(children.iter().map(|&c| Step::Receive { from: members[c] }));
                    if let Some(p) = parent {
                        steps.extend(hop(pipeline, members[*p], size));
                    }
                } else {
                    if let Some(p) = parent {
                        steps.push(Step::Receive { from: members[*p] });
                    }
                    for &c in children {
                        steps.extend(hop(pipeline, members[c], size));
                    }
                }
            }
            steps.push(Step::Flush);
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::super::Collective;
    use super::*;

    fn pipeline(shape: Shape) -> Pipeline {
        Pipeline {
            shape,
            wire: 1.0,
            wire_net: 1.0,
            base_delay: 1.0,
            step_delay: 0.5,
            step_delay_net: 0.5,
            chunk: 0.0,
            max_chunks: 64,
            round: 0.0,
            pace: 0.0,
        }
    }

    /// Data bytes sent by each member.
    fn sent(collective: Collective, p: &Pipeline, n: usize, bytes: f64) -> Vec<f64> {
        let members: Vec<Pid> = (0..n).collect();
        (0..n)
            .map(|me| {
                plan_nccl(collective, p, &members, &[], 0, me, bytes)
                    .iter()
                    .map(|s| match *s {
                        Step::Send { bytes, .. } => bytes,
                        _ => 0.0,
                    })
                    .sum()
            })
            .collect()
    }

    #[test]
    fn double_binary_trees_are_trees_and_each_rank_is_a_leaf_in_one() {
        for n in 2..40 {
            for t in 0..2 {
                let mut roots = 0;
                for r in 0..n {
                    let (parent, children) = double_tree(t, r, n);
                    assert!(children.len() <= 2, "n {n} tree {t} rank {r}");
                    for &c in &children {
                        assert_eq!(double_tree(t, c, n).0, Some(r), "n {n} tree {t}: {c} under {r}");
                    }
                    match parent {
                        None => roots += 1,
                        Some(p) => assert!(double_tree(t, p, n).1.contains(&r), "n {n} t {t} r {r}"),
                    }
                }
                assert_eq!(roots, 1, "n {n} tree {t}");
            }
            if n % 2 == 0 {
                // NCCL's point of two trees: no rank is interior in both.
                let interior_in_both = (0..n)
                    .filter(|&r| !double_tree(0, r, n).1.is_empty() && !double_tree(1, r, n).1.is_empty())
                    .count();
                assert_eq!(interior_in_both, 0, "n {n}");
            }
        }
    }

    #[test]
    fn volumes_are_the_bandwidth_optimal_ones() {
        let n = 8;
        // Ring all-reduce: 2 (n − 1)/n of the value; all-gather and reduce-scatter (n − 1)/n.
        let ring = pipeline(Shape::Ring);
        assert_eq!(sent(Collective::Allreduce, &ring, n, 80.0), [140.0; 8]);
        assert_eq!(sent(Collective::Allgather, &ring, n, 80.0), [70.0; 8]);
        assert_eq!(sent(Collective::ReduceScatter, &ring, n, 80.0), [70.0; 8]);
        // NVLS: (1 + 1/n) of the value through each port.
        let nvls = Pipeline {
            chunk: 30.0,
            ..pipeline(Shape::Nvls)
        };
        assert_eq!(sent(Collective::Allreduce, &nvls, n, 80.0), [90.0; 8]);
        // The tree sends each half up once (not the root) and down to each child.
        let tree = Pipeline {
            chunk: 10.0,
            ..pipeline(Shape::Tree)
        };
        let total: f64 = sent(Collective::Allreduce, &tree, n, 80.0).iter().sum();
        assert_eq!(total, 2.0 * 2.0 * (n - 1) as f64 * 40.0);
    }

    #[test]
    fn latencies_and_chunks_are_in_the_plan() {
        let members = [3, 4, 5, 6];
        let p = Pipeline {
            chunk: 25.0,
            ..pipeline(Shape::Ring)
        };
        let delays = |steps: &[Step]| {
            steps
                .iter()
                .filter_map(|s| match *s {
                    Step::Delay { seconds } => Some(seconds),
                    _ => None,
                })
                .sum::<f64>()
        };
        let ring = plan_nccl(Collective::Allreduce, &p, &members, &[], 0, 1, 100.0);
        assert_eq!(delays(&ring), 1.0 + 6.0 * 0.5);
        // A broadcast of 100 bytes in chunks of 25: the root sends four chunks, waiting each.
        let root = plan_nccl(Collective::Broadcast, &p, &members, &[], 2, 2, 100.0);
        assert_eq!(root.iter().filter(|s| **s == Step::Flush).count(), 4);
        assert!(root.contains(&Step::Send { to: 6, bytes: 25.0 }));
        let last = plan_nccl(Collective::Broadcast, &p, &members, &[], 2, 1, 100.0);
        assert_eq!(last[1..], [Step::Receive { from: 3 }; 4]);
        assert!(plan_nccl(Collective::Allreduce, &p, &[7], &[], 0, 0, 1.0).is_empty());
    }
}
