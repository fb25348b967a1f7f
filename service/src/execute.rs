//! Executing one run, for every kind of worker: claim it, simulate it off the async
//! threads, write the result once. A script error, a sandbox limit or a panic fails the run
//! at once and leaves the worker running; only a run that kills the worker's process is
//! retried (by the queue) up to its attempts. A run cancelled while it runs is stopped
//! through its sandbox's cancel flag within [`CANCEL_POLL`] and a slice of script.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Duration;

use anyhow::Result;
use hetsim_scripting::{CancelFlag, RunOptions};
use hetsim_simulator::Results;
use hetsim_system::{SystemFile, Variable};

use crate::status::RunStatus;
use crate::storage::{RunInputs, RunOutput, Start, Store, StoreError};

/// How often a worker reads the status of the run it simulates, to see a cancellation.
pub const CANCEL_POLL: Duration = Duration::from_millis(250);

/// The most trace spans a traced run stores: past it, the trace keeps the spans recorded
/// first and says how many it left out (`trace_dropped`, shown by the UI and the Chrome
/// export).
pub const MAX_TRACE_SPANS: usize = 1 << 20;

/// Built with the `fault-injection` feature (the tests' build), a worker honours the run
/// variable `abortWorker = true` by aborting its process: the "run that kills its worker"
/// of the delivery-limit tests. Production builds have no such path.
#[cfg(feature = "fault-injection")]
fn inject_faults(variables: &BTreeMap<String, Variable>) {
    if matches!(variables.get("abortWorker"), Some(Variable::Bool(true))) {
        std::process::abort();
    }
}

#[cfg(not(feature = "fault-injection"))]
fn inject_faults(_: &BTreeMap<String, Variable>) {}

fn simulate(inputs: &RunInputs, cancel: CancelFlag) -> Result<RunOutput, String> {
    let labels: BTreeMap<String, u64> =
        serde_json::from_str(&inputs.labels).map_err(|e| format!("stored labels: {e}"))?;
    let variables: BTreeMap<String, Variable> =
        serde_json::from_str(&inputs.variables).map_err(|e| format!("stored variables: {e}"))?;
    inject_faults(&variables);
    let system = SystemFile::parse(&inputs.system, "system")?.resolve("system", None)?;
    let mut options = RunOptions {
        cancel,
        ..RunOptions::default()
    };
    options.engine.trace = inputs.trace;
    options.engine.max_spans = Some(MAX_TRACE_SPANS);
    let mut report = hetsim_scripting::run(&inputs.app, "app.rhai", &system, &labels, &variables, &options)?;
    check_finite(&report.results)?;
    let trace = match report.results.trace.take() {
        Some(spans) => Some(serde_json::to_string(&spans).map_err(|e| e.to_string())?),
        None => None,
    };
    let trace_dropped = report.results.trace_dropped;
    if trace_dropped > 0 {
        report.log.push(format!(
            "the trace holds the first {MAX_TRACE_SPANS} spans recorded; {trace_dropped} more were not stored \
             (limit MAX_TRACE_SPANS)"
        ));
    }
    Ok(RunOutput {
        summary: report.summary(),
        processes: std::mem::take(&mut report.results.processes),
        trace,
        trace_dropped,
        log: report.log.join("\n"),
    })
}

/// A run whose figures are not finite fails, naming the first: JSON has no NaN or infinity,
/// and storing them as null would pass a broken model off as a result.
fn check_finite(r: &Results) -> Result<(), String> {
    let figures = [
        ("overall_time".to_owned(), r.overall_time),
        ("total_energy".to_owned(), r.total_energy),
        ("failure_chance".to_owned(), r.failure_chance),
    ]
    .into_iter()
    .chain(r.nodes.iter().flat_map(|n| {
        [
            (format!("nodes[{}].energy", n.id), n.energy),
            (format!("nodes[{}].busy_time", n.id), n.busy_time),
        ]
    }));
    for (name, value) in figures {
        if !value.is_finite() {
            return Err(format!(
                "result `{name}` is {value}, not a finite number: check the attributes its models read (power, failureRate)"
            ));
        }
    }
    Ok(())
}

/// Tries `write` until it succeeds or `WRITE_ATTEMPTS` have failed, waiting longer each
/// time: a database restart or a busy SQLite file must not lose a finished simulation.
async fn persistently<T, F, Fut>(what: &str, id: &str, mut write: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = std::result::Result<T, StoreError>>,
{
    const WRITE_ATTEMPTS: u32 = 60;
    let mut delay = std::time::Duration::from_millis(50);
    for attempt in 1.. {
        match write().await {
            Ok(value) => return Ok(value),
            Err(e) if attempt < WRITE_ATTEMPTS => {
                tracing::warn!(run = id, "{what} failed (attempt {attempt}), retrying: {e:#}");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(std::time::Duration::from_secs(2));
            }
            Err(e) => return Err(anyhow::Error::new(e).context(format!("{what} of run {id}"))),
        }
    }
    unreachable!("the loop returns")
}

/// Sets `cancel` once run `id` is cancelled (or deleted). Never returns: it ends when the
/// simulation it watches does.
async fn watch_for_cancellation(store: &Store, id: &str, cancel: &CancelFlag) -> Infallible {
    loop {
        tokio::time::sleep(CANCEL_POLL).await;
        match store.status(id).await {
            Ok(Some(RunStatus::Running)) | Err(_) => {}
            Ok(_) => {
                tracing::info!(run = id, "cancelled: stopping the simulation");
                cancel.cancel();
                return std::future::pending().await;
            }
        }
    }
}

/// Runs `id` (for a broker message, of `publication`) to its end; returns once its outcome
/// is committed (then the queue may ack).
pub async fn execute(store: &Store, id: &str, worker: &str, publication: Option<i64>) -> Result<()> {
    let inputs = match persistently("claiming", id, || store.start_run(id, worker, publication)).await? {
        Start::Run(inputs) => inputs,
        Start::Skip => return Ok(()),
    };
    tracing::info!(run = id, attempt = inputs.attempts, "simulating");
    let cancel = CancelFlag::default();
    let simulation = tokio::task::spawn_blocking({
        let cancel = cancel.clone();
        move || simulate(&inputs, cancel)
    });
    let outcome = tokio::select! {
        outcome = simulation => outcome,
        never = watch_for_cancellation(store, id, &cancel) => match never {},
    };
    match outcome {
        Ok(Ok(out)) => {
            let stored = persistently("storing the result", id, || store.finish_run(id, &out)).await;
            // A result the database cannot take must still end the run, as a failure.
            if let Err(e) = stored {
                let message = format!("the result could not be stored: {e:#}");
                persistently("storing the failure", id, || store.fail_run(id, &message)).await?;
            }
        }
        Ok(Err(message)) => persistently("storing the failure", id, || store.fail_run(id, &message)).await?,
        Err(panic) => {
            let message = format!("the simulator panicked: {panic}");
            persistently("storing the failure", id, || store.fail_run(id, &message)).await?
        }
    }
    Ok(())
}
