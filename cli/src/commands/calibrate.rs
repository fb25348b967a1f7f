//! `hetsim calibrate`: kernel λ (eq. 4.4), link startup/λ per direction (eq. 5.5) and a GPU's
//! `gpu-queueing` entry, fitted by hetsim-lab from measurements, printed for a catalog.

use std::path::Path;

use anyhow::{anyhow, Context, Result};
use hetsim_lab::benchset::BenchSet;
use hetsim_lab::calibrate::{kernel_from_csv, link_from_csv, KernelCalibration, LinkCalibration};
use hetsim_lab::gpu::{attributes, calibrate_folder};
use hetsim_lab::gpu_file::{data_file, toml_string};
use hetsim_lab::l2_fit::{l2_bytes_per_cycle_per_sm, with_fitted_value};
use hetsim_lab::latency_fit;
use hetsim_lab::measurements::Measurements;
use hetsim_lab::teg_fit;
use hetsim_models::hierarchy::L2_BYTES_PER_CYCLE_PER_SM;

use crate::cli::{CalibrateCommand, CalibrateGpuArgs, CalibrateKernelArgs, CalibrateLinkArgs};

pub fn run(command: CalibrateCommand) -> Result<()> {
    match command {
        CalibrateCommand::Link(args) => link(args),
        CalibrateCommand::Kernel(args) => kernel(args),
        CalibrateCommand::Gpu(args) => gpu(args),
    }
}

fn link(args: CalibrateLinkArgs) -> Result<()> {
    let LinkCalibration { attributes, fits } = link_from_csv(&args.csv, args.bandwidth)?;
    if args.json {
        return super::print_json(&serde_json::json!({ "attributes": attributes, "fits": fits }));
    }
    println!(
        "link calibration, eq. 5.5 fitted by least squares (bandwidth {:e} bytes/s)",
        args.bandwidth
    );
    for (direction, fit) in &fits {
        println!(
            "  {direction}: startup {:.6e} s, lambda {:.4} ({} samples, r^2 {:.6})",
            fit["startup"].as_f64().unwrap_or(f64::NAN),
            fit["lambda"].as_f64().unwrap_or(f64::NAN),
            fit["samples"],
            fit["r_squared"].as_f64().unwrap_or(f64::NAN)
        );
    }
    println!("attributes: {}", serde_json::Value::Object(attributes));
    Ok(())
}

fn kernel(args: CalibrateKernelArgs) -> Result<()> {
    let KernelCalibration { lambda, pairs, each } = kernel_from_csv(&args.csv)?;
    if args.json {
        return super::print_json(
            &serde_json::json!({ "kernelExecutionLambda": lambda, "per_measurement": each }),
        );
    }
    println!(
        "kernelExecutionLambda = {lambda:.6} (eq. 4.4 over {} measurements)",
        pairs.len()
    );
    for ((e, m), l) in pairs.iter().zip(&each) {
        println!("  estimated {e:.6e} s, measured {m:.6e} s: lambda {l:.6}");
    }
    Ok(())
}

