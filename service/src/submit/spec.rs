//! A submission checked once, at submit: its queue, app and system, its labels against the
//! system, its variables against the app, every size against the service's limits (counts and
//! products checked, never wrapped). What passes is a [`RunSpec`], which expands into the
//! runs to store; a worker never meets a run that could have been refused here.

use std::collections::{BTreeMap, HashMap};

use hetsim_scripting::{check_labels, check_variables, declared_defaults, labels_over_defaults};
use hetsim_system::{System, SystemError, SystemFile, Variable};
use serde::Deserialize;
use serde_json::Value;

use crate::limits::{checked_product, ServiceLimits};
use crate::queue::{valid_queue_name, MAX_QUEUE_NAME};
use crate::storage::{Library, NewInput, NewRun, Store, StoreError};

mod replay;

pub use replay::COMPUTE_VARIABLE;

/// `POST /api/runs` and `POST /api/sweeps`. In a sweep, any label count or variable may be
/// a list; the cartesian product is queued. The application is given by exactly one of
/// `app`, `app_id` and `app_name`, the system by one of `system`, `system_id` and
/// `system_name`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({
    "app_name": "saxpy2",
    "system_name": "saxpy2-gtx970",
    "labels": {"GPU": 1},
    "variables": {"numElements": 400000000, "blockSize": 256}
})))]
#[serde(deny_unknown_fields)]
pub struct Submission {
    /// The queue: 1 to 64 letters, digits, '-' or '_' (default `default`, as the CLI's).
    #[serde(default = "default_queue")]
    pub queue: String,
    /// The application's Rhai source.
    pub app: Option<String>,
    /// The id of a stored application.
    pub app_id: Option<String>,
    /// The name of a stored application.
    pub app_name: Option<String>,
    /// The system as TOML text or as a JSON object.
    pub system: Option<Value>,
    /// The id of a stored system.
    pub system_id: Option<String>,
    /// The name of a stored system.
    pub system_name: Option<String>,
    /// Process counts per label (a sweep's may be lists); a label not given runs at its
    /// capacity.
    #[serde(default)]
    pub labels: BTreeMap<String, Value>,
    /// The run variables: numbers, bools or strings (a sweep's may be lists).
    #[serde(default)]
    pub variables: BTreeMap<String, Value>,
    /// Record each run's trace (spans of computes, sleeps, waits and sends), capped at
    /// `MAX_TRACE_SPANS`; without it a run stores its summary and processes only.
    #[serde(default)]
    pub trace: bool,
    /// The name (or id) of a stored Chakra trace to replay instead of an app: rank r runs
    /// on the r-th process of the label `GPU` (docs/TRACES.md); labels are not taken, and
    /// every variable must be one the system reads.
    pub trace_name: Option<String>,
    /// A trace's compute policy: `replay` (the default), `roofline` or `scale:GPU` (a
    /// catalog GPU the trace was recorded on); a sweep's may be a list of them, each run
    /// taking one as its variable `compute`.
    pub compute: Option<Value>,
}

/// The submission's variables as axes (a sweep's may be lists of values).
fn variable_axes(variables: &BTreeMap<String, Value>, sweep: bool) -> SpecResult<Vec<Axis<Variable>>> {
    axes(
        variables,
        "variables",
        sweep,
        |v| Variable::deserialize(v).ok(),
        "a number, a bool or a string",
    )
}

fn default_queue() -> String {
    "default".to_owned()
}

/// Why a submission was refused.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// `field` is wrong.
    #[error("{message}")]
    Invalid { field: String, message: String },
    /// `field` asks for more than the configured `limit` allows.
    #[error("{got}; at most {max} (limit {limit})")]
    OverLimit {
        field: String,
        got: String,
        max: u64,
        limit: &'static str,
    },
    /// The database failed while the submission was checked.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl SpecError {
    fn invalid(field: &str, message: impl Into<String>) -> Self {
        SpecError::Invalid {
            field: field.to_owned(),
            message: message.into(),
        }
    }

    fn over(field: &str, got: String, max: impl TryInto<u64>, limit: &'static str) -> Self {
        SpecError::OverLimit {
            field: field.to_owned(),
            got,
            max: max.try_into().unwrap_or(u64::MAX),
            limit,
        }
    }

    /// The field to blame.
    pub fn field(&self) -> &str {
        match self {
            SpecError::Invalid { field, .. } | SpecError::OverLimit { field, .. } => field,
            SpecError::Store(_) => "",
        }
    }
}

