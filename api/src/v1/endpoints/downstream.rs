//! `/portal/downstream`: which downstream system the organization's submissions go to.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    auth::{scopes::Scope, Auth},
    db,
    domain::kinds::AdapterName,
    error::ApiResult,
    extract::ApiJson,
    state::AppState,
    submit::DEFAULT_ADAPTER,
};

#[derive(Debug, Serialize, ToSchema)]
pub struct Downstream {
    /// The adapter new submissions go to (`sandbox` until changed).
    pub adapter: String,
    /// The adapters an organization may choose.
    pub available: &'static [AdapterName],
    /// When the setting was last changed; null while it is the default.
    pub updated_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DownstreamIn {
    adapter: AdapterName,
}

fn answer(setting: Option<(String, chrono::DateTime<chrono::Utc>)>) -> Json<Downstream> {
    let (adapter, updated_at) = match setting {
        Some((a, at)) => (a, Some(at)),
        None => (DEFAULT_ADAPTER.to_string(), None),
    };
    Json(Downstream { adapter, available: AdapterName::ALL, updated_at })
}

/// The organization's downstream setting. Scope `account:read`.
#[utoipa::path(get, path = "/portal/downstream", operation_id = "get_downstream", tag = "submissions",
    responses((status = 200, body = Downstream)),
    security(("bearer" = []), ("session" = [])))]
pub async fn get(State(st): State<AppState>, Auth(p): Auth) -> ApiResult<Json<Downstream>> {
    p.require(Scope::AccountRead)?;
    Ok(answer(db::submissions::downstream(&st.db, p.org_id).await?))
}

/// Choose the downstream for new submissions (pending ones keep theirs; amendments of a
/// delivered journey go where the journey went). Scope `account:write`.
#[utoipa::path(put, path = "/portal/downstream", operation_id = "set_downstream", tag = "submissions", request_body = DownstreamIn,
    responses((status = 200, body = Downstream)),
    security(("bearer" = []), ("session" = [])))]
pub async fn put(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiJson(input): ApiJson<DownstreamIn>,
) -> ApiResult<Json<Downstream>> {
    p.require(Scope::AccountWrite)?;
    Ok(answer(Some(db::submissions::set_downstream(&st.db, p.org_id, input.adapter.as_str()).await?)))
}
