//! NCCL's rings across nodes: several channels, each a ring over every member, arranged so
//! that each channel leaves a node through a different GPU (and so its own NIC) — the
//! "rail-aligned" rings that NCCL's ring search finds on boards with a NIC per GPU
//! (`src/graph/search.cc`, `src/graph/rings.cc`).
//!
//! Members are grouped by node (NVLink island). With one node there is one channel, the ring
//! in member order. With several, there are as many channels as the smallest node has
//! members; channel c visits the nodes in order of their first member, and in each node its
//! members from local index c on (mod the node's count). The hop from one node to the next in
//! channel c therefore goes from the node's member c − 1 to the next node's member c: every
//! channel crosses between nodes through different GPUs. Each channel carries an equal share
//! of the data; a member's sends of one step to the same neighbour are one message (their
//! flows would share the same route equally), and likewise its receives.

use super::Step;
use crate::Pid;

/// The channels' rings as member indices in ring order; `groups[i]` is member i's node (any
/// id; equal ids share a node). A `groups` of another length than the members' counts as
/// one node.
pub fn channel_rings(groups: &[usize], members: usize) -> Vec<Vec<usize>> {
    let nodes = nodes(groups, members);
    if nodes.len() < 2 {
        return vec![(0..members).collect()];
    }
    let channels = nodes.iter().map(Vec::len).min().unwrap_or(1).max(1);
    (0..channels)
        .map(|c| {
            nodes
                .iter()
                .flat_map(|node| (0..node.len()).map(move |k| node[(c + k) % node.len()]))
                .collect()
        })
        .collect()
}

/// Member indices per node, nodes in order of their first member; a `groups` of another
/// length than the members' count is one node.
pub fn nodes(groups: &[usize], members: usize) -> Vec<Vec<usize>> {
    if groups.len() == members {
        by_node(groups)
    } else {
        vec![(0..members).collect()]
    }
}

/// Member indices per node, nodes in order of their first member.
fn by_node(groups: &[usize]) -> Vec<Vec<usize>> {
    let mut nodes: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, &g) in groups.iter().enumerate() {
        match nodes.iter_mut().find(|(id, _)| *id == g) {
            Some((_, list)) => list.push(i),
            None => nodes.push((g, vec![i])),
        }
    }
    nodes.into_iter().map(|(_, list)| list).collect()
}

/// What member `me` sends and receives in one step of the channel rings: (destination,
/// share of the step's data, whether the hop leaves the node) and the distinct sources.
pub fn neighbours(groups: &[usize], members: usize, me: usize) -> (Vec<(usize, f64, bool)>, Vec<usize>) {
    let rings = channel_rings(groups, members);
    let share = 1.0 / rings.len() as f64;
    let mut sends: Vec<(usize, f64, bool)> = Vec::new();
    let mut sources: Vec<usize> = Vec::new();
    for ring in &rings {
        let n = ring.len();
        let Some(at) = ring.iter().position(|&m| m == me) else {
            continue;
        };
        let (right, left) = (ring[(at + 1) % n], ring[(at + n - 1) % n]);
        let leaves = groups.get(right) != groups.get(me);
        match sends.iter_mut().find(|s| s.0 == right) {
            Some(s) => s.1 += share,
            None => sends.push((right, share, leaves)),
        }
        if !sources.contains(&left) {
            sources.push(left);
        }
    }
    (sends, sources)
}

/// `rounds` steps of the channel rings, each moving `bytes` of data from every member (split
/// over the channels), after `delay`; `wire` and `wire_net`: wire bytes per data byte inside
/// a node and between nodes; a step lasts at least `pace` per data byte its member sends.
pub fn ring_steps(
    members: &[Pid],
    groups: &[usize],
    me: usize,
    rounds: usize,
    (bytes, delay, pace): (f64, f64, f64),
    (wire, wire_net): (f64, f64),
) -> Vec<Step> {
    let (sends, sources) = neighbours(groups, members.len(), me);
    let mut step = vec![Step::Delay { seconds: delay }];
    step.extend(sends.iter().map(|&(to, share, leaves)| Step::Send {
        to: members[to],
        bytes: bytes * share * if leaves { wire_net } else { wire },
    }));
    step.extend(Step::paced(bytes, pace));
    step.extend(sources.iter().map(|&from| Step::Receive { from: members[from] }));
    (0..rounds).flat_map(|_| step.iter().copied()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_node_is_one_ring_in_member_order() {
        assert_eq!(channel_rings(&[3, 3, 3, 3], 4), [[0, 1, 2, 3]]);
        assert_eq!(channel_rings(&[], 3), [[0, 1, 2]]);
        let (sends, sources) = neighbours(&[0; 4], 4, 3);
        assert_eq!(sends, [(0, 1.0, false)]);
        assert_eq!(sources, [2]);
    }

    #[test]
    fn rotated_rings_are_rings_and_leave_each_node_through_distinct_gpus() {
        // Three nodes of 4 GPUs, interleaved in member order to check the grouping.
        let groups: Vec<usize> = (0..12).map(|i| [7, 5, 9][i % 3]).collect();
        let rings = channel_rings(&groups, 12);
        assert_eq!(rings.len(), 4);
        let mut exits: Vec<Vec<usize>> = vec![Vec::new(); 3];
        for ring in &rings {
            let mut seen = ring.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..12).collect::<Vec<_>>(), "each member once per channel");
            for (at, &m) in ring.iter().enumerate() {
                let next = ring[(at + 1) % ring.len()];
                if groups[next] != groups[m] {
                    exits[m % 3].push(m);
                }
            }
        }
        for node in exits {
            let mut distinct = node.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(
                distinct.len(),
                4,
                "each channel leaves a node through its own GPU"
            );
        }
        // Node 7's members are 0, 3, 6, 9: channel 1 enters at 3 and leaves from 0.
        assert_eq!(rings[1][..4], [3, 6, 9, 0]);
        assert_eq!(rings[1][4], 4);
    }

    #[test]
    fn a_member_sends_its_nodes_share_inside_and_one_channel_out() {
        // Two nodes of 4: member 3 (local 3 of node 0) leaves the node in channel 0 (to
        // member 4) and passes the three other channels to member 0.
        let groups = [0, 0, 0, 0, 1, 1, 1, 1];
        let (mut sends, mut sources) = neighbours(&groups, 8, 3);
        sends.sort_by_key(|s| s.0);
        sources.sort_unstable();
        assert_eq!(sends, [(0, 0.75, false), (4, 0.25, true)]);
        assert_eq!(sources, [2, 6]);
        let steps = ring_steps(
            &[10, 11, 12, 13, 14, 15, 16, 17],
            &groups,
            3,
            2,
            (8.0, 0.5, 0.25),
            (2.0, 1.0),
        );
        // Per step: the latency, two sends, the pace's wait (8 B at 0.25 s/B), two receives.
        assert_eq!(steps.len(), 2 * 6);
        assert!(steps.contains(&Step::Delay { seconds: 2.0 }));
        let sent: f64 = steps
            .iter()
            .map(|s| match *s {
                Step::Send { bytes, .. } => bytes,
                _ => 0.0,
            })
            .sum();
        // Per step: 6 data bytes inside at 2 wire bytes each, 2 out at 1.
        assert_eq!(sent, 2.0 * (6.0 * 2.0 + 2.0));
    }
}
