//! Replays of traces the tests write, against the same work written as Rhai apps on the
//! same systems: a trace's collective takes exactly the time of `sim.<collective>`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hetsim_chakra::writer::{cpu_op, node, trace_bytes};
use hetsim_chakra::{NodeKind, TraceNode};
use hetsim_replay::{feed, replay, Policy, ReplayError, ReplayOptions, ReplayReport};
use hetsim_scripting::RunOptions;
use hetsim_system::{load, System};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn system(path: &str) -> System {
    load(&root().join(path)).expect("the example system loads")
}

/// Writes one file per rank under a fresh folder; returns the rank files.
fn write_trace(name: &str, ranks: &[Vec<TraceNode>]) -> Vec<PathBuf> {
    let dir = std::env::temp_dir().join(format!("hetsim-replay-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    ranks
        .iter()
        .enumerate()
        .map(|(r, nodes)| {
            let file = dir.join(format!("{name}.{r}.et"));
            std::fs::write(&file, trace_bytes("0.0.4", nodes)).expect("writes");
            file
        })
        .collect()
}

fn coll(id: u64, comm_type: i64, bytes: f64) -> TraceNode {
    let mut n = node(id, "collective", NodeKind::CommColl);
    n.attributes.comm_type = Some(comm_type);
    n.attributes.comm_size = Some(bytes);
    n
}

fn comp(id: u64, micros: u64, deps: &[u64]) -> TraceNode {
    let mut n = node(id, "kernel", NodeKind::Comp);
    n.duration_micros = micros;
    n.data_deps = deps.to_vec();
    n
}

fn app_time(app: &str, system: &System, gpus: u64) -> f64 {
    let labels = BTreeMap::from([("GPU".to_owned(), gpus)]);
    let report = hetsim_scripting::run(
        app,
        "app.rhai",
        system,
        &labels,
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .expect("the app runs");
    report.results.overall_time
}

fn run(files: &[PathBuf], system: &System) -> ReplayReport {
    replay(files, system, &ReplayOptions::default()).expect("the trace replays")
}

#[test]
fn a_microbenchmark_collective_replays_to_the_time_of_the_same_call_in_an_app() {
    // ASTRA-sim's microbenchmarks: one COMM_COLL of 1 MiB per rank (comm_type 0, 2, 7, 6).
    let board = system("examples/training-8gpu/system.toml");
    for (comm_type, call, n) in [
        (0, "allreduce", 8),
        (2, "allgather", 8),
        (7, "reducescatter", 8),
        (6, "alltoall", 8),
        (0, "allreduce", 4),
    ] {
        let ranks: Vec<Vec<TraceNode>> = (0..n).map(|_| vec![coll(0, comm_type, 1048576.0)]).collect();
        let files = write_trace(&format!("{call}{n}"), &ranks);
        let replayed = run(&files, &board);
        // comm_size is the rank's input: all-gather's is its share of the gathered whole,
        // all-to-all's what it sends in all.
        let bytes = match call {
            "allgather" => 1048576.0 * n as f64,
            "alltoall" => 1048576.0 / n as f64,
            _ => 1048576.0,
        };
        let expected = app_time(&format!("sim.{call}({bytes:?});"), &board, n);
        assert!(expected > 1e-6, "{call}: {expected}");
        assert_eq!(replayed.run.results.overall_time, expected, "{call} over {n}");
        for r in &replayed.ranks {
            assert_eq!((r.ran, r.comm_nodes, r.nodes), (1, 1, 1), "{r:?}");
            // A rank's own part ends within rounding of the slowest (the overall time).
            assert!((r.comm_time - expected).abs() < 1e-12 * expected, "{r:?}");
            assert_eq!(
                r.exposed_comm, r.comm_time,
                "nothing computes: all of it is exposed"
            );
            assert_eq!(r.compute_time, 0.0);
        }
    }
}

#[test]
fn a_repeated_collective_reuses_its_plan_and_takes_the_time_of_the_app_calling_it_again() {
    // Three all-reduces of 1 MiB in a row, then one of 4 MiB, on 8 ranks: the second and
    // third run the plan the first made (crate::comm::Plans), the last plans anew.
    let board = system("examples/training-8gpu/system.toml");
    let rank = || {
        let mut nodes = vec![coll(0, 0, 1048576.0)];
        for (id, bytes) in [(1, 1048576.0), (2, 1048576.0), (3, 4194304.0)] {
            let mut next = coll(id, 0, bytes);
            next.data_deps = vec![id - 1];
            nodes.push(next);
        }
        nodes
    };
    let files = write_trace("repeated", &(0..8).map(|_| rank()).collect::<Vec<_>>());
    let replayed = run(&files, &board);
    let expected = app_time(
        "sim.allreduce(1048576.0); sim.allreduce(1048576.0); sim.allreduce(1048576.0); sim.allreduce(4194304.0);",
        &board,
        8,
    );
    assert_eq!(replayed.run.results.overall_time, expected);
    let once = app_time("sim.allreduce(1048576.0);", &board, 8);
    assert!(expected > 3.0 * once, "{expected} against {once}");
}

#[test]
fn computation_overlaps_communication_and_the_exposed_part_is_what_sticks_out() {
    let board = system("examples/training-8gpu/system.toml");
    let allreduce = app_time("sim.allreduce(67108864.0);", &board, 2);
    // Rank r: a kernel of 10 µs, then (by data) an all-reduce of 64 MiB beside a second
    // kernel of 1 s that depends on the first only: the all-reduce hides behind it.
    let rank = vec![
        comp(1, 10, &[]),
        {
            let mut c = coll(2, 0, 67108864.0);
            c.data_deps = vec![1];
            c
        },
        comp(3, 1_000_000, &[1]),
    ];
    let files = write_trace("overlap", &[rank.clone(), rank]);
    let report = run(&files, &board);
    for r in &report.ranks {
        assert_eq!(r.ran, 3);
        assert!((r.compute_time - 1.000010).abs() < 1e-12, "{r:?}");
        assert!((r.comm_time - allreduce).abs() < 1e-12, "{r:?}");
        assert_eq!(r.exposed_comm, 0.0, "{r:?}");
        assert!((r.finish_time - 1.000010).abs() < 1e-12, "{r:?}");
    }
    // Made to wait for the long kernel, the all-reduce is exposed whole.
    let rank = vec![comp(1, 10, &[]), comp(3, 1_000_000, &[1]), {
        let mut c = coll(4, 0, 67108864.0);
        c.data_deps = vec![3];
        c
    }];
    let files = write_trace("serial", &[rank.clone(), rank]);
    let report = run(&files, &board);
    for r in &report.ranks {
        assert!((r.exposed_comm - allreduce).abs() < 1e-12, "{r:?}");
        assert!((r.finish_time - 1.000010 - allreduce).abs() < 1e-12, "{r:?}");
    }
}

fn p2p(id: u64, kind: NodeKind, src: i64, dst: i64, tag: i64, bytes: f64) -> TraceNode {
    let mut n = node(id, "p2p", kind);
    n.attributes.comm_src = Some(src);
    n.attributes.comm_dst = Some(dst);
    n.attributes.comm_tag = Some(tag);
    n.attributes.comm_size = Some(bytes);
    n
}

#[test]
fn sends_and_receives_match_by_tag_and_take_a_message_time() {
    let board = system("examples/training-8gpu/system.toml");
    let message = app_time(
        r#"if rank == 0 { sim.wait(sim.isend(8388608.0, ["GPU", 1])); } else { sim.receive(["GPU", 0]); }"#,
        &board,
        2,
    );
    // Rank 0 sends tags 1 then 2; rank 1 receives tag 2 first: matched by tag, not order.
    let sender = vec![p2p(1, NodeKind::CommSend, 0, 1, 1, 8388608.0), {
        let mut s = p2p(2, NodeKind::CommSend, 0, 1, 2, 8388608.0);
        s.data_deps = vec![1];
        s
    }];
    let receiver = vec![p2p(5, NodeKind::CommRecv, 0, 1, 2, 8388608.0), {
        let mut r = p2p(6, NodeKind::CommRecv, 0, 1, 1, 8388608.0);
        r.data_deps = vec![5];
        r
    }];
    let files = write_trace("p2p", &[sender, receiver]);
    let report = run(&files, &board);
    assert!(
        (report.run.results.overall_time - 2.0 * message).abs() < 1e-15,
        "{}",
        report.rank_lines()
    );
    assert_eq!(report.ranks[1].comm_nodes, 2);
}

#[test]
fn an_unmatched_send_and_an_unmatched_receive_name_their_ranks_and_nodes() {
    let board = system("examples/training-8gpu/system.toml");
    let files = write_trace(
        "unmatched-send",
        &[
            vec![p2p(4, NodeKind::CommSend, 0, 1, 9, 64.0)],
            vec![comp(1, 5, &[])],
        ],
    );
    let e = replay(&files, &board, &ReplayOptions::default()).expect_err("no receive");
    assert!(matches!(e, ReplayError::Unmatched { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("rank 0 node 4: a send to rank 1 with tag 9"),
        "{e}"
    );
    let files = write_trace(
        "unmatched-recv",
        &[
            vec![comp(1, 5, &[])],
            vec![p2p(8, NodeKind::CommRecv, 0, 1, 3, 64.0)],
        ],
    );
    let e = replay(&files, &board, &ReplayOptions::default()).expect_err("no send");
    assert!(matches!(e, ReplayError::Deadlock { .. }), "{e}");
    assert!(e.to_string().contains("rank 1 node 8 (COMM_RECV"), "{e}");
}

#[test]
fn pytorch_style_control_cycles_run_every_node_and_are_counted() {
    let board = system("examples/training-8gpu/system.toml");
    // A CPU op (3317) and its kernel (3318) waiting on each other, dependencies on ids that
    // are not in the trace, a METADATA node, and a self control dependency.
    let mut cpu = cpu_op(3317, "aten::mul", 43);
    cpu.ctrl_deps = vec![3318, 3];
    let mut kernel = comp(3318, 40, &[3317, 3292]);
    kernel.ctrl_deps = vec![3316];
    let mut meta = node(3316, "meta", NodeKind::Metadata);
    meta.ctrl_deps = vec![3316];
    let files = write_trace("pytorch", &[vec![cpu, kernel, meta]]);
    let report = run(&files, &board);
    let r = &report.ranks[0];
    assert_eq!(
        (r.ran, r.nodes, r.cpu_nodes, r.gpu_nodes, r.metadata_nodes),
        (3, 3, 1, 1, 1)
    );
    assert_eq!((r.missing_deps, r.dropped_ctrl), (2, 2));
    assert!((r.finish_time - 83e-6).abs() < 1e-15, "{r:?}");
}

/// A rank of a training loop in dependency order: a METADATA node, CPU ops each after the
/// previous kernel, kernels (one with a dependency on an id that is not in the file, one
/// with a control dependency on itself), an all-reduce every third step, and a kernel in
/// the middle of the file that waits for nothing.
fn training_rank() -> Vec<TraceNode> {
    let mut nodes = vec![node(0, "meta", NodeKind::Metadata)];
    for s in 0..30u64 {
        let id = 10 * s + 1;
        let mut cpu = cpu_op(id, "aten::linear", 3 + s % 4);
        cpu.ctrl_deps = if s == 0 { vec![0] } else { vec![id - 9] };
        let mut kernel = comp(id + 1, 20 + s % 5, &[id]);
        if s > 0 {
            // 10s − 2 is no node's id.
            kernel.data_deps.push(id - 3);
        }
        if s == 7 {
            kernel.ctrl_deps = vec![id + 1];
        }
        nodes.extend([cpu, kernel]);
        if s % 3 == 0 {
            let mut all_reduce = coll(id + 2, 0, f64::from(1 << (10 + s % 8)));
            all_reduce.data_deps = vec![id + 1];
            nodes.push(all_reduce);
        }
        if s == 15 {
            nodes.push(comp(id + 3, 100, &[]));
        }
    }
    nodes
}

#[test]
fn a_file_in_dependency_order_read_as_the_run_goes_replays_as_its_whole_graph() {
    // In order, each rank's file is read as the run goes (replay/src/feed.rs); reversed,
    // the same nodes are read whole into their graph. Every figure of the two reports is
    // the same, bit for bit.
    let board = system("examples/training-8gpu/system.toml");
    let ordered: Vec<Vec<TraceNode>> = (0..4).map(|_| training_rank()).collect();
    let reversed: Vec<Vec<TraceNode>> = ordered
        .iter()
        .map(|r| r.iter().rev().cloned().collect())
        .collect();
    let (in_order, backwards) = (
        write_trace("in-order", &ordered),
        write_trace("reversed", &reversed),
    );
    assert!(feed::scan(&in_order[0], 0, true).expect("reads").is_some());
    assert!(feed::scan(&backwards[0], 0, true).expect("reads").is_none());
    // Read as the run goes however small the file (by default, from 4,096 nodes).
    let options = ReplayOptions {
        feed_from_nodes: 0,
        ..ReplayOptions::default()
    };
    let replayed = |files: &[PathBuf]| replay(files, &board, &options).expect("the trace replays");
    let mut reports = [replayed(&in_order), replayed(&backwards)];
    for report in &mut reports {
        for r in &mut report.ranks {
            r.file = PathBuf::new();
        }
    }
    let r = &reports[0].ranks[0];
    assert_eq!((r.ran, r.nodes, r.comm_nodes, r.metadata_nodes), (72, 72, 10, 1));
    assert_eq!((r.missing_deps, r.dropped_ctrl), (29, 1));
    assert!(r.exposed_comm > 0.0 && r.exposed_comm < r.comm_time, "{r:?}");
    assert_eq!(reports[0], reports[1]);
}

#[test]
fn bad_traces_fail_naming_the_file_rank_and_nodes() {
    let board = system("examples/training-8gpu/system.toml");
    let files = write_trace(
        "cycle",
        &[vec![comp(1, 1, &[3]), comp(2, 1, &[1]), comp(3, 1, &[2])]],
    );
    let e = replay(&files, &board, &ReplayOptions::default()).expect_err("a cycle");
    let text = e.to_string();
    assert!(
        text.contains("cycle.0.et (rank 0): a cycle of data dependencies: nodes"),
        "{text}"
    );
    for id in ["1", "2", "3"] {
        assert!(text.contains(id), "{text}");
    }
    let ranks: Vec<Vec<TraceNode>> = (0..9).map(|_| vec![coll(0, 0, 64.0)]).collect();
    let files = write_trace("nine", &ranks);
    let e = replay(&files, &board, &ReplayOptions::default()).expect_err("9 ranks on 8 GPUs");
    assert!(
        matches!(
            e,
            ReplayError::Ranks {
                ranks: 9,
                capacity: 8,
                ..
            }
        ),
        "{e}"
    );
    let mut grouped = coll(5, 0, 64.0);
    grouped.attributes.pg_name = Some("g".to_owned());
    let files = write_trace("group", &[vec![grouped.clone()], vec![grouped]]);
    let options = ReplayOptions {
        groups: hetsim_chakra::Groups::parse(r#"{"g": [0, 1, 5]}"#).expect("reads"),
        ..ReplayOptions::default()
    };
    let e = replay(&files, &board, &options).expect_err("rank 5 is missing");
    assert!(e.to_string().contains("group.0.et (rank 0), node 5"), "{e}");
    assert!(e.to_string().contains("names rank 5"), "{e}");
}

#[test]
fn roofline_times_a_kernel_by_the_catalog_gpu_and_loads_cross_the_host_link() {
    let board = system("examples/clusters/hgx-h100.toml");
    let mut gemm = comp(1, 999, &[]);
    gemm.attributes.num_ops = Some(1e12);
    gemm.attributes.tensor_size = Some(1e6);
    let mut load = node(2, "load", NodeKind::MemLoad);
    load.attributes.tensor_size = Some(1e9);
    load.data_deps = vec![1];
    let files = write_trace("roofline", &[vec![gemm, load]]);
    let options = ReplayOptions {
        policy: Policy::Roofline,
        ..ReplayOptions::default()
    };
    let report = replay(&files, &board, &options).expect("replays");
    let r = &report.ranks[0];
    // H100 SXM5: 132 SMs x 128 FP32 cores x 2 x 1980 MHz.
    let peak = 132.0 * 128.0 * 2.0 * 1980e6;
    assert!((r.compute_time - 1e12 / peak).abs() < 1e-12, "{r:?}");
    // 1 GB over PCIe 5.0 x16 (63 GB/s at most): more than 15 ms, less than a second.
    assert!(r.comm_time > 1e9 / 64e9 && r.comm_time < 1.0, "{r:?}");
    assert_eq!(r.kept_recorded, 0);
}

#[test]
fn astra_sims_custom_ring_replays_to_its_critical_path_by_hand() {
    // The shape of ASTRA-sim's custom_ring_allreduce_8npus_1MB: per rank 14 steps of a
    // send of 128 KiB to the right neighbour then a receive from the left, a 7 µs
    // reduction kernel after every odd receive but the last: each step depends on the one
    // before. By hand: 7 × 7 µs + 14 message times (every GPU sends one message and
    // receives one at a time, each over its own NVLink: an isolated message's time).
    let board = system("examples/training-8gpu/system.toml");
    let message = app_time(
        r#"if rank == 0 { sim.wait(sim.isend(131072.0, ["GPU", 1])); } else { sim.receive(["GPU", 0]); }"#,
        &board,
        2,
    );
    let ranks: Vec<Vec<TraceNode>> = (0..8i64)
        .map(|r| {
            let mut nodes = Vec::new();
            let mut last: Option<u64> = None;
            let mut id = 0;
            for step in 0..14 {
                let mut send = p2p(id, NodeKind::CommSend, r, (r + 1) % 8, 0, 131072.0);
                send.data_deps = last.into_iter().collect();
                let mut recv = p2p(id + 1, NodeKind::CommRecv, (r + 7) % 8, r, 0, 131072.0);
                recv.data_deps = vec![id];
                last = Some(id + 1);
                nodes.extend([send, recv]);
                id += 2;
                if step % 2 == 0 && step < 13 {
                    nodes.push(comp(id, 7, &[id - 1]));
                    last = Some(id);
                    id += 1;
                }
            }
            nodes
        })
        .collect();
    let files = write_trace("custom-ring", &ranks);
    let report = run(&files, &board);
    let by_hand = 7.0 * 7e-6 + 14.0 * message;
    assert!(
        (report.run.results.overall_time - by_hand).abs() < 1e-12 * by_hand,
        "{} against {by_hand}",
        report.run.results.overall_time
    );
    for r in &report.ranks {
        assert_eq!((r.ran, r.gpu_nodes, r.comm_nodes), (35, 7, 28), "{r:?}");
    }
}

#[test]
fn data_dependencies_only_ignores_control_ones() {
    let board = system("examples/training-8gpu/system.toml");
    // 2 waits on 1 by control only: followed, they run one after the other (30 µs);
    // ignored, they run at once on the GPU stream one after the other anyway, so use a
    // CPU op and a kernel, which may overlap.
    let cpu = cpu_op(1, "aten::op", 20);
    let mut kernel = comp(2, 10, &[]);
    kernel.ctrl_deps = vec![1];
    let files = write_trace("ctrl", &[vec![cpu, kernel]]);
    let followed = run(&files, &board);
    assert!((followed.run.results.overall_time - 30e-6).abs() < 1e-15);
    let options = ReplayOptions {
        follow_ctrl: false,
        ..ReplayOptions::default()
    };
    let ignored = replay(&files, &board, &options).expect("replays");
    assert!((ignored.run.results.overall_time - 20e-6).abs() < 1e-15);
}

#[test]
fn a_rhai_model_times_each_kernel_from_the_node_and_the_gpu() {
    let board = system("examples/training-8gpu/system.toml");
    let dir = std::env::temp_dir().join(format!("hetsim-replay-{}-model", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let script = dir.join("model.rhai");
    std::fs::write(
        &script,
        r#"
        // GEMMs at half the GPU's FP32 peak; anything else twice its recorded time.
        fn compute_time(node) {
            if node.name == "gemm" { node.num_ops / (0.5 * node.gpu.peak_flops) } else { 2.0 * node.duration }
        }
        "#,
    )
    .expect("writes");
    let mut gemm = comp(1, 999, &[]);
    gemm.name = "gemm".to_owned();
    gemm.attributes.num_ops = Some(1e12);
    let other = comp(2, 10, &[1]);
    let files = write_trace("model", &[vec![gemm, other]]);
    let options = ReplayOptions {
        policy: Policy::parse(&format!("model:{}", script.display())).expect("reads"),
        ..ReplayOptions::default()
    };
    let report = replay(&files, &board, &options).expect("replays");
    let peak = 132.0 * 128.0 * 2.0 * 1980e6;
    let r = &report.ranks[0];
    assert!((r.compute_time - (2e12 / peak + 20e-6)).abs() < 1e-12, "{r:?}");
    // A script without compute_time, or returning no number, fails naming the file.
    std::fs::write(&script, "fn other(x) { 1.0 }").expect("writes");
    let options = ReplayOptions {
        policy: Policy::parse(&format!("model:{}", script.display())).expect("reads"),
        ..ReplayOptions::default()
    };
    let e = replay(&files, &board, &options).expect_err("no compute_time");
    assert!(
        e.to_string()
            .contains("defines neither fn compute_time(node) nor fn cpu_time(node)"),
        "{e}"
    );
    std::fs::write(&script, r#"fn compute_time(node) { "soon" }"#).expect("writes");
    let options = ReplayOptions {
        policy: Policy::parse(&format!("model:{}", script.display())).expect("reads"),
        ..ReplayOptions::default()
    };
    let e = replay(&files, &board, &options).expect_err("a string");
    assert!(
        e.to_string().contains("model.rhai: compute_time returned string"),
        "{e}"
    );
    assert!(e.to_string().contains("model.0.et (rank 0), node 1"), "{e}");
}

#[test]
fn a_cancelled_replay_stops_with_the_sandboxs_message() {
    let board = system("examples/training-8gpu/system.toml");
    let ranks: Vec<Vec<TraceNode>> = (0..8)
        .map(|_| vec![comp(0, 10, &[]), coll(1, 0, 1048576.0)])
        .collect();
    let files = write_trace("cancelled", &ranks);
    let options = ReplayOptions::default();
    options.cancel.cancel();
    let e = replay(&files, &board, &options).expect_err("cancelled before it starts");
    assert!(e.to_string().contains(hetsim_scripting::CANCELLED), "{e}");
}
