//! NCCL's CollNet Direct all-reduce (`src/device/all_reduce.h`, the CollNet Direct work
//! element; `src/graph/connect.cc`, `connectCollNet`): inside each node every GPU heads
//! 1/ppn of the value (its own NIC's share). Each GPU sends every head its part of the head's
//! share over NVLink ("scatter"); a head reduces what it received and hands it to its NIC; the
//! network's switches (SHARP) reduce the heads of that share across the nodes and return the
//! result; the head sends it to every GPU of its node ("gather").
//!
//! The switches' reduction is simulated by what it costs the ports: a head's NIC carries its
//! share once up and once down. A shift of the share to the head of the same share on the
//! next node loads every NIC exactly so (one flow each way), as NVLS's shift stands for the
//! NVSwitch's (see [`super::nccl`]). The call is cut into chunks that pipeline through the
//! three phases: in stage s a member scatters chunk s, sends the shares of chunk s − 1 it
//! heads to the network, gathers chunk s − 2 to its node and receives the node's gather of
//! chunk s − 3. Every receive waits on a send of an earlier stage, so no stage waits on a
//! later one, and the messages between two members arrive in the order they are received.
//!
//! NVLS across nodes (NCCL's NVLS with CollNet) is the same division of labour with the
//! NVSwitch doing the node's part: in every NVLS round a GPU's port carries what NVLS moves on
//! one node (the shift of [`super::nccl`]) and its NIC its 1/ppn share up and down (the shift
//! above), at once.

use super::rails;
use super::trees::Costs;
use super::Step;
use crate::Pid;

/// Stages a chunk spends from its scatter to the receipt of its gather.
const DEPTH: usize = 3;

/// Where a member sits: its node's members, its index among them (its share), and the heads
/// of its share on the next and the previous node.
struct Seat {
    node: Vec<usize>,
    local: usize,
    next: Pid,
    previous: Pid,
}

/// Member `me`'s seat; `None` where the members are on one node or the nodes differ in size
/// (a share then has no head on some node).
fn seat(members: &[Pid], groups: &[usize], me: usize) -> Option<Seat> {
    let mut nodes = rails::nodes(groups, members.len());
    let ppn = nodes.first()?.len();
    if nodes.len() < 2 || nodes.iter().any(|node| node.len() != ppn) {
        return None;
    }
    let at = nodes.iter().position(|node| node.contains(&me))?;
    let local = nodes[at].iter().position(|&m| m == me)?;
    let n = nodes.len();
    Some(Seat {
        local,
        next: members[nodes[(at + 1) % n][local]],
        previous: members[nodes[(at + n - 1) % n][local]],
        node: nodes.swap_remove(at),
    })
}

/// Member `me`'s steps of a CollNet Direct all-reduce of `bytes`; `None` as for [`seat`].
pub fn collnet_direct(
    members: &[Pid],
    groups: &[usize],
    me: usize,
    costs: &Costs,
    bytes: f64,
) -> Option<Vec<Step>> {
    let Seat {
        node, next, previous, ..
    } = seat(members, groups, me)?;
    let peers: Vec<Pid> = node.iter().filter(|&&m| m != me).map(|&m| members[m]).collect();
    let count = costs.count.max(1);
    // One head's share of one chunk.
    let share = bytes / count as f64 / node.len() as f64;
    let to_peers = |steps: &mut Vec<Step>| {
        if !peers.is_empty() {
            steps.push(Step::Delay { seconds: costs.delay });
        }
        steps.extend(peers.iter().map(|&to| Step::Send {
            to,
            bytes: share * costs.wire,
        }));
    };
    let from_peers = |steps: &mut Vec<Step>| steps.extend(peers.iter().map(|&from| Step::Receive { from }));
    let mut steps = Vec::new();
    for stage in 0..count + DEPTH {
        if stage < count {
            to_peers(&mut steps);
        }
        if (1..=count).contains(&stage) {
            from_peers(&mut steps);
            steps.push(Step::Delay {
                seconds: costs.delay_net,
            });
            steps.push(Step::Send {
                to: next,
                bytes: share * costs.wire_net,
            });
        }
        if (2..count + 2).contains(&stage) {
            steps.push(Step::Receive { from: previous });
            to_peers(&mut steps);
        }
        if stage >= DEPTH {
            from_peers(&mut steps);
        }
    }
    Some(steps)
}

