//! `hetsim validate`: predicts a measurement folder with the models and scores the
//! predictions (hetsim-lab's validation), printing the tables or writing the report.

use anyhow::{bail, Result};
use hetsim_lab::validate::{coverage, table, validate, write_report};

use crate::cli::ValidateArgs;

pub fn run(args: ValidateArgs) -> Result<()> {
    let spinner = crate::progress::stages();
    let stage = |name: &str| {
        if let Some(spinner) = &spinner {
            spinner.set_message(format!("validating: {name}"));
        }
    };
    let v = validate(
        &args.data,
        &args.app,
        &args.system,
        args.gpu.as_deref(),
        args.held_out,
        &stage,
    );
    if let Some(spinner) = &spinner {
        spinner.finish_and_clear();
    }
    let v = v?;
    if let Some(path) = &args.report {
        write_report(&v, path)?;
    }
    if args.json {
        super::print_json(&v)?;
    } else {
        println!("validation on {}\n\n{}", v.data, table(&v.checks));
        println!(
            "cross-validation (each group held out)\n\n{}",
            table(&v.cross_validation)
        );
        println!("kernel families\n\n{}", table(&v.families));
        println!(
            "gpu-queueing refitted without each kernel family\n\n{}",
            table(&v.refit)
        );
        println!(
            "error bars (90 % intervals)\n\n{}",
            coverage::table(&v.error_bars)
        );
    }
    let missed: Vec<&str> = v
        .checks
        .iter()
        .chain(&v.families)
        .chain(&v.refit)
        .filter(|c| !c.pass)
        .map(|c| c.name.as_str())
        .chain(v.error_bars.iter().filter(|c| !c.pass).map(|c| c.name.as_str()))
        .collect();
    if !missed.is_empty() {
        bail!("targets missed: {}", missed.join("; "));
    }
    Ok(())
}
