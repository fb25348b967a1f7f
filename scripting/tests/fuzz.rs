//! Fuzzing what users write (proptest): system files, as TOML and as JSON, from a grammar of
//! components, nodes, links and hostile numbers; and Rhai application scripts, from a
//! grammar of statements over the `sim` API, run through the sandbox on a small system.
//! Property: nothing panics or aborts; every input ends in a system, a run, or an error
//! message. `PROPTEST_CASES=N` sets the cases (default 64); `FUZZ_SECONDS=S` repeats them
//! with fresh seeds for S seconds. docs/RELIABILITY.md records the long runs. Failing cases
//! are saved in `tests/fuzz.proptest-regressions`.

mod common;

use std::collections::BTreeMap;

use common::small_system;
use hetsim_scripting::{check_labels, default_labels, run, Limits, RunOptions};
use hetsim_system::SystemFile;
use hetsim_tests::fuzz;
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::Value;

/// Numbers as TOML writes them: ordinary, edge and absurd.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_owned()),
        Just("1".to_owned()),
        Just("2".to_owned()),
        Just("-1".to_owned()),
        Just("4000000000".to_owned()),
        Just("18446744073709551615".to_owned()),
        Just("1e308".to_owned()),
        Just("nan".to_owned()),
        Just("inf".to_owned()),
        Just("1.5e-9".to_owned()),
        Just("\"12\"".to_owned()),
        (0u32..100).prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| format!("{x:e}")),
    ]
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_owned()),
        Just("b".to_owned()),
        Just("c".to_owned()),
        Just("".to_owned()),
        "[a-z]{1,3}",
        "\\PC{0,6}".prop_map(|s| s.replace(['"', '\\', '\n'], "")),
    ]
}

fn component_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Intel Core i7-4790K".to_owned()),
        Just("H100 SXM5 80GB".to_owned()),
        Just("GTX 970 - gajger".to_owned()),
        Just("wire".to_owned()),
        Just("cpu".to_owned()),
        Just("Gigabit Etherne".to_owned()),
        name(),
    ]
}

fn model_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("cpu-flops".to_owned()),
        Just("gpu-volkov".to_owned()),
        Just("gpu-queueing".to_owned()),
        Just("link".to_owned()),
        Just("nope".to_owned()),
        Just("".to_owned()),
    ]
}

fn kind() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("CPU"),
        Just("GPU"),
        Just("NETWORK"),
        Just("PCIe"),
        Just("cpu"),
        Just("?")
    ]
    .prop_map(String::from)
}

fn attributes() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("performance"),
        Just("bandwidth"),
        Just("startup"),
        Just("lambda"),
        Just("powerConsumptionLoad"),
        Just("powerConsumptionIdle"),
        Just("failureRate"),
        Just("smCount"),
        Just("x"),
    ];
    vec((key, number()), 0..5).prop_map(|pairs| {
        pairs
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// A system file from the grammar: `[[component]]`, `[[node]]` and `[[link]]` entries with
/// names that may clash or dangle and numbers that may be absurd.
fn system_toml() -> impl Strategy<Value = String> {
    let component = (component_name(), kind(), attributes()).prop_map(|(n, k, a)| {
        format!("[[component]]\nname = \"{n}\"\nkind = \"{k}\"\nattributes = {{ {a} }}\n")
    });
    let node = (name(), component_name(), model_name(), number(), name(), number()).prop_map(|(id, c, m, count, l, mult)| {
        format!("[[node]]\nid = \"{id}\"\ncomponent = \"{c}\"\nmodel = \"{m}\"\ncount = {count}\ninternal = \"InfiniBand NDR 400G\"\nlabels = {{ {l} = {mult} }}\n")
    });
    let link = (
        name(),
        name(),
        component_name(),
        prop_oneof![Just("link"), Just("nope")],
    )
        .prop_map(|(a, b, c, m)| {
            format!("[[link]]\nbetween = [\"{a}\", \"{b}\"]\ncomponent = \"{c}\"\nmodel = \"{m}\"\n")
        });
    (vec(component, 0..3), vec(node, 0..4), vec(link, 0..3)).prop_map(|(c, n, l)| [c, n, l].concat().concat())
}

/// Parses, resolves and, when it places at most 16 processes, runs a system; any error is
/// fine, a panic is not.
fn exercise_system(parsed: Result<SystemFile, String>) -> Result<(), TestCaseError> {
    let Ok(file) = parsed else { return Ok(()) };
    let Ok(system) = file.resolve("fuzz.toml", None) else {
        return Ok(());
    };
    let labels = default_labels(&system);
    if check_labels(&system, &labels, 16).is_ok() {
        let options = RunOptions {
            limits: fast_limits(),
            ..RunOptions::default()
        };
        let app = "sim.compute(#{ ops: 1e6 }); if pid > 0 { sim.send(100.0, 0); } else { for i in 1..labels.values().sum() { sim.receive(); } }";
        let _ = run(app, "fuzz.rhai", &system, &labels, &BTreeMap::new(), &options);
    }
    Ok(())
}

fn fast_limits() -> Limits {
    Limits {
        max_operations: 200_000,
        max_slice_seconds: 0.5,
        ..Limits::default()
    }
}

/// TOML text to the JSON object a client would send for it (the same file, the other format).
fn as_json(toml_text: &str) -> Option<Value> {
    let table: toml::Table = toml_text.parse().ok()?;
    serde_json::to_value(table).ok()
}

#[test]
fn system_files_never_panic_as_toml_or_json() {
    fuzz(
        file!(),
        prop_oneof![4 => system_toml(), 1 => "\\PC{0,200}"],
        |text| {
            exercise_system(SystemFile::parse(&text, "fuzz.toml").map_err(String::from))?;
            if let Some(object) = as_json(&text) {
                exercise_system(serde_json::from_value::<SystemFile>(object).map_err(|e| e.to_string()))?;
            }
            Ok(())
        },
    );
}

fn expression() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("0".to_owned()),
        Just("1".to_owned()),
        Just("-1".to_owned()),
        Just("1e308".to_owned()),
        Just("0.0 / 0.0".to_owned()),
        Just("pid".to_owned()),
        Just("rank".to_owned()),
        Just("tag".to_owned()),
        Just("v".to_owned()),
        Just("labels".to_owned()),
        Just("\"P\"".to_owned()),
        (0i64..1000).prop_map(|n| n.to_string()),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        (
            inner.clone(),
            prop_oneof![Just("+"), Just("-"), Just("*"), Just("/"), Just("%"), Just("**")],
            inner,
        )
            .prop_map(|(a, op, b)| format!("({a} {op} {b})"))
    })
}

