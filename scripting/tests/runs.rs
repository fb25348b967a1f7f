//! Runs of Rhai applications on system models: the thesis scenario, each primitive, errors
//! and sandbox limits.

mod common;

use std::collections::BTreeMap;

use common::{labels, small_system, thesis, vars};
use hetsim_models::catalog;
use hetsim_models::transfer;
use hetsim_models::volkov;
use hetsim_scripting::{run, CancelFlag, Limits, RunOptions, RunReport, CANCELLED};
use hetsim_system::{load as load_system, SystemFile, Variable};

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

#[test]
fn thesis_scenario_equals_two_copies_in_a_kernel_and_one_copy_out() {
    let report = thesis("gtx970.toml");
    let r = &report.results;
    // Kernel: the volkov model with the GTX 970's attributes (Table 6.1) and Figure 5.23's
    // kernel parameters.
    let kernel = volkov::evaluate(&volkov::Input::gajger_saxpy2_gtx970(128.0)).seconds;
    let gpu = r.processes.iter().find(|p| &*p.label == "GPU").unwrap();
    assert!(rel(gpu.compute_time, kernel) < 1e-6);
    assert!((kernel * 1e3 - 146.65).abs() < 0.005);
    // Transfers: eq. 5.5 with Table 6.2's PCIe 3.0 parameters, 4 bytes × 4e8 each.
    let link = catalog::find("PCIe 3.0 16x - gajger").unwrap();
    let a = |k: &str| link.attributes[k].as_number().unwrap();
    let n = 1.6e9;
    let htd = transfer::seconds(n, a("bandwidth"), a("startupHtD"), a("lambdaHtD"));
    let dth = transfer::seconds(n, a("bandwidth"), a("startupDtH"), a("lambdaDtH"));
    let expected = 2.0 * htd + kernel + dth;
    assert!(
        rel(r.overall_time, expected) < 1e-6,
        "{} vs {expected}",
        r.overall_time
    );
    assert!((r.overall_time * 1e3 - 595.70).abs() < 0.005);
    // Energy: the GPU's 168 W load over the kernel; no idle power is given in the thesis.
    assert!(rel(r.nodes[1].energy, 168.0 * kernel) < 1e-6);
}

#[test]
fn the_titan_x_testbed_uses_its_own_gpu_and_bus() {
    let r = thesis("titanx.toml").results;
    // 24 SMs at 1076 MHz against 13 at 1253: the kernel is 1.69× faster; PCIe 2.0 x4 is slower.
    let gpu = &r.processes[1];
    assert!(rel(gpu.compute_time, 0.14665 * 13.0 * 1253.0 / (24.0 * 1076.0)) < 1e-3);
    let dth = 7.3276e-6 + 1.6e9 / (2e9 * 0.8435);
    assert!(r.overall_time > 2.0 * dth);
}

#[test]
fn identical_inputs_give_byte_identical_json() {
    let a = serde_json::to_string(&thesis("gtx970.toml")).unwrap();
    let b = serde_json::to_string(&thesis("gtx970.toml")).unwrap();
    assert_eq!(a, b);
}

fn run_small(app: &str, l: &[(&str, u64)], limits: Limits) -> Result<RunReport, String> {
    let options = RunOptions {
        limits,
        ..RunOptions::default()
    };
    run(
        app,
        "test.rhai",
        &small_system(),
        &labels(l),
        &BTreeMap::new(),
        &options,
    )
    .map_err(String::from)
}

