//! `/portal/closure`: the owner closes the organization (KVKK erasure). For the grace period it
//! is read-only and unbilled and may be reopened; then the jobs role erases it, keeping only
//! what law and billing must (invoices, the audit log).

use axum::{extract::State, http::StatusCode, Json};
use serde::Deserialize;
use tns_core::ids::OrgId;
use utoipa::ToSchema;

use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, Code, ErrorBody},
    extract::ApiJson,
    state::AppState,
    v1::{answers::ClosureOut, endpoints::exports::owner},
};
use tns_core::{
    domain::fields::Text50,
    scopes::need::{AccountRead, AccountWrite},
};
use tns_store::{
    self as db,
    closure::{Changed, Closure},
};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseIn {
    /// The organization's tax number, typed again: closing is not a click to make by mistake.
    confirm: Text50,
}

/// The organization's closure: `status` is `closed` while it waits for erasure after
/// `erase_after`. The owner only; scope `account:read`.
#[utoipa::path(get, path = "/portal/closure", operation_id = "get_closure", tag = "account",
    responses((status = 200, body = ClosureOut), (status = 403, body = ErrorBody)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn get(State(st): State<AppState>, p: Caller<AccountRead>) -> ApiResult<Json<ClosureOut>> {
    owner(&st, &p).await?;
    Ok(Json(current(&st, p.org_id).await?.into()))
}

/// Close the organization: from now on it reads and exports its data, and billing and support
/// answer, but nothing is created, changed or submitted (queued submissions wait), and it is
/// billed for nothing more (the unused days of the period charged are credited). After
/// `TNS_ORGANIZATION_GRACE_DAYS` days (`erase_after`) and its last invoice, everything it holds is
/// erased except its invoices and the audit log; until then `DELETE /portal/closure` reopens it.
/// `202`; 409 when it is closed already; 422 unless `confirm` is its tax number. The owner only;
/// scope `account:write`.
#[utoipa::path(post, path = "/portal/closure", operation_id = "close_organization", tag = "account", request_body = CloseIn,
    responses((status = 202, body = ClosureOut), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn close(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiJson(input): ApiJson<CloseIn>,
) -> ApiResult<(StatusCode, Json<ClosureOut>)> {
    Ok((StatusCode::ACCEPTED, Json(close_for(&st, &p, input.confirm.as_str()).await?.into())))
}

/// Close `p`'s organization once `confirm` is its tax number (the API's route and the portal's
/// form).
pub async fn close_for(st: &AppState, p: &Principal, confirm: &str) -> ApiResult<Closure> {
    owner(st, p).await?;
    let tax_number = db::accounts::tax_number(&st.db, p.org_id).await?.ok_or_else(gone)?;
    if confirm.trim() != tax_number {
        return Err(ApiError::Validation {
            field: "confirm".into(),
            reason: "must be the organization's tax number".into(),
        });
    }
    let changed = db::closure::close(&st.db, &p.actor(), p.org_id, st.cfg.organization_grace_days).await?;
    match changed.ok_or_else(gone)? {
        Changed::Done(closure) => {
            published(st, p.org_id).await?;
            tracing::info!(org = p.org_id.get(), "organization closed by its owner");
            Ok(closure)
        }
        Changed::Unchanged(_) => {
            Err(ApiError::Conflict(Code::OrganizationClosed, "the organization is closed already".into()))
        }
    }
}

/// Reopen the organization within its grace period: it has the standing it had when it closed
/// (an active one is billed again from today). 409 unless it is closed. The owner only; scope
/// `account:write`.
#[utoipa::path(delete, path = "/portal/closure", operation_id = "reopen_organization", tag = "account",
    responses((status = 200, body = ClosureOut), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn reopen(State(st): State<AppState>, p: Caller<AccountWrite>) -> ApiResult<Json<ClosureOut>> {
    Ok(Json(reopen_for(&st, &p).await?.into()))
}

/// Reopen `p`'s organization (the API's route and the portal's button).
pub async fn reopen_for(st: &AppState, p: &Principal) -> ApiResult<Closure> {
    owner(st, p).await?;
    match db::closure::reopen(&st.db, &p.actor(), p.org_id).await?.ok_or_else(gone)? {
        Changed::Done(closure) => {
            published(st, p.org_id).await?;
            tracing::info!(org = p.org_id.get(), "organization reopened by its owner");
            Ok(closure)
        }
        Changed::Unchanged(_) => {
            Err(ApiError::Conflict(Code::OrganizationNotClosed, "the organization is not closed".into()))
        }
    }
}

/// `p`'s organization's closure.
pub async fn current(st: &AppState, org: OrgId) -> ApiResult<Closure> {
    db::closure::get(&st.db, org).await?.ok_or_else(gone)
}

/// Every API process applies the new standing at once; this one's cached profile goes too.
async fn published(st: &AppState, org: OrgId) -> ApiResult<()> {
    st.quota.publish_limit(org).await?;
    st.profiles.remove_where(|(o, _), _| *o == org);
    Ok(())
}

/// The caller's organization is gone (erased while its credentials were still cached).
fn gone() -> ApiError {
    ApiError::NotFound("no such organization".into())
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get, close, reopen))
}
