//! The `hetsim` binary as a user runs it: commands, outputs and error messages.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::fixture::THESIS;
use common::oneshot::*;

#[test]
fn help_lists_the_commands() {
    let out = hetsim(&["--help"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    for command in ["model", "components", "calibrate"] {
        assert!(text.contains(command), "--help lacks {command}:\n{text}");
    }
    // Rustdoc's link syntax in a doc comment reaches clap's help as it is: none may be left.
    for command in ["run", "submit", "sweep", "serve", "worker", "validate", "results"] {
        let out = hetsim(&[command, "--help"], None);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            !help.contains("[`"),
            "{command} --help has doc-link syntax:\n{help}"
        );
    }
}

#[test]
fn volkov_example_gives_the_thesis_kernel_time() {
    let o = ok_json(&[
        "model",
        "volkov",
        "--params",
        "examples/models/volkov-gtx970.json",
        "--json",
    ]);
    assert!((o["seconds"].as_f64().unwrap() * 1e3 - 146.65).abs() < 0.01);
    assert_eq!(o["limiter"], "issue");
}

#[test]
fn every_example_parameter_file_evaluates() {
    for (model, file) in [
        ("gmem-throughput", "gmem-throughput-gtx970"),
        ("transfer", "transfer-pcie3-htd"),
        ("hong-kim", "hong-kim-table2"),
        ("wang-lou", "wang-lou-table2"),
        ("transit", "transit-memory-bound"),
        ("occupancy", "occupancy-figure-4-2"),
    ] {
        let out = hetsim(
            &[
                "model",
                model,
                "--params",
                &format!("examples/models/{file}.json"),
            ],
            None,
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("result: "),
            "{model}: {text}"
        );
    }
}

#[test]
fn parameters_from_stdin_and_table_output() {
    let out = hetsim(
        &["model", "transfer", "--params", "-"],
        Some(r#"{"size": 8e9, "bandwidth": 4e9, "startup": 1}"#),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("seconds") && text.contains("result: transfer time 3.000000e0 s"),
        "{text}"
    );
}

#[test]
fn bad_input_names_the_key_or_the_place() {
    let err = failure(
        &["model", "transfer", "--params", "-"],
        Some(r#"{"size": 1, "bandwith": 2}"#),
    );
    assert!(
        err.contains("missing key `bandwidth`; found `bandwith`: did you mean `bandwidth`?"),
        "{err}"
    );
    let err = failure(
        &["model", "transfer", "--params", "-"],
        Some(r#"{"size": 1, "bandwidth": 2, "x": 1}"#),
    );
    assert!(err.contains("unknown key `x`"), "{err}");
    let err = failure(
        &["model", "transfer", "--params", "-"],
        Some(r#"{"size": 1, "bandwidth": -2}"#),
    );
    assert!(
        err.contains("key `bandwidth`: expected a number > 0, got -2"),
        "{err}"
    );
    let err = failure(&["model", "transfer", "--params", "-"], Some("{\"size\": 1,\n"));
    assert!(
        err.contains("<stdin>: malformed JSON") && err.contains("line 2"),
        "{err}"
    );
    let err = failure(&["model", "volkow", "--params", "-"], Some("{}"));
    assert!(err.contains("did you mean `volkov`?"), "{err}");
    let err = failure(&["model", "transfer", "--params", "no/such/file.json"], None);
    assert!(err.contains("no/such/file.json"), "{err}");
}

#[test]
fn transit_draws_its_figure() {
    let dir = std::env::temp_dir().join(format!("hetsim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("transit.svg");
    let o = ok_json(&[
        "model",
        "transit",
        "--params",
        "examples/models/transit-memory-bound.json",
        "--json",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o["bound"], "memory");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("memory bound"));
    let err = failure(
        &[
            "model",
            "volkov",
            "--params",
            "examples/models/volkov-gtx970.json",
            "--svg",
            "x.svg",
        ],
        None,
    );
    assert!(err.contains("only the transit model"), "{err}");
}

#[test]
fn calibrate_link_recovers_the_thesis_parameters() {
    // The example CSV holds eqs. 5.6-5.7 with up to 1 % noise.
    let o = ok_json(&[
        "calibrate",
        "link",
        "examples/calibration/pcie3-gtx970.csv",
        "--bandwidth",
        "15.8e9",
        "--json",
    ]);
    let attr = |k: &str| o["attributes"][k].as_f64().unwrap();
    assert!((attr("lambdaHtD") - 0.689).abs() < 0.005);
    assert!((attr("lambdaDtH") - 0.653).abs() < 0.005);
    assert!((attr("startupHtD") - 3.9687e-6).abs() < 1e-6);
    assert!((attr("startupDtH") - 5.1569e-6).abs() < 1e-6);
}

#[test]
fn calibrate_errors_name_line_and_field() {
    let dir = std::env::temp_dir().join(format!("hetsim-cal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("bad.csv");
    std::fs::write(&csv, "direction,size,seconds\nHtD,1024,1e-6\nHtD,lots,2e-6\n").unwrap();
    let err = failure(
        &["calibrate", "link", csv.to_str().unwrap(), "--bandwidth", "1e9"],
        None,
    );
    assert!(
        err.contains("line 3: field `size`: expected a number, got \"lots\""),
        "{err}"
    );
    std::fs::write(&csv, "direction,size,seconds\nsideways,1024,1e-6\n").unwrap();
    let err = failure(
        &["calibrate", "link", csv.to_str().unwrap(), "--bandwidth", "1e9"],
        None,
    );
    assert!(err.contains("line 2: field `direction`"), "{err}");
    let o = ok_json(&[
        "calibrate",
        "kernel",
        "examples/calibration/kernel-gtx970.csv",
        "--json",
    ]);
    assert!((o["kernelExecutionLambda"].as_f64().unwrap() - 0.7037).abs() < 0.001);
}

#[test]
fn components_lists_the_catalog() {
    let all = ok_json(&["components", "--json"]);
    assert!(all.as_array().unwrap().len() >= 11);
    let gpu = ok_json(&["components", "--name", "GTX 970 - gajger", "--json"]);
    assert_eq!(gpu[0]["attributes"]["GMEMThroughput"], 13.78);
    let err = failure(&["components", "--name", "GTX 907 - gajger"], None);
    assert!(err.contains("did you mean \"GTX 970 - gajger\"?"), "{err}");
}

#[test]
fn run_writes_trace_and_timeline() {
    let dir = std::env::temp_dir().join(format!("hetsim-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (trace, svg) = (dir.join("trace.json"), dir.join("timeline.svg"));
    let mut args = vec![
        "run",
        "--app",
        "examples/gajger/app.rhai",
        "--system",
        "examples/gajger/gtx970.toml",
        "--trace",
        trace.to_str().unwrap(),
        "--timeline",
        svg.to_str().unwrap(),
    ];
    args.extend(THESIS);
    let out = hetsim(&args, None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let spans: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let kinds: Vec<&str> = spans
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["kind"].as_str())
        .collect();
    for kind in ["compute", "wait", "send"] {
        assert!(kinds.contains(&kind), "trace lacks {kind}: {kinds:?}");
    }
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("GPU[0] @ gpu"), "{svg}");
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hetsim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON ({e})", path.display()))
}

#[test]
fn run_writes_a_chrome_trace_naming_nodes_and_processes() {
    let path = scratch_dir("chrome").join("t.json");
    let out = hetsim(
        &[
            "run",
            "--app",
            "examples/master-worker/app.rhai",
            "--system",
            "examples/master-worker/system.toml",
            "--label",
            "Worker=2",
            "--trace",
            path.to_str().unwrap(),
            "--trace-format",
            "chrome",
        ],
        None,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = read_json(&path);
    assert_eq!(doc["displayTimeUnit"], "ms");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    let of = |ph: &'static str| events.iter().filter(move |e| e["ph"] == ph);
    let threads: Vec<&str> = of("M")
        .filter(|e| e["name"] == "thread_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert_eq!(threads, ["Master[0]", "Worker[0]", "Worker[1]"]);
    assert!(of("M").any(|e| e["name"] == "process_name"), "nodes named");
    let complete: Vec<&serde_json::Value> = of("X").collect();
    assert!(complete.iter().any(|e| e["cat"] == "compute"), "{doc}");
    assert!(complete
        .iter()
        .all(|e| e["ts"].as_f64().is_some() && e["dur"].as_f64().unwrap() >= 0.0));
    assert_eq!(of("b").count(), of("e").count(), "each message begins and ends");
    assert!(of("b").count() > 0, "messages as async events: {doc}");
    let wrong = failure(
        &[
            "run",
            "--app",
            "a",
            "--system",
            "s",
            "--trace",
            "t",
            "--trace-format",
            "perfetto",
        ],
        None,
    );
    assert!(wrong.contains("native") && wrong.contains("chrome"), "{wrong}");
}

#[test]
fn a_timeline_from_a_runs_stored_json_equals_the_one_run_draws() {
    let dir = scratch_dir("stored-timeline");
    let (trace, svg) = (dir.join("trace.json"), dir.join("timeline.svg"));
    let result = ok_json(&[
        "run",
        "--app",
        "examples/training-8gpu/app.rhai",
        "--system",
        "examples/training-8gpu/system.toml",
        "--json",
        "--detail",
        "processes",
        "--trace",
        trace.to_str().unwrap(),
        "--timeline",
        svg.to_str().unwrap(),
    ]);
    let drawn = std::fs::read_to_string(&svg).unwrap();
    let from_json = hetsim_charts::timeline_svg_from_json(&result, &read_json(&trace)).expect("draws");
    assert_eq!(from_json, drawn);
    assert!(
        drawn.contains(" ms</text>") && drawn.contains(">compute</text>"),
        "{drawn}"
    );
    let error = hetsim_charts::timeline_svg_from_json(&serde_json::json!({}), &serde_json::Value::Null)
        .expect_err("no processes");
    assert!(format!("{error:#}").contains("overall_time"), "{error:#}");
}

/// `hetsim run` of the thesis application on the GTX 970 testbed, with `extra` arguments.
fn gajger_run(extra: &[&str]) -> Vec<String> {
    [
        "run",
        "--app",
        "examples/gajger/app.rhai",
        "--system",
        "examples/gajger/gtx970.toml",
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn run_errors_name_the_problem() {
    let required = [
        "numElements=1e6",
        "computeIntensity=1",
        "blockSize=256",
        "occupancy=8",
    ];
    let with_required = |extra: &[&str]| -> Vec<String> {
        let vars = required.iter().flat_map(|v| ["--var", v]);
        gajger_run(&vars.chain(extra.iter().copied()).collect::<Vec<_>>())
    };
    let args = with_required(&["--label", "GPU=2"]);
    let err = failure(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    assert!(
        err.contains("label `GPU`: 2 processes asked") && err.contains("at most 1"),
        "{err}"
    );
    let args = gajger_run(&["--var", "x"]);
    let err = failure(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    assert!(err.contains("--var \"x\": expected NAME=VALUE"), "{err}");
    // Variables are checked against what the app reads before anything runs, as
    // `hetsim submit` checks them: missing required ones all named, an unknown one refused
    // with the app's names.
    let args = gajger_run(&[]);
    let err = failure(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    assert!(
        err.contains(
            "examples/gajger/app.rhai needs `numElements`, `computeIntensity`, `blockSize`, `occupancy`: give each"
        ),
        "{err}"
    );
    let args = with_required(&["--var", "foo=3"]);
    let err = failure(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    assert!(
        err.contains("examples/gajger/app.rhai never reads `foo` (it reads `numElements`, `computeIntensity`, `blockSize`, `occupancy`, `kernelParams`)"),
        "{err}"
    );
    let args = with_required(&["--var", "blocksize=256"]);
    let err = failure(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    assert!(
        err.contains("never reads `blocksize`; did you mean `blockSize`?"),
        "{err}"
    );
}

#[test]
fn a_closed_pipe_ends_the_command_without_a_panic() {
    // `hetsim components | true`: the reader is gone before hetsim writes (it starts 0.3 s
    // late), so every write meets a broken pipe.
    let script = format!(
        "(sleep 0.3; '{}' components; echo \"status $?\" >&2) | true",
        env!("CARGO_BIN_EXE_hetsim")
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(repo())
        .output()
        .expect("bash runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("status 141"), "ends as SIGPIPE would: {stderr}");
}

#[test]
fn a_label_given_changes_its_count_and_keeps_the_systems_others() {
    // The README's tour: `--label Worker=4` on the master-worker system keeps its Master.
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README");
    let tour = "hetsim run --app examples/master-worker/app.rhai --system examples/master-worker/system.toml --label Worker=4";
    assert!(readme.contains(tour), "the README still shows the command");
    let args: Vec<&str> = tour.split(' ').skip(1).chain(["--json"]).collect();
    let v = ok_json(&args);
    let labels: Vec<(&str, u64)> = v["labels"]
        .as_array()
        .expect("labels")
        .iter()
        .map(|l| {
            (
                l["label"].as_str().unwrap_or_default(),
                l["count"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(labels, [("Master", 1), ("Worker", 4)], "{v}");
    assert_eq!(
        v["processes"], 5,
        "the summary level counts the processes, lists none: {v}"
    );
}

/// `hetsim run` of the master-worker example with `extra` arguments.
fn master_worker_run(extra: &[&str]) -> Vec<String> {
    [
        "run",
        "--app",
        "examples/master-worker/app.rhai",
        "--system",
        "examples/master-worker/system.toml",
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn a_label_given_zero_processes_runs_the_others_alone() {
    let args = master_worker_run(&["--label", "Worker=0", "--json", "--detail", "processes"]);
    let v = ok_json(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let labels: Vec<&str> = v["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .filter_map(|p| p["label"].as_str())
        .collect();
    assert_eq!(labels, ["Master"], "{v}");
    assert_eq!(
        v["log"][0], "[0.000000000 s] Master[0]: all 10 rounds done at 0.0 s",
        "{v}"
    );
    // A label no node carries is named, with the closest one, even at 0.
    let args = master_worker_run(&["--label", "Wroker=0"]);
    let err = failure(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    assert!(
        err.contains("label `Wroker` is carried by no node; did you mean `Worker`?"),
        "{err}"
    );
}

#[test]
fn a_syntax_error_names_the_file_and_the_line_of_the_missing_semicolon() {
    let dir = std::env::temp_dir().join(format!("hetsim-cli-syntax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    let app = dir.join("app.rhai");
    std::fs::write(&app, "let a = 1;\nlet b = 2\n\n// then\nsim.sleep(a + b);\n").expect("app written");
    let app = app.display().to_string();
    let err = failure(
        &[
            "run",
            "--app",
            &app,
            "--system",
            "examples/master-worker/system.toml",
        ],
        None,
    );
    assert!(
        err.contains(&format!(
            "{app}:2:10: syntax error: Expecting ';' to terminate this statement"
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).expect("temporary folder removed");
}

#[test]
fn run_refuses_a_system_with_a_bad_link_before_simulating() {
    let dir = std::env::temp_dir().join(format!("hetsim-cli-bad-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    let good = std::fs::read_to_string(repo().join("examples/master-worker/system.toml")).expect("example");
    let cases = [
        (
            "lambda = 0.94",
            "lambda = 1.94",
            "key `lambda`: expected a fraction in (0, 1], got 1.94",
        ),
        (
            "bandwidth = 125e6",
            "bandwidth = 0",
            "key `bandwidth`: expected a number > 0, got 0",
        ),
        (
            "startup = 50e-6",
            "startup = -50e-6",
            "key `startup`: expected a number >= 0, got -0.00005",
        ),
    ];
    for (from, to, expected) in cases {
        let system = dir.join("system.toml");
        std::fs::write(&system, good.replacen(from, to, 1)).expect("system written");
        let system = system.display().to_string();
        let out = hetsim(
            &[
                "run",
                "--app",
                "examples/master-worker/app.rhai",
                "--system",
                &system,
            ],
            None,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && out.stdout.is_empty(), "{err}");
        // `FILE:LINE: …`: the line of the link in the system file.
        assert!(
            err.contains(&format!("{system}:"))
                && err.contains(&format!(
                    ": link[0] `master`–`w0`, component `Gigabit Ethernet`: {expected}"
                ))
                && !err.contains("simulation failed"),
            "{err}"
        );
    }
    // The schema's messages name the path in the file.
    let system = dir.join("system.toml");
    std::fs::write(
        &system,
        good.replacen("labels = { Worker = 1 }", "labels = { Worker = -1 }", 1),
    )
    .expect("system written");
    let system = system.display().to_string();
    let err = failure(
        &[
            "run",
            "--app",
            "examples/master-worker/app.rhai",
            "--system",
            &system,
        ],
        None,
    );
    assert!(
        err.contains(&format!(
            "{system}:19: node[1].labels.Worker: -1 is less than the minimum of 0"
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).expect("temporary folder removed");
}
