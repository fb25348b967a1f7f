//! Board power across kernels: a benchmark set's `power` file (the largest launch of each
//! family run back to back, its steady board power) against the `gpu-queueing` model's
//! `idle + compute × u_compute + memory × u_memory` (hetsim_models::queueing::Power), where
//! the utilisations are the model's own for that launch. Three predictions per set: the
//! catalog's coefficients (fitted on power.csv's two saxpy2 phases), the two loaded
//! coefficients refitted on every family but the one predicted (leave-one-family-out), and
//! refitted on them all (in-sample, for the gap). The first two are held-out on the phases of
//! families nothing of the model was fitted on, and in-sample, in a row of their own, on
//! those of families the descriptor marks `fitted` for `gpu-queueing` (saxpy2_l2 runs saxpy2,
//! the kernel of the catalog's calibration). The idle level is the file's own idle phase, a
//! measurement of the GPU at rest, not a fit.

use std::collections::BTreeSet;

use anyhow::{anyhow, Result};

use super::simulator::{gpu_power, Simulator};
use super::{check, Basis, Check, Point};
use crate::benchset::BenchSet;

/// One phase as the model weighs it: `u = [u_compute, u_memory]`, the launch's mean
/// utilisations over its time, and the catalog's prediction.
struct Phase {
    what: String,
    family: String,
    /// Whether a number of the `gpu-queueing` model was fitted on the family's kernel (its
    /// descriptor's `fitted`): the phase is then in-sample in every row.
    fitted: bool,
    u: [f64; 2],
    catalog: f64,
    measured: f64,
}

