//! Scripts on the machine ([`hetsim_scripting::resumable`]) against the same scripts on Rhai:
//! the same reports to the bit, the same errors at the same places.

mod common;

use std::collections::BTreeMap;

use common::{examples, labels, small_system, vars};
use hetsim_scripting::{run, runs_on_machine as check, Interpreter, Limits, RunOptions, RunReport};
use hetsim_system::{load as load_system, System, Variable};
use proptest::prelude::*;

/// A run's outcome as a user reads it: the JSON report, or the error with its place.
fn outcome(
    app: &str,
    system: &System,
    labels: &BTreeMap<String, u64>,
    variables: &BTreeMap<String, Variable>,
    limits: &Limits,
    interpreter: Interpreter,
) -> Result<String, (String, Option<usize>, Option<usize>)> {
    let options = RunOptions {
        limits: limits.clone(),
        interpreter,
        ..RunOptions::default()
    };
    run(app, "app.rhai", system, labels, variables, &options)
        .map(|report: RunReport| serde_json::to_string(&report).unwrap())
        .map_err(|e| (e.to_string(), e.line(), e.column()))
}

/// Runs `app` both ways and asserts the same outcome; `on_machine` says whether the machine
/// must take the script (else the comparison would be of Rhai with itself).
fn same_both_ways(
    app: &str,
    system: &System,
    labels: &BTreeMap<String, u64>,
    variables: &BTreeMap<String, Variable>,
    limits: &Limits,
) -> Result<String, (String, Option<usize>, Option<usize>)> {
    if let Err(why) = check(app, variables, labels) {
        panic!("the machine refuses the script: {why}\n{app}");
    }
    let machine = outcome(app, system, labels, variables, limits, Interpreter::Auto);
    let rhai = outcome(app, system, labels, variables, limits, Interpreter::Rhai);
    assert_eq!(machine, rhai, "{app}");
    machine
}

/// `message` without the `app.rhai:line:column:` that places it.
fn unplaced(message: &str) -> String {
    match message.split_once("app.rhai:") {
        Some((before, after)) => {
            let rest = after.splitn(3, ':').nth(2).unwrap_or(after);
            format!("{before}{}", rest.trim_start())
        }
        None => message.to_owned(),
    }
}

fn example(dir: &str, app: &str, system: &str) -> (String, System) {
    let app = std::fs::read_to_string(examples().join(dir).join(app)).unwrap();
    (app, load_system(&examples().join(dir).join(system)).unwrap())
}

#[test]
fn master_worker_is_the_same_on_the_machine() {
    let (app, system) = example("master-worker", "app.rhai", "system.toml");
    for extra in [vec![], vec![("rounds", "3"), ("taskOps", "5")]] {
        let labels = labels(&[("Master", 1), ("Worker", 4)]);
        let report = same_both_ways(&app, &system, &labels, &vars(&extra), &Limits::default()).unwrap();
        assert!(report.contains("rounds done at"), "{report}");
    }
}

#[test]
fn ping_pong_is_the_same_on_the_machine() {
    let app = std::fs::read_to_string(examples().join("../bench/pingpong/app.rhai")).unwrap();
    let system = load_system(&examples().join("../bench/pingpong/system.toml")).unwrap();
    let labels = labels(&[("Ping", 1), ("Pong", 1)]);
    let report = same_both_ways(
        &app,
        &system,
        &labels,
        &vars(&[("roundTrips", "100")]),
        &Limits::default(),
    );
    assert!(report.unwrap().contains("\"events\""));
}