/// Statements of an application script: the `sim` API with any arguments, loops, growth of
/// strings and arrays, recursion, errors thrown, and garbage.
fn statement() -> impl Strategy<Value = String> {
    let simple = prop_oneof![
        expression().prop_map(|e| format!("v = {e};")),
        expression().prop_map(|e| format!("sim.compute(#{{ ops: {e} }});")),
        expression().prop_map(|e| format!("sim.compute_seconds({e});")),
        expression().prop_map(|e| format!("sim.sleep({e});")),
        (expression(), expression()).prop_map(|(b, t)| format!("sim.send({b}, {t});")),
        Just("sim.receive();".to_owned()),
        Just("sim.receive(\"P\");".to_owned()),
        expression().prop_map(|e| format!("sim.log(`${{{e}}}`);")),
        expression().prop_map(|e| format!("sim.bcast({e});")),
        expression().prop_map(|e| format!("sim.reduce({e});")),
        (0u32..40).prop_map(|n| format!("let s = \"x\"; for i in 0..{n} {{ s += s; }}")),
        (0u32..100_000).prop_map(|n| format!("let a = []; for i in 0..{n} {{ a.push(i); }}")),
        (0u32..200).prop_map(|n| format!("fn f(n) {{ if n > 0 {{ f(n - 1) }} else {{ 0 }} }} f({n});")),
        Just("throw \"fuzz\";".to_owned()),
        Just("v = parse_int(\"x\");".to_owned()),
        Just("while true { }".to_owned()),
        "\\PC{0,12}",
    ];
    simple.prop_recursive(2, 16, 4, |inner| {
        prop_oneof![
            (0u32..20, vec(inner.clone(), 1..4))
                .prop_map(|(n, body)| format!("for i in 0..{n} {{ {} }}", body.concat())),
            (expression(), vec(inner, 1..3))
                .prop_map(|(c, body)| format!("if {c} > 0 {{ {} }}", body.concat())),
        ]
    })
}

#[test]
fn scripts_never_panic_through_the_sandbox() {
    let system = small_system();
    let labels = BTreeMap::from([("P".to_owned(), 2), ("Q".to_owned(), 1)]);
    let options = RunOptions {
        limits: fast_limits(),
        ..RunOptions::default()
    };
    fuzz(file!(), vec(statement(), 1..8), |statements| {
        let app = format!("let v = 1;\n{}", statements.join("\n"));
        match run(&app, "fuzz.rhai", &system, &labels, &BTreeMap::new(), &options) {
            Ok(report) => prop_assert!(report.results.processes.len() == 3),
            Err(message) => prop_assert!(!message.to_string().is_empty()),
        }
        Ok(())
    });
}
