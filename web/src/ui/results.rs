//! `/runs/{id}` and `/sweeps/{id}`: a run's status (live while it runs), its processes,
//! nodes, timeline and log, with downloads; a sweep's progress, a plot of a result against
//! any variable with one line per value of another, its table and CSV.

use std::collections::BTreeMap;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::IntoResponse;
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;
use serde_json::Value;

use super::layout::{self, number};
use super::lifecycle::{self, Target};
use super::overview::short;
use super::{encode, PageResult};
use crate::error::ApiError;
use crate::state::AppState;
use hetsim_charts::trace::{RunTrace, TraceError};
use hetsim_charts::Chart;
use hetsim_service::status::RunStatus;
use hetsim_service::storage::{ProcessPage, ProcessResult, RunFilter, RunRecord, MAX_PAGE};
use hetsim_service::table::{compare_cells, plain};

/// Seconds between reloads of a page whose run or sweep is unfinished.
const REFRESH_SECONDS: u32 = 2;

/// The most runs a sweep page reads.
const MAX_SWEEP_RUNS: i64 = 100_000;

fn unfinished(status: RunStatus) -> bool {
    matches!(status, RunStatus::Queued | RunStatus::Running)
}

async fn run_record(s: &AppState, id: &str) -> PageResult<RunRecord> {
    s.store
        .run(id)
        .await?
        .ok_or_else(|| ApiError::not_found("run", id).into())
}

/// Processes listed on a run page; the CSV and the API page through the rest.
const PAGE_ROWS: i64 = 100;

pub async fn run(State(s): State<AppState>, Path(id): Path<String>) -> PageResult<Markup> {
    let run = run_record(&s, &id).await?;
    let output = s.store.run_output(&id).await?.unwrap_or_default();
    let result = run.result.clone().unwrap_or(Value::Null);
    // One read of the first processes serves the table and, where there is a trace, the
    // timeline, which draws more of them.
    let trace = output.trace.as_deref().filter(|_| run.result.is_some());
    let rows = match trace {
        Some(_) => i64::try_from(hetsim_charts::MAX_ROWS).unwrap_or(MAX_PAGE),
        None => PAGE_ROWS,
    };
    let page = s.store.processes(&id, None, 0, rows.max(PAGE_ROWS)).await?;
    let listed = &page.processes[..page.processes.len().min(PAGE_ROWS as usize)];
    let timeline = trace.and_then(|trace| timeline_svg(&result, trace, &page, output.trace_dropped));
    let log = output.log;
    let api = format!("/api/runs/{}", encode(&run.id));
    let content = html! {
        p.crumbs {
            a href="/" { "Overview" }
            @if let Some(sweep) = &run.sweep { " / " a href={ "/sweeps/" (encode(sweep)) } { "sweep " (short(sweep)) } }
        }
        h1 { "Run " (short(&run.id)) " " span class={ "status " (run.status) } { (run.status) } }
        (lifecycle::buttons(Target::Run, &run.id, unfinished(run.status)))
        (facts(&run))
        @if let Some(error) = &run.error { p.error role="alert" { (error) } }
        @if run.result.is_some() {
            h2 { "Result" }
            div.summary {
                (figure("overall time", &result["overall_time"], "s"))
                (figure("total energy", &result["total_energy"], "J"))
                (figure("failure chance", &result["failure_chance"], ""))
            }
            p.downloads {
                "Download: "
                a href=(api) download={ "run-" (short(&run.id)) ".json" } { "JSON" }
                a href={ "/runs/" (encode(&run.id)) "/processes.csv" } { "processes CSV" }
                @if output.trace.is_some() {
                    a href={ (api) "/trace" } download={ "trace-" (short(&run.id)) ".json" } { "trace" }
                    a href={ (api) "/trace?format=chrome" } download={ "trace-" (short(&run.id)) ".chrome.json" } { "Chrome trace (Perfetto)" }
                }
                a href={ (api) "/log" } download={ "run-" (short(&run.id)) ".log" } { "log" }
            }
            h2 { "Timeline" }
            @match &timeline {
                Some(svg) => div.chart.timeline { (PreEscaped(svg)) },
                None => p.muted { "No trace was recorded: launch with \"Record a trace\" (API: \"trace\": true) to draw one." },
            }
            h2 { "Labels" }
            div #labels { (labels_table(&result)) }
            h2 { "Processes" }
            @if page.total > listed.len() as i64 {
                p.muted { "The first " (listed.len()) " of " (page.total) " processes; the CSV lists them all, "
                    a href={ (api) "/processes?offset=" (PAGE_ROWS) } { "the API" } " pages through them." }
            }
            div #processes { (processes_table(listed)) }
            h2 { "Nodes" }
            div #nodes { (layout::table(
                ["node", "busy time [s]", "energy [J]"],
                result["nodes"].as_array().into_iter().flatten().map(|n| html! {
                    tr { td { (plain(&n["id"])) } td.num { (num(&n["busy_time"])) } td.num { (num(&n["energy"])) } }
                }),
            )) }
            h2 { "Log" }
            @if log.trim().is_empty() { p.muted { "The run logged nothing (sim.log writes here)." } } @else { pre.log { (log) } }
        }
    };
    let refresh = unfinished(run.status).then_some(REFRESH_SECONDS);
    Ok(layout::page_with(
        &format!("Run {}", short(&run.id)),
        content,
        refresh,
    ))
}

