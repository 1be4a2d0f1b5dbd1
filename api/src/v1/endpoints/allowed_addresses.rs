//! `/portal/downstream/allowed-addresses`: the caller addresses the downstream accepts the
//! organization's calls from. U-ETDS checks every call against the addresses each firm
//! registered (`ipTanimla`, `ipListele`, `ipSil`), so a firm using TNS must register the
//! platform's own: the operator lists them (`TNS_EGRESS_IPS`), this shows them beside what
//! U-ETDS holds, and adds or removes entries there with the organization's credentials.

use std::net::IpAddr;

use axum::{extract::State, http::StatusCode, Json};
use serde::{Deserialize, Serialize};
use tns_adapter::{AllowList, AllowListChange, AllowListRequest};
use tns_core::{
    domain::kinds::AuditAction,
    scopes::need::{AccountRead, AccountWrite},
};
use tns_store::audit::{self, Entry};
use utoipa::ToSchema;

use super::{downstream::current, reports::credentials};
use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, Code, ErrorBody},
    extract::{ApiJson, ApiPath},
    state::AppState,
};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Serialize, ToSchema)]
pub struct AllowedAddresses {
    /// The addresses TNS calls the downstream from (set by the platform's operator): each must
    /// be registered for the organization's calls to be accepted.
    pub platform_addresses: Vec<String>,
    /// What the downstream holds for the organization's credentials.
    pub data: Vec<AllowedAddressOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AllowedAddressOut {
    /// The downstream's id of the entry (what removing it takes).
    pub id: String,
    pub first: String,
    /// The end of a range; absent for one address.
    pub last: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AllowedAddressIn {
    /// An IPv4 or IPv6 address.
    #[schema(value_type = String, format = "ip")]
    pub first: IpAddr,
    /// With `first`, a range's end.
    #[schema(value_type = Option<String>, format = "ip")]
    pub last: Option<IpAddr>,
}

impl AllowedAddressIn {
    /// The change it asks for.
    pub(crate) fn change(self) -> AllowListChange {
        AllowListChange::Add { first: self.first.to_string(), last: self.last.map(|l| l.to_string()) }
    }
}

/// An entry id as the downstream gives them (digits), else `None`: no such entry.
pub(crate) fn entry_id(id: String) -> Option<String> {
    (!id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit())).then_some(id)
}

fn answer(st: &AppState, list: AllowList) -> AllowedAddresses {
    AllowedAddresses {
        platform_addresses: st.cfg.egress_addresses.clone(),
        data: list.entries.into_iter().map(|e| AllowedAddressOut { id: e.id, first: e.first, last: e.last }).collect(),
    }
}

/// The list after `change`, with the organization's own credentials; the change audited as
/// the member or key that made it.
pub(crate) async fn allowed(
    st: &AppState,
    p: &Principal,
    change: Option<AllowListChange>,
) -> ApiResult<AllowedAddresses> {
    let no_list = || {
        ApiError::Conflict(
            Code::NoDownstream,
            "the organization's downstream keeps no list of addresses, or it has no credentials for it: choose one \
             that does, with the firm's credentials, first (PUT /portal/downstream)"
                .into(),
        )
    };
    let adapter = current(st, p.org_id).await?.adapter.ok_or_else(no_list)?;
    let Some(credentials) = credentials(st, p.org_id, &adapter).await? else {
        return Err(no_list());
    };
    let result = st.downstreams.allow_list(&adapter, AllowListRequest { credentials, change: change.clone() }).await;
    // Audited when it was made, and when it may have been: the downstream could not be reached
    // or answered only part of it (the change made, the list after it lost). A refusal
    // changed nothing.
    let outcome = match &result {
        Ok(_) => Some("done"),
        Err(ApiError::Unavailable(_)) => Some("unknown"),
        Err(_) => None,
    };
    if let (Some(change), Some(outcome)) = (change, outcome) {
        let mut tx = st.db.begin().await?;
        let entry = Entry {
            actor: &p.actor(),
            action: AuditAction::ChangeAllowedAddresses,
            org: Some(p.org_id),
            before: serde_json::Value::Null,
            after: serde_json::json!({ "change": change, "outcome": outcome }),
            reason: None,
        };
        audit::record(&mut tx, entry).await?;
        tx.commit().await?;
    }
    let list = result?;
    Ok(answer(st, list))
}

/// The platform's addresses and those the downstream holds for the organization. Scope
/// `account:read`.
#[utoipa::path(get, path = "/portal/downstream/allowed-addresses", operation_id = "list_allowed_addresses",
    tag = "submissions",
    responses((status = 200, body = AllowedAddresses),
              (status = 409, body = ErrorBody, description = "The downstream keeps no such list (the sandbox), or refused the credentials"),
              (status = 503, body = ErrorBody, description = "The downstream could not be reached")),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn list(State(st): State<AppState>, p: Caller<AccountRead>) -> ApiResult<Json<AllowedAddresses>> {
    Ok(Json(allowed(&st, &p, None).await?))
}

/// Register an address (or a range) at the downstream (U-ETDS `ipTanimla`); answers the list.
/// Scope `account:write`.
#[utoipa::path(post, path = "/portal/downstream/allowed-addresses", operation_id = "add_allowed_address",
    tag = "submissions", request_body = AllowedAddressIn,
    responses((status = 201, body = AllowedAddresses),
              (status = 409, body = ErrorBody, description = "The downstream refused it (its message in `detail`), keeps no such list, or refused the credentials"),
              (status = 422, body = ErrorBody, description = "Not an IP address"),
              (status = 503, body = ErrorBody, description = "The downstream could not be reached")),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn add(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiJson(input): ApiJson<AllowedAddressIn>,
) -> ApiResult<(StatusCode, Json<AllowedAddresses>)> {
    Ok((StatusCode::CREATED, Json(allowed(&st, &p, Some(input.change())).await?)))
}

/// Remove an entry at the downstream (U-ETDS `ipSil`; it keeps at least one); answers the list.
/// Scope `account:write`.
#[utoipa::path(delete, path = "/portal/downstream/allowed-addresses/{id}", operation_id = "remove_allowed_address",
    tag = "submissions", params(("id" = String, Path, description = "The downstream's id of the entry")),
    responses((status = 200, body = AllowedAddresses),
              (status = 404, body = ErrorBody, description = "Not an entry id"),
              (status = 409, body = ErrorBody, description = "The downstream refused (the last entry, say; its message in `detail`)"),
              (status = 503, body = ErrorBody, description = "The downstream could not be reached")),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn remove(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<AllowedAddresses>> {
    let Some(id) = entry_id(id.clone()) else {
        return Err(ApiError::NotFound(format!("no allowed address {id:?}")));
    };
    Ok(Json(allowed(&st, &p, Some(AllowListChange::Remove { id })).await?))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, add)).routes(routes!(remove))
}
