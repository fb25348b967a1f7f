//! A system file's nodes and links as the engine sees them: the top-level ones, every node's
//! internal link (a link from the node to itself), and the copies of each cluster's board
//! with the network that joins them ([`hetsim_topology`]), each with the place in the file
//! that an error about it names.
//!
//! The checks that need no catalog and no run variable are here too ([`check`]), run when a
//! file is parsed: a node of `count` > 1 names its internal link, board links join board
//! nodes, a cluster names a board that exists and the parameters of its topology (no more).

use std::collections::{BTreeMap, HashSet};

use hetsim_models::params::closest;
use hetsim_topology::dragonfly::Level;
use hetsim_topology::{build, Dragonfly, End, FatTree, LeafSpine, Topology};

use crate::error::{did_you_mean, SystemError};
use crate::spec::{BoardSpec, ClusterSpec, LinkSpec, NodeSpec, SystemFile, TopologyName};
use crate::variable::Variable;

/// A node or link with where it comes from in the file (`node[2]`, `board[0].link[3]`,
/// `cluster[0]`): errors about it name that path.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Placed<S> {
    pub spec: S,
    pub path: String,
    /// Whether `path` names the field that made it (`node[0].internal`, `cluster[0].link`)
    /// rather than a table whose fields (`component`, `model`) errors name.
    pub generated: bool,
}

impl<S> Placed<S> {
    /// The path of its field `name`: the path itself where it was generated from one field.
    pub fn field(&self, name: &str) -> String {
        if self.generated {
            self.path.clone()
        } else {
            format!("{}.{name}", self.path)
        }
    }
}

/// Every node and link of a system file, clusters expanded (see the module's doc).
#[derive(Debug, Default)]
pub(crate) struct Expanded {
    pub nodes: Vec<Placed<NodeSpec>>,
    pub links: Vec<Placed<LinkSpec>>,
}

impl Expanded {
    /// Adds `nodes` (ids prefixed by `prefix`) and their internal links, then `links`.
    fn add(&mut self, nodes: &[NodeSpec], links: &[LinkSpec], prefix: &str, path: &str) {
        for (number, n) in nodes.iter().enumerate() {
            let path = format!("{path}node[{number}]");
            let mut spec = n.clone();
            spec.id = format!("{prefix}{}", n.id);
            if let Some(internal) = spec.internal_link() {
                self.links.push(Placed {
                    spec: internal,
                    path: format!("{path}.internal"),
                    generated: true,
                });
            }
            self.nodes.push(Placed {
                spec,
                path,
                generated: false,
            });
        }
        for (number, l) in links.iter().enumerate() {
            let mut spec = l.clone();
            spec.between = l.between.clone().map(|id| format!("{prefix}{id}"));
            self.links.push(Placed {
                spec,
                path: format!("{path}link[{number}]"),
                generated: false,
            });
        }
    }
}

/// The nodes and links of `file`, each cluster's `boards` taken from `variables` where its
/// `boards_variable` is given there.
pub(crate) fn expand(
    file: &SystemFile,
    variables: &BTreeMap<String, Variable>,
) -> Result<Expanded, SystemError> {
    let mut out = Expanded::default();
    out.add(&file.nodes, &file.links, "", "");
    for (number, cluster) in file.clusters.iter().enumerate() {
        let path = format!("cluster[{number}]");
        let error = |field: &str, message: String| {
            SystemError::new(format!("cluster `{}`: {message}", cluster.name))
                .at_path(format!("{path}{field}"))
        };
        let (board_number, board) = board_of(file, cluster).map_err(|m| error(".board", m))?;
        let boards = boards(cluster, variables).map_err(|m| error(".boards", m))?;
        let topology = topology(cluster).map_err(|(field, m)| error(field, m))?;
        for b in 0..boards {
            let prefix = format!("{}{b}.", cluster.prefix);
            out.add(
                &board.nodes,
                &board.links,
                &prefix,
                &format!("board[{board_number}]."),
            );
        }
        let endpoints = boards as usize * board.attach.len();
        let fabric = build(&topology, endpoints)
            .map_err(|e| error(&format!(".{}", e.field), format!("`{}`: {}", e.field, e.message)))?;
        let switch = cluster.switch.clone().unwrap_or_default();
        for s in &fabric.switches {
            out.nodes.push(Placed {
                spec: NodeSpec {
                    id: format!("{}.{}", cluster.name, s.name),
                    component: switch.clone(),
                    count: 1,
                    model: String::new(),
                    labels: BTreeMap::new(),
                    internal: None,
                    internal_model: None,
                },
                path: format!("{path}.switch"),
                generated: true,
            });
        }
        let id = |end: End| match end {
            End::Endpoint(e) => {
                let (b, a) = (e / board.attach.len(), e % board.attach.len());
                format!("{}{b}.{}", cluster.prefix, board.attach[a])
            }
            End::Switch(s) => format!("{}.{}", cluster.name, fabric.switches[s].name),
        };
        for wire in &fabric.wires {
            out.links.push(Placed {
                spec: LinkSpec {
                    between: wire.ends.map(id),
                    component: cluster.link.clone(),
                    model: cluster.link_model.clone(),
                    channels: None,
                },
                path: format!("{path}.link"),
                generated: true,
            });
        }
    }
    Ok(out)
}

