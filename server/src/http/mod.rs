//! The HTTP API (axum, JSON). Routes, authentication and limits live here; the handlers are
//! in `runs` (runs and sweeps) and `library` (components, models, systems, apps), the errors
//! and their statuses in `error`, the OpenAPI document and its page in `openapi` and
//! `docs_page`.
//!
//! Every route is registered through utoipa-axum from its handler's `#[utoipa::path]`, so
//! the router and the OpenAPI document are built from one list and cannot disagree.

mod docs_page;
mod error;
mod library;
mod openapi;
mod runs;
pub(crate) mod schemas;
mod serve;

pub use error::{ApiError, ApiResult, ErrorBody};
pub use openapi::document;
pub use serve::serve;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::limits::ServiceLimits;
use crate::queue::RunQueue;
use crate::storage::Store;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    /// Where stored runs go: told after every submission, asked about the broker's health.
    pub queue: Arc<dyn RunQueue>,
    pub token: Option<String>,
    pub limits: Arc<ServiceLimits>,
}

/// A JSON body, with a rejection that names what serde could not read.
pub struct Body<T>(pub T);

impl<S, T> axum::extract::FromRequest<S> for Body<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let Json(value) = Json::<T>::from_request(req, state).await?;
        Ok(Body(value))
    }
}

/// Path parameters, with a JSON rejection (axum's answers plain text, e.g. for an id that
/// is not UTF-8 once percent-decoded).
pub struct Path<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for Path<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(value) = axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        Ok(Path(value))
    }
}

/// Query parameters, with a JSON rejection.
pub struct Params<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for Params<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        let axum::extract::Query(value) = axum::extract::Query::<T>::from_request_parts(parts, state).await?;
        Ok(Params(value))
    }
}

/// The API's routes that need no token: liveness, and the API's description and the system
/// files' schema (the same on every hetsim server, and read with a browser or an editor,
/// which send no bearer header).
pub const PUBLIC_PATHS: [&str; 4] = [
    "/api/health",
    "/api/openapi.json",
    "/api/docs",
    "/api/schemas/system.json",
];

/// With a token configured, every route but the public ones ([`PUBLIC_PATHS`], the UI's
/// login page and assets) needs it, as `Authorization: Bearer <token>` or as the UI's login
/// cookie. An API request without it gets 401; a page asks the browser to log in first.
///
/// Whatever the token, a request that would change something (not GET or HEAD) sent by
/// another site's page is refused with 403: browsers say so (`Sec-Fetch-Site`, `Origin`),
/// and the UI's plain form posts would otherwise be open to any page the user visits.
async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if crate::ui::is_cross_site_change(&request) {
        return ApiError::CrossSite.into_response();
    }
    let Some(token) = &state.token else {
        return next.run(request).await;
    };
    let path = request.uri().path();
    let public = PUBLIC_PATHS.contains(&path) || crate::ui::is_public(path);
    if public || crate::ui::presents(request.headers(), token) {
        return next.run(request).await;
    }
    if path.starts_with("/api/") {
        ApiError::Unauthorized.into_response()
    } else {
        let wanted = request.uri().path_and_query().map_or(path, |p| p.as_str());
        crate::ui::see_other(&format!("/login?next={}", crate::ui::encode(wanted)))
    }
}

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
async fn no_route(uri: axum::http::Uri) -> ApiError {
    ApiError::NoRoute(uri.path().to_owned())
}

/// The JSON 405 of a route that does not take the request's method.
async fn no_method(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::NoMethod {
        method: method.to_string(),
        path: uri.path().to_owned(),
    }
}

/// Every route of the API with its OpenAPI operation; `routes!` groups the handlers of one
/// path (their annotations name it).
fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base())
        .routes(routes!(health))
        .routes(routes!(openapi::json))
        .routes(routes!(docs_page::page))
        .routes(routes!(system_schema))
        .routes(routes!(runs::list, runs::submit))
        .routes(routes!(runs::show, runs::delete))
        .routes(routes!(runs::cancel))
        .routes(routes!(runs::trace))
        .routes(routes!(runs::log))
        .routes(routes!(runs::submit_sweep))
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
}

pub fn router(state: AppState) -> Router {
    let body_limit = state.limits.max_body_bytes;
    let (routes, _) = api_routes().split_for_parts();
    routes
        .merge(crate::ui::router())
        .fallback(no_route)
        .method_not_allowed_fallback(no_method)
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            std::time::Duration::from_secs(state.limits.request_timeout_seconds.max(1)),
        ))
        .layer(middleware::from_fn(error::json_error_bodies))
        .layer(axum::extract::DefaultBodyLimit::max(body_limit))
        .with_state(state)
}
