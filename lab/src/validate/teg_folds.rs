//! TEG's four fitted numbers (`efficiency`, `queue_cycles`, `replacement`, `taken_branch`)
//! fitted again without each kernel family they were fitted on, and scored on it: what the
//! family table cannot say of those families, since the shipped numbers saw them. Each fold
//! is `hetsim calibrate gpu --teg-file`'s fit ([`crate::teg_fit`]) on the folder's saxpy2
//! launches and every in-range launch of the sets with a `gpu-teg` system but the family's,
//! from [`crate::teg_fit::UNFITTED_START`] (no fold starts from a point fitted on its family). A fit takes
//! minutes, so `hetsim validate` runs the folds only when asked (`--refit-teg`).

use std::collections::BTreeSet;

use anyhow::{anyhow, Result};
use hetsim_teg::arch::SHIPPED;
use hetsim_teg::{ArchParams, Gpu};

use super::families::targets;
use super::{check, Basis, Check, Point};
use crate::benchset::BenchSet;
use crate::measurements::Measurements;
use crate::teg_fit::{leave_one_family_out, FitInputs, Fold, TegPoint};

const MODEL: &str = "gpu-teg";

/// The "not run" line where the folds were not asked for.
pub(super) const NOT_ASKED: &str = "TEG refitted without each family it is fitted on: not run: give --refit-teg (a TEG fit per family, minutes each)";

/// Whether a set of `sets` has TEG fitted on a family of its, so that the folds would run.
pub(super) fn applies(sets: &[BenchSet]) -> bool {
    sets.iter().any(folds_in)
}

fn folds_in(set: &BenchSet) -> bool {
    set.systems.contains_key(MODEL) && set.families.values().any(|f| f.fitted_for(MODEL).is_some())
}

/// One row per family TEG was fitted on, then those held out together; none where no set
/// with a `gpu-teg` system names a family TEG was fitted on. `gpu` is the catalog GPU TEG
/// runs on; `stage` is told each fold's progress.
pub(super) fn checks(
    m: &Measurements,
    sets: &[BenchSet],
    gpu: &str,
    stage: &dyn Fn(&str),
) -> Result<Vec<Check>> {
    let sets: Vec<BenchSet> = sets.iter().filter(|s| folds_in(s)).cloned().collect();
    if sets.is_empty() {
        return Ok(Vec::new());
    }
    let (file, text) = shipped_file(gpu)?;
    let inputs = FitInputs::new(m, &sets, gpu, text, file)?;
    let mut launches = inputs.launches(m)?;
    let folded: BTreeSet<String> = sets
        .iter()
        .flat_map(|set| {
            let name = set.name();
            set.families
                .iter()
                .filter(|(_, f)| f.fitted_for(MODEL).is_some())
                .map(move |(family, _)| format!("{name}: {family}"))
        })
        .filter(|family| launches.iter().any(|l| l.family == *family))
        .collect();
    let folded: Vec<String> = folded.into_iter().collect();
    let told = |family: &str, points: usize, least: f64| {
        stage(&format!(
            "TEG refitted without {family}: {points} points scored, least MAPE {:.2} %",
            least * 100.0
        ))
    };
    let folds = leave_one_family_out(&mut launches, &inputs.gpu, &folded, &told);
    let (per_family, overall) = sets
        .iter()
        .map(|s| targets(s, MODEL))
        .fold((0.0, 0.0), |(f, o), (tf, to)| (f64::max(f, tf), f64::max(o, to)));
    let mut out = Vec::new();
    let mut held_out = Vec::new();
    for fold in &folds {
        let points = points(fold, &launches);
        let basis = basis(&sets, &fold.family);
        out.push(check(
            &format!(
                "{} (gpu-teg), TEG fitted without it: {}",
                fold.family,
                describe(fold.fit.point)
            ),
            basis,
            &points,
            per_family,
            f64::INFINITY,
        ));
        if basis == Basis::HeldOut {
            held_out.extend(points);
        }
    }
    if !held_out.is_empty() {
        out.push(check(
            "every family TEG is fitted on, each held out of its fit in turn (gpu-teg)",
            Basis::HeldOut,
            &held_out,
            overall,
            f64::INFINITY,
        ));
    }
    Ok(out)
}

/// The shipped TEG data file that serves `gpu`'s architecture, its name and text.
fn shipped_file(gpu: &str) -> Result<(&'static str, &'static str)> {
    let arch = Gpu::from_catalog(gpu)
        .and_then(|g| g.arch())
        .map_err(|e| anyhow!("{gpu}: {e}"))?;
    SHIPPED
        .iter()
        .find(|(file, text)| ArchParams::parse(text, file).is_ok_and(|p| p.majors.contains(&arch.major)))
        .copied()
        .ok_or_else(|| anyhow!("{gpu}: no TEG data file serves {arch}"))
}

