//! Every shipped example runs, and gives the times its equations say.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hetsim_scripting::{default_labels, run, RunOptions, RunReport};
use hetsim_simulator::SpanKind;
use hetsim_system::{load as load_system, Variable};

fn example(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(dir)
}

fn run_example(dir: &str, variables: &[(&str, &str)], labels: Option<&[(&str, u64)]>) -> RunReport {
    let app_path = example(dir).join("app.rhai");
    let app = std::fs::read_to_string(&app_path).unwrap();
    let system = load_system(&example(dir).join("system.toml")).unwrap();
    let labels = match labels {
        Some(l) => l.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        None => default_labels(&system),
    };
    let variables: BTreeMap<String, Variable> = variables
        .iter()
        .map(|(k, v)| (k.to_string(), Variable::infer(v)))
        .collect();
    let mut options = RunOptions::default();
    options.engine.trace = true;
    run(
        &app,
        &app_path.display().to_string(),
        &system,
        &labels,
        &variables,
        &options,
    )
    .unwrap()
}

#[test]
fn master_worker_rounds_cost_task_compute_and_result() {
    let r = run_example("master-worker", &[], None);
    // Each worker has its own link: per round, 50 µs + 1e6 B / (125 MB/s × 0.94) out,
    // 1e9 FLOP at 512 GFLOP/s, and 50 µs + 1e3 B / (125 MB/s × 0.94) back.
    let round = (50e-6 + 1e6 / (125e6 * 0.94)) + 1e9 / 512e9 + (50e-6 + 1e3 / (125e6 * 0.94));
    assert!(((r.results.overall_time - 10.0 * round) / (10.0 * round)).abs() < 1e-9);
    assert_eq!(r.results.processes.len(), 9);
    assert!(r.log[0].contains("all 10 rounds done"));
}

#[test]
fn master_worker_with_fewer_workers_than_nodes() {
    let r = run_example(
        "master-worker",
        &[("rounds", "2")],
        Some(&[("Master", 1), ("Worker", 3)]),
    );
    assert_eq!(r.results.processes.len(), 4);
    assert!(r.results.nodes.iter().filter(|n| n.busy_time > 0.0).count() == 3);
}

#[test]
fn multi_gpu_steps_run_collectives_over_pcie_and_nvlink() {
    let one = run_example("multi-gpu", &[("steps", "1")], None).results;
    let four = run_example("multi-gpu", &[("steps", "4")], None).results;
    // Each step ends in a barrier, so steps repeat exactly.
    assert!(((four.overall_time - 4.0 * one.overall_time) / four.overall_time).abs() < 1e-9);
    let trace = one.trace.unwrap();
    let over = |link: &str| trace.iter().any(|s| s.detail.contains(link));
    assert!(over("`host`–`gpu"), "the scatter crosses PCIe");
    assert!(over("`gpu0`–`gpu"), "the all-reduce crosses NVLink");
    // Four GPUs, each computing its share once.
    assert_eq!(one.processes.iter().filter(|p| p.compute_time > 0.0).count(), 4);
}

