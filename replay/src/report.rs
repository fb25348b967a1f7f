//! What a replay reports: the run's report (as `hetsim run` gives it) and, per rank, its
//! nodes and where its time went.

use std::path::PathBuf;

use hetsim_scripting::RunReport;
use serde::Serialize;

/// One rank of a replay.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankReport {
    pub rank: usize,
    pub file: PathBuf,
    /// Nodes in the file.
    pub nodes: u64,
    /// Nodes that ran (every one, when the replay succeeds), and of them: CPU ops, GPU
    /// computation, communication, METADATA.
    pub ran: u64,
    pub cpu_nodes: u64,
    pub gpu_nodes: u64,
    pub comm_nodes: u64,
    pub metadata_nodes: u64,
    /// Dependencies on ids not in the trace, skipped.
    pub missing_deps: u64,
    /// Control dependencies dropped to break cycles.
    pub dropped_ctrl: u64,
    /// GPU compute nodes whose recorded time the policy kept for want of attributes.
    pub kept_recorded: u64,
    /// GPU compute nodes whose FLOPs the policy timed at FP32's peak (or the GPU's
    /// `peakFlops`) for want of a data type or of the GPU's rate for it.
    pub fp32_fallback: u64,
    /// When its last stream finished [s].
    pub finish_time: f64,
    /// Time with a CPU op in flight [s].
    pub cpu_time: f64,
    /// Time with a GPU compute in flight [s].
    pub compute_time: f64,
    /// Time with a communication in flight [s].
    pub comm_time: f64,
    /// Communication time with no GPU compute in flight [s].
    pub exposed_comm: f64,
}

/// A replay's report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayReport {
    #[serde(flatten)]
    pub run: RunReport,
    /// The compute policy, as given.
    pub policy: String,
    pub ranks: Vec<RankReport>,
}

impl ReplayReport {
    /// The per-rank lines of the text report.
    pub fn rank_lines(&self) -> String {
        let ms = |s: f64| format!("{:.6}", s * 1e3);
        let mut out = String::new();
        for r in &self.ranks {
            out += &format!(
                "rank {}: {} of {} nodes ran ({} CPU, {} GPU compute, {} communication, {} metadata); finished at {} ms; compute {} ms, communication {} ms, exposed communication {} ms, CPU {} ms\n",
                r.rank,
                r.ran,
                r.nodes,
                r.cpu_nodes,
                r.gpu_nodes,
                r.comm_nodes,
                r.metadata_nodes,
                ms(r.finish_time),
                ms(r.compute_time),
                ms(r.comm_time),
                ms(r.exposed_comm),
                ms(r.cpu_time),
            );
            if r.missing_deps + r.dropped_ctrl + r.kept_recorded > 0 {
                out += &format!(
                    "rank {}: {} dependencies on ids not in the trace skipped, {} control dependencies dropped to break cycles, {} GPU nodes kept their recorded time (no num_ops or tensor_size)\n",
                    r.rank, r.missing_deps, r.dropped_ctrl, r.kept_recorded
                );
            }
            if r.fp32_fallback > 0 {
                out += &format!(
                    "rank {}: {} GPU nodes' FLOPs timed at the FP32 peak (no data type, or none the GPU states a rate for)\n",
                    r.rank, r.fp32_fallback
                );
            }
        }
        out
    }
}
