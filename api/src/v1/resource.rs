//! Pieces every resource endpoint shares: partial updates, list parameters, deleting a draft,
//! and the status a failure gets.
//!
//! Which status, by whose fault:
//! - 422: the request itself breaks a rule — a field's own rule (what its schema states) or, on
//!   create, a rule across the body's fields (arrival before departure).
//! - 404: a record the request names does not exist for the organization — in the path, or a
//!   reference in the body (`vehicle_id`, `personnel_ids[2]`).
//! - 409: the request is valid but the record's state refuses it — not a draft any more, a
//!   duplicate, a limit reached, or a partial update whose fields are fine on their own but
//!   leave the merged record breaking a rule across fields.

use axum::{http::StatusCode, Json};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::Value;
use sqlx::PgPool;
use tns_core::ids::{OrgId, Target};
use utoipa::IntoParams;

use crate::{
    auth::Principal,
    error::{is_unique_violation, ApiError, ApiResult, Code},
    extract::{parse_value, REQUIRED},
};
use tns_core::domain::{
    fields::{Cursor, Limit},
    kinds::{RecordStatus, TargetType},
};
use tns_store::{pagination::Page, records};

/// A `201 Created` answer with the whole record.
pub type Created<T> = (StatusCode, Json<T>);

pub fn created<T>(record: T) -> Created<T> {
    (StatusCode::CREATED, Json(record))
}

/// `PUT` with any subset of fields (a JSON merge patch, RFC 7396, on the stored record's input
/// view), parsed as a create would be. A field the patch sends that breaks its own rule — an
/// unknown one, or `null` for a required one — is a 422 of the patch; a field the merged record
/// lacks because the stored record never had it (part of an object it does not hold) is a 409.
pub fn patched<I: Serialize + DeserializeOwned>(current: &I, patch: &Value) -> ApiResult<I> {
    if !patch.is_object() {
        return Err(ApiError::validation("body", "must be a JSON object"));
    }
    let mut merged = serde_json::to_value(current).map_err(anyhow::Error::from)?;
    overlay(&mut merged, patch);
    parse_value(merged).map_err(|e| match e {
        ApiError::Validation { field, reason } if reason == REQUIRED => ApiError::Conflict(
            Code::MergedRecordInvalid,
            format!("{field}: is required, and the record has no value for it; send the whole object it belongs to"),
        ),
        other => other,
    })
}