fn facts(run: &RunRecord) -> Markup {
    html! {
        dl.facts {
            dt { "id" } dd { code { (run.id) } }
            dt { "queue" } dd { (run.queue) }
            dt { "submitted" } dd { (run.created_at) }
            @if let Some(t) = &run.started_at { dt { "started" } dd { (t) } }
            @if let Some(t) = &run.finished_at { dt { "finished" } dd { (t) } }
            @if let Some(w) = &run.worker { dt { "worker" } dd { (w) } }
            dt { "labels" } dd { (pairs(&run.labels)) }
            dt { "variables" } dd { (pairs(&run.variables)) }
        }
    }
}

fn pairs(object: &Value) -> String {
    object
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| format!("{k}={}", num(v)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "none".to_owned())
}

fn figure(name: &str, value: &Value, unit: &str) -> Markup {
    html! { div.figure { span.value { (num(value)) " " (unit) } span.name { (name) } } }
}

fn num(v: &Value) -> String {
    v.as_f64().map(number).unwrap_or_else(|| plain(v))
}

fn processes_table(processes: &[ProcessResult]) -> Markup {
    layout::table(
        [
            "pid",
            "label",
            "rank",
            "node",
            "finish time [s]",
            "compute time [s]",
            "wait time [s]",
        ],
        processes.iter().map(|p| {
            html! { tr {
                td.num { (p.pid) } td { (p.label) } td.num { (p.rank) } td { (p.node) }
                @for x in [p.finish_time, p.compute_time, p.wait_time] { td.num { (number(x)) } }
            } }
        }),
    )
}

/// One row per label of the run's summary: how many processes, and their finish, compute
/// and wait times.
fn labels_table(result: &Value) -> Markup {
    layout::table(
        ["label", "processes", "finish min [s]", "finish p50 [s]", "finish p99 [s]", "finish max [s]", "compute mean [s]", "wait mean [s]"],
        result["labels"].as_array().into_iter().flatten().map(|l| {
            let cells = [&l["finish"]["min"], &l["finish"]["p50"], &l["finish"]["p99"], &l["finish"]["max"], &l["compute"]["mean"], &l["wait"]["mean"]];
            html! { tr { td { (plain(&l["label"])) } td.num { (num(&l["count"])) } @for c in cells { td.num { (num(c)) } } } }
        }),
    )
}

