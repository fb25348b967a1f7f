//! `hetsim run`'s report levels: a summary whose size does not grow with the processes,
//! and per-process and per-compute rows on demand, as JSON or CSV.

mod common;

use common::fixture::THESIS;
use common::oneshot::*;

/// `hetsim run` of the master-worker example at scale (one node entry of a million worker
/// machines) with `workers` workers and `extra` arguments.
fn master_worker(workers: u64, extra: &[&str]) -> std::process::Output {
    let out = master_worker_on("million.toml", &workers.to_string(), extra);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// `hetsim run` of the master-worker example on `examples/master-worker/SYSTEM` with
/// `Worker` given as `workers` (a count, or a list) and `extra` arguments.
fn master_worker_on(system: &str, workers: &str, extra: &[&str]) -> std::process::Output {
    let (label, system) = (
        format!("Worker={workers}"),
        format!("examples/master-worker/{system}"),
    );
    let mut args = vec![
        "run",
        "--app",
        "examples/master-worker/app.rhai",
        "--system",
        &system,
        "--label",
        &label,
    ];
    args.extend(extra);
    hetsim(&args, None)
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("--json prints one JSON object")
}

#[test]
fn the_json_summary_is_as_big_for_two_thousand_workers_as_for_twenty() {
    let [small, large] = [20, 2000].map(|w| master_worker(w, &["--json"]));
    let (small_value, large_value) = (json(&small), json(&large));
    assert_eq!(large_value["labels"][1]["count"], 2000, "{large_value}");
    assert_eq!(large_value["processes"], 2001, "{large_value}");
    // Only the digits of the figures and of the counts differ.
    let sizes = (small.stdout.len(), large.stdout.len());
    assert!(
        sizes.1 < sizes.0 + 200,
        "summary bytes (20 workers, 2000 workers): {sizes:?}"
    );
    for key in ["overall_time", "total_energy", "events", "nodes", "log"] {
        assert!(
            small_value.get(key).is_some(),
            "the summary lacks {key}: {small_value}"
        );
    }
    let finish = &large_value["labels"][1]["finish"];
    let ordered = ["min", "p50", "p99", "max"].map(|k| finish[k].as_f64().expect(k));
    assert!(ordered.windows(2).all(|w| w[0] <= w[1]), "{finish}");
}

#[test]
fn processes_and_computes_are_listed_when_asked() {
    let v = json(&master_worker(3, &["--json", "--detail", "processes"]));
    let processes = v["processes"].as_array().expect("processes");
    assert_eq!(processes.len(), 4, "{v}");
    assert_eq!(processes[1]["label"], "Worker");
    assert!(v.get("computes").is_none(), "{v}");
    let v = json(&master_worker(3, &["--json", "--detail", "computes"]));
    assert_eq!(v["processes"].as_array().map(Vec::len), Some(4), "{v}");
    // 10 rounds, one task per worker and round.
    assert_eq!(v["computes"].as_array().map(Vec::len), Some(30), "{v}");
}

#[test]
fn csv_rows_per_label_per_process_and_per_compute() {
    let lines = |detail: &str| -> Vec<String> {
        let out = master_worker(3, &["--csv", "--detail", detail]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect()
    };
    let labels = lines("summary");
    assert_eq!(labels.len(), 3, "{labels:?}");
    assert!(labels[0].starts_with("label,count,finish_min,finish_mean,finish_p50,finish_p99,finish_max,"));
    assert!(labels[2].starts_with("Worker,3,"), "{labels:?}");
    let processes = lines("processes");
    assert_eq!(processes.len(), 5, "{processes:?}");
    assert_eq!(
        processes[0],
        "pid,label,rank,node,finish_time,finish_low,finish_high,compute_time,wait_time"
    );
    assert!(processes[1].starts_with("0,Master,0,"), "{processes:?}");
    let computes = lines("computes");
    assert_eq!(computes.len(), 31, "{computes:?}");
    assert_eq!(computes[0], "pid,start,seconds,uncertainty,detail");
}

#[test]
fn json_and_csv_are_one_or_the_other() {
    let err = failure(
        &[
            "run",
            "--app",
            "examples/master-worker/app.rhai",
            "--system",
            "examples/master-worker/system.toml",
            "--json",
            "--csv",
        ],
        None,
    );
    assert!(err.contains("--csv") && err.contains("--json"), "{err}");
}

/// docs/training-8gpu.svg is what `hetsim run … --timeline` draws today: a change to the
/// engine or the charts that moves it fails here until the picture is drawn again
/// (`hetsim run --app examples/training-8gpu/app.rhai --system
/// examples/training-8gpu/system.toml --timeline docs/training-8gpu.svg`) and committed.
#[test]
fn the_tracked_training_timeline_is_what_the_run_draws() {
    let file = std::env::temp_dir().join(format!("hetsim-training-{}.svg", std::process::id()));
    let path = file.display().to_string();
    let args = [
        "run",
        "--app",
        "examples/training-8gpu/app.rhai",
        "--system",
        "examples/training-8gpu/system.toml",
        "--timeline",
        &path,
    ];
    let out = hetsim(&args, None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let drawn = std::fs::read_to_string(&file).expect("the timeline is written");
    let tracked = std::fs::read_to_string(common::repo().join("docs/training-8gpu.svg")).expect("tracked");
    std::fs::remove_file(&file).ok();
    assert!(
        drawn == tracked,
        "docs/training-8gpu.svg is stale: draw it again and commit it"
    );
}

/// Lists make a local sweep: the product runs here, each run as `hetsim run` would make it
/// alone, and the table is the server's sweep table.
#[test]
fn a_local_sweep_runs_the_product_and_prints_its_table() {
    let out = master_worker_on("system.toml", "1,2,4", &["--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let runs: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("a JSON array");
    assert_eq!(runs.len(), 3);
    for (run, workers) in runs.iter().zip(["1", "2", "4"]) {
        assert_eq!(run["labels"]["Worker"], workers.parse::<u64>().unwrap());
        let alone = json(&master_worker_on("system.toml", workers, &["--json"]));
        assert_eq!(run["result"]["overall_time"], alone["overall_time"], "{run}");
    }
    let table = master_worker_on("system.toml", "1,2", &[]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.starts_with("run  status  label:Worker  overall time [s]  energy [J]"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 3, "{text}");
    let failing = master_worker_on("system.toml", "1,100", &[]);
    let stderr = String::from_utf8_lossy(&failing.stderr);
    assert!(
        !failing.status.success() && stderr.contains("1 of 2 runs failed"),
        "{stderr}"
    );
}

#[test]
fn run_prints_a_merpsys_summary_and_json() {
    let mut args = vec![
        "run",
        "--app",
        "examples/gajger/app.rhai",
        "--system",
        "examples/gajger/gtx970.toml",
    ];
    args.extend(THESIS);
    let out = hetsim(&args, None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("Overall time 595.69"), "{text}");
    // The breakdown the JSON has: a compute's model, a transfer's bytes and bandwidth.
    assert!(
        text.contains("computes on gpu: ") && text.contains(" model"),
        "{text}"
    );
    assert!(text.contains("transfers ") && text.contains("achieved"), "{text}");
    assert!(
        text.contains("GPU[0] on gpu finished at") && text.contains("Failure chance 0"),
        "{text}"
    );
    args.extend(["--json", "--detail", "processes"]);
    let o = ok_json(&args);
    assert!((o["overall_time"].as_f64().unwrap() - 0.5957).abs() < 1e-4);
    assert_eq!(o["processes"][1]["label"], "GPU");
    assert_eq!(
        o["labels"][0]["label"], "CPU",
        "the summary's rows per label: {o}"
    );
    assert!(o["nodes"][1]["energy"].as_f64().unwrap() > 0.0);
}
