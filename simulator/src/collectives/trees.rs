//! NCCL's all-reduce trees across nodes (NVLink islands) as plans, after NCCL's
//! `src/graph/connect.cc` (`ncclTopoPreset`, `connectTrees`, `connectNvls`) and
//! `src/graph/trees.cc` (`ncclGetDtree`):
//!
//! - **Tree**: one channel per GPU of the smallest node, as the rings of [`super::rails`]. In
//!   channel c each node's members form a chain from local index c on (NCCL's `treeIntra`, the
//!   tree graph inside the node); the chain's head, the GPU of rail c and so of its own NIC, is
//!   the node's end of NCCL's double binary tree over the nodes (`ncclGetDtree` over node
//!   indices, [`double_tree`]). Each channel runs both trees (NCCL's channels c and
//!   c + nChannels), half of its share on each. A chunk is reduced up the chains and the tree,
//!   then broadcast down (`runTreeUpDown` of `src/device/all_reduce.h`; NCCL built with CUDA
//!   11.4 or later runs `runTreeSplit`, both halves at once: docs/VALIDATION-NETWORK.md).
//! - **NVLS-Tree**'s trees: per rail l (the members of local index l, one per node: NCCL's
//!   NVLS heads, each with its NIC), the double binary tree over the nodes ([`rail_trees`]);
//!   its plan, NVLS beside them, is `nvls_tree.rs`'s.
//!
//! Schedule (the tree's; NVLS-Tree spaces its hops out): chunk i of a tree is, going up, at
//! member m in stage i + the height of m in that tree (its longest path down to a leaf), and
//! going down in stage i + m's depth. A member
//! runs its stages in order: it receives what the stage needs (sent in earlier stages), then
//! sends and waits for its sends to be delivered (`Step::Flush`); a hop's latency delays the
//! first chunk through it only (NCCL's slots hide it behind the chunks that follow). No
//! receive waits on a later stage, so the channels' rotated chains, which form cycles when run
//! in lockstep, cannot deadlock, and chunks follow each other along a path as in NCCL's
//! pipeline. Items between two members with the same (sender's stage, receiver's stage) are one
//! message, which both ends know; the rest of the matching is by count, which the stage order
//! keeps safe (a receiver's first k receives from a sender, up to its stage s, need only what
//! the sender sends before stage s).

use super::{rails, Step};
use crate::Pid;

/// What a tree plan costs, from the protocol's pipeline (`super::nccl::Pipeline`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    /// Wire bytes per data byte inside a node, and between nodes.
    pub wire: f64,
    pub wire_net: f64,
    /// A hop's latency [s], paid before the first chunk's sends (NVLS: before each round's);
    /// `delay_net` where one of them leaves the node.
    pub delay: f64,
    pub delay_net: f64,
    /// Chunks a call is cut into (stages of NVLS-Tree), and NVLS's rounds.
    pub count: usize,
    pub rounds: usize,
    /// The least time per data byte [s/B]: a member's sends of a tree stage (NCCL's bus
    /// bandwidth for LL and LL128), or a channel's loop (NVLS-Tree: NCCL's per-channel
    /// ceiling); 0: none.
    pub pace: f64,
}

impl Costs {
    /// Wire bytes per data byte from member `from` to `to`: `wire_net` between nodes.
    pub fn wire_between(&self, groups: &[usize], from: usize, to: usize) -> f64 {
        if groups.get(to) != groups.get(from) {
            self.wire_net
        } else {
            self.wire
        }
    }

    /// What one of `count` stages pays where each stands for `rounds / count` NVLS rounds
    /// (`delay` each): NVLS across nodes is simulated in fewer stages than it has rounds.
    pub fn stage_delay(&self, count: usize) -> f64 {
        self.delay * self.rounds as f64 / count as f64
    }
}

#[cfg(test)]
impl Costs {
    /// `count` chunks, one NVLS round each, that cost nothing but their bytes.
    pub(super) fn bytes_only(count: usize) -> Self {
        Costs {
            wire: 1.0,
            wire_net: 1.0,
            delay: 0.0,
            delay_net: 0.0,
            count,
            rounds: count,
            pace: 0.0,
        }
    }
}

