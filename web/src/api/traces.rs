//! Stored Chakra execution traces: stored (read whole first, refused with the reader's
//! error naming the file, the rank and the node), listed, read and deleted. A submission
//! replays one by its name (`trace_name`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use utoipa::IntoParams;

use super::openapi::{BodyErrors, NotFound};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, Path};
use crate::state::AppState;
use hetsim_service::storage::{check_trace, TraceFile, TraceRecord, TraceRefused, TraceUpload};

/// The trace a route is about.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // a parameter's documentation only: the handlers read it as a String
struct TraceName {
    /// The trace's name (percent-encoded), or, except to `PUT`, its id. An id wins over a
    /// name.
    name: String,
}

/// The id of the trace that `key` names (its id, else its name), or a 404.
async fn trace_id(s: &AppState, key: &str) -> ApiResult<String> {
    s.store
        .trace_id(key)
        .await?
        .ok_or_else(|| ApiError::not_found_by_id_or_name("trace", key))
}

/// Every stored trace, by name: its ranks and node counts, without the files' bytes.
#[utoipa::path(get, path = "/api/traces", tag = "traces",
    responses((status = 200, description = "The traces", body = Vec<TraceRecord>)))]
pub async fn list(State(s): State<AppState>) -> ApiResult<Json<Vec<TraceRecord>>> {
    Ok(Json(s.store.traces().await?))
}

/// One stored trace: its ranks and node counts, without the files' bytes.
#[utoipa::path(get, path = "/api/traces/{name}", tag = "traces", params(TraceName),
    responses((status = 200, description = "The trace", body = TraceRecord), NotFound))]
pub async fn show(State(s): State<AppState>, Path(key): Path<String>) -> ApiResult<Json<TraceRecord>> {
    s.store
        .trace(&key)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found_by_id_or_name("trace", &key))
}

/// A stored trace's rank files with their bytes (base64), rank 0 first.
#[utoipa::path(get, path = "/api/traces/{name}/files", tag = "traces", params(TraceName),
    responses((status = 200, description = "The rank files", body = Vec<TraceFile>), NotFound))]
pub async fn files(State(s): State<AppState>, Path(key): Path<String>) -> ApiResult<Json<Vec<TraceFile>>> {
    let id = trace_id(&s, &key).await?;
    Ok(Json(s.store.trace_files(&id).await?))
}

/// Stores a trace under `name` (replacing the files of a trace of that name): its rank
/// files, rank 0 first, are read whole and their dependency graphs built first; a file that
/// does not read is refused (422, field `files`) with the reader's error naming the file,
/// the rank and the node, and nothing is stored.
#[utoipa::path(put, path = "/api/traces/{name}", tag = "traces",
    params(TraceName),
    request_body = TraceUpload,
    responses(
        (status = 201, description = "Stored", body = TraceRecord),
        (status = 200, description = "Replaced", body = TraceRecord),
        BodyErrors,
    ))]
pub async fn put(
    State(s): State<AppState>,
    Path(name): Path<String>,
    Body(upload): Body<TraceUpload>,
) -> ApiResult<(StatusCode, Json<TraceRecord>)> {
    let (name, files, nodes) = check_off_thread(name, upload.files).await?;
    let nodes = nodes.map_err(|refused| ApiError::invalid(refused.field(), refused.to_string()))?;
    let (record, replaced) = s.store.put_trace(&name, &files, &nodes).await?;
    let status = if replaced {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((status, Json(record)))
}

/// `check_trace` of `name`'s `files` off the async threads (reading a trace is CPU work):
/// the name and files back, with each rank's node count or why the trace is refused. The
/// API's `PUT` and the UI's form store a trace through it.
pub(crate) async fn check_off_thread(
    name: String,
    files: Vec<TraceFile>,
) -> ApiResult<(String, Vec<TraceFile>, Result<Vec<u64>, TraceRefused>)> {
    tokio::task::spawn_blocking(move || {
        let nodes = check_trace(&name, &files);
        (name, files, nodes)
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("reading the trace: {e}")))
}

/// Deletes a stored trace (runs that replayed it keep their results; queued ones fail).
#[utoipa::path(delete, path = "/api/traces/{name}", tag = "traces", params(TraceName),
    responses((status = 204, description = "Deleted"), NotFound))]
pub async fn delete(State(s): State<AppState>, Path(key): Path<String>) -> ApiResult<StatusCode> {
    let id = trace_id(&s, &key).await?;
    if s.store.delete_trace(&id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found_by_id_or_name("trace", &key))
    }
}
