//! A large trace replayed: wall time and peak memory (issue 44's speed target, 10⁶ nodes in
//! ≤ 5 s on one core, ≤ 200 bytes a node held). RANKS ranks (default 64) of a training
//! loop, each step a CPU op, its kernel and, every tenth step, an all-reduce of 1 MiB
//! after the kernel: 16,002 nodes a rank. The ranks run on `examples/clusters/h100-ib.toml`
//! with as many boards as they need, under `--compute replay`.
//! Run: `cargo bench -p hetsim-replay --bench replay -- 64`; `-- 64 --keep DIR` writes the
//! trace to `DIR/train.N.et` and leaves it there (for replaying it with other simulators,
//! `bench/replay.py --trace DIR/train`), where by default it goes to a temporary folder that
//! is removed after.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use hetsim_chakra::writer::{cpu_op, node, trace_bytes};
use hetsim_chakra::{NodeKind, TraceNode};
use hetsim_replay::{replay, ReplayOptions};
use hetsim_system::{load_with, Variable};

/// Steps a rank takes: 16,002 nodes with its all-reduces.
const STEPS: u64 = 7_620;

/// Peak resident memory of this process [KiB], from /proc (Linux).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// One rank's nodes: step s is CPU op 3s, kernel 3s + 1 after it, and every tenth step an
/// all-reduce 3s + 2 after the kernel; each CPU op follows the step before.
fn rank_nodes() -> Vec<TraceNode> {
    let mut nodes = Vec::new();
    let mut last = None;
    for step in 0..STEPS {
        let id = 3 * step;
        let mut cpu = cpu_op(id, "aten::linear", 5);
        cpu.ctrl_deps = last.into_iter().collect();
        let mut kernel = node(id + 1, "sm90_gemm", NodeKind::Comp);
        kernel.duration_micros = 40;
        kernel.data_deps = vec![id];
        last = Some(id + 1);
        nodes.extend([cpu, kernel]);
        if step % 10 == 0 {
            let mut all_reduce = node(id + 2, "nccl:all_reduce", NodeKind::CommColl);
            all_reduce.attributes.comm_type = Some(0);
            all_reduce.attributes.comm_size = Some(f64::from(1 << 20));
            all_reduce.data_deps = vec![id + 1];
            last = Some(id + 2);
            nodes.push(all_reduce);
        }
    }
    nodes
}

/// Writes the trace's RANKS files under `dir`; returns them.
fn write_trace(dir: &Path, ranks: usize) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).expect("a folder");
    let bytes = trace_bytes("0.0.4", &rank_nodes());
    (0..ranks)
        .map(|r| {
            let file = dir.join(format!("train.{r}.et"));
            std::fs::write(&file, &bytes).expect("writes");
            file
        })
        .collect()
}

fn main() {
    // RANKS and `--keep DIR`; other arguments (cargo's `--bench`) are ignored.
    let mut ranks = 64;
    let mut keep = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--keep" {
            keep = Some(PathBuf::from(args.next().expect("--keep DIR: a folder")));
        } else if let Ok(n) = arg.parse() {
            ranks = n;
        }
    }
    let dir = keep
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("hetsim-replay-bench-{}", std::process::id())));
    let files = write_trace(&dir, ranks);
    let boards = ranks.div_ceil(8).max(2);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let variables = BTreeMap::from([("boards".to_owned(), Variable::Int(boards as i64))]);
    let system =
        load_with(&root.join("examples/clusters/h100-ib.toml"), &variables).expect("the cluster loads");
    let started = Instant::now();
    let report = replay(&files, &system, &ReplayOptions::default()).expect("the trace replays");
    let wall = started.elapsed().as_secs_f64();
    let nodes: u64 = report.ranks.iter().map(|r| r.nodes).sum();
    let rss = peak_rss_kib().unwrap_or(0);
    println!(
        "replay of {ranks} ranks, {nodes} nodes: simulated {:.6} s, wall {wall:.2} s, {:.2} µs a node, peak RSS {} MiB ({:.0} bytes a node)",
        report.run.results.overall_time,
        wall / nodes as f64 * 1e6,
        rss / 1024,
        rss as f64 * 1024.0 / nodes as f64
    );
    if keep.is_some() {
        println!("trace kept: {}", dir.join("train").display());
    } else {
        std::fs::remove_dir_all(&dir).ok();
    }
}
