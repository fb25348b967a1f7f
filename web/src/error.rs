//! The API's errors as types, and the one place they become HTTP statuses: every error
//! answers JSON `{"error": "...", "field": "..."}` (`field` when one field is to blame),
//! those of the layers around the handlers too ([`json_error_bodies`]).

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use hetsim_service::storage::{Role, StoreError};
use hetsim_service::submit::SpecError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request cannot be read (not JSON, a query parameter of the wrong type).
    #[error("{0}")]
    Malformed(String),
    /// 401.
    #[error("missing or wrong bearer token (Authorization: Bearer <token>)")]
    Unauthorized,
    /// 403: a request from another site's page that would change something (the UI's forms
    /// take any site's posts otherwise, with or without a token).
    #[error("a request from another site's page may not change anything here")]
    CrossSite,
    /// 403: the token's role is below the one the request needs (`crate::access::needed`).
    #[error("this needs the {needed} role; the token's role is {role}")]
    Forbidden { needed: Role, role: Role },
    /// 404: no such stored item (`id` is what the request named it by: an id, or a name
    /// where the route takes either).
    #[error("no {what} {id}")]
    NotFound { what: &'static str, id: String },
    /// 404: no such route.
    #[error("no route {0}")]
    NoRoute(String),
    /// 405: the route does not take this method.
    #[error("{path} does not take {method}")]
    NoMethod { method: String, path: String },
    /// 409: the request conflicts with what is stored (a taken name, a finished run, a run
    /// without a result yet).
    #[error("{message}")]
    Conflict {
        field: Option<&'static str>,
        message: String,
    },
    /// 413: the body is over `--max-body-bytes`.
    #[error("{0}")]
    TooLarge(String),
    /// 422: a field is readable but wrong, or over a configured limit.
    #[error("{message}")]
    Invalid { field: String, message: String },
    /// 503: the database or the broker does not answer.
    #[error("{0}")]
    Unavailable(String),
    /// 500: a fault of the server's, logged.
    #[error("internal error: {0:#}")]
    Internal(anyhow::Error),
    /// An error status that a layer around the handlers answered without a JSON body
    /// (tower-http's 408 of `--request-timeout-seconds`).
    #[error("{message}")]
    Layer { status: StatusCode, message: String },
}

/// The body of every error response.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What went wrong, for a person to read.
    pub error: String,
    /// The request field to blame (`queue`, `variables.blockSize`, `name`, `body`, …), or
    /// null when no one field is.
    pub field: Option<String>,
}

impl ApiError {
    /// 422 on `field`.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        ApiError::Invalid {
            field: field.to_owned(),
            message: message.into(),
        }
    }

    /// 404 of the item `what` whose id is `id`.
    pub fn not_found(what: &'static str, id: &str) -> Self {
        ApiError::NotFound {
            what,
            id: format!("with id {id}"),
        }
    }

    /// 404 of the item `what` asked for by `key`, an id or a name.
    pub fn not_found_by_id_or_name(what: &'static str, key: &str) -> Self {
        ApiError::NotFound {
            what,
            id: format!("with id or name {key:?}"),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Malformed(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::CrossSite | ApiError::Forbidden { .. } => StatusCode::FORBIDDEN,
            ApiError::NotFound { .. } | ApiError::NoRoute(_) => StatusCode::NOT_FOUND,
            ApiError::NoMethod { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict { .. } => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Invalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Layer { status, .. } => *status,
        }
    }

    fn field(&self) -> Option<&str> {
        match self {
            ApiError::Invalid { field, .. } => Some(field),
            ApiError::Conflict { field, .. } => *field,
            _ => None,
        }
    }
}

/// A stored trace that does not read is the server's fault: 500.
impl From<hetsim_charts::trace::TraceError> for ApiError {
    fn from(e: hetsim_charts::trace::TraceError) -> Self {
        ApiError::Internal(e.into())
    }
}

/// A name taken is 409, a database that does not answer 503 (the client may retry), any
/// other storage failure the server's fault: 500.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        if e.is_unique_violation() {
            ApiError::Conflict {
                field: Some("name"),
                message: "the name is taken".to_owned(),
            }
        } else if e.is_unreachable() {
            tracing::warn!("the database does not answer: {:#}", anyhow::Error::new(e));
            ApiError::Unavailable("the database does not answer; try again".to_owned())
        } else {
            ApiError::Internal(e.into())
        }
    }
}

impl From<SpecError> for ApiError {
    fn from(e: SpecError) -> Self {
        match e {
            SpecError::Store(e) => e.into(),
            invalid => ApiError::invalid(invalid.field(), invalid.to_string()),
        }
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let message = rejection.body_text();
        match rejection {
            JsonRejection::JsonDataError(_) => ApiError::invalid("body", message),
            rejection if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::TooLarge(message),
            _ => ApiError::Malformed(message),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        ApiError::Malformed(rejection.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        ApiError::Malformed(rejection.body_text())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(e) = &self {
            tracing::error!("internal error: {e:#}");
        }
        let body = ErrorBody {
            error: self.to_string(),
            field: self.field().map(str::to_owned),
        };
        (self.status(), Json(body)).into_response()
    }
}

/// The most of a layer's error body that is kept as the message.
const MAX_LAYER_MESSAGE_BYTES: usize = 4096;

/// Middleware: an error response under `/api/` without a JSON body (tower-http's timeout
/// answers an empty 408) gets one, `{error, field: null}`, keeping its status and, as the
/// message, its text or else what the status means. The handlers' own errors pass as they are.
pub async fn json_error_bodies(request: Request, next: Next) -> Response {
    let api = request.uri().path().starts_with("/api/");
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !api || is_json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let text = axum::body::to_bytes(response.into_body(), MAX_LAYER_MESSAGE_BYTES)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status_meaning(status)
    } else {
        text
    };
    ApiError::Layer { status, message }.into_response()
}

/// What an error status without a body means here.
fn status_meaning(status: StatusCode) -> String {
    match status {
        StatusCode::REQUEST_TIMEOUT => {
            "the request took longer than the server's --request-timeout-seconds".to_owned()
        }
        other => other.canonical_reason().unwrap_or("error").to_lowercase(),
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
