//! The `invoices`, `invoice_lines` and `credit_balances` tables: issuing what each
//! organization owes (the jobs' work), previewing the next invoice, listing and showing them
//! (the API's), and settling them (an operator's). Amounts come from
//! [`tns_core::domain::billing`].
//!
//! Exactly once: an organization's invoice is written in one transaction that holds the
//! organization's invoicing lock, locks its terms with something due, and moves each term's
//! `billed_until`, each month's billed overage and the credit balance along with the invoice.
//! Two runners racing invoice an organization one after the other, the second finding nothing
//! left; a runner killed mid-way leaves nothing behind.

use chrono::{Days, NaiveDate};
use sqlx::{PgConnection, PgPool, Postgres, QueryBuilder};
use tns_core::ids::{InvoiceId, OrgId};

use super::terms;
use crate::{
    pagination::{Keyed, Page},
    usage,
};
use tns_core::{
    domain::{
        billing::{self, Billed, Draft, Held, TaxRate},
        kinds::{Currency, InvoiceLineKind, InvoiceStatus},
        money::Money,
        month::Month,
    },
    env::{ConfigError, Vars},
};

/// An invoice row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Invoice {
    pub id: InvoiceId,
    pub period_start: NaiveDate,
    /// Inclusive.
    pub period_end: NaiveDate,
    /// KDV included.
    pub total_amount: Money,
    pub status: InvoiceStatus,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub subtotal: Money,
    /// In percent.
    pub tax_rate: Money,
    pub tax_amount: Money,
    pub due_on: NaiveDate,
    pub currency: Currency,
    /// The organization's name and tax number when the invoice was issued.
    pub billed_name: String,
    pub billed_tax_number: String,
}

/// One line of an invoice, as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct InvoiceLine {
    pub kind: InvoiceLineKind,
    pub description: String,
    pub quantity: i64,
    pub unit_price: Money,
    pub period_days: Option<i32>,
    pub usage_month: Option<NaiveDate>,
    pub covers_from: Option<NaiveDate>,
    pub covers_to: Option<NaiveDate>,
    pub amount: Money,
}

impl From<&billing::Line> for InvoiceLine {
    fn from(l: &billing::Line) -> InvoiceLine {
        InvoiceLine {
            kind: l.kind,
            description: l.description.clone(),
            quantity: l.quantity,
            unit_price: l.unit_price,
            period_days: l.period_days.map(|d| d as i32),
            usage_month: l.usage_month,
            covers_from: l.covers.map(|c| c.0),
            covers_to: l.covers.map(|c| c.1),
            amount: l.amount,
        }
    }
}

/// An invoice with its lines.
#[derive(Debug, Clone)]
pub struct InvoiceDetail {
    pub invoice: Invoice,
    pub lines: Vec<InvoiceLine>,
}

impl Keyed for Invoice {
    fn key(&self) -> i64 {
        self.id.get()
    }
}

const COLUMNS: &str = "id, period_start, period_end, total_amount, status, created_at, subtotal, tax_rate,
    tax_amount, due_on, 'TRY' AS currency, billed_name, billed_tax_number";

pub async fn list(db: &PgPool, org: OrgId, page: &Page) -> sqlx::Result<Vec<Invoice>> {
    let mut qb = QueryBuilder::<Postgres>::new(format!("SELECT {COLUMNS} FROM invoices WHERE org_id = "));
    qb.push_bind(org);
    page.push(&mut qb, "id");
    qb.build_query_as().fetch_all(db).await
}

