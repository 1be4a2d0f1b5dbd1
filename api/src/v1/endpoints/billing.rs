//! `/portal/billing/*`: plans (public), the current subscription, plan change.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    auth::{scopes::Scope, Auth},
    db::{
        self,
        plans::{Plan, Subscription},
    },
    error::{ApiError, ApiResult, ErrorBody},
    extract::ApiJson,
    state::AppState,
    v1::Ok as OkBody,
};

#[derive(Serialize, ToSchema)]
pub struct PlanList {
    data: Vec<Plan>,
}

/// Every plan. Public: no credentials needed.
#[utoipa::path(get, path = "/portal/billing/plans", tag = "billing", responses((status = 200, body = PlanList)), security(()))]
pub async fn plans(State(st): State<AppState>) -> ApiResult<Json<PlanList>> {
    Ok(Json(PlanList { data: db::plans::list(&st.db).await? }))
}

/// The organization's current plan. Scope `account:read`.
#[utoipa::path(get, path = "/portal/billing/subscription", tag = "billing",
    responses((status = 200, body = Subscription), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn subscription(State(st): State<AppState>, Auth(p): Auth) -> ApiResult<Json<Subscription>> {
    p.require(Scope::AccountRead)?;
    db::plans::subscription(&st.db, p.org_id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::NotFound("the organization has no subscription".into()))
}

#[derive(Deserialize, ToSchema)]
pub struct ChangeIn {
    plan_code: String,
}

/// Switch plan. The new quota applies at once on every API process. Scope `account:write`.
#[utoipa::path(post, path = "/portal/billing/subscription/change", tag = "billing", request_body = ChangeIn,
    responses((status = 200, body = OkBody), (status = 422, description = "unknown plan", body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn change(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiJson(input): ApiJson<ChangeIn>,
) -> ApiResult<Json<OkBody>> {
    p.require(Scope::AccountWrite)?;
    let code = input.plan_code.trim();
    if code.len() > 64 || !db::plans::exists(&st.db, code).await? {
        return Err(ApiError::validation("plan_code", format!("unknown plan `{code}`; see GET /portal/billing/plans")));
    }
    db::plans::change(&st.db, p.org_id, code).await?;
    st.quota.publish_limit(p.org_id).await?;
    st.profiles.remove_where(|(org, _), _| *org == p.org_id);
    tracing::info!(org = p.org_id, plan = code, "plan changed");
    Ok(Json(OkBody::default()))
}
