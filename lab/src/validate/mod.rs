//! `hetsim validate`: the validation example (examples/validation/saxpy2) run for every
//! measured configuration of a measurement folder, through the whole stack (system file,
//! catalog, kernel analyser, Rhai models, engine), against what the GPU measured.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{anyhow, Result};
use hetsim_models::queueing::calibration::{error_bars, out_of_fold, relative_error, Residual};
use hetsim_system::Variable;
use serde::Serialize;

use crate::benchset::BenchSet;
use crate::gpu::{folds, groups, plain, samples};
use crate::latency_fit::LATENCY_BOUND_WARPS;
use crate::measurements::Measurements;
use crate::saxpy2;

pub mod coverage;
mod families;
mod not_run;
mod power;
mod refit;
mod report;
mod simulator;
mod teg;
mod teg_folds;
use coverage::Coverage;
use simulator::{gpu_power, Simulator};

pub use report::{table, write_report};

/// One measured configuration and the simulated figure for it.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub what: String,
    pub measured: f64,
    pub predicted: f64,
    /// The prediction's 90 % error bar (`overall_time_interval`).
    pub interval: [f64; 2],
}

impl Point {
    fn error(&self) -> f64 {
        relative_error(self.predicted, self.measured)
    }
}

/// Whether the points of a check were used to fit what predicts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// Something that predicts these points was fitted on them.
    InSample,
    /// Nothing that predicts these points was fitted on them.
    HeldOut,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::InSample => "in-sample",
            Basis::HeldOut => "held-out",
        }
    }
}

/// The error of one group of points against its target.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub name: String,
    pub basis: Basis,
    pub points: usize,
    pub mape: f64,
    pub worst: f64,
    pub worst_at: String,
    /// MAPE ceiling and worst-case ceiling (both fractions).
    pub target_mape: f64,
    pub target_worst: f64,
    pub pass: bool,
}

fn check(name: &str, basis: Basis, points: &[Point], target_mape: f64, target_worst: f64) -> Check {
    let errs: Vec<f64> = points.iter().map(|p| p.error().abs()).collect();
    let mape = errs.iter().sum::<f64>() / errs.len().max(1) as f64;
    let (worst, worst_at) = points
        .iter()
        .zip(&errs)
        .fold((0.0, String::new()), |(w, at), (p, &e)| {
            if e > w {
                (e, p.what.clone())
            } else {
                (w, at)
            }
        });
    Check {
        name: name.to_owned(),
        basis,
        points: points.len(),
        mape,
        worst,
        worst_at,
        target_mape,
        target_worst,
        pass: !points.is_empty() && mape <= target_mape && worst <= target_worst,
    }
}

/// Everything `hetsim validate` found.
#[derive(Clone, Debug, Serialize)]
pub struct Validation {
    pub data: String,
    /// The system file the saxpy2 application ran on.
    pub system: String,
    /// The catalog GPU that replaced the systems' own (`--gpu`), if any.
    pub gpu: Option<String>,
    /// Whether nothing of the system's GPU was fitted on `data` (`validate`'s `held_out`).
    pub held_out: bool,
    pub checks: Vec<Check>,
    pub sweep: Vec<(KernelKey, Point)>,
    pub occupancy: Vec<(KernelKey, Point)>,
    pub transfers: Vec<(TransferKey, Point)>,
    pub power: Vec<Point>,
    pub cross_validation: Vec<Check>,
    pub error_bars: Vec<Coverage>,
    /// The benchmark sets' kernel families by GPU model.
    pub families: Vec<Check>,
    /// The `gpu-queueing` model calibrated again without each kernel family (or block size
    /// within one) and scored on it; with `--refit-teg`, TEG's four numbers too.
    pub refit: Vec<Check>,
    /// The checks that did not run for want of a file nothing promised (or not asked for), each with why
    /// (the rule: crate::measurements, "Missing files").
    pub not_run: Vec<String>,
}

