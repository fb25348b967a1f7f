//! The HTTP API (axum, JSON): its routes, the health check and the system files' schema here;
//! the handlers in `runs` (runs and sweeps) and `library` (components, models, systems,
//! apps); the OpenAPI document and its page in `openapi` and `docs_page` (with each
//! route's `request_example`). Errors and their
//! statuses are `crate::error`'s, authentication `crate::auth`'s.
//!
//! Every route is registered through utoipa-axum from its handler's `#[utoipa::path]`, so
//! the router and the OpenAPI document are built from one list and cannot disagree.

mod docs_page;
mod library;
mod openapi;
mod request_example;
mod runs;
mod trace_schema;
pub(crate) mod traces;

pub use openapi::document;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::state::AppState;

/// How long `/api/health` waits for the database or the broker to answer.
const HEALTH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// What `GET /api/health` answers.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok`, or `unavailable` when something in `down` is.
    status: &'static str,
    /// The server's version.
    version: &'static str,
    /// `up` or `down`.
    database: &'static str,
    /// `up` or `down`; null without `--amqp`.
    broker: Option<&'static str>,
    /// What does not answer: `database`, `broker`.
    down: Vec<&'static str>,
}

fn up_or_down(up: bool) -> &'static str {
    if up {
        "up"
    } else {
        "down"
    }
}

/// Liveness: whether the database (and, with `--amqp`, the broker) answers within 2 s.
/// Needs no token.
#[utoipa::path(get, path = "/api/health", tag = "service",
    responses(
        (status = 200, description = "The database (and the broker) answer", body = Health),
        (status = 503, description = "Something in `down` does not answer", body = Health),
    ))]
async fn health(State(state): State<AppState>) -> Response {
    let database = matches!(
        tokio::time::timeout(HEALTH_TIMEOUT, state.store.ping()).await,
        Ok(Ok(()))
    );
    let broker = match state.queue.broker_health() {
        Some(ping) => Some(matches!(
            tokio::time::timeout(HEALTH_TIMEOUT, ping).await,
            Ok(Ok(()))
        )),
        None => None,
    };
    let down: Vec<&str> = [("database", Some(database)), ("broker", broker)]
        .into_iter()
        .filter(|(_, up)| *up == Some(false))
        .map(|(name, _)| name)
        .collect();
    let status = if down.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = Health {
        status: if down.is_empty() { "ok" } else { "unavailable" },
        version: env!("CARGO_PKG_VERSION"),
        database: up_or_down(database),
        broker: broker.map(up_or_down),
        down,
    };
    (status, Json(body)).into_response()
}

/// The JSON Schema of system files (`docs/schema/system.schema.json`).
#[utoipa::path(get, path = "/api/schemas/system.json", tag = "service",
    responses((status = 200, description = "The JSON Schema (2020-12) of system files, which stored and submitted systems are checked against", body = Object)))]
async fn system_schema() -> Json<serde_json::Value> {
    Json(hetsim_system::system_schema())
}

/// The JSON 404 of a path that no route serves.
pub async fn no_route(uri: axum::http::Uri) -> ApiError {
    ApiError::NoRoute(uri.path().to_owned())
}

/// The JSON 405 of a route that does not take the request's method.
pub async fn no_method(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::NoMethod {
        method: method.to_string(),
        path: uri.path().to_owned(),
    }
}

/// Every route of the API with its OpenAPI operation; `routes!` groups the handlers of one
/// path (their annotations name it).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base())
        .routes(routes!(health))
        .routes(routes!(openapi::json))
        .routes(routes!(docs_page::page))
        .routes(routes!(system_schema))
        .routes(routes!(runs::list, runs::submit))
        .routes(routes!(runs::show, runs::delete))
        .routes(routes!(runs::cancel))
        .routes(routes!(runs::trace))
        .routes(routes!(runs::processes))
        .routes(routes!(runs::log))
        .routes(routes!(runs::source))
        .routes(routes!(runs::list_sweeps, runs::submit_sweep))
        .routes(routes!(runs::sweep_csv))
        .routes(routes!(runs::sweep, runs::delete_sweep))
        .routes(routes!(runs::cancel_sweep))
        .routes(routes!(library::list_components, library::create_component))
        .routes(routes!(
            library::show_component,
            library::update_component,
            library::delete_component
        ))
        .routes(routes!(library::put_attribute))
        .routes(routes!(library::list_models, library::create_model))
        .routes(routes!(
            library::show_model,
            library::update_model,
            library::delete_model
        ))
        .routes(routes!(library::list_systems, library::create_system))
        .routes(routes!(
            library::show_system,
            library::update_system,
            library::delete_system
        ))
        .routes(routes!(library::list_apps, library::create_app))
        .routes(routes!(
            library::show_app,
            library::update_app,
            library::delete_app
        ))
        .routes(routes!(library::app_inputs))
        .routes(routes!(traces::list))
        .routes(routes!(traces::show, traces::put, traces::delete))
        .routes(routes!(traces::files))
}
