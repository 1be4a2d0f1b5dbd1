//! `/audit`: the audit log, newest first.

use axum::{extract::State, Json};
use serde::Serialize;
use tns_core::scopes::operator::need::Read;
use utoipa::ToSchema;

use super::{auth::Operator, error::AdminResult, extract::Params, AdminState};
use crate::answers::LoggedOut;

#[derive(Serialize, ToSchema)]
pub struct AuditLog {
    data: Vec<LoggedOut>,
}

/// The audit log, newest first: who (`operator:<name>` or `jobs`), what, on which
/// organization, the state before and after, and why.
#[utoipa::path(get, path = "/audit", operation_id = "list_audit_log", tag = "audit",
    params(
        ("org" = Option<i64>, Query, description = "Only this organization's entries."),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 1000, description = "At most this many (default 100)."),
    ),
    responses((status = 200, body = AuditLog)),
    security(("operator_token" = ["read"])))]
pub async fn list(State(st): State<AdminState>, _: Operator<Read>, mut q: Params) -> AdminResult<Json<AuditLog>> {
    let org = q.take("org", |v| v.parse::<i64>().map_err(|_| "must be an organization id".to_string()))?;
    let limit = q.take("limit", crate::parse_limit)?.unwrap_or(crate::DEFAULT_LIMIT);
    q.done()?;
    let entries = tns_store::audit::list(&st.db, org, limit).await?;
    Ok(Json(AuditLog { data: entries.into_iter().map(LoggedOut::from).collect() }))
}
