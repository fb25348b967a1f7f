//! Nodes, links, routing, and the placement of processes on nodes by label.

use std::cell::RefCell;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt;
use std::rc::Rc;

use hetsim_models::catalog::ComponentKind;
pub use hetsim_models::transfer::HostMemory;

use crate::word_hash::WordMap;

pub type NodeId = usize;
pub type LinkId = usize;

/// A placed component: `count` identical units sharing the node's links.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub id: String,
    pub kind: ComponentKind,
    pub count: u32,
    /// Cores per unit, where stated: the processes computing on the node then share count ×
    /// cores of them. Unstated, each process computes as if alone.
    pub cores: Option<u32>,
    /// Label → processes of that label one unit can host.
    pub labels: BTreeMap<String, u32>,
    /// W per unit while computing.
    pub power_load: f64,
    /// W per unit otherwise.
    pub power_idle: f64,
    /// Failures per second per unit.
    pub failure_rate: f64,
    /// Seconds a message takes to cross the node on its way elsewhere (a switch's
    /// port-to-port latency; 0 for the rest).
    pub latency: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub between: [NodeId; 2],
    /// Transfers carried at once per direction (copy engines, thesis 2.3.3).
    pub channels: u32,
    /// The fraction of its rate each direction keeps while the other direction carries bytes
    /// too, in (0, 1]: 1 for a full-duplex link; a PCIe link whose reads and writes share
    /// packet overhead has less (the H100's: 0.851, docs/SIMULATION.md).
    pub duplex: f64,
    /// The startup a message pays on it [s], as routing weighs it (the model's own startup
    /// is what a message takes).
    pub latency: f64,
}

/// A link parameter the engine cannot use: which, its value and what is expected.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkParameterError {
    pub field: &'static str,
    pub value: f64,
    pub expected: &'static str,
}

impl fmt::Display for LinkParameterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let LinkParameterError {
            field,
            value,
            expected,
        } = self;
        write!(f, "`{field}` is {value}, expected {expected}")
    }
}

impl std::error::Error for LinkParameterError {}

impl Link {
    /// Checks the parameters the engine reads: at least one channel, and a duplex fraction in
    /// (0, 1]. [`Platform::new`] checks every link with it, and a system model checks its links
    /// with it when it is loaded, so that a bad link fails before any run.
    pub fn check_parameters(&self) -> Result<(), LinkParameterError> {
        if self.channels == 0 {
            return Err(LinkParameterError {
                field: "channels",
                value: 0.0,
                expected: "a whole number >= 1",
            });
        }
        if !(self.duplex > 0.0 && self.duplex <= 1.0) {
            return Err(LinkParameterError {
                field: "duplex",
                value: self.duplex,
                expected: "a fraction in (0, 1]",
            });
        }
        Ok(())
    }
}

/// The kind of a transfer, from the kinds of its endpoints unless given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    HostToHost,
}

impl Direction {
    /// CPU→GPU host-to-device, GPU→CPU device-to-host, GPU→GPU device-to-device, else host-to-host.
    pub fn between(from: ComponentKind, to: ComponentKind) -> Self {
        match (from, to) {
            (ComponentKind::Gpu, ComponentKind::Gpu) => Direction::DeviceToDevice,
            (ComponentKind::Gpu, _) => Direction::DeviceToHost,
            (_, ComponentKind::Gpu) => Direction::HostToDevice,
            _ => Direction::HostToHost,
        }
    }

    /// The attribute suffix of eq. 5.5's per-direction parameters (`startupHtD`, …).
    pub fn suffix(self) -> &'static str {
        match self {
            Direction::HostToDevice => "HtD",
            Direction::DeviceToHost => "DtH",
            Direction::DeviceToDevice => "DtD",
            Direction::HostToHost => "HtH",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Direction::HostToDevice => "HostToDevice",
            Direction::DeviceToHost => "DeviceToHost",
            Direction::DeviceToDevice => "DeviceToDevice",
            Direction::HostToHost => "HostToHost",
        }
    }

    /// Reads `HostToDevice` or `HtD` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        [
            Direction::HostToDevice,
            Direction::DeviceToHost,
            Direction::DeviceToDevice,
            Direction::HostToHost,
        ]
        .into_iter()
        .find(|d| d.name().eq_ignore_ascii_case(text) || d.suffix().eq_ignore_ascii_case(text))
    }
}

