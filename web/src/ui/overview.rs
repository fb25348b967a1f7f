//! `/`: the queues, the newest runs and the newest sweeps.

use std::collections::BTreeMap;

use axum::extract::State;
use maud::{html, Markup};

use super::layout::{self, number};
use super::PageResult;
use crate::state::AppState;
use hetsim_service::storage::RunRecord;

/// How many runs and sweeps the overview lists.
const RECENT: i64 = 15;

const STATUSES: [&str; 5] = ["queued", "running", "done", "failed", "cancelled"];

pub async fn page(State(s): State<AppState>) -> PageResult<Markup> {
    let counts = s.store.queue_counts().await?;
    let mut queues: BTreeMap<&str, BTreeMap<&str, i64>> = BTreeMap::new();
    for c in &counts {
        queues.entry(&c.queue).or_default().insert(&c.status, c.runs);
    }
    let runs = s.store.recent_runs(RECENT).await?;
    let mut sweeps = Vec::new();
    for row in s.store.recent_sweeps(RECENT).await? {
        if let Some(summary) = s.store.sweep(&row.id).await? {
            sweeps.push((row, summary));
        }
    }
    Ok(layout::page(
        "Overview",
        html! {
            h1 { "Overview" }
            @if layout::may_post("/launch") {
                p { a.button href="/launch" { "Launch a run or a sweep" } }
            }
            h2 { "Queues" }
            @if queues.is_empty() {
                p.muted { "No runs yet." }
            } @else {
                div #queues { (layout::table(
                    std::iter::once("queue").chain(STATUSES),
                    queues.iter().map(|(queue, by_status)| html! {
                        tr {
                            td { (queue) }
                            @for status in STATUSES { td.num { (by_status.get(status).copied().unwrap_or(0)) } }
                        }
                    }),
                )) }
            }
            h2 { "Recent runs" }
            @if runs.is_empty() {
                p.muted { "No runs submitted alone yet." }
            } @else {
                div #runs { (layout::table(["run", "app", "system", "status", "queue", "submitted", "overall time [s]"], runs.iter().map(run_row))) }
            }
            h2 { "Recent sweeps" }
            @if sweeps.is_empty() {
                p.muted { "No sweeps yet." }
            } @else {
                div #sweeps { (layout::table(
                    ["sweep", "queue", "submitted", "runs", "done", "failed", "unfinished"],
                    sweeps.iter().map(|(row, summary)| html! {
                        tr {
                            td { a href={ "/sweeps/" (row.id) } { (short(&row.id)) } }
                            td { (row.queue) }
                            td { (row.created_at) }
                            td.num { (summary.total) }
                            td.num { (summary.done) }
                            td.num { (summary.failed) }
                            td.num { (summary.queued + summary.running) }
                        }
                    }),
                )) }
            }
        },
    ))
}

fn run_row(run: &RunRecord) -> Markup {
    let overall = run
        .result
        .as_ref()
        .and_then(|r| r["overall_time"].as_f64())
        .map(number);
    html! {
        tr {
            td { a href={ "/runs/" (run.id) } { (short(&run.id)) } }
            td.app { (run.app_title.as_deref().unwrap_or("—")) }
            td { code { (run.system_name.as_deref().unwrap_or("—")) } }
            td { span class={ "status " (run.status) } { (run.status) } }
            td { (run.queue) }
            td { (run.created_at) }
            td.num { (overall.unwrap_or_default()) }
        }
    }
}

/// The first block of a UUID: enough to tell runs apart on one page.
pub fn short(id: &str) -> &str {
    id.split('-').next().unwrap_or(id)
}
