//! Calibration of the loaded-latency model's device attributes from measured kernel times:
//! `memoryQueueCycles`, `issueEfficiency`, `blockLaunchRate` and `warpSkew` minimise the mean
//! absolute percentage error (MAPE) over the samples, by Nelder–Mead in log space (every
//! attribute stays positive; the issue efficiency, a fraction, in logit space); the launch
//! overhead and the spec-sheet attributes are kept.

use serde::Serialize;

use super::{evaluate, Device, Input, Kernel};
use crate::nelder_mead::minimise;

/// A launch and the time CUDA events measured around it [s].
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub kernel: Kernel,
    pub seconds: f64,
}

/// The relative error of a prediction: (predicted − measured) / measured.
pub fn relative_error(predicted: f64, measured: f64) -> f64 {
    (predicted - measured) / measured
}

/// Mean absolute percentage error and worst absolute relative error of `device` on `samples`.
pub fn errors(device: &Device, samples: &[Sample]) -> (f64, f64) {
    let errs: Vec<f64> = samples
        .iter()
        .map(|s| {
            let input = Input {
                device: device.clone(),
                kernel: s.kernel.clone(),
            };
            relative_error(evaluate(&input).seconds, s.seconds).abs()
        })
        .collect();
    let mape = errs.iter().sum::<f64>() / errs.len().max(1) as f64;
    (mape, errs.iter().copied().fold(0.0, f64::max))
}

/// A calibrated device and how well it fits the samples it was fitted on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fit {
    pub memory_queue_cycles: f64,
    pub issue_efficiency: f64,
    pub block_launch_rate: f64,
    pub warp_skew: f64,
    pub mape: f64,
    pub worst: f64,
    pub samples: usize,
}

impl Fit {
    /// `base` with the fitted attributes.
    pub fn apply(&self, base: &Device) -> Device {
        Device {
            memory_queue_cycles: self.memory_queue_cycles,
            issue_efficiency: self.issue_efficiency,
            block_launch_rate: self.block_launch_rate,
            warp_skew: self.warp_skew,
            ..base.clone()
        }
    }
}

/// The inverse of the logistic function that keeps the issue efficiency in (0, 1).
fn logit(x: f64) -> f64 {
    (x / (1.0 - x)).ln()
}

fn with_logs(base: &Device, p: &[f64]) -> Device {
    Device {
        memory_queue_cycles: p[0].exp(),
        issue_efficiency: 1.0 / (1.0 + (-p[1]).exp()),
        block_launch_rate: p[2].exp(),
        warp_skew: p[3].exp(),
        ..base.clone()
    }
}

/// Fits the four attributes to `samples`, starting from `base`'s values (zeros start from
/// small positive values). `None` when there are no samples.
pub fn calibrate(base: &Device, samples: &[Sample]) -> Option<Fit> {
    if samples.is_empty() {
        return None;
    }
    let start = [
        base.memory_queue_cycles.max(1.0).ln(),
        logit(base.issue_efficiency.clamp(0.05, 0.995)),
        base.block_launch_rate.max(1e6).ln(),
        base.warp_skew.max(0.01).ln(),
    ];
    let objective = |p: &[f64]| errors(&with_logs(base, p), samples).0;
    let best = minimise(objective, &start, 0.3, 400, 3);
    let device = with_logs(base, &best.point);
    let (mape, worst) = errors(&device, samples);
    Some(Fit {
        memory_queue_cycles: device.memory_queue_cycles,
        issue_efficiency: device.issue_efficiency,
        block_launch_rate: device.block_launch_rate,
        warp_skew: device.warp_skew,
        mape,
        worst,
        samples: samples.len(),
    })
}

/// The launch overhead and the block launch rate as the least-squares line
/// `t = overhead + blocks / rate` through (blocks, seconds per launch) of back-to-back empty
/// launches. `None` with fewer than two distinct grid sizes or a non-positive slope.
pub fn fit_launch(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    let (sx, sy) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    if points.len() < 2 || sxx <= 0.0 || sxy <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    Some((my - slope * mx, 1.0 / slope))
}
