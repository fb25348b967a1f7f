//! The API's errors as types, and the one place they become HTTP statuses: every error
//! answers JSON `{"error": "...", "field": "..."}` (`field` when one field is to blame).

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::run::SpecError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request cannot be read (not JSON, a query parameter of the wrong type).
    #[error("{0}")]
    Malformed(String),
    /// 401.
    #[error("missing or wrong bearer token (Authorization: Bearer <token>)")]
    Unauthorized,
    /// 404: no such stored item.
    #[error("no {what} with id {id}")]
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
}

impl ApiError {
    /// 422 on `field`.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        ApiError::Invalid {
            field: field.to_owned(),
            message: message.into(),
        }
    }

    pub fn not_found(what: &'static str, id: &str) -> Self {
        ApiError::NotFound {
            what,
            id: id.to_owned(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Malformed(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::NotFound { .. } | ApiError::NoRoute(_) => StatusCode::NOT_FOUND,
            ApiError::NoMethod { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict { .. } => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Invalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
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

/// Whether `e` is the database not answering (down, restarting, out of connections), which
/// the client may retry, rather than a fault.
fn is_database_unreachable(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<sqlx::Error>(),
            Some(sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_))
        )
    })
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        if is_unique_violation(&e) {
            ApiError::Conflict {
                field: Some("name"),
                message: "the name is taken".to_owned(),
            }
        } else if is_database_unreachable(&e) {
            tracing::warn!("the database does not answer: {e:#}");
            ApiError::Unavailable("the database does not answer; try again".to_owned())
        } else {
            ApiError::Internal(e)
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
        let body = serde_json::json!({ "error": self.to_string(), "field": self.field() });
        (self.status(), Json(body)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
