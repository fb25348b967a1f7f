//! `hetsim run` given lists (`--var blockSize=128,256,512`, `--label GPU=1,2,4`): a sweep on
//! this machine, without a server. The runs are the product of the lists, as `hetsim sweep`
//! makes them; they run on the machine's cores, one run a thread, and the answer is the
//! sweep table `hetsim results` prints for a stored sweep (or its JSON or CSV).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Result};
use hetsim_scripting::RunOptions;
use hetsim_service::table::{runs_csv, runs_table};
use hetsim_simulator::collectives::Algorithm;
use serde_json::{json, Map, Value};

use super::run::{algorithm, labels, simulate, variables};
use crate::cli::RunArgs;
use crate::input::pair;
use hetsim_lab::files::read_text;

/// Whether `args` give a list (a value with a comma) to a variable or a label.
pub fn asked(args: &RunArgs) -> bool {
    args.vars
        .iter()
        .chain(&args.labels)
        .any(|text| text.split_once('=').is_some_and(|(_, value)| value.contains(',')))
}

/// One run of the sweep: its `NAME=VALUE` flags.
struct Point {
    vars: Vec<String>,
    labels: Vec<String>,
}

pub fn run(args: &RunArgs) -> Result<()> {
    if args.trace.is_some() || args.timeline.is_some() {
        bail!("--trace and --timeline write one run's file: give single values, not lists, to write them");
    }
    let app = read_text(&args.app)?;
    let algorithm = algorithm(&args.algorithm)?;
    let points = product(&args.vars, &args.labels)?;
    let next = AtomicUsize::new(0);
    let rows: Mutex<Vec<Option<Value>>> = Mutex::new(vec![None; points.len()]);
    let bar = crate::progress::bar(points.len() as u64, "{pos}/{len} runs");
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(points.len());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(point) = points.get(index) else { break };
                let row = row(index, point, simulated(args, &app, point, algorithm));
                if let Ok(mut rows) = rows.lock() {
                    rows[index] = Some(row);
                }
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
            });
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let runs: Vec<Value> = rows
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .into_iter()
        .flatten()
        .collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
    } else if args.csv {
        print!("{}", runs_csv(&runs));
    } else {
        print!("{}", runs_table(&runs));
    }
    let failed = runs.iter().filter(|r| r["status"] != "done").count();
    if failed > 0 {
        bail!(
            "{failed} of {} runs failed (their error is in the table)",
            runs.len()
        );
    }
    Ok(())
}

/// The product of the flags' lists, the first flag varying slowest.
fn product(vars: &[String], labels: &[String]) -> Result<Vec<Point>> {
    let lists = |flags: &[String], flag: &str| -> Result<Vec<Vec<String>>> {
        flags
            .iter()
            .map(|text| {
                let (name, values) = pair(text, flag)?;
                Ok(values
                    .split(',')
                    .map(|v| format!("{name}={}", v.trim()))
                    .collect())
            })
            .collect()
    };
    let (vars, labels) = (lists(vars, "--var")?, lists(labels, "--label")?);
    let mut points = vec![Point {
        vars: Vec::new(),
        labels: Vec::new(),
    }];
    for (list, is_label) in vars
        .iter()
        .map(|l| (l, false))
        .chain(labels.iter().map(|l| (l, true)))
    {
        points = points
            .into_iter()
            .flat_map(|point| {
                list.iter().map(move |value| {
                    let mut next = Point {
                        vars: point.vars.clone(),
                        labels: point.labels.clone(),
                    };
                    if is_label {
                        &mut next.labels
                    } else {
                        &mut next.vars
                    }
                    .push(value.clone());
                    next
                })
            })
            .collect();
    }
    Ok(points)
}

/// The run's overall time and total energy, or why it failed.
fn simulated(args: &RunArgs, app: &str, point: &Point, algorithm: Algorithm) -> Result<(f64, f64)> {
    let mut options = RunOptions {
        algorithm,
        ..RunOptions::default()
    };
    options.limits.max_slice_seconds = args.max_slice_seconds;
    let report = simulate(
        args,
        app,
        variables(&point.vars)?,
        &labels(&point.labels)?,
        &options,
    )?;
    Ok((report.results.overall_time, report.results.total_energy))
}

/// The run as the server's runs read (`id`, `status`, `labels`, `variables`, `result` or
/// `error`), so that one table prints both.
fn row(index: usize, point: &Point, outcome: Result<(f64, f64)>) -> Value {
    let given = |flags: &[String], typed: fn(&str) -> Value| -> Map<String, Value> {
        flags
            .iter()
            .filter_map(|text| text.split_once('='))
            .map(|(name, value)| (name.to_owned(), typed(value)))
            .collect()
    };
    let variable = |v: &str| serde_json::to_value(hetsim_system::Variable::infer(v)).unwrap_or(Value::Null);
    let count = |v: &str| v.parse::<u64>().map_or_else(|_| json!(v), |n| json!(n));
    let mut run = json!({
        "id": (index + 1).to_string(),
        "labels": given(&point.labels, count),
        "variables": given(&point.vars, variable),
    });
    match outcome {
        Ok((overall_time, total_energy)) => {
            run["status"] = json!("done");
            run["result"] = json!({"overall_time": overall_time, "total_energy": total_energy});
        }
        Err(error) => {
            run["status"] = json!("failed");
            run["error"] = json!(error.to_string());
        }
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_product_varies_the_first_list_slowest() {
        let vars = ["a=1,2".to_owned(), "b=x".to_owned()];
        let labels = ["GPU=1,4".to_owned()];
        let points = product(&vars, &labels).unwrap();
        let flat: Vec<String> = points
            .iter()
            .map(|p| format!("{} {}", p.vars.join(" "), p.labels.join(" ")))
            .collect();
        assert_eq!(
            flat,
            ["a=1 b=x GPU=1", "a=1 b=x GPU=4", "a=2 b=x GPU=1", "a=2 b=x GPU=4"]
        );
    }
}
