//! `/portal/billing/*`: plans (public), the current subscription, plan change, invoices.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    auth::Caller,
    error::{ApiError, ApiResult, ErrorBody},
    extract::{ApiJson, ApiQuery},
    state::AppState,
    v1::{resource::ListQuery, Ok as OkBody},
};
use tns_core::{
    domain::fields::Opaque64,
    scopes::need::{AccountRead, AccountWrite},
};
use tns_store::{
    self as db,
    invoices::Invoice,
    pagination::Paged,
    plans::{Plan, Subscription},
};

#[derive(Serialize, ToSchema)]
pub struct PlanList {
    data: Vec<Plan>,
}

/// Every plan. Public: no credentials needed.
#[utoipa::path(get, path = "/portal/billing/plans", operation_id = "list_plans", tag = "billing", responses((status = 200, body = PlanList)), security(()))]
pub async fn plans(State(st): State<AppState>) -> ApiResult<Json<PlanList>> {
    Ok(Json(PlanList { data: db::plans::list(&st.db).await? }))
}

/// The organization's current plan. Scope `account:read`.
#[utoipa::path(get, path = "/portal/billing/subscription", operation_id = "get_subscription", tag = "billing",
    responses((status = 200, body = Subscription)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn subscription(State(st): State<AppState>, p: Caller<AccountRead>) -> ApiResult<Json<Subscription>> {
    db::plans::subscription(&st.db, p.org_id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::NotFound("the organization has no subscription".into()))
}

#[derive(Deserialize, ToSchema)]
pub struct ChangeIn {
    /// A plan's `code` from `GET /portal/billing/plans`.
    plan_code: Opaque64,
}

/// Switch plan. The new quota applies at once on every API process. Scope `account:write`.
#[utoipa::path(post, path = "/portal/billing/subscription/change", operation_id = "change_plan", tag = "billing", request_body = ChangeIn,
    responses((status = 200, body = OkBody), (status = 404, description = "no plan with that code", body = ErrorBody)),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn change(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiJson(input): ApiJson<ChangeIn>,
) -> ApiResult<Json<OkBody>> {
    let code = input.plan_code.as_str().trim();
    if !db::plans::exists(&st.db, code).await? {
        return Err(ApiError::NotFound(format!("plan_code: no plan `{code}`; see GET /portal/billing/plans")));
    }
    db::plans::change(&st.db, p.org_id, code).await?;
    st.quota.publish_limit(p.org_id).await?;
    st.profiles.remove_where(|(org, _), _| *org == p.org_id);
    tracing::info!(org = p.org_id, plan = code, "plan changed");
    Ok(Json(OkBody::default()))
}

/// The organization's invoices, newest first: one per billing period once it is issued.
/// Scope `account:read`; never refused for quota.
#[utoipa::path(get, path = "/portal/billing/invoices", operation_id = "list_invoices", tag = "billing", params(ListQuery),
    responses((status = 200, body = Paged<Invoice>)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn invoices(
    State(st): State<AppState>,
    p: Caller<AccountRead>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Invoice>>> {
    let page = q.page();
    Ok(Json(Paged::from_rows(db::invoices::list(&st.db, p.org_id, &page).await?, &page)))
}
