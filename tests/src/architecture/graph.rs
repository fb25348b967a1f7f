//! The cycle finder: a directed graph of named nodes whose edges carry evidence (why the
//! edge exists), its circles (strongly connected components of more than one node, found
//! with Tarjan's algorithm) and, for a report, one shortest cycle through each circle.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A directed graph on named nodes; each edge keeps every piece of evidence added for it.
#[derive(Debug, Clone)]
pub struct Graph<E> {
    edges: BTreeMap<String, BTreeMap<String, Vec<E>>>,
}

impl<E> Default for Graph<E> {
    fn default() -> Self {
        Graph {
            edges: BTreeMap::new(),
        }
    }
}

impl<E> Graph<E> {
    /// Adds `node` with no edges (nodes also appear by having edges).
    pub fn add_node(&mut self, node: &str) {
        self.edges.entry(node.to_string()).or_default();
    }

    /// Adds the edge `from → to` (once; later calls add evidence to it).
    pub fn add_edge(&mut self, from: &str, to: &str, evidence: E) {
        self.add_node(to);
        self.edges
            .entry(from.to_string())
            .or_default()
            .entry(to.to_string())
            .or_default()
            .push(evidence);
    }

    /// The nodes, in name order.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.edges.keys().map(String::as_str)
    }

    /// The evidence for `from → to`; `None` where there is no such edge.
    pub fn evidence(&self, from: &str, to: &str) -> Option<&[E]> {
        self.edges.get(from)?.get(to).map(Vec::as_slice)
    }

    fn successors(&self, node: &str) -> impl Iterator<Item = &str> {
        self.edges
            .get(node)
            .into_iter()
            .flat_map(|m| m.keys().map(String::as_str))
    }

    /// The circles: sets of two or more nodes each reachable from every other, in name order
    /// of their first node. The graph is acyclic exactly when there are none (it has no
    /// self-edges to count: a module does not depend on itself as a sibling).
    pub fn circles(&self) -> Vec<BTreeSet<String>> {
        let mut tarjan = Tarjan {
            graph: self,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            next: 0,
            found: Vec::new(),
        };
        for node in self.nodes() {
            if !tarjan.index.contains_key(node) {
                tarjan.visit(node);
            }
        }
        let mut circles: Vec<BTreeSet<String>> = tarjan.found.into_iter().filter(|c| c.len() > 1).collect();
        circles.sort();
        circles
    }

    /// A shortest cycle inside `circle` through its first node, as the nodes in order (the
    /// first not repeated at the end); empty where `circle` is no circle of this graph.
    pub fn cycle_in(&self, circle: &BTreeSet<String>) -> Vec<String> {
        let Some(start) = circle.first() else {
            return Vec::new();
        };
        // Breadth-first from the start's successors back to the start, inside the circle.
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue: VecDeque<&str> = VecDeque::from([start.as_str()]);
        while let Some(node) = queue.pop_front() {
            for next in self.successors(node).filter(|n| circle.contains(*n)) {
                if next == start {
                    let mut cycle = vec![node.to_string()];
                    let mut at = node;
                    while at != start {
                        at = came_from[at];
                        cycle.push(at.to_string());
                    }
                    cycle.reverse();
                    return cycle;
                }
                if !came_from.contains_key(next) {
                    came_from.insert(next, node);
                    queue.push_back(next);
                }
            }
        }
        Vec::new()
    }
}

struct Tarjan<'g, E> {
    graph: &'g Graph<E>,
    index: BTreeMap<&'g str, usize>,
    low: BTreeMap<&'g str, usize>,
    stack: Vec<&'g str>,
    on_stack: BTreeSet<&'g str>,
    next: usize,
    found: Vec<BTreeSet<String>>,
}