type SpecResult<T> = Result<T, SpecError>;

/// One key of a submission with its values: one value, or a sweep's list.
type Axis<T> = (String, Vec<T>);

/// A checked submission: its runs are the product of its label and variable axes.
#[derive(Debug)]
pub struct RunSpec {
    pub queue: String,
    /// The app and the self-contained system, stored once for all the runs.
    pub input: NewInput,
    labels: Vec<BTreeMap<String, u64>>,
    variables: Vec<Axis<Variable>>,
}

impl RunSpec {
    /// Checks `sub` (a sweep's when `sweep`, whose keys may hold lists) against `store`'s
    /// catalog and `limits`: sizes first, so that nothing is compiled or resolved for a
    /// submission over a limit.
    pub async fn check(
        store: &Store,
        limits: &ServiceLimits,
        sub: Submission,
        sweep: bool,
    ) -> SpecResult<RunSpec> {
        if !valid_queue_name(&sub.queue) {
            return Err(SpecError::invalid(
                "queue",
                format!("1 to {MAX_QUEUE_NAME} letters, digits, '-' or '_'"),
            ));
        }
        check_variable_sizes(&sub.variables, limits)?;
        if sub.trace_name.is_some() {
            return Self::check_replay(store, limits, sub, sweep).await;
        }
        if sub.compute.is_some() {
            return Err(SpecError::invalid(
                "compute",
                "a compute policy is for a trace (`trace_name`), not an app",
            ));
        }
        let app = app(store, &sub).await?;
        if app.len() > limits.max_script_bytes {
            return Err(SpecError::over(
                "app",
                format!("{} bytes", app.len()),
                limits.max_script_bytes,
                "max_script_bytes",
            ));
        }
        let label_axes = axes(
            &sub.labels,
            "labels",
            sweep,
            Value::as_u64,
            "a whole number of processes",
        )?;
        let mut variable_axes = variable_axes(&sub.variables, sweep)?;
        let sizes = label_axes
            .iter()
            .map(|a| a.1.len())
            .chain(variable_axes.iter().map(|a| a.1.len()));
        at_most_the_sweep_limit(sizes, limits)?;
        let inputs = super::app_inputs(&app, "app")
            .await
            .map_err(|e| SpecError::invalid("app", e))?;
        let (system_json, system) = system(store, &sub).await?;
        let for_the_app = sub
            .variables
            .keys()
            .filter(|name| !system.variables.contains(name));
        check_variables(&inputs, for_the_app.map(String::as_str), "the app")
            .map_err(|e| SpecError::invalid(&format!("variables.{}", e.name), e.message))?;
        // A single value adds no run and, wherever its axis sits, changes no run's order.
        for (name, value) in declared_defaults(&inputs) {
            if !sub.variables.contains_key(&name) {
                variable_axes.push((name, vec![value]));
            }
        }
        let variants = system_variants(&system_json, &system, &variable_axes)?;
        let checked: Vec<&System> = if variants.is_empty() {
            vec![&system]
        } else {
            variants.iter().collect()
        };
        let labels = combinations(&label_axes)
            .map(|labels| {
                let labels = labels_over_defaults(&system, &labels);
                for &variant in &checked {
                    check_labels(variant, &labels, limits.max_processes)
                        .map_err(|e| SpecError::invalid("labels", e))?;
                }
                Ok(labels)
            })
            .collect::<SpecResult<_>>()?;
        Ok(RunSpec {
            queue: sub.queue,
            input: NewInput {
                id: new_id(),
                app,
                system: system_json,
                trace: sub.trace,
                replay: None,
            },
            labels,
            variables: variable_axes,
        })
    }

    /// The runs: each label combination with each variable combination.
    pub fn runs(&self) -> Vec<NewRun> {
        self.labels
            .iter()
            .flat_map(|labels| {
                combinations(&self.variables).map(move |variables| NewRun {
                    id: new_id(),
                    labels: labels.clone(),
                    variables,
                })
            })
            .collect()
    }
}

pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Every combination of one value per axis, the last axis varying fastest. Each is built
/// once, in O(axes · log axes): a run of 20,000 variables costs no more than it must.
fn combinations<T: Clone>(axes: &[Axis<T>]) -> impl Iterator<Item = BTreeMap<String, T>> + '_ {
    let total: usize = axes.iter().map(|(_, values)| values.len()).product();
    (0..total).map(move |mut n| {
        axes.iter()
            .rev()
            .map(|(key, values)| {
                let value = values[n % values.len()].clone();
                n /= values.len();
                (key.clone(), value)
            })
            .collect()
    })
}

/// How a submission gives its app or its system: inline, or stored, by id or by name.
enum Given<'a, T> {
    Inline(&'a T),
    Stored(StoredKey<'a>),
}

/// A stored item's id or name, as a submission gives it.
enum StoredKey<'a> {
    Id(&'a str),
    Name(&'a str),
}

/// The one of `inline`, `id` and `name` that `field` (`app` or `system`) is given by; an
/// error naming the three when none or more than one is.
fn given<'a, T>(
    field: &str,
    inline: &'a Option<T>,
    id: &'a Option<String>,
    name: &'a Option<String>,
) -> SpecResult<Given<'a, T>> {
    match (inline, id, name) {
        (Some(text), None, None) => Ok(Given::Inline(text)),
        (None, Some(id), None) => Ok(Given::Stored(StoredKey::Id(id))),
        (None, None, Some(name)) => Ok(Given::Stored(StoredKey::Name(name))),
        _ => Err(SpecError::invalid(
            field,
            format!("give exactly one of `{field}`, `{field}_id` and `{field}_name`"),
        )),
    }
}

/// The text of the stored item of `library` that `key` names, or an error on `field_id` or
/// `field_name` naming the kind of item (`what`).
async fn stored_text(
    store: &Store,
    library: Library,
    key: StoredKey<'_>,
    field: &str,
    what: &str,
) -> SpecResult<String> {
    let (id, name, field, missing) = match key {
        StoredKey::Id(id) => (Some(id), None, format!("{field}_id"), format!("with id {id}")),
        StoredKey::Name(name) => (
            None,
            Some(name),
            format!("{field}_name"),
            format!("named {name:?}"),
        ),
    };
    store
        .named(library, id, name)
        .await?
        .pop()
        .map(|n| n.body)
        .ok_or_else(|| SpecError::invalid(&field, format!("no stored {what} {missing}")))
}

async fn app(store: &Store, sub: &Submission) -> SpecResult<String> {
    match given("app", &sub.app, &sub.app_id, &sub.app_name)? {
        Given::Inline(app) => Ok(app.clone()),
        Given::Stored(key) => stored_text(store, Library::Apps, key, "app", "application").await,
    }
}

/// The submitted system, made self-contained with the database's components and models,
/// and checked: returns its JSON and the resolved system.
async fn system(store: &Store, sub: &Submission) -> SpecResult<(String, System)> {
    // Messages name a stored system by its key (`stored system lab: kernel …`): the Launch
    // page says the field beside the message, and `system: system: …` told nothing.
    let given = given("system", &sub.system, &sub.system_id, &sub.system_name)?;
    let origin = match &given {
        Given::Stored(StoredKey::Id(key) | StoredKey::Name(key)) => format!("stored system {key}"),
        Given::Inline(_) => "system".to_owned(),
    };
    let file = match given {
        Given::Inline(Value::String(text)) => SystemFile::parse(text, &origin),
        Given::Inline(object @ Value::Object(_)) => SystemFile::from_value(object.clone(), &origin),
        Given::Inline(_) => Err(SystemError::new("expected TOML text or a JSON object").in_file(&origin)),
        Given::Stored(key) => SystemFile::parse(
            &stored_text(store, Library::Systems, key, "system", "system").await?,
            &origin,
        ),
    }
    .map_err(|e| SpecError::invalid("system", e))?;
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
    let json = serde_json::to_string(&file).map_err(|e| SpecError::invalid("system", e.to_string()))?;
    let resolved = file
        .resolve(&origin, None)
        .map_err(|e| SpecError::invalid("system", e))?;
    Ok((json, resolved))
}

