//! `GET /portal/me`: who is calling.

use axum::{extract::State, Json};

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    state::AppState,
    v1::answers::MeOut,
};
use tns_store as db;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The caller's user, organization and subscription. Needs no particular scope.
#[utoipa::path(get, path = "/portal/me", operation_id = "get_me", tag = "account",
    responses((status = 200, body = MeOut)), security(("bearer" = []), ("session" = [])))]
pub async fn me(State(st): State<AppState>, Auth(p): Auth) -> ApiResult<Json<MeOut>> {
    // Cached as briefly as API keys (TNS_AUTH_CACHE_TTL_MS): a change made through another
    // process shows here within that time; this process drops the entry at once.
    if let Some(hit) = st.profiles.get(&(p.org_id, p.user_id)) {
        return Ok(Json(hit.into()));
    }
    let out = db::accounts::profile(&st.db, p.org_id, p.user_id)
        .await?
        .ok_or_else(|| ApiError::Unauthorized("the account behind these credentials no longer exists".into()))?;
    st.profiles.insert((p.org_id, p.user_id), out.clone());
    Ok(Json(out.into()))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(me))
}
