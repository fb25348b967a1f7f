//! Submitting runs and sweeps, and reading them back.

use std::collections::{BTreeMap, HashMap};

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use hetsim_scripting::{check_app, check_labels, default_labels, SystemFile, Variable, RESERVED_NAMES};
use serde::Deserialize;
use serde_json::Value;

use super::{ApiError, ApiResult, AppState, Body};
use crate::limits::{checked_product, ServiceLimits};
use crate::queue::{valid_queue_name, MAX_QUEUE_NAME};
use crate::storage::{Library, NewRun, RunFilter, RunRecord, Store, SweepSummary};

/// `POST /api/runs` and `POST /api/sweeps`. In a sweep, any label count or variable may be
/// a list; the cartesian product is queued.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Submission {
    pub queue: String,
    /// The application's Rhai source, or `app_id` of a stored one.
    pub app: Option<String>,
    pub app_id: Option<String>,
    /// The system as TOML text or as a JSON object, or `system_id` of a stored one.
    pub system: Option<Value>,
    pub system_id: Option<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, Value>,
    #[serde(default)]
    pub variables: BTreeMap<String, Value>,
}

pub fn parse_system_text(text: &str, origin: &str) -> Result<SystemFile, String> {
    SystemFile::parse(text, origin)
}

/// The text of stored item `id`, or a 422 on `field` naming the kind of item (`what`).
async fn stored_text(
    store: &Store,
    library: Library,
    id: &str,
    field: &str,
    what: &str,
) -> ApiResult<String> {
    store
        .named(library, Some(id), None)
        .await?
        .pop()
        .map(|n| n.body)
        .ok_or_else(|| ApiError::field(field, format!("no stored {what} with id {id}")))
}

/// The submitted system, made self-contained with the database's components and models,
/// and checked: returns its JSON and the resolved system.
async fn system(store: &Store, sub: &Submission) -> ApiResult<(String, hetsim_scripting::System)> {
    let file = match (&sub.system, &sub.system_id) {
        (Some(_), Some(_)) => {
            return Err(ApiError::field(
                "system",
                "give `system` or `system_id`, not both",
            ))
        }
        (None, None) => return Err(ApiError::field("system", "`system` or `system_id` is required")),
        (Some(Value::String(text)), None) => parse_system_text(text, "system"),
        (Some(object @ Value::Object(_)), None) => {
            serde_json::from_value::<SystemFile>(object.clone()).map_err(|e| format!("system: {e}"))
        }
        (Some(_), None) => Err("system: expected TOML text or a JSON object".to_owned()),
        (None, Some(id)) => parse_system_text(
            &stored_text(store, Library::Systems, id, "system_id", "system").await?,
            "system",
        ),
    }
    .map_err(|e| ApiError::field("system", e))?;
    let components: HashMap<String, _> = store
        .components(None, None)
        .await?
        .into_iter()
        .filter_map(|c| c.spec.to_component().ok().map(|k| (c.spec.name.clone(), k)))
        .collect();
    let models: HashMap<String, String> = store
        .named(Library::Models, None, None)
        .await?
        .into_iter()
        .map(|m| (m.name, m.body))
        .collect();
    let file = file.inline(|n| components.get(n).cloned(), |n| models.get(n).cloned());
    let json = serde_json::to_string(&file).map_err(|e| ApiError::field("system", e.to_string()))?;
    let resolved = file
        .resolve("system", None)
        .map_err(|e| ApiError::field("system", e))?;
    Ok((json, resolved))
}

/// Each key with its values: one value, or (when `lists`) a JSON array of them.
fn axes<T>(
    values: &BTreeMap<String, Value>,
    field: &str,
    lists: bool,
    read: impl Fn(&Value) -> Option<T>,
    expected: &str,
) -> ApiResult<Vec<(String, Vec<T>)>> {
    values
        .iter()
        .map(|(key, value)| {
            let items: Vec<&Value> = match value {
                Value::Array(items) if lists => items.iter().collect(),
                Value::Array(_) => {
                    return Err(ApiError::field(
                        &format!("{field}.{key}"),
                        "a list is allowed only in a sweep",
                    ))
                }
                single => vec![single],
            };
            if items.is_empty() {
                return Err(ApiError::field(&format!("{field}.{key}"), "an empty list"));
            }
            let read: Option<Vec<T>> = items.into_iter().map(&read).collect();
            read.map(|v| (key.clone(), v))
                .ok_or_else(|| ApiError::field(&format!("{field}.{key}"), format!("expected {expected}")))
        })
        .collect()
}

fn scalar_variable(value: &Value) -> Option<Variable> {
    Variable::deserialize(value).ok()
}

/// Every combination of one value per axis.
fn product<T: Clone>(axes: &[(String, Vec<T>)]) -> Vec<BTreeMap<String, T>> {
    axes.iter()
        .fold(vec![BTreeMap::new()], |combinations, (key, values)| {
            combinations
                .iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.insert(key.clone(), v.clone());
                        c
                    })
                })
                .collect()
        })
}

/// 422 on `field`: `got` passes the limit `name`, which is `max`.
fn over_limit(field: &str, got: String, max: usize, name: &str) -> ApiError {
    ApiError::field(field, format!("{got}; at most {max} (limit {name})"))
}

