//! Calibration from measurements: the kernel λ (seed 004, eq. 4.4) and a link's startup time
//! and λ per direction (eq. 5.5 fitted by least squares, as done for eqs. 5.6–5.7), and a
//! pageable copy's bandwidth curve ([`crate::transfer::BandwidthCurve`]) from the medians per size.

use std::fmt;

use serde::Serialize;

use crate::transfer::{BandwidthCurve, CurveError, Knot};

/// Eq. 4.4: λ = t_estimated / t_measured, with t_estimated simulated at λ = 1.
pub fn kernel_lambda(estimated: f64, measured: f64) -> f64 {
    estimated / measured
}

/// One kernel λ for many (estimated, measured) pairs: the least-squares slope through the
/// origin of estimated = λ × measured, which weighs long kernels as eq. 4.4 weighs one.
pub fn fit_kernel_lambda(pairs: &[(f64, f64)]) -> Result<f64, FitError> {
    let (em, mm) = pairs
        .iter()
        .fold((0.0, 0.0), |(em, mm), (e, m)| (em + e * m, mm + m * m));
    if mm > 0.0 && em > 0.0 {
        Ok(em / mm)
    } else {
        Err(FitError::NotEnoughData)
    }
}

/// A link direction's eq. 5.5 parameters fitted from measurements.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkFit {
    /// t_s [s]: the intercept.
    pub startup: f64,
    /// λ = 1 / (slope × bandwidth).
    pub lambda: f64,
    /// Measurements used (sizes > 0).
    pub samples: usize,
    /// Coefficient of determination of the line.
    pub r_squared: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FitError {
    /// Fewer than two distinct sizes > 0.
    NotEnoughData,
    /// Time does not grow with size.
    NonPositiveSlope(f64),
    /// A knot size with no measurement.
    NoSamplesAt(f64),
    /// A knot's median time is not above the startup.
    NotAboveStartup { size: f64, time: f64, startup: f64 },
    /// The knots do not make a curve.
    Curve(CurveError),
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FitError::NotEnoughData => write!(f, "need measurements at two or more distinct sizes > 0"),
            FitError::NonPositiveSlope(s) => {
                write!(
                    f,
                    "time does not grow with size (slope {s:e} s/byte): check the measurements"
                )
            }
            FitError::NoSamplesAt(size) => write!(f, "no measurement at the knot size {size} bytes"),
            FitError::NotAboveStartup { size, time, startup } => write!(
                f,
                "the median time at {size} bytes ({time:e} s) is not above the startup ({startup:e} s)"
            ),
            FitError::Curve(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FitError {}

/// Fits T = t_s + n / (bandwidth × λ) to (size [bytes], seconds) pairs by ordinary least
/// squares. Zero-byte copies are left out: the CUDA runtime skips them (thesis Table 5.1),
/// so they do not measure the startup.
pub fn fit_link(samples: &[(f64, f64)], bandwidth: f64) -> Result<LinkFit, FitError> {
    let points: Vec<(f64, f64)> = samples.iter().copied().filter(|(n, _)| *n > 0.0).collect();
    fit_weighted(&points, bandwidth, |_| 1.0)
}

/// As [`fit_link`], but least squares of the relative residuals (T_model − T) / T, i.e. each
/// sample weighted by 1 / T²: with sizes over many orders of magnitude, ordinary least squares
/// lets the largest copies set the intercept alone (on the H100 host of transfers.csv it
/// gives a negative startup), while this fit minimises the error a user sees, in percent, at
/// every size. Samples with a size or time ≤ 0 are left out.
pub fn fit_link_relative(samples: &[(f64, f64)], bandwidth: f64) -> Result<LinkFit, FitError> {
    let points: Vec<(f64, f64)> = samples
        .iter()
        .copied()
        .filter(|(n, t)| *n > 0.0 && *t > 0.0)
        .collect();
    fit_weighted(&points, bandwidth, |t| 1.0 / (t * t))
}

/// A least-squares line `y = intercept + slope·x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    pub slope: f64,
    pub intercept: f64,
    /// The fraction of y's (weighted) variance the line explains.
    pub r_squared: f64,
}

/// Weighted least squares of y on x through `points` (x, y), the weight a function of y.
/// `None` with fewer than two points or no spread in x.
pub fn weighted_line(points: &[(f64, f64)], weight: impl Fn(f64) -> f64) -> Option<Line> {
    if points.len() < 2 {
        return None;
    }
    let total = points.iter().map(|p| weight(p.1)).sum::<f64>();
    let mean_x = points.iter().map(|p| weight(p.1) * p.0).sum::<f64>() / total;
    let mean_y = points.iter().map(|p| weight(p.1) * p.1).sum::<f64>() / total;
    let (sxx, sxy, syy) = points.iter().fold((0.0, 0.0, 0.0), |(sxx, sxy, syy), (x, y)| {
        let (w, dx, dy) = (weight(*y), x - mean_x, y - mean_y);
        (sxx + w * dx * dx, sxy + w * dx * dy, syy + w * dy * dy)
    });
    if sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    Some(Line {
        slope,
        intercept: mean_y - slope * mean_x,
        r_squared: if syy == 0.0 { 1.0 } else { sxy * sxy / (sxx * syy) },
    })
}

/// Ordinary least squares: [`weighted_line`] with every point weighing the same.
pub fn line(points: &[(f64, f64)]) -> Option<Line> {
    weighted_line(points, |_| 1.0)
}

/// Weighted least squares of T = t_s + slope × n, the weight a function of the measured time.
fn fit_weighted(
    points: &[(f64, f64)],
    bandwidth: f64,
    weight: impl Fn(f64) -> f64,
) -> Result<LinkFit, FitError> {
    let line = weighted_line(points, weight).ok_or(FitError::NotEnoughData)?;
    if line.slope <= 0.0 {
        return Err(FitError::NonPositiveSlope(line.slope));
    }
    Ok(LinkFit {
        startup: line.intercept,
        lambda: 1.0 / (line.slope * bandwidth),
        samples: points.len(),
        r_squared: line.r_squared,
    })
}

/// A pageable copy's calibrated model: T = startup + n / B(n) ([`crate::transfer::curve_seconds`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PageableFit {
    /// t_s [s]: the median time of the smallest size > 0 measured.
    pub startup: f64,
    pub curve: BandwidthCurve,
    /// Knots whose median streaming time was below the previous knot's and was raised to it,
    /// so that time does not fall with size (0 on clean measurements).
    pub raised: usize,
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[m]),
        _ => Some((v[m - 1] + v[m]) / 2.0),
    }
}