/// The board a cluster copies, with its number in the file.
fn board_of<'a>(file: &'a SystemFile, cluster: &ClusterSpec) -> Result<(usize, &'a BoardSpec), String> {
    file.boards
        .iter()
        .enumerate()
        .find(|(_, b)| b.name == cluster.board)
        .ok_or_else(|| {
            let names = file.boards.iter().map(|b| b.name.as_str());
            format!(
                "no [[board]] is named `{}`{}",
                cluster.board,
                did_you_mean(closest(&cluster.board, names))
            )
        })
}

/// A cluster's number of boards: its `boards_variable`'s value where the run gives it, else
/// `boards`.
fn boards(cluster: &ClusterSpec, variables: &BTreeMap<String, Variable>) -> Result<u32, String> {
    let Some(value) = cluster
        .boards_variable
        .as_ref()
        .and_then(|name| variables.get(name))
    else {
        return Ok(cluster.boards);
    };
    match value {
        Variable::Int(n) if *n >= 1 => u32::try_from(*n).map_err(|_| format!("{n} boards are too many")),
        other => Err(format!(
            "run variable `{}` is {other:?}, expected a whole number of boards >= 1",
            cluster.boards_variable.as_deref().unwrap_or_default()
        )),
    }
}

/// The parameters each topology takes, as the file names them.
fn parameters(name: TopologyName) -> &'static [&'static str] {
    match name {
        TopologyName::Star | TopologyName::Ring => &[],
        TopologyName::FatTree => &["down", "up", "parallel", "k"],
        TopologyName::LeafSpine => &["leaf_down", "spines", "parallel"],
        TopologyName::Torus => &["dims"],
        TopologyName::Dragonfly => &["groups", "chassis", "routers", "nodes"],
    }
}

/// A cluster's topology from its parameters; an error names the field (`.down`) and says
/// what was expected.
fn topology(c: &ClusterSpec) -> Result<Topology, (&'static str, String)> {
    let name = c.topology;
    let given: [(&'static str, bool); 11] = [
        ("down", c.down.is_some()),
        ("up", c.up.is_some()),
        ("parallel", c.parallel.is_some()),
        ("k", c.k.is_some()),
        ("leaf_down", c.leaf_down.is_some()),
        ("spines", c.spines.is_some()),
        ("dims", c.dims.is_some()),
        ("groups", c.groups.is_some()),
        ("chassis", c.chassis.is_some()),
        ("routers", c.routers.is_some()),
        ("nodes", c.nodes.is_some()),
    ];
    let takes = parameters(name);
    let label = serde_json::to_value(name)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    if let Some((field, _)) = given.iter().find(|(f, g)| *g && !takes.contains(f)) {
        let takes = if takes.is_empty() {
            "none".to_owned()
        } else {
            takes.join(", ")
        };
        return Err((
            field_path(field),
            format!("`{field}` is no parameter of {label} (it takes {takes})"),
        ));
    }
    let needs = |what: &str| (".topology", format!("topology {label} needs {what}"));
    let needs_switch = !matches!(name, TopologyName::Torus | TopologyName::Ring);
    if needs_switch && c.switch.is_none() {
        return Err((
            "",
            format!("topology {label} needs `switch`, the SWITCH component of its switches"),
        ));
    }
    Ok(match name {
        TopologyName::Star => Topology::Star,
        TopologyName::Ring => Topology::Ring,
        TopologyName::FatTree => match (&c.k, &c.down, &c.up, &c.parallel) {
            (Some(k), None, None, None) => {
                Topology::FatTree(FatTree::k_ary(*k).map_err(|e| (".k", e.message))?)
            }
            (None, Some(down), Some(up), parallel) => Topology::FatTree(FatTree {
                down: down.clone(),
                up: up.clone(),
                parallel: parallel.clone().unwrap_or_else(|| vec![1; down.len()]),
            }),
            _ => {
                return Err(needs(
                    "`down` and `up` (and `parallel`, 1 per level unless given), or `k` alone",
                ))
            }
        },
        TopologyName::LeafSpine => {
            let (Some(leaf_down), Some(spines)) = (c.leaf_down, c.spines) else {
                return Err(needs("`leaf_down` and `spines`"));
            };
            let parallel = match c.parallel.as_deref() {
                None => 1,
                Some([p]) => *p,
                Some(other) => return Err((".parallel", format!("expected 1 count, got {}", other.len()))),
            };
            Topology::LeafSpine(LeafSpine {
                leaf_down,
                spines,
                parallel,
            })
        }
        TopologyName::Torus => Topology::Torus(c.dims.clone().ok_or_else(|| needs("`dims`"))?),
        TopologyName::Dragonfly => {
            let level = |field: &'static str, v: &Option<Vec<u32>>| match v.as_deref() {
                Some([count, links]) => Ok(Level {
                    count: *count,
                    links: *links,
                }),
                Some(other) => Err((
                    field_path(field),
                    format!("expected [count, wires], got {} numbers", other.len()),
                )),
                None => Err(needs("`groups`, `chassis`, `routers` and `nodes`")),
            };
            Topology::Dragonfly(Dragonfly {
                groups: level("groups", &c.groups)?,
                chassis: level("chassis", &c.chassis)?,
                routers: level("routers", &c.routers)?,
                nodes: c
                    .nodes
                    .ok_or_else(|| needs("`groups`, `chassis`, `routers` and `nodes`"))?,
            })
        }
    })
}