/// One tree over the members: per member, `None` outside the tree, else (parent, children).
pub type Tree = Vec<Option<(Option<usize>, Vec<usize>)>>;

/// Lowest set bit.
fn low_bit(i: usize) -> usize {
    i & i.wrapping_neg()
}

/// The in-order binary tree over 1..=n: (parent, children) of `i`, `None` for the root.
fn in_order(i: usize, n: usize) -> (Option<usize>, Vec<usize>) {
    let parent_of = |j: usize| {
        let b = low_bit(j);
        (j ^ b) | (b << 1)
    };
    let root = 1 << (usize::BITS - 1 - n.leading_zeros());
    let parent = (i != root).then(|| {
        let mut p = parent_of(i);
        while p > n {
            p = parent_of(p);
        }
        p
    });
    let half = low_bit(i) >> 1;
    let mut children = Vec::new();
    if half > 0 {
        children.push(i - half);
        let mut right = i + half;
        while right > n && low_bit(right) > 1 {
            right -= low_bit(right) >> 1;
        }
        if right <= n {
            children.push(right);
        }
    }
    (parent, children)
}

/// (parent, children) of rank `r` in tree `t` (0 or 1) of NCCL's double binary tree over n.
pub fn double_tree(t: usize, r: usize, n: usize) -> (Option<usize>, Vec<usize>) {
    // Tree 1 maps rank r to r' (mirror for even n, shift for odd n) and back.
    let to = |r: usize| match (t, n % 2) {
        (0, _) => r,
        (_, 0) => n - 1 - r,
        _ => (r + n - 1) % n,
    };
    let back = |r: usize| match (t, n % 2) {
        (0, _) => r,
        (_, 0) => n - 1 - r,
        _ => (r + 1) % n,
    };
    let (parent, children) = in_order(to(r) + 1, n);
    (
        parent.map(|p| back(p - 1)),
        children.into_iter().map(|c| back(c - 1)).collect(),
    )
}

/// NCCL's tree channels across nodes: two trees (NCCL's double binary tree) per channel, one
/// channel per GPU of the smallest node; none on one node. `groups` as in [`rails::nodes`].
pub fn chain_trees(groups: &[usize], members: usize) -> Vec<Tree> {
    let nodes = rails::nodes(groups, members);
    let n = nodes.len();
    if n < 2 {
        return Vec::new();
    }
    let channels = nodes.iter().map(Vec::len).min().unwrap_or(1).max(1);
    let mut trees = Vec::new();
    for c in 0..channels {
        let chain = |v: usize, k: usize| nodes[v][(c + k) % nodes[v].len()];
        for t in 0..2 {
            let mut tree: Tree = vec![None; members];
            for (v, node) in nodes.iter().enumerate() {
                let (up, down) = double_tree(t, v, n);
                for k in 0..node.len() {
                    let parent = if k > 0 {
                        Some(chain(v, k - 1))
                    } else {
                        up.map(|p| chain(p, 0))
                    };
                    let mut children = Vec::new();
                    if k + 1 < node.len() {
                        children.push(chain(v, k + 1));
                    }
                    if k == 0 {
                        children.extend(down.iter().map(|&u| chain(u, 0)));
                    }
                    tree[chain(v, k)] = Some((parent, children));
                }
            }
            trees.push(tree);
        }
    }
    trees
}

/// NVLS-Tree's trees between nodes: per rail (local index, up to the smallest node's count)
/// the two trees of NCCL's double binary tree over the nodes' members of that index.
pub fn rail_trees(groups: &[usize], members: usize) -> Vec<Tree> {
    let nodes = rails::nodes(groups, members);
    let n = nodes.len();
    if n < 2 {
        return Vec::new();
    }
    let rails = nodes.iter().map(Vec::len).min().unwrap_or(1);
    let mut trees = Vec::new();
    for l in 0..rails {
        for t in 0..2 {
            let mut tree: Tree = vec![None; members];
            for (v, node) in nodes.iter().enumerate() {
                let (up, down) = double_tree(t, v, n);
                let children = down.iter().map(|&u| nodes[u][l]).collect();
                tree[node[l]] = Some((up.map(|p| nodes[p][l]), children));
            }
            trees.push(tree);
        }
    }
    trees
}

