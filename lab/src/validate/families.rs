//! The benchmark sets of a measurement folder ([`crate::benchset`]) through the application
//! path: every launch simulated by the set's application on each of its systems (one per GPU
//! model), scored per kernel family and model, and over the held-out families. A family whose
//! descriptor says what was fitted on it is in-sample; the others are held-out, since no
//! number of either model is fitted on them.

use std::collections::BTreeMap;

use anyhow::{anyhow, Result};
use hetsim_system::Variable;

use super::simulator::Simulator;
use super::{check, Basis, Check, Point};
use crate::benchset::BenchSet;

/// Targets per family and over all families (MAPE), by GPU model: the set's own overall
/// target where its descriptor gives one, else the closed-form model's and TEG's of the
/// project's GPU-model issue.
pub(super) fn targets(set: &BenchSet, model: &str) -> (f64, f64) {
    let issue = match model {
        "gpu-teg" => 0.10,
        _ => 0.12,
    };
    (0.20, set.targets.get(model).copied().unwrap_or(issue))
}

/// A family's points: those its target applies to, and those outside its range.
#[derive(Debug, Default)]
pub struct FamilyPoints {
    pub scored: Vec<Point>,
    pub outside: Vec<Point>,
}

/// One set's predictions by model and family.
pub type Predictions = BTreeMap<String, BTreeMap<String, FamilyPoints>>;

/// Simulates every launch of `set` on each of its systems (their GPU the catalog's `gpu`
/// where given).
pub fn predict(set: &BenchSet, gpu: Option<&str>) -> Result<Predictions> {
    let mut out = Predictions::new();
    for (model, path) in &set.systems {
        let sim = Simulator::load(&set.app, path, gpu)?;
        let by_family = out.entry(model.clone()).or_default();
        for launch in &set.launches {
            let vars: Vec<(&str, Variable)> = launch
                .variables
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            let report = sim
                .run(&vars)
                .map_err(|e| anyhow!("{}: {model}: {e}", launch.at))?;
            let point = Point {
                what: format!("{}: {} {}", launch.at, launch.family, launch.params),
                measured: launch.seconds,
                predicted: report.results.overall_time,
                interval: report.results.overall_time_interval,
            };
            let family = by_family.entry(launch.family.clone()).or_default();
            if set.scores(launch) {
                family.scored.push(point);
            } else {
                family.outside.push(point);
            }
        }
    }
    Ok(out)
}

/// The checks of one set's predictions: each family by model, then the held-out families
/// together by model.
pub fn checks(set: &BenchSet, predictions: &Predictions) -> Vec<Check> {
    let name = set.name();
    let mut out = Vec::new();
    for (model, by_family) in predictions {
        let (per_family, overall) = targets(set, model);
        let mut held_out = Vec::new();
        for (family, points) in by_family {
            let descriptor = set.families.get(family);
            let fitted = descriptor.and_then(|f| f.fitted_for(model)).is_some();
            let basis = if fitted { Basis::InSample } else { Basis::HeldOut };
            out.push(check(
                &format!("{name}: {family} ({model})"),
                basis,
                &points.scored,
                per_family,
                f64::INFINITY,
            ));
            if !points.outside.is_empty() {
                let why = descriptor
                    .and_then(|f| f.outside.as_deref())
                    .unwrap_or("outside its range");
                out.push(check(
                    &format!("{name}: {family} ({model}), not scored: {why}"),
                    basis,
                    &points.outside,
                    f64::INFINITY,
                    f64::INFINITY,
                ));
            }
            if !fitted {
                held_out.extend(points.scored.iter().cloned());
            }
        }
        if !held_out.is_empty() {
            out.push(check(
                &format!("{name}: every held-out family ({model})"),
                Basis::HeldOut,
                &held_out,
                overall,
                f64::INFINITY,
            ));
        }
    }
    out
}
