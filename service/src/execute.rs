//! Executing one run, for every kind of worker: claim it, simulate it off the async
//! threads under its budgets while renewing its lease, write the outcome once, fenced by the
//! lease (a late outcome from a lease the reaper took back is discarded and logged). A
//! script error, a sandbox limit, a budget passed or a panic fails the run at once and leaves
//! the worker running; a run whose worker dies or freezes is taken back by the reaper once
//! its lease expires, and retried up to its attempts. A run cancelled while it runs is
//! stopped through its sandbox's cancel flag within [`CANCEL_POLL`] and a slice of script.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Duration;

use anyhow::Result;
use hetsim_scripting::{CancelFlag, RunOptions};
use hetsim_simulator::Results;
use hetsim_system::{SystemFile, Variable};

use crate::budgets::RunBudgets;
use crate::replayed::COMPUTE_VARIABLE;
use crate::storage::{Lease, RunInputs, RunOutput, Store, StoreError, TraceFile};

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

/// Simulates a run: its app, or the stored trace it replays (whose rank files are `files`).
fn simulate(
    inputs: &RunInputs,
    files: &[TraceFile],
    cancel: CancelFlag,
    max_run_memory: Option<u64>,
) -> Result<RunOutput, String> {
    let labels: BTreeMap<String, u64> =
        serde_json::from_str(&inputs.labels).map_err(|e| format!("stored labels: {e}"))?;
    let variables: BTreeMap<String, Variable> =
        serde_json::from_str(&inputs.variables).map_err(|e| format!("stored variables: {e}"))?;
    inject_faults(&variables);
    let system = SystemFile::parse(&inputs.system, "system")?.resolve_with("system", None, &variables)?;
    let mut options = RunOptions {
        cancel,
        ..RunOptions::default()
    };
    options.limits.max_run_memory = max_run_memory;
    options.engine.trace = inputs.trace;
    options.engine.max_spans = Some(MAX_TRACE_SPANS);
    let (mut report, ranks) = match &inputs.replay {
        Some(replay) => {
            crate::replayed::replay(files, run_policy(&variables, &replay.compute), &system, &options)?
        }
        None => (
            hetsim_scripting::run(&inputs.app, "app.rhai", &system, &labels, &variables, &options)?,
            Vec::new(),
        ),
    };
    check_finite(&report.results)?;
    let trace = match report.results.trace.take() {
        Some(spans) => Some(serde_json::to_string(&spans).map_err(|e| e.to_string())?),
        None => None,
    };
    if report.log_dropped > 0 {
        report.log.push(format!(
            "the log holds the first {} lines; {} more were dropped (limits max_log_lines {} and \
             max_log_bytes {})",
            report.log.len(),
            report.log_dropped,
            options.limits.max_log_lines,
            options.limits.max_log_bytes
        ));
    }
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
        ranks,
    })
}

/// A replayed trace's compute policy: the run's variable `compute` (every trace run since
/// a sweep could vary it has one), else its submission's (runs stored before).
fn run_policy<'a>(variables: &'a BTreeMap<String, Variable>, submitted: &'a str) -> &'a str {
    match variables.get(COMPUTE_VARIABLE) {
        Some(Variable::Text(policy)) => policy,
        _ => submitted,
    }
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

/// Why a worker stops waiting for its simulation.
enum Interruption {
    /// The run is no longer held by this attempt: cancelled, deleted, or its lease expired
    /// and the reaper took it back (a frozen worker, a database out of reach).
    NotHeld,
    /// The run passed its wall-time budget.
    OverTime,
}

/// Watches a running simulation: checks every [`CANCEL_POLL`] that the run is still held,
/// and returns at the first interruption. A database that does not answer interrupts
/// nothing: the lease then runs out on its own.
async fn watch(store: &Store, lease: &Lease, budgets: &RunBudgets) -> Interruption {
    let deadline = tokio::time::Instant::now() + budgets.max_run_time;
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => return Interruption::OverTime,
            _ = tokio::time::sleep(CANCEL_POLL) => {}
        }
        if let Ok(false) = store.holds(lease).await {
            return Interruption::NotHeld;
        }
    }
}

/// Renews `lease` every [`RunBudgets::renew_every`], for as long as its run is simulated
/// and its outcome written (a million process rows take longer than a lease to write).
async fn keep_renewing(store: &Store, lease: &Lease, budgets: &RunBudgets) -> Infallible {
    loop {
        tokio::time::sleep(budgets.renew_every()).await;
        if let Err(e) = store.renew(lease, budgets.lease).await {
            tracing::warn!(run = lease.run, "renewing the lease failed: {e:#}");
        }
    }
}