/// The family's launches at its fold's point.
fn points(fold: &Fold, launches: &[crate::teg_fit::TegLaunch]) -> Vec<Point> {
    fold.held
        .iter()
        .map(|&(i, predicted)| Point {
            what: launches[i].what.clone(),
            measured: launches[i].seconds,
            predicted,
            interval: [predicted, predicted],
        })
        .collect()
}

/// Held-out, unless the family's launches fixed a number no fold fits again: the L2 figure
/// (`l2_resident`) or the latency table (`latency_bound`).
fn basis(sets: &[BenchSet], family: &str) -> Basis {
    let marked = sets.iter().any(|set| {
        let name = set.name();
        set.families.iter().any(|(f, d)| {
            format!("{name}: {f}") == family && !(d.l2_resident.is_empty() && d.latency_bound.is_empty())
        })
    });
    if marked {
        Basis::InSample
    } else {
        Basis::HeldOut
    }
}

fn describe(p: TegPoint) -> String {
    format!(
        "efficiency {}, queue_cycles {}, replacement {}, taken_branch {}",
        p.efficiency, p.queue_cycles, p.replacement, p.taken_branch
    )
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::teg_fit::fit;

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// A folder of props.csv, launch.csv and one set of two kit families TEG is fitted on
    /// (sfu_loop, and daxpy2 up to intensity 64), on the kit's own app and `gpu-teg` system.
    fn two_family_folder() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hetsim-teg-folds-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        let h100 = repo().join("examples/validation/data/h100");
        for file in ["props.csv", "launch.csv"] {
            std::fs::copy(h100.join(file), dir.join(file)).unwrap();
        }
        let kit = std::fs::read_to_string(h100.join("kit/kernels.csv")).unwrap();
        let rows: Vec<&str> = kit
            .lines()
            .filter(|l| {
                l.starts_with("kernel,")
                    || l.starts_with("sfu_loop,")
                    || (l.starts_with("daxpy2,")
                        && ["intensity=1;", "intensity=8;", "intensity=64;"]
                            .iter()
                            .any(|i| l.contains(i)))
            })
            .collect();
        std::fs::write(dir.join("kernels.csv"), rows.join("\n") + "\n").unwrap();
        let kernels = repo().join("examples/validation/kernels");
        let fitted = "fitted = { gpu-teg = \"TEG's four numbers\" }";
        std::fs::write(
            dir.join("benchset.toml"),
            format!(
                "times = \"kernels.csv\"\nfamily = \"kernel\"\nparams = \"params\"\nseconds = \"median_seconds\"\napp = \"{}\"\nsystems = {{ gpu-teg = \"{}\" }}\n[families.sfu_loop]\nkernel = \"sfu_loop\"\n{fitted}\n[families.daxpy2]\nkernel = \"daxpy2\"\n{fitted}\n",
                kernels.join("app.rhai").display(),
                kernels.join("h100-teg.toml").display()
            ),
        )
        .unwrap();
        dir
    }

    /// Each family TEG was fitted on is scored at a fit that never saw it, the same fit as a
    /// search run on the other family alone (the folds share the points they run, not what
    /// they fit on), and the families held out together make the summary row.
    #[test]
    fn each_family_is_scored_at_a_fit_without_it() {
        let dir = two_family_folder();
        let m = Measurements::read(&dir).expect("the folder");
        let sets = BenchSet::in_folder(&dir).expect("the set");
        let gpu = "H100 SXM5 80GB";
        let rows = checks(&m, &sets, gpu, &|_| {}).expect("the folds");
        let name = sets[0].name();
        let names: Vec<&str> = rows.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(rows.len(), 3, "{names:?}");
        assert!(names[0].starts_with(&format!(
            "{name}: daxpy2 (gpu-teg), TEG fitted without it: efficiency "
        )));
        assert!(names[1].starts_with(&format!("{name}: sfu_loop (gpu-teg), TEG fitted without it")));
        assert_eq!(
            names[2],
            "every family TEG is fitted on, each held out of its fit in turn (gpu-teg)"
        );
        assert_eq!([rows[0].points, rows[1].points, rows[2].points], [6, 5, 11]);
        assert!(rows.iter().all(|c| c.basis == Basis::HeldOut));

        // The sfu_loop fold, fitted again on daxpy2's launches alone.
        let (file, text) = shipped_file(gpu).expect("Hopper's file");
        let inputs = FitInputs::new(&m, &sets, gpu, text, file).expect("inputs");
        let mut daxpy2: Vec<_> = inputs
            .launches(&m)
            .expect("planned")
            .into_iter()
            .filter(|l| l.family.ends_with(": daxpy2"))
            .collect();
        let alone = fit(
            &mut daxpy2,
            &inputs.gpu,
            crate::teg_fit::UNFITTED_START,
            &|_, _| {},
        );
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            rows[1].name.ends_with(&describe(alone.point)),
            "{} against {:?}",
            rows[1].name,
            alone.point
        );
    }
}
