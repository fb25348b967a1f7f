//! The HTTP API (axum, JSON). Routes, authentication, limits and errors live here; the
//! handlers are in `runs` (runs and sweeps) and `library` (components, models, systems, apps).

mod library;
mod runs;
mod serve;

pub use serve::serve;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use tokio::sync::Notify;

use crate::limits::ServiceLimits;
use crate::storage::Store;

/// The OpenAPI 3.0 document of this API, served at `/api/openapi.json`.
pub const OPENAPI: &str = include_str!("openapi.json");

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    /// Woken after every submission: the outbox publisher or the embedded workers.
    pub wake: Arc<Notify>,
    pub token: Option<String>,
    pub limits: Arc<ServiceLimits>,
    /// The broker's URL, for `/api/health`.
    pub amqp: Option<String>,
}

/// An error as JSON: `{"error": "...", "field": "..."}` with a 4xx or 5xx status.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub field: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            field: None,
        }
    }

    /// 422: the request is well-formed JSON, but `field` is invalid.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            message: message.into(),
            field: Some(field.to_owned()),
        }
    }

    pub fn not_found(what: &str, id: &str) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, format!("no {what} with id {id}"))
    }
}

/// Whether the database refused `e` for a duplicate of a unique key (a name taken by a
/// concurrent creation, or a rename onto a taken name).
fn is_unique_violation(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<sqlx::Error>(),
            Some(sqlx::Error::Database(db)) if db.is_unique_violation()
        )
    })
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        if is_unique_violation(&e) {
            return ApiError {
                status: StatusCode::CONFLICT,
                message: "the name is taken".to_owned(),
                field: Some("name".to_owned()),
            };
        }
        tracing::error!("internal error: {e:#}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("internal error: {e:#}"),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message, "field": self.field });
        (self.status, Json(body)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// A JSON body, with a rejection that names what serde could not read.
pub struct Body<T>(pub T);

impl<S, T> axum::extract::FromRequest<S> for Body<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(value)) => Ok(Body(value)),
            Err(rejection) => Err(ApiError::new(rejection.status(), rejection.body_text())),
        }
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
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token (Authorization: Bearer <token>)",
        )
        .into_response()
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
    let broker = match &state.amqp {
        Some(url) => Some(matches!(
            tokio::time::timeout(HEALTH_TIMEOUT, crate::queue::amqp::ping(url)).await,
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

/// The JSON 404 of a path that no route serves.
async fn no_route(uri: axum::http::Uri) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, format!("no route {}", uri.path()))
}

pub fn router(state: AppState) -> Router {
    let body_limit = state.limits.max_body_bytes;
    Router::new()
        .route("/api/health", get(health))
        .route("/api/openapi.json", get(openapi))
        .route("/api/runs", get(runs::list).post(runs::submit))
        .route("/api/runs/{id}", get(runs::show))
        .route("/api/runs/{id}/trace", get(runs::trace))
        .route("/api/runs/{id}/log", get(runs::log))
        .route("/api/sweeps", axum::routing::post(runs::submit_sweep))
        .route("/api/sweeps/{id}", get(runs::sweep))
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
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            std::time::Duration::from_secs(state.limits.request_timeout_seconds.max(1)),
        ))
        .layer(axum::extract::DefaultBodyLimit::max(body_limit))
        .with_state(state)
}
