//! Leave-one-kernel-family-out, and leave-one-block-size-out within a family: the
//! `gpu-queueing` model's four fitted attributes (memoryQueueCycles, issueEfficiency,
//! blockLaunchRate, warpSkew) calibrated again, as `hetsim calibrate gpu --set` does, on the
//! folder's saxpy2 launches and every launch of its benchmark sets but one group, then scored
//! on the group it never saw. Every quantity of the timing model is fitted inside the fold,
//! save the architecture's L2 figure, which is fitted on the kit's saxpy2_l2 alone, and the
//! latency table's two figures, fitted on saxpy2's latency-bound level or on the family a
//! set marks `latency_bound`: a family whose descriptor says so (or marks it) stays in-sample.
//!
//! This answers a question the catalog's figures cannot: does calibrating on more kinds of
//! kernel (a user's own set, `--set`) predict a kind it has not seen better than saxpy2 alone?

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{anyhow, Result};
use hetsim_models::queueing::calibration::{calibrate, Sample};
use hetsim_models::queueing::{evaluate, Device, Input};

use super::families::targets;
use super::{check, Basis, Check, Point};
use crate::benchset::BenchSet;
use crate::gpu::{base_device, plain, samples};
use crate::measurements::Measurements;
use crate::set_samples::{calibrates, set_samples, SetSample};

/// The refit's checks for the folder `m` and its benchmark sets: one row per family held out,
/// the held-out families together, then one row per family with each of its block sizes held
/// out in turn. The targets are the family table's for `gpu-queueing` (the loosest of the
/// sets' own, where they differ). None when no set has a `gpu-queueing` system, or the folder
/// has no launch.csv to start a calibration from.
pub fn checks(m: &Measurements, sets: &[BenchSet]) -> Result<Vec<Check>> {
    let sets: Vec<&BenchSet> = sets.iter().filter(|s| calibrates(s)).collect();
    if sets.is_empty() || m.launches.is_empty() {
        return Ok(Vec::new());
    }
    let mut launches = Vec::new();
    for set in &sets {
        launches.extend(set_samples(set)?);
    }
    let (per_family, overall) = sets
        .iter()
        .map(|s| targets(s, "gpu-queueing"))
        .fold((0.0, 0.0), |(f, o), (tf, to)| (f64::max(f, tf), f64::max(o, to)));
    let base = base_device(m)?;
    let saxpy2 = plain(&samples(m)?);
    let fold = Fold {
        dir: &m.dir,
        base: &base,
        saxpy2: &saxpy2,
        launches: &launches,
    };
    let families: BTreeSet<&str> = launches.iter().map(|l| l.family.as_str()).collect();
    let mut out = Vec::new();
    let mut held_out = Vec::new();
    for &family in &families {
        let points = fold.predict(family, |l| l.family == family)?;
        let basis = fold.basis(family);
        if basis == Basis::HeldOut {
            held_out.extend(points.iter().cloned());
        }
        out.push(check(
            &format!("{family} held out of the fit"),
            basis,
            &points,
            per_family,
            f64::INFINITY,
        ));
    }
    out.push(check(
        "every held-out family, each held out in turn",
        Basis::HeldOut,
        &held_out,
        overall,
        f64::INFINITY,
    ));
    for &family in &families {
        let blocks: BTreeSet<u64> = launches
            .iter()
            .filter(|l| l.family == family)
            .map(|l| l.sample.kernel.block_size.to_bits())
            .collect();
        if blocks.len() < 2 {
            continue;
        }
        let mut points = Vec::new();
        for &block in &blocks {
            let what = format!("{family}, block {}", f64::from_bits(block));
            points.extend(fold.predict(&what, |l| {
                l.family == family && l.sample.kernel.block_size.to_bits() == block
            })?);
        }
        out.push(check(
            &format!("{family}, each block size held out of the fit in turn"),
            fold.basis(family),
            &points,
            per_family,
            f64::INFINITY,
        ));
    }
    Ok(out)
}

/// What every fold calibrates from.
struct Fold<'a> {
    /// The measurement folder, for errors.
    dir: &'a Path,
    base: &'a Device,
    saxpy2: &'a [Sample],
    launches: &'a [SetSample],
}

impl Fold<'_> {
    /// The launches `held_out` picks (`what`, for errors), predicted by a calibration on the
    /// saxpy2 launches and every other launch of the sets.
    fn predict(&self, what: &str, held_out: impl Fn(&SetSample) -> bool) -> Result<Vec<Point>> {
        let (test, train): (Vec<&SetSample>, Vec<&SetSample>) =
            self.launches.iter().partition(|l| held_out(l));
        let samples: Vec<Sample> = self
            .saxpy2
            .iter()
            .cloned()
            .chain(train.into_iter().map(|l| l.sample.clone()))
            .collect();
        let device = calibrate(self.base, &samples)
            .ok_or_else(|| {
                anyhow!(
                    "{}: with {what} held out, no launch is left to calibrate on (no saxpy2 launch, no other family)",
                    self.dir.display()
                )
            })?
            .apply(self.base);
        Ok(test
            .into_iter()
            .map(|l| {
                let predicted = evaluate(&Input {
                    device: device.clone(),
                    kernel: l.sample.kernel.clone(),
                })
                .seconds;
                Point {
                    what: l.what.clone(),
                    measured: l.sample.seconds,
                    predicted,
                    interval: [predicted, predicted],
                }
            })
            .collect())
    }

    /// In-sample where the family's descriptor names something fitted on it.
    fn basis(&self, family: &str) -> Basis {
        if self.launches.iter().any(|l| l.family == family && l.fitted) {
            Basis::InSample
        } else {
            Basis::HeldOut
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use hetsim_system::Variable;

    use super::super::simulator::Simulator;
    use super::*;
    use crate::gpu::calibrate_folder;

    fn h100() -> &'static Path {
        Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/validation/data/h100"
        ))
    }

    /// The samples are the application path's launches: the validation app on the set's
    /// gpu-queueing system gives each launch the time the pure model gives its sample on the
    /// same calibration (the catalog keeps five significant digits of it, hence the tolerance).
    #[test]
    fn set_samples_time_as_the_application_path_does() {
        let m = Measurements::read(h100()).expect("reads");
        let device = calibrate_folder(&m, None, &[]).expect("calibrates").device;
        for set in ["kit", "families"] {
            let set = BenchSet::read(&h100().join(set).join("benchset.toml")).expect("reads");
            let sim = Simulator::load(&set.app, &set.systems["gpu-queueing"], None).expect("loads");
            let samples = set_samples(&set).expect("samples");
            let in_range = set
                .launches
                .iter()
                .filter(|l| set.families[&l.family].in_range(&l.variables));
            let mut compared = 0;
            for (launch, s) in in_range.zip(&samples) {
                let vars: Vec<(&str, Variable)> = launch
                    .variables
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.clone()))
                    .collect();
                let app = sim.run(&vars).expect("runs").results.overall_time;
                let model = evaluate(&Input {
                    device: device.clone(),
                    kernel: s.sample.kernel.clone(),
                })
                .seconds;
                assert!(
                    (model / app - 1.0).abs() < 1e-3,
                    "{}: app {app}, samples {model}",
                    s.what
                );
                compared += 1;
            }
            assert_eq!(compared, samples.len());
            assert!(compared >= 26, "{compared} launches");
        }
    }
}
