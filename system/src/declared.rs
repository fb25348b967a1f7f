//! A system file's own run variables: `[variables]` declares each with its default, and an
//! inline component's attribute written `"${name}"` takes the variable's number; a node's or
//! link's `component` written `"${name}"` takes its text, the name of a component. A run (or
//! a sweep) that gives the variable changes the attribute or the part, so "the same app on
//! links of 100, 200 and 400 GB/s", or "on an H100 and on an H200", is one sweep over one file.
//!
//! Only inline components' attributes refer to variables: catalog entries describe real parts
//! and stay as their sources give them.

use std::collections::BTreeMap;

use hetsim_models::catalog::Component;
use hetsim_models::params::closest;
use hetsim_models::Scalar;

use crate::error::{did_you_mean, SystemError};
use crate::spec::{ComponentSpec, SystemFile};
use crate::variable::{Variable, RESERVED_NAMES};

/// The file's variables and their defaults.
pub(crate) type Declared = BTreeMap<String, Scalar>;

/// The variable a text refers to, if it is written `"${name}"`.
fn reference(text: &str) -> Option<&str> {
    text.strip_prefix("${")?.strip_suffix('}').map(str::trim)
}

/// The value of the variable `text` refers to: the run's where `given` holds it, else the
/// default; `None` where `text` is no reference. An error says what is wrong.
fn value(
    text: &str,
    declared: &Declared,
    given: &BTreeMap<String, Variable>,
) -> Option<Result<Scalar, String>> {
    let name = reference(text)?;
    let Some(default) = declared.get(name) else {
        return Some(Err(format!(
            "`{text}` refers to the variable `{name}`, which the file's [variables] does not declare{}",
            did_you_mean(closest(name, declared.keys().map(String::as_str)))
        )));
    };
    Some(Ok(match given.get(name) {
        None => default.clone(),
        Some(Variable::Int(i)) => Scalar::Number(*i as f64),
        Some(Variable::Float(x)) => Scalar::Number(*x),
        Some(Variable::Text(t)) => Scalar::Text(t.clone()),
        Some(Variable::Bool(b)) => Scalar::Text(b.to_string()),
    }))
}

/// A component's name as a node or link gives it: the text of the variable it refers to
/// (`component = "${gpu}"`), else itself.
pub(crate) fn component_name(
    name: &str,
    declared: &Declared,
    given: &BTreeMap<String, Variable>,
) -> Result<String, String> {
    match value(name, declared, given) {
        None => Ok(name.to_owned()),
        Some(Ok(Scalar::Text(text))) => Ok(text),
        Some(Ok(Scalar::Number(x))) => Err(format!("`{name}` is {x}, expected the name of a component")),
        Some(Err(e)) => Err(e),
    }
}

/// The component of `spec` with each `"${name}"` attribute replaced by the number the
/// variable holds. An error names the attribute's path (`component[2].attributes.bandwidth`)
/// and what was expected.
pub(crate) fn component(
    spec: &ComponentSpec,
    index: usize,
    declared: &Declared,
    given: &BTreeMap<String, Variable>,
    origin: &str,
) -> Result<Component, SystemError> {
    let mut component = spec
        .to_component()
        .map_err(|e| e.in_file(origin).at_path(format!("component[{index}].kind")))?;
    for (key, attribute) in component.attributes.iter_mut() {
        let Scalar::Text(text) = attribute else { continue };
        let Some(found) = value(text, declared, given) else {
            continue;
        };
        let at = |message: String| {
            SystemError::new(format!("`{}`'s `{key}`: {message}", spec.name))
                .in_file(origin)
                .at_path(format!("component[{index}].attributes.{key}"))
        };
        *attribute = match found.map_err(at)? {
            Scalar::Number(x) if x.is_finite() => Scalar::Number(x),
            other => return Err(at(format!("`{text}` is {other}, expected a number"))),
        };
    }
    Ok(component)
}

/// Checks the file's `[variables]`: no name a script reserves, and every attribute reference
/// resolving at its default.
pub(crate) fn check(file: &SystemFile, origin: &str) -> Result<(), SystemError> {
    if let Some(name) = file
        .variables
        .keys()
        .find(|n| RESERVED_NAMES.contains(&n.as_str()))
    {
        return Err(SystemError::new(format!(
            "`{name}` is a name every script has; a variable may not take it"
        ))
        .in_file(origin)
        .at_path(format!("variables.{name}")));
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
        let declared = BTreeMap::from([("bw".to_owned(), Scalar::Number(25e9))]);
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
        let declared = BTreeMap::from([("linkBandwidth".to_owned(), Scalar::Number(25e9))]);
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

    #[test]
    fn a_component_name_takes_the_text_of_its_variable() {
        let declared = BTreeMap::from([("gpu".to_owned(), Scalar::Text("H100 SXM5 80GB".to_owned()))]);
        let none = BTreeMap::new();
        assert_eq!(
            component_name("${gpu}", &declared, &none).unwrap(),
            "H100 SXM5 80GB"
        );
        let given = BTreeMap::from([("gpu".to_owned(), Variable::Text("H200 SXM 141GB".to_owned()))]);
        assert_eq!(
            component_name("${gpu}", &declared, &given).unwrap(),
            "H200 SXM 141GB"
        );
        assert_eq!(component_name("NVLink 4", &declared, &given).unwrap(), "NVLink 4");
        let e = component_name("${gpus}", &declared, &none).unwrap_err();
        assert!(e.contains("did you mean `gpu`"), "{e}");
        let numeric = BTreeMap::from([("gpu".to_owned(), Variable::Int(3))]);
        assert!(component_name("${gpu}", &declared, &numeric)
            .unwrap_err()
            .contains("expected the name"));
    }
}
