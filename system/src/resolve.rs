//! A system model resolved: every node and link with its component (inline or from the
//! catalog) and its computational model (inline, built-in or a `.rhai` file), links checked,
//! kernel listings read and parsed; and the reading of a system file, from its text to a
//! resolved [`System`] ([`load`]).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use hetsim_models::catalog::{self, Component, ComponentKind};
use hetsim_models::params::closest;
use hetsim_models::transfer;
use hetsim_models::Scalar;
use hetsim_simulator::{Link, LinkParameterError};

use crate::error::{did_you_mean, unknown_node, SystemError};
use crate::expand::{check, expand, Placed};
use crate::kernel::{read_listing, KernelSpec};
use crate::models::BUILTIN_MODELS;
use crate::spec::{LinkSpec, ModelSpec, NodeSpec, RoutingSpec, SystemFile};
use crate::variable::Variable;
use crate::{declared, read, schema};

/// A computational model's name (for messages) and Rhai source.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSource {
    pub name: String,
    pub source: String,
}

/// A node or link with its component and model resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved<S> {
    pub spec: S,
    pub component: Component,
    pub model: ModelSource,
}

impl Resolved<LinkSpec> {
    /// The engine's link between nodes `between`: `channels` as the link states it, else as
    /// its component does (a whole number), else 1; the component's `duplex`, else 1; both
    /// checked by [`Link::check_parameters`]; its latency for routing (`routing_latency`).
    pub fn engine_link(&self, between: [usize; 2]) -> Result<Link, LinkParameterError> {
        engine_link(&self.spec, &self.component, between)
    }
}

/// The engine's link of `spec` over `component` (see `Resolved::<LinkSpec>::engine_link`).
fn engine_link(
    spec: &LinkSpec,
    component: &Component,
    between: [usize; 2],
) -> Result<Link, LinkParameterError> {
    let channels = match (spec.channels, component.attributes.get("channels")) {
        (Some(channels), _) => channels,
        (None, None) => 1,
        (None, Some(value)) => whole_channels(value)?,
    };
    let link = Link {
        between,
        channels,
        duplex: number_attribute(component, "duplex").unwrap_or(1.0),
        latency: routing_latency(component),
    };
    link.check_parameters()?;
    Ok(link)
}

/// The startup routing weighs a link by: its `latency` attribute, else its `startup`, else
/// the least of its per-direction startups (`startupHtD`, …), else 0.
fn routing_latency(component: &Component) -> f64 {
    number_attribute(component, "latency")
        .or_else(|| number_attribute(component, "startup"))
        .or_else(|| {
            component
                .attributes
                .iter()
                .filter(|(key, _)| key.starts_with("startup"))
                .filter_map(|(_, value)| value.as_number())
                .reduce(f64::min)
        })
        .unwrap_or(0.0)
}

/// Checks what the engine and the transfer models read of a link: one validation for a
/// system being loaded and for the engine's platform ([`Link::check_parameters`]), and the
/// transfer models' attributes ([`transfer::check_link_attributes`]).
fn check_link(spec: &LinkSpec, component: &Component) -> Result<(), String> {
    engine_link(spec, component, [0, 0]).map_err(|e| e.to_string())?;
    transfer::check_link_attributes(&component.attributes).map_err(|e| e.to_string())
}

/// How messages name the link at `path` in the file: `link[0] `a`–`b``, `board[0].link[2]
/// `b3.gpu0`–`b3.nvswitch``, `cluster[0].link `b0.nic0`–`fabric.leaf0``.
fn link_owner(path: &str, link: &LinkSpec) -> String {
    format!("{path} `{}`–`{}`", link.between[0], link.between[1])
}

/// The parameters of the link at `path` refused, as `origin: link[0] `a`–`b`, component `c`: why`.
fn link_error(origin: &str, path: &str, owner: &str, component: &Component, error: String) -> SystemError {
    SystemError::new(format!("{owner}, component `{}`: {error}", component.name))
        .in_file(origin)
        .at_path(path)
}