#[test]
fn primitives_take_the_times_of_their_models() {
    let app = r#"
        if tag == "P" {
            let t = sim.compute(#{ ops: 2e9 });        // 2 s at 1 GFLOP/s
            sim.sleep(0.5);
            sim.send(1000, "Q");                        // 1 ms + 1 ms, costs the sender nothing
            sim.log(`sent at ${sim.now()}`);
        } else {
            let m = sim.receive("P");
            sim.log(`got ${m.bytes} bytes from ${m.from_label}[${m.from_rank}] at ${m.arrived}`);
        }
    "#;
    let r = run_small(app, &[("P", 1), ("Q", 1)], Limits::default()).unwrap();
    assert_eq!(r.results.processes[0].finish_time, 2.5);
    assert!((r.results.processes[1].finish_time - 2.502).abs() < 1e-12);
    assert_eq!(r.log[0], "[2.500000000 s] P[0]: sent at 2.5");
    assert!(
        r.log[1].ends_with("got 1000.0 bytes from P[0] at 2.502"),
        "{}",
        r.log[1]
    );
}

#[test]
fn a_process_running_ahead_meets_the_others_at_its_own_time() {
    // P's compute and Q's sleep do not suspend them (their clocks run ahead of the engine's);
    // what they do next still happens at their own clocks. On the wire a message takes
    // 1 ms startup + 1 ms per 1000 B.
    let app = r#"
        if tag == "P" {
            let h = sim.isend(1000, "Q");   // leaves at 0, arrives at 0.002
            sim.compute(2.0);
            let done = sim.test(h);         // at 2: done
            let m = sim.receive("Q");       // sent by Q at 1, arrived at 1.002
            sim.log(`${sim.now()} ${done} ${m.arrived}`);
            sim.send(1000, "Q");            // leaves at 2, arrives at 2.002
        } else {
            sim.sleep(1.0);
            sim.send(1000, "P");
            let first = sim.receive("P");
            let second = sim.receive("P");
            sim.log(`${sim.now()} ${first.arrived} ${second.arrived}`);
        }
    "#;
    let r = run_small(app, &[("P", 1), ("Q", 1)], Limits::default()).unwrap();
    let numbers = |line: &str| -> Vec<String> {
        line.split(": ")
            .nth(1)
            .unwrap()
            .split(' ')
            .map(str::to_owned)
            .collect()
    };
    let p = numbers(&r.log[0]);
    assert_eq!(p[1], "true", "{}", r.log[0]);
    let close = |text: &str, want: f64| (text.parse::<f64>().unwrap() - want).abs() < 1e-12;
    assert!(close(&p[0], 2.0) && close(&p[2], 1.002), "{}", r.log[0]);
    let q = numbers(&r.log[1]);
    assert!(
        close(&q[0], 2.002) && close(&q[1], 0.002) && close(&q[2], 2.002),
        "{}",
        r.log[1]
    );
    let (p, q) = (&r.results.processes[0], &r.results.processes[1]);
    assert_eq!((p.finish_time, p.compute_time, p.wait_time), (2.0, 2.0, 0.0));
    assert!((q.finish_time - 2.002).abs() < 1e-12 && (q.wait_time - 1.002).abs() < 1e-12);
}

#[test]
fn nonblocking_sends_and_receives_overlap_with_computation() {
    // Two 1000-byte isends from P to Q on one channel: 1 ms startups, then 1 ms of bytes
    // each, shared: both arrive at 3 ms. P computes 1 ms meanwhile; its test then says not
    // yet; its wait_all returns at 3 ms. Q's posted receives get the messages in order.
    let app = r#"
        if tag == "P" {
            let a = sim.isend(1000, "Q");
            let b = sim.isend(1000, "Q", #{ hostMemory: "pinned" });
            sim.compute(#{ ops: 1e6 });
            let early = sim.test(a);
            sim.wait_all([a, b]);
            sim.log(`${early} ${sim.now()} ${sim.test(b)}`);
        } else {
            let a = sim.irecv("P");
            let b = sim.irecv("any");
            let got = sim.wait_all([a, b]);
            let again = sim.wait(a);
            sim.log(`${got[0].bytes} ${got[1].arrived} ${type_of(again)}`);
        }
    "#;
    let r = run_small(app, &[("P", 1), ("Q", 1)], Limits::default()).unwrap();
    assert_eq!(r.log[0], "[0.003000000 s] P[0]: false 0.003 true");
    assert_eq!(r.log[1], "[0.003000000 s] Q[0]: 1000.0 0.003 ()");
    let err = run_small("sim.wait_all([1]);", &[("P", 1)], Limits::default()).unwrap_err();
    assert!(
        err.contains("sim.wait_all: element 0: expected a handle"),
        "{err}"
    );
}

#[test]
fn collectives_move_data_by_the_chosen_algorithm() {
    // P's four processes share node a: their broadcast is instant, and the barrier over all
    // six processes is zero-byte messages, instant too.
    let app = r#"
        let t = if tag == "P" { sim.broadcast(1000, #{ label: "P", algorithm: algo }) } else { 0.0 };
        sim.barrier(#{ label: "all" });
        sim.log(t);
    "#;
    for (algo, expected_root_time) in [("flat", 0.0), ("binomial", 0.0)] {
        let options = RunOptions::default();
        let variables: BTreeMap<String, Variable> = vars(&[("algo", algo)]);
        let r = run(
            app,
            "c.rhai",
            &small_system(),
            &labels(&[("P", 4), ("Q", 2)]),
            &variables,
            &options,
        )
        .unwrap();
        assert_eq!(r.results.overall_time, expected_root_time, "{algo}");
        assert_eq!(r.log.len(), 6);
    }
    // Across the link (1 ms + 1000 × 1 µs per message), rooted at P[0] on node a.
    let across = r#"
        sim.broadcast(1000, #{ label: "all", root: 0, algorithm: algo });
    "#;
    let time = |algo: &str| {
        run(
            across,
            "x.rhai",
            &small_system(),
            &labels(&[("P", 1), ("Q", 4)]),
            &vars(&[("algo", algo)]),
            &RunOptions::default(),
        )
        .unwrap()
        .results
        .overall_time
    };
    // Flat: the root on a sends 4 messages at once over one channel: 1 ms startups, then
    // their 4 × 1 ms of bytes share it: all arrive at 5 ms.
    assert!((time("flat") - 5e-3).abs() < 1e-12);
    // Binomial over 5 members: the root sends to relative 4 and 2 and 1 (3 crossings
    // sharing the channel: 1 + 3 = 4 ms); the rest move within node b instantly.
    assert!((time("binomial") - 4e-3).abs() < 1e-12);
}

#[test]
fn script_errors_name_file_line_and_column() {
    let err = run_small("let x = 1;\nlet y = x +;\n", &[("P", 1)], Limits::default()).unwrap_err();
    assert!(err.starts_with("test.rhai:2:"), "{err}");
    let err = run_small(
        "let x = 1;\n  sim.send(1, \"Q\");\n",
        &[("P", 1), ("Q", 2)],
        Limits::default(),
    )
    .unwrap_err();
    assert!(
        err.contains("test.rhai:2:") && err.contains("label `Q` has 2 processes"),
        "{err}"
    );
    // The place is the error's too, not only its text.
    let err = run(
        "let x = 1;\n  sim.send(1, \"Q\");\n",
        "test.rhai",
        &small_system(),
        &labels(&[("P", 1), ("Q", 2)]),
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .unwrap_err();
    assert_eq!((err.origin(), err.line()), (Some("test.rhai"), Some(2)), "{err}");
    let err = run_small("sim.compute(#{ opz: 1 });", &[("P", 1)], Limits::default()).unwrap_err();
    assert!(
        err.contains("cpu-flops.rhai") && err.contains("test.rhai:1:"),
        "{err}"
    );
}

#[test]
fn an_operator_without_a_function_says_which_operand_is_wrong() {
    let cases = [
        ("let n = 8 / labels[\"Ps\"];", "a label the system does not have"),
        (
            "let steps = 2.5;\nfor i in 0..steps { }",
            "a range's ends must be integers",
        ),
        ("let bytes = \"400\";\nlet t = bytes * 2;", "give a number"),
    ];
    for (app, why) in cases {
        let err = run_small(app, &[("P", 1)], Limits::default()).unwrap_err();
        assert!(
            err.contains("Function not found") && err.contains(why),
            "{app}: {err}"
        );
    }
}

#[test]
fn deadlock_and_capacity_fail_the_run_clearly() {
    let err = run_small("sim.receive(\"any\");", &[("P", 1)], Limits::default()).unwrap_err();
    assert!(
        err.contains("deadlock") && err.contains("P[0] on node `a`) waits in receive for any process"),
        "{err}"
    );
    let err = run_small("", &[("P", 5)], Limits::default()).unwrap_err();
    assert!(
        err.contains("label `P`: 5 processes asked") && err.contains("at most 4"),
        "{err}"
    );
    let err = run_small("", &[("R", 1)], Limits::default()).unwrap_err();
    assert!(err.contains("label `R` is carried by no node"), "{err}");
}

#[test]
fn sandbox_stops_infinite_loops_in_about_a_second() {
    let started = std::time::Instant::now();
    let limits = Limits {
        max_slice_seconds: 0.2,
        ..Limits::default()
    };
    let err = run_small("loop { }", &[("P", 1)], limits).unwrap_err();
    assert!(err.contains("max_slice_seconds"), "{err}");
    assert!(started.elapsed().as_secs_f64() < 5.0);
}

/// Runs `app` on `processes` processes of the small system and cancels it from another
/// thread after 100 ms; returns the run's error.
fn cancelled_run(app: &str, processes: u64) -> String {
    let cancel = CancelFlag::default();
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            cancel.cancel();
        })
    };
    let options = RunOptions {
        cancel,
        // No slice limit in the way: only the flag can stop these scripts.
        limits: Limits {
            max_slice_seconds: 3600.0,
            ..Limits::default()
        },
        ..RunOptions::default()
    };
    let err = run(
        app,
        "test.rhai",
        &small_system(),
        &labels(&[("P", processes)]),
        &BTreeMap::new(),
        &options,
    )
    .unwrap_err();
    canceller.join().unwrap();
    err.to_string()
}

#[test]
fn a_cancel_flag_stops_a_script_that_never_yields() {
    let err = cancelled_run("loop { }", 1);
    assert!(err.contains(CANCELLED), "{err}");
}

#[test]
fn a_cancel_flag_stops_a_run_of_many_short_sim_calls() {
    let err = cancelled_run("loop { sim.sleep(1.0); }", 2);
    assert!(err.contains(CANCELLED), "{err}");
}

#[test]
fn the_log_keeps_at_most_its_bytes_and_counts_the_rest() {
    // 100 lines of 64 KiB: a 1 MiB log keeps 16 of them and counts 84 dropped.
    let app =
        "let line = \"x\"; while line.len() < 65536 { line += line; } for i in 0..100 { sim.log(line); }";
    let r = run_small(app, &[("P", 1)], Limits::default()).unwrap();
    let bytes: usize = r.log.iter().map(String::len).sum();
    assert!(bytes <= Limits::default().max_log_bytes, "{bytes}");
    assert_eq!(
        (r.log.len(), r.log_dropped),
        (15, 85),
        "each kept line has its prefix too"
    );
}

#[test]
fn a_run_refuses_more_processes_than_its_limit_before_placing_them() {
    let limits = Limits {
        max_processes: 3,
        ..Limits::default()
    };
    let err = run_small("1", &[("P", 2), ("Q", 2)], limits).unwrap_err();
    assert!(
        err.contains("more than 3 processes") && err.contains("max_processes"),
        "{err}"
    );
    let err = run_small("1", &[("P", u64::MAX), ("Q", 2)], Limits::default()).unwrap_err();
    assert!(err.contains("max_processes"), "the sum overflows u64: {err}");
}

#[test]
fn sandbox_bounds_operations_sizes_depth_and_forbids_eval() {
    let limits = Limits {
        max_operations: 10_000,
        ..Limits::default()
    };
    let err = run_small("let i = 0; while i < 1000000 { i += 1; }", &[("P", 1)], limits).unwrap_err();
    assert!(err.contains("limit max_operations"), "{err}");
    let limits = Limits {
        max_string_size: 100,
        ..Limits::default()
    };
    let err = run_small("let s = \"x\"; loop { s += s; }", &[("P", 1)], limits).unwrap_err();
    assert!(
        err.to_lowercase().contains("length of string") && err.contains("limit max_string_size"),
        "{err}"
    );
    let limits = Limits {
        max_array_size: 100,
        ..Limits::default()
    };
    let err = run_small("let a = []; loop { a.push(1); }", &[("P", 1)], limits).unwrap_err();
    assert!(err.contains("limit max_array_size"), "{err}");
    let err = run_small("fn f(n) { f(n + 1) } f(0);", &[("P", 1)], Limits::default()).unwrap_err();
    assert!(
        err.contains("test.rhai:1:") && err.contains("limit max_call_levels"),
        "{err}"
    );
    let err = run_small("eval(\"1\");", &[("P", 1)], Limits::default()).unwrap_err();
    assert_eq!(
        err,
        "test.rhai:1:1: syntax error: reserved keyword 'eval' is disabled"
    );
    let err = run_small("import \"x\" as y;", &[("P", 1)], Limits::default()).unwrap_err();
    assert!(err.contains("test.rhai:1:"), "{err}");
}

/// A script whose statement on line 2 lacks its `;`, followed by blank lines, comments and a
/// string holding `//`: Rhai finds the gap at the next statement, line 7.
const MISSING_SEMICOLON_ON_LINE_2: &str =
    "let a = \"x // y\";\nlet b = 2\n\n// a comment\n/* a block\n   comment */\nlet c = 3;\n";

#[test]
fn a_syntax_error_names_the_line_the_user_wrote() {
    let expected = "test.rhai:2:10: syntax error: Expecting ';' to terminate this statement";
    let err = run_small(MISSING_SEMICOLON_ON_LINE_2, &[("P", 1)], Limits::default()).unwrap_err();
    assert_eq!(err, expected);
    let checked = hetsim_scripting::check_app(MISSING_SEMICOLON_ON_LINE_2, "test.rhai").unwrap_err();
    assert_eq!(checked.to_string(), expected);
    // The place is the error's too, not only its text.
    assert_eq!(
        (checked.origin(), checked.line(), checked.column()),
        (Some("test.rhai"), Some(2), Some(10))
    );
    // Errors found where they are keep their place.
    let err = hetsim_scripting::check_app("let a = 1;\nlet b = (2;\n", "test.rhai")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("test.rhai:2:11: syntax error: Expecting ')'"),
        "{err}"
    );
}

#[test]
fn a_syntax_error_in_a_model_file_names_its_line() {
    let dir = std::env::temp_dir().join(format!("hetsim-model-syntax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = "fn compute_time(params) {\n    let t = params.ops / performance\n\n    t\n}\n";
    std::fs::write(dir.join("slow.rhai"), model).unwrap();
    let system = r#"
        [[component]]
        name = "cpu"
        kind = "CPU"
        attributes = { performance = 1e9 }
        [[node]]
        id = "a"
        component = "cpu"
        model = "slow.rhai"
        labels = { P = 1 }
        "#;
    std::fs::write(dir.join("system.toml"), system).unwrap();
    let system = load_system(&dir.join("system.toml")).unwrap();
    let err = run(
        "sim.compute(#{ ops: 1 });",
        "app.rhai",
        &system,
        &labels(&[("P", 1)]),
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .unwrap_err()
    .to_string();
    let file = dir.join("slow.rhai").display().to_string();
    assert_eq!(
        err,
        format!("{file}:2:37: syntax error: Expecting ';' to terminate this statement")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn memoized_models_keep_components_apart_and_model_files_load() {
    let dir = std::env::temp_dir().join(format!("hetsim-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A user's copy of cpu-flops that adds a fixed launch overhead.
    std::fs::write(
        dir.join("slow-flops.rhai"),
        "fn compute_time(params) { 1.0 + params.ops / performance }",
    )
    .unwrap();
    let system = SystemFile::parse(
        r#"{
          "component": [
            {"name": "fast", "kind": "CPU", "attributes": {"performance": 2e9}},
            {"name": "slow", "kind": "CPU", "attributes": {"performance": 1e9}}
          ],
          "node": [
            {"id": "f", "component": "fast", "model": "cpu-flops", "labels": {"P": 1}},
            {"id": "s", "component": "slow", "model": "cpu-flops", "labels": {"P": 1}},
            {"id": "u", "component": "slow", "model": "slow-flops.rhai", "labels": {"P": 1}}
          ]
        }"#,
        "sys.json",
    )
    .unwrap()
    .resolve("sys.json", Some(&dir))
    .unwrap();
    let r = run(
        "sim.compute(#{ ops: 2e9 });",
        "a.rhai",
        &system,
        &labels(&[("P", 3)]),
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .unwrap();
    let times: Vec<f64> = r.results.processes.iter().map(|p| p.compute_time).collect();
    assert_eq!(times, [1.0, 2.0, 3.0]);
}

#[test]
fn inlined_systems_are_self_contained_and_refuse_files_without_a_base() {
    let file = SystemFile::parse(
        "[[node]]\nid = \"h\"\ncomponent = \"mine\"\nmodel = \"mine-model\"\nlabels = { P = 1 }\n",
        "s.toml",
    )
    .unwrap();
    let component = |name: &str| {
        (name == "mine").then(|| hetsim_models::catalog::Component {
            name: "mine".into(),
            vendor: String::new(),
            kind: hetsim_models::catalog::ComponentKind::Cpu,
            comment: String::new(),
            source: "test".into(),
            attributes: [("performance".to_owned(), hetsim_models::Scalar::Number(4.0))].into(),
        })
    };
    let model =
        |name: &str| (name == "mine-model").then(|| "fn compute_time(p) { p.ops / performance }".to_owned());
    let inlined = file.inline(component, model);
    // Through JSON and back, as a server stores it: nothing outside is needed any more.
    let json = serde_json::to_string(&inlined).unwrap();
    let system = SystemFile::parse(&json, "stored")
        .unwrap()
        .resolve("stored", None)
        .unwrap();
    let r = run(
        "sim.compute(#{ ops: 8 });",
        "a.rhai",
        &system,
        &labels(&[("P", 1)]),
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .unwrap();
    assert_eq!(r.results.overall_time, 2.0);
    let err = SystemFile::parse(
        "[[node]]\nid = \"h\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"../secret.rhai\"\n",
        "s",
    )
    .unwrap()
    .resolve("s", None)
    .unwrap_err()
    .to_string();
    assert!(err.contains("unknown model `../secret.rhai`"), "{err}");
}

#[test]
fn variables_keep_their_types_through_json() {
    let read = |text: &str| serde_json::from_str::<Variable>(text);
    assert_eq!(read("3").unwrap(), Variable::Int(3));
    assert_eq!(read("3.0").unwrap(), Variable::Float(3.0));
    assert_eq!(read("1e9").unwrap(), Variable::Float(1e9));
    assert_eq!(read("true").unwrap(), Variable::Bool(true));
    assert_eq!(read("\"x\"").unwrap(), Variable::Text("x".into()));
    for not_scalar in ["[1]", "{}", "null"] {
        assert!(read(not_scalar).is_err(), "{not_scalar}");
    }
    let stored = serde_json::to_string(&vars(&[("a", "3"), ("b", "2.0"), ("c", "yes")])).unwrap();
    assert_eq!(
        serde_json::from_str::<BTreeMap<String, Variable>>(&stored).unwrap(),
        vars(&[("a", "3"), ("b", "2.0"), ("c", "yes")])
    );
}
