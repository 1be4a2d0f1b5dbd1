//! The admin API's one error type. Every failure is the tenant API's body (`{"error",
//! "detail"}`, `field` too on 422); a 5xx never carries internal detail (that goes to the log).

use axum::{
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use tns_core::error_body::status_name;
pub use tns_core::error_body::ErrorBody;

#[derive(Debug)]
pub enum AdminError {
    BadRequest(String),
    Unauthorized(String),
    Forbidden(String),
    NotFound(String),
    /// The target's state does not allow the action.
    Conflict(String),
    MethodNotAllowed,
    PayloadTooLarge,
    Validation {
        field: String,
        reason: String,
    },
    /// `detail` says which limit.
    TooManyRequests {
        detail: String,
        retry_after_secs: u64,
    },
    /// PostgreSQL cannot be reached: retry shortly.
    DatabaseUnavailable,
    Internal(anyhow::Error),
}

pub type AdminResult<T> = Result<T, AdminError>;

impl AdminError {
    pub fn validation(field: impl Into<String>, reason: impl Into<String>) -> AdminError {
        AdminError::Validation { field: field.into(), reason: reason.into() }
    }

    fn status(&self) -> StatusCode {
        match self {
            AdminError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AdminError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            AdminError::Forbidden(_) => StatusCode::FORBIDDEN,
            AdminError::NotFound(_) => StatusCode::NOT_FOUND,
            AdminError::Conflict(_) => StatusCode::CONFLICT,
            AdminError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            AdminError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            AdminError::Validation { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            AdminError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            AdminError::DatabaseUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            AdminError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// A plain JSON 500, for what fails outside a handler's result (a panic).
pub fn internal() -> Response {
    AdminError::Internal(anyhow::anyhow!("a handler panicked")).into_response()
}

impl IntoResponse for AdminError {
    fn into_response(self) -> Response {
        let status = self.status();
        let retry_after = match self {
            AdminError::TooManyRequests { retry_after_secs, .. } => Some(retry_after_secs),
            AdminError::DatabaseUnavailable => Some(tns_store::health::RETRY_AFTER_SECS),
            _ => None,
        };
        let (detail, field) = match self {
            AdminError::BadRequest(d)
            | AdminError::Unauthorized(d)
            | AdminError::Forbidden(d)
            | AdminError::NotFound(d)
            | AdminError::Conflict(d) => (d, None),
            AdminError::MethodNotAllowed => ("this endpoint does not accept that method".into(), None),
            AdminError::PayloadTooLarge => {
                (format!("request body is larger than {} bytes", super::MAX_BODY_BYTES), None)
            }
            AdminError::Validation { field, reason } => (format!("{field}: {reason}"), Some(field)),
            AdminError::TooManyRequests { detail, .. } => (detail, None),
            AdminError::DatabaseUnavailable => ("the database cannot be reached; retry shortly".into(), None),
            AdminError::Internal(err) => {
                // The chain of messages, not the debug form (a database error's detail can
                // quote values).
                tracing::error!(error = format!("{err:#}"), "admin request failed");
                ("an unexpected error occurred".into(), None)
            }
        };
        let error = status_name(status.as_u16(), status.canonical_reason()).into();
        let mut res = (status, Json(ErrorBody { error, detail, field })).into_response();
        if let Some(after) = retry_after {
            res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(after));
        }
        res
    }
}

impl From<sqlx::Error> for AdminError {
    fn from(e: sqlx::Error) -> Self {
        if tns_store::health::unreachable(&e) {
            tracing::warn!(error = %tns_store::redacted(&e), "admin request: the database cannot be reached");
            return AdminError::DatabaseUnavailable;
        }
        AdminError::Internal(anyhow::anyhow!(tns_store::redacted(&e)))
    }
}
