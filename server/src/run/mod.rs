//! The run model of the service: what a submission becomes once checked ([`RunSpec`]), the
//! statuses a run goes through ([`RunStatus`]), and queueing a submission ([`enqueue`]),
//! which the API and the web UI share.

mod spec;
mod status;

pub use spec::{new_id, RunSpec, SpecError, Submission};
pub use status::RunStatus;

use crate::limits::ServiceLimits;
use crate::queue::RunQueue;
use crate::storage::Store;

/// What a queued submission became: its sweep, if it is one, and its runs.
#[derive(Clone, Debug)]
pub struct Queued {
    pub sweep: Option<String>,
    pub runs: Vec<String>,
}

/// Checks `sub` whole, stores its runs (under a new sweep when `sweep`) and wakes the queue.
pub async fn enqueue(
    store: &Store,
    queue: &dyn RunQueue,
    limits: &ServiceLimits,
    sub: Submission,
    sweep: bool,
) -> Result<Queued, SpecError> {
    let spec = RunSpec::check(store, limits, sub, sweep).await?;
    let runs = spec.runs();
    let sweep = sweep.then(new_id);
    store
        .insert_runs(&spec.queue, &spec.input, &runs, sweep.as_deref())
        .await?;
    queue.submitted();
    Ok(Queued {
        sweep,
        runs: runs.into_iter().map(|r| r.id).collect(),
    })
}
