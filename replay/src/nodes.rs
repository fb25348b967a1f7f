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