/// The system as each combination of the run variables it reads resolves it (none when it
/// reads none), so that every run's labels are checked against the system it will run on. A
/// label a submission leaves out takes its count from the system at its own defaults.
fn system_variants(json: &str, system: &System, variable_axes: &[Axis<Variable>]) -> SpecResult<Vec<System>> {
    let read: Vec<Axis<Variable>> = variable_axes
        .iter()
        .filter(|(name, _)| system.variables.contains(name))
        .cloned()
        .collect();
    if read.is_empty() {
        return Ok(Vec::new());
    }
    let value: Value = serde_json::from_str(json).map_err(|e| SpecError::invalid("system", e.to_string()))?;
    combinations(&read)
        .map(|variables| {
            SystemFile::from_value(value.clone(), "system")
                .and_then(|file| file.resolve_with("system", None, &variables))
                .map_err(|e| SpecError::invalid("system", e))
        })
        .collect()
}

/// Each key with its values: one value, or (in a sweep) a JSON array of them.
fn axes<T>(
    values: &BTreeMap<String, Value>,
    field: &str,
    sweep: bool,
    read: impl Fn(&Value) -> Option<T>,
    expected: &str,
) -> SpecResult<Vec<Axis<T>>> {
    values
        .iter()
        .map(|(key, value)| {
            let field = format!("{field}.{key}");
            let items: Vec<&Value> = match value {
                Value::Array(items) if sweep => items.iter().collect(),
                Value::Array(_) => {
                    return Err(SpecError::invalid(&field, "a list is allowed only in a sweep"))
                }
                single => vec![single],
            };
            if items.is_empty() {
                return Err(SpecError::invalid(&field, "an empty list"));
            }
            let read: Option<Vec<T>> = items.into_iter().map(&read).collect();
            read.map(|v| (key.clone(), v))
                .ok_or_else(|| SpecError::invalid(&field, format!("expected {expected}")))
        })
        .collect()
}

/// Refuses variables that are too many or too long (before anything is compiled).
fn check_variable_sizes(variables: &BTreeMap<String, Value>, limits: &ServiceLimits) -> SpecResult<()> {
    if variables.len() > limits.max_variables {
        return Err(SpecError::over(
            "variables",
            format!("{} variables", variables.len()),
            limits.max_variables,
            "max_variables",
        ));
    }
    for (name, value) in variables {
        let field = format!("variables.{name}");
        let texts: Vec<&str> = match value {
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            other => other.as_str().into_iter().collect(),
        };
        if let Some(long) = texts.iter().find(|t| t.len() > limits.max_variable_bytes) {
            return Err(SpecError::over(
                &field,
                format!("a text of {} bytes", long.len()),
                limits.max_variable_bytes,
                "max_variable_bytes",
            ));
        }
    }
    Ok(())
}

/// Refuses axes whose combinations make more runs than a sweep may hold.
fn at_most_the_sweep_limit(sizes: impl Iterator<Item = usize>, limits: &ServiceLimits) -> SpecResult<()> {
    match checked_product(sizes, limits.max_sweep_runs) {
        Some(_) => Ok(()),
        None => Err(SpecError::over(
            "variables",
            "the lists make more runs".to_owned(),
            limits.max_sweep_runs,
            "max_sweep_runs",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(key: &str, values: &[i64]) -> Axis<i64> {
        (key.to_owned(), values.to_vec())
    }

    #[test]
    fn combinations_are_the_product_with_the_last_axis_fastest() {
        let axes = [axis("a", &[1, 2]), axis("b", &[10, 20, 30])];
        let all: Vec<Vec<i64>> = combinations(&axes).map(|c| c.into_values().collect()).collect();
        assert_eq!(
            all,
            [[1, 10], [1, 20], [1, 30], [2, 10], [2, 20], [2, 30]].map(|c| c.to_vec())
        );
        assert_eq!(combinations::<i64>(&[]).count(), 1, "no axes: one run");
    }

    #[test]
    fn twenty_thousand_single_variables_make_one_run() {
        let axes: Vec<Axis<i64>> = (0..20_000).map(|i| axis(&format!("v{i}"), &[i])).collect();
        let runs: Vec<_> = combinations(&axes).collect();
        assert_eq!((runs.len(), runs[0].len()), (1, 20_000));
    }
}
