//! NCCL's NVLS-Tree all-reduce across nodes as a plan, after its kernel
//! (`RunWorkColl<ncclFuncAllReduce, …, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE>` in
//! `src/device/all_reduce.h`) and `connectNvls` (`src/graph/connect.cc`).
//!
//! Inside each node the switch reduces and multicasts (NVLS, simulated as the node's NVLS
//! shift of [`super::nccl`]: a GPU's port carries `bytes · (1 + 1/ppn)` per direction, half
//! going up, half coming down); between nodes, per rail (the members of one local index, one
//! per node: NCCL's NVLS heads, each with its NIC), the double binary tree over the nodes
//! ([`super::trees::rail_trees`]) carries that GPU's 1/ppn shard (channel c runs tree c mod 2,
//! so each tree takes half).
//!
//! **The pipeline.** NCCL moves a *loop* at a time (every channel one chunk to each head), and
//! its warps work side by side: scatter, NVLS reduce and send up the tree, receive from the tree
//! and multicast, gather. A stage of the plan is one loop, in two phases (up, then down), and
//! a hop takes [`HOP`] = 2 stages (the sender's work, then the transfer): going up loop i is
//! NVLS-reduced in stage i and is at a member in stage i + 1 + 2 × its height; coming down it
//! is at a member in stage i + 2 × its depth and is multicast in stage i + 1 + 2 × the trees'
//! depth. In each stage where it sends, a member receives its inputs, takes the stage's
//! processing time (the larger of NCCL's per-channel ceiling, `perChMaxNVLSTreeBws`, for half a
//! loop, and half the loop's NVLS rounds' latency), then hands its outputs on once its sends of
//! the stage before are delivered; the shift from the node's neighbour is received two stages
//! after it is sent. So a stage lasts the longer of its processing and its transfers, and a
//! loop's way through the stages (the pipeline's fill) costs both at each. Past 256 loops
//! (`NVLS_TREE_STAGES` of the caller) a stage stands for several, and the fill grows with it:
//! about 4 × the trees' depth half-stages: 2.3 % of the call on 8 nodes at 8 GiB, where
//! NCCL's 1,024 loops would make it 0.6 %.

use super::trees::{levels, phase, rail_trees, Costs, Item, Leveled};
use super::{rails, Step};
use crate::Pid;

/// The node's NVLS shift: `bytes` data bytes per stage to `right`, received from `left`
/// [`HOP`] stages later, in stages `from..from + count` of a phase.
#[derive(Clone, Copy, Debug)]
struct Shift {
    right: usize,
    left: usize,
    bytes: f64,
    from: usize,
    count: usize,
}

impl Shift {
    fn at(&self, stage: usize) -> bool {
        (self.from..self.from + self.count).contains(&stage)
    }
}

/// NCCL's NVLS-Tree all-reduce: `bytes` in `costs.count` loops standing for `costs.rounds`
/// NVLS rounds; `None` on one node.
pub fn plan(members: &[Pid], groups: &[usize], me: usize, costs: &Costs, bytes: f64) -> Option<Vec<Step>> {
    let trees = rail_trees(groups, members.len());
    let nodes = rails::nodes(groups, members.len());
    let node = nodes.iter().find(|node| node.contains(&me))?;
    if trees.is_empty() {
        return None;
    }
    let local = node.iter().position(|&m| m == me)?;
    let ppn = node.len();
    let count = costs.count.max(1);
    let chunk = bytes / count as f64;
    let leveled: Vec<Leveled> = trees.iter().map(|t| (t, levels(t))).collect();
    let deepest = leveled
        .iter()
        .flat_map(|(_, (_, depth))| depth.iter().copied())
        .max()
        .unwrap_or(0);
    // Each phase moves half of a loop: half the ceiling's time, half the rounds' latency.
    let process = (chunk * costs.pace).max(costs.stage_delay(count)) / 2.0;
    let member = Member {
        members,
        groups,
        me,
        costs,
    };
    let mut steps = Vec::new();
    for up in [true, false] {
        let shift = (ppn > 1).then(|| Shift {
            right: node[(local + 1) % ppn],
            left: node[(local + ppn - 1) % ppn],
            bytes: chunk * (1.0 + 1.0 / ppn as f64) / 2.0,
            from: if up { 0 } else { HOP * deepest + 1 },
            count,
        });
        let (mut sends, mut receives) = phase(&leveled, me, up, (count, chunk / ppn as f64 / 2.0), HOP);
        if up {
            // The loop is NVLS-reduced before it goes up the tree.
            for item in sends.iter_mut().chain(receives.iter_mut()) {
                item.stage += 1;
                item.other += 1;
            }
        }
        member.run_phase(&sends, &receives, shift, process, &mut steps);
    }
    Some(steps)
}

/// Stages a hop takes: the sender's processing, then the transfer, which goes on while the
/// sender processes its next stage.
const HOP: usize = 2;

/// The member whose steps a plan makes, and what its sends carry.
struct Member<'a> {
    members: &'a [Pid],
    groups: &'a [usize],
    me: usize,
    costs: &'a Costs,
}

