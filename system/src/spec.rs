//! System models as written: which components are placed (`node`), how many, with which
//! computational model and labels, and which links join them (`link`). Written as TOML or
//! JSON (DESIGN.md, "System model"); these serde types are also where the JSON Schema of
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = Component))]
#[serde(deny_unknown_fields)]
pub struct ComponentSpec {
    /// The name nodes and links give as their `component`.
    pub name: String,
    /// GPU, CPU, NETWORK or SWITCH (any case).
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
}
