//! Submitting, reading, cancelling and deleting runs and sweeps.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::openapi::{BodyErrors, NotFound};
use crate::access::Identity;
use crate::download::{self, Disposition};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, Params, Path};
use crate::state::AppState;
use hetsim_charts::trace::{chrome, RunTrace, TraceFormat};
use hetsim_service::storage::{
    ProcessPage, RunFilter, RunRecord, RunSource, StoredOutput, SweepRow, SweepSummary, MAX_PAGE,
};
use hetsim_service::submit::{enqueue, RunStatus, Submission};

/// A run queued, or cancelled.
#[derive(Serialize, ToSchema)]
pub struct RunAccepted {
    id: String,
    status: RunStatus,
}

/// A sweep queued: its id and its runs' ids.
#[derive(Serialize, ToSchema)]
pub struct SweepQueued {
    id: String,
    runs: Vec<String>,
}

/// A sweep cancelled: how many of its runs were.
#[derive(Serialize, ToSchema)]
pub struct SweepCancelled {
    id: String,
    cancelled: u64,
}

/// Queues one run.
#[utoipa::path(post, path = "/api/runs", tag = "runs", request_body = Submission,
    responses((status = 202, description = "Queued", body = RunAccepted), BodyErrors))]
pub async fn submit(
    State(s): State<AppState>,
    who: Identity,
    Body(sub): Body<Submission>,
) -> ApiResult<(StatusCode, Json<RunAccepted>)> {
    let queued = enqueue(&s.store, s.queue.as_ref(), &s.limits, sub, false, who.submitter()).await?;
    let id = queued.runs.into_iter().next();
    let accepted = RunAccepted {
        id: id.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("a checked run queued no run")))?,
        status: RunStatus::Queued,
    };
    Ok((StatusCode::ACCEPTED, Json(accepted)))
}

/// Queues a sweep: any label count or variable may be a list, and their cartesian product
/// is queued (at most --max-sweep-runs runs).
#[utoipa::path(post, path = "/api/sweeps", tag = "sweeps", request_body = Submission,
    responses((status = 202, description = "Queued", body = SweepQueued), BodyErrors))]
pub async fn submit_sweep(
    State(s): State<AppState>,
    who: Identity,
    Body(sub): Body<Submission>,
) -> ApiResult<(StatusCode, Json<SweepQueued>)> {
    let queued = enqueue(&s.store, s.queue.as_ref(), &s.limits, sub, true, who.submitter()).await?;
    let id = queued.sweep.unwrap_or_default();
    Ok((
        StatusCode::ACCEPTED,
        Json(SweepQueued {
            id,
            runs: queued.runs,
        }),
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only runs in this status.
    pub status: Option<RunStatus>,
    /// Only runs of this queue.
    pub queue: Option<String>,
    /// Only the runs of this sweep.
    pub sweep: Option<String>,
    /// At most this many runs (1 to 100,000; default 1000).
    pub limit: Option<i64>,
}

/// Runs in submission order.
#[utoipa::path(get, path = "/api/runs", tag = "runs", params(ListQuery),
    responses(
        (status = 200, description = "The runs", body = Vec<RunRecord>),
        (status = 400, description = "A query parameter cannot be read", body = crate::error::ErrorBody),
    ))]
pub async fn list(
    State(s): State<AppState>,
    Params(q): Params<ListQuery>,
) -> ApiResult<Json<Vec<RunRecord>>> {
    let filter = RunFilter {
        status: q.status,
        queue: q.queue,
        sweep: q.sweep,
    };
    Ok(Json(
        s.store
            .runs(&filter, q.limit.unwrap_or(1000).clamp(1, 100_000))
            .await?,
    ))
}

/// One run, with its result once done.
#[utoipa::path(get, path = "/api/runs/{id}", tag = "runs", params(("id" = String, Path, description = "The run's id")),
    responses((status = 200, description = "The run", body = RunRecord), NotFound))]
pub async fn show(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<RunRecord>> {
    s.store
        .run(&id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("run", &id))
}

async fn output(s: &AppState, id: &str) -> ApiResult<StoredOutput> {
    let Some(status) = s.store.status(id).await? else {
        return Err(ApiError::not_found("run", id));
    };
    s.store.run_output(id).await?.ok_or_else(|| ApiError::Conflict {
        field: None,
        message: format!("run {id} has no result ({status})"),
    })
}

/// The query of `GET /api/runs/{id}/trace`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TraceQuery {
    /// `native` (default): the spans as stored; `chrome`: the Chrome trace-event format
    /// (Perfetto, chrome://tracing).
    #[param(value_type = Option<String>, example = "chrome")]
    pub format: Option<TraceFormat>,
}

