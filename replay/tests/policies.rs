//! Compute policies on traces the tests write: a model script's `kernel_params` timed as an
//! application's `sim.compute` times it, its say over CPU ops, the roofline by data type,
//! and process groups from a PyTorch-style METADATA node.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hetsim_chakra::proto::{self, IoInfo};
use hetsim_chakra::writer::{cpu_op, node, to_proto, TraceWriter};
use hetsim_chakra::{DataType, NodeKind, TraceNode};
use hetsim_replay::{replay, Policy, ReplayOptions, ReplayReport};
use hetsim_scripting::RunOptions;
use hetsim_system::{load, System};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn system(path: &str) -> System {
    load(&root().join(path)).expect("the example system loads")
}

fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hetsim-policies-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    dir
}

/// Writes one file per rank of wire nodes; returns the rank files.
fn write_raw(name: &str, ranks: &[Vec<proto::Node>]) -> Vec<PathBuf> {
    let dir = folder(name);
    ranks
        .iter()
        .enumerate()
        .map(|(r, nodes)| {
            let file = dir.join(format!("{name}.{r}.et"));
            let mut w = TraceWriter::new(Vec::new(), "1.0.1").expect("writes");
            for n in nodes {
                w.raw(n).expect("writes");
            }
            std::fs::write(&file, w.finish()).expect("writes");
            file
        })
        .collect()
}

fn write_trace(name: &str, ranks: &[Vec<TraceNode>]) -> Vec<PathBuf> {
    let raw: Vec<Vec<proto::Node>> = ranks.iter().map(|r| r.iter().map(to_proto).collect()).collect();
    write_raw(name, &raw)
}

fn kernel(id: u64, name: &str, micros: u64, deps: &[u64]) -> TraceNode {
    let mut n = node(id, name, NodeKind::Comp);
    n.duration_micros = micros;
    n.data_deps = deps.to_vec();
    n
}

/// Replays `files` with the model script `source` as the policy.
fn with_model(name: &str, source: &str, files: &[PathBuf], system: &System) -> Result<ReplayReport, String> {
    let script = folder(name).join("model.rhai");
    std::fs::write(&script, source).expect("writes");
    let options = ReplayOptions {
        policy: Policy::parse(&format!("model:{}", script.display()))?,
        ..ReplayOptions::default()
    };
    replay(files, system, &options).map_err(|e| e.to_string())
}

#[test]
fn a_model_returning_kernel_params_takes_the_time_of_the_same_compute_in_an_app() {
    // saxpy2's SASS as each system declares it ([[kernel]] saxpy2): the thesis's Maxwell
    // listing (examples/kernels/saxpy2-figure-5-2.sass) on the GTX 970 under gpu-volkov
    // (which takes the occupancy as given, as examples/gajger/app.rhai gives it), and the
    // measured sm_90 one on the H100 SXM5 under gpu-queueing (its occupancy calculator).
    let params = r#"kernel_params("saxpy2", #{ n: 1048576, a: 8, block: 256 })"#;
    for (path, call) in [
        (
            "examples/gajger/gtx970.toml",
            format!("{params} + #{{ occupancy: 32 }}"),
        ),
        ("examples/validation/saxpy2/h100.toml", params.to_owned()),
    ] {
        let model = format!(
            "fn compute_time(node) {{ if node.name == \"saxpy2\" {{ {call} }} else {{ node.duration }} }}"
        );
        let board = system(path);
        let app = app_time(&format!("if tag == \"GPU\" {{ sim.compute({call}); }}"), &board);
        assert!(app > 1e-6 && (app - 999e-6).abs() > 1e-6, "{path}: {app}");
        let files = write_trace("sass", &[vec![kernel(1, "saxpy2", 999, &[])]]);
        let report = with_model("sass", &model, &files, &board).expect("replays");
        assert_eq!(report.run.results.overall_time, app, "{path}");
        assert_eq!(report.ranks[0].compute_time, app, "{path}");
    }
    // A kernel the system does not declare fails, naming the script and the kernel.
    let files = write_trace("sass-missing", &[vec![kernel(1, "saxpy2", 999, &[])]]);
    let e = with_model(
        "sass-missing",
        r#"fn compute_time(node) { kernel_params("sgemm", #{ block: 256, grid: 4 }) }"#,
        &files,
        &system("examples/gajger/gtx970.toml"),
    )
    .expect_err("no such kernel");
    assert!(
        e.contains("model.rhai: compute_time") && e.contains("no kernel `sgemm`"),
        "{e}"
    );
}

