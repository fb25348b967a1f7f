//! The example trace the repository ships (examples/traces/dp-step.N.et): one data-parallel
//! training step of a 4-layer model on 8 GPUs, written by hetsim's trace writer. This test
//! writes it again and compares, so the files stay what this code says; with
//! `HETSIM_WRITE_EXAMPLES=1` it (re)writes them. It then replays them and checks the step.

use std::path::{Path, PathBuf};

use hetsim_chakra::writer::{cpu_op, node, trace_bytes};
use hetsim_chakra::{NodeKind, TraceNode};
use hetsim_replay::{replay, Policy, ReplayOptions};

const RANKS: usize = 8;
const LAYERS: u64 = 4;
/// A layer's weights: 4096 × 4096 bf16 [bytes].
const WEIGHTS: f64 = 4096.0 * 4096.0 * 2.0;

fn kernel(id: u64, name: &str, micros: u64, flops: f64, bytes: f64, deps: Vec<u64>) -> TraceNode {
    let mut n = node(id, name, NodeKind::Comp);
    n.duration_micros = micros;
    n.attributes.num_ops = Some(flops);
    n.attributes.tensor_size = Some(bytes);
    n.data_deps = deps;
    n
}

/// One rank's step: per layer a CPU op launching a forward GEMM; the backward GEMMs in
/// reverse, each followed by an all-reduce of its layer's gradients (which overlaps the
/// next backward GEMM); the optimizer after every all-reduce.
pub fn step() -> Vec<TraceNode> {
    let gemm = 2.0 * 4096.0 * 4096.0 * 8192.0;
    let mut nodes = Vec::new();
    let mut previous: Vec<u64> = Vec::new();
    for l in 0..LAYERS {
        let mut launch = cpu_op(10 + 2 * l, "aten::linear", 15);
        if l > 0 {
            launch.ctrl_deps = vec![10 + 2 * (l - 1)];
        }
        let mut deps = vec![launch.id];
        deps.extend(&previous);
        nodes.push(launch);
        let k = kernel(11 + 2 * l, "gemm_fwd", 520, gemm, 3.0 * WEIGHTS, deps);
        previous = vec![k.id];
        nodes.push(k);
    }
    let mut reductions = Vec::new();
    for l in (0..LAYERS).rev() {
        let k = kernel(
            100 + l,
            "gemm_bwd",
            1040,
            2.0 * gemm,
            4.0 * WEIGHTS,
            previous.clone(),
        );
        previous = vec![k.id];
        let mut ar = node(
            200 + l,
            "ncclKernel_AllReduce_RING_LL_Sum_bfloat16",
            NodeKind::CommColl,
        );
        ar.attributes.comm_type = Some(0);
        ar.attributes.comm_size = Some(WEIGHTS);
        ar.data_deps = vec![k.id];
        reductions.push(ar.id);
        nodes.push(k);
        nodes.push(ar);
    }
    nodes.push(kernel(
        300,
        "adam",
        180,
        0.0,
        4.0 * LAYERS as f64 * WEIGHTS,
        reductions,
    ));
    nodes
}

fn files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/traces");
    (0..RANKS).map(|r| dir.join(format!("dp-step.{r}.et"))).collect()
}

#[test]
fn the_shipped_example_is_what_the_writer_writes_and_it_replays() {
    let expected = trace_bytes("1.0.1", &step());
    for file in files() {
        if std::env::var_os("HETSIM_WRITE_EXAMPLES").is_some() {
            std::fs::write(&file, &expected).expect("writes the example");
        }
        let shipped = std::fs::read(&file).expect("the example trace is in examples/traces");
        assert_eq!(
            shipped,
            expected,
            "{} (HETSIM_WRITE_EXAMPLES=1 rewrites it)",
            file.display()
        );
    }
    let system = hetsim_system::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/clusters/hgx-h100.toml"),
    )
    .expect("loads");
    let replayed = replay(&files(), &system, &ReplayOptions::default()).expect("replays");
    let roofline = ReplayOptions {
        policy: Policy::Roofline,
        ..ReplayOptions::default()
    };
    let retimed = replay(&files(), &system, &roofline).expect("replays");
    for (r, q) in replayed.ranks.iter().zip(&retimed.ranks) {
        assert_eq!(
            (r.ran, r.nodes, r.cpu_nodes, r.gpu_nodes, r.comm_nodes),
            (17, 17, 4, 9, 4)
        );
        // Recorded: 4 × 520 + 4 × 1040 + 180 µs of kernels.
        assert!((r.compute_time - 6420e-6).abs() < 1e-12, "{r:?}");
        // Three of the four all-reduces hide behind the next backward GEMM.
        assert!(r.exposed_comm > 0.0 && r.exposed_comm < r.comm_time, "{r:?}");
        // The GEMMs state no data type: the roofline times their FLOPs at the H100's FP32
        // peak (66.9 TFLOP/s), the fallback, counted (8 a rank), slower than the recorded
        // (tensor-core) kernels: 275 GFLOP at 66.9 TFLOP/s is 4.1 ms, not 0.52.
        assert!(q.compute_time > 5.0 * r.compute_time, "{q:?}");
        assert_eq!(q.fp32_fallback, 8, "{q:?}");
    }
}
