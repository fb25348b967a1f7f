//! A rank's nodes as a dependency graph that can run: ids resolved, dependencies on ids not
//! in the trace skipped (and counted), control dependencies that close a cycle dropped (and
//! counted), and what remains checked acyclic.
//!
//! The rule for control dependencies: data dependencies are always followed; control
//! dependencies are followed unless the replay would otherwise stall. The graph is ordered
//! as a replay would issue it (Kahn's algorithm, the lowest id first among the ready);
//! when no node is ready, the lowest-id node whose data dependencies are all done goes next
//! and its control dependencies on nodes not yet ordered are dropped. PyTorch-derived
//! traces need this: their control dependencies encode the CPU call tree, and a CPU op
//! and its kernel can wait on each other (Chakra's test trace: 3317 and 3318). When no
//! node has its data dependencies done, the data dependencies themselves form a cycle:
//! an error naming its nodes.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use hetsim_chakra::{Attributes, DataType, NodeKind, TraceNode};
use hetsim_simulator::word_hash::WordMap;

/// A node as a run holds it (32 bytes): what the trace gives apart from its dependencies
/// (the graph's edges hold them), its name and attributes as indices into the graph's
/// tables, where each distinct one is kept once (names and attribute sets repeat heavily:
/// a training step's ops recur every step).
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub id: u64,
    pub duration_micros: u64,
    name: u32,
    attributes: u32,
    pub kind: NodeKind,
}

/// The graph of one rank: nodes by index (in id order), their kept dependencies as edges in
/// one flat array.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    interner: Interner,
    /// Per node: how many kept dependencies it has.
    pub in_degree: Vec<u32>,
    /// Per node: the nodes that depend on it (kept edges), as ranges into `targets`.
    starts: Vec<u32>,
    targets: Vec<u32>,
    /// Dependencies on ids not in the trace, skipped.
    pub missing_deps: u64,
    /// Control dependencies dropped to break cycles (a node's control dependency on itself
    /// included).
    pub dropped_ctrl: u64,
}

/// Why a rank's graph cannot run: a node id twice, or a cycle of data dependencies.
#[derive(Clone, Debug, PartialEq)]
pub enum GraphError {
    Duplicate(u64),
    Cycle(Vec<u64>),
}

/// An attribute set as a hash key (its numbers by their bits).
type AttributesKey = (
    bool,
    [Option<u64>; 3],
    [Option<i64>; 4],
    Option<String>,
    Option<DataType>,
);

fn attributes_key(a: &Attributes) -> AttributesKey {
    let bits = |x: Option<f64>| x.map(f64::to_bits);
    (
        a.is_cpu_op,
        [bits(a.num_ops), bits(a.tensor_size), bits(a.comm_size)],
        [a.comm_type, a.comm_src, a.comm_dst, a.comm_tag],
        a.pg_name.clone(),
        a.dtype,
    )
}

/// Distinct values by index, each kept once.
#[derive(Clone, Debug)]
struct Table<K, V> {
    index: HashMap<K, u32>,
    values: Vec<V>,
}

impl<K, V> Default for Table<K, V> {
    fn default() -> Self {
        Table {
            index: HashMap::new(),
            values: Vec::new(),
        }
    }
}

impl<K: std::hash::Hash + Eq, V> Table<K, V> {
    fn intern(&mut self, key: K, value: V) -> u32 {
        let next = self.values.len() as u32;
        let at = *self.index.entry(key).or_insert(next);
        if at == next {
            self.values.push(value);
        }
        at
    }
}

/// A rank's node names and attribute sets, each distinct one kept once: what turns a read
/// node into the 32 bytes a run holds, and back.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    names: Table<String, String>,
    attributes: Table<AttributesKey, Attributes>,
}

impl Interner {
    /// `n` as a run holds it (its dependencies are the caller's to keep).
    pub fn node(&mut self, n: TraceNode) -> Node {
        Node {
            id: n.id,
            duration_micros: n.duration_micros,
            name: self.names.intern(n.name.clone(), n.name),
            attributes: self
                .attributes
                .intern(attributes_key(&n.attributes), n.attributes),
            kind: n.kind,
        }
    }

    pub fn name(&self, n: &Node) -> &str {
        &self.names.values[n.name as usize]
    }

    pub fn attributes(&self, n: &Node) -> &Attributes {
        &self.attributes.values[n.attributes as usize]
    }

    /// `n` whole, as the policies and a node's actions read it (without its dependencies).
    pub fn whole(&self, n: &Node) -> TraceNode {
        TraceNode {
            id: n.id,
            name: self.name(n).to_owned(),
            kind: n.kind,
            data_deps: Vec::new(),
            ctrl_deps: Vec::new(),
            duration_micros: n.duration_micros,
            attributes: self.attributes(n).clone(),
        }
    }
}

impl Graph {
    /// Node `i` whole, as the policies and a node's actions read it (without its
    /// dependencies, which the edges hold).
    pub fn node(&self, i: usize) -> TraceNode {
        self.interner.whole(&self.nodes[i])
    }

