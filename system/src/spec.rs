//! System models as written: which components are placed (`node`), how many, with which
//! computational model and labels, and which links join them (`link`). Written as TOML or
//! JSON (docs/SIMULATION.md, "System files"); these serde types are also where the JSON Schema of
//! system files comes from ([`crate::schema`]).

use std::collections::BTreeMap;

use hetsim_models::catalog::{Component, ComponentKind};
use hetsim_models::Scalar;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use crate::error::SystemError;
use crate::kernel::KernelSpec;

/// A system model as written: which components are placed (`node`), how many, with which
/// computational model and labels, and which links join them (`link`); optionally inline
/// components (`component`), computational models (`model`) and analysed kernels (`kernel`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemFile {
    /// A name for listings and results.
    #[serde(default)]
    pub name: String,
    /// Inline components; they shadow catalog entries of the same name for this file.
    #[serde(default, rename = "component")]
    pub components: Vec<ComponentSpec>,
    /// Inline computational models; they shadow built-in models of the same name.
    #[serde(default, rename = "model", skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelSpec>,
    /// The placed components (besides those of clusters).
    #[serde(default, rename = "node")]
    pub nodes: Vec<NodeSpec>,
    /// The links between nodes; a message between nodes takes the path of least latency
    /// (docs/SIMULATION.md, "Time, messages, links").
    #[serde(default, rename = "link")]
    pub links: Vec<LinkSpec>,
    /// How a route is chosen among paths of equal cost: `shortest` (the first declared, the
    /// default), `ecmp` (spread over the pairs of nodes by a hash, as ECMP switches do) or
    /// `destination` (by the destination's index, as InfiniBand's subnet manager routes a
    /// fat-tree).
    #[serde(default, skip_serializing_if = "RoutingSpec::is_default")]
    pub routing: RoutingSpec,
    /// Whether NCCL runs with CollNet (the SHARP plugin and `NCCL_COLLNET_ENABLE=1`): its
    /// tuner may then pick CollNet Direct where the GPUs' NICs reach switches whose component
    /// says `reduction = "SHARP"`, and calls may force it (default false, NCCL's default).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub collnet: bool,
    /// `NCCL_MIN_CTAS` of the run's NCCL: its collectives use at least this many channels
    /// (one CTA each; NCCL's `MAXCHANNELS`, 64, at most). NCCL raises the NVLS channels to it
    /// (`nvls.cc`, 16 on Hopper otherwise) and the rings' and trees' (`connect.cc`); its
    /// tuner's choice does not change. Default: NCCL's own channels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 64))]
    pub nccl_min_ctas: Option<u32>,
    /// Routes fixed by hand: they take precedence over `routing` for their pairs of nodes.
    #[serde(default, rename = "route", skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RouteSpec>,
    /// Analysed GPU kernels that `kernel_params(name, …)` serves to the application.
    #[serde(default, rename = "kernel", skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<KernelSpec>,
    /// Board templates: nodes and links that a `cluster` repeats.
    #[serde(default, rename = "board", skip_serializing_if = "Vec::is_empty")]
    pub boards: Vec<BoardSpec>,
    /// Copies of a board joined by a generated network.
    #[serde(default, rename = "cluster", skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<ClusterSpec>,
    /// The file's own run variables, each with its default (a number or a text): an inline
    /// component's attribute, or a node's or link's `component`, written `"${name}"` takes
    /// the run's value of `name`, else this default.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "attributes_schema")]
    pub variables: BTreeMap<String, Scalar>,
}

/// A route fixed by hand: messages from node `from` to node `to` cross the nodes `via` in
/// order, each step over the first link declared between its two nodes; the way back takes
/// the same nodes in reverse unless `symmetric` is false.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    pub from: String,
    pub to: String,
    /// The nodes crossed between the two ends, in order (none: a direct link).
    #[serde(default)]
    pub via: Vec<String>,
    /// Whether the way back is fixed too (default true).
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub symmetric: bool,
}

fn yes() -> bool {
    true
}

fn is_yes(value: &bool) -> bool {
    *value
}

/// `routing` as written.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoutingSpec {
    #[default]
    Shortest,
    Ecmp,
    Destination,
}

impl RoutingSpec {
    fn is_default(&self) -> bool {
        *self == RoutingSpec::Shortest
    }
}

/// A computational model given in the system file itself.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// The name nodes and links give as their `model`.
    pub name: String,
    /// Rhai source defining `compute_time(params)` or `transfer_time(params)`.
    pub source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = Component))]
