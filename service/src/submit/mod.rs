//! The run model of the service: what a submission becomes once checked ([`RunSpec`]), the
//! statuses a run goes through ([`RunStatus`]), and queueing a submission ([`enqueue`]),
//! which the API and the web UI share.

mod spec;

pub use crate::status::RunStatus;
pub use hetsim_scripting::AppInput;
pub use spec::{new_id, RunSpec, SpecError, Submission, COMPUTE_VARIABLE};

use hetsim_system::Variable;
use serde_json::Value;

use crate::limits::ServiceLimits;
use crate::queue::RunQueue;
use crate::storage::Store;

/// The inputs of `app` (named `origin` in errors), found on a blocking thread: finding them
/// compiles the app once per input (`hetsim_scripting::inputs`), which an async executor's
/// threads must not wait for.
pub async fn app_inputs(app: &str, origin: &str) -> Result<Vec<AppInput>, String> {
    let (app, origin) = (app.to_owned(), origin.to_owned());
    tokio::task::spawn_blocking(move || {
        hetsim_scripting::app_inputs(&app, &origin).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| format!("finding the app's inputs: {e}"))?
}

/// `V1,V2,…` as a sweep submission gives one label or variable: each item, trimmed, read by
/// `read`; one item as itself, more as a list. The CLI's flags and the UI's fields share it.
pub fn comma_list<E>(text: &str, read: impl Fn(&str) -> Result<Value, E>) -> Result<Value, E> {
    let mut items = text
        .split(',')
        .map(|v| read(v.trim()))
        .collect::<Result<Vec<_>, E>>()?;
    Ok(if items.len() == 1 {
        items.pop().unwrap_or(Value::Null)
    } else {
        Value::Array(items)
    })
}

/// A label's process count as a submission gives it, or `None` for text that is not a
/// whole number.
pub fn label_count(text: &str) -> Option<Value> {
    text.parse::<u64>().ok().map(Value::from)
}

/// A variable's value as a submission gives it, its type inferred from the text.
pub fn variable_value(text: &str) -> Value {
    serde_json::to_value(Variable::infer(text)).unwrap_or(Value::Null)
}

/// What a queued submission became: its sweep, if it is one, and its runs.
#[derive(Clone, Debug)]
pub struct Queued {
    pub sweep: Option<String>,
    pub runs: Vec<String>,
}

/// Checks `sub` whole, stores its runs (under a new sweep when `sweep`, each naming its
/// `submitter`) and wakes the queue.
pub async fn enqueue(
    store: &Store,
    queue: &dyn RunQueue,
    limits: &ServiceLimits,
    sub: Submission,
    sweep: bool,
    submitter: Option<&str>,
) -> Result<Queued, SpecError> {
    let spec = RunSpec::check(store, limits, sub, sweep).await?;
    let runs = spec.runs();
    let sweep = sweep.then(new_id);
    store
        .insert_runs(&spec.queue, &spec.input, &runs, sweep.as_deref(), submitter)
        .await?;
    queue.submitted();
    Ok(Queued {
        sweep,
        runs: runs.into_iter().map(|r| r.id).collect(),
    })
}
