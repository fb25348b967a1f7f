//! Routes as a user writes them (issue 48): GPUs on an NVLink ring with a host, and a message
//! that cannot go failing at the app's line, naming both processes.

mod common;

use std::collections::BTreeMap;

use common::{labels, system_from};
use hetsim_scripting::{run, RunOptions};

/// A host declared first, with PCIe 5.0 (link-host-memory: it times host copies only) to g0
/// and g2; g0..g3 on an NVLink ring of 100 GB/s and 2 µs. `extra` is appended.
fn ring_with_host(extra: &str) -> hetsim_system::System {
    let gpus: String = (0..4)
        .map(|i| format!("[[node]]\nid = \"g{i}\"\ncomponent = \"H100 SXM5 80GB\"\nmodel = \"gpu-volkov\"\nlabels = {{ GPU = 1 }}\n"))
        .collect();
    let ring: String = (0..4)
        .map(|i| {
            format!(
                "[[link]]\nbetween = [\"g{i}\", \"g{}\"]\ncomponent = \"nvlink\"\n",
                (i + 1) % 4
            )
        })
        .collect();
    system_from(
        &format!(
            r#"
            [[component]]
            name = "nvlink"
            kind = "NETWORK"
            attributes = {{ bandwidth = 100e9, startup = 2e-6, lambda = 1 }}
            [[node]]
            id = "host"
            component = "Intel Core i7-4790K"
            model = "cpu-flops"
            labels = {{ CPU = 1 }}
            {gpus}
            [[link]]
            between = ["host", "g0"]
            component = "PCIe 5.0 x16 - H100 host"
            model = "link-host-memory"
            [[link]]
            between = ["host", "g2"]
            component = "PCIe 5.0 x16 - H100 host"
            model = "link-host-memory"
            {ring}
            {extra}
            "#
        ),
        "ring.toml",
    )
}

#[test]
fn a_gpu_to_gpu_message_takes_the_nvlink_ring_not_the_host() {
    // Labels in name order: pid 0 the CPU, pids 1..4 GPU[0..3]. GPU[2] sends 1 GB to GPU[0]:
    // g2 → g1 → g0 or g2 → g3 → g0, two 2 µs startups and 1 GB / 100 GB/s. Through the host
    // the run would fail: link-host-memory times no device-to-device copy.
    let app = r#"
        if tag == "GPU" && rank == 2 { sim.send(1e9, ["GPU", 0]); }
        if tag == "GPU" && rank == 0 { let m = sim.receive(["GPU", 2]); sim.log(`${m.arrived}`); }
    "#;
    let report = run(
        app,
        "ring.rhai",
        &ring_with_host(""),
        &labels(&[("CPU", 1), ("GPU", 4)]),
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .unwrap();
    // A log line is `[time] label[rank]: text`.
    let arrived: f64 = report.log[0].rsplit(' ').next().unwrap().parse().unwrap();
    assert!((arrived - (4e-6 + 1e9 / 100e9)).abs() < 1e-12, "{arrived}");
}

#[test]
fn a_message_that_cannot_go_fails_at_the_apps_line_naming_both_processes() {
    // An island GPU no link reaches.
    let island = "[[node]]\nid = \"lone\"\ncomponent = \"H100 SXM5 80GB\"\nmodel = \"gpu-volkov\"\nlabels = { Lone = 1 }\n";
    let app = "let x = 1;\nif tag == \"CPU\" {\n    sim.send(1e6, \"Lone\");\n}\n";
    let error = run(
        app,
        "island.rhai",
        &ring_with_host(island),
        &labels(&[("CPU", 1), ("GPU", 4), ("Lone", 1)]),
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .unwrap_err();
    let text = error.to_string();
    assert_eq!(
        (error.origin(), error.line()),
        (Some("island.rhai"), Some(3)),
        "{text}"
    );
    for part in [
        "CPU[0] on node `host`",
        "Lone[0] on node `lone`",
        "no route of links",
    ] {
        assert!(text.contains(part), "{part} missing in: {text}");
    }
}