/// A component's `channels` attribute as a count of channels.
fn whole_channels(value: &Scalar) -> Result<u32, LinkParameterError> {
    let error = |value| LinkParameterError {
        field: "channels",
        value,
        expected: "a whole number >= 1",
    };
    let x = value.as_number().ok_or(error(f64::NAN))?;
    if x.fract() == 0.0 && x >= 1.0 && x <= f64::from(u32::MAX) {
        Ok(x as u32)
    } else {
        Err(error(x))
    }
}

/// A component's number attribute `key`, if it states one.
pub fn number_attribute(component: &Component, key: &str) -> Option<f64> {
    component.attributes.get(key).and_then(Scalar::as_number)
}

/// A system model checked against the catalog, its inline components and its model files.
#[derive(Clone, Debug, PartialEq)]
pub struct System {
    pub name: String,
    /// The run variables the file reads (its clusters' `boards_variable`): a run may give
    /// them though its app reads none of them.
    pub variables: Vec<String>,
    pub routing: RoutingSpec,
    /// NCCL's CollNet enabled ([`SystemFile::collnet`]).
    pub collnet: bool,
    /// `NCCL_MIN_CTAS` ([`SystemFile::nccl_min_ctas`]).
    pub nccl_min_ctas: Option<u32>,
    pub nodes: Vec<Resolved<NodeSpec>>,
    pub links: Vec<(Resolved<LinkSpec>, [usize; 2])>,
    /// The routes fixed by hand, each as its path of nodes from its first to its last.
    pub routes: Vec<Vec<usize>>,
    /// Every kernel with its listing read in and checked.
    pub kernels: Vec<KernelSpec>,
}