#[test]
fn eight_gpus_train_with_a_ring_allreduce_over_nvlink() {
    let ring = run_example("training-8gpu", &[("steps", "1")], None).results;
    let gpu = &ring.processes[0];
    // Ring all-reduce of 400 MB over 8 GPUs: 2 × 7 steps of 50 MB each over one NVLink 4
    // direction (450 GB/s, no startup stated), after the kernels (the same on every GPU).
    let allreduce = 14.0 * (4e8 / 8.0) / 450e9;
    let expected = gpu.compute_time + allreduce;
    assert!(
        ((ring.overall_time - expected) / expected).abs() < 1e-9,
        "{} vs {expected}",
        ring.overall_time
    );
    let trace = ring.trace.unwrap();
    assert!(trace.iter().any(|s| s.detail.starts_with("50000000 bytes")));
    // Each GPU's call is one span, named by the collective, its algorithm and its bytes.
    let calls = trace.iter().filter(|s| s.kind == SpanKind::Collective);
    assert_eq!(
        calls.map(|s| s.detail.as_str()).collect::<Vec<_>>(),
        ["allreduce ring 400000000 bytes"; 8]
    );
    // A reduce to GPU[0] then a broadcast moves the whole 400 MB over the binomial tree's
    // 3 + 3 levels. Each GPU has one NVLink 4 port to the NVSwitch: the reduce's senders of a
    // level each use their own (3 × 400 MB / 450 GB/s), but a parent's sends to its children
    // leave at once and share its port: GPU[0]'s three, then GPU[4]'s two, then GPU[6]'s one
    // (3 + 2 + 1): 9 × 400 MB / 450 GB/s in all, 5.1 × the ring's.
    let tree = run_example(
        "training-8gpu",
        &[("steps", "1"), ("algorithm", "binomial")],
        None,
    )
    .results;
    let expected = gpu.compute_time + 9.0 * 4e8 / 450e9;
    assert!(
        ((tree.overall_time - expected) / expected).abs() < 1e-9,
        "{} vs {expected}",
        tree.overall_time
    );
    let three = run_example("training-8gpu", &[], None).results;
    assert!(((three.overall_time - 3.0 * ring.overall_time) / three.overall_time).abs() < 1e-9);
}

/// The arrival time [s] that the dumbbell's receivers log for `flow` ("S1->R1").
fn arrival(report: &RunReport, flow: &str) -> f64 {
    let line = report
        .log
        .iter()
        .find(|l| l.contains(&format!("flow {flow} ")))
        .unwrap_or_else(|| panic!("no arrival of {flow} in {:?}", report.log));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn dumbbell_flows_share_the_bottleneck_within_one_percent_of_simgrid() {
    let r = run_example("dumbbell", &[], None);
    // Worked by hand. Each message is one flow over its route: 1 + 50 + 1 µs of startups,
    // then its bytes at its max-min share of every link; the access links (12.5 GB/s) never
    // bind, so the bottleneck's 125 MB/s is shared as on one link. S1->R1 (10 MB) and S2->R2
    // (5 MB) run at 62.5 MB/s each from 0.052 ms; S2->R1 (2.5 MB, sent at 20 ms) joins at
    // 20.052 ms, all three at 41.67 MB/s: S2->R1 arrives at 80.052 ms; S2->R2, 1.25 MB left,
    // at 100.052 ms; S1->R1, alone for its last 5 MB, at 140.052 ms.
    let hetsim = [
        ("S2->R1", 80.052e-3),
        ("S2->R2", 100.052e-3),
        ("S1->R1", 140.052e-3),
    ];
    // SimGrid 3.32's flows (CM02: max-min without corrections): `python3 bench/dumbbell.py`
    // gave 80.052, 100.052 and 140.052 ms.
    let simgrid = [80.052e-3, 100.052e-3, 140.052e-3];
    for ((flow, expected), simgrid) in hetsim.into_iter().zip(simgrid) {
        let got = arrival(&r, flow);
        assert!((got - expected).abs() < 1e-9, "{flow}: {got} vs {expected}");
        assert!(
            ((got - simgrid) / simgrid).abs() < 0.01,
            "{flow}: {got} vs SimGrid's {simgrid}"
        );
    }
}

#[test]
fn gajger_testbeds_run_with_default_labels() {
    for system in ["gtx970.toml", "titanx.toml"] {
        let app = std::fs::read_to_string(example("gajger").join("app.rhai")).unwrap();
        let system = load_system(&example("gajger").join(system)).unwrap();
        let variables: BTreeMap<String, Variable> = [
            ("occupancy", "64"),
            ("computeIntensity", "1"),
            ("blockSize", "256"),
            ("numElements", "1000000"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), Variable::infer(v)))
        .collect();
        let r = run(
            &app,
            "app.rhai",
            &system,
            &default_labels(&system),
            &variables,
            &RunOptions::default(),
        )
        .unwrap();
        assert!(r.results.overall_time > 0.0);
    }
}