/// Invoice `id` of `org` with its lines.
pub async fn get(db: &PgPool, org: OrgId, id: InvoiceId) -> sqlx::Result<Option<InvoiceDetail>> {
    let invoice: Option<Invoice> =
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM invoices WHERE org_id = $1 AND id = $2"))
            .bind(org)
            .bind(id)
            .fetch_optional(db)
            .await?;
    let Some(invoice) = invoice else { return Ok(None) };
    let lines = sqlx::query_as(
        "SELECT kind, description, quantity, unit_price, period_days, usage_month, covers_from, covers_to, amount
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

impl Terms {
    /// `TNS_KDV_PERCENT` (default 20, up to two decimal places) and `TNS_INVOICE_DUE_DAYS`
    /// (default 14): read by the jobs, which issue invoices, and the API, which previews them.
    pub fn from_vars(vars: &Vars<'_>) -> Result<Terms, ConfigError> {
        const WHY: &str = "must be a percentage from 0 to 100 with at most two decimal places, like 20 or 18.5";
        let tax_rate = match vars.get("TNS_KDV_PERCENT") {
            None => TaxRate::percent(rust_decimal::Decimal::from(20)).expect("20 is a valid rate"),
            Some(v) => {
                v.trim().parse().ok().and_then(TaxRate::percent).ok_or_else(|| vars.bad("TNS_KDV_PERCENT", WHY))?
            }
        };
        Ok(Terms { tax_rate, due_days: vars.parse_int("TNS_INVOICE_DUE_DAYS", 14, 1, 365)? as u32 })
    }
}

/// Organizations the invoicing job reads per batch.
const BATCH: i64 = 500;

/// Issue every invoice due by `today` (the first day not over): each organization's charges
/// for periods begun, credits for terms cut short and overage of months over, in one invoice.
/// The invoices issued.
pub async fn issue_due(db: &PgPool, today: NaiveDate, terms: Terms) -> sqlx::Result<Vec<InvoiceId>> {
    let mut issued = vec![];
    // Organizations with a term due, then those with overage only (the first pass billed the
    // overage of the others along with their terms).
    for pass in [Due::Terms, Due::Overage] {
        let mut after = 0;
        loop {
            let page = match pass {
                Due::Terms => terms::orgs_due(db, today, after, BATCH).await?,
                Due::Overage => usage::orgs_with_unbilled_overage(db, first_of_month(today), after, BATCH).await?,
            };
            let Some(&last) = page.last() else { break };
            after = last.get();
            for org in page {
                match issue_for(db, org, today, terms).await {
                    Ok(id) => issued.extend(id),
                    // One organization that cannot be invoiced must not hold up the others.
                    Err(e) => {
                        tracing::error!(org = org.get(), error = %crate::redacted(&e), "organization not invoiced")
                    }
                }
            }
        }
    }
    Ok(issued)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Due {
    Terms,
    Overage,
}

fn first_of_month(day: NaiveDate) -> NaiveDate {
    Month::of_day(day).first_day()
}

/// Hold `org`'s invoicing until the transaction ends (after its row: see [`issue_for`]). One
/// organization's invoices are written one at a time: what is due is read and billed by one
/// runner at once, and not while the organization is being erased.
pub(crate) async fn lock_invoicing(tx: &mut sqlx::PgConnection, org: OrgId) -> sqlx::Result<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('tns-invoicing:' || $1::text, 0))")
        .bind(org)
        .execute(tx)
        .await?;
    Ok(())
}

/// Issue what `org` owes by `today`, if anything: the invoice's id.
async fn issue_for(db: &PgPool, org: OrgId, today: NaiveDate, terms: Terms) -> sqlx::Result<Option<InvoiceId>> {
    let mut tx = db.begin().await?;
    // The organization before its terms, the order an operator's status or plan change locks
    // them in (the invoice's reference to the organization would otherwise take its lock last,
    // and the two could deadlock).
    if super::lock_org(&mut tx, org, super::Hold::Reference).await?.is_none() {
        return Ok(None);
    }
    lock_invoicing(&mut tx, org).await?;
    let held = terms::due(&mut tx, org, today).await?;
    let overage = usage::unbilled_overage(&mut tx, org, first_of_month(today)).await?;
    let balance = balance(&mut tx, org, true).await?;
    let (draft, moved) = assemble(&held, &overage, today, balance, terms.tax_rate);
    let id = match &draft {
        Some(d) => {
            let id = insert(&mut tx, org, d, today + Days::new(terms.due_days.into())).await?;
            if d.balance != balance {
                set_balance(&mut tx, org, d.balance).await?;
            }
            Some(id)
        }
        None => None,
    };
    for b in &moved {
        terms::billed(&mut tx, b).await?;
    }
    for &(month, calls, _) in &overage {
        usage::overage_billed(&mut tx, org, month, calls).await?;
    }
    tx.commit().await?;
    Ok(id)
}

/// The invoice of `held`'s terms and `overage` on `day` for an organization holding
/// `balance` in credit, and where each term's `billed_until` moves.
fn assemble(
    held: &[Held],
    overage: &[(Month, i64, Money)],
    day: NaiveDate,
    balance: Money,
    tax_rate: TaxRate,
) -> (Option<Draft>, Vec<Billed>) {
    let (mut lines, moved) = billing::settle(held, day);
    lines.extend(overage.iter().map(|&(month, calls, unit)| billing::overage_line(unit, month, calls)));
    (billing::draft(lines, balance, tax_rate), moved)
}

/// The credit `org` holds, locked until the transaction ends when `lock`.
async fn balance(conn: &mut PgConnection, org: OrgId, lock: bool) -> sqlx::Result<Money> {
    let lock = if lock { "FOR UPDATE" } else { "" };
    let amount: Option<Money> =
        sqlx::query_scalar(&format!("SELECT amount FROM credit_balances WHERE org_id = $1 {lock}"))
            .bind(org)
            .fetch_optional(conn)
            .await?;
    Ok(amount.unwrap_or(Money::ZERO))
}

async fn set_balance(tx: &mut PgConnection, org: OrgId, amount: Money) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO credit_balances (org_id, amount) VALUES ($1, $2)
         ON CONFLICT (org_id) DO UPDATE SET amount = EXCLUDED.amount",
    )
    .bind(org)
    .bind(amount)
    .execute(tx)
    .await?;
    Ok(())
}