/// The links a message crosses, in order.
pub type Route = Rc<[Hop]>;

/// One link crossed by a message, in the direction it is crossed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    pub link: LinkId,
    /// True when crossed from `between[0]` to `between[1]`.
    pub forward: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PlatformError {
    UnknownLinkEnd {
        link: usize,
        node: NodeId,
    },
    NoRoute {
        from: String,
        to: String,
    },
    UnknownLabel {
        label: String,
        hint: Option<String>,
    },
    Capacity {
        label: String,
        asked: u64,
        capacity: u64,
    },
    LinkParameter {
        link: usize,
        error: LinkParameterError,
    },
    /// A node of several units with no link of its own between them.
    NoInternalLink {
        node: String,
        count: u32,
    },
    /// A switch given processes.
    SwitchProcesses {
        node: String,
    },
}

impl fmt::Display for PlatformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlatformError::UnknownLinkEnd { link, node } => {
                write!(f, "link {link} joins unknown node {node}")
            }
            PlatformError::LinkParameter { link, error } => write!(f, "link {link}: {error}"),
            PlatformError::NoInternalLink { node, count } => write!(
                f,
                "node `{node}`: its {count} units talk over no link: give it an internal link (a link \
                 between the node and itself)"
            ),
            PlatformError::SwitchProcesses { node } => {
                write!(
                    f,
                    "node `{node}` is a switch: it runs no processes, so it carries no labels"
                )
            }
            PlatformError::NoRoute { from, to } => {
                write!(f, "no route of links from node `{from}` to node `{to}`")
            }
            PlatformError::UnknownLabel { label, hint } => {
                write!(f, "label `{label}` is carried by no node")?;
                if let Some(h) = hint {
                    write!(f, "; did you mean `{h}`?")?;
                }
                Ok(())
            }
            PlatformError::Capacity {
                label,
                asked,
                capacity,
            } => write!(
                f,
                "label `{label}`: {asked} processes asked, but the nodes carrying it host at most {capacity} \
                 (count × multiplicity)"
            ),
        }
    }
}

impl std::error::Error for PlatformError {}

/// How a route is chosen among the paths of least cost (see [`Platform::route`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Routing {
    /// The first such path in declaration order: every message between two nodes takes one.
    #[default]
    Shortest,
    /// Equal-cost multi-path: each pair of nodes takes one of them, spread by a hash of the
    /// pair, as ECMP switches spread flows by a hash of their headers.
    Ecmp,
    /// By destination: every route to a node takes the same one of them, picked by the
    /// node's index modulo their number, as InfiniBand's subnet manager routes a fat-tree
    /// (D-mod-K): destinations in turn use the spines in turn.
    Destination,
}

/// Nodes and the links between them, with routes computed on demand and cached per pair
/// (no all-pairs table: a cluster of thousands of nodes loads at once).
#[derive(Debug)]
pub struct Platform {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// Per node, its links to other nodes and the node at their other end, in declaration order.
    adjacency: Vec<Vec<(NodeId, LinkId)>>,
    /// Per node, the link its units talk over (a link from the node to itself).
    internal: Vec<Option<LinkId>>,
    routing: Routing,
    /// The routes a system file fixes, by (from, to); they take precedence over the search.
    fixed: WordMap<(NodeId, NodeId), Route>,
    routes: RefCell<WordMap<(NodeId, NodeId), Route>>,
    /// The searches' per-node state, kept between searches and reset where one touched it:
    /// a search near its ends costs no pass over every node.
    search: RefCell<Search>,
}

/// Per node, its cost from a search's origin (where reached), the node and link it was first
/// reached from at that cost, and whether it is settled.
#[derive(Debug, Default)]
struct Search {
    cost: Vec<Option<Cost>>,
    from: Vec<(NodeId, LinkId)>,
    settled: Vec<bool>,
    touched: Vec<NodeId>,
}

impl Search {
    fn sized(&mut self, nodes: usize) {
        for &node in &self.touched {
            self.cost[node] = None;
            self.settled[node] = false;
        }
        self.touched.clear();
        self.cost.resize(nodes, None);
        self.from.resize(nodes, (0, 0));
        self.settled.resize(nodes, false);
    }

    fn reach(&mut self, node: NodeId, cost: Cost, from: (NodeId, LinkId)) {
        if self.cost[node].is_none() {
            self.touched.push(node);
        }
        self.cost[node] = Some(cost);
        self.from[node] = from;
    }
}