/// Per member of `tree`: its height (longest path down to a leaf) and depth (from the root).
pub(super) fn levels(tree: &Tree) -> (Vec<usize>, Vec<usize>) {
    let n = tree.len();
    let (mut height, mut depth) = (vec![0; n], vec![0; n]);
    // Preorder from the roots; heights then come from the reversed order.
    let mut order: Vec<usize> = (0..n).filter(|&m| matches!(tree[m], Some((None, _)))).collect();
    let mut at = 0;
    while at < order.len() {
        let m = order[at];
        if let Some((_, children)) = &tree[m] {
            for &c in children {
                depth[c] = depth[m] + 1;
                order.push(c);
            }
        }
        at += 1;
    }
    for &m in order.iter().rev() {
        if let Some((_, children)) = &tree[m] {
            height[m] = children.iter().map(|&c| height[c] + 1).max().unwrap_or(0);
        }
    }
    (height, depth)
}

/// A tree with its members' (heights, depths).
pub(super) type Leveled<'a> = (&'a Tree, (Vec<usize>, Vec<usize>));

/// A message of a phase: this member's stage, the peer, the peer's stage, data bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Item {
    pub(super) stage: usize,
    pub(super) peer: usize,
    pub(super) other: usize,
    pub(super) bytes: f64,
}

/// Sorts by (stage, peer, other) and merges equal keys.
fn merged(mut items: Vec<Item>) -> Vec<Item> {
    items.sort_by_key(|i| (i.stage, i.peer, i.other));
    let mut out: Vec<Item> = Vec::new();
    for item in items {
        match out.last_mut() {
            Some(last) if (last.stage, last.peer, last.other) == (item.stage, item.peer, item.other) => {
                last.bytes += item.bytes;
            }
            _ => out.push(item),
        }
    }
    out
}

/// The sends and receives of member `me` in one phase (`up`: towards the roots) of `count`
/// chunks of `size` data bytes per tree, a hop taking `hop` stages.
pub(super) fn phase(
    trees: &[Leveled],
    me: usize,
    up: bool,
    (count, size): (usize, f64),
    hop: usize,
) -> (Vec<Item>, Vec<Item>) {
    let (mut sends, mut receives) = (Vec::new(), Vec::new());
    for (tree, (height, depth)) in trees {
        let Some((parent, children)) = &tree[me] else {
            continue;
        };
        let at = |m: usize| hop * if up { height[m] } else { depth[m] };
        for i in 0..count {
            let item = |peer: usize| Item {
                stage: i + at(me),
                peer,
                other: i + at(peer),
                bytes: size,
            };
            let (to_parent, from_children) = if up {
                (&mut sends, &mut receives)
            } else {
                (&mut receives, &mut sends)
            };
            to_parent.extend(parent.map(item));
            from_children.extend(children.iter().map(|&c| item(c)));
        }
    }
    (merged(sends), merged(receives))
}