/// The invoice TNS would issue next, as it stands now.
#[derive(Debug, Clone)]
pub struct UpcomingInvoice {
    /// Today when something is due now, else the first day of the next period.
    pub issue_on: NaiveDate,
    /// `None` when billing stops.
    pub plan_code: Option<String>,
    pub period_start: NaiveDate,
    pub period_end: NaiveDate,
    pub subtotal: Money,
    /// In percent.
    pub tax_rate: Money,
    pub tax_amount: Money,
    pub total_amount: Money,
    pub currency: Currency,
    /// Before KDV, once it is issued.
    pub credit_balance: Money,
    pub lines: Vec<InvoiceLine>,
}

/// The next invoice of `org`, on the next day anything is due: with `change`, as if that plan
/// were chosen now (the unused days of the current plan credited, the new plan charged from
/// the day it is billed from). `None` when nothing would be invoiced (a trial, a free plan).
pub async fn upcoming(
    db: &PgPool,
    org: OrgId,
    change: Option<&billing::Price>,
    tax_rate: TaxRate,
) -> sqlx::Result<Option<UpcomingInvoice>> {
    let mut conn = db.acquire().await?;
    let today = terms::today(&mut conn).await?;
    let mut held = terms::live(&mut conn, org, today).await?;
    if let Some(price) = change {
        let around: Vec<Held> = held.iter().filter(|t| t.ends_on.is_none_or(|e| e >= today)).cloned().collect();
        let wanted = terms::wanted_after_choice(&mut conn, org, &around, price).await?;
        billing::apply(&mut held, &billing::follow(&around, today, wanted.as_ref()));
    }
    // The next day anything is due: today when something is, else the next charge or credit.
    let Some(day) = billing::next_due(&held).map(|d| d.max(today)) else { return Ok(None) };
    let overage = usage::unbilled_overage(&mut conn, org, first_of_month(day)).await?;
    let balance = balance(&mut conn, org, false).await?;
    let (draft, _) = assemble(&held, &overage, day, balance, tax_rate);
    Ok(draft.map(|d| UpcomingInvoice {
        issue_on: day,
        plan_code: held.iter().find(|t| t.ends_on.is_none()).map(|t| t.price.code.clone()),
        period_start: d.period.0,
        period_end: d.period.1,
        subtotal: d.subtotal,
        tax_rate: Money(d.tax_rate.as_percent()),
        tax_amount: d.tax,
        total_amount: d.total,
        currency: Currency::Try,
        credit_balance: d.balance,
        lines: d.lines.iter().map(InvoiceLine::from).collect(),
    }))
}

