//! `/portal/downstream/preflight`: the organization's pre-flight checks, what U-ETDS is asked
//! about a record before it is submitted and what a check that does not pass does (see
//! `tns_core::domain::preflight` and `crate::preflight`).

use axum::{extract::State, Json};
use serde::Serialize;
use tns_core::ids::OrgId;
use tns_core::{
    domain::{
        kinds::AuditAction,
        preflight::{CheckKind, PreflightIn, PreflightMode, DEFAULT_CHECKS},
    },
    scopes::need::{AccountRead, AccountWrite},
};
use tns_store::{
    self as db,
    audit::{self, Entry},
    preflight::Policy,
};
use utoipa::ToSchema;

use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, ErrorBody},
    extract::ApiJson,
    state::AppState,
};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Serialize, ToSchema)]
pub struct Preflight {
    /// `off` (the default: no checks), `warn` (a warning on the submission per check that did
    /// not pass) or `refuse` (the submit is a 422 while one does not pass).
    pub mode: PreflightMode,
    /// The checks made.
    pub checks: Vec<CheckKind>,
    /// When the policy was last changed; null while it is the default.
    pub updated_at: Option<chrono::DateTime<chrono::Utc>>,
}

fn answer(policy: Option<Policy>) -> Preflight {
    match policy {
        Some(p) => Preflight { mode: p.mode, checks: p.checks, updated_at: Some(p.updated_at) },
        None => Preflight { mode: PreflightMode::Off, checks: DEFAULT_CHECKS.to_vec(), updated_at: None },
    }
}

/// The organization's pre-flight checks. Scope `account:read`.
#[utoipa::path(get, path = "/portal/downstream/preflight", operation_id = "get_preflight", tag = "submissions",
    responses((status = 200, body = Preflight)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn get(State(st): State<AppState>, p: Caller<AccountRead>) -> ApiResult<Json<Preflight>> {
    Ok(Json(current(&st, p.org_id).await?))
}

/// The organization's policy, as `GET /portal/downstream/preflight` answers it.
pub async fn current(st: &AppState, org: OrgId) -> ApiResult<Preflight> {
    Ok(answer(db::preflight::policy(&st.db, org).await?))
}

/// Set the organization's pre-flight checks: before each submit, U-ETDS's own services are
/// asked about the record (answers kept for the day); a check that does not pass is a
/// `check_failed` warning on the submission (`warn`) or refuses the submit with a 422 naming
/// the field (`refuse`); one that cannot be made is a `check_not_made` warning either way.
/// Scope `account:write`.
#[utoipa::path(put, path = "/portal/downstream/preflight", operation_id = "set_preflight", tag = "submissions",
    request_body = PreflightIn,
    responses((status = 200, body = Preflight),
              (status = 422, body = ErrorBody, description = "A field breaks its rule")),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn put(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiJson(input): ApiJson<PreflightIn>,
) -> ApiResult<Json<Preflight>> {
    Ok(Json(set(&st, &p, input).await?))
}

/// Set `p`'s organization's policy, audited as the member or key that set it (what `PUT
/// /portal/downstream/preflight` does; the portal's page calls it too).
pub async fn set(st: &AppState, p: &Principal, input: PreflightIn) -> ApiResult<Preflight> {
    // The document's bound (one of each kind): a longer list is a client's mistake, not a
    // list to shorten quietly.
    if input.checks.as_ref().is_some_and(|c| c.len() > PreflightIn::MAX_CHOSEN) {
        return Err(ApiError::Validation {
            field: "checks".into(),
            reason: format!("names at most {} checks, each once", PreflightIn::MAX_CHOSEN),
        });
    }
    let before = db::preflight::policy(&st.db, p.org_id).await?;
    let mut tx = st.db.begin().await?;
    let now = db::preflight::set_policy(&mut tx, p.org_id, input.mode, &input.chosen()).await?;
    let shown = |x: &Preflight| serde_json::json!({"mode": x.mode, "checks": x.checks});
    let entry = Entry {
        actor: &p.actor(),
        action: AuditAction::SetPreflight,
        org: Some(p.org_id),
        before: shown(&answer(before)),
        after: shown(&answer(Some(now.clone()))),
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(answer(Some(now)))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get, put))
}
