//! `hetsim calibrate`: kernel λ (eq. 4.4) and link startup/λ per direction (eq. 5.5) from
//! measurements.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Result};
use hetsim_models::calibrate::{fit_kernel_lambda, fit_link, kernel_lambda};

use crate::cli::{CalibrateCommand, CalibrateGpuArgs, CalibrateKernelArgs, CalibrateLinkArgs};

use hetsim_lab::files::{csv_rows, display_name, number_field};
use hetsim_lab::gpu::{attributes, calibrate_folder};
use hetsim_lab::measurements::Measurements;

pub fn run(command: CalibrateCommand) -> Result<()> {
    match command {
        CalibrateCommand::Link(args) => link(args),
        CalibrateCommand::Kernel(args) => kernel(args),
        CalibrateCommand::Gpu(args) => gpu(args),
    }
}

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

fn link(args: CalibrateLinkArgs) -> Result<()> {
    if !is_positive(args.bandwidth) {
        bail!(
            "--bandwidth: expected a number > 0 [bytes/s], got {}",
            args.bandwidth
        );
    }
    let origin = display_name(&args.csv);
    let mut by_direction: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for (line, fields) in csv_rows(&args.csv, &["direction", "size", "seconds"])? {
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
            fit_link(samples, args.bandwidth).map_err(|e| anyhow!("{origin}: direction {direction}: {e}"))?;
        attributes.insert(format!("startup{direction}"), fit.startup.into());
        attributes.insert(format!("lambda{direction}"), fit.lambda.into());
        fits.insert(direction.to_string(), serde_json::to_value(&fit)?);
    }
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
    let origin = display_name(&args.csv);
    let mut pairs = Vec::new();
    for (line, fields) in csv_rows(&args.csv, &["estimated", "measured"])? {
        let estimated = number_field(&origin, line, "estimated", &fields[0])?;
        let measured = number_field(&origin, line, "measured", &fields[1])?;
        if !is_positive(measured) {
            bail!("{origin}: line {line}: field `measured`: expected a time > 0, got {measured}");
        }
        pairs.push((estimated, measured));
    }
    let lambda = fit_kernel_lambda(&pairs).map_err(|e| anyhow!("{origin}: {e}"))?;
    let each: Vec<f64> = pairs.iter().map(|&(e, m)| kernel_lambda(e, m)).collect();
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
    let c = calibrate_folder(&m, args.name)?;
    if args.json {
        let attrs: serde_json::Map<String, serde_json::Value> = attributes(&c)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.into()))
            .collect();
        return super::print_json(&serde_json::json!({ "calibration": c, "attributes": attrs }));
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
    println!("# a component for a system model's [[component]] table (model = \"gpu-queueing\")");
    println!(
        "[[component]]\nname = {:?}\nkind = \"GPU\"\nvendor = \"NVIDIA\"",
        c.name
    );
    println!(
        "source = \"hetsim calibrate gpu {}: props.csv (spec), launch.csv (overhead), sweep.csv and occupancy_block256.csv (fit), power.csv (power)\"",
        args.dir.display()
    );
    println!(
        "[component.attributes]\ncomputeCapability = {:?}",
        c.compute_capability
    );
    for (k, v) in attributes(&c) {
        println!("{k} = {v:e}");
    }
    Ok(())
}