impl Validation {
    /// The name of every row whose target is missed, in the report's order: the targets, the
    /// cross-validation folds, the kernel families, the refit, the error bars. `hetsim
    /// validate` fails naming them.
    pub fn missed(&self) -> Vec<&str> {
        self.checks
            .iter()
            .chain(&self.cross_validation)
            .chain(&self.families)
            .chain(&self.refit)
            .filter(|c| !c.pass)
            .map(|c| c.name.as_str())
            .chain(
                self.error_bars
                    .iter()
                    .filter(|c| !c.pass)
                    .map(|c| c.name.as_str()),
            )
            .collect()
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct KernelKey {
    pub intensity: f64,
    pub block: f64,
    pub warps_per_sm: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct TransferKey {
    pub direction: String,
    pub memory: String,
    pub bytes: u64,
}

fn kernel_points(sim: &Simulator, m: &Measurements, file: &str) -> Result<Vec<(KernelKey, Point)>> {
    let device = saxpy2::device(m)?;
    m.kernel_runs()
        .filter(|r| r.file == file)
        .map(|r| {
            let report = sim.kernel(r)?;
            Ok((
                KernelKey {
                    intensity: r.intensity,
                    block: r.block,
                    warps_per_sm: saxpy2::resident_warps(device.limits, r),
                },
                Point {
                    what: r.label(),
                    measured: r.seconds,
                    predicted: report.results.overall_time,
                    interval: report.results.overall_time_interval,
                },
            ))
        })
        .collect()
}

/// Transfers by (direction, memory, size), the trials averaged; sizes of 1 MiB and more (the
/// issue's targets; below, the copy's fixed costs dominate and are reported separately).
fn transfer_points(sim: &Simulator, m: &Measurements) -> Result<Vec<(TransferKey, Point)>> {
    let mut groups: BTreeMap<TransferKey, Vec<f64>> = BTreeMap::new();
    for t in m.transfers.iter().filter(|t| t.bytes > 0.0) {
        groups
            .entry(TransferKey {
                direction: t.direction.clone(),
                memory: t.memory.clone(),
                bytes: t.bytes as u64,
            })
            .or_default()
            .push(t.seconds);
    }
    groups
        .into_iter()
        .map(|(key, times)| {
            let phase = if key.direction.starts_with("Host") {
                "htd"
            } else {
                "dth"
            };
            let report = sim.run(&[
                ("phases", Variable::Text(phase.into())),
                ("numElements", Variable::Float(key.bytes as f64 / 4.0)),
                ("hostMemory", Variable::Text(key.memory.clone())),
            ])?;
            let point = Point {
                what: format!("{} {} {} B", key.direction, key.memory, key.bytes),
                measured: times.iter().sum::<f64>() / times.len() as f64,
                predicted: report.results.overall_time,
                interval: report.results.overall_time_interval,
            };
            Ok((key, point))
        })
        .collect()
}

/// The steady power of power.csv's compute and memory phases, each the saxpy2 launch its
/// `kernel` field names run back to back (none without a power.csv; with one, both phases
/// are there: [`Measurements::read`] checks them).
fn power_points(sim: &Simulator, m: &Measurements) -> Result<Vec<Point>> {
    let mut out = Vec::new();
    if m.power.is_empty() {
        return Ok(out);
    }
    for phase in ["compute", "memory"] {
        let origin = || m.dir.join("power.csv").display().to_string();
        let watts = m
            .steady_power(phase)
            .ok_or_else(|| anyhow!("{}: no `{phase}` phase", origin()))?;
        let launch = m
            .power_launch(phase)
            .ok_or_else(|| anyhow!("{}: the `{phase}` phase names no launch", origin()))?;
        let predicted =
            gpu_power(&sim.kernel(launch)?).ok_or_else(|| anyhow!("the system has no node `gpu`"))?;
        out.push(Point {
            what: format!("{phase}-bound phase (steady state)"),
            measured: watts,
            predicted,
            interval: [predicted, predicted],
        });
    }
    Ok(out)
}

/// Leave-one-group-out cross-validation (each block size of sweep.csv, the occupancy file):
/// the error of each group under a calibration that never saw it, and the coverage of each
/// group's launches by error bars drawn from the other groups' out-of-fold residuals only.
/// Groups are listed as a reader counts: `sweep block 16` before `sweep block 128`.
/// The kernel analyser's latency table is fitted on saxpy2's occupancy level of
/// [`LATENCY_BOUND_WARPS`] resident warps per SM (the H100's: lab/src/latency_fit.rs fits it
/// again there), so by the report's one rule that level is in-sample on any GPU however the
/// calibration folds: it is left out of the occupancy summary and of the held-out coverage.
fn cross_validation(m: &Measurements) -> Result<(Vec<Check>, Option<Coverage>)> {
    let all = samples(m)?;
    if all.is_empty() {
        return Ok((Vec::new(), None));
    }
    let base = saxpy2::device(m)?;
    let groups = groups(&all);
    let residuals = out_of_fold(&folds(&base, &plain(&all), &groups));
    let mut checks = Vec::new();
    let mut intervals = Vec::new();
    let mut occupancy_points = Vec::new();
    for group in in_natural_order(&groups) {
        let (own, others): (Vec<&Residual>, Vec<&Residual>) =
            residuals.iter().partition(|r| r.group == group);
        let points: Vec<Point> = own
            .iter()
            .map(|r| Point {
                what: group.to_owned(),
                measured: r.measured,
                predicted: r.predicted,
                interval: [r.predicted, r.predicted],
            })
            .collect();
        // The held-out target is per block size; an occupancy level held out is
        // reported without one (the lowest is an extrapolation below every other), and the
        // levels together are held to it below.
        let occupancy = !group.starts_with("sweep");
        let target = if occupancy { f64::INFINITY } else { 0.10 };
        let latency_level = !own.is_empty()
            && own
                .iter()
                .all(|r| r.resident_warps == f64::from(LATENCY_BOUND_WARPS));
        let (name, basis) = if occupancy && latency_level {
            let name = format!("{group} held out of the calibration (the latency table is fitted on it)");
            (name, Basis::InSample)
        } else {
            if occupancy {
                occupancy_points.extend(points.iter().cloned());
            }
            (format!("{group} held out"), Basis::HeldOut)
        };
        let mut c = check(&name, basis, &points, target, f64::INFINITY);
        c.worst_at.clear();
        checks.push(c);
        let bars = error_bars(others).filter(|_| basis == Basis::HeldOut);
        if let Some(bars) = bars {
            intervals.extend(own.iter().map(|r| {
                let w = bars.bar(r.regime, r.warps_launched, r.resident_warps).relative * r.predicted;
                (r.predicted, [r.predicted - w, r.predicted + w], r.measured)
            }));
        }
    }
    if !occupancy_points.is_empty() {
        let mut c = check(
            "occupancy, each level held out in turn",
            Basis::HeldOut,
            &occupancy_points,
            0.10,
            f64::INFINITY,
        );
        c.worst_at.clear();
        checks.push(c);
    }
    let held_out = Coverage::of("each group held out of the fit and of the bars", &intervals);
    Ok((checks, Some(held_out)))
}

/// Predicts every measurement in the folder `data` with the application `app` on the system
/// `system`, and scores the predictions against their targets. Labels follow the report's one
/// rule (in-sample when a number the prediction uses was fitted on launches of its kernels,
/// on any GPU): saxpy2's rows, transfers and power.csv are in-sample, since the catalog's
/// entries are fitted on them (on the H100 for the H200's, which carries them).
/// `held_out`: nothing of the system's GPU was fitted on `data`'s own measurements (the H200
/// entry, carried over from the H100): the targets are those for a GPU never measured
/// (power within 20 %). `stage` is told each stage as it starts (the command line draws it;
/// a whole validation takes tens of seconds). `refit_teg`: TEG's four numbers are fitted
/// again without each family they were fitted on ([`teg_folds`]: minutes a family).
pub fn validate(
    data: &Path,
    app: &Path,
    system: &Path,
    gpu: Option<&str>,
    held_out: bool,
    refit_teg: bool,
    stage: &dyn Fn(&str),
) -> Result<Validation> {
    stage("reading the measurements");
    // Every file the folder and its benchmark sets promise is checked before anything runs.
    let m = Measurements::read(data)?;
    let sets = BenchSet::in_folder(data)?;
    let sim = Simulator::load(app, system, gpu)?;
    // The catalog's entries are fitted on saxpy2, transfers and power.csv (the H200's on the
    // H100's): by the one rule, in-sample on any GPU.
    let fitted = Basis::InSample;
    let power_target = if held_out { 0.20 } else { 0.10 };
    stage("kernels: the sweep and the occupancy points");
    let sweep = kernel_points(&sim, &m, "sweep")?;
    let occupancy = kernel_points(&sim, &m, "occupancy")?;
    stage("transfers and power");
    let transfers = transfer_points(&sim, &m)?;
    let power = power_points(&sim, &m)?;
    let points = |v: &[(KernelKey, Point)]| v.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>();
    let copies = |direction: &str, memory: &str| -> Vec<Point> {
        transfers
            .iter()
            .filter(|(k, _)| k.direction == direction && k.memory == memory && k.bytes >= 1 << 20)
            .map(|(_, p)| p.clone())
            .collect()
    };
    let mut checks: Vec<Check> = [
        ("sweep.csv", &sweep, "sweep.csv (kernel)"),
        (
            "occupancy_block256.csv",
            &occupancy,
            "occupancy_block256.csv (kernel)",
        ),
    ]
    .into_iter()
    .filter(|(file, _, _)| !m.lacks(file))
    .map(|(_, runs, name)| check(name, fitted, &points(runs), 0.08, 0.25))
    .collect();
    stage("TEG");
    let teg_gpu = sim.gpu()?;
    checks.extend(teg::saxpy2_checks(&m, teg_gpu, fitted)?);
    let heldout = teg::heldout_points(&m, teg_gpu)?;
    if !m.lacks("heldout_times.csv") {
        checks.push(check(
            "heldout_times.csv (kernels, TEG)",
            Basis::HeldOut,
            &heldout,
            0.15,
            f64::INFINITY,
        ));
    }
    if !m.lacks("transfers.csv") {
        for direction in ["HostToDevice", "DeviceToHost"] {
            checks.push(check(
                &format!("transfers.csv {direction} pinned ≥ 1 MiB"),
                fitted,
                &copies(direction, "pinned"),
                0.05,
                f64::INFINITY,
            ));
            checks.push(check(
                &format!("transfers.csv {direction} pageable ≥ 1 MiB"),
                fitted,
                &copies(direction, "pageable"),
                0.10,
                f64::INFINITY,
            ));
        }
    }
    if !m.lacks("power.csv") {
        checks.push(check(
            "power.csv (steady board power)",
            fitted,
            &power,
            power_target,
            power_target,
        ));
    }
    let mut family_checks = Vec::new();
    for set in &sets {
        stage(&format!("kernel families of {}", set.path.display()));
        family_checks.extend(families::checks(set, &families::predict(set, gpu)?));
        family_checks.extend(power::checks(set, gpu)?);
    }
    stage("gpu-queueing refitted without each kernel family");
    let mut refit = refit::checks(&m, &sets)?;
    let mut not_run = not_run::lines(&m, &sets);
    if refit_teg {
        refit.extend(teg_folds::checks(&m, &sets, teg_gpu, stage)?);
    } else if teg_folds::applies(&sets) {
        not_run.push(teg_folds::NOT_ASKED.to_owned());
    }
    stage("cross-validation");
    let (cross_validation, held_out_coverage) = cross_validation(&m)?;
    let all_copies = |memory: &'static str| {
        transfers
            .iter()
            .filter(move |(k, _)| k.memory == memory)
            .map(|(_, p)| p)
    };
    let mut error_bars: Vec<Coverage> = [
        ("sweep.csv", &sweep, "sweep.csv (kernel)"),
        (
            "occupancy_block256.csv",
            &occupancy,
            "occupancy_block256.csv (kernel)",
        ),
    ]
    .into_iter()
    .filter(|(file, _, _)| !m.lacks(file))
    .map(|(_, runs, name)| Coverage::of_points(name, runs.iter().map(|(_, p)| p)))
    .chain(held_out_coverage)
    .collect();
    if !m.lacks("transfers.csv") {
        error_bars.push(Coverage::of_points(
            "transfers.csv pinned, all sizes",
            all_copies("pinned"),
        ));
        error_bars.push(Coverage::of_points(
            "transfers.csv pageable, all sizes",
            all_copies("pageable"),
        ));
    }
    Ok(Validation {
        data: data.display().to_string(),
        system: system.display().to_string(),
        gpu: gpu.map(str::to_owned),
        held_out,
        checks,
        sweep,
        occupancy,
        transfers,
        power,
        cross_validation,
        error_bars,
        families: family_checks,
        not_run,
        refit,
    })
}

/// What a table with no rows says instead.
const NO_ROWS: &str =
    "No rows: the files they read are not in the folder (the \"not run\" lines say which).\n";

fn percent(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1} %", x * 100.0)
    } else {
        "—".to_owned()
    }
}

