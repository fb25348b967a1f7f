//! `/runs/{id}`: a run's status (live while it runs), its processes, nodes, timeline and
//! log, with downloads.

use axum::extract::{Path, State};
use maud::{html, Markup, PreEscaped};
use serde_json::Value;

use super::layout::{self, number};
use super::lifecycle::{self, Target};
use super::overview::short;
use super::{encode, PageResult};
use crate::error::ApiError;
use crate::state::AppState;
use hetsim_charts::trace::{RunTrace, TraceError};
use hetsim_service::status::RunStatus;
use hetsim_service::storage::{app_title, ProcessPage, ProcessResult, RunRecord, RunSource, MAX_PAGE};
use hetsim_service::table::plain;

/// Seconds between reloads of a page whose run or sweep is unfinished.
pub(super) const REFRESH_SECONDS: u32 = 2;

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
    let source = s.store.run_source(&id).await?;
    let api = format!("/api/runs/{}", encode(&run.id));
    let content = html! {
        p.crumbs {
            a href="/" { "Overview" }
            @if let Some(sweep) = &run.sweep { " / " a href={ "/sweeps/" (encode(sweep)) } { "sweep " (short(sweep)) } }
        }
        h1 { "Run " (short(&run.id)) " " span class={ "status " (run.status) } { (run.status) } }
        (lifecycle::buttons(Target::Run, &run.id, unfinished(run.status)))
        (facts(&run))
        @if let Some(source) = &source { (what_ran(source, &api)) }
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
            h2 { "Computes and transfers" }
            (activities_table(&result["activities"], &api))
            @if let Some(ranks) = result["ranks"].as_array() {
                h2 { "Ranks" }
                p.muted { "The replayed trace's ranks: where each one's time went." }
                div #ranks { (ranks_table(ranks)) }
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

/// The app (its first comment line) and the system (its nodes with component and model, its
/// links) a run ran, with a link to the whole of both.
fn what_ran(source: &RunSource, api: &str) -> Markup {
    let app = app_title(&source.app).unwrap_or("an app without a leading comment");
    let system = &source.system;
    let name = system["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .unwrap_or("(unnamed)");
    let nodes = system["node"].as_array().map(Vec::as_slice).unwrap_or_default();
    let links = system["link"].as_array().map(Vec::as_slice).unwrap_or_default();
    html! {
        h2 { "What ran" }
        dl.facts #what-ran {
            dt { "app" } dd { (app) " (" a href={ (api) "/source" } { "source" } ")" }
            dt { "system" } dd { code { (name) } ": " (count(nodes.len(), "node entry", "node entries")) ", " (count(links.len(), "link", "links")) }
        }
        (layout::table(
            ["node", "component", "model", "count", "labels"],
            nodes.iter().map(|n| html! { tr {
                td { (plain(&n["id"])) } td { (plain(&n["component"])) } td { code { (plain(&n["model"])) } }
                td.num { (n["count"].as_u64().unwrap_or(1)) } td { (pairs(&n["labels"])) }
            } }),
        ))
        @if !links.is_empty() {
            (layout::table(
                ["link between", "component", "model"],
                links.iter().map(|l| html! { tr {
                    td { (l["between"].as_array().map(|b| b.iter().map(plain).collect::<Vec<_>>().join(" – ")).unwrap_or_default()) }
                    td { (plain(&l["component"])) } td { code { (plain(&l["model"])) } }
                } }),
            ))
        }
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn facts(run: &RunRecord) -> Markup {
    html! {
        dl.facts {
            dt { "id" } dd { code { (run.id) } }
            dt { "queue" } dd { (run.queue) }
            dt { "submitted" } dd { (run.created_at) }
            @if let Some(who) = &run.submitter { dt { "submitter" } dd.submitter { (who) } }
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

pub(super) fn num(v: &Value) -> String {
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

/// One row per rank of a replayed trace (the result's `ranks`): its nodes and where its
/// time went, as `hetsim replay` reports them.
fn ranks_table(ranks: &[Value]) -> Markup {
    layout::table(
        [
            "rank",
            "nodes run",
            "nodes in file",
            "CPU / GPU / comm / metadata nodes",
            "deps skipped / ctrl dropped",
            "finish time [s]",
            "compute [s]",
            "communication [s]",
            "exposed communication [s]",
            "CPU [s]",
        ],
        ranks.iter().map(|r| {
            let times = [
                &r["finish_time"],
                &r["compute_time"],
                &r["comm_time"],
                &r["exposed_comm"],
                &r["cpu_time"],
            ];
            let kinds = counts(r, &["cpu_nodes", "gpu_nodes", "comm_nodes", "metadata_nodes"]);
            let skipped = counts(r, &["missing_deps", "dropped_ctrl"]);
            html! { tr {
                td.num { (num(&r["rank"])) } td.num { (num(&r["ran"])) } td.num { (num(&r["nodes"])) }
                td.num { (kinds) } td.num { (skipped) }
                @for t in times { td.num { (num(t)) } }
            } }
        }),
    )
}

/// The whole-number `fields` of `row`, joined by " / " (a missing one, from a run stored
/// before it was kept, shows as "–").
fn counts(row: &Value, fields: &[&str]) -> String {
    fields
        .iter()
        .map(|f| row[*f].as_u64().map_or("–".to_owned(), |n| n.to_string()))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// Rows of the activities table a run page shows; the JSON has them all.
const TOP_ACTIVITIES: usize = 20;

/// The run's computes (per node, model and limiter) and transfers (per pair of nodes, with
/// the bandwidth they achieved), the longest first.
fn activities_table(activities: &Value, api: &str) -> Markup {
    let rows = activities.as_array().map(Vec::as_slice).unwrap_or_default();
    if rows.is_empty() {
        return html! { p.muted { "No compute or transfer." } };
    }
    let shown = &rows[..rows.len().min(TOP_ACTIVITIES)];
    html! {
        div #activities { (layout::table(
            ["kind", "where", "model", "limiter", "count", "time [s]", "bytes", "achieved bandwidth [B/s]"],
            shown.iter().map(|a| {
                let (seconds, bytes) = (a["seconds"].as_f64().unwrap_or(0.0), a["bytes"].as_f64().unwrap_or(0.0));
                let bandwidth = (a["kind"] == "transfer" && seconds > 0.0).then(|| number(bytes / seconds));
                html! { tr {
                    td { (plain(&a["kind"])) } td { (plain(&a["place"])) } td { code { (plain(&a["model"])) } }
                    td { (plain(&a["limiter"])) } td.num { (num(&a["count"])) } td.num { (number(seconds)) }
                    td.num { @if bytes > 0.0 { (number(bytes)) } } td.num { (bandwidth.unwrap_or_default()) }
                } }
            }),
        )) }
        @if rows.len() > shown.len() {
            p.muted { "The " (shown.len()) " longest of " (rows.len()) "; " a href=(api) { "the run's JSON" } " has all (result.activities)." }
        }
    }
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

pub async fn run_csv(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> PageResult<axum::response::Response> {
    let run = run_record(&s, &id).await?;
    let processes = s.store.all_processes(&id).await?;
    Ok(crate::download::csv(
        &format!("run-{}-processes.csv", short(&run.id)),
        hetsim_service::table::processes_csv(&processes),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replay's `ranks` become one row each, rank first, then nodes run and in the file,
    /// the node counts by kind and the skipped dependencies, then the five times in the
    /// report's order.
    #[test]
    fn a_rank_row_holds_the_breakdown_in_column_order() {
        let ranks = serde_json::json!([
            {"rank": 0, "nodes": 17, "ran": 17, "finish_time": 0.5, "compute_time": 0.25,
             "comm_time": 0.125, "exposed_comm": 0.0625, "cpu_time": 2.0, "cpu_nodes": 8,
             "gpu_nodes": 6, "comm_nodes": 2, "metadata_nodes": 1, "missing_deps": 3,
             "dropped_ctrl": 0},
            {"rank": 1, "nodes": 9, "ran": 9, "finish_time": 1.0, "compute_time": 0.0,
             "comm_time": 0.0, "exposed_comm": 0.0, "cpu_time": 0.0},
        ]);
        let html = ranks_table(ranks.as_array().unwrap()).into_string();
        assert_eq!(html.matches("<tr>").count(), 3, "a header and two ranks: {html}");
        let first = html.split("<tr>").nth(2).unwrap();
        let cells: Vec<&str> = first
            .split("<td class=\"num\">")
            .skip(1)
            .map(|c| c.split('<').next().unwrap())
            .collect();
        let mut expected = [0.0, 17.0, 17.0].map(number).to_vec();
        expected.extend(["8 / 6 / 2 / 1".to_owned(), "3 / 0".to_owned()]);
        expected.extend([0.5, 0.25, 0.125, 0.0625, 2.0].map(number));
        assert_eq!(cells, expected, "{first}");
        // A rank stored before the counts were kept shows dashes.
        let second = html.split("<tr>").nth(3).unwrap();
        assert!(second.contains("– / – / – / –"), "{second}");
        assert!(html.contains("<th>exposed communication [s]</th>"), "{html}");
    }
}
