//! The one error type of both HTTP APIs (the tenants' and the operators'). Every failure becomes
//! `{"error", "detail", "code"}` with the status name of the API contract (README "Errors") as
//! `error` and a stable machine [`Code`] per case; a validation error also names its `field`.
//! 5xx answers never carry internal messages: those go to the log only.

use axum::{
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// `malformed_json`, `unsupported_media_type` or `bad_request`.
    #[error("{1}")]
    BadRequest(Code, String),
    #[error("{0}")]
    Unauthorized(String),
    /// Why, as a code: a missing scope, a suspended organization, …
    #[error("{1}")]
    Forbidden(Code, String),
    #[error("{0}")]
    NotFound(String),
    #[error("this endpoint does not accept that method")]
    MethodNotAllowed,
    /// The record's state refuses a valid request; the code says which state.
    #[error("{1}")]
    Conflict(Code, String),
    /// The body is larger than the API takes (its limit, in bytes).
    #[error("request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    #[error("{field}: {reason}")]
    Validation { field: String, reason: String },
    /// `quota_exceeded` for the monthly quota, `rate_limited` for every other limit.
    #[error("{detail}")]
    TooManyRequests { code: Code, detail: String, retry_after_secs: u64 },
    #[error("{0}")]
    Unavailable(String),
    /// PostgreSQL cannot be reached (or the process knows it is down): retry shortly.
    #[error("the database cannot be reached; retry shortly")]
    DatabaseUnavailable,
    /// A downstream system refused what it was asked for (its own message, no internals).
    #[error("{0}")]
    BadGateway(String),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

pub use tns_core::error_body::{Code, ErrorBody};

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn validation(field: impl Into<String>, reason: impl Into<String>) -> ApiError {
        ApiError::Validation { field: field.into(), reason: reason.into() }
    }

    /// 404 for a record the organization does not have (another organization's included).
    pub fn not_found(kind: &str, id: impl std::fmt::Display) -> ApiError {
        ApiError::NotFound(format!("no {kind} with id {id}"))
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(..) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(..) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(..) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Validation { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable(_) | ApiError::DatabaseUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::BadGateway(_) => StatusCode::BAD_GATEWAY,
            ApiError::Internal(e) if database_unreachable(e) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The machine code of the answer.
    pub fn code(&self) -> Code {
        match self {
            ApiError::BadRequest(code, _) | ApiError::Forbidden(code, _) | ApiError::Conflict(code, _) => *code,
            ApiError::TooManyRequests { code, .. } => *code,
            ApiError::Unauthorized(_) => Code::Unauthorized,
            ApiError::NotFound(_) => Code::NotFound,
            ApiError::MethodNotAllowed => Code::MethodNotAllowed,
            ApiError::PayloadTooLarge(_) => Code::PayloadTooLarge,
            ApiError::Validation { .. } => Code::InvalidField,
            ApiError::Unavailable(_) => Code::Unavailable,
            ApiError::DatabaseUnavailable => Code::DatabaseUnavailable,
            ApiError::Internal(e) if database_unreachable(e) => Code::DatabaseUnavailable,
            ApiError::BadGateway(_) => Code::BadGateway,
            ApiError::Internal(_) => Code::Internal,
        }
    }
}

/// A database error carried inside another (`?` on a store call returning anyhow) that says the
/// database cannot be reached.
fn database_unreachable(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.downcast_ref::<sqlx::Error>().is_some_and(tns_store::health::unreachable))
}

/// `Retry-After` of a 503 for an unreachable database: the breaker closes within a second of
/// the database answering again.
pub const DATABASE_RETRY_AFTER_SECS: u64 = tns_store::health::RETRY_AFTER_SECS;

/// The contract's status names; 422 is "Validation Error", not the RFC's phrase.
pub fn status_name(status: StatusCode) -> &'static str {
    tns_core::error_body::status_name(status.as_u16(), status.canonical_reason())
}

pub fn error_response(status: StatusCode, code: Code, detail: String, field: Option<String>) -> Response {
    let body = ErrorBody { error: status_name(status).to_string(), detail, code, field };
    (status, Json(body)).into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = (self.status(), self.code());
        match self {
            ApiError::Internal(err) if database_unreachable(&err) => {
                tracing::debug!(error = format!("{err:#}"), "database unreachable");
                ApiError::DatabaseUnavailable.into_response()
            }
            ApiError::Internal(err) => {
                // The chain of messages, not the debug form (which prints a database error's
                // detail, values included).
                tracing::error!(error = format!("{err:#}"), "request failed");
                error_response(status, code, "an unexpected error occurred".into(), None)
            }
            ApiError::Validation { field, reason } => {
                error_response(status, code, format!("{field}: {reason}"), Some(field))
            }
            ApiError::TooManyRequests { detail, retry_after_secs, .. } => {
                let mut res = error_response(status, code, detail, None);
                res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
                res
            }
            ApiError::DatabaseUnavailable => {
                let mut res = error_response(status, code, self.to_string(), None);
                res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(DATABASE_RETRY_AFTER_SECS));
                res
            }
            other => error_response(status, code, other.to_string(), None),
        }
    }
}

/// A plain JSON 500, for what fails outside a handler's result (a panic).
pub fn internal() -> Response {
    ApiError::Internal(anyhow::anyhow!("a handler panicked")).into_response()
}

impl From<tns_core::domain::Invalid> for ApiError {
    fn from(e: tns_core::domain::Invalid) -> ApiError {
        ApiError::Validation { field: e.field, reason: e.reason }
    }
}

impl From<sqlx::Error> for ApiError {
    /// A database's own error text can quote the values it refused (a `DETAIL` naming an
    /// identity number, say): only its code and the constraint or table it names reach the log.
    /// A database that cannot be reached is a 503 the client may retry; the watch logs the
    /// outage once, so each request's failure is only a debug line.
    fn from(e: sqlx::Error) -> Self {
        if tns_store::health::unreachable(&e) {
            tracing::debug!(error = %tns_store::redacted(&e), "database unreachable");
            return ApiError::DatabaseUnavailable;
        }
        ApiError::Internal(anyhow::anyhow!(tns_store::redacted(&e)))
    }
}

impl From<redis::RedisError> for ApiError {
    fn from(e: redis::RedisError) -> Self {
        ApiError::Internal(e.into())
    }
}

/// True when a database error is a unique violation of the named constraint or index.
pub fn is_unique_violation(e: &sqlx::Error, constraint: &str) -> bool {
    match e {
        sqlx::Error::Database(db) => db.code().as_deref() == Some("23505") && db.constraint() == Some(constraint),
        _ => false,
    }
}
