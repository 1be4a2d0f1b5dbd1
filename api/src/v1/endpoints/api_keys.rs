//! `/portal/api-keys`: list, create (shown once), revoke.

use axum::{extract::State, http::StatusCode, Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, Code, ErrorBody},
    extract::{ApiJson, ApiPath},
    idempotency::NoReplay,
    state::AppState,
    v1::{
        answers::{CreatedKeyOut, KeyOut},
        Ok as OkBody,
    },
};
use tns_core::{
    domain::fields::Text100,
    ids::KeyId,
    scopes::{
        need::{AccountRead, AccountWrite},
        Scope, Scopes,
    },
};
use tns_store::{
    self as db,
    api_keys::{CreatedKey, MAX_ACTIVE_KEYS},
};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Serialize, ToSchema)]
pub struct KeyList {
    data: Vec<KeyOut>,
}

/// Active API keys of the organization, newest first. Scope `account:read`.
#[utoipa::path(get, path = "/portal/api-keys", operation_id = "list_api_keys", tag = "account",
    responses((status = 200, body = KeyList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn list(State(st): State<AppState>, p: Caller<AccountRead>) -> ApiResult<Json<KeyList>> {
    let keys = db::api_keys::list(&st.db, p.org_id).await?;
    Ok(Json(KeyList { data: keys.into_iter().map(KeyOut::from).collect() }))
}

/// Scopes one key may list.
const MAX_SCOPES: usize = 32;

#[derive(Deserialize, ToSchema)]
pub struct CreateKeyIn {
    name: Text100,
    /// 1–32 entries; each must be held by the calling credential.
    #[schema(min_items = 1, max_items = 32)]
    scopes: Vec<Scope>,
}

/// Create an API key with a subset of the caller's scopes. Scope `account:write`.
#[utoipa::path(post, path = "/portal/api-keys", operation_id = "create_api_key", tag = "account", request_body = CreateKeyIn,
    responses((status = 201, body = CreatedKeyOut), (status = 403, body = ErrorBody, description = "A scope the calling credential does not hold"), (status = 409, body = ErrorBody, description = "The organization holds the most active keys it may")),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiJson(input): ApiJson<CreateKeyIn>,
) -> ApiResult<(StatusCode, Extension<NoReplay>, Json<CreatedKeyOut>)> {
    let key = create_key(&st, &p, input).await?;
    // The key is shown once: an Idempotency-Key repeat must not store or replay it.
    Ok((StatusCode::CREATED, Extension(NoReplay), Json(key.into())))
}

/// Create a key for `p`'s organization with a subset of `p`'s scopes (what `POST
/// /portal/api-keys` does; the portal's page calls it too).
pub async fn create_key(st: &AppState, p: &Principal, input: CreateKeyIn) -> ApiResult<CreatedKey> {
    if input.scopes.is_empty() || input.scopes.len() > MAX_SCOPES {
        return Err(ApiError::validation("scopes", format!("must name 1 to {MAX_SCOPES} scopes")));
    }
    let name = input.name.into_inner();
    let scopes = Scopes::of(&input.scopes);
    if !p.scopes.covers(scopes) {
        return Err(ApiError::Forbidden(
            Code::MissingScope,
            "a key can only be given scopes the calling credential holds".into(),
        ));
    }
    let mut tx = st.db.begin().await?;
    if db::api_keys::lock_and_count(&mut tx, p.org_id).await? >= MAX_ACTIVE_KEYS {
        return Err(ApiError::Conflict(
            Code::LimitReached,
            format!("an organization can hold at most {MAX_ACTIVE_KEYS} active keys; revoke one first"),
        ));
    }
    let key = db::api_keys::insert(&mut tx, p.org_id, p.user_id, &name, scopes).await?;
    tx.commit().await?;
    Ok(key)
}

/// Revoke a key: it and every token minted from it stop working on every API process
/// within seconds. Scope `account:write`.
#[utoipa::path(delete, path = "/portal/api-keys/{id}", operation_id = "revoke_api_key", tag = "account", params(("id" = i64, Path)),
    responses((status = 200, body = OkBody)),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn revoke(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiPath(id): ApiPath<KeyId>,
) -> ApiResult<Json<OkBody>> {
    revoke_key(&st, &p, id).await?;
    Ok(Json(OkBody::default()))
}

/// Revoke key `id` of `p`'s organization (what `DELETE /portal/api-keys/{id}` does).
pub async fn revoke_key(st: &AppState, p: &Principal, id: KeyId) -> ApiResult<()> {
    if !db::api_keys::revoke(&st.db, p.org_id, id).await? {
        return Err(ApiError::NotFound(format!("no API key with id {id}")));
    }
    st.keys.forget(id);
    tracing::info!(org = p.org_id.get(), key = id.get(), "api key revoked");
    Ok(())
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(revoke))
}