/// RFC 7396 with `null` kept rather than removed: every optional field of an input reads `null`
/// as absent, so the outcome is the RFC's, while the parser still sees which fields the patch
/// named (an unknown one, or `null` for a required one, is refused naming it).
fn overlay(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                match t.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => overlay(existing, v),
                    _ => {
                        t.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// A rule across fields broken by the merged record of a partial update: the patch is valid on
/// its own, so this is the record's state refusing it (409), not a bad request.
pub fn merged_conflict(e: impl Into<ApiError>) -> ApiError {
    match e.into() {
        ApiError::Validation { field, reason } => {
            let detail = format!("{field}: {reason} (once this change is applied to the stored record)");
            ApiError::Conflict(Code::MergedRecordInvalid, detail)
        }
        other => other,
    }
}

/// A unique-key violation of `constraint` becomes 409 with `detail`; anything else is a 500.
pub fn conflict_on(e: sqlx::Error, constraint: &str, detail: impl FnOnce() -> String) -> ApiError {
    if is_unique_violation(&e, constraint) {
        ApiError::Conflict(Code::Duplicate, detail())
    } else {
        e.into()
    }
}

/// A record named in the body that the organization does not have (or no longer has active).
pub fn missing_reference(field: &str, kind: &str, id: impl std::fmt::Display) -> ApiError {
    ApiError::NotFound(format!("{field}: no {kind} with id {id}"))
}

/// A foreign key that failed because a referenced record was deleted between the check and the
/// write: the record is gone, so a 404 naming the field the client can retry after fixing.
pub fn vanished_reference(e: sqlx::Error, field: &str) -> ApiError {
    match &e {
        sqlx::Error::Database(d) if d.code().as_deref() == Some("23503") => {
            ApiError::NotFound(format!("{field}: a record it refers to was deleted meanwhile"))
        }
        _ => e.into(),
    }
}

/// 409 for a change only a `draft` journey or shipment allows.
pub fn not_draft(kind: &str, id: impl std::fmt::Display, status: impl std::fmt::Display, verb: &str) -> ApiError {
    ApiError::Conflict(Code::NotDraft, format!("{kind} {id} is `{status}`; only a draft can be {verb}"))
}

/// 409 for a change of a journey or shipment that is not editable now (see
/// `RecordStatus::is_editable`).
pub fn not_editable(kind: &str, id: impl std::fmt::Display, status: RecordStatus) -> ApiError {
    match status {
        RecordStatus::Cancelled => {
            ApiError::Conflict(Code::Cancelled, format!("{kind} {id} is cancelled; it takes no more changes"))
        }
        _ => ApiError::Conflict(
            Code::PendingSubmission,
            format!("{kind} {id} has a pending submission; change it once that has finished"),
        ),
    }
}

/// 409 for a journey or shipment whose personal data was erased past its retention period: it
/// stays as history, and what a change or a submission of its people would send is the erased
/// form.
pub async fn refuse_erased(db: impl sqlx::PgExecutor<'_>, record: Target, org: OrgId) -> ApiResult<()> {
    if records::erased(db, record, org).await? {
        let (target, id) = (record.kind(), record.id());
        return Err(ApiError::Conflict(
            Code::PersonalDataErased,
            format!(
                "{} {id} ended longer ago than the personal data retention period, and its people's data was \
                 erased; it takes no more changes of its people nor submissions",
                noun(target)
            ),
        ));
    }
    Ok(())
}

pub fn not_found(kind: &str, id: impl std::fmt::Display) -> ApiError {
    ApiError::not_found(kind, id)
}

/// How error messages name a journey or a shipment.
fn noun(target: TargetType) -> &'static str {
    match target {
        TargetType::Journey => "journey",
        TargetType::Cargo => "cargo shipment",
    }
}

/// Delete a journey or shipment while it is a draft: 404 when the organization has none, 409
/// naming its status once it has been submitted.
pub async fn delete_draft(db: &PgPool, record: Target, p: &Principal) -> ApiResult<()> {
    let (org, target, id) = (p.org_id, record.kind(), record.id());
    if records::delete_draft(db, record, org, &p.actor()).await? {
        return Ok(());
    }
    match records::status(db, record, org).await? {
        Some(status) => Err(not_draft(noun(target), id, status, "deleted")),
        None => Err(not_found(noun(target), id)),
    }
}

/// `limit` and `cursor` of a list without filters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Page size, 1–200 (default 50).
    pub limit: Option<Limit>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<Cursor>,
}

impl ListQuery {
    pub fn page(&self) -> Page {
        Page::new(self.limit, self.cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct In {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ctx: Option<Ctx>,
    }
    #[derive(Debug, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Ctx {
        a: i64,
        b: i64,
    }

    #[test]
    fn patch_outcomes() {
        let current = In { name: "x".into(), ctx: None };
        assert_eq!(patched(&current, &serde_json::json!({"name": "y"})).unwrap().name, "y");
        // Nulling a required field, or naming an unknown one even as null: the patch is wrong.
        assert!(matches!(
            patched(&current, &serde_json::json!({"name": null})),
            Err(ApiError::Validation { field, .. }) if field == "name"
        ));
        assert!(matches!(
            patched(&current, &serde_json::json!({"": null})),
            Err(ApiError::Validation { field, .. }) if field.is_empty()
        ));
        let with_ctx = patched(&current, &serde_json::json!({"ctx": {"a": 1, "b": 2}})).unwrap();
        assert!(patched(&with_ctx, &serde_json::json!({"ctx": null})).unwrap().ctx.is_none(), "null removes");
        assert_eq!(patched(&with_ctx, &serde_json::json!({"ctx": {"b": 5}})).unwrap().ctx.unwrap().a, 1, "merges");
        // Part of an object the record does not hold: the state refuses it.
        assert!(matches!(
            patched(&current, &serde_json::json!({"ctx": {"a": 1}})),
            Err(ApiError::Conflict(Code::MergedRecordInvalid, _))
        ));
        // A bad value in the patch is the patch's fault.
        assert!(matches!(patched(&current, &serde_json::json!({"name": 5})), Err(ApiError::Validation { .. })));
        assert!(matches!(patched(&current, &serde_json::json!([1])), Err(ApiError::Validation { .. })));
    }
}
