//! System models: which components are placed, how many, with which computational model and
//! labels, and which links join them. Written as TOML or JSON (DESIGN.md, "System model").

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use hetsim_models::catalog::{self, Component, ComponentKind};
use hetsim_models::params::closest;
use hetsim_models::transfer;
use hetsim_models::Scalar;
use hetsim_simulator::{Link, LinkParameterError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::kernels::read_listing;
pub use crate::kernels::KernelSpec;
use crate::schema;

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
    /// The placed components.
    #[serde(rename = "node")]
    pub nodes: Vec<NodeSpec>,
    /// The links between nodes; messages between nodes with no link of their own take the
    /// path of fewest links.
    #[serde(default, rename = "link")]
    pub links: Vec<LinkSpec>,
    /// Analysed GPU kernels that `kernel_params(name, …)` serves to the application.
    #[serde(default, rename = "kernel", skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<KernelSpec>,
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
#[serde(deny_unknown_fields)]
pub struct ComponentSpec {
    /// The name nodes and links give as their `component`.
    pub name: String,
    /// GPU, CPU or NETWORK (any case).
    pub kind: String,
    #[serde(default)]
    pub vendor: String,
    #[serde(default)]
    pub comment: String,
    #[serde(default)]
    pub source: String,
    /// Numbers or text by name (`bandwidth`, `startup`, `lambda`, ... for a link).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::attributes_schema")]
    pub attributes: BTreeMap<String, Scalar>,
}

impl ComponentSpec {
    /// The component, with its kind checked.
    pub fn to_component(&self) -> Result<Component, String> {
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
    /// Identical units of the component (at least 1).
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub count: u32,
    /// A computational model: inline, built-in (`cpu-flops`, `gpu-volkov`, ...) or a `.rhai`
    /// file relative to the system file.
    pub model: String,
    /// Label → processes of that label one unit can host.
    #[serde(default)]
    pub labels: BTreeMap<String, u32>,
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

/// The built-in computational models, each shipped as a file a user can copy.
pub const BUILTIN_MODELS: [(&str, &str); 7] = [
    ("gpu-volkov", include_str!("../models/gpu-volkov.rhai")),
    ("gpu-queueing", include_str!("../models/gpu-queueing.rhai")),
    ("gpu-teg", include_str!("../models/gpu-teg.rhai")),
    ("gpu-hong-kim", include_str!("../models/gpu-hong-kim.rhai")),
    ("cpu-flops", include_str!("../models/cpu-flops.rhai")),
    (
        "link-startup-bandwidth",
        include_str!("../models/link-startup-bandwidth.rhai"),
    ),
    (
        "link-host-memory",
        include_str!("../models/link-host-memory.rhai"),
    ),
];

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
    /// checked by [`Link::check_parameters`].
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
    };
    link.check_parameters()?;
    Ok(link)
}

/// Checks what the engine and the transfer models read of a link: one validation for a
/// system being loaded and for the engine's platform ([`Link::check_parameters`]), and the
/// transfer models' attributes ([`transfer::check_link_attributes`]).
fn check_link(spec: &LinkSpec, component: &Component) -> Result<(), String> {
    engine_link(spec, component, [0, 0]).map_err(|e| e.to_string())?;
    transfer::check_link_attributes(&component.attributes).map_err(|e| e.to_string())
}

/// How messages name link `number` (0-based, in file order): `link[0] `a`–`b``.
fn link_owner(number: usize, link: &LinkSpec) -> String {
    format!("link[{number}] `{}`–`{}`", link.between[0], link.between[1])
}

fn link_error(origin: &str, owner: &str, component: &Component, error: String) -> String {
    format!("{origin}: {owner}, component `{}`: {error}", component.name)
}

fn unknown_node<'a>(origin: &str, owner: &str, id: &str, ids: impl IntoIterator<Item = &'a str>) -> String {
    format!("{origin}: {owner}: unknown node `{id}`{}", hint(closest(id, ids)))
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
    pub nodes: Vec<Resolved<NodeSpec>>,
    pub links: Vec<(Resolved<LinkSpec>, [usize; 2])>,
    /// Every kernel with its listing read in and checked.
    pub kernels: Vec<KernelSpec>,
}

