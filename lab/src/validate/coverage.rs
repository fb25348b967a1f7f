//! Do the error bars hold what they claim? For each group of points, the fraction whose
//! measurement lies within the predicted 90 % interval, against the stated coverage.

use std::fmt::Write;

use hetsim_models::uncertainty::{conformal_half_width, coverage, relative_residual, COVERAGE};
use serde::Serialize;

use super::{percent, Point};

/// How well one group's intervals cover its measurements.
#[derive(Clone, Debug, Serialize)]
pub struct Coverage {
    pub name: String,
    pub points: usize,
    /// The fraction of points inside their interval.
    pub covered: f64,
    /// The least coverage that still agrees with [`COVERAGE`]: two binomial standard errors
    /// below it, since a coverage measured on `n` points scatters that much.
    pub floor: f64,
    /// The mean relative half-width of the intervals.
    pub mean_half_width: f64,
    /// The half-width that a conformal calibration on these very points would state.
    pub needed_half_width: Option<f64>,
    pub pass: bool,
}

impl Coverage {
    /// From `(predicted, [low, high], measured)` triples.
    pub fn of(name: &str, points: &[(f64, [f64; 2], f64)]) -> Coverage {
        let n = points.len();
        let covered = coverage(points.iter().map(|&(_, [lo, hi], m)| (lo, hi, m))).unwrap_or(0.0);
        let floor = COVERAGE - 2.0 * (COVERAGE * (1.0 - COVERAGE) / n.max(1) as f64).sqrt();
        let residuals: Vec<f64> = points.iter().map(|&(p, _, m)| relative_residual(p, m)).collect();
        let mean_half_width = points
            .iter()
            .map(|&(p, [lo, hi], _)| (hi - lo) / (2.0 * p))
            .sum::<f64>()
            / n.max(1) as f64;
        Coverage {
            name: name.to_owned(),
            points: n,
            covered,
            floor,
            mean_half_width,
            needed_half_width: conformal_half_width(&residuals, COVERAGE),
            pass: n > 0 && covered >= floor,
        }
    }

    /// From the simulated points of one group.
    pub fn of_points<'a>(name: &str, points: impl IntoIterator<Item = &'a Point>) -> Coverage {
        let triples: Vec<_> = points
            .into_iter()
            .map(|p| (p.predicted, p.interval, p.measured))
            .collect();
        Coverage::of(name, &triples)
    }
}

pub fn table(rows: &[Coverage]) -> String {
    if rows.is_empty() {
        return super::NO_ROWS.to_owned();
    }
    let mut s = String::from(
        "| what | points | mean ± | covered | needed ± | target | |\n|---|---:|---:|---:|---:|---|---|\n",
    );
    for c in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | ≥ {} (90 % − 2 s.e.) | {} |",
            c.name,
            c.points,
            percent(c.mean_half_width),
            percent(c.covered),
            c.needed_half_width.map_or_else(|| "—".to_owned(), percent),
            percent(c.floor),
            if c.pass { "met" } else { "**missed**" }
        );
    }
    s
}
