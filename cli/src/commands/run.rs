//! `hetsim run`: one local simulation, no server.

use std::collections::BTreeMap;
use std::io::Write;
use std::rc::Rc;

use anyhow::{anyhow, Result};
use hetsim_scripting::{
    app_inputs, check_variables, labels_over_defaults, with_declared_defaults, Detail, RunOptions, RunReport,
};
use hetsim_service::table::{byte_rate, duration, number};
use hetsim_simulator::collectives::Algorithm;
use hetsim_simulator::{Activity, Options, Progress, ProgressFn};
use hetsim_system::{load_with, Variable};
use indicatif::ProgressBar;

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
    let algorithm = algorithm(&args.algorithm)?;
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
    let report = simulate(
        &args,
        &app,
        variables(&args.vars)?,
        &labels(&args.labels)?,
        &options,
    );
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let report = report?;
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

/// The algorithm of collectives that name none, from `--algorithm`.
pub(super) fn algorithm(text: &str) -> Result<Algorithm> {
    Algorithm::parse(text)
        .ok_or_else(|| anyhow!("--algorithm {text:?}: expected nccl, binomial, flat or ring"))
}

/// One simulation of the app `app` (read from `args.app`) on `args.system` with these
/// variables and labels, checked as `hetsim run` checks them.
pub(super) fn simulate(
    args: &RunArgs,
    app: &str,
    variables: BTreeMap<String, Variable>,
    labels: &BTreeMap<String, u64>,
    options: &RunOptions,
) -> Result<RunReport> {
    let system = load_with(&args.system, &variables).map_err(|e| anyhow!(e))?;
    let labels = labels_over_defaults(&system, labels);
    let origin = args.app.display().to_string();
    let inputs = app_inputs(app, &origin).map_err(|e| anyhow!(e))?;
    let for_the_app = variables.keys().filter(|name| !system.variables.contains(name));
    check_variables(&inputs, for_the_app.map(String::as_str), &origin).map_err(|e| anyhow!(e))?;
    let variables = with_declared_defaults(&inputs, variables);
    hetsim_scripting::run(app, &origin, &system, &labels, &variables, options)
        .map_err(|e| anyhow!("simulation failed: {e}"))
}

/// A bar of finished processes on stderr, shown only to a person at a terminal; the engine
/// updates it every few tens of thousands of events, so short runs never draw it.
fn progress_bar() -> Option<ProgressBar> {
    crate::progress::bar(0, "{pos}/{len} processes finished, {msg}")
}

/// A MERPSYS-like summary: each process's finish time (the first few), finish times per
/// label, energy per node, the computes and transfers by kind, overall time, total energy
/// and failure chance. Times take the unit that suits each ([`duration`]).
pub(super) fn summary(report: &RunReport) -> String {
    const MAX_ROWS: usize = 20;
    let r = &report.results;
    let mut out = String::new();
    for p in r.processes.iter().take(MAX_ROWS) {
        out += &format!(
            "{}[{}] on {} finished at {} (compute {}, wait {})\n",
            p.label,
            p.rank,
            p.node,
            duration(p.finish_time),
            duration(p.compute_time),
            duration(p.wait_time)
        );
    }
    if r.processes.len() > MAX_ROWS {
        out += &format!(
            "... and {} more processes (--json --detail processes lists all)\n",
            r.processes.len() - MAX_ROWS
        );
    }
    for l in report.summary().labels {
        out += &format!(
            "label {}: {} processes finished between {} and {} (median {}, p99 {})\n",
            l.label,
            l.count,
            duration(l.finish.min),
            duration(l.finish.max),
            duration(l.finish.p50),
            duration(l.finish.p99)
        );
    }
    for n in r.nodes.iter().take(MAX_ROWS) {
        out += &format!(
            "node {} consumed {} J, {} J of it idle (busy {})\n",
            n.id,
            number(n.energy),
            number(n.idle_energy),
            duration(n.busy_time)
        );
    }
    for a in report.activities.iter().take(MAX_ROWS) {
        out += &activity(a);
    }
    for line in &report.log {
        out += &format!("log: {line}\n");
    }
    if report.log_dropped > 0 {
        out += &format!("log: {} more lines dropped\n", report.log_dropped);
    }
    out += &format!("Overall time {}\n", duration(r.overall_time));
    let [low, high] = r.overall_time_interval;
    if high > low {
        out += &format!(
            "Overall time, 90 % error bar: {} to {}\n",
            duration(low),
            duration(high)
        );
    }
    out += &format!("Total consumed energy {} J\n", number(r.total_energy));
    out += &format!("Failure chance {}\n", r.failure_chance);
    out
}

/// One row of the computes and transfers by kind: a compute's model and limiter, a
/// transfer's bytes (whole) and achieved bandwidth (bytes over the summed send-to-arrival).
fn activity(a: &Activity) -> String {
    let times = if a.count == 1 {
        "once".to_owned()
    } else {
        format!("{} times", a.count)
    };
    if a.kind == "transfer" {
        let rate = if a.seconds > 0.0 {
            byte_rate(a.bytes / a.seconds)
        } else {
            "—".to_owned()
        };
        format!(
            "transfers {}: {times}, {:.0} bytes in {} (achieved {rate})\n",
            a.place,
            a.bytes,
            duration(a.seconds)
        )
    } else {
        let limiter = if a.limiter.is_empty() {
            String::new()
        } else {
            format!(", limited by {}", a.limiter)
        };
        format!(
            "computes on {}: {} model{limiter}, {times}, {} in all\n",
            a.place,
            a.model,
            duration(a.seconds)
        )
    }
}