/// What a path costs, compared in order: host nodes crossed between two GPUs, latency,
/// links.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cost {
    hosts: u32,
    latency: f64,
    hops: u32,
}

impl Cost {
    const ZERO: Cost = Cost {
        hosts: 0,
        latency: 0.0,
        hops: 0,
    };

    fn cmp(&self, other: &Self) -> Ordering {
        self.hosts
            .cmp(&other.hosts)
            .then(self.latency.total_cmp(&other.latency))
            .then(self.hops.cmp(&other.hops))
    }
}

/// A node waiting in the search, earliest cost first, then lowest id.
struct Queued(Cost, NodeId);

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Queued {}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

impl Platform {
    pub fn new(nodes: Vec<Node>, links: Vec<Link>) -> Result<Self, PlatformError> {
        let mut adjacency = vec![Vec::new(); nodes.len()];
        let mut internal = vec![None; nodes.len()];
        for (id, link) in links.iter().enumerate() {
            link.check_parameters()
                .map_err(|error| PlatformError::LinkParameter { link: id, error })?;
            let [a, b] = link.between;
            for node in [a, b] {
                if node >= nodes.len() {
                    return Err(PlatformError::UnknownLinkEnd { link: id, node });
                }
            }
            if a == b {
                internal[a].get_or_insert(id);
            } else {
                adjacency[a].push((b, id));
                adjacency[b].push((a, id));
            }
        }
        for (node, n) in nodes.iter().enumerate() {
            if n.kind == ComponentKind::Switch && n.labels.values().any(|&m| m > 0) {
                return Err(PlatformError::SwitchProcesses { node: n.id.clone() });
            }
            if n.count > 1 && internal[node].is_none() {
                return Err(PlatformError::NoInternalLink {
                    node: n.id.clone(),
                    count: n.count,
                });
            }
        }
        Ok(Platform {
            nodes,
            links,
            adjacency,
            internal,
            routing: Routing::default(),
            fixed: WordMap::default(),
            routes: RefCell::new(WordMap::default()),
            search: RefCell::new(Search::default()),
        })
    }

    /// Chooses routes by `routing` from now on.
    pub fn with_routing(mut self, routing: Routing) -> Self {
        self.routing = routing;
        self.routes.borrow_mut().clear();
        self
    }

    /// Fixes the route of each pair of nodes in `routes` to its path of nodes (from the first
    /// to the last), each step over the first declared link between its two nodes; refused
    /// where two consecutive nodes have no link between them.
    pub fn with_routes(mut self, routes: &[Vec<NodeId>]) -> Result<Self, PlatformError> {
        for path in routes {
            let (Some(&from), Some(&to)) = (path.first(), path.last()) else {
                continue;
            };
            let hops = path
                .windows(2)
                .map(|step| {
                    let (next, link) = self.adjacency[step[0]]
                        .iter()
                        .find(|(next, _)| *next == step[1])
                        .copied()
                        .ok_or_else(|| PlatformError::NoRoute {
                            from: self.nodes[step[0]].id.clone(),
                            to: self.nodes[step[1]].id.clone(),
                        })?;
                    Ok(Hop {
                        link,
                        forward: self.links[link].between == [step[0], next],
                    })
                })
                .collect::<Result<Route, PlatformError>>()?;
            self.fixed.insert((from, to), hops);
        }
        Ok(self)
    }

    /// The links a message crosses from unit `units[0]` of node `from` to unit `units[1]` of
    /// node `to`: none within a unit, the node's internal link between two of its units, else
    /// the route the system fixes, else the path of least [`Cost`] between the nodes: fewest host (CPU) nodes crossed when both
    /// ends are GPUs (a GPU-side path is taken while one exists), then least latency (links'
    /// and crossed nodes'), then fewest links; ties go to the first in declaration order, or
    /// are spread by [`Routing::Ecmp`].
    pub fn route(&self, from: NodeId, to: NodeId, units: [u32; 2]) -> Result<Route, PlatformError> {
        if from == to {
            return match (units[0] == units[1], self.internal[from]) {
                (true, _) => Ok(Rc::from([])),
                (false, Some(link)) => Ok(Rc::from([Hop { link, forward: true }])),
                (false, None) => Err(PlatformError::NoInternalLink {
                    node: self.nodes[from].id.clone(),
                    count: self.nodes[from].count,
                }),
            };
        }
        if let Some(route) = self.fixed.get(&(from, to)) {
            return Ok(route.clone());
        }
        if let Some(route) = self.routes.borrow().get(&(from, to)) {
            return Ok(route.clone());
        }
        let route = self.least_cost_path(from, to)?;
        self.routes.borrow_mut().insert((from, to), route.clone());
        Ok(route)
    }