/// The Gantt chart of a stored run: its first processes (`page`, as many as the chart draws)
/// and its spans from the trace.
fn timeline_svg(result: &Value, trace: &str, page: &ProcessPage, dropped: u64) -> Option<String> {
    let count = usize::try_from(page.total).unwrap_or(0);
    let overall_time = result["overall_time"].as_f64().unwrap_or(0.0);
    serde_json::from_str::<Value>(trace)
        .map_err(TraceError::Spans)
        .and_then(|spans| RunTrace::stored(overall_time, count, page.processes.clone(), &spans, dropped))
        .map(|run| hetsim_charts::timeline::draw(&run))
        .map_err(|e| tracing::warn!("ui: a stored trace that does not draw: {e:#}"))
        .ok()
}

fn csv_download(name: &str, body: String) -> axum::response::Response {
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        body,
    )
        .into_response()
}

pub async fn run_csv(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> PageResult<axum::response::Response> {
    let run = run_record(&s, &id).await?;
    let processes = s.store.all_processes(&id).await?;
    Ok(csv_download(
        &format!("run-{}-processes.csv", short(&run.id)),
        hetsim_service::table::processes_csv(&processes),
    ))
}

async fn sweep_runs(s: &AppState, id: &str) -> PageResult<Vec<RunRecord>> {
    let filter = RunFilter {
        sweep: Some(id.to_owned()),
        ..RunFilter::default()
    };
    Ok(s.store.runs(&filter, MAX_SWEEP_RUNS).await?)
}

pub async fn sweep_csv(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> PageResult<axum::response::Response> {
    if s.store.sweep(&id).await?.is_none() {
        return Err(ApiError::not_found("sweep", &id).into());
    }
    let runs: Vec<Value> = sweep_runs(&s, &id)
        .await?
        .iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .collect();
    Ok(csv_download(
        &format!("sweep-{}.csv", short(&id)),
        hetsim_service::table::runs_csv(&runs),
    ))
}

/// The plot's choices: the variable along x, the one that makes one line per value, the
/// result along y.
#[derive(Deserialize, Default)]
pub struct PlotChoice {
    x: Option<String>,
    by: Option<String>,
    y: Option<String>,
}

/// The results a sweep plot can show along y.
const MEASURES: [(&str, &str); 3] = [
    ("overall_time", "overall time [s]"),
    ("total_energy", "total energy [J]"),
    ("failure_chance", "failure chance"),
];

/// A run's inputs by name: its variables, and its labels as `label:NAME`.
fn inputs(run: &RunRecord) -> BTreeMap<String, Value> {
    let mut out: BTreeMap<String, Value> = run
        .variables
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    if let Some(labels) = run.labels.as_object() {
        out.extend(labels.iter().map(|(k, v)| (format!("label:{k}"), v.clone())));
    }
    out
}

/// Input `name` of a run, null where the run has none.
fn input<'a>(inputs: &'a BTreeMap<String, Value>, name: &str) -> &'a Value {
    inputs.get(name).unwrap_or(&Value::Null)
}

/// The inputs that differ between the runs: what the sweep varies.
fn varied(runs: &[(RunRecord, BTreeMap<String, Value>)]) -> Vec<String> {
    let mut values: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for (_, inputs) in runs {
        for (k, v) in inputs {
            let seen = values.entry(k).or_default();
            if !seen.contains(&v) {
                seen.push(v);
            }
        }
    }
    values
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(k, _)| k.to_owned())
        .collect()
}