#[serde(deny_unknown_fields)]
pub struct ComponentSpec {
    /// The name nodes and links give as their `component`.
    pub name: String,
    /// GPU, CPU, NETWORK or SWITCH (any case). A SWITCH node runs no processes and adds its
    /// `latency` [s] to every message that crosses it.
    pub kind: String,
    #[serde(default)]
    pub vendor: String,
    #[serde(default)]
    pub comment: String,
    #[serde(default)]
    pub source: String,
    /// Numbers or text by name (`bandwidth`, `startup`, `lambda`, ... for a link).
    #[serde(default)]
    #[schemars(schema_with = "attributes_schema")]
    pub attributes: BTreeMap<String, Scalar>,
}

impl ComponentSpec {
    /// The component, with its kind checked.
    pub fn to_component(&self) -> Result<Component, SystemError> {
        Ok(Component {
            name: self.name.clone(),
            vendor: self.vendor.clone(),
            kind: parse_kind(&self.kind, &self.name)?,
            comment: self.comment.clone(),
            source: self.source.clone(),
            attributes: self.attributes.clone(),
        })
    }

    pub fn from_component(c: Component) -> Self {
        ComponentSpec {
            name: c.name,
            kind: c.kind.as_str().to_owned(),
            vendor: c.vendor,
            comment: c.comment,
            source: c.source,
            attributes: c.attributes,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// The name links and messages give the node.
    pub id: String,
    /// An inline component's name or a catalog entry's (`hetsim components`).
    pub component: String,
    /// Identical units of the component (at least 1); more than 1 needs `internal`.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub count: u32,
    /// A computational model: inline, built-in (`cpu-flops`, `gpu-volkov`, ...) or a `.rhai`
    /// file relative to the system file. Required but for a SWITCH node, which has none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// Label → processes of that label one unit can host (none on a SWITCH node).
    #[serde(default)]
    pub labels: BTreeMap<String, u32>,
    /// The NETWORK component the units of a node of `count` > 1 talk over: the node's
    /// internal link, a link from the node to itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal: Option<String>,
    /// The internal link's transfer model, `link-startup-bandwidth` unless given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_model: Option<String>,
}

impl NodeSpec {
    /// The internal link of a node that names one: between the node and itself.
    pub fn internal_link(&self) -> Option<LinkSpec> {
        self.internal.as_ref().map(|component| LinkSpec {
            between: [self.id.clone(), self.id.clone()],
            component: component.clone(),
            model: self.internal_model.clone().unwrap_or_else(link_model),
            channels: None,
        })
    }
}

/// A board template: nodes and links as at the top level (ids local to the board), which a
/// cluster copies with the ids prefixed (`b3.gpu5`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoardSpec {
    /// The name clusters give as their `board`.
    pub name: String,
    /// The board's nodes.
    #[serde(rename = "node")]
    pub nodes: Vec<NodeSpec>,
    /// The links between the board's nodes.
    #[serde(default, rename = "link")]
    pub links: Vec<LinkSpec>,
    /// The board's nodes that attach to a cluster's network, in order (one wire each).
    #[serde(default)]
    pub attach: Vec<String>,
}

/// The generated networks ([`hetsim_topology`]), as SimGrid's cluster zones name theirs:
/// `star` (one `switch`, a wire from every attached node), `fat-tree` (PGFT(h; down; up;
/// parallel) as SimGrid's FAT_TREE, or the k-ary tree of `k`), `leaf-spine` (leaves of
/// `leaf_down` attached nodes, each wired to every one of `spines`), `torus` (the attached
/// nodes in a torus of `dims`, 1 to 3 of them, no switches), `ring` (the attached nodes in
/// a ring), `dragonfly` (`groups`, `chassis`, `routers` as [count, wires], `nodes` per
/// router).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyName {
    Star,
    FatTree,
    LeafSpine,
    Torus,
    Ring,
    Dragonfly,
}