/// The power rows of `set`, or none where it has no `power` file.
pub fn checks(set: &BenchSet, gpu: Option<&str>) -> Result<Vec<Check>> {
    let Some(power) = &set.power else {
        return Ok(Vec::new());
    };
    let name = set.name();
    let system = set.systems.get("gpu-queueing").ok_or_else(|| {
        anyhow!(
            "{}: a `power` file needs a gpu-queueing system",
            set.path.display()
        )
    })?;
    let sim = Simulator::load(&set.app, system, gpu)?;
    let [idle, c, m] = sim.gpu_power_coefficients()?.ok_or_else(|| {
        anyhow!(
            "{}: the GPU's power is not calibrated (powerIdle, powerCompute, powerMemory)",
            system.display()
        )
    })?;
    let (compute, memory) = (
        sim.with_gpu_power([0.0, 1.0, 0.0])?,
        sim.with_gpu_power([0.0, 0.0, 1.0])?,
    );
    let watts = |s: &Simulator, vars: &[(String, hetsim_system::Variable)], at: &str| -> Result<f64> {
        let vars: Vec<(&str, hetsim_system::Variable)> =
            vars.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let report = s.run(&vars).map_err(|e| anyhow!("{at}: {e}"))?;
        gpu_power(&report)
            .ok_or_else(|| anyhow!("{at}: no GPU power (no node `gpu`, or a run that took no time)"))
    };
    let phases = power
        .phases
        .iter()
        .map(|p| {
            let u = [
                watts(&compute, &p.variables, &p.at)?,
                watts(&memory, &p.variables, &p.at)?,
            ];
            Ok(Phase {
                what: format!("{}: {} {}", p.at, p.family, p.params),
                family: p.family.clone(),
                fitted: set
                    .families
                    .get(&p.family)
                    .is_some_and(|f| f.fitted_for("gpu-queueing").is_some()),
                // The model's power is linear in its coefficients: the catalog's prediction is
                // the unit runs weighed by them.
                catalog: idle + c * u[0] + m * u[1],
                u,
                measured: p.watts,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let point = |p: &Phase, predicted: f64| Point {
        what: p.what.clone(),
        measured: p.measured,
        predicted,
        interval: [predicted; 2],
    };
    let predict = |k: [f64; 2], p: &Phase| power.idle + k[0] * p.u[0] + k[1] * p.u[1];
    let left_out = |p: &Phase| {
        let others: Vec<&Phase> = phases.iter().filter(|q| q.family != p.family).collect();
        predict(fit(&others, power.idle), p)
    };
    let all: Vec<&Phase> = phases.iter().collect();
    let k = fit(&all, power.idle);
    // A set that names its own power phases (`power_fit`) is what `calibrate gpu` fits the
    // coefficients on where a folder has no power.csv: whether this GPU's were is not known
    // here, so the row is in-sample, the conservative side.
    let (catalog_fitted, fitted_on) = match power.fit {
        Some(_) => (true, "power.csv's saxpy2, or this set's power_fit phases"),
        None => (false, "power.csv's saxpy2"),
    };
    let mut out = split_rows(
        &format!("{name}: steady power, the catalog's coefficients (fitted on {fitted_on})"),
        &phases,
        catalog_fitted,
        power.target,
        |p| point(p, p.catalog),
    );
    out.extend(split_rows(
        &format!("{name}: steady power, compute and memory refitted without the family"),
        &phases,
        false,
        power.target,
        |p| point(p, left_out(p)),
    ));
    let in_sample: Vec<Point> = phases.iter().map(|p| point(p, predict(k, p))).collect();
    out.push(check(
        &format!(
            "{name}: steady power, refitted on every family ({:.0} W compute, {:.0} W memory)",
            k[0], k[1]
        ),
        Basis::InSample,
        &in_sample,
        f64::INFINITY,
        f64::INFINITY,
    ));
    Ok(out)
}

/// A power row over the phases of families nothing of the model was fitted on, held-out
/// against `target`, and one over the others, in-sample and reported; both in-sample where
/// the row's own coefficients were fitted on the set (`fitted_here`).
fn split_rows(
    name: &str,
    phases: &[Phase],
    fitted_here: bool,
    target: f64,
    point: impl Fn(&Phase) -> Point,
) -> Vec<Check> {
    let (fitted, held_out): (Vec<&Phase>, Vec<&Phase>) = phases.iter().partition(|p| p.fitted || fitted_here);
    let mut rows = Vec::new();
    if !held_out.is_empty() {
        let points: Vec<Point> = held_out.iter().map(|p| point(p)).collect();
        rows.push(check(name, Basis::HeldOut, &points, target, f64::INFINITY));
    }
    if !fitted.is_empty() {
        let points: Vec<Point> = fitted.iter().map(|p| point(p)).collect();
        let (label, target) = if held_out.is_empty() {
            (name.to_owned(), target)
        } else {
            let families: BTreeSet<&str> = fitted.iter().map(|p| p.family.as_str()).collect();
            let list: Vec<&str> = families.into_iter().collect();
            (
                format!(
                    "{name}: the families the model was fitted on ({})",
                    list.join(", ")
                ),
                f64::INFINITY,
            )
        };
        rows.push(check(&label, Basis::InSample, &points, target, f64::INFINITY));
    }
    rows
}

/// The non-negative `[compute, memory]` coefficients that best explain `phases`' power above
/// `idle` (least squares; where the joint fit turns one negative, the better single one).
fn fit(phases: &[&Phase], idle: f64) -> [f64; 2] {
    let (mut cc, mut cm, mut mm, mut cy, mut my) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for p in phases {
        let ([c, m], y) = (p.u, p.measured - idle);
        cc += c * c;
        cm += c * m;
        mm += m * m;
        cy += c * y;
        my += m * y;
    }
    let det = cc * mm - cm * cm;
    if det.abs() > 1e-12 * (cc * mm).max(f64::MIN_POSITIVE) {
        let joint = [(mm * cy - cm * my) / det, (cc * my - cm * cy) / det];
        if joint.iter().all(|&k| k >= 0.0) {
            return joint;
        }
    }
    let sse = |k: [f64; 2]| -> f64 {
        phases
            .iter()
            .map(|p| (p.measured - idle - k[0] * p.u[0] - k[1] * p.u[1]).powi(2))
            .sum()
    };
    let only_compute = [if cc > 0.0 { (cy / cc).max(0.0) } else { 0.0 }, 0.0];
    let only_memory = [0.0, if mm > 0.0 { (my / mm).max(0.0) } else { 0.0 }];
    if sse(only_compute) <= sse(only_memory) {
        only_compute
    } else {
        only_memory
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(family: &str, u: [f64; 2], measured: f64) -> Phase {
        Phase {
            what: family.to_owned(),
            family: family.to_owned(),
            fitted: family == "fitted",
            u,
            catalog: 0.0,
            measured,
        }
    }

    #[test]
    fn the_fit_recovers_coefficients_and_never_goes_negative() {
        // 100 W idle, 150 W at full compute, 300 W at full memory: exact data, exact fit.
        let p = [
            phase("a", [1.0, 0.2], 100.0 + 150.0 + 60.0),
            phase("b", [0.3, 0.9], 100.0 + 45.0 + 270.0),
            phase("c", [0.5, 0.5], 100.0 + 75.0 + 150.0),
        ];
        let k = fit(&p.iter().collect::<Vec<_>>(), 100.0);
        assert!(
            (k[0] - 150.0).abs() < 1e-9 && (k[1] - 300.0).abs() < 1e-9,
            "{k:?}"
        );
        // Power that falls with compute would need a negative coefficient: compute is dropped.
        let p = [phase("a", [1.0, 0.5], 150.0), phase("b", [0.0, 0.5], 250.0)];
        let k = fit(&p.iter().collect::<Vec<_>>(), 100.0);
        assert_eq!(k[0], 0.0);
        assert!(k[1] > 0.0, "{k:?}");
    }

    #[test]
    fn phases_of_a_fitted_family_are_split_off_in_sample() {
        let phases = [phase("a", [1.0, 0.0], 110.0), phase("fitted", [0.0, 1.0], 90.0)];
        let point = |p: &Phase| Point {
            what: p.what.clone(),
            measured: p.measured,
            predicted: 100.0,
            interval: [100.0; 2],
        };
        let rows = split_rows("power", &phases, false, 0.15, point);
        let summary: Vec<(&str, Basis, usize, bool)> = rows
            .iter()
            .map(|c| (c.name.as_str(), c.basis, c.points, c.target_mape.is_finite()))
            .collect();
        assert_eq!(
            summary,
            [
                ("power", Basis::HeldOut, 1, true),
                (
                    "power: the families the model was fitted on (fitted)",
                    Basis::InSample,
                    1,
                    false
                )
            ]
        );
        let rows = split_rows("power", &phases, true, 0.15, point);
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].basis, rows[0].points, rows[0].target_mape),
            (Basis::InSample, 2, 0.15)
        );
    }
}
