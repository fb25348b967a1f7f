//! `hetsim replay` on the shipped example trace: the text report's per-rank lines and the
//! JSON report's `ranks`.

use std::process::Command;

fn hetsim(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hetsim"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("hetsim runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn the_example_trace_replays_with_each_policy() {
    let system = "examples/clusters/hgx-h100.toml";
    let text = hetsim(&["replay", "examples/traces/dp-step", "--system", system]);
    assert!(
        text.contains("rank 7: 17 of 17 nodes ran (4 CPU, 9 GPU compute, 4 communication, 0 metadata)"),
        "{text}"
    );
    assert!(text.contains("compute 6.420000 ms"), "{text}");
    let json = hetsim(&[
        "replay",
        "examples/traces/dp-step",
        "--system",
        system,
        "--compute",
        "roofline",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(report["policy"], "roofline");
    let ranks = report["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 8);
    assert_eq!(ranks[0]["ran"], 17);
    let compute = ranks[0]["compute_time"].as_f64().expect("a number");
    assert!(
        compute > 0.03,
        "the FP32 roofline is slower than the recorded kernels: {compute}"
    );
    let scaled = hetsim(&[
        "replay",
        "examples/traces/dp-step",
        "--system",
        system,
        "--compute",
        "scale:A100 SXM4 40GB",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&scaled).expect("JSON");
    let compute = report["ranks"][0]["compute_time"].as_f64().expect("a number");
    // Recorded on an A100 (19.5 TFLOP/s FP32), replayed on an H100 (66.9): faster.
    assert!(compute < 6.42e-3 / 2.0 && compute > 0.0, "{compute}");
}

#[test]
fn the_trace_of_spans_and_the_timeline_are_written_as_hetsim_run_writes_them() {
    let dir = std::env::temp_dir().join(format!("hetsim-replay-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let (spans, svg) = (dir.join("spans.json"), dir.join("streams.svg"));
    hetsim(&[
        "replay",
        "examples/traces/dp-step",
        "--system",
        "examples/training-8gpu/system.toml",
        "--trace",
        spans.to_str().unwrap(),
        "--timeline",
        svg.to_str().unwrap(),
    ]);
    let spans: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&spans).expect("written")).expect("JSON");
    let spans = spans.as_array().expect("a list of spans");
    // Each rank's 4 all-reduces are named collective spans, with their node ids.
    let collectives = spans.iter().filter(|s| s["kind"] == "collective").count();
    assert_eq!(collectives, 32);
    assert!(spans
        .iter()
        .any(|s| s["detail"] == "allreduce nvls simple 33554432 bytes (node 203)"));
    let svg = std::fs::read_to_string(&svg).expect("written");
    assert!(
        svg.starts_with("<svg") && svg.contains("GPU.comm[0] @ gpu0"),
        "{svg:.300}"
    );
}

#[test]
fn a_bad_trace_fails_naming_the_file() {
    let out = Command::new(env!("CARGO_BIN_EXE_hetsim"))
        .args([
            "replay",
            "examples/traces/nope",
            "--system",
            "examples/training-8gpu/system.toml",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("hetsim runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("examples/traces/nope") && err.contains("no nope.N.et files"),
        "{err}"
    );
}
