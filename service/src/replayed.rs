//! A stored trace replayed by a worker: its rank files written to a private folder (the
//! replay reads files, rank by rank, as `hetsim replay` does) and replayed with
//! hetsim-replay on the run's system. The report is a run's, so a replayed trace is stored,
//! listed and read like a run of an app; the per-rank breakdown is stored with the result
//! (`RankBreakdown`) and its text lines go to the run's log, under the run's log limits. A cancelled replay stops at its streams' next turn. The run's
//! memory budget is not checked during a replay (its sandbox checks run in scripts, which a
//! replay has none of): a replay is bounded by the trace's nodes, which storing bounds
//! (`check_trace`).

use std::path::{Path, PathBuf};

use hetsim_replay::{Policy, RankReport, ReplayOptions};
use hetsim_scripting::process::RunLog;
use hetsim_scripting::{RunOptions, RunReport};
use hetsim_system::System;

use crate::storage::{file_name, RankBreakdown, TraceFile};

/// The run variable that holds a replayed trace's compute policy (set at submit, one per
/// run, so that a sweep may vary it).
pub const COMPUTE_VARIABLE: &str = "compute";

/// A folder removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            tracing::warn!("removing {}: {e}", self.0.display());
        }
    }
}

/// Writes rank r's file as `DIR/r/NAME` (NAME its stored name less any folders, so that a
/// name cannot lead out of the folder, and two ranks' files of one name do not collide).
fn write_ranks(dir: &Path, files: &[TraceFile]) -> Result<Vec<PathBuf>, String> {
    files
        .iter()
        .enumerate()
        .map(|(rank, file)| {
            let folder = dir.join(rank.to_string());
            std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
            let path = folder.join(file_name(&file.name));
            std::fs::write(&path, &file.data).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(path)
        })
        .collect()
}

/// Replays `files` (rank 0 first) on `system` under the compute policy `compute`, as
/// `hetsim replay --compute COMPUTE` does with its defaults (label `GPU`, NCCL's
/// algorithms, control dependencies followed), with the engine options, cancel flag and
/// log limits of `run`. Returns the run's report and the per-rank breakdown.
pub fn replay(
    files: &[TraceFile],
    compute: &str,
    system: &System,
    run: &RunOptions,
) -> Result<(RunReport, Vec<RankBreakdown>), String> {
    // Refused at submit too: a worker must never read a file that a stored input names.
    if compute.starts_with("model:") {
        return Err(format!(
            "compute {compute:?}: a server replays with replay, roofline or scale:GPU only"
        ));
    }
    let dir = Scratch(std::env::temp_dir().join(format!("hetsim-trace-{}", uuid::Uuid::new_v4())));
    let paths = write_ranks(&dir.0, files)?;
    let options = ReplayOptions {
        policy: Policy::parse(compute)?,
        policy_text: compute.to_owned(),
        engine: run.engine.clone(),
        cancel: run.cancel.clone(),
        ..ReplayOptions::default()
    };
    // Errors name a file as `RANK/NAME`, not by the scratch folder, which is gone after.
    let prefix = format!("{}{}", dir.0.display(), std::path::MAIN_SEPARATOR);
    let report = hetsim_replay::replay(&paths, system, &options)
        .map_err(|e| format!("replay failed: {}", e.to_string().replace(&prefix, "")))?;
    let lines = std::iter::once(format!("compute policy: {}", report.policy))
        .chain(report.rank_lines().lines().map(str::to_owned))
        .collect::<Vec<_>>();
    let ranks = report.ranks.iter().map(breakdown).collect();
    let mut replayed = report.run;
    let mut log = RunLog {
        bytes: replayed.log.iter().map(String::len).sum(),
        lines: std::mem::take(&mut replayed.log),
        dropped: replayed.log_dropped,
        limit: run.limits.max_log_lines,
        byte_limit: run.limits.max_log_bytes,
    };
    for line in lines {
        log.push(line);
    }
    (replayed.log, replayed.log_dropped) = (log.lines, log.dropped);
    Ok((replayed, ranks))
}

/// What a server keeps of a rank's report: its path is the scratch folder's, gone after.
fn breakdown(r: &RankReport) -> RankBreakdown {
    RankBreakdown {
        rank: r.rank,
        nodes: r.nodes,
        ran: r.ran,
        finish_time: r.finish_time,
        compute_time: r.compute_time,
        comm_time: r.comm_time,
        exposed_comm: r.exposed_comm,
        cpu_time: r.cpu_time,
        cpu_nodes: r.cpu_nodes,
        gpu_nodes: r.gpu_nodes,
        comm_nodes: r.comm_nodes,
        metadata_nodes: r.metadata_nodes,
        missing_deps: r.missing_deps,
        dropped_ctrl: r.dropped_ctrl,
    }
}