/// Member `me`'s steps of an all-reduce of `bytes` as NVLS inside each node and SHARP between
/// nodes: `costs.count` stages, each standing for `costs.rounds / count` NVLS rounds and paying
/// their latency (`costs.delay` each); `None` as for [`seat`].
pub fn nvls_sharp(
    members: &[Pid],
    groups: &[usize],
    me: usize,
    costs: &Costs,
    bytes: f64,
) -> Option<Vec<Step>> {
    let Seat {
        node,
        local,
        next,
        previous,
    } = seat(members, groups, me)?;
    let ppn = node.len();
    let count = costs.count.max(1);
    let stage = bytes / count as f64;
    let delay = costs.stage_delay(count);
    let switch = (ppn > 1).then(|| {
        (
            members[node[(local + 1) % ppn]],
            members[node[(local + ppn - 1) % ppn]],
        )
    });
    let mut steps = Vec::new();
    for _ in 0..count {
        steps.push(Step::Delay { seconds: delay });
        if let Some((right, _)) = switch {
            steps.push(Step::Send {
                to: right,
                bytes: stage * (1.0 + 1.0 / ppn as f64) * costs.wire,
            });
        }
        steps.push(Step::Send {
            to: next,
            bytes: stage / ppn as f64 * costs.wire_net,
        });
        if let Some((_, left)) = switch {
            steps.push(Step::Receive { from: left });
        }
        steps.push(Step::Receive { from: previous });
    }
    Some(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sends(steps: &[Step]) -> Vec<(Pid, f64)> {
        steps
            .iter()
            .filter_map(|s| match s {
                Step::Send { to, bytes } => Some((*to, *bytes)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn every_member_sends_what_it_receives_and_its_nic_carries_its_share_once() {
        // Two nodes of 4, 8 chunks of 64 bytes: a GPU scatters and gathers 3/4 of the value,
        // and its NIC carries 1/4 of it, to the same GPU of the other node.
        let members: Vec<Pid> = (0..8).collect();
        let groups = [0, 0, 0, 0, 1, 1, 1, 1];
        let plans: Vec<Vec<Step>> = (0..8)
            .map(|me| collnet_direct(&members, &groups, me, &Costs::bytes_only(8), 512.0).unwrap())
            .collect();
        for (me, plan) in plans.iter().enumerate() {
            let out = sends(plan);
            let network: f64 = out.iter().filter(|(to, _)| to / 4 != me / 4).map(|s| s.1).sum();
            let inside: f64 = out.iter().filter(|(to, _)| to / 4 == me / 4).map(|s| s.1).sum();
            assert_eq!(network, 128.0, "member {me}");
            assert_eq!(inside, 2.0 * 384.0, "member {me}");
            assert!(out.iter().all(|(to, _)| to / 4 == me / 4 || *to == (me + 4) % 8));
            // Every message sent to `me` is received by it, one receive per message.
            for (from, sender) in plans.iter().enumerate() {
                let sent = sends(sender).iter().filter(|(to, _)| *to == me).count();
                let received = plan
                    .iter()
                    .filter(|s| matches!(s, Step::Receive { from: f } if *f == from))
                    .count();
                assert_eq!(sent, received, "{from} -> {me}");
            }
        }
    }

    #[test]
    fn nvls_across_nodes_loads_a_port_as_nvls_does_and_a_nic_with_its_share() {
        // Two nodes of 4, 8 stages of 64 bytes: a port carries 5/4 of the value each way, a
        // NIC 1/4 of it, to the same GPU of the other node.
        let members: Vec<Pid> = (0..8).collect();
        let groups = [0, 0, 0, 0, 1, 1, 1, 1];
        for me in 0..8 {
            let plan = nvls_sharp(&members, &groups, me, &Costs::bytes_only(8), 512.0).unwrap();
            let out = sends(&plan);
            let network: f64 = out
                .iter()
                .filter(|(to, _)| *to == (me + 4) % 8)
                .map(|s| s.1)
                .sum();
            let inside: f64 = out.iter().filter(|(to, _)| to / 4 == me / 4).map(|s| s.1).sum();
            assert_eq!((network, inside), (128.0, 640.0), "member {me}");
            assert_eq!(
                out.len(),
                plan.iter().filter(|s| matches!(s, Step::Receive { .. })).count()
            );
        }
        assert!(nvls_sharp(&members, &[0; 8], 0, &Costs::bytes_only(8), 512.0).is_none());
    }

    #[test]
    fn one_node_or_unequal_nodes_have_no_collnet_plan() {
        let members: Vec<Pid> = (0..6).collect();
        assert!(collnet_direct(&members, &[0; 6], 0, &Costs::bytes_only(4), 1e6).is_none());
        assert!(collnet_direct(&members, &[0, 0, 0, 0, 1, 1], 0, &Costs::bytes_only(4), 1e6).is_none());
        assert!(collnet_direct(&members, &[0, 0, 0, 1, 1, 1], 0, &Costs::bytes_only(4), 1e6).is_some());
    }
}