async fn insert(tx: &mut PgConnection, org: OrgId, draft: &Draft, due_on: NaiveDate) -> sqlx::Result<InvoiceId> {
    // Nothing to pay (credits cover it): issued settled, never chased.
    let status = if draft.total.is_zero() { InvoiceStatus::Paid } else { InvoiceStatus::Open };
    let id: InvoiceId = sqlx::query_scalar(
        "INSERT INTO invoices (org_id, period_start, period_end, subtotal, tax_rate, tax_amount, total_amount, due_on,
                               status, billed_name, billed_tax_number)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, name, tax_number FROM organizations WHERE id = $1
         RETURNING id",
    )
    .bind(org)
    .bind(draft.period.0)
    .bind(draft.period.1)
    .bind(draft.subtotal)
    .bind(draft.tax_rate.as_percent())
    .bind(draft.tax)
    .bind(draft.total)
    .bind(due_on)
    .bind(status)
    .fetch_one(&mut *tx)
    .await?;
    let mut qb = QueryBuilder::<Postgres>::new(
        "INSERT INTO invoice_lines (invoice_id, position, kind, description, quantity, unit_price, period_days,
                                    usage_month, covers_from, covers_to, amount) ",
    );
    qb.push_values(draft.lines.iter().map(InvoiceLine::from).enumerate(), |mut b, (i, l)| {
        b.push_bind(id)
            .push_bind(i as i16)
            .push_bind(l.kind)
            .push_bind(l.description)
            .push_bind(l.quantity)
            .push_bind(l.unit_price)
            .push_bind(l.period_days)
            .push_bind(l.usage_month)
            .push_bind(l.covers_from)
            .push_bind(l.covers_to)
            .push_bind(l.amount);
    });
    qb.build().execute(&mut *tx).await?;
    Ok(id)
}

/// The organization invoice `id` is addressed to (an invoice never changes organization).
pub async fn org_of(tx: &mut PgConnection, id: InvoiceId) -> sqlx::Result<Option<OrgId>> {
    sqlx::query_scalar("SELECT org_id FROM invoices WHERE id = $1").bind(id).fetch_optional(tx).await
}

/// Invoice `id` as it stands, locked for a change of status: (organization, status).
pub async fn lock(tx: &mut PgConnection, id: InvoiceId) -> sqlx::Result<Option<(OrgId, InvoiceStatus)>> {
    sqlx::query_as("SELECT org_id, status FROM invoices WHERE id = $1 FOR UPDATE").bind(id).fetch_optional(tx).await
}

/// Settle an open invoice: `paid` or `void`.
pub async fn set_status(tx: &mut PgConnection, id: InvoiceId, to: InvoiceStatus) -> sqlx::Result<()> {
    sqlx::query("UPDATE invoices SET status = $2, status_changed_at = now() WHERE id = $1 AND status = 'open'")
        .bind(id)
        .bind(to)
        .execute(tx)
        .await?;
    Ok(())
}

/// Organizations not suspended (nor closed) yet with an open invoice due before `today`, each with its
/// oldest such invoice.
pub async fn overdue(db: &PgPool, today: NaiveDate) -> sqlx::Result<Vec<(OrgId, InvoiceId)>> {
    sqlx::query_as(
        "SELECT DISTINCT ON (i.org_id) i.org_id, i.id FROM invoices i JOIN organizations o ON o.id = i.org_id
          WHERE i.status = 'open' AND i.due_on < $1 AND o.status IN ('trial', 'active')
          ORDER BY i.org_id, i.id",
    )
    .bind(today)
    .fetch_all(db)
    .await
}

/// Whether `org` still has an open invoice due before `today`.
pub async fn has_overdue(tx: &mut PgConnection, org: OrgId, today: NaiveDate) -> sqlx::Result<bool> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM invoices WHERE org_id = $1 AND status = 'open' AND due_on < $2)")
        .bind(org)
        .bind(today)
        .fetch_one(tx)
        .await
}