impl Member<'_> {
    fn send(&self, peer: usize, bytes: f64) -> Step {
        Step::Send {
            to: self.members[peer],
            bytes: bytes * self.costs.wire_between(self.groups, self.me, peer),
        }
    }

    /// One phase: `sends` and `receives` by stage (sorted), the shift beside them.
    fn run_phase(
        &self,
        sends: &[Item],
        receives: &[Item],
        shift: Option<Shift>,
        process: f64,
        steps: &mut Vec<Step>,
    ) {
        let last = sends
            .iter()
            .chain(receives)
            .map(|i| i.stage + 1)
            .chain(shift.map(|sh| sh.from + sh.count))
            .max()
            .unwrap_or(0);
        let (mut s, mut r) = (0, 0);
        for stage in 0..last + HOP {
            while r < receives.len() && receives[r].stage == stage {
                steps.push(Step::Receive {
                    from: self.members[receives[r].peer],
                });
                r += 1;
            }
            if let Some(sh) = shift.filter(|sh| stage >= HOP && sh.at(stage - HOP)) {
                steps.push(Step::Receive {
                    from: self.members[sh.left],
                });
            }
            let first = s;
            while s < sends.len() && sends[s].stage == stage {
                s += 1;
            }
            let shifting = shift.filter(|sh| sh.at(stage));
            if first == s && shifting.is_none() {
                continue;
            }
            steps.push(Step::Delay { seconds: process });
            steps.push(Step::Flush);
            if let Some(sh) = shifting {
                steps.push(self.send(sh.right, sh.bytes));
            }
            steps.extend(sends[first..s].iter().map(|i| self.send(i.peer, i.bytes)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the plans of members grouped as `groups`, every send delivered at once and the
    /// messages between two members taken in order: whether each plan reaches its end with no
    /// message left over (no receive waits for ever, every message sent is received).
    fn runs_through(groups: &[usize], count: usize) -> bool {
        let n = groups.len();
        let members: Vec<Pid> = (0..n).collect();
        let costs = Costs::bytes_only(count);
        let plans: Vec<Vec<Step>> = (0..n)
            .map(|me| plan(&members, groups, me, &costs, 64.0).unwrap())
            .collect();
        let mut at = vec![0; n];
        let mut mail = std::collections::HashMap::<(Pid, Pid), usize>::new();
        let mut moved = true;
        while moved {
            moved = false;
            for me in 0..n {
                while let Some(&step) = plans[me].get(at[me]) {
                    match step {
                        Step::Send { to, .. } => *mail.entry((me, to)).or_default() += 1,
                        Step::Receive { from } => match mail.get_mut(&(from, me)) {
                            Some(waiting) if *waiting > 0 => *waiting -= 1,
                            _ => break,
                        },
                        _ => {}
                    }
                    at[me] += 1;
                    moved = true;
                }
            }
        }
        (0..n).all(|m| at[m] == plans[m].len()) && mail.values().all(|&c| c == 0)
    }

    proptest::proptest! {
        #[test]
        fn every_plan_runs_through(sizes in proptest::collection::vec(1usize..5, 2..7), count in 1usize..9) {
            // Nodes of `sizes` GPUs each, equal or not.
            let groups: Vec<usize> = sizes.iter().enumerate().flat_map(|(node, &k)| vec![node; k]).collect();
            proptest::prop_assert!(runs_through(&groups, count), "{sizes:?}, {count} loops");
        }
    }

    #[test]
    fn a_gpu_carries_its_shard_over_the_network_and_its_nvls_share_over_nvlink() {
        // Two nodes of 2: over the network each GPU sends its 1/ppn shard once up (as a leaf
        // of one tree, half) and once down (as the root of the other, half); over NVLink the
        // NVLS shift, (1 + 1/ppn) of the value per direction, half up and half down.
        let groups = [0, 0, 1, 1];
        let steps = plan(&[0, 1, 2, 3], &groups, 0, &Costs::bytes_only(4), 80.0).unwrap();
        let to = |peer: usize| -> f64 {
            steps
                .iter()
                .filter_map(|s| match s {
                    Step::Send { to, bytes } if *to == peer => Some(*bytes),
                    _ => None,
                })
                .sum()
        };
        assert_eq!(to(2), 80.0 / 2.0);
        assert_eq!(to(1), 80.0 * 1.5);
    }

    #[test]
    fn the_nvls_reduce_comes_a_stage_before_the_tree_and_the_multicast_after_it() {
        // Two nodes of 2, one loop: going up, member 0 shifts in stage 0 and sends its shard in
        // stage 1 (it is a leaf of one tree); coming down the multicast waits for the tree.
        let steps = plan(&[0, 1, 2, 3], &[0, 0, 1, 1], 0, &Costs::bytes_only(1), 8.0).unwrap();
        let order: Vec<usize> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Send { to, .. } => Some(*to),
                _ => None,
            })
            .collect();
        assert_eq!(order, [1, 2, 2, 1]);
    }
}