/// `boards` copies of a board template joined by a generated network: each copy's
/// `attach` nodes are its endpoints, board after board.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    /// The network's name: its switches are `<name>.<switch>` (`fabric.leaf0`).
    #[serde(default = "fabric")]
    pub name: String,
    /// The `[[board]]` template to copy.
    pub board: String,
    /// How many copies, unless the run gives `boards_variable`.
    #[schemars(range(min = 1))]
    pub boards: u32,
    /// A run variable that, where the run gives it, overrides `boards`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boards_variable: Option<String>,
    /// Copy `i`'s node `n` is `<prefix><i>.<n>`; `b` unless given.
    #[serde(default = "board_prefix")]
    pub prefix: String,
    pub topology: TopologyName,
    /// The SWITCH component of the network's switches (not needed by torus and ring).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch: Option<String>,
    /// The NETWORK component of every wire of the network.
    pub link: String,
    /// The wires' transfer model, `link-startup-bandwidth` unless given.
    #[serde(default = "link_model")]
    pub link_model: String,
    /// fat-tree: children per switch, level 1 first (SimGrid's m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down: Option<Vec<u32>>,
    /// fat-tree: parents per node, level 1 first (SimGrid's w).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<Vec<u32>>,
    /// fat-tree: wires per parent–child pair, level 1 first (SimGrid's p); leaf-spine: wires
    /// per leaf–spine pair (1 unless given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<Vec<u32>>,
    /// fat-tree: the k-ary three-level tree of k-port switches, instead of down/up/parallel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// leaf-spine: attached nodes per leaf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_down: Option<u32>,
    /// leaf-spine: spines, each wired to every leaf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
    /// torus: the size of each dimension, x first; their product is the attached nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dims: Option<Vec<u32>>,
    /// dragonfly: [groups, wires between two groups].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<u32>>,
    /// dragonfly: [chassis per group, wires between two chassis' routers].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chassis: Option<Vec<u32>>,
    /// dragonfly: [routers per chassis, wires between two routers of a chassis].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routers: Option<Vec<u32>>,
    /// dragonfly: attached nodes per router.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The ids of the two nodes it joins.
    pub between: [String; 2],
    /// A NETWORK component, inline or from the catalog: its attributes (`bandwidth`,
    /// `startup`, `lambda`, `duplex`, `channels`, ...) are checked when the system is loaded.
    pub component: String,
    /// The transfer model, `link-startup-bandwidth` unless given.
    #[serde(default = "link_model")]
    pub model: String,
    /// Transfers at once per direction; defaults to the component's `channels`, else 1.
    #[schemars(range(min = 1))]
    pub channels: Option<u32>,
}

fn one() -> u32 {
    1
}

fn link_model() -> String {
    "link-startup-bandwidth".to_owned()
}

fn fabric() -> String {
    "fabric".to_owned()
}

fn board_prefix() -> String {
    "b".to_owned()
}

/// The schema of a component's `attributes`: numbers or text by name (which a component kind
/// needs is each model's business, checked when the system is resolved).
fn attributes_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "additionalProperties": { "type": ["number", "string"] }
    })
}

fn parse_kind(kind: &str, component: &str) -> Result<ComponentKind, SystemError> {
    [
        ComponentKind::Gpu,
        ComponentKind::Cpu,
        ComponentKind::Network,
        ComponentKind::Switch,
    ]
    .into_iter()
    .find(|k| k.as_str().eq_ignore_ascii_case(kind))
    .ok_or_else(|| {
        SystemError::new(format!(
            "component `{component}`: kind `{kind}` is not one of GPU, CPU, NETWORK, SWITCH"
        ))
    })
}

impl SystemFile {
    /// Every (component, model) pair that a node, a node's internal link, a link, a board's
    /// node or link or a cluster's switches and wires name, in file order; the model is empty
    /// where there is none (a switch).
    pub fn used(&self) -> Vec<(String, String)> {
        fn of_nodes<'a>(
            nodes: &'a [NodeSpec],
            links: &'a [LinkSpec],
        ) -> impl Iterator<Item = (String, String)> + 'a {
            nodes
                .iter()
                .flat_map(|n| {
                    let internal = n.internal_link().map(|l| (l.component, l.model));
                    std::iter::once((n.component.clone(), n.model.clone())).chain(internal)
                })
                .chain(links.iter().map(|l| (l.component.clone(), l.model.clone())))
        }
        let clusters = self.clusters.iter().flat_map(|c| {
            let switch = c.switch.clone().map(|s| (s, String::new()));
            switch.into_iter().chain([(c.link.clone(), c.link_model.clone())])
        });
        of_nodes(&self.nodes, &self.links)
            .chain(self.boards.iter().flat_map(|b| of_nodes(&b.nodes, &b.links)))
            .chain(clusters)
            .collect()
    }

    /// Adds, as inline entries, every component and model the nodes and links name that is
    /// not inline yet and that `component` or `model` knows: the result needs nothing but
    /// the built-ins to resolve (a server stores runs this way, so that later edits of its
    /// database do not change them).
    pub fn inline(
        mut self,
        component: impl Fn(&str) -> Option<Component>,
        model: impl Fn(&str) -> Option<String>,
    ) -> Self {
        let used = self.used();
        for (component_name, model_name) in used {
            if !self.components.iter().any(|c| c.name == component_name) {
                if let Some(c) = component(&component_name) {
                    self.components.push(ComponentSpec::from_component(c));
                }
            }
            if !model_name.is_empty() && !self.models.iter().any(|m| m.name == model_name) {
                if let Some(source) = model(&model_name) {
                    self.models.push(ModelSpec {
                        name: model_name,
                        source,
                    });
                }
            }
        }
        self
    }
}