    /// The cost of entering `node` on a path from `from` to `to` over `link`.
    fn step(&self, cost: Cost, link: LinkId, node: NodeId, [from, to]: [NodeId; 2]) -> Cost {
        let gpus = self.nodes[from].kind == ComponentKind::Gpu && self.nodes[to].kind == ComponentKind::Gpu;
        let crossed = node != from && node != to;
        let host = gpus && crossed && self.nodes[node].kind == ComponentKind::Cpu;
        Cost {
            hosts: cost.hosts + u32::from(host),
            latency: cost.latency
                + self.links[link].latency
                + if crossed { self.nodes[node].latency } else { 0.0 },
            hops: cost.hops + 1,
        }
    }

    /// Dijkstra from one end until the other is settled, then a walk back from the other end
    /// along links whose cost accounts exactly for the remaining cost: a path of least cost,
    /// found without a table of all pairs. Costs are the same both ways, so the search starts
    /// from the end with fewer links (a worker's one link, not its master's ten thousand).
    fn least_cost_path(&self, from: NodeId, to: NodeId) -> Result<Route, PlatformError> {
        let ends = [from, to];
        let (origin, goal) = if self.adjacency[from].len() < self.adjacency[to].len() {
            (from, to)
        } else {
            (to, from)
        };
        let no_route = || PlatformError::NoRoute {
            from: self.nodes[from].id.clone(),
            to: self.nodes[to].id.clone(),
        };
        let mut search = self.search.borrow_mut();
        search.sized(self.nodes.len());
        search.reach(origin, Cost::ZERO, (origin, 0));
        let mut frontier = BinaryHeap::from([Reverse(Queued(Cost::ZERO, origin))]);
        while let Some(Reverse(Queued(c, node))) = frontier.pop() {
            if search.settled[node] {
                continue;
            }
            search.settled[node] = true;
            if node == goal {
                break;
            }
            for &(next, link) in &self.adjacency[node] {
                // Searching from the origin, the node entered on the way there is `node`.
                let through = self.step(c, link, node, ends);
                if !search.settled[next]
                    && search.cost[next].is_none_or(|old| through.cmp(&old) == Ordering::Less)
                {
                    search.reach(next, through, (node, link));
                    frontier.push(Reverse(Queued(through, next)));
                }
            }
        }
        if !search.settled[goal] {
            return Err(no_route());
        }
        let (cost, settled) = (&search.cost, &search.settled);
        let mut hops = Vec::new();
        let mut node = goal;
        while node != origin {
            let (next, link) = match self.routing {
                // The link the search first reached the node by at its cost.
                Routing::Shortest => search.from[node],
                Routing::Ecmp | Routing::Destination => {
                    let here = cost[node].unwrap_or(Cost::ZERO);
                    let on_path: Vec<(NodeId, LinkId)> = self.adjacency[node]
                        .iter()
                        .copied()
                        .filter(|&(next, link)| {
                            settled[next]
                                && cost[next].is_some_and(|c| {
                                    self.step(c, link, next, ends).cmp(&here) == Ordering::Equal
                                })
                        })
                        .collect();
                    // A settled node's cost is accounted for by one of its links; were
                    // rounding to hide it, the route is refused rather than guessed.
                    let key = match self.routing {
                        Routing::Ecmp => pair_hash(from, to),
                        _ => to,
                    };
                    *on_path.get(key % on_path.len().max(1)).ok_or_else(no_route)?
                }
            };
            // The hop as the message crosses it, from `from` towards `to`.
            let (enters, leaves) = if goal == from { (next, node) } else { (node, next) };
            hops.push(Hop {
                link,
                forward: self.links[link].between[0] == leaves && self.links[link].between[1] == enters,
            });
            node = next;
        }
        if goal == to {
            hops.reverse();
        }
        Ok(hops.into())
    }
}

/// A well-mixed hash of a pair of nodes (SplitMix64's finalizer), to spread pairs over paths.
fn pair_hash(from: NodeId, to: NodeId) -> usize {
    let mut x = ((from as u64) << 32) ^ to as u64;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) as usize
}
