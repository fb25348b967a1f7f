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

#[test]
fn a_system_file_asks_for_ecmp_routing() {
    // Four hosts under each of two leaves, two spines: each host pair across the leaves has
    // two equal paths. `routing = "ecmp"` spreads the sixteen pairs over both spines; the
    // default takes the first spine for all.
    let node = |id: String, component: &str, model: &str| {
        format!("[[node]]\nid = \"{id}\"\ncomponent = \"{component}\"\n{model}")
    };
    let wire = |a: String, b: &str| {
        format!("[[link]]\nbetween = [\"{a}\", \"{b}\"]\ncomponent = \"InfiniBand NDR 400G\"\n")
    };
    let mut text = String::new();
    for h in 0..8 {
        let cpu = "model = \"cpu-flops\"\nlabels = { H = 1 }\n";
        text += &node(format!("h{h}"), "Intel Core i7-4790K", cpu);
        text += &wire(format!("h{h}"), ["l0", "l1"][h / 4]);
    }
    for s in ["l0", "l1", "s0", "s1"] {
        text += &node(s.to_owned(), "NVIDIA Quantum-2 QM9700", "");
    }
    for (l, s) in [("l0", "s0"), ("l0", "s1"), ("l1", "s0"), ("l1", "s1")] {
        text += &wire(l.to_owned(), s);
    }
    let spines = |routing: &str| {
        let system = system_from(&format!("{routing}\n{text}"), "fabric.toml");
        let platform = hetsim_scripting::platform(&system).unwrap();
        let ids: Vec<&str> = platform.nodes.iter().map(|n| n.id.as_str()).collect();
        let spine_of = |from: usize, to: usize| {
            let route = platform.route(from, to, [0, 0]).unwrap();
            let [a, b] = platform.links[route[1].link].between;
            [ids[a], ids[b]]
                .into_iter()
                .find(|id| id.starts_with('s'))
                .map(str::to_owned)
        };
        let pairs = (0..4).flat_map(|a| (4..8).map(move |b| (a, b)));
        pairs
            .map(|(a, b)| spine_of(a, b))
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    assert_eq!(spines(""), 1);
    assert_eq!(spines("routing = \"ecmp\""), 2);
}

#[test]
fn a_route_fixed_by_hand_is_taken_both_ways_over_the_direct_link() {
    // g0 and g1 share a link, but the file routes them the long way round the ring: three
    // 2 µs startups and 1 GB / 100 GB/s each way (the links are full-duplex).
    let app = r#"
        if tag == "GPU" && rank == 0 { sim.send(1e9, ["GPU", 1]); }
        if tag == "GPU" && rank == 1 { let m = sim.receive(["GPU", 0]); sim.log(`${m.arrived}`); }
        if tag == "GPU" && rank == 1 { sim.send(1e9, ["GPU", 0]); }
        if tag == "GPU" && rank == 0 { let m = sim.receive(["GPU", 1]); sim.log(`${m.arrived}`); }
    "#;
    let route = "[[route]]\nfrom = \"g0\"\nto = \"g1\"\nvia = [\"g3\", \"g2\"]\n";
    let report = run(
        app,
        "ring.rhai",
        &ring_with_host(route),
        &labels(&[("CPU", 1), ("GPU", 4)]),
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .unwrap();
    let arrivals: Vec<f64> = report
        .log
        .iter()
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    let one_way = 6e-6 + 1e9 / 100e9;
    assert_eq!(arrivals.len(), 2, "{:?}", report.log);
    assert!((arrivals[0] - one_way).abs() < 1e-12, "{arrivals:?}");
    assert!((arrivals[1] - 2.0 * one_way).abs() < 1e-12, "{arrivals:?}");
}
