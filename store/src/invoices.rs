//! The `invoices` and `invoice_lines` tables: issuing an invoice for each period of a plan
//! term once it is over (the jobs' work), listing and showing them (the API's), and settling
//! them (an operator's). Amounts come from [`tns_core::domain::billing`].
//!
//! Exactly once: each invoice is written in one transaction that locks its term, checks what
//! is still unbilled, inserts the invoice (unique per organization and period start) with its
//! lines and moves the term's `billed_until` on. Two runners racing invoice a term one after
//! the other, the second finding nothing left; a runner killed mid-way leaves nothing behind.

use chrono::{Days, NaiveDate};
use serde::Serialize;
use sqlx::{PgConnection, PgPool, Postgres, QueryBuilder};
use utoipa::ToSchema;

use crate::{
    pagination::{Keyed, Page},
    terms, usage,
};
use tns_core::domain::{
    billing::{self, Draft, TaxRate},
    kinds::{InvoiceLineKind, InvoiceStatus},
    money::Money,
    month::Month,
};

#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
pub struct Invoice {
    pub id: i64,
    /// The first day the invoice covers.
    pub period_start: NaiveDate,
    /// The last day it covers (inclusive).
    pub period_end: NaiveDate,
    /// In Turkish lira, KDV included: `subtotal + tax_amount`.
    pub total_amount: Money,
    pub status: InvoiceStatus,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// The lines before KDV.
    pub subtotal: Money,
    /// KDV in percent.
    #[schema(value_type = f64)]
    pub tax_rate: Money,
    pub tax_amount: Money,
    /// Unpaid past this day, the organization is suspended.
    pub due_on: NaiveDate,
    pub currency: Currency,
    /// The organization's name as it was when the invoice was issued.
    pub billed_name: String,
    /// Its tax number then.
    pub billed_tax_number: String,
}

/// Amounts are in Turkish lira.
#[derive(Debug, Clone, Copy, Serialize, ToSchema, sqlx::Type)]
#[sqlx(type_name = "text")]
pub enum Currency {
    #[serde(rename = "TRY")]
    #[sqlx(rename = "TRY")]
    Try,
}

/// One line of an invoice.
#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
pub struct InvoiceLine {
    pub kind: InvoiceLineKind,
    pub description: String,
    /// Days on the plan, calls beyond the quota, or 1 for the tax.
    pub quantity: i64,
    /// The plan's price for a full period, the price of one call, or the taxed sum.
    pub unit_price: Money,
    /// Plan lines: the days of the full period `quantity` counts against.
    pub period_days: Option<i32>,
    /// Overage lines: the month of the calls.
    pub usage_month: Option<NaiveDate>,
    pub amount: Money,
}

/// An invoice with its lines.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InvoiceDetail {
    #[serde(flatten)]
    pub invoice: Invoice,
    pub lines: Vec<InvoiceLine>,
}

impl Keyed for Invoice {
    fn key(&self) -> i64 {
        self.id
    }
}

const COLUMNS: &str = "id, period_start, period_end, total_amount, status, created_at, subtotal, tax_rate,
    tax_amount, due_on, 'TRY' AS currency, billed_name, billed_tax_number";

pub async fn list(db: &PgPool, org: i64, page: &Page) -> sqlx::Result<Vec<Invoice>> {
    let mut qb = QueryBuilder::<Postgres>::new(format!("SELECT {COLUMNS} FROM invoices WHERE org_id = "));
    qb.push_bind(org);
    page.push(&mut qb, "id");
    qb.build_query_as().fetch_all(db).await
}

/// Invoice `id` of `org` with its lines.
pub async fn get(db: &PgPool, org: i64, id: i64) -> sqlx::Result<Option<InvoiceDetail>> {
    let invoice: Option<Invoice> =
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM invoices WHERE org_id = $1 AND id = $2"))
            .bind(org)
            .bind(id)
            .fetch_optional(db)
            .await?;
    let Some(invoice) = invoice else { return Ok(None) };
    let lines = sqlx::query_as(
        "SELECT kind, description, quantity, unit_price, period_days, usage_month, amount
           FROM invoice_lines WHERE invoice_id = $1 ORDER BY position",
    )
    .bind(id)
    .fetch_all(db)
    .await?;
    Ok(Some(InvoiceDetail { invoice, lines }))
}

/// How invoices are issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terms {
    pub tax_rate: TaxRate,
    /// Days from issue to due date.
    pub due_days: u32,
}

/// Terms the invoicing job reads per batch.
const BATCH: i64 = 500;

/// Issue every invoice whose period is over by `today` (the first day not over). With
/// `overage_ready` false (the usage counters could not be swept from Redis), terms of
/// soft-limited plans wait for a later run. The invoices issued.
pub async fn issue_due(db: &PgPool, today: NaiveDate, terms: Terms, overage_ready: bool) -> sqlx::Result<Vec<i64>> {
    let mut issued = vec![];
    let mut after = 0;
    loop {
        let page = terms::unbilled_page(db, today, after, BATCH).await?;
        let Some(last) = page.last() else { return Ok(issued) };
        after = last.id;
        for t in page {
            if t.price.overage_unit.is_some() && !overage_ready {
                continue;
            }
            loop {
                match issue_next(db, t.org, t.id, today, terms).await {
                    Ok(Some(outcome)) => issued.extend(outcome),
                    Ok(None) => break,
                    // One term that cannot be invoiced must not hold up the others.
                    Err(e) => {
                        tracing::error!(term = t.id, org = t.org, error = %crate::redacted(&e), "term not invoiced");
                        break;
                    }
                }
            }
        }
    }
}