/// The run's trace: its spans (process, kind, start, end, detail), or with
/// `?format=chrome` the Chrome trace-event format. A run records a trace only when its
/// submission asked (`"trace": true`); one without answers 404 saying so. A trace capped at
/// `MAX_TRACE_SPANS` holds the spans recorded first; the Chrome format then says how many
/// more were not recorded (`otherData.truncated` and a global instant event).
#[utoipa::path(get, path = "/api/runs/{id}/trace", tag = "runs",
    params(("id" = String, Path, description = "The run's id"), TraceQuery),
    responses(
        (status = 200, description = "The spans; or a Chrome trace {traceEvents, displayTimeUnit, otherData}", body = super::trace_schema::TraceDocument),
        (status = 404, description = "No such run, or the run stored no trace (the message says which)", body = crate::error::ErrorBody),
        (status = 409, description = "The run has no result yet", body = crate::error::ErrorBody),
    ))]
pub async fn trace(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Params(q): Params<TraceQuery>,
) -> ApiResult<Response> {
    let out = output(&s, &id).await?;
    let Some(text) = out.trace else {
        return Err(ApiError::NotFound {
            what: "trace",
            id: format!("for run {id}: it was submitted without \"trace\": true, so it recorded none"),
        });
    };
    let spans: Value = serde_json::from_str(&text).map_err(|e| ApiError::Internal(e.into()))?;
    let format = q.format.unwrap_or_default();
    let document = match format {
        TraceFormat::Native => spans,
        TraceFormat::Chrome => {
            let overall_time = s
                .store
                .run(&id)
                .await?
                .and_then(|run| run.result)
                .and_then(|result| result["overall_time"].as_f64())
                .unwrap_or(0.0);
            let processes = s.store.all_processes(&id).await?;
            let count = processes.len();
            let run = RunTrace::stored(overall_time, count, processes, &spans, out.trace_dropped)?;
            chrome(&run)
        }
    };
    let name = match format {
        TraceFormat::Native => format!("run-{}-trace.json", short(&id)),
        TraceFormat::Chrome => format!("run-{}-trace-chrome.json", short(&id)),
    };
    Ok(download::file(
        &name,
        "application/json",
        Disposition::Inline,
        Json(document),
    ))
}

/// The query of `GET /api/runs/{id}/processes`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ProcessQuery {
    /// Only the processes of this label (then `offset` counts ranks within it).
    pub label: Option<String>,
    /// Skip this many (default 0).
    pub offset: Option<i64>,
    /// At most this many (1 to 10,000; default 1000).
    pub limit: Option<i64>,
}

/// A page of a done run's processes, in pid order (rank order within a label): label, rank,
/// node, finish time with its error bar, compute and wait times [s]; `total` counts them all.
#[utoipa::path(get, path = "/api/runs/{id}/processes", tag = "runs",
    params(("id" = String, Path, description = "The run's id"), ProcessQuery),
    responses(
        (status = 200, description = "The page", body = ProcessPage),
        NotFound,
        (status = 409, description = "The run has no result yet", body = crate::error::ErrorBody),
    ))]
pub async fn processes(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Params(q): Params<ProcessQuery>,
) -> ApiResult<Json<ProcessPage>> {
    output(&s, &id).await?;
    let limit = q.limit.unwrap_or(1000);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::invalid(
            "limit",
            format!("{limit}: expected 1 to {MAX_PAGE}"),
        ));
    }
    let offset = q.offset.unwrap_or(0);
    if offset < 0 {
        return Err(ApiError::invalid(
            "offset",
            format!("{offset}: expected 0 or more"),
        ));
    }
    let page = s.store.processes(&id, q.label.as_deref(), offset, limit).await?;
    Ok(Json(page))
}

/// The run's log, as text.
#[utoipa::path(get, path = "/api/runs/{id}/log", tag = "runs", params(("id" = String, Path, description = "The run's id")),
    responses(
        (status = 200, description = "The log", body = String, content_type = "text/plain"),
        NotFound,
        (status = 409, description = "The run has no result yet", body = crate::error::ErrorBody),
    ))]
pub async fn log(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let log = output(&s, &id).await?.log;
    let name = format!("run-{}-log.txt", short(&id));
    Ok(download::file(
        &name,
        "text/plain; charset=utf-8",
        Disposition::Inline,
        log,
    ))
}

/// The first 8 characters of an id, as file names and tables show it.
fn short(id: &str) -> String {
    id.chars().take(8).collect()
}

/// A sweep: how many of its runs are in each status, and their ids.
#[utoipa::path(get, path = "/api/sweeps/{id}", tag = "sweeps", params(("id" = String, Path, description = "The sweep's id")),
    responses((status = 200, description = "The sweep", body = SweepSummary), NotFound))]