/// The distinct groups, by their text less a trailing number, then by that number.
fn in_natural_order(groups: &[String]) -> Vec<&str> {
    let key = |g: &str| {
        let (head, tail) = g.rsplit_once(' ').unwrap_or(("", g));
        match tail.parse::<f64>() {
            Ok(n) => (head.to_owned(), n),
            Err(_) => (g.to_owned(), f64::NEG_INFINITY),
        }
    };
    let mut distinct: Vec<&str> = groups
        .iter()
        .map(String::as_str)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    distinct.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    distinct
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each table's rows count: a missed target anywhere in the report fails `validate`
    /// (the cross-validation's fold among them), a row reported without a target does not.
    #[test]
    fn every_table_of_the_report_counts_toward_missed() {
        let twice = [Point {
            what: "a launch".into(),
            measured: 1.0,
            predicted: 2.0,
            interval: [2.0, 2.0],
        }];
        let missed = |name: &str| check(name, Basis::HeldOut, &twice, 0.10, f64::INFINITY);
        let reported = check(
            "occupancy smem 0 held out",
            Basis::HeldOut,
            &twice,
            f64::INFINITY,
            f64::INFINITY,
        );
        let v = Validation {
            data: "data".into(),
            system: "system.toml".into(),
            gpu: None,
            held_out: false,
            checks: vec![missed("sweep.csv (kernel)")],
            sweep: Vec::new(),
            occupancy: Vec::new(),
            transfers: Vec::new(),
            power: Vec::new(),
            cross_validation: vec![reported, missed("sweep block 16 held out")],
            error_bars: vec![Coverage::of("held-out bars", &[(2.0, [1.9, 2.1], 1.0)])],
            families: vec![missed("kit: strided (gpu-queueing)")],
            refit: vec![missed("kit: strided held out of the fit")],
            not_run: Vec::new(),
        };
        assert_eq!(
            v.missed(),
            [
                "sweep.csv (kernel)",
                "sweep block 16 held out",
                "kit: strided (gpu-queueing)",
                "kit: strided held out of the fit",
                "held-out bars"
            ]
        );
    }

    #[test]
    fn groups_are_listed_as_a_reader_counts() {
        let groups = [
            "sweep block 1024",
            "sweep block 128",
            "occupancy 8",
            "sweep block 16",
            "sweep block 128",
        ]
        .map(String::from);
        assert_eq!(
            in_natural_order(&groups),
            [
                "occupancy 8",
                "sweep block 16",
                "sweep block 128",
                "sweep block 1024"
            ]
        );
    }
}
