//! The HTTP API (axum, JSON). Routes, authentication and limits live here; the handlers are
//! in `runs` (runs and sweeps) and `library` (components, models, systems, apps), the errors
//! and their statuses in `error`.

mod error;
mod library;
mod runs;
mod serve;

pub use error::{ApiError, ApiResult};
pub use serve::serve;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};

use crate::limits::ServiceLimits;
use crate::queue::RunQueue;
use crate::storage::Store;

/// The OpenAPI 3.0 document of this API, served at `/api/openapi.json`.
pub const OPENAPI: &str = include_str!("openapi.json");

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

/// Every route but `GET /api/health` needs `Authorization: Bearer <token>` when a token is
/// configured.
async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(token) = &state.token else {
        return next.run(request).await;
    };
    if request.uri().path() == "/api/health" {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if presented == Some(token.as_str()) {
        next.run(request).await
    } else {
        ApiError::Unauthorized.into_response()
    }
}

/// How long `/api/health` waits for the database or the broker to answer.
const HEALTH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// 200 when the database (and, with `--amqp`, the broker) answers; 503 naming what does not.
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
    let body = serde_json::json!({
        "status": if down.is_empty() { "ok" } else { "unavailable" },
        "version": env!("CARGO_PKG_VERSION"),
        "database": if database { "up" } else { "down" },
        "broker": broker.map(|up| if up { "up" } else { "down" }),
        "down": down,
    });
    let status = if down.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}

async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI)
}

/// The JSON Schema of system files (`docs/schema/system.schema.json`), served at
/// `/api/schemas/system.json`.
async fn system_schema() -> Json<serde_json::Value> {
    Json(hetsim_scripting::schema::system_schema())
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

pub fn router(state: AppState) -> Router {
    let body_limit = state.limits.max_body_bytes;
    Router::new()
        .route("/api/health", get(health))
        .route("/api/openapi.json", get(openapi))
        .route("/api/schemas/system.json", get(system_schema))
        .route("/api/runs", get(runs::list).post(runs::submit))
        .route("/api/runs/{id}", get(runs::show).delete(runs::delete))
        .route("/api/runs/{id}/cancel", post(runs::cancel))
        .route("/api/runs/{id}/trace", get(runs::trace))
        .route("/api/runs/{id}/log", get(runs::log))
        .route("/api/sweeps", post(runs::submit_sweep))
        .route("/api/sweeps/{id}", get(runs::sweep).delete(runs::delete_sweep))
        .route("/api/sweeps/{id}/cancel", post(runs::cancel_sweep))
        .route(
            "/api/components",
            get(library::list_components).post(library::create_component),
        )
        .route(
            "/api/components/{id}",
            get(library::show_component)
                .put(library::update_component)
                .delete(library::delete_component),
        )
        .route(
            "/api/components/{id}/attributes/{key}",
            put(library::put_attribute),
        )
        .route(
            "/api/models",
            get(library::list_models).post(library::create_model),
        )
        .route(
            "/api/models/{id}",
            get(library::show_model)
                .put(library::update_model)
                .delete(library::delete_model),
        )
        .route(
            "/api/systems",
            get(library::list_systems).post(library::create_system),
        )
        .route(
            "/api/systems/{id}",
            get(library::show_system)
                .put(library::update_system)
                .delete(library::delete_system),
        )
        .route("/api/apps", get(library::list_apps).post(library::create_app))
        .route(
            "/api/apps/{id}",
            get(library::show_app)
                .put(library::update_app)
                .delete(library::delete_app),
        )
        .fallback(no_route)
        .method_not_allowed_fallback(no_method)
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            std::time::Duration::from_secs(state.limits.request_timeout_seconds.max(1)),
        ))
        .layer(axum::extract::DefaultBodyLimit::max(body_limit))
        .with_state(state)
}