/// Refuses variables that are too many, too long or named like what every script has.
fn check_variables(variables: &BTreeMap<String, Value>, limits: &ServiceLimits) -> ApiResult<()> {
    if variables.len() > limits.max_variables {
        return Err(over_limit(
            "variables",
            format!("{} variables", variables.len()),
            limits.max_variables,
            "max_variables",
        ));
    }
    for (name, value) in variables {
        let field = format!("variables.{name}");
        if RESERVED_NAMES.contains(&name.as_str()) {
            return Err(ApiError::field(
                &field,
                format!("a reserved name (every script has {})", RESERVED_NAMES.join(", ")),
            ));
        }
        let texts: Vec<&str> = match value {
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            other => other.as_str().into_iter().collect(),
        };
        if texts.iter().any(|t| t.len() > limits.max_variable_bytes) {
            return Err(ApiError::field(
                &field,
                format!(
                    "a text longer than {} bytes (limit max_variable_bytes)",
                    limits.max_variable_bytes
                ),
            ));
        }
    }
    Ok(())
}

/// Checks a submission and expands it into runs (one, or a sweep's product).
async fn prepare(
    store: &Store,
    limits: &ServiceLimits,
    sub: Submission,
    lists: bool,
) -> ApiResult<Vec<NewRun>> {
    if !valid_queue_name(&sub.queue) {
        return Err(ApiError::field(
            "queue",
            format!("1 to {MAX_QUEUE_NAME} letters, digits, '-' or '_'"),
        ));
    }
    check_variables(&sub.variables, limits)?;
    let app = match (&sub.app, &sub.app_id) {
        (Some(_), Some(_)) => return Err(ApiError::field("app", "give `app` or `app_id`, not both")),
        (None, None) => return Err(ApiError::field("app", "`app` or `app_id` is required")),
        (Some(app), None) => app.clone(),
        (None, Some(id)) => stored_text(store, Library::Apps, id, "app_id", "application").await?,
    };
    if app.len() > limits.max_script_bytes {
        return Err(over_limit(
            "app",
            format!("{} bytes", app.len()),
            limits.max_script_bytes,
            "max_script_bytes",
        ));
    }
    check_app(&app, "app").map_err(|e| ApiError::field("app", e))?;
    let (system_json, system) = system(store, &sub).await?;
    let label_axes = axes(
        &sub.labels,
        "labels",
        lists,
        |v| v.as_u64(),
        "a whole number of processes",
    )?;
    let variable_axes = axes(
        &sub.variables,
        "variables",
        lists,
        scalar_variable,
        "a number, a bool or a string",
    )?;
    let sizes = label_axes
        .iter()
        .map(|a| a.1.len())
        .chain(variable_axes.iter().map(|a| a.1.len()));
    let Some(combinations) = checked_product(sizes, limits.max_sweep_runs) else {
        return Err(ApiError::field(
            "variables",
            format!(
                "the lists make more than {} runs (limit max_sweep_runs)",
                limits.max_sweep_runs
            ),
        ));
    };
    let mut runs = Vec::with_capacity(combinations as usize);
    for labels in product(&label_axes) {
        let labels = if labels.is_empty() {
            default_labels(&system)
        } else {
            labels
        };
        check_labels(&system, &labels, limits.max_processes).map_err(|e| ApiError::field("labels", e))?;
        for variables in product(&variable_axes) {
            runs.push(NewRun {
                id: uuid::Uuid::new_v4().to_string(),
                queue: sub.queue.clone(),
                app: app.clone(),
                system: system_json.clone(),
                labels: labels.clone(),
                variables,
            });
        }
    }
    Ok(runs)
}

pub async fn submit(
    State(s): State<AppState>,
    Body(sub): Body<Submission>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let runs = prepare(&s.store, &s.limits, sub, false).await?;
    s.store.insert_runs(&runs, None).await?;
    s.wake.notify_waiters();
    Ok((
        StatusCode::ACCEPTED,
        Json(serde_json::json!({ "id": runs[0].id, "status": "queued" })),
    ))
}

pub async fn submit_sweep(
    State(s): State<AppState>,
    Body(sub): Body<Submission>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let runs = prepare(&s.store, &s.limits, sub, true).await?;
    let id = uuid::Uuid::new_v4().to_string();
    s.store.insert_runs(&runs, Some(&id)).await?;
    s.wake.notify_waiters();
    let ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    Ok((
        StatusCode::ACCEPTED,
        Json(serde_json::json!({ "id": id, "runs": ids })),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    pub status: Option<String>,
    pub queue: Option<String>,
    pub sweep: Option<String>,
    pub limit: Option<i64>,
}

pub async fn list(State(s): State<AppState>, Query(q): Query<ListQuery>) -> ApiResult<Json<Vec<RunRecord>>> {
    if let Some(status) = &q.status {
        if !["queued", "running", "done", "failed"].contains(&status.as_str()) {
            return Err(ApiError::field("status", "one of queued, running, done, failed"));
        }
    }
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
    if s.store.run(id).await?.is_none() {
        return Err(ApiError::not_found("run", id));
    }
    s.store
        .run_output(id)
        .await?
        .ok_or_else(|| ApiError::new(StatusCode::CONFLICT, format!("run {id} has no result yet")))
}

pub async fn trace(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    let (trace, _) = output(&s, &id).await?;
    Ok(Json(
        trace
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null),
    ))
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