fn gpu(args: CalibrateGpuArgs) -> Result<()> {
    let m = Measurements::read(&args.dir)?;
    let sets = args
        .sets
        .iter()
        .map(|p| BenchSet::read(p))
        .collect::<Result<Vec<_>>>()?;
    let c = calibrate_folder(&m, args.name, &sets)?;
    // The architecture's L2 figure (models/data/hopper.toml) where a set of the folder's, or
    // a --set, marks launches L2-resident.
    let every_set = folder_and_given(&m, &sets)?;
    let l2_fit = l2_bytes_per_cycle_per_sm(&m, &every_set)?;
    let l2 = l2_fit.as_ref().map(|f| f.bytes_per_cycle_per_sm);
    // The latency table's two calibrated figures (kernel/data/latency/*.toml), on the family a
    // set marks `latency_bound`, or on saxpy2's latency-bound occupancy level.
    let latency = latency_fit::fit(&m, &every_set)?;
    // Everything is checked before any file is written: TEG's data file and the catalog GPU
    // it runs on, then each file a fitted figure goes into.
    let teg_inputs = match &args.teg_file {
        Some(path) => {
            let origin = path.display().to_string();
            let text = read(path).context("--teg-file")?;
            let inputs = teg_fit::FitInputs::new(&m, &sets, &c.name, &text, &origin).with_context(|| {
                format!(
                    "--teg-file: TEG runs on the catalog's GPU named by --name (here `{}`) with {origin}'s parameters",
                    c.name
                )
            })?;
            Some((path, inputs))
        }
        None => None,
    };
    let folder = args.dir.display().to_string();
    let architecture_text = fitted_text(
        args.architecture_file.as_deref(),
        l2_fit.as_ref(),
        &format!(
            "--architecture-file: no benchmark set of {folder} (or --set) marks a family `l2_resident` to fit the L2 figure on"
        ),
        |text, fit, origin| with_fitted_value(text, fit, &folder, origin),
    )?;
    let latency_text = fitted_text(
        args.latency_file.as_deref(),
        latency.as_ref(),
        &format!(
            "--latency-file: {} has no occupancy_block256.csv and clock.csv, and no benchmark set marks a family `latency_bound`, to fit the latency table on",
            args.dir.display()
        ),
        latency_fit::with_fitted_figures,
    )?;
    if let Some(path) = &args.data_file {
        write(path, &data_file(&c, &args.dir.display().to_string(), &c.name))?;
    }
    for (path, text) in architecture_text.iter().chain(&latency_text) {
        write(path, text)?;
    }
    let teg = match &teg_inputs {
        Some((path, inputs)) => {
            let spinner = crate::progress::stages();
            let progress = |points: usize, least: f64| {
                if let Some(spinner) = &spinner {
                    spinner.set_message(format!(
                        "fitting TEG: {points} points scored, least MAPE {:.2} %",
                        least * 100.0
                    ));
                }
            };
            let fitted = inputs.fit_file(&m, &progress);
            if let Some(spinner) = &spinner {
                spinner.finish_and_clear();
            }
            let (fit, text) = fitted?;
            write(path, &text)?;
            Some(fit)
        }
        None => None,
    };
    if args.json {
        let attrs: serde_json::Map<String, serde_json::Value> = attributes(&c)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.into()))
            .collect();
        let architecture = serde_json::json!({
            L2_BYTES_PER_CYCLE_PER_SM: l2,
            "branch_taken": latency.as_ref().map(|f| f.branch_taken),
            "block_replacement": latency.as_ref().map(|f| f.block_replacement),
            "latency_from": latency.as_ref().map(|f| &f.fitted_on),
        });
        return super::print_json(
            &serde_json::json!({ "calibration": c, "attributes": attrs, "architecture": architecture, "teg": teg }),
        );
    }
    println!(
        "fitted on {} launches: MAPE {:.2} %, worst {:.1} %",
        c.fit.samples,
        c.fit.mape * 100.0,
        c.fit.worst * 100.0
    );
    match &c.device.error_bars {
        Some(b) => println!(
            "error bars (90 % coverage, conformal on the cross-validated residuals): compute ±{:.1} %, memory ±{:.1} %, latency ±{:.1} %, launch ±{:.1} %",
            b.compute * 100.0,
            b.memory * 100.0,
            b.latency * 100.0,
            b.launch * 100.0
        ),
        None => println!("no error bars: fewer than 9 launches in the cross-validation"),
    }
    match &l2_fit {
        Some(f) => println!(
            "architecture: {L2_BYTES_PER_CYCLE_PER_SM} = {:.2} (fitted on {}; the architecture data file, models/data/*.toml, keeps it)",
            f.bytes_per_cycle_per_sm, f.fitted_on
        ),
        None => println!(
            "architecture: {L2_BYTES_PER_CYCLE_PER_SM}: not fitted: no benchmark set marks a family `l2_resident`"
        ),
    }
    if c.power.is_none() {
        let why = if m.lacks("power.csv") {
            "no power.csv"
        } else {
            "power.csv's compute and memory phases load the GPU alike (no solution), or the folder has no saxpy2 SASS to analyse the launches they name"
        };
        println!("power: not fitted: {why}");
    }
    if let Some(f) = &teg {
        let p = f.point;
        println!(
            "TEG: efficiency = {}, queue_cycles = {}, replacement = {}, taken_branch = {} (fitted on {} launches: MAPE {:.2} %, worst {:.1} %; {} points tried)",
            p.efficiency,
            p.queue_cycles,
            p.replacement,
            p.taken_branch,
            f.launches,
            f.mape * 100.0,
            f.worst * 100.0,
            f.evaluations
        );
    }
    match latency {
        Some(f) => println!(
            "latency table: branch_taken = {:.2}, block_replacement = {:.2} (fitted on {}: MAPE {:.2} % of the cycles a warp; kernel/data/latency/*.toml keeps them)",
            f.branch_taken,
            f.block_replacement,
            f.fitted_on,
            f.mape * 100.0
        ),
        None => println!(
            "latency table: not fitted: no occupancy_block256.csv and clock.csv, and no family marked `latency_bound`"
        ),
    }
    println!("# a component for a system model's [[component]] table (model = \"gpu-queueing\")");
    println!(
        "[[component]]\nname = {:?}\nkind = \"GPU\"\nvendor = \"NVIDIA\"",
        c.name
    );
    let source = format!(
        "hetsim calibrate gpu {}: props.csv (spec), launch.csv (overhead), {} (fit){}",
        args.dir.display(),
        c.fitted_on,
        if c.power.is_some() {
            ", power.csv (power)"
        } else {
            ""
        }
    );
    println!("source = {}", toml_string(&source));
    println!(
        "[component.attributes]\ncomputeCapability = {:?}",
        c.compute_capability
    );
    for (k, v) in attributes(&c) {
        println!("{k} = {}", toml_number(v));
    }
    Ok(())
}