/// Issue the next invoice of term `term_id` (of organization `org`) if a period of it is over:
/// `None` when nothing is due, else the invoice's id (`None` inside when the invoice existed
/// already).
async fn issue_next(
    db: &PgPool,
    org: i64,
    term_id: i64,
    today: NaiveDate,
    terms: Terms,
) -> sqlx::Result<Option<Option<i64>>> {
    let mut tx = db.begin().await?;
    // The organization before its term, the order an operator's status or plan change locks
    // them in (the invoice's reference to the organization would otherwise take its lock last,
    // and the two could deadlock).
    if !crate::accounts::hold(&mut tx, org).await? {
        return Ok(None);
    }
    // One organization's invoices are written one at a time: the overage not yet billed is
    // read and billed by one term at once, even if two runners invoice two of its terms.
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('tns-invoicing:' || $1::text, 0))")
        .bind(org)
        .execute(&mut *tx)
        .await?;
    let Some(t) = terms::lock(&mut tx, term_id).await? else { return Ok(None) };
    let Some(period) = t.term.next_period(today) else { return Ok(None) };
    let mut overage = vec![];
    if t.price.overage_unit.is_some() {
        for month in period.months() {
            overage.push((month, unbilled_overage(&mut tx, t.org, month).await?));
        }
    }
    let draft = billing::draft(&t.price, &period, &overage, terms.tax_rate);
    // Nothing to pay (a plan priced at zero, no overage): no invoice to chase.
    let id = if draft.total.is_zero() {
        None
    } else {
        insert(&mut tx, t.org, &period, &draft, today + Days::new(terms.due_days.into())).await?
    };
    terms::billed(&mut tx, term_id, period.end + Days::new(1)).await?;
    tx.commit().await?;
    Ok(Some(id))
}

/// Calls beyond the quota in `month` that no invoice has billed yet.
async fn unbilled_overage(tx: &mut PgConnection, org: i64, month: Month) -> sqlx::Result<i64> {
    let counted = usage::overage(&mut *tx, org, month.first_day()).await?;
    let billed: i64 = sqlx::query_scalar(
        "SELECT COALESCE(SUM(l.quantity), 0)::int8 FROM invoice_lines l JOIN invoices i ON i.id = l.invoice_id
          WHERE i.org_id = $1 AND l.kind = 'overage' AND l.usage_month = $2",
    )
    .bind(org)
    .bind(month.first_day())
    .fetch_one(&mut *tx)
    .await?;
    Ok((counted - billed).max(0))
}

async fn insert(
    tx: &mut PgConnection,
    org: i64,
    period: &billing::Period,
    draft: &Draft,
    due_on: NaiveDate,
) -> sqlx::Result<Option<i64>> {
    let id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO invoices (org_id, period_start, period_end, subtotal, tax_rate, tax_amount, total_amount, due_on,
                               billed_name, billed_tax_number)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, name, tax_number FROM organizations WHERE id = $1
         ON CONFLICT (org_id, period_start) DO NOTHING RETURNING id",
    )
    .bind(org)
    .bind(period.start)
    .bind(period.end)
    .bind(draft.subtotal)
    .bind(draft.tax_rate.as_percent())
    .bind(draft.tax)
    .bind(draft.total)
    .bind(due_on)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(id) = id else { return Ok(None) };
    let mut qb = QueryBuilder::<Postgres>::new(
        "INSERT INTO invoice_lines (invoice_id, position, kind, description, quantity, unit_price, period_days,
                                    usage_month, amount) ",
    );
    qb.push_values(draft.lines.iter().enumerate(), |mut b, (i, l)| {
        b.push_bind(id)
            .push_bind(i as i16)
            .push_bind(l.kind)
            .push_bind(&l.description)
            .push_bind(l.quantity)
            .push_bind(l.unit_price)
            .push_bind(l.period_days.map(|d| d as i32))
            .push_bind(l.usage_month)
            .push_bind(l.amount);
    });
    qb.build().execute(&mut *tx).await?;
    Ok(Some(id))
}

/// Invoice `id` as it stands, locked for a change of status: (organization, status).
pub async fn lock(tx: &mut PgConnection, id: i64) -> sqlx::Result<Option<(i64, InvoiceStatus)>> {
    sqlx::query_as("SELECT org_id, status FROM invoices WHERE id = $1 FOR UPDATE").bind(id).fetch_optional(tx).await
}

/// Settle an open invoice: `paid` or `void`.
pub async fn set_status(tx: &mut PgConnection, id: i64, to: InvoiceStatus) -> sqlx::Result<()> {
    sqlx::query("UPDATE invoices SET status = $2, status_changed_at = now() WHERE id = $1 AND status = 'open'")
        .bind(id)
        .bind(to)
        .execute(tx)
        .await?;
    Ok(())
}

/// Organizations not suspended yet with an open invoice due before `today`, each with its
/// oldest such invoice.
pub async fn overdue(db: &PgPool, today: NaiveDate) -> sqlx::Result<Vec<(i64, i64)>> {
    sqlx::query_as(
        "SELECT DISTINCT ON (i.org_id) i.org_id, i.id FROM invoices i JOIN organizations o ON o.id = i.org_id
          WHERE i.status = 'open' AND i.due_on < $1 AND o.status <> 'suspended'
          ORDER BY i.org_id, i.id",
    )
    .bind(today)
    .fetch_all(db)
    .await
}

/// Whether `org` still has an open invoice due before `today`.
pub async fn has_overdue(tx: &mut PgConnection, org: i64, today: NaiveDate) -> sqlx::Result<bool> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM invoices WHERE org_id = $1 AND status = 'open' AND due_on < $2)")
        .bind(org)
        .bind(today)
        .fetch_one(tx)
        .await
}
