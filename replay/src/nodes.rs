//! A rank's nodes as its run reads them: its whole graph ([`crate::graph`]), or its file read
//! as the run goes ([`crate::feed`]), which hold the same nodes and release them in the same
//! order. A node is named by its index in the graph, or its position in the file: either
//! orders the nodes by id.

use hetsim_chakra::{NodeKind, TraceNode};

use crate::feed::Feed;
use crate::graph::Graph;

pub enum Nodes {
    Whole {
        graph: Box<Graph>,
        /// Per node, the dependencies not yet done.
        pending: Vec<u32>,
    },
    Fed(Box<Feed>),
}

impl Nodes {
    pub fn whole(mut graph: Graph) -> Self {
        let pending = std::mem::take(&mut graph.in_degree);
        Nodes::Whole {
            graph: Box::new(graph),
            pending,
        }
    }

    /// Pushes onto `ready` the nodes that wait for nothing.
    pub fn start(&mut self, ready: &mut Vec<u32>) -> Result<(), String> {
        match self {
            Nodes::Whole { pending, .. } => {
                ready.extend((0..pending.len() as u32).filter(|&i| pending[i as usize] == 0));
                Ok(())
            }
            Nodes::Fed(feed) => feed.start(ready),
        }
    }

    /// Node `i` is done: pushes onto `ready` the nodes it was the last to wait for.
    pub fn release(&mut self, i: u32, ready: &mut Vec<u32>) -> Result<(), String> {
        match self {
            Nodes::Whole { graph, pending } => {
                for &c in graph.children(i as usize) {
                    let p = &mut pending[c as usize];
                    *p -= 1;
                    if *p == 0 {
                        ready.push(c);
                    }
                }
                Ok(())
            }
            Nodes::Fed(feed) => feed.release(i, ready),
        }
    }

    /// Node `i` whole (without its dependencies).
    pub fn node(&self, i: u32) -> TraceNode {
        match self {
            Nodes::Whole { graph, .. } => graph.node(i as usize),
            Nodes::Fed(feed) => feed.node(i),
        }
    }

    pub fn id(&self, i: u32) -> u64 {
        match self {
            Nodes::Whole { graph, .. } => graph.nodes[i as usize].id,
            Nodes::Fed(feed) => feed.id(i),
        }
    }

    pub fn name(&self, i: u32) -> &str {
        match self {
            Nodes::Whole { graph, .. } => graph.name(i as usize),
            Nodes::Fed(feed) => feed.name(i),
        }
    }

    /// `i`'s kind, and whether it is a CPU op.
    pub fn kind(&self, i: u32) -> (NodeKind, bool) {
        match self {
            Nodes::Whole { graph, .. } => (
                graph.nodes[i as usize].kind,
                graph.attributes(i as usize).is_cpu_op,
            ),
            Nodes::Fed(feed) => (feed.kind(i), feed.attributes(i).is_cpu_op),
        }
    }

    pub fn total(&self) -> u64 {
        match self {
            Nodes::Whole { graph, .. } => graph.nodes.len() as u64,
            Nodes::Fed(feed) => feed.scan().nodes,
        }
    }

    /// Dependencies on ids not in the trace, skipped.
    pub fn missing_deps(&self) -> u64 {
        match self {
            Nodes::Whole { graph, .. } => graph.missing_deps,
            Nodes::Fed(feed) => feed.scan().missing_deps,
        }
    }

