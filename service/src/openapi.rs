//! OpenAPI schemas of the types that other crates define and the API sends or takes
//! (`hetsim_system::ComponentSpec`, `hetsim_models::Scalar`, run variables).
//! They are declared here, mirroring those types' serde forms, so that the crates below the
//! service stay free of utoipa; built with the `openapi` feature, which the web crate turns
//! on. The tests below hold each mirror to its original.
// The mirrors are schemas only: no code builds them or reads their fields.
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::Deserialize;
use utoipa::ToSchema;

/// A component: the fields of a system file's `[[component]]` table.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Component {
    /// Unique in the catalog; what a system's nodes and links name.
    name: String,
    /// GPU, CPU or NETWORK (any case).
    kind: String,
    #[serde(default)]
    vendor: String,
    #[serde(default)]
    comment: String,
    /// Where the attributes come from (a datasheet, a paper, a calibration).
    #[serde(default)]
    source: String,
    /// The attributes its computational models read (`performance`, `bandwidth`, …).
    #[serde(default)]
    attributes: BTreeMap<String, AttributeValue>,
}

/// A component's attribute: a number or a text.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
pub enum AttributeValue {
    Number(f64),
    Text(String),
}

/// A run variable's value: a number, a bool or a string.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
pub enum VariableValue {
    Number(f64),
    Bool(bool),
    Text(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetsim_models::catalog;
    use hetsim_system::ComponentSpec;
    use hetsim_system::Variable;
    use utoipa::PartialSchema;

    fn required(schema: utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>) -> Vec<String> {
        let json = serde_json::to_value(schema).expect("a schema serializes");
        serde_json::from_value(json["required"].clone()).unwrap_or_default()
    }

    #[test]
    fn the_component_schema_reads_every_catalog_component_and_requires_what_the_original_does() {
        for c in catalog::components() {
            let json = serde_json::to_value(ComponentSpec::from_component(c)).expect("serializes");
            assert!(
                serde_json::from_value::<Component>(json.clone()).is_ok(),
                "the schema lacks a field of {json}"
            );
        }
        let minimal = serde_json::json!({"name": "x", "kind": "GPU"});
        assert!(serde_json::from_value::<ComponentSpec>(minimal.clone()).is_ok());
        assert!(serde_json::from_value::<Component>(minimal).is_ok());
        assert_eq!(required(Component::schema()), ["name", "kind"]);
    }

    #[test]
    fn the_value_schemas_read_what_the_originals_write() {
        for v in [
            Variable::Int(3),
            Variable::Float(0.5),
            Variable::Bool(true),
            Variable::Text("a".into()),
        ] {
            let json = serde_json::to_value(&v).expect("serializes");
            assert!(
                serde_json::from_value::<VariableValue>(json.clone()).is_ok(),
                "{json}"
            );
        }
        for a in [
            hetsim_models::Scalar::Number(1e9),
            hetsim_models::Scalar::Text("x".into()),
        ] {
            let json = serde_json::to_value(&a).expect("serializes");
            assert!(
                serde_json::from_value::<AttributeValue>(json.clone()).is_ok(),
                "{json}"
            );
        }
    }
}
