//! `hetsim validate` and `calibrate gpu` on altered copies of a shipped measurement folder:
//! a file the folder promises that is missing, a cross-validation target missed.

mod common;

use common::oneshot::*;

/// A copy of the shipped H100 folder's own files (its benchmark sets, whose paths are relative
/// to the repository, left out) in a fresh temp folder named after `test`.
fn h100_copy(test: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("hetsim-{test}-{}", std::process::id()));
    let shipped = common::repo().join("examples/validation/data/h100");
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&shipped).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    (dir, shipped)
}

/// A file the folder promises fails `validate` and `calibrate gpu` before anything runs,
/// naming it and what promised it: here heldout_times.csv, which heldout_sm90.sass promises
/// (bench/gpu/run.sh writes the two together).
#[test]
fn a_missing_promised_file_fails_validate_and_calibrate_naming_it() {
    let (dir, _) = h100_copy("promised");
    std::fs::copy(
        common::repo().join("kernel/tests/sass/all_kernels_sm90.sass"),
        dir.join("heldout_sm90.sass"),
    )
    .unwrap();
    let data = dir.to_str().unwrap();
    for args in [&["validate", "--data", data][..], &["calibrate", "gpu", data][..]] {
        let e = failure(args, None);
        assert!(
            e.contains("no heldout_times.csv, which heldout_sm90.sass promises"),
            "{args:?}: {e}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Every target of the report fails `validate` when missed, the cross-validation's too: the
/// H100 folder with its block-size-16 sweep made 1.5× slower misses that fold's 10 %.
#[test]
fn validate_fails_naming_a_missed_cross_validation_target() {
    let (dir, shipped) = h100_copy("perturbed");
    let sweep = std::fs::read_to_string(shipped.join("sweep.csv")).unwrap();
    let slower: Vec<String> = sweep
        .lines()
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            if cells.get(2) != Some(&"16") {
                return line.to_owned();
            }
            let times = cells[5..]
                .iter()
                .map(|t| format!("{:e}", t.parse::<f64>().unwrap() * 1.5));
            cells[..5]
                .iter()
                .map(|c| c.to_string())
                .chain(times)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    std::fs::write(dir.join("sweep.csv"), slower.join("\n") + "\n").unwrap();
    let missed = failure(&["validate", "--data", dir.to_str().unwrap()], None);
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        missed.contains("targets missed") && missed.contains("sweep block 16 held out"),
        "{missed}"
    );
}
