//! Calibration of the loaded-latency model's device attributes from measured kernel times:
//! `memoryQueueCycles`, `issueEfficiency`, `blockLaunchRate` and `warpSkew` minimise the mean
//! absolute percentage error (MAPE) over the samples, by Nelder–Mead in log space (every
//! attribute stays positive; the issue efficiency, a fraction, in logit space); the launch
//! overhead and the spec-sheet attributes are kept.
//!
//! The error bars by regime (error_bars.rs) come from out-of-sample residuals, as in CV+
//! (Barber, Candès, Ramdas and Tibshirani, "Predictive inference with the jackknife+", Annals
//! of Statistics 2021): the samples fall in groups (a block size, a file), each group is
//! predicted by a calibration on the others, and the conformal quantile of those residuals
//! is the bar. In-sample residuals would understate it: cross-validated on the H100, bars
//! from the fit's own residuals covered 81 % of held-out launches instead of 90 %.

use serde::Serialize;

use super::{evaluate, Device, ErrorBars, Input, Kernel, Regime, Scored};
use crate::calibrate::line;
use crate::nelder_mead::minimise;
use crate::uncertainty::relative_residual;

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

/// One group of a cross-validation: its samples and the calibration that never saw them.
#[derive(Clone, Debug)]
pub struct Fold<'a> {
    pub group: &'a str,
    pub test: Vec<Sample>,
    /// `None` when the other groups hold no sample.
    pub device: Option<Device>,
}

/// Leave-one-group-out: for each distinct group of `groups` (one per sample), `base`
/// calibrated on the samples of the other groups.
pub fn leave_group_out<'a>(base: &Device, samples: &[Sample], groups: &[&'a str]) -> Vec<Fold<'a>> {
    let mut distinct: Vec<&str> = groups.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    distinct
        .into_iter()
        .map(|group| {
            let (test, train): (Vec<_>, Vec<_>) = samples.iter().zip(groups).partition(|(_, g)| **g == group);
            let unzip = |v: Vec<(&Sample, &&str)>| v.into_iter().map(|(s, _)| s.clone()).collect::<Vec<_>>();
            let train = unzip(train);
            Fold {
                group,
                test: unzip(test),
                device: calibrate(base, &train).map(|fit| fit.apply(base)),
            }
        })
        .collect()
}

/// A sample as the calibration that never saw it predicts it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Residual<'a> {
    pub group: &'a str,
    pub regime: Regime,
    pub warps_launched: f64,
    pub resident_warps: f64,
    pub predicted: f64,
    pub measured: f64,
}

/// Every test sample of `folds`, predicted by its fold's calibration.
pub fn out_of_fold<'a>(folds: &[Fold<'a>]) -> Vec<Residual<'a>> {
    folds
        .iter()
        .filter_map(|f| f.device.as_ref().map(|d| (f.group, d, &f.test)))
        .flat_map(|(group, device, test)| {
            test.iter().map(move |s| {
                let out = evaluate(&Input {
                    device: device.clone(),
                    kernel: s.kernel.clone(),
                });
                Residual {
                    group,
                    regime: out.regime,
                    warps_launched: out.warps_launched,
                    resident_warps: out.active_warps_per_sm,
                    predicted: out.seconds,
                    measured: s.seconds,
                }
            })
        })
        .collect()
}

/// Error bars from out-of-fold residuals (CV+, see the module's text).
pub fn error_bars<'a>(residuals: impl IntoIterator<Item = &'a Residual<'a>>) -> Option<ErrorBars> {
    let scored: Vec<Scored> = residuals
        .into_iter()
        .map(|r| Scored {
            regime: r.regime,
            warps_launched: r.warps_launched,
            resident_warps: r.resident_warps,
            residual: relative_residual(r.predicted, r.measured),
        })
        .collect();
    ErrorBars::from_residuals(&scored)
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
    line(points)
        .filter(|l| l.slope > 0.0)
        .map(|l| (l.intercept, 1.0 / l.slope))
}