pub async fn sweep(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(choice): Query<PlotChoice>,
) -> PageResult<Markup> {
    let summary = s
        .store
        .sweep(&id)
        .await?
        .ok_or_else(|| ApiError::not_found("sweep", &id))?;
    let mut runs: Vec<(RunRecord, BTreeMap<String, Value>)> = sweep_runs(&s, &id)
        .await?
        .into_iter()
        .map(|r| {
            let inputs = inputs(&r);
            (r, inputs)
        })
        .collect();
    let axes = varied(&runs);
    runs.sort_by(|a, b| {
        axes.iter()
            .map(|k| compare_cells(input(&a.1, k), input(&b.1, k)))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let x = choice
        .x
        .filter(|x| axes.contains(x))
        .or_else(|| axes.first().cloned());
    // `by=` (the "nothing" choice) draws one line; no `by` at all picks the next axis.
    let by = match choice.by {
        Some(b) if b.is_empty() => None,
        Some(b) if axes.contains(&b) && Some(&b) != x.as_ref() => Some(b),
        _ => axes.iter().find(|a| Some(*a) != x.as_ref()).cloned(),
    };
    let y = choice
        .y
        .filter(|y| MEASURES.iter().any(|(m, _)| m == y))
        .unwrap_or_else(|| MEASURES[0].0.to_owned());
    let plot = x.as_ref().map(|x| sweep_plot(&runs, x, by.as_deref(), &y));
    let finished = summary.done + summary.failed + summary.cancelled;
    let refresh = (summary.queued + summary.running > 0).then_some(REFRESH_SECONDS);
    let content = html! {
        p.crumbs { a href="/" { "Overview" } }
        h1 { "Sweep " (short(&summary.id)) }
        (lifecycle::buttons(Target::Sweep, &summary.id, summary.queued + summary.running > 0))
        p.progress {
            progress max=(summary.total) value=(finished) {}
            " " (finished) " of " (summary.total) " runs finished: "
            (summary.done) " done, " (summary.failed) " failed, " (summary.cancelled) " cancelled, "
            (summary.queued) " queued, " (summary.running) " running"
        }
        p.downloads { "Download: " a href={ "/sweeps/" (encode(&summary.id)) "/results.csv" } { "CSV" } }
        @if let Some(x) = &x {
            h2 { "Plot" }
            form.filters method="get" {
                label { "x " select name="x" data-autosubmit { @for a in &axes { option selected[a == x] { (a) } } } }
                label { "one line per " select name="by" data-autosubmit {
                    option value="" selected[by.is_none()] { "nothing" }
                    @for a in &axes { option selected[Some(a) == by.as_ref()] { (a) } }
                } }
                label { "y " select name="y" data-autosubmit { @for (m, name) in MEASURES { option value=(m) selected[m == y] { (name) } } } }
                noscript { button type="submit" { "Plot" } }
            }
            @if let Some(svg) = &plot { div.chart.sweep-plot { (PreEscaped(svg)) } }
        }
        h2 { "Runs" }
        div #runs { (layout::table(
            ["run", "status"].into_iter().chain(axes.iter().map(String::as_str)).chain(MEASURES.map(|m| m.1)),
            runs.iter().map(|(run, inputs)| html! {
                tr {
                    td { a href={ "/runs/" (encode(&run.id)) } { (short(&run.id)) } }
                    td { span class={ "status " (run.status) } { (run.status) } }
                    @for a in &axes { td.num { (num(input(inputs, a))) } }
                    @for (m, _) in MEASURES { td.num { (run.result.as_ref().map(|r| num(&r[m])).unwrap_or_default()) } }
                }
            }),
        )) }
    };
    Ok(layout::page_with(
        &format!("Sweep {}", short(&summary.id)),
        content,
        refresh,
    ))
}

/// One input's value as a line of a sweep plot: ordered as the table orders inputs, and
/// written as the table writes them.
#[derive(PartialEq, Eq)]
struct Input(Value);

impl Ord for Input {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        compare_cells(&self.0, &other.0)
    }
}

impl PartialOrd for Input {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&num(&self.0))
    }
}

/// `y` of the finished runs against input `x`, one line per value of input `by`.
fn sweep_plot(runs: &[(RunRecord, BTreeMap<String, Value>)], x: &str, by: Option<&str>, y: &str) -> String {
    let y_name = MEASURES.iter().find(|(m, _)| *m == y).map_or(y, |m| m.1);
    let points = runs.iter().filter_map(|(run, inputs)| {
        let group = Input(by.map_or(Value::Null, |b| input(inputs, b).clone()));
        let y = run.result.as_ref().and_then(|r| r[y].as_f64())?;
        Some((group, input(inputs, x).as_f64()?, y))
    });
    let title = format!("{y_name} against {x}");
    let mut chart = Chart::sweep(&title, (x, y_name, by.unwrap_or_default()), points);
    if by.is_none() {
        chart.series.iter_mut().for_each(|s| s.label = y_name.to_owned());
    }
    chart.svg()
}
