//! `/organizations/{id}/invoices` and `/invoices/{id}/paid|void`: an organization's invoices,
//! and recording one as paid or voiding it.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use tns_core::{
    domain::{fields::Text500, kinds::InvoiceStatus},
    ids::InvoiceId,
    scopes::operator::need::{Read, Write},
};
use tns_http::wire::{each, InvoiceOut};
use tns_store::pagination::Page;
use utoipa::ToSchema;

use super::{
    auth::Operator,
    error::{AdminError, AdminResult, Code},
    extract::{ApiJson, ApiPath, Params},
    organizations::no_organization,
    AdminState,
};
use crate::ops::{self, InvoiceSettled, NotSettled};

#[derive(Serialize, ToSchema)]
pub struct InvoiceList {
    data: Vec<InvoiceOut>,
}

/// An organization's invoices, newest first (amounts exact, KDV included in `total_amount`).
#[utoipa::path(get, path = "/organizations/{id}/invoices", operation_id = "list_organization_invoices", tag = "invoices",
    params(
        ("id" = i64, Path, description = "The organization."),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 1000, description = "At most this many (default 100)."),
    ),
    responses((status = 200, body = InvoiceList)),
    security(("operator_token" = ["read"])))]
pub async fn list(
    State(st): State<AdminState>,
    _: Operator<Read>,
    ApiPath(org): ApiPath<i64>,
    mut q: Params,
) -> AdminResult<Json<InvoiceList>> {
    let limit = q.take("limit", crate::parse_limit)?.unwrap_or(crate::DEFAULT_LIMIT);
    q.done()?;
    let page = Page { limit, before: None };
    let found = crate::ops::organization(&st.db, org).await?.ok_or_else(|| no_organization(org))?;
    let mut rows = tns_store::billing::invoices::list(&st.db, found, &page).await?;
    rows.truncate(limit as usize);
    Ok(Json(InvoiceList { data: each(rows) }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettleIn {
    /// Why, e.g. the payment's reference (the audit log keeps it).
    reason: Text500,
}

/// Record an open invoice as paid. An organization suspended for overdue invoices is
/// reactivated, at once on every API process, when none is left.
#[utoipa::path(post, path = "/invoices/{id}/paid", operation_id = "mark_invoice_paid", tag = "invoices",
    params(("id" = i64, Path, description = "The invoice.")), request_body = SettleIn,
    responses((status = 200, body = InvoiceSettled), (status = 409, description = "The invoice is not open")),
    security(("operator_token" = ["write"])))]
pub async fn paid(
    State(st): State<AdminState>,
    op: Operator<Write>,
    ApiPath(id): ApiPath<InvoiceId>,
    ApiJson(input): ApiJson<SettleIn>,
) -> AdminResult<Json<InvoiceSettled>> {
    settle(&st, &op, id, InvoiceStatus::Paid, input).await
}

/// Void an open invoice (nothing is owed for it). An organization suspended for overdue
/// invoices is reactivated, at once on every API process, when none is left.
#[utoipa::path(post, path = "/invoices/{id}/void", operation_id = "void_invoice", tag = "invoices",
    params(("id" = i64, Path, description = "The invoice.")), request_body = SettleIn,
    responses((status = 200, body = InvoiceSettled), (status = 409, description = "The invoice is not open")),
    security(("operator_token" = ["write"])))]
pub async fn void(
    State(st): State<AdminState>,
    op: Operator<Write>,
    ApiPath(id): ApiPath<InvoiceId>,
    ApiJson(input): ApiJson<SettleIn>,
) -> AdminResult<Json<InvoiceSettled>> {
    settle(&st, &op, id, InvoiceStatus::Void, input).await
}

async fn settle(
    st: &AdminState,
    op: &Operator<Write>,
    id: InvoiceId,
    to: InvoiceStatus,
    input: SettleIn,
) -> AdminResult<Json<InvoiceSettled>> {
    match ops::settle_invoice(&st.db, &st.redis, &op.actor(), id, to, input.reason.as_str()).await? {
        Ok(settled) => Ok(Json(settled)),
        Err(NotSettled::NoSuchInvoice) => Err(AdminError::NotFound(format!("no invoice with id {id}"))),
        Err(e @ NotSettled::NotOpen(_)) => Err(AdminError::Conflict(Code::InvoiceNotOpen, e.to_string())),
    }
}
