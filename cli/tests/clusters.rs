//! The example clusters (examples/clusters) as a user runs them through a server: stored,
//! submitted with their number of boards as a run variable, and refused when the labels ask
//! more processes than those boards hold. A real process and a real SQLite file.

mod common;

use common::fixture::runs_of;
use common::*;

#[test]
fn the_example_clusters_run_through_submit_with_their_boards_as_a_run_variable() {
    let db = scratch().join("clusters.db");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let _server = hetsim(&["serve", "--db", db.to_str().unwrap(), "--bind", &bind], &[]);
    wait_healthy(port);
    let server = format!("http://{bind}");
    // (succeeded, stdout, stderr) of a submission of the training app on `system`.
    let submit = |system: &str, extra: &[&str]| {
        let mut args = vec![
            "submit",
            "--server",
            &server,
            "--app",
            "examples/training-8gpu/app.rhai",
            "--system",
            system,
            "--var",
            "steps=1",
            "--wait",
            "--json",
        ];
        args.extend(extra);
        cli(&args)
    };
    let done = |(ok, out, err): (bool, String, String)| {
        assert!(ok, "{err}");
        json(&out)
    };
    // The same run as `hetsim run` gives, through the server: one board, then four boards of
    // eight GPUs (32 processes of label GPU, the system's default at boards = 4).
    let (_, local, _) = cli(&[
        "run",
        "--app",
        "examples/training-8gpu/app.rhai",
        "--system",
        "examples/clusters/hgx-h100.toml",
        "--var",
        "steps=1",
        "--json",
    ]);
    let board = done(submit("examples/clusters/hgx-h100.toml", &[]));
    assert_eq!(board["status"], "done", "{board}");
    assert_eq!(board["result"]["overall_time"], json(&local)["overall_time"]);
    let four = done(submit(
        "examples/clusters/h100-ib.toml",
        &["--var", "boards=4", "--label", "GPU=32"],
    ));
    assert_eq!(four["status"], "done", "{four}");
    assert_eq!(four["result"]["labels"][0]["count"], 32, "{four}");
    // More GPUs than four boards hold is refused at submit, naming the label.
    let (ok, _, err) = submit(
        "examples/clusters/h100-ib.toml",
        &["--var", "boards=4", "--label", "GPU=40"],
    );
    assert!(!ok && err.contains("GPU"), "{err}");
}

/// The overall time of `hetsim replay` of the example trace on `system` with `vars`.
fn replayed(system: &str, vars: &[&str]) -> serde_json::Value {
    let mut args = vec!["replay", "examples/traces/dp-step", "--system", system, "--json"];
    args.extend(vars);
    let (ok, out, err) = cli(&args);
    assert!(ok, "hetsim {args:?}: {err}");
    json(&out)["overall_time"].clone()
}

#[test]
fn a_stored_trace_is_swept_over_the_gpu_and_the_link_bandwidth_a_system_file_declares() {
    const WHAT_IF: &str = "examples/traces/what-if.toml";
    // At its defaults (an H100 SXM5, NVLink 4's 450 GB/s) the what-if board is the catalog's.
    assert_eq!(
        replayed(WHAT_IF, &[]),
        replayed("examples/training-8gpu/system.toml", &[])
    );
    let (_server, port, server) = server_with_the_example_trace();
    let (ok, out, err) = cli(&[
        "sweep",
        "--trace-name",
        "dp-step",
        "--compute",
        "roofline",
        "--system",
        WHAT_IF,
        "--var",
        "linkBandwidth=25e9,450e9",
        "--var",
        "gpu=H100 SXM5 80GB,H200 SXM 141GB",
        "--wait",
        "--json",
        "--server",
        &server,
    ]);
    assert!(ok, "{err}");
    let sweep = json(&out);
    assert_eq!(sweep["done"], 4, "{sweep}");
    let mut times = std::collections::BTreeMap::new();
    for run in runs_of(port, sweep["id"].as_str().unwrap()) {
        let bandwidth = run["variables"]["linkBandwidth"].to_string();
        let gpu = run["variables"]["gpu"].as_str().unwrap().to_owned();
        let local = replayed(
            WHAT_IF,
            &[
                "--compute",
                "roofline",
                "--var",
                &format!("linkBandwidth={bandwidth}"),
                "--var",
                &format!("gpu={gpu}"),
            ],
        );
        assert_eq!(run["result"]["overall_time"], local, "{run}");
        times.insert(
            (gpu, bandwidth.parse::<f64>().unwrap() as u64),
            local.as_f64().unwrap(),
        );
    }
    // 18x less bandwidth is slower on either GPU; the H200's memory makes it faster.
    let time = |gpu: &str, bw: u64| times[&(gpu.to_owned(), bw)];
    for gpu in ["H100 SXM5 80GB", "H200 SXM 141GB"] {
        assert!(
            time(gpu, 25_000_000_000) > time(gpu, 450_000_000_000),
            "{times:?}"
        );
    }
    for bw in [25_000_000_000, 450_000_000_000] {
        assert!(
            time("H200 SXM 141GB", bw) < time("H100 SXM5 80GB", bw),
            "{times:?}"
        );
    }
}
