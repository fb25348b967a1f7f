//! `/traces`: the stored Chakra traces (name, ranks, nodes, size, when stored), each with a
//! link to launch it and, for an admin (as `DELETE /api/traces/{name}`), a delete button
//! that asks first. Traces are stored through the API or `hetsim traces put`: a browser
//! form has no way to send a folder of rank files as the API takes them.

use axum::extract::{Path, State};
use axum::response::Response;
use maud::{html, Markup};

use super::layout::may_post;
use super::{encode, layout, see_other, PageResult};
use crate::error::ApiError;
use crate::state::AppState;
use hetsim_service::storage::TraceRecord;

pub async fn list(State(s): State<AppState>) -> PageResult<Markup> {
    let traces = s.store.traces().await?;
    Ok(layout::page("Traces", list_page(&traces)))
}

fn list_page(traces: &[TraceRecord]) -> Markup {
    html! {
        h1 { "Traces" }
        p.muted {
            "Chakra execution traces, one file a rank, replayed on a system under a compute policy \
             (docs/TRACES.md). Store one with " code { "hetsim traces put NAME PREFIX" } " or "
            code { "PUT /api/traces/{name}" } "; launch it from " a href="/launch" { "Launch" } "."
        }
        @if traces.is_empty() {
            p.muted { "No trace is stored." }
        } @else {
            div #traces { (layout::table(
                ["name", "ranks", "nodes", "bytes", "stored at", ""],
                traces.iter().map(row),
            )) }
        }
    }
}

fn row(t: &TraceRecord) -> Markup {
    let delete = format!("/traces/{}/delete", encode(&t.id));
    html! { tr {
        td { a href={ "/launch?app=trace:" (encode(&t.name)) } { (t.name) } }
        td.num { (t.ranks) } td.num { (t.nodes) } td.num { (t.bytes) } td { (t.created_at) }
        td { @if may_post(&delete) {
            form method="post" action=(delete) data-confirm={ "Delete trace " (t.name) "? Runs that replayed it keep their results." } {
                button.delete type="submit" { "Delete" }
            }
        } }
    } }
}

pub async fn delete(State(s): State<AppState>, Path(id): Path<String>) -> PageResult<Response> {
    if !s.store.delete_trace(&id).await? {
        return Err(ApiError::not_found("trace", &id).into());
    }
    Ok(see_other("/traces"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str) -> TraceRecord {
        TraceRecord {
            id: format!("id-{name}"),
            name: name.to_owned(),
            ranks: 8,
            nodes: 136,
            bytes: 4096,
            created_at: "2026-11-28T07:00:00Z".to_owned(),
            files: Vec::new(),
        }
    }

    /// A row per trace with its figures and a launch link by name; none without traces.
    #[test]
    fn the_list_shows_each_trace_with_a_launch_link() {
        let html = list_page(&[record("dp step"), record("moe")]).into_string();
        assert_eq!(html.matches("<tr>").count(), 3, "a header and two traces: {html}");
        assert!(
            html.contains(r#"<a href="/launch?app=trace:dp%20step">dp step</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"<td class="num">136</td>"#), "{html}");
        assert!(html.contains("2026-11-28T07:00:00Z"), "{html}");
        let empty = list_page(&[]).into_string();
        assert!(
            empty.contains("No trace is stored.") && !empty.contains("<table"),
            "{empty}"
        );
    }
}
