//! What the scripting crate's test files share. Each test file uses a part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;

use std::path::Path;

use hetsim_scripting::{run, RunOptions, RunReport};
use hetsim_system::{load as load_system, System, SystemFile, Variable};

/// Run variables from `name=value` pairs, typed as the CLI's `--var` types them.
pub fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, Variable> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Variable::infer(v)))
        .collect()
}

/// Process counts by label.
pub fn labels(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// A system model from TOML text, resolved against the built-in catalog and models; `name`
/// names it in messages.
pub fn system_from(toml: &str, name: &str) -> System {
    SystemFile::parse(toml, name)
        .unwrap()
        .resolve(name, None)
        .unwrap()
}

/// Two CPU nodes (labels `P` and `Q`, 4 each) joined by a link of 1 ms + 1 µs per byte.
pub fn small_system() -> System {
    system_from(
        r#"
        [[component]]
        name = "cpu"
        kind = "CPU"
        attributes = { performance = 1e9, powerConsumptionLoad = 100, powerConsumptionIdle = 10 }
        [[component]]
        name = "wire"
        kind = "NETWORK"
        attributes = { bandwidth = 1e6, startup = 1e-3, lambda = 1 }
        [[node]]
        id = "a"
        component = "cpu"
        model = "cpu-flops"
        labels = { P = 4 }
        [[node]]
        id = "b"
        component = "cpu"
        model = "cpu-flops"
        labels = { Q = 4 }
        [[link]]
        between = ["a", "b"]
        component = "wire"
        "#,
        "small.toml",
    )
}

/// The repository's examples folder.
pub fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

/// The thesis scenario (seed 004, Figure 5.23) on `system`, a file of examples/gajger.
pub fn thesis(system: &str) -> RunReport {
    thesis_with(system, &[], &RunOptions::default())
}

/// The thesis scenario on `system` with `extra` variables besides its own, under `options`.
pub fn thesis_with(system: &str, extra: &[(&str, &str)], options: &RunOptions) -> RunReport {
    let app = std::fs::read_to_string(examples().join("gajger/app.rhai")).unwrap();
    let system = load_system(&examples().join("gajger").join(system)).unwrap();
    let mut variables = vars(&[
        ("occupancy", "64"),
        ("computeIntensity", "128"),
        ("blockSize", "256"),
        ("numElements", "400000000"),
    ]);
    variables.extend(vars(extra));
    run(
        &app,
        "app.rhai",
        &system,
        &labels(&[("CPU", 1), ("GPU", 1)]),
        &variables,
        options,
    )
    .unwrap()
}