pub async fn sweep(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<SweepSummary>> {
    s.store
        .sweep(&id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("sweep", &id))
}

/// What a run ran: its app's source and its self-contained system.
#[utoipa::path(get, path = "/api/runs/{id}/source", tag = "runs", params(("id" = String, Path, description = "The run's id")),
    responses((status = 200, description = "The app and the system", body = RunSource), NotFound))]
pub async fn source(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<RunSource>> {
    s.store
        .run_source(&id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("run", &id))
}

/// `GET /api/sweeps`'s query.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SweepsQuery {
    /// At most this many sweeps (1 to 10,000; default 100).
    pub limit: Option<i64>,
}

/// Sweeps, the newest first.
#[utoipa::path(get, path = "/api/sweeps", tag = "sweeps", params(SweepsQuery),
    responses((status = 200, description = "The sweeps", body = Vec<SweepRow>)))]
pub async fn list_sweeps(
    State(s): State<AppState>,
    Params(q): Params<SweepsQuery>,
) -> ApiResult<Json<Vec<SweepRow>>> {
    let limit = q.limit.unwrap_or(100).clamp(1, 10_000);
    Ok(Json(s.store.recent_sweeps(limit).await?))
}

/// A sweep's runs as CSV, a row per run ordered by its inputs: id, status, `label:NAME`
/// columns, variables, overall time, energy, failure chance, error (`hetsim results --csv`).
#[utoipa::path(get, path = "/api/sweeps/{id}/results.csv", tag = "sweeps", params(("id" = String, Path, description = "The sweep's id")),
    responses((status = 200, description = "The runs as CSV", body = String, content_type = "text/csv"), NotFound))]
pub async fn sweep_csv(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    if s.store.sweep(&id).await?.is_none() {
        return Err(ApiError::not_found("sweep", &id));
    }
    let runs: Vec<Value> = s
        .store
        .sweep_runs(&id)
        .await?
        .iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .collect();
    let name = format!("sweep-{}.csv", short(&id));
    Ok(download::csv(&name, hetsim_service::table::runs_csv(&runs)))
}

/// Cancels a run: 202 once it is cancelled (a worker running it stops within a second),
/// again for a cancelled run; 409 for a run that finished first.
#[utoipa::path(post, path = "/api/runs/{id}/cancel", tag = "runs", params(("id" = String, Path, description = "The run's id")),
    responses(
        (status = 202, description = "Cancelled", body = RunAccepted),
        NotFound,
        (status = 409, description = "The run is already done or failed", body = crate::error::ErrorBody),
    ))]
pub async fn cancel(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<RunAccepted>)> {
    match s.store.cancel_run(&id).await? {
        None => Err(ApiError::not_found("run", &id)),
        Some(RunStatus::Cancelled) => Ok((
            StatusCode::ACCEPTED,
            Json(RunAccepted {
                id,
                status: RunStatus::Cancelled,
            }),
        )),
        Some(finished) => Err(ApiError::Conflict {
            field: None,
            message: format!("run {id} is already {finished}"),
        }),
    }
}

/// Cancels a sweep's unfinished runs: 202 with how many were cancelled (the finished ones
/// keep their outcome).
#[utoipa::path(post, path = "/api/sweeps/{id}/cancel", tag = "sweeps", params(("id" = String, Path, description = "The sweep's id")),
    responses((status = 202, description = "Its unfinished runs are cancelled", body = SweepCancelled), NotFound))]
pub async fn cancel_sweep(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<SweepCancelled>)> {
    let cancelled = s
        .store
        .cancel_sweep(&id)
        .await?
        .ok_or_else(|| ApiError::not_found("sweep", &id))?;
    Ok((StatusCode::ACCEPTED, Json(SweepCancelled { id, cancelled })))
}

/// Deletes a run with its result, trace and log (cancelled first if it is unfinished).
#[utoipa::path(delete, path = "/api/runs/{id}", tag = "runs", params(("id" = String, Path, description = "The run's id")),
    responses((status = 204, description = "Deleted"), NotFound))]
pub async fn delete(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<StatusCode> {
    if s.store.delete_run(&id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("run", &id))
    }
}

/// Deletes a sweep and all its runs, as `DELETE /api/runs/{id}` does.
#[utoipa::path(delete, path = "/api/sweeps/{id}", tag = "sweeps", params(("id" = String, Path, description = "The sweep's id")),
    responses((status = 204, description = "Deleted"), NotFound))]
pub async fn delete_sweep(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<StatusCode> {
    if s.store.delete_sweep(&id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("sweep", &id))
    }
}