impl SystemFile {
    /// Parses TOML, or JSON when the text starts with `{`, and checks it as
    /// [`SystemFile::from_value`] does; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, SystemError> {
        read::read(text, origin)
            .and_then(|value| Self::from_value(value, origin))
            .map_err(|e| read::locate(e, text))
    }

    /// A system file from its JSON value, checked against the JSON Schema
    /// ([`schema::system_schema`]) first, so that a message names the path and what was
    /// expected, then for what needs no catalog: links join declared nodes, and links over
    /// inline components have good parameters (see [`Link::check_parameters`] and [`transfer::check_link_attributes`]).
    pub fn from_value(value: serde_json::Value, origin: &str) -> Result<Self, SystemError> {
        schema::check_system(&value, origin)?;
        let file: SystemFile =
            serde_json::from_value(value).map_err(|e| SystemError::new(e.to_string()).in_file(origin))?;
        declared::check(&file, origin)?;
        file.check_links(origin)?;
        check(&file, origin)?;
        Ok(file)
    }

    /// Checks every link's ends, and the parameters of those whose component is inline.
    fn check_links(&self, origin: &str) -> Result<(), SystemError> {
        // Sets and a component per name, not scans per link: a generated file of 10⁴ nodes
        // and links took 10⁸ comparisons here (docs/PERFORMANCE.md).
        let ids = || self.nodes.iter().map(|n| n.id.as_str());
        let known: HashSet<&str> = ids().collect();
        let mut components: HashMap<&str, Option<Component>> = HashMap::new();
        for (number, l) in self.links.iter().enumerate() {
            let path = || format!("link[{number}]");
            if let Some(id) = l.between.iter().find(|id| !known.contains(id.as_str())) {
                return Err(unknown_node(
                    origin,
                    &format!("{}.between", path()),
                    &link_owner(&path(), l),
                    id,
                    ids(),
                ));
            }
            let component = match components.entry(l.component.as_str()) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(slot) => {
                    let found = self
                        .components
                        .iter()
                        .enumerate()
                        .find(|(_, c)| c.name == l.component);
                    slot.insert(
                        found
                            .map(|(index, spec)| {
                                declared::component(spec, index, &self.variables, &BTreeMap::new(), origin)
                            })
                            .transpose()?,
                    )
                }
            };
            if let Some(component) = component {
                check_link(l, component)
                    .map_err(|e| link_error(origin, &path(), &link_owner(&path(), l), component, e))?;
            }
        }
        Ok(())
    }

    /// Resolves components (inline first, then the catalog) and models (inline, built-in,
    /// or `.rhai` files relative to `base_dir`; with no `base_dir`, files are refused), each
    /// cluster with its `boards` (see [`SystemFile::resolve_with`] for run variables).
    pub fn resolve(self, origin: &str, base_dir: Option<&Path>) -> Result<System, SystemError> {
        self.resolve_with(origin, base_dir, &BTreeMap::new())
    }

    /// As [`SystemFile::resolve`], a cluster's number of boards taken from the run variable
    /// its `boards_variable` names where `variables` holds it.
    pub fn resolve_with(
        self,
        origin: &str,
        base_dir: Option<&Path>,
        variables: &BTreeMap<String, Variable>,
    ) -> Result<System, SystemError> {
        let expanded = expand(&self, variables).map_err(|e| e.in_file(origin))?;
        let read_variables = self
            .clusters
            .iter()
            .filter_map(|c| c.boards_variable.clone())
            .chain(self.variables.keys().cloned())
            .collect();
        let catalog = catalog::components();
        let mut inline = BTreeMap::new();
        for (index, c) in self.components.iter().enumerate() {
            let component = declared::component(c, index, &self.variables, variables, origin)?;
            inline.insert(c.name.clone(), component);
        }
        // `owner` names the node or link in messages, `path` is where it is in the file.
        let error = |path: String, message: String| SystemError::new(message).in_file(origin).at_path(path);
        let declared = &self.variables;
        let component = |name: &str, owner: &str, path: &str| -> Result<Component, SystemError> {
            let name = declared::component_name(name, declared, variables)
                .map_err(|m| error(path.to_owned(), format!("{owner}: {m}")))?;
            let name = name.as_str();
            inline
                .get(name)
                .cloned()
                .or_else(|| catalog.iter().find(|c| c.name == name).cloned())
                .ok_or_else(|| {
                    let names = inline
                        .keys()
                        .map(String::as_str)
                        .chain(catalog.iter().map(|c| c.name.as_str()));
                    error(
                        path.to_owned(),
                        format!(
                            "{owner}: unknown component `{name}`{}",
                            did_you_mean(closest(name, names))
                        ),
                    )
                })
        };
        let inline_models = &self.models;
        let mut models: HashMap<String, ModelSource> = HashMap::new();
        let mut model = |name: &str, owner: &str, path: &str| -> Result<ModelSource, SystemError> {
            if let Some(found) = models.get(name) {
                return Ok(found.clone());
            }
            let found = find_model(inline_models, name, base_dir)
                .map_err(|m| error(format!("{path}.model"), format!("{owner}: {m}")))?;
            models.insert(name.to_owned(), found.clone());
            Ok(found)
        };
        let mut nodes = Vec::with_capacity(expanded.nodes.len());
        let mut node_paths = Vec::with_capacity(expanded.nodes.len());
        let mut index: HashMap<String, usize> = HashMap::with_capacity(expanded.nodes.len());
        for placed in expanded.nodes {
            let (component_path, model_path) = (placed.field("component"), placed.field("model"));
            let Placed { spec: n, path, .. } = placed;
            node_paths.push(path.clone());
            let owner = format!("node `{}`", n.id);
            if index.insert(n.id.clone(), nodes.len()).is_some() {
                return Err(error(format!("{path}.id"), format!("{owner} is declared twice")));
            }
            if n.count == 0 {
                return Err(error(
                    format!("{path}.count"),
                    format!("{owner}: count must be at least 1"),
                ));
            }
            let component = component(&n.component, &owner, &component_path)?;
            let is_switch = component.kind == ComponentKind::Switch;
            if is_switch && !n.labels.is_empty() {
                return Err(error(
                    format!("{path}.labels"),
                    format!("{owner}: a switch runs no processes, so it takes no `labels`"),
                ));
            }
            let model = match (n.model.is_empty(), is_switch) {
                (true, true) => ModelSource {
                    name: "switch (no model)".to_owned(),
                    source: SWITCH_MODEL.to_owned(),
                },
                (true, false) => {
                    return Err(error(
                        path,
                        format!(
                            "{owner}: `model` is required, the computational model of its computations (only a SWITCH node has none)"
                        ),
                    ))
                }
                (false, _) => model(&n.model, &owner, &model_path)?,
            };
            nodes.push(Resolved {
                component,
                model,
                spec: n,
            });
        }
        let mut links = Vec::with_capacity(expanded.links.len());
        for placed in expanded.links {
            let (component_path, model_path) = (placed.field("component"), placed.field("model"));
            let between_path = placed.field("between");
            let Placed { spec: l, path, .. } = placed;
            let owner = link_owner(&path, &l);
            let mut ends = [0; 2];
            for (end, id) in ends.iter_mut().zip(&l.between) {
                *end = index.get(id).copied().ok_or_else(|| {
                    unknown_node(
                        origin,
                        &between_path,
                        &owner,
                        id,
                        nodes.iter().map(|r| r.spec.id.as_str()),
                    )
                })?;
            }
            let link = Resolved {
                component: component(&l.component, &owner, &component_path)?,
                model: model(&l.model, &owner, &model_path)?,
                spec: l,
            };
            if link.component.kind != ComponentKind::Network {
                return Err(error(
                    component_path,
                    format!(
                        "{owner}: component `{}` is a {}, not a NETWORK",
                        link.component.name,
                        link.component.kind.as_str()
                    ),
                ));
            }
            check_link(&link.spec, &link.component)
                .map_err(|e| link_error(origin, &path, &owner, &link.component, e))?;
            links.push((link, ends));
        }
        let ends: Vec<[usize; 2]> = links.iter().map(|(_, ends)| *ends).collect();
        check_ports(&nodes, &ends).map_err(|(node, message)| error(node_paths[node].clone(), message))?;
        let routes = crate::routes::resolve(&self.routes, &index, &ends, origin)?;
        let kernels = self
            .kernels
            .into_iter()
            .enumerate()
            .map(|(number, k)| {
                k.resolve(base_dir)
                    .map_err(|e| e.in_file(origin).at_path(format!("kernel[{number}]")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(System {
            name: self.name,
            variables: read_variables,
            routing: self.routing,
            collnet: self.collnet,
            nccl_min_ctas: self.nccl_min_ctas,
            nodes,
            links,
            routes,
            kernels,
        })
    }
}

/// A switch with more links ending at it than its component's `ports` and `hostInterfaces`
/// (× its count): the
/// node's index and why. A link may stand for several ports (a GPU's 18 NVLinks to an
/// NVSwitch are one link), so this finds only what cannot be built.
fn check_ports(nodes: &[Resolved<NodeSpec>], ends: &[[usize; 2]]) -> Result<(), (usize, String)> {
    let mut attached = vec![0_u64; nodes.len()];
    for &[a, b] in ends.iter().filter(|[a, b]| a != b) {
        attached[a] += 1;
        attached[b] += 1;
    }
    for (node, n) in nodes.iter().enumerate() {
        let Some(ports) =
            number_attribute(&n.component, "ports").filter(|_| n.component.kind == ComponentKind::Switch)
        else {
            continue;
        };
        let host = number_attribute(&n.component, "hostInterfaces").unwrap_or(0.0);
        let available = (ports + host) * f64::from(n.spec.count);
        if attached[node] as f64 > available {
            let whose = match n.spec.count {
                1 => "its".to_owned(),
                count => format!("the {count} units of its"),
            };
            return Err((
                node,
                format!(
                    "node `{}`: {} links end at it, more than the {available} ports and host interfaces of {whose} component `{}`",
                    n.spec.id, attached[node], n.component.name
                ),
            ));
        }
    }
    Ok(())
}

/// What a SWITCH node resolves to as its model: a switch runs no processes, so the engine
/// never asks it for a compute time; it is there so that every node has a model.
const SWITCH_MODEL: &str = "fn compute_time(params) { throw \"a switch runs no processes\"; }";

/// Model `name`: inline, built-in, or a `.rhai` file under `base_dir`; else why not.
fn find_model(inline: &[ModelSpec], name: &str, base_dir: Option<&Path>) -> Result<ModelSource, String> {
    if let Some(m) = inline.iter().find(|m| m.name == name) {
        return Ok(ModelSource {
            name: format!("{name} (inline)"),
            source: m.source.clone(),
        });
    }
    if let Some((_, source)) = BUILTIN_MODELS.iter().find(|(n, _)| *n == name) {
        return Ok(ModelSource {
            name: format!("{name}.rhai"),
            source: (*source).to_owned(),
        });
    }
    if let (true, Some(base_dir)) = (name.ends_with(".rhai"), base_dir) {
        let file: PathBuf = base_dir.join(name);
        let source =
            std::fs::read_to_string(&file).map_err(|e| format!("model file {}: {e}", file.display()))?;
        return Ok(ModelSource {
            name: file.display().to_string(),
            source,
        });
    }
    let names = inline
        .iter()
        .map(|m| m.name.as_str())
        .chain(BUILTIN_MODELS.iter().map(|(n, _)| *n));
    Err(format!(
        "unknown model `{name}`{} (known: {}; or a .rhai file)",
        did_you_mean(closest(name, names.clone())),
        names.collect::<Vec<_>>().join(", ")
    ))
}

impl SystemFile {
    /// Reads every kernel's `sass` file (relative to `base_dir`) into its `listing`, so that
    /// the system needs no file to resolve: what `hetsim submit` sends a server.
    pub fn inline_kernel_listings(mut self, base_dir: &Path) -> Result<Self, SystemError> {
        for (number, k) in self.kernels.iter_mut().enumerate() {
            if let Some(file) = k.sass.take() {
                let listing = read_listing(&k.name, base_dir, &file)
                    .map_err(|e| e.at_path(format!("kernel[{number}].sass")))?;
                k.listing = Some(listing);
            }
        }
        Ok(self)
    }

    /// Reads every `.rhai` model file that a node or link names and no inline model holds
    /// (relative to `base_dir`, as [`SystemFile::resolve`] reads them) into a `[[model]]` of
    /// that name, which `resolve` takes before any file: the system then resolves the same
    /// without its files, as `hetsim submit` sends it to a server.
    pub fn inline_model_files(mut self, base_dir: &Path) -> Result<Self, SystemError> {
        let files: Vec<String> = self
            .used()
            .into_iter()
            .map(|(_, model)| model)
            .filter(|name| name.ends_with(".rhai"))
            .collect();
        for name in files {
            if self.models.iter().any(|m| m.name == name) {
                continue;
            }
            let path = base_dir.join(&name);
            let source = std::fs::read_to_string(&path)
                .map_err(|e| SystemError::new(format!("model file {}: {e}", path.display())))?;
            self.models.push(ModelSpec { name, source });
        }
        Ok(self)
    }
}

/// Reads and resolves a system model file, each cluster with its `boards`.
pub fn load(path: &Path) -> Result<System, SystemError> {
    load_with(path, &BTreeMap::new())
}

/// Reads and resolves a system model file, a cluster's number of boards taken from the run
/// variable its `boards_variable` names where `variables` holds it. An error found while
/// resolving is shown at the line of its path, as one found while parsing.
pub fn load_with(path: &Path, variables: &BTreeMap<String, Variable>) -> Result<System, SystemError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SystemError::new(e.to_string()).in_file(&origin))?;
    resolve_text(
        &text,
        &origin,
        Some(path.parent().unwrap_or(Path::new("."))),
        variables,
    )
}

/// A system file's text parsed ([`SystemFile::parse`]) and resolved
/// ([`SystemFile::resolve_with`]); an error found while resolving is shown at the line of
/// its path too.
pub fn resolve_text(
    text: &str,
    origin: &str,
    base_dir: Option<&Path>,
    variables: &BTreeMap<String, Variable>,
) -> Result<System, SystemError> {
    SystemFile::parse(text, origin)?
        .resolve_with(origin, base_dir, variables)
        .map_err(|e| read::locate(e, text))
}
