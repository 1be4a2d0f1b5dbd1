//! `/portal/support/tickets`: open a ticket, list them.

use axum::{extract::State, Json};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::{
    auth::{Caller, Principal},
    error::ApiResult,
    extract::{ApiJson, ApiQuery},
    state::AppState,
    v1::{
        answers::TicketOut,
        resource::{created, Created, ListQuery},
    },
};
use tns_core::{
    domain::{
        fields::{Prose10000, Text200},
        kinds::Priority,
    },
    scopes::need::{AccountRead, AccountWrite},
};
use tns_http::wire::Paged;
use tns_store::{self as db, tickets::Ticket};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TicketIn {
    subject: Text200,
    /// Several lines allowed.
    body: Prose10000,
    priority: Priority,
}

/// Open a support ticket (status `open`). Scope `account:write`.
#[utoipa::path(post, path = "/portal/support/tickets", operation_id = "create_ticket", tag = "support", request_body = TicketIn,
    responses((status = 201, body = TicketOut)),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn create(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiJson(input): ApiJson<TicketIn>,
) -> ApiResult<Created<TicketOut>> {
    Ok(created(open_ticket(&st, &p, input).await?.into()))
}

/// Open a ticket for `p`'s organization (what `POST /portal/support/tickets` does; the
/// portal's page calls it too).
pub async fn open_ticket(st: &AppState, p: &Principal, input: TicketIn) -> ApiResult<Ticket> {
    let (subject, body) = (input.subject.into_inner(), input.body.into_inner());
    Ok(db::tickets::insert(&st.db, p.org_id, p.user_id, &subject, &body, input.priority).await?)
}

/// The organization's tickets, newest first. Scope `account:read`.
#[utoipa::path(get, path = "/portal/support/tickets", operation_id = "list_tickets", tag = "support", params(ListQuery),
    responses((status = 200, body = Paged<TicketOut>)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn list(
    State(st): State<AppState>,
    p: Caller<AccountRead>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<TicketOut>>> {
    let page = q.page();
    Ok(Json(Paged::from_rows(db::tickets::list(&st.db, p.org_id, &page).await?, &page).map(TicketOut::from)))
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create))
}
