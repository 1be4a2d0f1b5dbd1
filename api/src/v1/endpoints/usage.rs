//! `GET /portal/usage`: calls this month (or a past one) by route template.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::{auth::Caller, error::ApiResult, extract::ApiQuery, quota::Month, state::AppState};
use tns_core::{domain::fields::MonthField, scopes::need::AccountRead};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsageQuery {
    /// The month (UTC); the current one when absent.
    month: Option<MonthField>,
}

#[derive(Serialize, ToSchema)]
pub struct EndpointUsageOut {
    /// Method and route template, e.g. `GET /portal/journeys/{id}/passengers`.
    endpoint: String,
    total_calls: i64,
    /// Calls answered with a status of 400 or more.
    error_calls: i64,
}

#[derive(Serialize, ToSchema)]
pub struct UsageOut {
    #[schema(value_type = MonthField)]
    month: String,
    monthly_total: i64,
    /// The current plan's quota; -1 means unlimited.
    monthly_quota: i64,
    by_endpoint: Vec<EndpointUsageOut>,
}

/// Usage of the organization. Scope `account:read`; never refused for quota.
#[utoipa::path(get, path = "/portal/usage", operation_id = "get_usage", tag = "account", params(UsageQuery),
    responses((status = 200, body = UsageOut)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn usage(
    State(st): State<AppState>,
    p: Caller<AccountRead>,
    ApiQuery(q): ApiQuery<UsageQuery>,
) -> ApiResult<Json<UsageOut>> {
    let month = q.month.map_or_else(Month::now, |m| Month { year: m.year, month: m.month });
    let rows = st.quota.usage(p.org_id, month).await?;
    let limit = st.quota.load_limit(p.org_id).await?;
    Ok(Json(UsageOut {
        month: month.to_string(),
        monthly_total: rows.iter().map(|r| r.total_calls).sum(),
        monthly_quota: limit.quota.unwrap_or(-1),
        by_endpoint: rows
            .into_iter()
            .map(|r| EndpointUsageOut { endpoint: r.endpoint, total_calls: r.total_calls, error_calls: r.error_calls })
            .collect(),
    }))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(usage))
}