/// Knot sizes 4^k from `from` to `to` bytes (both included when powers of 4).
pub fn powers_of_four(from: f64, to: f64) -> Vec<f64> {
    let mut sizes = Vec::new();
    let mut size = 1.0;
    while size <= to {
        if size >= from {
            sizes.push(size);
        }
        size *= 4.0;
    }
    sizes
}

/// Fits a pageable copy's [`PageableFit`] to (size [bytes], seconds) samples: the startup is
/// the median time of the smallest size > 0; at each of `knot_sizes` (which must have been
/// measured) the knot's bandwidth is size / (median time − startup). A knot whose streaming
/// time falls below its predecessor's (noise) is raised to it and counted in `raised`.
pub fn fit_pageable(samples: &[(f64, f64)], knot_sizes: &[f64]) -> Result<PageableFit, FitError> {
    let at = |size: f64| -> Vec<f64> {
        samples
            .iter()
            .filter(|(n, _)| *n == size)
            .map(|(_, t)| *t)
            .collect()
    };
    let smallest = samples
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| *n > 0.0)
        .min_by(f64::total_cmp)
        .ok_or(FitError::NotEnoughData)?;
    let startup = median(&at(smallest)).ok_or(FitError::NotEnoughData)?;
    let mut knots = Vec::with_capacity(knot_sizes.len());
    let mut raised = 0;
    let mut previous = 0.0_f64;
    for &size in knot_sizes {
        let time = median(&at(size)).ok_or(FitError::NoSamplesAt(size))?;
        let mut streaming = time - startup;
        if streaming <= 0.0 {
            return Err(FitError::NotAboveStartup { size, time, startup });
        }
        if streaming < previous {
            streaming = previous;
            raised += 1;
        }
        previous = streaming;
        knots.push(Knot {
            size,
            bandwidth: size / streaming,
        });
    }
    let curve = BandwidthCurve::new(knots).map_err(FitError::Curve)?;
    Ok(PageableFit {
        startup,
        curve,
        raised,
    })
}
