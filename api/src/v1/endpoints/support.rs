//! `/portal/support/tickets`: open a ticket, list them.

use axum::{extract::State, Json};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::{
    auth::{scopes::Scope, Auth},
    db::{self, tickets::Ticket},
    domain::text,
    error::{ApiResult, ErrorBody},
    extract::{ApiJson, ApiQuery},
    pagination::Paged,
    state::AppState,
    v1::resource::{created, one_of, Created, ListQuery},
};

pub const PRIORITIES: &[&str] = &["low", "normal", "high", "urgent"];

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TicketIn {
    /// 1–200 characters.
    subject: String,
    /// 1–10000 characters.
    body: String,
    /// `low`, `normal`, `high` or `urgent`.
    priority: String,
}

/// Open a support ticket (status `open`). Scope `account:write`.
#[utoipa::path(post, path = "/portal/support/tickets", tag = "support", request_body = TicketIn,
    responses((status = 201, body = Ticket), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn create(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiJson(input): ApiJson<TicketIn>,
) -> ApiResult<Created<Ticket>> {
    p.require(Scope::AccountWrite)?;
    let subject = text("subject", &input.subject, 200)?;
    let body = input.body.trim();
    if body.is_empty() || body.chars().count() > 10_000 {
        return Err(crate::error::ApiError::validation("body", "must be 1–10000 characters"));
    }
    let priority = one_of("priority", &input.priority, PRIORITIES)?;
    Ok(created(db::tickets::insert(&st.db, p.org_id, p.user_id, &subject, body, &priority).await?))
}

/// The organization's tickets, newest first. Scope `account:read`.
#[utoipa::path(get, path = "/portal/support/tickets", tag = "support", params(ListQuery),
    responses((status = 200, body = Paged<Ticket>), (status = 422, body = ErrorBody)),
    security(("bearer" = []), ("session" = [])))]
pub async fn list(
    State(st): State<AppState>,
    Auth(p): Auth,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<Ticket>>> {
    p.require(Scope::AccountRead)?;
    let page = q.page()?;
    Ok(Json(Paged::from_rows(db::tickets::list(&st.db, p.org_id, &page).await?, &page)))
}
