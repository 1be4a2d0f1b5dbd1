//! Billing: the current plan with this month's usage against its quota, the plans, a change of
//! plan that first shows the invoice it would issue (the API's own preview) and happens only
//! once confirmed, and the invoices with their PDF documents.

use tns_core::{domain::kinds::BillingCycle, ids::InvoiceId};
use tns_store::{self as db, pagination::Page};

use super::prelude::*;
use crate::{
    quota::Month,
    v1::endpoints::billing::{self as api, ChangeIn, UpcomingQuery},
};

const PATH: &str = "/settings/billing";

fn period(lang: Lang, c: BillingCycle) -> &'static str {
    lang.t(match c {
        BillingCycle::Monthly => Msg::Monthly,
        BillingCycle::Yearly => Msg::Yearly,
    })
}

fn quota_text(lang: Lang, q: i64) -> String {
    if q < 0 {
        lang.t(Msg::Unlimited).to_string()
    } else {
        format::int(lang, q)
    }
}

/// `GET /settings/billing`.
pub(crate) async fn show(Viewing { st, m, query: q }: Viewing<AccountRead>) -> Result<Html<String>, PortalError> {
    let lang = m.lang;
    let org = m.org();
    let current = match api::current_plan(&st, org).await {
        Ok(s) => Some(s),
        Err(ApiError::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    let used: i64 = st.quota.usage(org, Month::now()).await?.iter().map(|r| r.total_calls).sum();
    let quota = st.quota.load_limit(org).await?.quota;
    let plans = db::billing::plans::list(&st.db).await?;
    let invoices = db::billing::invoices::list(&st.db, org, &Page { limit: 50, before: None }).await?;
    let may_change = m.principal().scopes.allows(Scope::AccountWrite);
    let body = html! {
        @if done_is(&q, "changed") { (flash(lang.t(Msg::PlanChanged), "ok")) }
        section.card aria-labelledby="plan-h" {
            h2 #plan-h { (lang.t(Msg::CurrentPlan)) }
            @match &current {
                Some(s) => dl.facts {
                    dt { (lang.t(Msg::Plan)) } dd #current-plan { (s.name) " (" code { (s.code) } ")" }
                    dt { (lang.t(Msg::Status)) } dd { (s.status) }
                    dt { (lang.t(Msg::Since)) } dd { (format::datetime(lang, s.started_at)) }
                    dt { (lang.t(Msg::Price)) } dd { (format::money(lang, s.price_try.0)) " / " (period(lang, s.billing_period)) }
                },
                None => p { (lang.t(Msg::NoPlan)) },
            }
            h3 { (lang.t(Msg::UsageThisMonth)) }
            p {
                strong { (format::int(lang, used)) } " "
                @match quota {
                    Some(q) => { (lang.t(Msg::CallsOf)) " " (format::int(lang, q)) }
                    None => { "(" (lang.t(Msg::Unlimited)) ")" }
                }
            }
        }
        h2 { (lang.t(Msg::Plans)) }
        div.table-wrap {
            table {
                thead { tr {
                    th scope="col" { (lang.t(Msg::Plan)) }
                    th scope="col" { (lang.t(Msg::Quota)) }
                    th scope="col" { (lang.t(Msg::Price)) }
                    th scope="col" { (lang.t(Msg::Period)) }
                    @if may_change { th scope="col" { (lang.t(Msg::Actions)) } }
                } }
                tbody {
                    @for p in &plans {
                        @let is_current = current.as_ref().is_some_and(|c| c.code == p.code);
                        tr {
                            td { (p.name) " (" code { (p.code) } ")" }
                            td { (quota_text(lang, p.monthly_quota)) }
                            td { (format::money(lang, p.price_try.0)) }
                            td { (period(lang, p.billing_period)) }
                            @if may_change {
                                td {
                                    @if !is_current {
                                        // A page view: what the change would cost, then the confirmation.
                                        form.inline method="get" action=(format!("{PATH}/change")) {
                                            input type="hidden" name="plan_code" value=(p.code);
                                            button.secondary type="submit" { (lang.t(Msg::Choose)) span.sr-only { " " (p.name) } }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        h2 { (lang.t(Msg::Invoices)) }
        @let headings = ["#", lang.t(Msg::Period), lang.t(Msg::Total), lang.t(Msg::Status), lang.t(Msg::Due), lang.t(Msg::Pdf)];
        (table(&headings, &invoices, lang.t(Msg::NothingYet), |i| html! {
            tr {
                td { (i.id) }
                td { (format::date(lang, i.period_start)) " – " (format::date(lang, i.period_end)) }
                td { (format::money(lang, i.total_amount.0)) }
                td { (i.status.as_str()) }
                td { (format::date(lang, i.due_on)) }
                td { a href=(format!("{PATH}/invoices/{}/pdf", i.id)) download { (lang.t(Msg::Pdf)) span.sr-only { " " (i.id) } } }
            }
        }))
    };
    Ok(Html(settings_page(lang, &m.signed_in, PATH, lang.t(Msg::Billing), body)))
}

#[derive(Deserialize)]
pub(crate) struct PlanForm {
    #[serde(default)]
    plan_code: String,
}

/// `GET /settings/billing/change?plan_code=`: the invoice the change would issue (as `GET
/// /api/v1/portal/billing/invoices/upcoming?plan_code=` answers it), and the confirmation.
pub(crate) async fn preview(
    State(st): State<AppState>,
    m: Member<AccountRead>,
    Query(f): Query<PlanForm>,
) -> Result<Html<String>, PortalError> {
    let lang = m.lang;
    let q: UpcomingQuery = parse_value(json!({ "plan_code": f.plan_code }))?;
    let plans = db::billing::plans::list(&st.db).await?;
    let code = f.plan_code.trim();
    let Some(plan) = plans.iter().find(|p| p.code == code) else {
        return Err(ApiError::NotFound(format!("plan_code: no plan `{code}`")).into());
    };
    let invoice = match api::upcoming_invoice(&st, m.org(), &q).await {
        Ok(i) => Some(i),
        // The plan exists: a 404 here says nothing would be invoiced.
        Err(ApiError::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    let may_change = m.principal().scopes.allows(Scope::AccountWrite);
    let body = html! {
        p { (lang.t(Msg::Plan)) ": " strong { (plan.name) } " — " (format::money(lang, plan.price_try.0)) " / " (period(lang, plan.billing_period)) ", " (lang.t(Msg::Quota)) " " (quota_text(lang, plan.monthly_quota)) }
        @match &invoice {
            Some(i) => {
                p { (lang.t(Msg::UpcomingIntro)) }
                dl.facts {
                    dt { (lang.t(Msg::IssuedOn)) } dd { (format::date(lang, i.issue_on)) }
                    dt { (lang.t(Msg::Period)) } dd { (format::date(lang, i.period_start)) " – " (format::date(lang, i.period_end)) }
                }
                div.table-wrap {
                    table #upcoming {
                        thead { tr { th scope="col" { (lang.t(Msg::Description)) } th scope="col" { (lang.t(Msg::Amount)) } } }
                        tbody {
                            @for l in &i.lines {
                                tr { td { (l.description) } td.num { (format::money(lang, l.amount.0)) } }
                            }
                        }
                        tfoot {
                            tr { th scope="row" { (lang.t(Msg::Subtotal)) } td.num { (format::money(lang, i.subtotal.0)) } }
                            tr { th scope="row" { (lang.t(Msg::Kdv)) " %" (i.tax_rate.0.normalize()) } td.num { (format::money(lang, i.tax_amount.0)) } }
                            tr { th scope="row" { (lang.t(Msg::Total)) } td.num { strong #upcoming-total { (format::money(lang, i.total_amount.0)) } } }
                        }
                    }
                }
            }
            None => p { (lang.t(Msg::NothingInvoiced)) },
        }
        @if may_change {
            form.record method="post" action=(format!("{PATH}/change")) {
                input type="hidden" name="_csrf" value=(m.signed_in.csrf);
                input type="hidden" name="plan_code" value=(plan.code);
                div.toolbar {
                    button type="submit" { (lang.t(Msg::ConfirmChange)) }
                    a.button.secondary href=(PATH) { (lang.t(Msg::Cancel)) }
                }
            }
        }
    };
    Ok(Html(settings_page(lang, &m.signed_in, PATH, lang.t(Msg::ChangePlan), body)))
}

/// `POST /settings/billing/change`: the confirmed change, as `POST
/// /api/v1/portal/billing/subscription/change` (audited as the member).
pub(crate) async fn change(
    State(st): State<AppState>,
    m: Member<AccountWrite>,
    headers: HeaderMap,
    Form(f): Form<PlanForm>,
) -> Result<Response, PortalError> {
    admit(&st, m.principal(), Method::POST, "/portal/billing/subscription/change").await?;
    let input: ChangeIn = parse_value(json!({ "plan_code": f.plan_code }))?;
    api::change_plan(&st, m.principal(), input).await?;
    Ok(go(&format!("{PATH}?done=changed"), &headers))
}

/// `GET /settings/billing/invoices/{id}/pdf`: the document `GET
/// /api/v1/portal/billing/invoices/{id}/pdf` serves.
pub(crate) async fn pdf(
    State(st): State<AppState>,
    m: Member<AccountRead>,
    Path(id): Path<InvoiceId>,
) -> Result<Response, PortalError> {
    Ok(api::invoice_document(&st, m.org(), id).await?)
}
