//! A system file's own run variables: `[variables]` declares each with its default, and an
//! inline component's attribute written `"${name}"` takes the variable's value. A run (or a
//! sweep) that gives the variable changes the attribute, so "the same app on links of 100,
//! 200 and 400 GB/s" is one sweep over one file.
//!
//! Only inline components refer to variables: catalog entries describe real parts and stay
//! as their sources give them.

use std::collections::BTreeMap;

use hetsim_models::catalog::Component;
use hetsim_models::params::closest;
use hetsim_models::Scalar;

use crate::error::{did_you_mean, SystemError};
use crate::spec::{ComponentSpec, SystemFile};
use crate::variable::{Variable, RESERVED_NAMES};

/// The variable an attribute's value refers to, if it is written `"${name}"`.
fn reference(value: &Scalar) -> Option<&str> {
    match value {
        Scalar::Text(text) => text.strip_prefix("${")?.strip_suffix('}').map(str::trim),
        Scalar::Number(_) => None,
    }
}

/// The component of `spec` with each `"${name}"` attribute replaced by the run's value of
/// `name` where `given` holds it, else by its default in the file's `[variables]`. An error
/// names the attribute's path (`component[2].attributes.bandwidth`) and what was expected.
pub(crate) fn component(
    spec: &ComponentSpec,
    index: usize,
    declared: &BTreeMap<String, f64>,
    given: &BTreeMap<String, Variable>,
    origin: &str,
) -> Result<Component, SystemError> {
    let mut component = spec
        .to_component()
        .map_err(|e| e.in_file(origin).at_path(format!("component[{index}].kind")))?;
    for (key, value) in component.attributes.iter_mut() {
        let Some(name) = reference(value) else { continue };
        let path = format!("component[{index}].attributes.{key}");
        let at = |message: String| SystemError::new(message).in_file(origin).at_path(path.clone());
        let Some(default) = declared.get(name) else {
            return Err(at(format!(
                "`{}` refers to the variable `{name}`, which the file's [variables] does not declare{}",
                spec.name,
                did_you_mean(closest(name, declared.keys().map(String::as_str)))
            )));
        };
        let number = match given.get(name) {
            None => *default,
            Some(v) => v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                at(format!(
                    "run variable `{name}` is {v:?}, expected a number for `{}`'s `{key}`",
                    spec.name
                ))
            })?,
        };
        *value = Scalar::Number(number);
    }
    Ok(component)
}

/// Checks the file's `[variables]`: no name a script reserves, every default a finite number
/// (the schema holds them to numbers), and every reference resolving at its default.
pub(crate) fn check(file: &SystemFile, origin: &str) -> Result<(), SystemError> {
    for (name, default) in &file.variables {
        let at = |message: String| {
            SystemError::new(message)
                .in_file(origin)
                .at_path(format!("variables.{name}"))
        };
        if RESERVED_NAMES.contains(&name.as_str()) {
            return Err(at(format!(
                "`{name}` is a name every script has; a variable may not take it"
            )));
        }
        if !default.is_finite() {
            return Err(at(format!("`{name}`'s default must be a finite number")));
        }
    }
    for (index, spec) in file.components.iter().enumerate() {
        component(spec, index, &file.variables, &BTreeMap::new(), origin)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(bandwidth: &str) -> ComponentSpec {
        ComponentSpec {
            name: "wire".to_owned(),
            kind: "NETWORK".to_owned(),
            vendor: String::new(),
            comment: String::new(),
            source: String::new(),
            attributes: [
                ("bandwidth".to_owned(), Scalar::Text(bandwidth.to_owned())),
                ("latency".to_owned(), Scalar::Number(1e-6)),
            ]
            .into(),
        }
    }

    fn bandwidth(c: &Component) -> Option<f64> {
        c.attributes.get("bandwidth").and_then(Scalar::as_number)
    }

    #[test]
    fn a_reference_takes_the_runs_value_else_the_default() {
        let declared = BTreeMap::from([("bw".to_owned(), 25e9)]);
        let none = BTreeMap::new();
        let given = BTreeMap::from([("bw".to_owned(), Variable::Int(400_000_000_000))]);
        let spec = link("${bw}");
        assert_eq!(
            bandwidth(&component(&spec, 0, &declared, &none, "f").unwrap()),
            Some(25e9)
        );
        assert_eq!(
            bandwidth(&component(&spec, 0, &declared, &given, "f").unwrap()),
            Some(4e11)
        );
        // Text that is not a whole reference stays text.
        let text = component(&link("x ${bw}"), 0, &declared, &none, "f").unwrap();
        assert_eq!(bandwidth(&text), None);
    }

    #[test]
    fn an_undeclared_reference_or_a_text_value_is_refused_naming_the_attribute() {
        let declared = BTreeMap::from([("linkBandwidth".to_owned(), 25e9)]);
        let e = component(
            &link("${linkBandwith}"),
            3,
            &declared,
            &BTreeMap::new(),
            "sys.toml",
        )
        .unwrap_err();
        assert_eq!(e.path.as_deref(), Some("component[3].attributes.bandwidth"));
        let e = e.to_string();
        assert!(
            e.starts_with("sys.toml") && e.contains("did you mean `linkBandwidth`"),
            "{e}"
        );
        let given = BTreeMap::from([("linkBandwidth".to_owned(), Variable::Text("fast".to_owned()))]);
        let e = component(&link("${linkBandwidth}"), 0, &declared, &given, "sys.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected a number"), "{e}");
    }
}
