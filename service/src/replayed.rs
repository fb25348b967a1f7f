//! A stored trace replayed by a worker: its rank files written to a private folder (the
//! replay reads files, rank by rank, as `hetsim replay` does) and replayed with
//! hetsim-replay on the run's system. The report is a run's, so a replayed trace is stored,
//! listed and read like a run of an app; the per-rank breakdown goes to the run's log. The
//! run's memory budget is not checked during a replay (its sandbox checks run in scripts,
//! which a replay has none of): a replay is bounded by the trace, which the body limit bounds.

use std::path::{Path, PathBuf};

use hetsim_replay::{Policy, ReplayOptions};
use hetsim_scripting::RunReport;
use hetsim_simulator::Options;
use hetsim_system::System;

use crate::storage::TraceFile;

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
            let name = Path::new(&file.name)
                .file_name()
                .map_or_else(|| PathBuf::from("trace.et"), PathBuf::from);
            let path = folder.join(name);
            std::fs::write(&path, &file.data).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(path)
        })
        .collect()
}

/// Replays `files` (rank 0 first) on `system` under the compute policy `compute`, as
/// `hetsim replay --compute COMPUTE` does with its defaults (label `GPU`, NCCL's
/// algorithms, control dependencies followed).
pub fn replay(
    files: &[TraceFile],
    compute: &str,
    system: &System,
    engine: &Options,
) -> Result<RunReport, String> {
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
        engine: engine.clone(),
        ..ReplayOptions::default()
    };
    // Errors name a file as `RANK/NAME`, not by the scratch folder, which is gone after.
    let prefix = format!("{}{}", dir.0.display(), std::path::MAIN_SEPARATOR);
    let report = hetsim_replay::replay(&paths, system, &options)
        .map_err(|e| format!("replay failed: {}", e.to_string().replace(&prefix, "")))?;
    let ranks = report.rank_lines();
    let mut run = report.run;
    run.log.push(format!("compute policy: {}", report.policy));
    run.log.extend(ranks.lines().map(str::to_owned));
    Ok(run)
}
