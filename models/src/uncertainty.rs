//! Error bars from calibration residuals, by split-conformal prediction (Vovk, Gammerman and
//! Shafer, "Algorithmic Learning in a Random World", 2005; Lei et al., "Distribution-Free
//! Predictive Inference for Regression", JASA 2018).
//!
//! A calibrated model predicts `t`; on the calibration samples the relative residuals
//! `r_i = |measured_i − predicted_i| / predicted_i` are known. With `n` of them, the
//! `⌈(n + 1)·c⌉`-th smallest, `w`, makes `[t·(1 − w), t·(1 + w)]` hold a new measurement drawn
//! like the samples with probability at least `c`, whatever the residuals' distribution. The
//! guarantee holds for points like the calibration's; predictions outside its domain get a
//! wider bar (see `queueing::ErrorBars`) and say so.

/// The coverage every error bar of hetsim states: 90 %.
pub const COVERAGE: f64 = 0.9;

/// `|measured − predicted| / predicted`: the half-width, relative to the prediction, that an
/// interval around the prediction needs to hold the measurement.
pub fn relative_residual(predicted: f64, measured: f64) -> f64 {
    (measured - predicted).abs() / predicted
}

/// The split-conformal half-width at `coverage`: the `⌈(n + 1)·coverage⌉`-th smallest of the
/// residuals. `None` when there are too few residuals for that rank to exist (fewer than 9 at
/// 90 %) or a residual is not a number.
pub fn conformal_half_width(residuals: &[f64], coverage: f64) -> Option<f64> {
    if residuals.iter().any(|r| r.is_nan()) {
        return None;
    }
    let rank = ((residuals.len() + 1) as f64 * coverage).ceil() as usize;
    if rank == 0 || rank > residuals.len() {
        return None;
    }
    let mut sorted = residuals.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(sorted[rank - 1])
}

/// The fraction of `(low, high, measured)` triples whose interval holds the measurement.
pub fn coverage(intervals: impl IntoIterator<Item = (f64, f64, f64)>) -> Option<f64> {
    let (inside, total) =
        intervals
            .into_iter()
            .fold((0usize, 0usize), |(inside, total), (low, high, measured)| {
                (
                    inside + usize::from(low <= measured && measured <= high),
                    total + 1,
                )
            });
    (total > 0).then(|| inside as f64 / total as f64)
}