/// The file at `path` (where a flag names one) as `with_fit` writes `fit` into it, every
/// other line kept; `missing` is the error where the folder gave no fit.
fn fitted_text<'a, F>(
    path: Option<&'a Path>,
    fit: Option<F>,
    missing: &str,
    with_fit: impl FnOnce(&str, F, &str) -> Result<String>,
) -> Result<Option<(&'a Path, String)>> {
    let Some(path) = path else { return Ok(None) };
    let fit = fit.ok_or_else(|| anyhow!("{missing}"))?;
    let text = with_fit(&read(path)?, fit, &path.display().to_string())?;
    Ok(Some((path, text)))
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// A number as a person writes it in TOML, every digit kept: `132`, `285.7035598032425`,
/// `1.7459360324405622e9` (an exponent only below 10⁻³ or from 10⁶ up, and never `4e0`).
fn toml_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e6 {
        format!("{v:.0}")
    } else if (1e-3..1e6).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// The folder's own benchmark sets, then each `--set` that is not one of them.
fn folder_and_given(m: &Measurements, given: &[BenchSet]) -> Result<Vec<BenchSet>> {
    let same = |a: &Path, b: &Path| {
        a == b
            || a.canonicalize()
                .ok()
                .is_some_and(|a| b.canonicalize().ok() == Some(a))
    };
    let mut sets = BenchSet::in_folder(&m.dir)?;
    for set in given {
        if !sets.iter().any(|s| same(&s.path, &set.path)) {
            sets.push(set.clone());
        }
    }
    Ok(sets)
}

#[cfg(test)]
mod tests {
    use super::toml_number;

    #[test]
    fn toml_numbers_keep_every_digit_without_needless_exponents() {
        assert_eq!(toml_number(4.0), "4");
        assert_eq!(toml_number(132.0), "132");
        assert_eq!(toml_number(285.7035598032425), "285.7035598032425");
        assert_eq!(toml_number(1.7459360324405622e9), "1.7459360324405622e9");
        assert_eq!(toml_number(3.914125522177344e-6), "3.914125522177344e-6");
        assert_eq!(toml_number(2.097152e6), "2.097152e6");
        for v in [4.0, 285.7035598032425, 1.7459360324405622e9, 3.914125522177344e-6] {
            assert_eq!(toml_number(v).parse::<f64>().unwrap(), v, "round trip");
        }
    }
}
