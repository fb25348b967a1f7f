//! The checks of a validation that did not run, each in words: a file nothing promised is
//! missing (crate::measurements, "Missing files"), or the folder has no benchmark set for
//! them (a set's descriptor says which of its files there are: it promises each one it
//! names). A promised file that is missing is an error before anything runs, never a line
//! here.

use crate::benchset::BenchSet;
use crate::measurements::Measurements;
use crate::set_samples::calibrates;

/// The optional files of a measurement folder and the checks that read them.
const CHECKS_OF: [(&str, &str); 5] = [
    (
        "sweep.csv",
        "sweep.csv (saxpy2 by block size and intensity: gpu-queueing and TEG, the cross-validation by block size, error bars)",
    ),
    (
        "occupancy_block256.csv",
        "occupancy_block256.csv (saxpy2 by occupancy: gpu-queueing and TEG, the cross-validation by occupancy level, error bars)",
    ),
    (
        "transfers.csv",
        "transfers.csv (pinned and pageable copies ≥ 1 MiB, both directions, and their error bars)",
    ),
    ("power.csv", "power.csv (steady board power)"),
    ("heldout_times.csv", "heldout_times.csv (kernels, TEG)"),
];

/// One line per check that did not run on the folder `m` with the benchmark sets `sets`.
pub(super) fn lines(m: &Measurements, sets: &[BenchSet]) -> Vec<String> {
    let mut out: Vec<String> = CHECKS_OF
        .iter()
        .filter(|(file, _)| m.lacks(file))
        .map(|(file, check)| format!("{check}: not run: no {file}"))
        .collect();
    if sets.is_empty() {
        out.push(
            "kernel families and gpu-queueing refitted without each: not run: no benchmark set (benchset.toml) in the folder or its sub-folders"
                .to_owned(),
        );
    } else if !sets.iter().any(calibrates) {
        out.push(
            "gpu-queueing refitted without each kernel family: not run: no benchmark set names a gpu-queueing system"
                .to_owned(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn the_shipped_folders_say_what_did_not_run() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data");
        let lines_of = |folder: &str| {
            let dir = root.join(folder);
            let m = Measurements::read(&dir).expect("reads");
            lines(&m, &BenchSet::in_folder(&dir).expect("its sets"))
        };
        assert_eq!(
            lines_of("h100"),
            ["heldout_times.csv (kernels, TEG): not run: no heldout_times.csv"]
        );
        let h200 = lines_of("h200");
        assert_eq!(h200.len(), 2, "{h200:?}");
        assert!(h200[0].starts_with("transfers.csv (") && h200[0].ends_with("not run: no transfers.csv"));
        assert_eq!(
            h200[1],
            "heldout_times.csv (kernels, TEG): not run: no heldout_times.csv"
        );
    }
}
