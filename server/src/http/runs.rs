//! Submitting, reading, cancelling and deleting runs and sweeps.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{ApiError, ApiResult, AppState, Body, Params, Path};
use crate::run::{RunSpec, RunStatus, Submission};
use crate::storage::{RunFilter, RunRecord, SweepSummary};
use crate::trace::{chrome, RunTrace, TraceFormat};

/// 202 with the queued run.
pub async fn submit(
    State(s): State<AppState>,
    Body(sub): Body<Submission>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let spec = RunSpec::check(&s.store, &s.limits, sub, false).await?;
    let runs = spec.runs();
    s.store.insert_runs(&spec.queue, &spec.input, &runs, None).await?;
    s.queue.submitted();
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "id": runs[0].id, "status": RunStatus::Queued })),
    ))
}

/// 202 with the sweep and its runs.
pub async fn submit_sweep(
    State(s): State<AppState>,
    Body(sub): Body<Submission>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let spec = RunSpec::check(&s.store, &s.limits, sub, true).await?;
    let runs = spec.runs();
    let id = crate::run::new_id();
    s.store
        .insert_runs(&spec.queue, &spec.input, &runs, Some(&id))
        .await?;
    s.queue.submitted();
    let ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    Ok((StatusCode::ACCEPTED, Json(json!({ "id": id, "runs": ids }))))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    pub status: Option<RunStatus>,
    pub queue: Option<String>,
    pub sweep: Option<String>,
    pub limit: Option<i64>,
}

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

pub async fn show(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<RunRecord>> {
    s.store
        .run(&id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("run", &id))
}

async fn output(s: &AppState, id: &str) -> ApiResult<(Option<String>, String)> {
    let Some(status) = s.store.status(id).await? else {
        return Err(ApiError::not_found("run", id));
    };
    s.store.run_output(id).await?.ok_or_else(|| ApiError::Conflict {
        field: None,
        message: format!("run {id} has no result ({status})"),
    })
}

/// The query of `GET /api/runs/{id}/trace`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceQuery {
    /// `native` (default): the spans as stored; `chrome`: the Chrome trace-event format
    /// (Perfetto, chrome://tracing).
    pub format: Option<TraceFormat>,
}

/// `GET /api/runs/{id}/trace[?format=native|chrome]`: the run's trace (`null` where the run
/// stored none; in the Chrome format, only the events naming its nodes and processes).
pub async fn trace(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Params(q): Params<TraceQuery>,
) -> ApiResult<Json<Value>> {
    let (trace, _) = output(&s, &id).await?;
    let spans = trace
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    match q.format.unwrap_or_default() {
        TraceFormat::Native => Ok(Json(spans)),
        TraceFormat::Chrome => {
            let result = s
                .store
                .run(&id)
                .await?
                .and_then(|run| run.result)
                .ok_or_else(|| ApiError::not_found("run", &id))?;
            Ok(Json(chrome(&RunTrace::from_stored(&result, &spans)?)))
        }
    }
}

pub async fn log(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<String> {
    Ok(output(&s, &id).await?.1)
}

pub async fn sweep(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<SweepSummary>> {
    s.store
        .sweep(&id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("sweep", &id))
}

/// `POST /api/runs/{id}/cancel`: 202 once the run is cancelled (a worker running it stops
/// within a second); 409 for a run that finished first.
pub async fn cancel(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    match s.store.cancel_run(&id).await? {
        None => Err(ApiError::not_found("run", &id)),
        Some(RunStatus::Cancelled) => Ok((
            StatusCode::ACCEPTED,
            Json(json!({ "id": id, "status": RunStatus::Cancelled })),
        )),
        Some(finished) => Err(ApiError::Conflict {
            field: None,
            message: format!("run {id} is already {finished}"),
        }),
    }
}

/// `POST /api/sweeps/{id}/cancel`: 202 with how many of its runs were cancelled (the
/// finished ones keep their outcome).
pub async fn cancel_sweep(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let cancelled = s
        .store
        .cancel_sweep(&id)
        .await?
        .ok_or_else(|| ApiError::not_found("sweep", &id))?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "id": id, "cancelled": cancelled })),
    ))
}

/// `DELETE /api/runs/{id}`: the run, its result, trace and log (cancelled first if it is
/// unfinished). 204.
pub async fn delete(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<StatusCode> {
    if s.store.delete_run(&id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("run", &id))
    }
}

/// `DELETE /api/sweeps/{id}`: the sweep and all its runs as `DELETE /api/runs/{id}`. 204.
pub async fn delete_sweep(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<StatusCode> {
    if s.store.delete_sweep(&id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("sweep", &id))
    }
}
