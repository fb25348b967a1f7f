//! `hetsim run`: one local simulation, no server.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::rc::Rc;

use anyhow::{anyhow, bail, Result};
use hetsim_scripting::{
    app_inputs, check_variables, labels_over_defaults, with_declared_defaults, Detail, RunOptions, RunReport,
};
use hetsim_service::table::number;
use hetsim_simulator::collectives::Algorithm;
use hetsim_simulator::{Options, Progress, ProgressFn};
use hetsim_system::{load_with, Variable};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::RunArgs;
use crate::input::pair;
use hetsim_charts::trace::{chrome, RunTrace, TraceFormat};
use hetsim_lab::files::{read_text, write_file};

pub(super) fn labels(args: &[String]) -> Result<BTreeMap<String, u64>> {
    let mut labels = BTreeMap::new();
    for text in args {
        let (name, count) = pair(text, "--label")?;
        let count = count
            .parse::<u64>()
            .map_err(|_| anyhow!("--label {text:?}: the count must be a whole number >= 0"))?;
        labels.insert(name.to_owned(), count);
    }
    Ok(labels)
}

pub(super) fn variables(args: &[String]) -> Result<BTreeMap<String, Variable>> {
    args.iter()
        .map(|text| {
            let (name, value) = pair(text, "--var")?;
            Ok((name.to_owned(), Variable::infer(value)))
        })
        .collect()
}

pub fn run(args: RunArgs) -> Result<()> {
    let app = read_text(&args.app)?;
    let variables = variables(&args.vars)?;
    let system = load_with(&args.system, &variables).map_err(|e| anyhow!(e))?;
    let labels = labels_over_defaults(&system, &labels(&args.labels)?);
    let origin = args.app.display().to_string();
    let inputs = app_inputs(&app, &origin).map_err(|e| anyhow!(e))?;
    let for_the_app = variables.keys().filter(|name| !system.variables.contains(name));
    check_variables(&inputs, for_the_app.map(String::as_str), &origin).map_err(|e| anyhow!(e))?;
    let variables = with_declared_defaults(&inputs, variables);
    let Some(algorithm) = Algorithm::parse(&args.algorithm) else {
        bail!(
            "--algorithm {:?}: expected nccl, binomial, flat or ring",
            args.algorithm
        );
    };
    let detail = Detail::from(args.detail);
    let bar = progress_bar();
    let mut options = RunOptions {
        engine: Options {
            trace: detail.needs_trace() || args.trace.is_some() || args.timeline.is_some(),
            progress: bar.clone().map(|bar| -> ProgressFn {
                Rc::new(move |p: Progress| {
                    bar.set_length(p.processes as u64);
                    bar.set_position(p.finished as u64);
                    bar.set_message(format!("t = {:.6} s, {} events", p.now, p.events));
                })
            }),
            ..Options::default()
        },
        algorithm,
        ..RunOptions::default()
    };
    options.limits.max_slice_seconds = args.max_slice_seconds;
    let report = hetsim_scripting::run(&app, &origin, &system, &labels, &variables, &options);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let report = report.map_err(|e| anyhow!("simulation failed: {e}"))?;
    if let Some(path) = &args.trace {
        let trace = match args.trace_format {
            TraceFormat::Native => serde_json::to_string(&report.results.trace)?,
            TraceFormat::Chrome => serde_json::to_string(&chrome(&RunTrace::of(&report.results)))?,
        };
        write_file(path, trace)?;
    }
    if let Some(path) = &args.timeline {
        write_file(path, hetsim_charts::timeline_svg(&report.results))?;
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        report.write_json(detail, &mut out)?;
    } else if args.csv {
        report.write_csv(detail, &mut out)?;
    } else {
        out.write_all(summary(&report).as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// A bar of finished processes on stderr, shown only to a person at a terminal; the engine
/// updates it every few tens of thousands of events, so short runs never draw it.
fn progress_bar() -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} processes finished, {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    Some(bar)
}

/// A MERPSYS-like summary: each process's finish time (the first few), finish times per
/// label, energy per node, overall time, total energy and failure chance.
pub(super) fn summary(report: &RunReport) -> String {
    const MAX_PROCESSES: usize = 20;
    let r = &report.results;
    let mut out = String::new();
    for p in r.processes.iter().take(MAX_PROCESSES) {
        out += &format!(
            "{}[{}] on {} finished at {} ms (compute {} ms, wait {} ms)\n",
            p.label,
            p.rank,
            p.node,
            ms(p.finish_time),
            ms(p.compute_time),
            ms(p.wait_time)
        );
    }
    if r.processes.len() > MAX_PROCESSES {
        out += &format!(
            "... and {} more processes (--json --detail processes lists all)\n",
            r.processes.len() - MAX_PROCESSES
        );
    }
    for l in report.summary().labels {
        out += &format!(
            "label {}: {} processes finished between {} and {} ms (median {} ms, p99 {} ms)\n",
            l.label,
            l.count,
            ms(l.finish.min),
            ms(l.finish.max),
            ms(l.finish.p50),
            ms(l.finish.p99)
        );
    }
    for n in r.nodes.iter().take(MAX_PROCESSES) {
        out += &format!(
            "node {} consumed {} J (busy {} ms)\n",
            n.id,
            number(n.energy),
            ms(n.busy_time)
        );
    }
    for line in &report.log {
        out += &format!("log: {line}\n");
    }
    if report.log_dropped > 0 {
        out += &format!("log: {} more lines dropped\n", report.log_dropped);
    }
    out += &format!("Overall time {} ms\n", ms(r.overall_time));
    let [low, high] = r.overall_time_interval;
    if high > low {
        out += &format!("Overall time, 90 % error bar: {} to {} ms\n", ms(low), ms(high));
    }
    out += &format!("Total consumed energy {} J\n", number(r.total_energy));
    out += &format!("Failure chance {}\n", r.failure_chance);
    out
}

/// Seconds as milliseconds, written as every table writes numbers.
fn ms(seconds: f64) -> String {
    number(seconds * 1e3)
}
