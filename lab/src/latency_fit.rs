//! The two figures of an architecture's latency table (kernel/data/latency/*.toml) that are
//! calibrated rather than measured, fitted again on a measurement folder: a taken branch
//! (`branch_taken`) and a block's replacement (`block_replacement`).
//!
//! At one block of 256 threads per SM (occupancy_block256.csv's level of 8 resident warps)
//! saxpy2 is latency-bound: each SM runs its blocks one after another, so the cycles per
//! warp, the time × the clock ÷ the rounds of 8 warps each SM runs, are the latency bound of
//! one warp. Over the intensities `a` they lie on a line `c + s·a` (least squares). The
//! analyser's latency bound with the table must lie on that line: its step per iteration is
//! the loop's path plus `branch_taken`, and at `a = 1` it is the single pass plus
//! `block_replacement`; so `branch_taken = s − path` and `block_replacement = c + s − pass`
//! (docs/MODELS.md, "Latency tables", works the numbers).

use anyhow::{anyhow, bail, Result};
use hetsim_kernel::latency::LatencyTable;
use hetsim_kernel::{analyze, parse, Options};
use hetsim_models::calibrate::{line, Line};

use crate::files::{csv_rows, number_field};
use crate::measurements::{KernelRun, Measurements};
use crate::saxpy2;
use crate::toml_lines::{with_values, Assignment};

/// Resident warps per SM at which saxpy2's launches are latency-bound, and the table is
/// fitted: one block of 256 threads per SM.
pub const LATENCY_BOUND_WARPS: u32 = 8;

/// The line the measured launches give and the two figures it fixes [cycles].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyFit {
    /// `s`: cycles per warp per unit of intensity.
    pub slope: f64,
    /// `c`: cycles per warp at intensity 0.
    pub intercept: f64,
    pub branch_taken: f64,
    pub block_replacement: f64,
}

/// The fit on the folder `m`: its occupancy_block256.csv, clock.csv (the SM clock under
/// load, the mean of its `mhz`), props.csv and saxpy2's SASS.
pub fn fit(m: &Measurements) -> Result<LatencyFit> {
    let runs = latency_bound_runs(m)?;
    let clock_hz = mean_clock_mhz(m)? * 1e6;
    let sms = m.prop("sms")?;
    let points: Vec<(f64, f64)> = runs
        .iter()
        .map(|r| {
            let rounds = r.n / 32.0 / sms / f64::from(LATENCY_BOUND_WARPS);
            (r.intensity, r.seconds * clock_hz / rounds)
        })
        .collect();
    let Line { slope, intercept, .. } = line(&points).ok_or_else(|| {
        anyhow!(
            "{}: occupancy_block256.csv: the latency-bound launches share one intensity: no line",
            m.dir.display()
        )
    })?;
    let sass = m
        .sass
        .as_deref()
        .ok_or_else(|| anyhow!("{}: no saxpy2_*.sass", m.dir.display()))?;
    let listing = parse(sass).map_err(|e| anyhow!("saxpy2 SASS: {e}"))?;
    let bound = |intensity: f64| -> Result<(f64, LatencyTable)> {
        let run = KernelRun {
            intensity,
            ..runs[0].clone()
        };
        let options = Options {
            launch: Some(saxpy2::launch(&run)?),
            ..Options::default()
        };
        let report = analyze(&listing, &options).map_err(|e| anyhow!("saxpy2: {e}"))?;
        let table = LatencyTable::for_arch(report.arch).map_err(|e| anyhow!("{e}"))?;
        let value = report
            .latency_bound
            .value()
            .ok_or_else(|| anyhow!("saxpy2: the latency bound of an emulated launch is a formula"))?;
        Ok((value, table))
    };
    let ((one, table), (two, _)) = (bound(1.0)?, bound(2.0)?);
    let path = two - one - table.branch_taken;
    let pass = one - table.block_replacement;
    Ok(LatencyFit {
        slope,
        intercept,
        branch_taken: slope - path,
        block_replacement: intercept + slope - pass,
    })
}

/// `text`, a latency table (kernel/data/latency/hopper.toml), with the fit's `branch_taken`
/// and `block_replacement` in place of its own, to a hundredth of a cycle; every other line
/// and each line's comment kept.
pub fn with_fitted_figures(text: &str, fit: &LatencyFit, origin: &str) -> Result<String> {
    let at = |key, value: f64| Assignment {
        table: "",
        key,
        value: format!("{value:.2}"),
    };
    let wanted = [
        at("branch_taken", fit.branch_taken),
        at("block_replacement", fit.block_replacement),
    ];
    with_values(text, &wanted, origin)
}

