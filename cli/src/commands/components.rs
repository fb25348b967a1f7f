//! `hetsim components`: the hardware catalog.

use anyhow::{bail, Result};
use hetsim_models::catalog::{self, Component};
use hetsim_models::params::closest;

use crate::cli::ComponentsArgs;

pub fn run(args: ComponentsArgs) -> Result<()> {
    let all = catalog::components();
    if let Some(name) = &args.name {
        if !all.iter().any(|c| &c.name == name) {
            let hint = closest(name, all.iter().map(|c| c.name.as_str()))
                .map(|h| format!("; did you mean {h:?}?"))
                .unwrap_or_default();
            bail!("no component named {name:?} in the catalog{hint}");
        }
    }
    let selected: Vec<&Component> = all
        .iter()
        .filter(|c| args.name.as_ref().is_none_or(|n| &c.name == n))
        .filter(|c| {
            args.kind
                .as_ref()
                .is_none_or(|k| c.kind.as_str().eq_ignore_ascii_case(k))
        })
        .collect();
    if args.json {
        return super::print_json(&selected);
    }
    for c in selected {
        println!("{} [{}] {}", c.name, c.kind.as_str(), c.comment);
        println!("  source: {}", c.source);
        let attributes: Vec<String> = c.attributes.iter().map(|(k, v)| attribute(k, v)).collect();
        println!("  {}", attributes.join(", "));
    }
    Ok(())
}

/// `name=value unit`, the value as every table writes numbers.
fn attribute(name: &str, value: &hetsim_models::Scalar) -> String {
    let value = match value {
        hetsim_models::Scalar::Number(x) => hetsim_service::table::number(*x),
        text => text.to_string(),
    };
    match hetsim_models::units::attribute_unit(name) {
        Some(unit) => format!("{name}={value} {unit}"),
        None => format!("{name}={value}"),
    }
}