/// `.field` for a parameter's name.
fn field_path(field: &str) -> &'static str {
    match field {
        "down" => ".down",
        "up" => ".up",
        "parallel" => ".parallel",
        "k" => ".k",
        "leaf_down" => ".leaf_down",
        "spines" => ".spines",
        "dims" => ".dims",
        "groups" => ".groups",
        "chassis" => ".chassis",
        "routers" => ".routers",
        _ => ".nodes",
    }
}

/// The checks of a file that need neither the catalog nor run variables (see the module's
/// doc); errors name the file and the path.
pub(crate) fn check(file: &SystemFile, origin: &str) -> Result<(), SystemError> {
    let at = |path: String, message: String| SystemError::new(message).in_file(origin).at_path(path);
    if file.nodes.is_empty() && file.clusters.is_empty() {
        return Err(at(
            "(top level)".to_owned(),
            "(top level): a system needs a [[node]] or a [[cluster]]".to_owned(),
        ));
    }
    let internal = |nodes: &[NodeSpec], path: &str| {
        for (number, n) in nodes.iter().enumerate() {
            if n.count > 1 && n.internal.is_none() {
                return Err(at(
                    format!("{path}node[{number}].count"),
                    format!(
                        "node `{}`: count {} needs `internal`, the link its units talk over",
                        n.id, n.count
                    ),
                ));
            }
        }
        Ok(())
    };
    internal(&file.nodes, "")?;
    for (number, board) in file.boards.iter().enumerate() {
        let path = format!("board[{number}].");
        internal(&board.nodes, &path)?;
        let ids: HashSet<&str> = board.nodes.iter().map(|n| n.id.as_str()).collect();
        let unknown = |id: &str, field: String| {
            let hint = did_you_mean(closest(id, ids.iter().copied()));
            at(
                field,
                format!("board `{}`: no node `{id}` on the board{hint}", board.name),
            )
        };
        for (l, link) in board.links.iter().enumerate() {
            if let Some(id) = link.between.iter().find(|id| !ids.contains(id.as_str())) {
                return Err(unknown(id, format!("{path}link[{l}].between")));
            }
        }
        if let Some(id) = board.attach.iter().find(|id| !ids.contains(id.as_str())) {
            return Err(unknown(id, format!("{path}attach")));
        }
    }
    for (number, cluster) in file.clusters.iter().enumerate() {
        let path = format!("cluster[{number}]");
        let error = |field: &str, message: String| {
            at(
                format!("{path}{field}"),
                format!("cluster `{}`: {message}", cluster.name),
            )
        };
        let (_, board) = board_of(file, cluster).map_err(|m| error(".board", m))?;
        if board.attach.is_empty() {
            return Err(error(
                ".board",
                format!(
                    "board `{}` attaches no node to the network: give its `attach`",
                    board.name
                ),
            ));
        }
        topology(cluster).map_err(|(field, m)| error(field, m))?;
    }
    Ok(())
}