impl<'g, E> Tarjan<'g, E> {
    fn visit(&mut self, node: &'g str) {
        self.index.insert(node, self.next);
        self.low.insert(node, self.next);
        self.next += 1;
        self.stack.push(node);
        self.on_stack.insert(node);
        for next in self.graph.successors(node) {
            if !self.index.contains_key(next) {
                self.visit(next);
                let low = self.low[node].min(self.low[next]);
                self.low.insert(node, low);
            } else if self.on_stack.contains(next) {
                let low = self.low[node].min(self.index[next]);
                self.low.insert(node, low);
            }
        }
        if self.low[node] == self.index[node] {
            let mut component = BTreeSet::new();
            while let Some(top) = self.stack.pop() {
                self.on_stack.remove(top);
                component.insert(top.to_string());
                if top == node {
                    break;
                }
            }
            self.found.push(component);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn graph(edges: &[(usize, usize)]) -> Graph<()> {
        let mut g = Graph::default();
        for &(a, b) in edges {
            g.add_edge(&format!("n{a}"), &format!("n{b}"), ());
        }
        g
    }

    /// Kahn's algorithm: whether every node can be put in an order with edges pointing on.
    fn sorts_topologically(g: &Graph<()>) -> bool {
        let mut incoming: BTreeMap<&str, usize> = g.nodes().map(|n| (n, 0)).collect();
        for n in g.nodes() {
            for m in g.successors(n) {
                *incoming.entry(m).or_default() += 1;
            }
        }
        let mut ready: Vec<&str> = incoming
            .iter()
            .filter(|(_, c)| **c == 0)
            .map(|(n, _)| *n)
            .collect();
        let mut placed = 0;
        while let Some(n) = ready.pop() {
            placed += 1;
            for m in g.successors(n) {
                let c = incoming.entry(m).or_default();
                *c -= 1;
                if *c == 0 {
                    ready.push(m);
                }
            }
        }
        placed == incoming.len()
    }

    #[test]
    fn a_two_node_circle_is_found_with_its_cycle() {
        let g = graph(&[(0, 1), (1, 0), (1, 2)]);
        let circles = g.circles();
        assert_eq!(circles.len(), 1);
        assert_eq!(circles[0], BTreeSet::from(["n0".to_string(), "n1".to_string()]));
        assert_eq!(g.cycle_in(&circles[0]), ["n0", "n1"]);
    }

    #[test]
    fn a_shortest_cycle_is_reported() {
        let g = graph(&[(0, 1), (1, 2), (2, 3), (3, 0), (1, 0)]);
        let circles = g.circles();
        assert_eq!(circles.len(), 1);
        assert_eq!(circles[0].len(), 4);
        assert_eq!(g.cycle_in(&circles[0]), ["n0", "n1"]);
    }

    #[test]
    fn a_dag_has_no_circles() {
        assert!(graph(&[(0, 1), (0, 2), (1, 3), (2, 3)]).circles().is_empty());
    }

    proptest! {
        /// Edges only from earlier to later in a shuffled order: never a circle.
        #[test]
        fn dags_pass(
            order in Just((0..10usize).collect::<Vec<_>>()).prop_shuffle(),
            pairs in prop::collection::vec((0..10usize, 0..10usize), 0..40),
        ) {
            let edges: Vec<(usize, usize)> = pairs
                .into_iter()
                .filter(|(a, b)| a < b)
                .map(|(a, b)| (order[a], order[b]))
                .collect();
            prop_assert!(graph(&edges).circles().is_empty());
        }

        /// A DAG's chain closed by one edge back is a circle holding the whole chain.
        #[test]
        fn a_closed_chain_is_found(
            order in Just((0..10usize).collect::<Vec<_>>()).prop_shuffle(),
            pairs in prop::collection::vec((0..10usize, 0..10usize), 0..40),
            length in 2..10usize,
        ) {
            let mut edges: Vec<(usize, usize)> = pairs
                .into_iter()
                .filter(|(a, b)| a < b)
                .map(|(a, b)| (order[a], order[b]))
                .collect();
            edges.extend((1..length).map(|k| (order[k - 1], order[k])));
            edges.push((order[length - 1], order[0]));
            let g = graph(&edges);
            let circles = g.circles();
            prop_assert_eq!(circles.len(), 1);
            for k in order.iter().take(length) {
                let node = format!("n{k}");
                prop_assert!(circles[0].contains(&node));
            }
        }

        /// Any graph: circles exactly when no topological order exists, and every reported
        /// cycle is made of edges of the graph inside its circle.
        #[test]
        fn circles_are_exactly_the_cycles(
            edges in prop::collection::vec((0..8usize, 0..8usize), 0..24),
        ) {
            let edges: Vec<(usize, usize)> = edges.into_iter().filter(|(a, b)| a != b).collect();
            let g = graph(&edges);
            let circles = g.circles();
            prop_assert_eq!(circles.is_empty(), sorts_topologically(&g));
            for circle in &circles {
                let cycle = g.cycle_in(circle);
                prop_assert!(cycle.len() >= 2);
                for (k, node) in cycle.iter().enumerate() {
                    let next = &cycle[(k + 1) % cycle.len()];
                    prop_assert!(circle.contains(node));
                    prop_assert!(g.evidence(node, next).is_some());
                }
            }
        }
    }
}
