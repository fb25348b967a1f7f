//! hetsim-web: the HTTP face of the simulation service. The JSON API ([`api`], described by
//! an OpenAPI document that utoipa builds from the handlers) and the server-rendered web UI
//! ([`ui`]) share one router ([`router`]), one state ([`state`]), one error type
//! ([`error`]) and one authentication ([`auth`]); [`serve`] answers connections with the
//! service's limits.
//!
//! Modules, lowest first (each uses only those above it): [`url`], [`access`], [`state`],
//! [`error`], [`extract`], [`auth`], `download`, [`api`], [`ui`], [`serve`]; the crate root
//! assembles the router.

pub mod access;
pub mod api;
pub mod auth;
mod download;
pub mod error;
pub mod extract;
mod serve;
pub mod state;
mod ui;
pub mod url;

pub use access::Access;
pub use api::document;
pub use error::{ApiError, ApiResult, ErrorBody};
pub use serve::serve;
pub use state::AppState;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::{middleware, Router};

/// The API's routes and the UI's, behind authentication, the request timeout, JSON error
/// bodies and the body limit.
pub fn router(state: AppState) -> Router {
    let body_limit = state.limits.max_body_bytes;
    let (routes, _) = api::routes().split_for_parts();
    routes
        .merge(ui::router())
        .fallback(api::no_route)
        .method_not_allowed_fallback(api::no_method)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            |State(s): State<AppState>, request: Request, next: Next| {
                auth::authenticate(s, request, next, ui::refusal)
            },
        ))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            std::time::Duration::from_secs(state.limits.request_timeout_seconds.max(1)),
        ))
        .layer(middleware::from_fn(error::json_error_bodies))
        .layer(axum::extract::DefaultBodyLimit::max(body_limit))
        .with_state(state)
}