fn hint(h: Option<String>) -> String {
    h.map(|h| format!("; did you mean `{h}`?")).unwrap_or_default()
}

fn parse_kind(kind: &str, component: &str) -> Result<ComponentKind, String> {
    [ComponentKind::Gpu, ComponentKind::Cpu, ComponentKind::Network]
        .into_iter()
        .find(|k| k.as_str().eq_ignore_ascii_case(kind))
        .ok_or_else(|| format!("component `{component}`: kind `{kind}` is not one of GPU, CPU, NETWORK"))
}

impl SystemFile {
    /// Parses TOML, or JSON when the text starts with `{`, and checks it as
    /// [`SystemFile::from_value`] does; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, String> {
        Self::from_value(schema::read(text, origin)?, origin)
    }

    /// A system file from its JSON value, checked against the JSON Schema
    /// ([`schema::system_schema`]) first, so that a message names the path and what was
    /// expected, then for what needs no catalog: links join declared nodes, and links over
    /// inline components have good parameters (see [`Link::check_parameters`] and [`transfer::check_link_attributes`]).
    pub fn from_value(value: serde_json::Value, origin: &str) -> Result<Self, String> {
        schema::check_system(&value, origin)?;
        let file: SystemFile = serde_json::from_value(value).map_err(|e| format!("{origin}: {e}"))?;
        file.check_links(origin)?;
        Ok(file)
    }

    /// Checks every link's ends, and the parameters of those whose component is inline.
    fn check_links(&self, origin: &str) -> Result<(), String> {
        let ids = || self.nodes.iter().map(|n| n.id.as_str());
        for (number, l) in self.links.iter().enumerate() {
            let owner = link_owner(number, l);
            if let Some(id) = l.between.iter().find(|id| !ids().any(|n| n == id.as_str())) {
                return Err(unknown_node(origin, &owner, id, ids()));
            }
            if let Some(spec) = self.components.iter().find(|c| c.name == l.component) {
                let component = spec.to_component().map_err(|e| format!("{origin}: {e}"))?;
                check_link(l, &component).map_err(|e| link_error(origin, &owner, &component, e))?;
            }
        }
        Ok(())
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
        let used: Vec<(String, String)> = self
            .nodes
            .iter()
            .map(|n| (n.component.clone(), n.model.clone()))
            .chain(self.links.iter().map(|l| (l.component.clone(), l.model.clone())))
            .collect();
        for (component_name, model_name) in used {
            if !self.components.iter().any(|c| c.name == component_name) {
                if let Some(c) = component(&component_name) {
                    self.components.push(ComponentSpec::from_component(c));
                }
            }
            if !self.models.iter().any(|m| m.name == model_name) {
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

    /// Resolves components (inline first, then the catalog) and models (inline, built-in,
    /// or `.rhai` files relative to `base_dir`; with no `base_dir`, files are refused).
    pub fn resolve(self, origin: &str, base_dir: Option<&Path>) -> Result<System, String> {
        let catalog = catalog::components();
        let mut inline = BTreeMap::new();
        for c in &self.components {
            let component = c.to_component().map_err(|e| format!("{origin}: {e}"))?;
            inline.insert(c.name.clone(), component);
        }
        let component = |name: &str, owner: &str| -> Result<Component, String> {
            inline
                .get(name)
                .cloned()
                .or_else(|| catalog.iter().find(|c| c.name == name).cloned())
                .ok_or_else(|| {
                    let names = inline
                        .keys()
                        .map(String::as_str)
                        .chain(catalog.iter().map(|c| c.name.as_str()));
                    format!(
                        "{origin}: {owner}: unknown component `{name}`{}",
                        hint(closest(name, names))
                    )
                })
        };
        let inline_models = &self.models;
        let model = |name: &str, owner: &str| -> Result<ModelSource, String> {
            if let Some(m) = inline_models.iter().find(|m| m.name == name) {
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
                let path: PathBuf = base_dir.join(name);
                let source = std::fs::read_to_string(&path)
                    .map_err(|e| format!("{origin}: {owner}: model file {}: {e}", path.display()))?;
                return Ok(ModelSource {
                    name: path.display().to_string(),
                    source,
                });
            }
            let names = inline_models
                .iter()
                .map(|m| m.name.as_str())
                .chain(BUILTIN_MODELS.iter().map(|(n, _)| *n));
            Err(format!(
                "{origin}: {owner}: unknown model `{name}`{} (known: {}; or a .rhai file)",
                hint(closest(name, names.clone())),
                names.collect::<Vec<_>>().join(", ")
            ))
        };
        let mut nodes = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for n in self.nodes {
            let owner = format!("node `{}`", n.id);
            if index.insert(n.id.clone(), nodes.len()).is_some() {
                return Err(format!("{origin}: {owner} is declared twice"));
            }
            if n.count == 0 {
                return Err(format!("{origin}: {owner}: count must be at least 1"));
            }
            nodes.push(Resolved {
                component: component(&n.component, &owner)?,
                model: model(&n.model, &owner)?,
                spec: n,
            });
        }
        let mut links = Vec::new();
        for (number, l) in self.links.into_iter().enumerate() {
            let owner = link_owner(number, &l);
            let mut ends = [0; 2];
            for (end, id) in ends.iter_mut().zip(&l.between) {
                *end = index.get(id).copied().ok_or_else(|| {
                    unknown_node(origin, &owner, id, nodes.iter().map(|r| r.spec.id.as_str()))
                })?;
            }
            let link = Resolved {
                component: component(&l.component, &owner)?,
                model: model(&l.model, &owner)?,
                spec: l,
            };
            check_link(&link.spec, &link.component)
                .map_err(|e| link_error(origin, &owner, &link.component, e))?;
            links.push((link, ends));
        }
        let kernels = self
            .kernels
            .into_iter()
            .map(|k| k.resolve(base_dir).map_err(|e| format!("{origin}: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(System {
            name: self.name,
            nodes,
            links,
            kernels,
        })
    }
}

impl SystemFile {
    /// Reads every kernel's `sass` file (relative to `base_dir`) into its `listing`, so that
    /// the system needs no file to resolve: what `hetsim submit` sends a server.
    pub fn inline_kernel_listings(mut self, base_dir: &Path) -> Result<Self, String> {
        for k in &mut self.kernels {
            if let Some(file) = k.sass.take() {
                k.listing = Some(read_listing(&k.name, base_dir, &file)?);
            }
        }
        Ok(self)
    }

    /// Reads every `.rhai` model file that a node or link names and no inline model holds
    /// (relative to `base_dir`, as [`SystemFile::resolve`] reads them) into a `[[model]]` of
    /// that name, which `resolve` takes before any file: the system then resolves the same
    /// without its files, as `hetsim submit` sends it to a server.
    pub fn inline_model_files(mut self, base_dir: &Path) -> Result<Self, String> {
        let named = self
            .nodes
            .iter()
            .map(|n| n.model.clone())
            .chain(self.links.iter().map(|l| l.model.clone()));
        let files: Vec<String> = named.filter(|name| name.ends_with(".rhai")).collect();
        for name in files {
            if self.models.iter().any(|m| m.name == name) {
                continue;
            }
            let path = base_dir.join(&name);
            let source =
                std::fs::read_to_string(&path).map_err(|e| format!("model file {}: {e}", path.display()))?;
            self.models.push(ModelSpec { name, source });
        }
        Ok(self)
    }
}

/// Reads and resolves a system model file.
pub fn load(path: &Path) -> Result<System, String> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{origin}: {e}"))?;
    SystemFile::parse(&text, &origin)?.resolve(&origin, Some(path.parent().unwrap_or(Path::new("."))))
}
