//! Nodes, links, routing, and the placement of processes on nodes by label.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use hetsim_models::catalog::ComponentKind;
use hetsim_models::params::closest;
pub use hetsim_models::transfer::HostMemory;

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
}

impl fmt::Display for PlatformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlatformError::UnknownLinkEnd { link, node } => {
                write!(f, "link {link} joins unknown node {node}")
            }
            PlatformError::LinkParameter { link, error } => write!(f, "link {link}: {error}"),
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

/// Nodes and the links between them, with routes computed on demand and cached.
#[derive(Debug)]
pub struct Platform {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    adjacency: Vec<Vec<(NodeId, LinkId)>>,
    direct: HashMap<(NodeId, NodeId), Route>,
    routes: RefCell<HashMap<(NodeId, NodeId), Route>>,
}

impl Platform {
    pub fn new(nodes: Vec<Node>, links: Vec<Link>) -> Result<Self, PlatformError> {
        let mut adjacency = vec![Vec::new(); nodes.len()];
        let mut direct = HashMap::new();
        for (id, link) in links.iter().enumerate() {
            link.check_parameters()
                .map_err(|error| PlatformError::LinkParameter { link: id, error })?;
            let [a, b] = link.between;
            for node in [a, b] {
                if node >= nodes.len() {
                    return Err(PlatformError::UnknownLinkEnd { link: id, node });
                }
            }
            adjacency[a].push((b, id));
            adjacency[b].push((a, id));
            // The first link declared between two nodes carries their messages.
            for (from, to, forward) in [(a, b, true), (b, a, false)] {
                direct
                    .entry((from, to))
                    .or_insert_with(|| Route::from([Hop { link: id, forward }]));
            }
        }
        Ok(Platform {
            nodes,
            links,
            adjacency,
            direct,
            routes: RefCell::new(HashMap::new()),
        })
    }

    /// The links a message crosses from `from` to `to` (empty within a node): the direct link
    /// if there is one, else a path with the fewest links, found breadth-first in declaration
    /// order so that the choice is deterministic.
    pub fn route(&self, from: NodeId, to: NodeId) -> Result<Route, PlatformError> {
        if from == to {
            return Ok(Rc::from([]));
        }
        if let Some(route) = self.direct.get(&(from, to)) {
            return Ok(route.clone());
        }
        if let Some(route) = self.routes.borrow().get(&(from, to)) {
            return Ok(route.clone());
        }
        let route = self.shortest_path(from, to)?;
        self.routes.borrow_mut().insert((from, to), route.clone());
        Ok(route)
    }

    fn shortest_path(&self, from: NodeId, to: NodeId) -> Result<Route, PlatformError> {
        let mut came_from: Vec<Option<(NodeId, LinkId)>> = vec![None; self.nodes.len()];
        let mut seen = vec![false; self.nodes.len()];
        seen[from] = true;
        let mut frontier = VecDeque::from([from]);
        while let Some(node) = frontier.pop_front() {
            if node == to {
                break;
            }
            for &(next, link) in &self.adjacency[node] {
                if !seen[next] {
                    seen[next] = true;
                    came_from[next] = Some((node, link));
                    frontier.push_back(next);
                }
            }
        }
        if !seen[to] {
            return Err(PlatformError::NoRoute {
                from: self.nodes[from].id.clone(),
                to: self.nodes[to].id.clone(),
            });
        }
        let mut hops = Vec::new();
        let mut node = to;
        while let Some((previous, link)) = came_from[node] {
            hops.push(Hop {
                link,
                forward: self.links[link].between[0] == previous,
            });
            node = previous;
        }
        hops.reverse();
        Ok(hops.into())
    }
}

/// Where one process runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    pub label: Arc<str>,
    /// 0-based index within its label.
    pub rank: u64,
    pub node: NodeId,
}

/// Assigns processes to nodes: labels in name order, each label's processes in rank order to
/// the nodes carrying it, in declaration order, up to count × multiplicity on each. The
/// index of a placement is the process's pid.
pub fn place(platform: &Platform, labels: &BTreeMap<String, u64>) -> Result<Vec<Placement>, PlatformError> {
    let mut placements = Vec::new();
    for (label, &asked) in labels {
        let hosts: Vec<(NodeId, u64)> = platform
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(id, n)| {
                n.labels
                    .get(label)
                    .map(|&m| (id, u64::from(m) * u64::from(n.count)))
            })
            .collect();
        // A label no node carries is a typo even when asked 0 processes.
        if hosts.is_empty() {
            return Err(PlatformError::UnknownLabel {
                label: label.clone(),
                hint: closest(
                    label,
                    platform
                        .nodes
                        .iter()
                        .flat_map(|n| n.labels.keys().map(String::as_str)),
                ),
            });
        }
        let capacity: u64 = hosts.iter().map(|h| h.1).sum();
        if asked > capacity {
            return Err(PlatformError::Capacity {
                label: label.clone(),
                asked,
                capacity,
            });
        }
        let name: Arc<str> = Arc::from(label.as_str());
        let mut rank = 0;
        for (node, slots) in hosts {
            let here = slots.min(asked - rank);
            placements.extend((rank..rank + here).map(|rank| Placement {
                label: name.clone(),
                rank,
                node,
            }));
            rank += here;
        }
    }
    Ok(placements)
}
