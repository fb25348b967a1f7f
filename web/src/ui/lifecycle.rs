//! Cancel and delete, from the run and sweep pages: each a small POST form whose button asks
//! for a confirmation first (app.js, `data-confirm`; without scripts the form posts at once),
//! doing what `POST /api/…/cancel` and `DELETE /api/…` do.

use axum::extract::{Path, State};
use axum::response::Response;
use maud::{html, Markup};

use super::layout::may_post;
use super::{encode, see_other, PageResult};
use crate::error::ApiError;
use crate::state::AppState;

/// What the buttons act on.
#[derive(Clone, Copy)]
pub enum Target {
    Run,
    Sweep,
}

impl Target {
    fn path(self) -> &'static str {
        match self {
            Target::Run => "runs",
            Target::Sweep => "sweeps",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Target::Run => "run",
            Target::Sweep => "sweep",
        }
    }
}

/// The cancel button (while something is unfinished) and the delete button of `id`, each
/// where the caller's role may use it.
pub fn buttons(target: Target, id: &str, unfinished: bool) -> Markup {
    let base = format!("/{}/{}", target.path(), encode(id));
    let what = target.name();
    if !may_post(&format!("{base}/delete")) {
        return html! {};
    }
    html! {
        div.lifecycle {
            @if unfinished && may_post(&format!("{base}/cancel")) {
                form method="post" action={ (base) "/cancel" } data-confirm={ "Cancel this " (what) "? Its unfinished runs stop and keep no result." } {
                    button.cancel type="submit" { "Cancel " (what) }
                }
            }
            form method="post" action={ (base) "/delete" } data-confirm={ "Delete this " (what) " with its results, traces and logs? This cannot be undone." } {
                button.delete type="submit" { "Delete " (what) }
            }
        }
    }
}

pub async fn cancel_run(State(s): State<AppState>, Path(id): Path<String>) -> PageResult<Response> {
    s.store
        .cancel_run(&id)
        .await?
        .ok_or_else(|| ApiError::not_found("run", &id))?;
    Ok(see_other(&format!("/runs/{}", encode(&id))))
}

pub async fn delete_run(State(s): State<AppState>, Path(id): Path<String>) -> PageResult<Response> {
    let sweep = s.store.run(&id).await?.and_then(|run| run.sweep);
    if !s.store.delete_run(&id).await? {
        return Err(ApiError::not_found("run", &id).into());
    }
    Ok(match sweep {
        Some(sweep) => see_other(&format!("/sweeps/{}", encode(&sweep))),
        None => see_other("/"),
    })
}

pub async fn cancel_sweep(State(s): State<AppState>, Path(id): Path<String>) -> PageResult<Response> {
    s.store
        .cancel_sweep(&id)
        .await?
        .ok_or_else(|| ApiError::not_found("sweep", &id))?;
    Ok(see_other(&format!("/sweeps/{}", encode(&id))))
}

pub async fn delete_sweep(State(s): State<AppState>, Path(id): Path<String>) -> PageResult<Response> {
    if !s.store.delete_sweep(&id).await? {
        return Err(ApiError::not_found("sweep", &id).into());
    }
    Ok(see_other("/"))
}