/// occupancy_block256.csv's launches at [`LATENCY_BOUND_WARPS`] resident warps per SM.
fn latency_bound_runs(m: &Measurements) -> Result<Vec<KernelRun>> {
    let limits = saxpy2::device(m)?.limits;
    let runs: Vec<KernelRun> = m
        .occupancy
        .iter()
        .filter(|r| saxpy2::resident_warps(limits, r) == f64::from(LATENCY_BOUND_WARPS))
        .cloned()
        .collect();
    if runs.len() < 2 {
        bail!(
            "{}: occupancy_block256.csv has {} launches at {LATENCY_BOUND_WARPS} resident warps per SM; the fit needs two intensities or more",
            m.dir.display(),
            runs.len()
        );
    }
    Ok(runs)
}

/// The mean SM clock of clock.csv's loaded runs [MHz].
fn mean_clock_mhz(m: &Measurements) -> Result<f64> {
    let path = m.dir.join("clock.csv");
    let origin = path.display().to_string();
    let rows = csv_rows(&path, &["mhz"])?;
    let clocks = rows
        .iter()
        .map(|(line, f)| number_field(&origin, *line, "mhz", &f[0]))
        .collect::<Result<Vec<f64>>>()?;
    if clocks.is_empty() {
        bail!("{origin}: no rows");
    }
    Ok(clocks.iter().sum::<f64>() / clocks.len() as f64)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The shipped table's calibrated figures are what the shipped H100 data gives: fitted
    /// again here and written into the shipped table, they give it back byte for byte. By
    /// hand (docs/MODELS.md, "Latency tables"): the line 2049.3 + 28.916·a cycles per warp, a
    /// taken branch 28.916 − 6.07 = 22.84, a replacement 2049.31 + 28.916 − 1610.36 = 467.87.
    #[test]
    fn the_hopper_latency_table_is_fitted_again_on_the_h100_data() {
        let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let m = Measurements::read(&root.join("examples/validation/data/h100")).expect("reads");
        let fit = fit(&m).expect("fits");
        assert!((fit.slope - 28.916).abs() < 1e-3, "{fit:?}");
        assert!((fit.intercept - 2049.3).abs() < 0.1, "{fit:?}");
        assert!((fit.branch_taken - 22.84).abs() < 0.01, "{fit:?}");
        assert!((fit.block_replacement - 467.87).abs() < 0.01, "{fit:?}");
        let table = LatencyTable::for_arch(hetsim_kernel::Arch::HOPPER).expect("hopper");
        assert_eq!(
            format!("{:.2}", table.branch_taken),
            format!("{:.2}", fit.branch_taken)
        );
        assert_eq!(
            format!("{:.2}", table.block_replacement),
            format!("{:.2}", fit.block_replacement)
        );
        let shipped = "kernel/data/latency/hopper.toml";
        let text = std::fs::read_to_string(root.join(shipped)).expect("the shipped table");
        assert_eq!(
            with_fitted_figures(&text, &fit, shipped).expect("both keys"),
            text
        );
    }

    #[test]
    fn fitted_figures_replace_the_two_values_and_keep_every_other_line() {
        let fit = LatencyFit {
            slope: 30.0,
            intercept: 2000.0,
            branch_taken: 23.456,
            block_replacement: 500.0,
        };
        let text = "ilp = 2\nbranch_taken = 22.84    # calibrated\nblock_replacement = 467.55 # calibrated\n[memory]\nbranch_taken = 1\n";
        assert_eq!(
            with_fitted_figures(text, &fit, "t.toml").expect("both keys"),
            "ilp = 2\nbranch_taken = 23.46    # calibrated\nblock_replacement = 500.00 # calibrated\n[memory]\nbranch_taken = 1\n"
        );
        let e = with_fitted_figures(
            "[memory]\nbranch_taken = 1\nblock_replacement = 2\n",
            &fit,
            "t.toml",
        )
        .expect_err("only in a table");
        assert!(
            e.to_string()
                .contains("t.toml: no `branch_taken = …` in the top level"),
            "{e}"
        );
    }
}