fn app_time(app: &str, system: &System) -> f64 {
    let labels = BTreeMap::from([("GPU".to_owned(), 1)]);
    hetsim_scripting::run(
        app,
        "app.rhai",
        system,
        &labels,
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .expect("the app runs")
    .results
    .overall_time
}

#[test]
fn cpu_ops_take_the_models_cpu_time_where_it_has_one_and_their_record_otherwise() {
    let board = system("examples/training-8gpu/system.toml");
    // A CPU op of 100 µs launches a kernel of 10 µs.
    let files = write_trace(
        "cpu",
        &[vec![cpu_op(1, "aten::mm", 100), kernel(2, "gemm", 10, &[1])]],
    );
    // cpu_time only: the CPU op takes 3 × 100 µs, the kernel its record.
    let cpu = "fn cpu_time(node) { if node.name == \"aten::mm\" { 3.0 * node.duration } else { 0.0 } }";
    let r = with_model("cpu", cpu, &files, &board).expect("replays");
    assert!((r.ranks[0].cpu_time - 300e-6).abs() < 1e-15, "{:?}", r.ranks[0]);
    assert!((r.run.results.overall_time - 310e-6).abs() < 1e-15);
    // compute_time only: the CPU op keeps its 100 µs, the kernel takes twice its 10.
    let gpu = "fn compute_time(node) { 2.0 * node.duration }";
    let r = with_model("gpu", gpu, &files, &board).expect("replays");
    assert!((r.ranks[0].cpu_time - 100e-6).abs() < 1e-15, "{:?}", r.ranks[0]);
    assert!((r.run.results.overall_time - 120e-6).abs() < 1e-15);
    // A negative time is refused, naming the function and the node.
    let e = with_model("bad", "fn cpu_time(node) { -1.0 }", &files, &board).expect_err("negative");
    assert!(
        e.contains("cpu_time returned -1 s") && e.contains("node 1"),
        "{e}"
    );
}

#[test]
fn a_cpu_time_map_is_timed_by_the_ranks_host_cpu_model() {
    // The HGX board's host is a Xeon Platinum 8480+ under `cpu-flops`: 56 cores × 2.00 GHz ×
    // 64 FLOP a cycle = 7.168 TFLOP/s (its catalog entry), so 7.168·10⁹ FLOP take 1 ms.
    let files = write_trace(
        "cpu-map",
        &[vec![cpu_op(1, "aten::mm", 100), kernel(2, "gemm", 10, &[1])]],
    );
    let cpu = "fn cpu_time(node) { #{ ops: 7.168e9 } }";
    let r = with_model("cpu-map", cpu, &files, &system("examples/clusters/hgx-h100.toml")).expect("replays");
    assert!((r.ranks[0].cpu_time - 1e-3).abs() < 1e-15, "{:?}", r.ranks[0]);
    assert!((r.run.results.overall_time - 1.01e-3).abs() < 1e-15);
    // A GPU with no host CPU in the system has no model to time the map: refused, named.
    let alone = system("examples/validation/kernels/h100-queueing.toml");
    let e = with_model("cpu-map-alone", cpu, &files, &alone).expect_err("no host");
    assert!(
        e.contains("model.rhai: cpu_time returned a map, but the rank's GPU has no host CPU"),
        "{e}"
    );
}

#[test]
fn roofline_times_each_data_type_at_the_catalogs_peak_and_counts_the_fallback() {
    let board = system("examples/clusters/hgx-h100.toml");
    let flops = 274877906944.0; // a 4096 × 4096 × 8192 GEMM: 2 × 4096² × 8192
    let with = |id, dtype: Option<DataType>| {
        let mut n = kernel(id, "gemm", 520, &[]);
        n.attributes.num_ops = Some(flops);
        n.attributes.dtype = dtype;
        n
    };
    // bf16 by the `dtype` attribute; FP8 by PyTorch's input types, as Chakra's converter
    // writes them; fp64; none (the fallback: FP32's peak).
    let mut fp8 = to_proto(&with(2, None));
    fp8.inputs = Some(IoInfo {
        values: String::new(),
        types: "['Tensor(c10::Float8_e4m3fn)', 'Tensor(c10::Float8_e4m3fn)', 'Tensor(float)']".to_owned(),
    });
    let nodes = vec![
        to_proto(&with(1, Some(DataType::Bf16))),
        fp8,
        to_proto(&with(3, Some(DataType::Fp64))),
        to_proto(&with(4, None)),
    ];
    let files = write_raw("dtype", &[nodes]);
    let options = ReplayOptions {
        policy: Policy::Roofline,
        ..ReplayOptions::default()
    };
    let r = &replay(&files, &board, &options).expect("replays").ranks[0];
    // H100 SXM5 datasheet, dense: BF16 989.5, FP8 1979, FP64 tensor 67 TFLOP/s; FP32
    // 132 SMs × 128 × 2 × 1980 MHz = 66.9 TFLOP/s.
    let fp32 = 132.0 * 128.0 * 2.0 * 1980e6;
    let by_hand = flops / 989.5e12 + flops / 1979e12 + flops / 67e12 + flops / fp32;
    assert!(
        (r.compute_time - by_hand).abs() < 1e-12,
        "{r:?} against {by_hand}"
    );
    assert_eq!((r.fp32_fallback, r.kept_recorded), (1, 0), "{r:?}");
}

/// A METADATA node as PyTorch's observer records the process groups and Chakra's
/// converter writes them (crate hetsim-chakra's groups module).
fn process_group_init(id: u64, configs: &str) -> proto::Node {
    let mut n = to_proto(&node(id, "## process_group:init ##", NodeKind::Metadata));
    n.inputs = Some(IoInfo {
        values: format!("['{configs}']"),
        types: "['String']".to_owned(),
    });
    n
}

#[test]
fn collectives_run_over_the_process_groups_a_metadata_node_states() {
    let board = system("examples/training-8gpu/system.toml");
    // 4 ranks; group "1" is ranks 0 and 2, group "2" ranks 1 and 3, the default group all.
    let configs = r#"[{"pg_name": "0", "pg_desc": "default_pg", "ranks": [], "group_size": 4}, {"pg_name": "1", "pg_desc": "dp", "ranks": [0, 2], "group_size": 2}, {"pg_name": "2", "pg_desc": "dp", "ranks": [1, 3], "group_size": 2}]"#;
    let allreduce = |pg: &str| {
        let mut c = node(1, "ncclKernel_AllReduce", NodeKind::CommColl);
        c.attributes.comm_type = Some(0);
        c.attributes.comm_size = Some(1048576.0);
        c.attributes.pg_name = Some(pg.to_owned());
        c.data_deps = vec![0];
        to_proto(&c)
    };
    let ranks: Vec<Vec<proto::Node>> = (0..4)
        .map(|r| {
            vec![
                process_group_init(0, configs),
                allreduce(if r % 2 == 0 { "1" } else { "2" }),
            ]
        })
        .collect();
    let files = write_raw("groups", &ranks);
    let report = replay(&files, &board, &ReplayOptions::default()).expect("replays");
    // Two all-reduces of two ranks at once, each as an app's over its pair: on the
    // NVSwitch the pairs share no link, so each takes a 2-GPU all-reduce's time.
    let pair = hetsim_scripting::run(
        "sim.allreduce(1048576.0);",
        "app.rhai",
        &board,
        &BTreeMap::from([("GPU".to_owned(), 2)]),
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .expect("runs")
    .results
    .overall_time;
    assert_eq!(report.run.results.overall_time, pair);
    for r in &report.ranks {
        assert_eq!((r.ran, r.metadata_nodes, r.comm_nodes), (2, 1, 1), "{r:?}");
    }
    // Over the default group (all 4 ranks) it takes a 4-GPU all-reduce's time, which
    // differs: the groups were read, not all ranks assumed.
    let ranks: Vec<Vec<proto::Node>> = (0..4)
        .map(|_| vec![process_group_init(0, configs), allreduce("0")])
        .collect();
    let all = replay(
        &write_raw("groups-all", &ranks),
        &board,
        &ReplayOptions::default(),
    )
    .expect("replays");
    assert_ne!(all.run.results.overall_time, pair);
    // Two ranks that disagree on a group's members fail, naming the file.
    let other = r#"[{"pg_name": "1", "ranks": [0, 3]}]"#;
    let mut ranks: Vec<Vec<proto::Node>> = (0..4)
        .map(|r| {
            vec![
                process_group_init(0, configs),
                allreduce(if r % 2 == 0 { "1" } else { "2" }),
            ]
        })
        .collect();
    ranks[3][0] = process_group_init(0, other);
    let e = replay(
        &write_raw("groups-bad", &ranks),
        &board,
        &ReplayOptions::default(),
    )
    .expect_err("two memberships");
    assert!(
        e.to_string()
            .contains("groups-bad.3.et: process group \"1\" is [0, 2] in one place and [0, 3]"),
        "{e}"
    );
}