#[test]
fn collectives_are_the_same_on_the_machine() {
    let app = r#"
        for i in 0..2 {
            let t = sim.allreduce(1048576.0 * (i + 1));
            sim.log(`all-reduce ${t}`);
            sim.barrier();
            sim.allgather(65536, #{ algorithm: "ring" });
            sim.broadcast(1e6, #{ root: 1, algorithm: "binomial" });
            sim.reducescatter(4e6);
            sim.barrier(#{ label: "GPU" });
        }
    "#;
    let board = load_system(&examples().join("clusters/hgx-h100.toml")).unwrap();
    let report = same_both_ways(
        app,
        &board,
        &labels(&[("GPU", 8)]),
        &BTreeMap::new(),
        &Limits::default(),
    );
    assert!(report.unwrap().contains("all-reduce"));
    let cluster = load_system(&examples().join("clusters/h100-ib.toml")).unwrap();
    let big = "let t = sim.allreduce(1073741824.0); sim.alltoall(1e8);";
    same_both_ways(
        big,
        &cluster,
        &labels(&[("GPU", 16)]),
        &vars(&[("boards", "2")]),
        &Limits::default(),
    )
    .unwrap();
}

#[test]
fn scripts_beyond_the_machine_run_on_rhai() {
    let none = BTreeMap::new();
    let two = labels(&[("P", 1), ("Q", 1)]);
    for (app, why) in [
        ("let x = \"a\" + rank;", "the function `+`"),
        ("let x = rank; x = 2.5;", "an assignment"),
        ("tag = \"P\";", "an assignment"),
        ("fn f() { 1 } f();", "defines functions"),
        ("let h = sim.isend(8.0, \"Q\");", "`sim.isend`"),
        (
            "let n = labels[\"GPU\"]; for i in 0..n {}",
            "a range whose ends are not integers",
        ),
        ("for i in 0..2.5 {}", "a range whose ends are not integers"),
        ("let m = sim.receive(\"P\"); sim.log(m.size);", "property `size`"),
        (
            "if is_def_var(\"x\") || x > 1 { sim.log(1); }",
            "an unknown variable `x`",
        ),
    ] {
        let refused = check(app, &none, &two).unwrap_err();
        assert!(refused.contains(why), "{app}: {refused}");
        // And the run on Rhai is the run of old: the same as forcing Rhai.
        let system = small_system();
        let auto = outcome(app, &system, &two, &none, &Limits::default(), Interpreter::Auto);
        let rhai = outcome(app, &system, &two, &none, &Limits::default(), Interpreter::Rhai);
        assert_eq!(auto, rhai, "{app}");
    }
}

#[test]
fn errors_are_rhais_at_rhais_places() {
    let system = small_system();
    let labels = labels(&[("P", 2), ("Q", 1)]);
    // Each limit alone: the models' own scripts need strings of up to about a hundred bytes
    // and maps of a few entries.
    let strings = Limits {
        max_string_size: 150,
        ..Limits::default()
    };
    let arrays = Limits {
        max_array_size: 2,
        ..Limits::default()
    };
    let maps = Limits {
        max_map_size: 8,
        ..Limits::default()
    };
    let long = "x".repeat(100);
    let (interpolated, texts, concatenated) = (
        format!("let t = `{long}${{rank}}{long}`;"),
        format!("let a = [\"{long}\", tag, \"{long}\"];"),
        format!("let c = tag + \"{long}\" + \"{long}\";"),
    );
    for (app, limits) in [
        ("sim.send(10, \"P\");", Limits::default()),
        ("sim.send(-1, \"Q\");", Limits::default()),
        ("sim.send(10, [\"Q\", 5]);", Limits::default()),
        ("sim.send(10, \"Q\", \"sideways\");", Limits::default()),
        (
            "sim.send(10, \"Q\", #{ hostMemroy: \"pinned\" });",
            Limits::default(),
        ),
        ("sim.send(10, \"Q\", \"HostToHost\", 4);", Limits::default()),
        ("sim.receive(\"nobody\");", Limits::default()),
        ("sim.compute(-2.0);", Limits::default()),
        ("sim.compute(#{ opz: 1e9 });", Limits::default()),
        ("sim.sleep(\"long\");", Limits::default()),
        (interpolated.as_str(), strings.clone()),
        ("let a = [rank, rank, rank];", arrays),
        (
            "let m = #{ a: rank, b: pid, c: 1, d: 2, e: 3, f: 4, g: 5, h: 6, i: 7 };",
            maps,
        ),
        (texts.as_str(), strings.clone()),
        (concatenated.as_str(), strings),
        ("let x = 9223372036854775807; x += rank + 1;", Limits::default()),
        ("let y = 10 / (rank - rank);", Limits::default()),
        ("let z = -(-9223372036854775807 - 1 + rank);", Limits::default()),
        ("let f = 2 ** (rank - 1);", Limits::default()),
        ("sim.allreduce(-1.0);", Limits::default()),
        ("sim.allreduce(\"big\");", Limits::default()),
        ("sim.allreduce(8.0, #{ lable: \"P\" });", Limits::default()),
        ("sim.barrier(#{ root: 99 });", Limits::default()),
        ("sim.gather(8.0, #{ label: \"Q\" });", Limits::default()),
        (
            "let n = 0; while true { if n == -1 { break; } }",
            Limits {
                max_operations: 5000,
                ..Limits::default()
            },
        ),
    ] {
        let machine = outcome(
            app,
            &system,
            &labels,
            &BTreeMap::new(),
            &limits,
            Interpreter::Auto,
        );
        let rhai = outcome(
            app,
            &system,
            &labels,
            &BTreeMap::new(),
            &limits,
            Interpreter::Rhai,
        );
        let (message, line, _) = machine.clone().expect_err(app);
        if app.starts_with("let n = 0; while") {
            // Operations are counted differently: the same error on the same line, placed
            // at the loop rather than at the operation that passed the limit.
            let (rhai_message, rhai_line, _) = rhai.expect_err(app);
            assert_eq!(line, rhai_line, "{app}");
            assert_eq!(unplaced(&message), unplaced(&rhai_message), "{app}");
            assert!(message.contains("max_operations"), "{message}");
            continue;
        }
        assert_eq!(machine, rhai, "{app}");
        assert_eq!(line, Some(1), "{app}: {message}");
        assert!(check(app, &BTreeMap::new(), &labels).is_ok(), "{app}");
    }
}

/// A script of the machine's statements for processes `P` (2) and `Q` (2): sends, receives,
/// computes, sleeps, logs, under `if`s and `for`s on the process's rank and tag.
fn statement(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        (0u32..4, 0u32..3000).prop_map(|(rank, bytes)| format!("sim.send({bytes}, [\"Q\", {}]);", rank % 2)),
        (0u32..4).prop_map(|pid| format!("sim.send(100.0, {pid});")),
        Just("sim.receive(\"any\");".to_owned()),
        Just("sim.receive([\"P\", 0]);".to_owned()),
        (0u32..5).prop_map(|ms| format!("sim.compute({ms}e-3);")),
        (0u32..5).prop_map(|ms| format!("sim.sleep({ms});")),
        Just("sim.compute(#{ ops: 1e6 });".to_owned()),
        Just("sim.log(`${tag}[${rank}] at ${sim.now()}: ${rank > 0 && tag != \"Q\"}`);".to_owned()),
        Just("let t = sim.now(); sim.log(t);".to_owned()),
        Just(
            "let acc = rank * 3 - pid; acc += 2; acc *= 3; acc %= 7; sim.compute(acc * 1e-3 + 0.5);"
                .to_owned()
        ),
        Just("let w = 2 ** rank + (pid + 1) / 2 - -rank; let f = 1.5 * w; f /= 4; sim.sleep(f);".to_owned()),
        Just("if sim.now() >= 0.001 * (rank + 1) { sim.log(`late ${sim.now() - 0.001}`); }".to_owned()),
        Just("if sim.now() == 0.0 || 1e-18 != 0 { sim.log(\"start\" + tag); }".to_owned()),
        Just("let m = sim.receive(\"any\"); sim.log(`${m.from_label}[${m.from_rank}] ${m.bytes} B in ${m.arrived - m.sent}`); if m.from == pid - 1 && m.bytes >= 100 { sim.send(m.bytes, m.from); }".to_owned()),
        Just("sim.barrier(#{ label: \"all\" });".to_owned()),
        (1u32..5).prop_map(|k| format!("sim.allreduce({k}e3, #{{ label: tag }});")),
        Just("if rank == 1 { break; }".to_owned()),
        Just("if rank == 0 { continue; }".to_owned()),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let block = prop::collection::vec(statement(depth - 1), 1..4).prop_map(|s| s.join(" "));
    prop_oneof![
        3 => leaf,
        1 => (block.clone(), block.clone(), 0usize..3).prop_map(|(a, b, c)| {
            let condition = ["tag == \"P\"", "rank < 1", "!(pid >= 2) || is_def_var(\"x\")"][c];
            format!("if {condition} {{ {a} }} else {{ {b} }}")
        }),
        1 => (block.clone(), 0i64..3, 0i64..4).prop_map(|(body, a, b)| format!("for i in {a}..{b} {{ {body} }}")),
        1 => (block.clone(), 0i64..3).prop_map(|(body, n)| {
            format!("let n = 0; while n < {n} {{ n += 1; {body} }}")
        }),
        1 => (block, 0i64..3).prop_map(|(body, n)| {
            format!("let k = 0; for j in 0..={n} {{ let k = j; if k == {n} {{ {body} }} }}")
        }),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Random scripts of the machine's statements (many of them deadlock or fail) end the same
    /// on the machine and on Rhai: the same report, or the same error at the same place.
    #[test]
    fn random_scripts_end_the_same_both_ways(body in prop::collection::vec(statement(2), 1..6)) {
        let app = format!("for round in 0..2 {{\n{}\n}}", body.join("\n"));
        let system = small_system();
        let labels = labels(&[("P", 2), ("Q", 2)]);
        same_both_ways(&app, &system, &labels, &BTreeMap::new(), &Limits::default()).ok();
    }
}
