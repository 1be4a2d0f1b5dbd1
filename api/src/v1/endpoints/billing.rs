//! `/portal/billing/*`: plans (public), the current subscription, plan change, invoices.

use axum::{extract::State, response::Response, Json};
use serde::{Deserialize, Serialize};
use tns_core::ids::OrgId;
use utoipa::{IntoParams, ToSchema};

use crate::{
    auth::{Caller, Principal},
    error::{ApiError, ApiResult, ErrorBody},
    extract::{ApiJson, ApiPath, ApiQuery},
    pdf::{self, Line},
    state::AppState,
    v1::{
        answers::{InvoiceDetailOut, PlanOut, SubscriptionOut, UpcomingInvoiceOut},
        endpoints::reports::{pdf_response, Binary},
        resource::ListQuery,
        Ok as OkBody,
    },
};
use tns_core::{
    domain::{billing::Price, fields::Opaque64},
    ids::InvoiceId,
    scopes::need::{AccountRead, AccountWrite},
};
use tns_http::wire::{each, InvoiceOut, Paged};
use tns_store::{self as db, billing::invoices::InvoiceDetail, billing::plans::Subscription};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Serialize, ToSchema)]
pub struct PlanList {
    data: Vec<PlanOut>,
}

/// Every plan. Public: no credentials needed.
#[utoipa::path(get, path = "/portal/billing/plans", operation_id = "list_plans", tag = "billing", responses((status = 200, body = PlanList)), security(()))]
pub async fn plans(State(st): State<AppState>) -> ApiResult<Json<PlanList>> {
    Ok(Json(PlanList { data: each(db::billing::plans::list(&st.db).await?) }))
}

/// The organization's current plan. Scope `account:read`.
#[utoipa::path(get, path = "/portal/billing/subscription", operation_id = "get_subscription", tag = "billing",
    responses((status = 200, body = SubscriptionOut)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn subscription(State(st): State<AppState>, p: Caller<AccountRead>) -> ApiResult<Json<SubscriptionOut>> {
    Ok(Json(current_plan(&st, p.org_id).await?.into()))
}

/// `org`'s current plan (what `GET /portal/billing/subscription` answers).
pub async fn current_plan(st: &AppState, org: OrgId) -> ApiResult<Subscription> {
    db::billing::plans::subscription(&st.db, org)
        .await?
        .ok_or_else(|| ApiError::NotFound("the organization has no subscription".into()))
}

#[derive(Deserialize, ToSchema)]
pub struct ChangeIn {
    /// A plan's `code` from `GET /portal/billing/plans`.
    pub plan_code: Opaque64,
}

/// Switch plan. The new quota applies at once on every API process, and a trial ends. Billing
/// follows: a day is billed at the dearest plan held in it, so a dearer plan is billed from
/// today and a cheaper one from tomorrow; the unused days the old plan was charged for are
/// credited, the new plan's period is charged in advance (see `GET
/// /portal/billing/invoices/upcoming?plan_code=` for what a change will cost). Scope
/// `account:write`.
#[utoipa::path(post, path = "/portal/billing/subscription/change", operation_id = "change_plan", tag = "billing", request_body = ChangeIn,
    responses((status = 200, body = OkBody), (status = 404, description = "no plan with that code", body = ErrorBody)),
    security(("bearer" = ["account:write"]), ("session" = ["account:write"])))]
pub async fn change(
    State(st): State<AppState>,
    p: Caller<AccountWrite>,
    ApiJson(input): ApiJson<ChangeIn>,
) -> ApiResult<Json<OkBody>> {
    change_plan(&st, &p, input).await?;
    Ok(Json(OkBody::default()))
}

/// Switch `p`'s organization to another plan, audited as `p` (what `POST
/// /portal/billing/subscription/change` does; the portal's page calls it too).
pub async fn change_plan(st: &AppState, p: &Principal, input: ChangeIn) -> ApiResult<()> {
    let code = plan(st, input.plan_code.as_str()).await?.code;
    db::billing::standing::change_plan(&st.db, &p.actor(), p.org_id, &code, None).await?;
    st.quota.publish_limit(p.org_id).await?;
    st.profiles.remove_where(|(org, _), _| *org == p.org_id);
    tracing::info!(org = p.org_id.get(), plan = code, "plan changed");
    Ok(())
}

/// The plan `code` names (trimmed), or a 404 naming `plan_code`.
async fn plan(st: &AppState, code: &str) -> ApiResult<Price> {
    let code = code.trim();
    db::billing::plans::price(&st.db, code)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("plan_code: no plan `{code}`; see GET /portal/billing/plans")))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UpcomingQuery {
    /// Preview a change to this plan (a `code` from `GET /portal/billing/plans`): the invoice
    /// changing now would issue.
    pub plan_code: Option<Opaque64>,
}