    /// Control dependencies dropped (a node's on itself, and those that closed a cycle).
    pub fn dropped_ctrl(&self) -> u64 {
        match self {
            Nodes::Whole { graph, .. } => graph.dropped_ctrl,
            Nodes::Fed(feed) => feed.scan().dropped_ctrl,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use hetsim_chakra::writer::{node, trace_bytes};
    use proptest::prelude::*;

    use super::*;
    use crate::feed::{scan, Feed};
    use crate::graph::Graph;

    fn write(name: &str, nodes: &[TraceNode]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hetsim-feed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let file = dir.join(format!("{name}.0.et"));
        std::fs::write(&file, trace_bytes("0.0.4", nodes)).expect("writes");
        file
    }

    fn n(id: u64, data: &[u64], ctrl: &[u64]) -> TraceNode {
        let mut x = node(id, "op", NodeKind::Comp);
        x.data_deps = data.to_vec();
        x.ctrl_deps = ctrl.to_vec();
        x
    }

    /// Runs `nodes` to the end, always completing the `pick`-th ready node (modulo how many
    /// are ready), lowest first: the nodes in the order they completed, and each step's
    /// newly ready nodes.
    fn drive(mut nodes: Nodes, picks: &[usize]) -> (Vec<u64>, Vec<Vec<u64>>, u64, u64) {
        let mut ready = Vec::new();
        nodes.start(&mut ready).expect("starts");
        let mut order = Vec::new();
        let mut released = Vec::new();
        let mut step = 0;
        while !ready.is_empty() {
            ready.sort_unstable();
            let i = ready.remove(picks.get(step).copied().unwrap_or(0) % ready.len());
            step += 1;
            order.push(nodes.id(i));
            let mut now = Vec::new();
            nodes.release(i, &mut now).expect("reads on");
            let mut ids: Vec<u64> = now.iter().map(|&c| nodes.id(c)).collect();
            ids.sort_unstable();
            released.push(ids);
            ready.extend(now);
        }
        (order, released, nodes.missing_deps(), nodes.dropped_ctrl())
    }

    #[test]
    fn a_long_chain_in_order_is_held_a_few_nodes_at_a_time() {
        // A training loop's shape: CPU op, its kernel, the next CPU op after the kernel.
        let nodes: Vec<TraceNode> = (0..20_000u64)
            .map(|id| match id {
                0 => n(0, &[], &[]),
                _ if id % 2 == 1 => n(id, &[id - 1], &[]),
                _ => n(id, &[], &[id - 1]),
            })
            .collect();
        let file = write("chain", &nodes);
        let scan = scan(&file, 0, true).expect("reads").expect("in dependency order");
        let mut feed = Feed::open(&file, 0, scan).expect("opens");
        let mut ready = Vec::new();
        feed.start(&mut ready).expect("starts");
        let mut ran = 0;
        while let Some(i) = ready.pop() {
            ran += 1;
            feed.release(i, &mut ready).expect("reads on");
        }
        assert_eq!(ran, 20_000);
        assert!(feed.peak_held <= 2, "held {} at once", feed.peak_held);
    }

    #[test]
    fn files_out_of_dependency_order_are_left_to_the_whole_graph() {
        let cases = [
            ("later-dep", vec![n(1, &[2], &[]), n(2, &[], &[])]),
            ("later-ctrl", vec![n(1, &[], &[2]), n(2, &[1], &[])]),
            ("not-increasing", vec![n(2, &[], &[]), n(1, &[], &[])]),
            ("twice", vec![n(1, &[], &[]), n(1, &[], &[])]),
            ("self-data", vec![n(1, &[1], &[])]),
            ("sparse", vec![n(1, &[], &[]), n(1 << 40, &[1], &[])]),
        ];
        for (name, nodes) in cases {
            let file = write(name, &nodes);
            assert!(scan(&file, 0, true).expect("reads").is_none(), "{name}");
        }
        // Ignoring control dependencies, a later control dependency does not matter.
        let file = write("later-ctrl-ignored", &[n(1, &[], &[2]), n(2, &[1], &[])]);
        assert!(scan(&file, 0, false).expect("reads").is_some());
    }

    proptest! {
        /// In any order of completion, the feed makes ready what the whole graph makes ready,
        /// when, and counts the same skipped and dropped dependencies.
        #[test]
        fn the_feed_releases_what_the_whole_graph_releases(
            deps in proptest::collection::vec(
                (proptest::collection::vec(0u64..40, 0..3), proptest::collection::vec(0u64..40, 0..2), 1u64..3),
                1..40,
            ),
            picks in proptest::collection::vec(0usize..5, 0..60),
            follow_ctrl: bool,
        ) {
            // Ids rise by 1 or 2 (ids with holes); each dependency is on an earlier id (some
            // of them holes: missing), or, by control, on the node itself.
            let mut id = 0;
            let nodes: Vec<TraceNode> = deps
                .iter()
                .map(|(data, ctrl, gap)| {
                    id += gap;
                    let earlier = |d: &u64| d % id;
                    let data: Vec<u64> = data.iter().map(earlier).collect();
                    let ctrl: Vec<u64> = ctrl.iter().map(|d| if d % 7 == 0 { id } else { d % id }).collect();
                    n(id, &data, &ctrl)
                })
                .collect();
            let file = write("random", &nodes);
            let scan = scan(&file, 0, follow_ctrl).expect("reads").expect("in dependency order");
            let fed = drive(Nodes::Fed(Box::new(Feed::open(&file, 0, scan).expect("opens"))), &picks);
            let graph = Graph::build(nodes, follow_ctrl).expect("no cycle");
            let whole = drive(Nodes::whole(graph), &picks);
            prop_assert_eq!(fed, whole);
        }
    }
}
