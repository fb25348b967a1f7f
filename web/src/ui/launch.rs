//! `/launch`: pick an app (or a stored trace, replayed under a compute policy), a system and
//! a queue; the system's labels and the run's variables are fields, and a comma list in any
//! of them makes the launch a sweep over every combination (the page counts the runs while
//! one types, app.js).

use std::collections::BTreeMap;
use std::convert::Infallible;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Form;
use hetsim_system::SystemFile;
use maud::{html, Markup};

use super::{encode, layout, see_other, PageResult};
use crate::access::Identity;
use crate::state::AppState;
use hetsim_service::storage::{Library, Named};
use hetsim_service::submit::{
    app_inputs, comma_list, enqueue, label_count, variable_value, AppInput, Submission,
};

/// Empty variable rows offered beyond the names the app reads.
const SPARE_ROWS: usize = 3;

/// How the app field names a stored trace: `trace:NAME`.
const TRACE_PREFIX: &str = "trace:";

/// What a launch runs: a stored app, or a stored trace replayed under a compute policy.
enum Workload {
    App(String),
    Trace { name: String, compute: String },
}

/// The launch form as filled in: `app`, `system`, `queue`, `label.NAME` fields, and
/// `var_name`/`var_value` pairs in order.
#[derive(Clone, Debug, Default)]
struct Launch {
    app: String,
    system: String,
    queue: String,
    /// The "record a trace" checkbox.
    trace: bool,
    /// A stored trace's compute policy (`replay`, `roofline`, `scale:GPU`).
    compute: String,
    labels: BTreeMap<String, String>,
    variables: Vec<(String, String)>,
}

impl Launch {
    fn from_pairs(pairs: Vec<(String, String)>) -> Self {
        let mut launch = Launch::default();
        let mut pending_name: Option<String> = None;
        for (key, value) in pairs {
            match key.as_str() {
                "app" => launch.app = value,
                "system" => launch.system = value,
                "queue" => launch.queue = value,
                "trace" => launch.trace = value == "on",
                "compute" => launch.compute = value,
                "var_name" => pending_name = Some(value),
                "var_value" => {
                    let name = pending_name.take().unwrap_or_default();
                    if !name.trim().is_empty() || !value.trim().is_empty() {
                        launch.variables.push((name.trim().to_owned(), value));
                    }
                }
                _ => {
                    if let Some(label) = key.strip_prefix("label.") {
                        launch.labels.insert(label.to_owned(), value);
                    }
                }
            }
        }
        if launch.queue.trim().is_empty() {
            launch.queue = "default".to_owned();
        }
        launch
    }

    /// How many runs the launch makes: the product of the list lengths (a blank field is the
    /// system's count or the app's own default, one value).
    fn run_count(&self) -> usize {
        let compute = self.trace_name().map(|_| &self.compute);
        self.labels
            .values()
            .chain(self.variables.iter().map(|(_, v)| v))
            .chain(compute)
            .filter(|v| !v.trim().is_empty())
            .map(|v| v.split(',').count())
            .fold(1usize, usize::saturating_mul)
    }

    /// The stored trace the app field names, if it names one.
    fn trace_name(&self) -> Option<&str> {
        self.app.strip_prefix(TRACE_PREFIX)
    }

    /// The submission, or the field at fault and why.
    fn submission(&self, workload: Workload, system_id: String) -> Result<Submission, (String, String)> {
        let mut labels = serde_json::Map::new();
        for (name, text) in self.labels.iter().filter(|(_, v)| !v.trim().is_empty()) {
            let counts = comma_list(text, |v| label_count(v).ok_or(())).map_err(|()| {
                (
                    format!("label {name}"),
                    format!("{text:?}: expected whole numbers of processes, separated by commas"),
                )
            })?;
            labels.insert(name.clone(), counts);
        }
        let mut variables = serde_json::Map::new();
        for (name, text) in self.variables.iter().filter(|(_, v)| !v.trim().is_empty()) {
            if name.is_empty() {
                return Err((
                    "variables".to_owned(),
                    format!("the value {text:?} has no variable name"),
                ));
            }
            let Ok(values) = comma_list(text, |v| Ok::<_, Infallible>(variable_value(v)));
            variables.insert(name.clone(), values);
        }
        let (app_id, trace_name, compute) = match workload {
            Workload::App(id) => (Some(id), None, None),
            Workload::Trace { name, compute } => {
                let Ok(policies) = comma_list(&compute, |p| Ok::<_, Infallible>(serde_json::Value::from(p)));
                (None, Some(name), Some(policies))
            }
        };
        Ok(Submission {
            queue: self.queue.trim().to_owned(),
            app: None,
            app_id,
            app_name: None,
            system: None,
            system_id: Some(system_id),
            system_name: None,
            labels: labels.into_iter().collect(),
            variables: variables.into_iter().collect(),
            trace: self.trace,
            trace_name,
            compute,
        })
    }
}