/// The next invoice as it would be issued, on the next day anything is due: today when
/// something is (the jobs issue it within minutes), else the next period's first day (its fee
/// in advance, the overage counted so far, credit used). With `plan_code`, as if that plan were
/// chosen now: the unused days of the current plan credited and the new plan charged, today
/// for a dearer plan, tomorrow for a cheaper one. Lines, KDV and total as an issued invoice has
/// them. Scope `account:read`; never refused for quota.
#[utoipa::path(get, path = "/portal/billing/invoices/upcoming", operation_id = "get_upcoming_invoice", tag = "billing", params(UpcomingQuery),
    responses((status = 200, body = UpcomingInvoiceOut),
        (status = 404, description = "no plan with that `plan_code`, or nothing would be invoiced (a trial, a free plan)", body = ErrorBody)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn upcoming(
    State(st): State<AppState>,
    p: Caller<AccountRead>,
    ApiQuery(q): ApiQuery<UpcomingQuery>,
) -> ApiResult<Json<UpcomingInvoiceOut>> {
    Ok(Json(upcoming_invoice(&st, p.org_id, &q).await?.into()))
}

/// The next invoice of `org`, or with `plan_code` the one a change to that plan would issue
/// (what `GET /portal/billing/invoices/upcoming` answers; the portal's page shows it too).
pub async fn upcoming_invoice(
    st: &AppState,
    org: OrgId,
    q: &UpcomingQuery,
) -> ApiResult<db::billing::invoices::UpcomingInvoice> {
    let change = match &q.plan_code {
        Some(code) => Some(plan(st, code.as_str()).await?),
        None => None,
    };
    db::billing::invoices::upcoming(&st.db, org, change.as_ref(), st.cfg.invoices.tax_rate).await?.ok_or_else(|| {
        ApiError::NotFound(
            "nothing would be invoiced: the organization is not billed (a trial, or a free plan); preview a plan with `plan_code`"
                .into(),
        )
    })
}

/// The organization's invoices, newest first: each period's fee in advance on its first day
/// (monthly plans per calendar month, yearly plans per year from the plan's first day), a plan
/// change's credit and charge at the change, overage once its month is over. Scope
/// `account:read`; never refused for quota.
#[utoipa::path(get, path = "/portal/billing/invoices", operation_id = "list_invoices", tag = "billing", params(ListQuery),
    responses((status = 200, body = Paged<InvoiceOut>)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn invoices(
    State(st): State<AppState>,
    p: Caller<AccountRead>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Paged<InvoiceOut>>> {
    let page = q.page();
    Ok(Json(Paged::from_rows(db::billing::invoices::list(&st.db, p.org_id, &page).await?, &page).map(InvoiceOut::from)))
}

/// One invoice with its lines: the plan's days charged, unused days credited, calls beyond a
/// soft quota, credit moved, and KDV. Scope `account:read`; never refused for quota.
#[utoipa::path(get, path = "/portal/billing/invoices/{id}", operation_id = "get_invoice", tag = "billing", params(("id" = i64, Path)),
    responses((status = 200, body = InvoiceDetailOut), (status = 404, body = ErrorBody)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn invoice(
    State(st): State<AppState>,
    p: Caller<AccountRead>,
    ApiPath(id): ApiPath<InvoiceId>,
) -> ApiResult<Json<InvoiceDetailOut>> {
    Ok(Json(find(&st, p.org_id, id).await?.into()))
}

/// The invoice as a PDF document. Scope `account:read`; never refused for quota.
#[utoipa::path(get, path = "/portal/billing/invoices/{id}/pdf", operation_id = "get_invoice_pdf", tag = "billing", params(("id" = i64, Path)),
    responses((status = 200, content_type = "application/pdf", body = Binary), (status = 404, body = ErrorBody)),
    security(("bearer" = ["account:read"]), ("session" = ["account:read"])))]
pub async fn invoice_pdf(
    State(st): State<AppState>,
    p: Caller<AccountRead>,
    ApiPath(id): ApiPath<InvoiceId>,
) -> ApiResult<Response> {
    invoice_document(&st, p.org_id, id).await
}

/// Invoice `id` of `org` as a PDF response (what `GET /portal/billing/invoices/{id}/pdf`
/// answers; the portal's link serves it too).
pub async fn invoice_document(st: &AppState, org: OrgId, id: InvoiceId) -> ApiResult<Response> {
    let detail = find(st, org, id).await?;
    Ok(pdf_response(render(&detail), &format!("tns-invoice-{id}.pdf")))
}

async fn find(st: &AppState, org: OrgId, id: InvoiceId) -> ApiResult<InvoiceDetail> {
    db::billing::invoices::get(&st.db, org, id).await?.ok_or_else(|| ApiError::not_found("invoice", id))
}

/// The invoice laid out as a document.
fn render(d: &InvoiceDetail) -> Vec<u8> {
    let i = &d.invoice;
    let mut lines = vec![
        Line::heading(format!("TNS invoice {}", i.id)),
        Line::new("Transport Notification Service"),
        Line::new(""),
        Line::new(format!("Billed to: {} (tax number {})", i.billed_name, i.billed_tax_number)),
        Line::new(format!("Period: {} to {}", i.period_start, i.period_end)),
        Line::new(format!("Issued: {}    Due: {}    Status: {}", i.created_at.date_naive(), i.due_on, i.status)),
        Line::new(""),
    ];
    for l in &d.lines {
        lines.push(Line::new(format!("{}    {} TRY", l.description, l.amount)));
    }
    lines.extend([
        Line::new(""),
        Line::new(format!("Subtotal: {} TRY", i.subtotal)),
        Line::new(format!("KDV {}%: {} TRY", i.tax_rate.0.normalize(), i.tax_amount)),
        Line::heading(format!("Total: {} TRY", i.total_amount)),
    ]);
    pdf::render(&format!("TNS invoice {}", i.id), &lines)
}

/// This module's routes, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(plans))
        .routes(routes!(subscription))
        .routes(routes!(change))
        .routes(routes!(invoices))
        .routes(routes!(upcoming))
        .routes(routes!(invoice))
        .routes(routes!(invoice_pdf))
}
