//! Calibration from measurements: the kernel λ (seed 004, eq. 4.4) and a link's startup time
//! and λ per direction (eq. 5.5 fitted by least squares, as done for eqs. 5.6–5.7).

use std::fmt;

use serde::Serialize;

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
        }
    }
}

impl std::error::Error for FitError {}

/// Fits T = t_s + n / (bandwidth × λ) to (size [bytes], seconds) pairs by ordinary least
/// squares. Zero-byte copies are left out: the CUDA runtime skips them (thesis Table 5.1),
/// so they do not measure the startup.
pub fn fit_link(samples: &[(f64, f64)], bandwidth: f64) -> Result<LinkFit, FitError> {
    let points: Vec<(f64, f64)> = samples.iter().copied().filter(|(n, _)| *n > 0.0).collect();
    let count = points.len() as f64;
    if count < 2.0 {
        return Err(FitError::NotEnoughData);
    }
    let mean_n = points.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_t = points.iter().map(|p| p.1).sum::<f64>() / count;
    let (snn, snt, stt) = points.iter().fold((0.0, 0.0, 0.0), |(snn, snt, stt), (n, t)| {
        let (dn, dt) = (n - mean_n, t - mean_t);
        (snn + dn * dn, snt + dn * dt, stt + dt * dt)
    });
    if snn == 0.0 {
        return Err(FitError::NotEnoughData);
    }
    let slope = snt / snn;
    if slope <= 0.0 {
        return Err(FitError::NonPositiveSlope(slope));
    }
    Ok(LinkFit {
        startup: mean_t - slope * mean_n,
        lambda: 1.0 / (slope * bandwidth),
        samples: points.len(),
        r_squared: if stt == 0.0 { 1.0 } else { snt * snt / (snn * stt) },
    })
}
