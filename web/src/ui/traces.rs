//! `/traces`: the stored Chakra traces (name, ranks, nodes, size, when stored), each with a
//! link to launch it and, for an admin (as `DELETE /api/traces/{name}`), a delete button
//! that asks first; and, for an admin (as `PUT /api/traces/{name}`), a form that stores one
//! from its rank files (`PREFIX.N.et`, chosen together), read and checked as the API reads
//! them, refused with the reader's error and nothing stored.

use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{html, Markup};

use super::layout::may_post;
use super::{encode, layout, see_other, PageResult};
use crate::api::traces::check_off_thread;
use crate::error::ApiError;
use crate::state::AppState;
use hetsim_service::storage::{in_rank_order, TraceFile, TraceRecord, TraceRefused};

pub async fn list(State(s): State<AppState>) -> PageResult<Markup> {
    let traces = s.store.traces().await?;
    Ok(layout::page("Traces", list_page(&traces, "", None)))
}

/// The upload: `name`'s value and the files, each (its name, its bytes), in the order sent.
async fn upload(mut form: Multipart) -> Result<(String, Vec<TraceFile>), String> {
    let (mut name, mut files) = (String::new(), Vec::new());
    while let Some(field) = form.next_field().await.map_err(|e| e.body_text())? {
        match field.name() {
            Some("name") => name = field.text().await.map_err(|e| e.body_text())?,
            Some("files") => {
                let file = field.file_name().unwrap_or_default().to_owned();
                let data = field.bytes().await.map_err(|e| e.body_text())?.to_vec();
                // A form whose file input is left empty sends one part without a name.
                if !file.is_empty() || !data.is_empty() {
                    files.push(TraceFile { name: file, data });
                }
            }
            _ => {}
        }
    }
    Ok((name.trim().to_owned(), files))
}

/// Stores the trace of the form's rank files under its name, as `PUT /api/traces/{name}`
/// does; a refusal shows the page again with the reason (422).
pub async fn create(State(s): State<AppState>, form: Multipart) -> PageResult<Response> {
    let (name, files) = match upload(form).await {
        Ok(upload) => upload,
        Err(why) => return refuse(&s, "", &why).await,
    };
    let reason = |refused: TraceRefused| format!("{}: {refused}", refused.field());
    let files = match in_rank_order(files) {
        Ok(files) => files,
        Err(why) => return refuse(&s, &name, &reason(why)).await,
    };
    match check_off_thread(name, files).await? {
        (name, files, Ok(nodes)) => {
            s.store.put_trace(&name, &files, &nodes).await?;
            Ok(see_other("/traces"))
        }
        (name, _, Err(why)) => refuse(&s, &name, &reason(why)).await,
    }
}

async fn refuse(s: &AppState, name: &str, why: &str) -> PageResult<Response> {
    let traces = s.store.traces().await?;
    let page = layout::page("Traces", list_page(&traces, name, Some(why)));
    Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
}

fn list_page(traces: &[TraceRecord], name: &str, refusal: Option<&str>) -> Markup {
    html! {
        h1 { "Traces" }
        p.muted {
            "Chakra execution traces, one file a rank, replayed on a system under a compute policy \
             (docs/TRACES.md). Store one below, with " code { "hetsim traces put NAME PREFIX" } " or "
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
        h2 #store { "Store a trace" }
        @if may_post("/traces") {
            (upload_form(name, refusal))
        } @else {
            (layout::refused("/traces", "Storing a trace"))
        }
    }
}

/// The form that stores a trace: `name` as typed, and why the last upload was refused.
fn upload_form(name: &str, refusal: Option<&str>) -> Markup {
    html! {
        form #upload method="post" action="/traces" enctype="multipart/form-data" {
            @if let Some(why) = refusal {
                p.error role="alert" { (why) }
            }
            label { "Name " input type="text" name="name" required value=(name); }
            label { "Rank files (" code { "PREFIX.0.et" } ", " code { "PREFIX.1.et" } ", …, plain or gzip, chosen together) "
                input type="file" name="files" multiple required accept=".et,.gz"; }
            button type="submit" { "Store" }
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
        let html = list_page(&[record("dp step"), record("moe")], "", None).into_string();
        assert_eq!(html.matches("<tr>").count(), 3, "a header and two traces: {html}");
        assert!(
            html.contains(r#"<a href="/launch?app=trace:dp%20step">dp step</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"<td class="num">136</td>"#), "{html}");
        assert!(html.contains("2026-11-28T07:00:00Z"), "{html}");
        let empty = list_page(&[], "", None).into_string();
        assert!(
            empty.contains("No trace is stored.") && !empty.contains("<table"),
            "{empty}"
        );
        // Outside a request nobody is signed in: the form gives way to the role it needs.
        assert!(empty.contains("Storing a trace needs the admin role"), "{empty}");
        let form = upload_form("moe", Some("files: rank 1 is missing")).into_string();
        assert!(
            form.contains(r#"enctype="multipart/form-data""#)
                && form.contains(r#"<p class="error" role="alert">files: rank 1 is missing</p>"#)
                && form.contains(r#"value="moe""#)
                && form.contains(r#"name="files" multiple"#),
            "{form}"
        );
    }
}
