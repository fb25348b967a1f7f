//! Calibrations from measurement files: a link's startup and λ per direction and a kernel's
//! λ (the fits themselves are hetsim-models' `calibrate`); a GPU's is [`crate::gpu`].

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use hetsim_models::calibrate::{fit_kernel_lambda, fit_link, kernel_lambda};

use crate::files::{csv_rows, display_name, number_field};

/// True for numbers > 0; false for the rest, NaN included.
fn is_positive(x: f64) -> bool {
    x > 0.0
}

/// The attribute suffix of a direction (`startupHtD`, `lambdaDtH`, …).
fn direction_suffix(text: &str) -> Option<&'static str> {
    match text.to_ascii_lowercase().as_str() {
        "htd" | "hosttodevice" => Some("HtD"),
        "dth" | "devicetohost" => Some("DtH"),
        "dtd" | "devicetodevice" => Some("DtD"),
        "hth" | "hosttohost" => Some("HtH"),
        _ => None,
    }
}

/// A link's startup and λ per direction (seed 004, eq. 5.5), fitted by least squares.
pub struct LinkCalibration {
    /// `startupHtD`, `lambdaHtD`, … for a link component.
    pub attributes: serde_json::Map<String, serde_json::Value>,
    /// Each direction's fit (startup, lambda, samples, r_squared).
    pub fits: serde_json::Map<String, serde_json::Value>,
}

/// Fits eq. 5.5 per direction to the CSV `direction,size,seconds` at `csv`, given the link's
/// theoretical `bandwidth` [bytes/s].
pub fn link_from_csv(csv: &Path, bandwidth: f64) -> Result<LinkCalibration> {
    if !is_positive(bandwidth) {
        bail!("--bandwidth: expected a number > 0 [bytes/s], got {}", bandwidth);
    }
    let origin = display_name(csv);
    let mut by_direction: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for (line, fields) in csv_rows(csv, &["direction", "size", "seconds"])? {
        let direction = direction_suffix(&fields[0]).ok_or_else(|| {
            anyhow!(
                "{origin}: line {line}: field `direction`: expected HtD, DtH, DtD or HtH, got {:?}",
                fields[0]
            )
        })?;
        let size = number_field(&origin, line, "size", &fields[1])?;
        let seconds = number_field(&origin, line, "seconds", &fields[2])?;
        by_direction.entry(direction).or_default().push((size, seconds));
    }
    if by_direction.is_empty() {
        bail!("{origin}: no measurements");
    }
    let mut attributes = serde_json::Map::new();
    let mut fits = serde_json::Map::new();
    for (direction, samples) in &by_direction {
        let fit =
            fit_link(samples, bandwidth).map_err(|e| anyhow!("{origin}: direction {direction}: {e}"))?;
        attributes.insert(format!("startup{direction}"), fit.startup.into());
        attributes.insert(format!("lambda{direction}"), fit.lambda.into());
        fits.insert(direction.to_string(), serde_json::to_value(&fit)?);
    }
    Ok(LinkCalibration { attributes, fits })
}

/// Kernel λ (seed 004, eq. 4.4) over measured kernels: the estimate (simulated with λ = 1)
/// against the measured time.
pub struct KernelCalibration {
    pub lambda: f64,
    /// (estimated, measured) [s] per measurement.
    pub pairs: Vec<(f64, f64)>,
    /// λ of each measurement alone.
    pub each: Vec<f64>,
}

/// Fits eq. 4.4 to the CSV `estimated,measured` [s] at `csv`.
pub fn kernel_from_csv(csv: &Path) -> Result<KernelCalibration> {
    let origin = display_name(csv);
    let mut pairs = Vec::new();
    for (line, fields) in csv_rows(csv, &["estimated", "measured"])? {
        let estimated = number_field(&origin, line, "estimated", &fields[0])?;
        let measured = number_field(&origin, line, "measured", &fields[1])?;
        if !is_positive(measured) {
            bail!("{origin}: line {line}: field `measured`: expected a time > 0, got {measured}");
        }
        pairs.push((estimated, measured));
    }
    let lambda = fit_kernel_lambda(&pairs).map_err(|e| anyhow!("{origin}: {e}"))?;
    let each: Vec<f64> = pairs.iter().map(|&(e, m)| kernel_lambda(e, m)).collect();
    Ok(KernelCalibration { lambda, pairs, each })
}