    pub fn name(&self, i: usize) -> &str {
        self.interner.name(&self.nodes[i])
    }

    pub fn attributes(&self, i: usize) -> &Attributes {
        self.interner.attributes(&self.nodes[i])
    }

    pub fn children(&self, node: usize) -> &[u32] {
        &self.targets[self.starts[node] as usize..self.starts[node + 1] as usize]
    }

    /// The graph of `nodes` (in any order); `follow_ctrl` false ignores control
    /// dependencies altogether (Chakra's own feeder's reading).
    pub fn build(mut nodes: Vec<TraceNode>, follow_ctrl: bool) -> Result<Self, GraphError> {
        nodes.sort_by_key(|n| n.id);
        if let Some(w) = nodes.windows(2).find(|w| w[0].id == w[1].id) {
            return Err(GraphError::Duplicate(w[0].id));
        }
        let index: WordMap<u64, u32> = nodes.iter().enumerate().map(|(i, n)| (n.id, i as u32)).collect();
        let n = nodes.len();
        let mut missing_deps = 0u64;
        let mut dropped_ctrl = 0u64;
        // Per node, its data and control dependencies as indices, deduplicated, a control
        // dependency that is also a data one kept as data.
        let mut data: Vec<Vec<u32>> = Vec::with_capacity(n);
        let mut ctrl: Vec<Vec<u32>> = Vec::with_capacity(n);
        for (i, node) in nodes.iter().enumerate() {
            let mut resolve = |ids: &[u64]| -> Vec<u32> {
                let mut out: Vec<u32> = ids
                    .iter()
                    .filter_map(|id| {
                        let found = index.get(id).copied();
                        missing_deps += u64::from(found.is_none());
                        found
                    })
                    .collect();
                out.sort_unstable();
                out.dedup();
                out
            };
            let d = resolve(&node.data_deps);
            if d.binary_search(&(i as u32)).is_ok() {
                return Err(GraphError::Cycle(vec![node.id]));
            }
            let mut c = if follow_ctrl {
                resolve(&node.ctrl_deps)
            } else {
                Vec::new()
            };
            c.retain(|&x| x != i as u32 && d.binary_search(&x).is_err());
            // A control dependency on itself can never be met: dropped.
            dropped_ctrl += u64::from(follow_ctrl && node.ctrl_deps.contains(&node.id));
            data.push(d);
            ctrl.push(c);
        }
        drop(index);
        // What a run needs of the nodes; their dependency lists are read. A fresh vector:
        // collecting `nodes.into_iter()` would reuse (and keep) their buffer, eight times
        // the size.
        let mut interner = Interner::default();
        let mut compact = Vec::with_capacity(n);
        compact.extend(nodes.into_iter().map(|node| interner.node(node)));
        let nodes = compact;
        // Successors per node, to run Kahn's algorithm.
        let mut data_out: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut ctrl_out: Vec<Vec<u32>> = vec![Vec::new(); n];
        for v in 0..n {
            for &u in &data[v] {
                data_out[u as usize].push(v as u32);
            }
            for &u in &ctrl[v] {
                ctrl_out[u as usize].push(v as u32);
            }
        }
        let mut data_left: Vec<u32> = data.iter().map(|d| d.len() as u32).collect();
        let mut ctrl_left: Vec<u32> = ctrl.iter().map(|c| c.len() as u32).collect();
        let mut ordered = vec![false; n];
        let mut ready: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
        // Nodes whose data dependencies are done but a control one is not.
        let mut data_ready: BTreeSet<u32> = BTreeSet::new();
        for v in 0..n {
            match (data_left[v], ctrl_left[v]) {
                (0, 0) => ready.push(Reverse(v as u32)),
                (0, _) => {
                    data_ready.insert(v as u32);
                }
                _ => {}
            }
        }
        let mut done = 0;
        while done < n {
            let v = match ready.pop() {
                Some(Reverse(v)) => v,
                None => {
                    let Some(v) = data_ready.pop_first() else {
                        return Err(GraphError::Cycle(cycle(&nodes, &data, &ordered)));
                    };
                    // Drop its control dependencies on nodes not yet ordered.
                    let before = ctrl[v as usize].len();
                    ctrl[v as usize].retain(|&u| ordered[u as usize]);
                    dropped_ctrl += (before - ctrl[v as usize].len()) as u64;
                    v
                }
            };
            let vi = v as usize;
            ordered[vi] = true;
            data_ready.remove(&v);
            done += 1;
            for &w in &data_out[vi] {
                let wi = w as usize;
                data_left[wi] -= 1;
                if data_left[wi] == 0 && !ordered[wi] {
                    if ctrl_left[wi] == 0 {
                        ready.push(Reverse(w));
                    } else {
                        data_ready.insert(w);
                    }
                }
            }
            for &w in &ctrl_out[vi] {
                let wi = w as usize;
                if ordered[wi] || ctrl_left[wi] == 0 {
                    continue;
                }
                ctrl_left[wi] -= 1;
                if ctrl_left[wi] == 0 && data_left[wi] == 0 && data_ready.remove(&w) {
                    ready.push(Reverse(w));
                }
            }
        }
        // The kept edges: every data dependency, the control ones not dropped.
        let mut in_degree = vec![0u32; n];
        let mut count = vec![0u32; n + 1];
        for v in 0..n {
            for &u in data[v].iter().chain(&ctrl[v]) {
                count[u as usize + 1] += 1;
                in_degree[v] += 1;
            }
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let starts = count.clone();
        let mut targets = vec![0u32; count[n] as usize];
        let mut fill = count;
        for v in 0..n {
            for &u in data[v].iter().chain(&ctrl[v]) {
                targets[fill[u as usize] as usize] = v as u32;
                fill[u as usize] += 1;
            }
        }
        Ok(Graph {
            nodes,
            interner,
            in_degree,
            starts,
            targets,
            missing_deps,
            dropped_ctrl,
        })
    }
}

/// A cycle of data dependencies among the nodes not ordered: from one of them, follow a
/// data dependency that is not ordered until a node repeats.
fn cycle(nodes: &[Node], data: &[Vec<u32>], ordered: &[bool]) -> Vec<u64> {
    let Some(start) = ordered.iter().position(|&o| !o) else {
        return Vec::new();
    };
    let mut seen: HashMap<usize, usize> = HashMap::new();
    let mut path = Vec::new();
    let mut v = start;
    loop {
        if let Some(&at) = seen.get(&v) {
            return path[at..].iter().map(|&i: &usize| nodes[i].id).collect();
        }
        seen.insert(v, path.len());
        path.push(v);
        match data[v].iter().find(|&&u| !ordered[u as usize]) {
            Some(&u) => v = u as usize,
            None => return path.iter().map(|&i| nodes[i].id).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetsim_chakra::writer::node;
    use hetsim_chakra::NodeKind;

    fn n(id: u64, data: &[u64], ctrl: &[u64]) -> TraceNode {
        let mut x = node(id, "op", NodeKind::Comp);
        x.data_deps = data.to_vec();
        x.ctrl_deps = ctrl.to_vec();
        x
    }

    #[test]
    fn a_control_cycle_is_broken_at_the_lowest_id_whose_data_is_done() {
        // 3317 (CPU op) waits on its kernel 3318 by control; 3318 waits on 3317 by data.
        let g = Graph::build(
            vec![
                n(3318, &[3317], &[3316]),
                n(3317, &[], &[3318]),
                n(3316, &[], &[]),
            ],
            true,
        )
        .expect("runs");
        assert_eq!(g.dropped_ctrl, 1);
        assert_eq!(g.in_degree, [0, 0, 2]);
        assert_eq!(g.children(0), [2]);
        assert_eq!(g.children(1), [2]);
    }

    #[test]
    fn missing_ids_are_counted_and_self_control_dropped() {
        let g = Graph::build(vec![n(1, &[99], &[1, 98]), n(2, &[1], &[])], true).expect("runs");
        assert_eq!(g.missing_deps, 2);
        assert_eq!(g.dropped_ctrl, 1);
        assert_eq!(g.in_degree, [0, 1]);
        let data_only = Graph::build(vec![n(1, &[99], &[1, 98]), n(2, &[], &[1])], false).expect("runs");
        assert_eq!((data_only.missing_deps, data_only.dropped_ctrl), (1, 0));
        assert_eq!(data_only.in_degree, [0, 0]);
    }

    #[test]
    fn names_and_attribute_sets_are_kept_once_and_a_node_rebuilds_whole() {
        let mut cpu = n(2, &[1], &[]);
        cpu.name = "aten::linear".into();
        cpu.attributes.is_cpu_op = true;
        let mut coll = n(3, &[2], &[]);
        coll.attributes.comm_size = Some(1024.0);
        let g = Graph::build(vec![n(1, &[], &[]), cpu.clone(), coll, n(4, &[3], &[])], true).expect("runs");
        // Names "op" and "aten::linear"; attribute sets: none, a CPU op, a 1 KiB comm_size.
        assert_eq!(
            (g.interner.names.values.len(), g.interner.attributes.values.len()),
            (2, 3)
        );
        assert_eq!(g.name(3), "op");
        cpu.data_deps.clear();
        assert_eq!(g.node(1), cpu);
        assert_eq!(g.attributes(2).comm_size, Some(1024.0));
        assert_eq!(std::mem::size_of::<Node>(), 32);
    }

    #[test]
    fn a_data_cycle_is_an_error_naming_its_nodes() {
        let e = Graph::build(
            vec![n(1, &[3], &[]), n(2, &[1], &[]), n(3, &[2], &[]), n(4, &[], &[])],
            true,
        )
        .expect_err("a cycle");
        let GraphError::Cycle(mut ids) = e else {
            panic!("{e:?}")
        };
        ids.sort();
        assert_eq!(ids, [1, 2, 3]);
        assert_eq!(
            Graph::build(vec![n(5, &[], &[]), n(5, &[], &[])], true).expect_err("twice"),
            GraphError::Duplicate(5)
        );
    }
}