/// Member `me`'s steps over `trees` (up, then down): `count` chunks of `size` data bytes per
/// tree. A hop's latency, `delay` (`delay_net` where a send leaves the node), comes before the
/// sends of the first chunk through it only: NCCL keeps `NCCL_STEPS` chunks in flight on a
/// connection, which hides it behind the chunks that follow, and its tuner counts it once per
/// level of the tree (tuning.cc: `2 · ((ppn − 1) · intra + log2(nodes) · inter)`).
fn staged(
    members: &[Pid],
    groups: &[usize],
    me: usize,
    trees: &[Tree],
    costs: &Costs,
    (count, size): (usize, f64),
) -> Vec<Step> {
    let trees: Vec<Leveled> = trees.iter().map(|t| (t, levels(t))).collect();
    let mut steps = Vec::new();
    for up in [true, false] {
        let (sends, receives) = phase(&trees, me, up, (count, size), 1);
        let (firsts, _) = phase(&trees, me, up, (1, size), 1);
        let last = sends
            .iter()
            .chain(&receives)
            .map(|i| i.stage + 1)
            .max()
            .unwrap_or(0);
        let (mut s, mut r) = (0, 0);
        for stage in 0..last {
            while r < receives.len() && receives[r].stage == stage {
                steps.push(Step::Receive {
                    from: members[receives[r].peer],
                });
                r += 1;
            }
            let first = s;
            while s < sends.len() && sends[s].stage == stage {
                s += 1;
            }
            if first == s {
                continue;
            }
            let mut leads = firsts.iter().filter(|i| i.stage == stage).peekable();
            if leads.peek().is_some() {
                let leaves = leads.any(|i| groups.get(i.peer) != groups.get(me));
                steps.push(Step::Delay {
                    seconds: if leaves { costs.delay_net } else { costs.delay },
                });
            }
            steps.extend(sends[first..s].iter().map(|i| Step::Send {
                to: members[i.peer],
                bytes: i.bytes * costs.wire_between(groups, me, i.peer),
            }));
            let data: f64 = sends[first..s].iter().map(|i| i.bytes).sum();
            steps.extend(Step::paced(data, costs.pace));
            steps.push(Step::Flush);
        }
    }
    steps
}

