//! Pieces every resource endpoint shares: partial updates, enum fields, plain list queries,
//! and mapping unique-key violations to 409.

use axum::{http::StatusCode, Json};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use utoipa::IntoParams;

use crate::{
    error::{is_unique_violation, ApiError, ApiResult},
    extract::{merge_patch, parse_value},
    pagination::Page,
};

/// A `201 Created` answer with the whole record.
pub type Created<T> = (StatusCode, Json<T>);

pub fn created<T>(record: T) -> Created<T> {
    (StatusCode::CREATED, Json(record))
}

/// `PUT` with any subset of fields: the stored record's input view, patched (RFC 7396), then
/// parsed and validated exactly as a create would be.
pub fn patched<I: Serialize + DeserializeOwned>(current: &I, patch: &serde_json::Value) -> ApiResult<I> {
    let mut merged = serde_json::to_value(current).map_err(anyhow::Error::from)?;
    merge_patch(&mut merged, patch);
    parse_value(merged)
}

/// One of a fixed set of values.
pub fn one_of(field: &str, raw: &str, allowed: &[&str]) -> ApiResult<String> {
    let v = raw.trim();
    if allowed.contains(&v) {
        Ok(v.to_string())
    } else {
        Err(ApiError::validation(field, format!("must be one of {}", allowed.join(", "))))
    }
}

/// A unique-key violation of `constraint` becomes 409 with `detail`; anything else is a 500.
pub fn conflict_on(e: sqlx::Error, constraint: &str, detail: impl FnOnce() -> String) -> ApiError {
    if is_unique_violation(&e, constraint) {
        ApiError::Conflict(detail())
    } else {
        e.into()
    }
}

/// A foreign key that failed because a referenced record was deleted between validation and
/// the write: a 422 on `field` the client can retry; anything else is a 500.
pub fn vanished_reference(e: sqlx::Error, field: &str) -> ApiError {
    match &e {
        sqlx::Error::Database(d) if d.code().as_deref() == Some("23503") => {
            ApiError::validation(field, "a record it refers to was deleted meanwhile; retry")
        }
        _ => e.into(),
    }
}

/// 409 for a change only a `draft` journey or shipment allows.
pub fn not_draft(kind: &str, id: i64, status: &str, verb: &str) -> ApiError {
    ApiError::Conflict(format!("{kind} {id} is `{status}`; only a draft can be {verb}"))
}

pub fn not_found(kind: &str, id: i64) -> ApiError {
    ApiError::NotFound(format!("no {kind} with id {id}"))
}

/// `limit` and `cursor` of a list without filters.
#[derive(Debug, Deserialize, IntoParams)]
pub struct ListQuery {
    /// Page size, 1–200 (default 50).
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

impl ListQuery {
    pub fn page(&self) -> ApiResult<Page> {
        Page::parse(self.limit, self.cursor.as_deref())
    }
}