/// How long a worker waits for a simulation it stopped to end before it leaves the thread
/// behind (a run stops at its next check, normally within a slice of script).
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Runs `id` (for a broker message, of `publication`) to its end if it can claim it;
/// returns once its outcome is committed or discarded (then the queue may ack).
pub async fn execute(
    store: &Store,
    id: &str,
    worker: &str,
    publication: Option<i64>,
    budgets: &RunBudgets,
) -> Result<()> {
    let claim = persistently("claiming", id, || {
        store.claim(id, worker, publication, budgets.lease)
    })
    .await?;
    match claim {
        Some(lease) => run_claimed(store, &lease, budgets).await,
        None => Ok(()),
    }
}

/// Runs the run of `lease` to its end under `budgets`, renewing the lease all along:
/// simulates it off the async threads, then writes its outcome, fenced by the lease.
pub async fn run_claimed(store: &Store, lease: &Lease, budgets: &RunBudgets) -> Result<()> {
    tokio::select! {
        done = run_held(store, lease, budgets) => done,
        never = keep_renewing(store, lease, budgets) => match never {},
    }
}

async fn run_held(store: &Store, lease: &Lease, budgets: &RunBudgets) -> Result<()> {
    let id = lease.run.as_str();
    let Some(inputs) = persistently("reading the inputs", id, || store.run_inputs(lease)).await? else {
        return Ok(());
    };
    let files = match &inputs.replay {
        Some(replay) => {
            let files = persistently("reading the trace", id, || store.trace_files(&replay.trace_id)).await?;
            if files.is_empty() {
                return fail(store, lease, "the stored trace this run replays was deleted").await;
            }
            files
        }
        None => Vec::new(),
    };
    tracing::info!(run = id, attempt = lease.attempt, "simulating");
    let cancel = CancelFlag::default();
    let memory = budgets.max_run_memory.map(|b| b.0);
    let mut simulation = tokio::task::spawn_blocking({
        let cancel = cancel.clone();
        move || simulate(&inputs, &files, cancel, memory)
    });
    let outcome = tokio::select! {
        outcome = &mut simulation => outcome,
        why = watch(store, lease, budgets) => {
            cancel.cancel();
            if tokio::time::timeout(STOP_GRACE, simulation).await.is_err() {
                tracing::warn!(run = id, "the stopped simulation did not end within {STOP_GRACE:?}; its thread is left to end on its own");
            }
            return match why {
                Interruption::NotHeld => {
                    tracing::warn!(run = id, attempt = lease.attempt, "stopped: {NOT_HELD}");
                    Ok(())
                }
                Interruption::OverTime => {
                    let message = format!(
                        "the run took longer than its wall-time budget of {} s (limit --max-run-seconds)",
                        budgets.max_run_time.as_secs()
                    );
                    fail(store, lease, &message).await
                }
            };
        }
    };
    match outcome {
        Ok(Ok(out)) => {
            tracing::info!(run = id, processes = out.processes.len(), "storing the result");
            store_result(store, lease, &out).await
        }
        Ok(Err(message)) => fail(store, lease, &message).await,
        Err(panic) => fail(store, lease, &format!("the simulator panicked: {panic}")).await,
    }
}

/// Stores the result of `lease`'s run, fenced by the lease; a result the database cannot
/// take still ends the run, as a failure.
async fn store_result(store: &Store, lease: &Lease, out: &RunOutput) -> Result<()> {
    let id = lease.run.as_str();
    match persistently("storing the result", id, || store.finish_run(lease, out)).await {
        Ok(true) => {
            tracing::info!(run = id, attempt = lease.attempt, "result stored");
            Ok(())
        }
        Ok(false) => {
            discarded(lease, "result");
            Ok(())
        }
        Err(e) => fail(store, lease, &format!("the result could not be stored: {e:#}")).await,
    }
}

/// Fails the run of `lease` with `message`, if the lease is still held.
async fn fail(store: &Store, lease: &Lease, message: &str) -> Result<()> {
    if !persistently("storing the failure", &lease.run, || {
        store.fail_attempt(lease, message)
    })
    .await?
    {
        discarded(lease, "failure");
    }
    Ok(())
}

/// Logs a late outcome that the lease's fence refused.
fn discarded(lease: &Lease, what: &str) {
    tracing::warn!(
        run = lease.run,
        attempt = lease.attempt,
        "{what} discarded: {NOT_HELD}"
    );
}

/// Why a worker stops, or drops its outcome, when its lease's fence refuses it.
const NOT_HELD: &str =
    "the run is no longer held by this attempt (cancelled, deleted, or its lease passed to another worker)";