/// NCCL's tree all-reduce across nodes ([`chain_trees`]): `bytes` in the pipeline's chunks,
/// each split over the channels' trees; `None` on one node.
pub fn chain_tree(
    members: &[Pid],
    groups: &[usize],
    me: usize,
    costs: &Costs,
    bytes: f64,
) -> Option<Vec<Step>> {
    let trees = chain_trees(groups, members.len());
    if trees.is_empty() {
        return None;
    }
    let count = costs.count.max(1);
    let size = bytes / count as f64 / trees.len() as f64;
    Some(staged(members, groups, me, &trees, costs, (count, size)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(tree: &Tree, m: usize) -> Option<usize> {
        tree[m].as_ref().and_then(|(p, _)| *p)
    }

    #[test]
    fn chain_trees_are_trees_with_chains_in_the_nodes_and_heads_on_distinct_rails() {
        // Two nodes of 4: channel c's chain in node 0 runs c, c+1, ...; its head is member c.
        let groups = [0, 0, 0, 0, 1, 1, 1, 1];
        let trees = chain_trees(&groups, 8);
        assert_eq!(trees.len(), 8);
        for (index, tree) in trees.iter().enumerate() {
            let c = index / 2;
            let roots: Vec<usize> = (0..8).filter(|&m| matches!(tree[m], Some((None, _)))).collect();
            assert_eq!(roots.len(), 1, "tree {index}");
            // Every member reaches the root.
            for m in 0..8 {
                let (mut at, mut hops) = (m, 0);
                while let Some(p) = parent(tree, at) {
                    assert!(tree[p].as_ref().is_some_and(|(_, ch)| ch.contains(&at)));
                    at = p;
                    hops += 1;
                    assert!(hops < 8);
                }
                assert_eq!(at, roots[0]);
            }
            // Inside node 0 the chain: member c + k's parent is c + k − 1.
            for k in 1..4 {
                assert_eq!(parent(tree, (c + k) % 4), Some((c + k - 1) % 4));
            }
            // The heads c and 4 + c are joined across the nodes.
            let head_link = parent(tree, c) == Some(4 + c) || parent(tree, 4 + c) == Some(c);
            assert!(head_link, "tree {index}");
        }
        // The two trees of a channel have their roots on different nodes (mirror).
        let root = |t: &Tree| (0..8).find(|&m| matches!(t[m], Some((None, _))));
        assert_ne!(root(&trees[0]).map(|m| m / 4), root(&trees[1]).map(|m| m / 4));
        assert!(chain_trees(&[0; 4], 4).is_empty());
    }

    #[test]
    fn rail_trees_join_one_gpu_per_node() {
        let groups: Vec<usize> = (0..12).map(|i| i / 4).collect();
        let trees = rail_trees(&groups, 12);
        assert_eq!(trees.len(), 8);
        // Rail 1: members 1, 5, 9; the in-order tree over three nodes has node 1 as its root.
        assert_eq!(trees[2][5], Some((None, vec![1, 9])));
        assert_eq!(trees[2][0], None);
        let (height, depth) = levels(&trees[2]);
        assert_eq!((height[5], depth[9]), (1, 1));
    }

    #[test]
    fn a_hop_delays_the_first_chunk_through_it_only() {
        // Two boards of three: whatever the chunk count, a member pays each of its hops'
        // latencies once per phase (1 us inside a board, 10 us between boards), so its
        // delays add up the same for 1 chunk and for 16.
        let (members, groups): (Vec<Pid>, Vec<usize>) = ((0..6).collect(), vec![0, 0, 0, 1, 1, 1]);
        let delays = |count: usize, me: usize| -> f64 {
            let costs = Costs {
                delay: 1e-6,
                delay_net: 10e-6,
                ..Costs::bytes_only(count)
            };
            chain_tree(&members, &groups, me, &costs, 1e6)
                .unwrap_or_default()
                .iter()
                .map(|step| match step {
                    Step::Delay { seconds } => *seconds,
                    _ => 0.0,
                })
                .sum()
        };
        for me in 0..6 {
            assert!(delays(1, me) > 0.0, "member {me} sends");
            assert_eq!(delays(16, me), delays(1, me), "member {me}");
        }
    }

    #[test]
    fn every_stage_waits_its_data_at_the_pace_while_its_sends_are_under_way() {
        // With no latencies (their delays are 0), a member's other delays are the pace's: one
        // after each stage's sends (before the flush that ends the stage), of the data bytes
        // it sent there.
        let (members, groups): (Vec<Pid>, Vec<usize>) = ((0..6).collect(), vec![0, 0, 0, 1, 1, 1]);
        let costs = Costs {
            wire: 2.0,
            wire_net: 2.0,
            pace: 0.5,
            ..Costs::bytes_only(4)
        };
        for me in 0..6 {
            let steps = chain_tree(&members, &groups, me, &costs, 1e6).unwrap_or_default();
            let mut wire = 0.0;
            for (at, step) in steps.iter().enumerate() {
                match *step {
                    Step::Send { bytes, .. } => wire += bytes,
                    Step::Delay { seconds } if wire == 0.0 => assert_eq!(seconds, 0.0, "a hop's latency"),
                    Step::Delay { seconds } => {
                        assert_eq!(seconds, wire / 2.0 * 0.5, "member {me} step {at}");
                        assert_eq!(steps.get(at + 1), Some(&Step::Flush), "member {me} step {at}");
                        wire = 0.0;
                    }
                    Step::Flush => assert_eq!(wire, 0.0, "member {me}: sends without their pace"),
                    Step::Receive { .. } => {}
                }
            }
        }
    }

    #[test]
    fn stages_follow_heights_and_merge_per_peer() {
        // A chain 0 <- 1 <- 2 (2 a leaf): going up, member 1 sends chunk i at stage i + 1 and
        // receives chunk i from 2 at stage i + 1 (2 sent it at stage i).
        let tree: Tree = vec![
            Some((None, vec![1])),
            Some((Some(0), vec![2])),
            Some((Some(1), vec![])),
        ];
        let trees = vec![(&tree, levels(&tree))];
        let (sends, receives) = phase(&trees, 1, true, (2, 5.0), 1);
        assert_eq!(
            sends,
            [
                Item {
                    stage: 1,
                    peer: 0,
                    other: 2,
                    bytes: 5.0
                },
                Item {
                    stage: 2,
                    peer: 0,
                    other: 3,
                    bytes: 5.0
                }
            ]
        );
        assert_eq!(
            receives[0],
            Item {
                stage: 1,
                peer: 2,
                other: 0,
                bytes: 5.0
            }
        );
        // The same tree twice: one message per stage carrying both.
        let both = vec![(&tree, levels(&tree)), (&tree, levels(&tree))];
        let (sends, _) = phase(&both, 1, false, (1, 5.0), 1);
        assert_eq!(
            sends,
            [Item {
                stage: 1,
                peer: 2,
                other: 2,
                bytes: 10.0
            }]
        );
    }
}
