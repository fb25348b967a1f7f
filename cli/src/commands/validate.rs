//! `hetsim validate`: predicts a measurement folder with the models and scores the
//! predictions (hetsim-lab's validation), printing the tables or writing the report.

use std::path::{Path, PathBuf};

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
    let data = shipped(args.data, "--data", "examples/validation/data/h100")?;
    let app = shipped(args.app, "--app", "examples/validation/saxpy2/app.rhai")?;
    let system = shipped(args.system, "--system", "examples/validation/saxpy2/h100.toml")?;
    let v = validate(
        &data,
        &app,
        &system,
        args.gpu.as_deref(),
        args.held_out,
        args.refit_teg,
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
        for line in &v.not_run {
            println!("{line}");
        }
        if !v.not_run.is_empty() {
            println!();
        }
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
    let missed = v.missed();
    if !missed.is_empty() {
        bail!("targets missed: {}", missed.join("; "));
    }
    Ok(())
}

/// The source tree this binary was built from: where the shipped defaults live when hetsim
/// runs from another directory (an installed binary keeps finding them while its clone is
/// there).
const SOURCE_TREE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// `given`, or the shipped `default` (a path in the repository) found under the current
/// directory or else the source tree; refused naming `flag` when neither has it.
fn shipped(given: Option<PathBuf>, flag: &str, default: &str) -> Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path);
    }
    match find_under(default, &[Path::new("."), Path::new(SOURCE_TREE)]) {
        Some(path) => Ok(path),
        None => bail!(
            "{flag}: its default {default} is neither under the current directory nor under the \
             source tree hetsim was built from ({SOURCE_TREE}); pass {flag} with a path"
        ),
    }
}

/// The first of `bases` holding `relative`, joined to it; the current directory's stays
/// relative, so reports name the path as the user would.
fn find_under(relative: &str, bases: &[&Path]) -> Option<PathBuf> {
    bases.iter().find_map(|base| {
        let path = if *base == Path::new(".") {
            PathBuf::from(relative)
        } else {
            base.join(relative)
        };
        path.exists().then_some(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_missing_here_is_found_in_the_source_tree() {
        let elsewhere = std::env::temp_dir();
        let found = find_under(
            "examples/validation/saxpy2/app.rhai",
            &[&elsewhere, Path::new(SOURCE_TREE)],
        );
        assert_eq!(
            found,
            Some(Path::new(SOURCE_TREE).join("examples/validation/saxpy2/app.rhai"))
        );
    }

    #[test]
    fn a_default_found_nowhere_is_refused_naming_the_flag() {
        let refused = shipped(None, "--data", "no/such/folder").expect_err("nowhere");
        assert!(
            refused
                .to_string()
                .starts_with("--data: its default no/such/folder is neither"),
            "{refused}"
        );
        let given = shipped(Some(PathBuf::from("mine")), "--data", "no/such/folder").expect("given");
        assert_eq!(given, PathBuf::from("mine"));
    }
}