/// The labels a system's nodes declare, with their total counts.
fn system_labels(system: &Named) -> BTreeMap<String, u64> {
    let mut labels = BTreeMap::new();
    let Ok(file) = SystemFile::parse(&system.body, &system.name) else {
        return labels;
    };
    // Resolved, a cluster's boards are nodes too; a file that does not resolve keeps its own.
    let nodes = match file.clone().resolve(&system.name, None) {
        Ok(resolved) => resolved.nodes.into_iter().map(|n| n.spec).collect(),
        Err(_) => file.nodes,
    };
    for node in &nodes {
        for (label, count) in &node.labels {
            *labels.entry(label.clone()).or_default() += u64::from(*count) * u64::from(node.count);
        }
    }
    labels
}

/// The inputs of `app` (none where its source no longer parses: the form still launches,
/// and the submission's check names the error).
async fn inputs_of(app: Option<&Named>) -> Vec<AppInput> {
    match app {
        Some(app) => app_inputs(&app.body, &app.name).await.unwrap_or_default(),
        None => Vec::new(),
    }
}

/// The form's variable rows: the app's inputs (required first, defaults filled in), the
/// names typed before that the app does not read, and spare rows.
fn variable_rows(launch: &Launch, inputs: &[AppInput]) -> Vec<VariableRow> {
    let typed = |name: &str| {
        launch
            .variables
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let mut rows: Vec<VariableRow> = inputs
        .iter()
        .map(|input| VariableRow {
            // A default with a comma would read as a sweep's list: it stays a placeholder.
            value: typed(&input.name)
                .or_else(|| input.default.clone().filter(|d| !d.contains(',')))
                .unwrap_or_default(),
            input: Some(input.clone()),
            name: input.name.clone(),
        })
        .collect();
    for (name, value) in &launch.variables {
        if !inputs.iter().any(|i| i.name == *name) {
            rows.push(VariableRow {
                name: name.clone(),
                value: value.clone(),
                input: None,
            });
        }
    }
    rows.extend((0..SPARE_ROWS).map(|_| VariableRow::default()));
    rows
}

#[derive(Clone, Debug, Default)]
struct VariableRow {
    name: String,
    value: String,
    /// What the app declares of it; `None` for a name the app does not read.
    input: Option<AppInput>,
}

pub async fn page(
    State(s): State<AppState>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> PageResult<Markup> {
    let launch = Launch::from_pairs(pairs);
    form_page(&s, &launch, None).await
}

async fn form_page(s: &AppState, launch: &Launch, error: Option<(String, String)>) -> PageResult<Markup> {
    let apps = s.store.named(Library::Apps, None, None).await?;
    let traces = s.store.traces().await?;
    let systems = s.store.named(Library::Systems, None, None).await?;
    let trace = launch
        .trace_name()
        .and_then(|name| traces.iter().find(|t| t.name == name));
    let app = match trace {
        Some(_) => None,
        None => apps.iter().find(|a| a.name == launch.app).or(apps.first()),
    };
    let system = systems
        .iter()
        .find(|a| a.name == launch.system)
        .or(systems.first());
    let labels = system.map(system_labels).unwrap_or_default();
    let inputs = inputs_of(app).await;
    let rows = variable_rows(launch, &inputs);
    let ready = (app.is_some() || trace.is_some()) && system.is_some();
    let count = launch.run_count();
    Ok(layout::page(
        "Launch",
        html! {
            h1 { "Launch" }
            @if !ready {
                div.card.empty {
                    p { "Nothing to launch yet: a launch needs a stored " a href="/apps" { "app" } " and a stored " a href="/systems" { "system" } "." }
                    (layout::load_examples())
                }
            }
            @if let Some((field, message)) = &error {
                p.error role="alert" { (field) ": " (message) }
            }
            form.card #launch method="post" action="/launch" {
                div.fields {
                    label { "App "
                        select name="app" data-reload {
                            @for a in &apps { option value=(a.name) selected[Some(a) == app] { (a.name) } }
                            @if !traces.is_empty() {
                                optgroup label="Stored traces, replayed" {
                                    @for t in &traces {
                                        option value={ (TRACE_PREFIX) (t.name) } selected[trace.is_some_and(|s| s.name == t.name)] {
                                            (t.name) " (" (t.ranks) " ranks)"
                                        }
                                    }
                                }
                            }
                        }
                    }
                    label { "System "
                        select name="system" data-reload {
                            @for sys in &systems { option value=(sys.name) selected[Some(sys) == system] { (sys.name) } }
                        }
                    }
                    label { "Queue " input name="queue" value=(launch.queue) pattern="[A-Za-z0-9_-]{1,64}"; }
                    label { input type="checkbox" name="trace" checked[launch.trace]; " Record a trace (timeline, Perfetto export)" }
                }
                @if let Some(trace) = trace {
                    h2 { "Replay" }
                    p.muted { "Rank r of the trace's " (trace.ranks) " runs on the r-th " code { "GPU" } " process of the system (docs/TRACES.md)." }
                    div.fields {
                        label { "Compute policy "
                            input #compute .count name="compute" value=(compute_or_default(launch)) list="policies";
                        }
                        datalist #policies { option value="replay" {} option value="roofline" {} }
                    }
                    p.muted { code { "replay" } " keeps the recorded kernel times, " code { "roofline" } " times them on the system's GPUs, " code { "scale:GPU" } " scales them from the GPU they were recorded on; a comma list sweeps the policies." }
                } @else {
                    h2 { "Labels" }
                    p.muted { "Processes per label; empty keeps the system's count. A comma list (1,2,4) sweeps." }
                    div.fields {
                        @for (label, default) in &labels {
                            label { (label) " "
                                input.count name={ "label." (label) } placeholder=(default)
                                    value=(launch.labels.get(label).cloned().unwrap_or_default());
                            }
                        }
                    }
                }
                h2 { "Variables" }
                @if trace.is_some() {
                    p.muted { "The system's variables (a cluster's " code { "boards" } ", say). A comma list sweeps." }
                } @else {
                    p.muted { "What the app reads, required first (" a href={ "/apps/" (app.map(|a| encode(&a.name)).unwrap_or_default()) } { "its source" } "). A number, true/false or a text; a comma list (32,64,128) sweeps." }
                }
                table.variables {
                    thead { tr { th { "name" } th { "value" } th { "unit" } th { "what it is" } } }
                    tbody {
                        @for row in &rows {
                            (variable_row(row))
                        }
                    }
                }
                p.count { output #run-count { @if ready { (runs_text(count)) } @else { "nothing to run" } } }
                @if layout::may_post("/launch") {
                    button type="submit" disabled[!ready] { "Launch" }
                } @else {
                    (layout::refused("/launch", "Launching runs"))
                }
            }
            @if let (Some(trace), Some(system)) = (trace, system) {
                p.muted { "From a shell: " code { "hetsim sweep --server URL --trace-name " (trace.name) " --system-name " (system.name) " --compute " (compute_or_default(launch)) " --var NAME=V1,V2" } }
            }
            @if let (Some(app), Some(system)) = (app, system) {
                p.muted { "From a shell: " code { "hetsim sweep --server URL --app-name " (app.name) " --system-name " (system.name) " --var NAME=V1,V2 --label LABEL=N1,N2" } }
            }
            @if ready {
                (layout::load_examples())
            }
        },
    ))
}

fn variable_row(row: &VariableRow) -> Markup {
    let input = row.input.as_ref();
    let required = input.is_some_and(|i| i.required);
    html! {
        tr.required[required] {
            td {
                @if let Some(input) = input {
                    input type="hidden" name="var_name" value=(input.name);
                    code { (input.name) } @if required { " " span.badge title="the app cannot run without it" { "required" } }
                    @if let Some(original) = &input.looks_like {
                        " " span.badge.warning title={ "the app defines " (original) "; this name is read on line " (input.line.unwrap_or(0)) " but defined nowhere" } {
                            "misspelt " (original) "?"
                        }
                    }
                } @else {
                    input name="var_name" value=(row.name) aria-label="variable name";
                }
            }
            td { input.count name="var_value" value=(row.value) required[required]
                placeholder=(input.and_then(|i| i.default.as_deref()).unwrap_or("")) aria-label={ "value of " (row.name) }; }
            td.muted { (input.and_then(|i| i.unit.as_deref()).unwrap_or("")) }
            td.muted {
                (input.and_then(|i| i.description.as_deref()).unwrap_or(""))
                @if let Some(default) = input.and_then(|i| i.default.as_deref()) { " (default " code { (default) } ")" }
            }
        }
    }
}

/// The compute policy typed, or `replay`, `hetsim replay`'s default.
fn compute_or_default(launch: &Launch) -> &str {
    match launch.compute.trim() {
        "" => "replay",
        typed => typed,
    }
}

fn runs_text(count: usize) -> String {
    if count == 1 {
        "1 run".to_owned()
    } else {
        format!("{count} runs (a sweep)")
    }
}

pub async fn submit(
    State(s): State<AppState>,
    who: Identity,
    Form(pairs): Form<Vec<(String, String)>>,
) -> PageResult<Response> {
    let launch = Launch::from_pairs(pairs);
    let refuse = |field: &str, message: String| (field.to_owned(), message);
    let workload = match launch.trace_name() {
        Some(name) => s.store.trace(name).await?.map(|t| Workload::Trace {
            name: t.name,
            compute: compute_or_default(&launch).to_owned(),
        }),
        None => s
            .store
            .named(Library::Apps, None, Some(&launch.app))
            .await?
            .pop()
            .map(|app| Workload::App(app.id)),
    };
    let system = s
        .store
        .named(Library::Systems, None, Some(&launch.system))
        .await?
        .pop();
    let checked = match (workload, system) {
        (None, _) => Err(refuse(
            "app",
            format!("no stored app or trace named {:?}", launch.app),
        )),
        (_, None) => Err(refuse(
            "system",
            format!("no stored system named {:?}", launch.system),
        )),
        (Some(workload), Some(system)) => launch.submission(workload, system.id),
    };
    let queued = match checked {
        Ok(sub) => {
            let sweep = launch.run_count() > 1;
            enqueue(&s.store, s.queue.as_ref(), &s.limits, sub, sweep, who.submitter())
                .await
                .map_err(|e| match e {
                    hetsim_service::submit::SpecError::Store(e) => Err(e),
                    e => Ok((e.field().to_owned(), e.to_string())),
                })
        }
        Err(refused) => Err(Ok(refused)),
    };
    match queued {
        Ok(queued) => Ok(match (&queued.sweep, queued.runs.first()) {
            (Some(sweep), _) => see_other(&format!("/sweeps/{}", encode(sweep))),
            (None, Some(run)) => see_other(&format!("/runs/{}", encode(run))),
            (None, None) => see_other("/"),
        }),
        Err(Ok(error)) => {
            let page = form_page(&s, &launch, Some(error)).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
        Err(Err(store)) => Err(store.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn comma_lists_multiply_into_the_run_count() {
        let launch = Launch::from_pairs(pairs(&[
            ("app", "a"),
            ("label.Worker", "1,2,4"),
            ("var_name", "blockSize"),
            ("var_value", "32, 64"),
            ("var_name", ""),
            ("var_value", ""),
            ("var_name", "rounds"),
            ("var_value", " "),
        ]));
        assert_eq!(launch.run_count(), 6);
        assert_eq!(launch.queue, "default");
        let sub = launch
            .submission(Workload::App("a1".into()), "s1".into())
            .unwrap();
        assert_eq!(sub.labels["Worker"], serde_json::json!([1, 2, 4]));
        assert_eq!(sub.variables["blockSize"], serde_json::json!([32, 64]));
        assert!(
            !sub.variables.contains_key("rounds"),
            "a blank value leaves the app's default"
        );
    }

    #[test]
    fn a_stored_trace_is_submitted_by_name_with_its_compute_policy() {
        let launch = Launch::from_pairs(pairs(&[("app", "trace:dp-step"), ("compute", " ")]));
        assert_eq!(launch.trace_name(), Some("dp-step"));
        let workload = Workload::Trace {
            name: "dp-step".into(),
            compute: compute_or_default(&launch).into(),
        };
        let sub = launch.submission(workload, "s1".into()).unwrap();
        assert_eq!(
            (sub.app_id, sub.trace_name.as_deref(), sub.compute),
            (None, Some("dp-step"), Some(serde_json::json!("replay")))
        );
    }

    /// A comma list of policies sweeps them, as a variable's list does.
    #[test]
    fn a_comma_list_of_compute_policies_is_a_sweep() {
        let launch = Launch::from_pairs(pairs(&[
            ("app", "trace:dp-step"),
            ("compute", "replay, roofline"),
            ("var_name", "linkBandwidth"),
            ("var_value", "1e9,2e9,4e9"),
        ]));
        assert_eq!(launch.run_count(), 6);
        let workload = Workload::Trace {
            name: "dp-step".into(),
            compute: compute_or_default(&launch).into(),
        };
        let sub = launch.submission(workload, "s1".into()).unwrap();
        assert_eq!(sub.compute, Some(serde_json::json!(["replay", "roofline"])));
    }

    #[test]
    fn a_label_that_is_not_a_count_names_its_field() {
        let launch = Launch::from_pairs(pairs(&[("label.Worker", "two")]));
        let (field, message) = launch
            .submission(Workload::App("a".into()), "s".into())
            .unwrap_err();
        assert_eq!(field, "label Worker");
        assert!(message.contains("whole numbers"), "{message}");
    }
}
