//! The `plan_terms` table: the days each organization spends on each plan, what invoices are
//! cut from. A term follows the organization's plan and standing (none while on trial, one on
//! the current plan otherwise); which term holds the day of a change, and what each owes, are
//! the pure rules of [`tns_core::domain::billing`].

use chrono::NaiveDate;
use sqlx::PgConnection;
use tns_core::domain::{
    billing::{self, Billed, Edit, Held, Price},
    kinds::{BillingCycle, OrgStatus},
    money::Money,
};
use tns_core::ids::OrgId;

use super::plans::{price_of, PRICE_COLUMNS};

/// Today in UTC, the calendar billing counts days by.
pub async fn today(conn: &mut PgConnection) -> sqlx::Result<NaiveDate> {
    sqlx::query_scalar("SELECT (now() AT TIME ZONE 'UTC')::date").fetch_one(conn).await
}

/// A term's columns, then [`PRICE_COLUMNS`].
/// The UTC day it was `lag` ago by the database's clock: the day the invoicing job bills up to.
pub async fn today_settled(db: &sqlx::PgPool, lag: std::time::Duration) -> sqlx::Result<NaiveDate> {
    sqlx::query_scalar("SELECT ((now() - make_interval(secs => $1)) AT TIME ZONE 'UTC')::date")
        .bind(lag.as_secs_f64())
        .fetch_one(db)
        .await
}

type Row =
    (i64, NaiveDate, Option<NaiveDate>, NaiveDate, Option<Money>, String, String, BillingCycle, Money, Option<Money>);

fn held(r: Row) -> Held {
    let (id, starts_on, ends_on, billed_until, charged, code, name, cycle, price, overage_unit) = r;
    Held { id, price: price_of((code, name, cycle, price, overage_unit)), starts_on, ends_on, billed_until, charged }
}

/// The terms of `org` matching `filter` (over `plan_terms t`), locked (in id order, as every
/// writer locks them) when `lock`.
async fn read(
    conn: &mut PgConnection,
    org: OrgId,
    filter: &str,
    day: NaiveDate,
    lock: bool,
) -> sqlx::Result<Vec<Held>> {
    let lock = if lock { "FOR UPDATE OF t" } else { "" };
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "SELECT t.id, t.starts_on, t.ends_on, t.billed_until, t.charged_price, {PRICE_COLUMNS}
           FROM plan_terms t JOIN plans p ON p.code = t.plan_code
          WHERE t.org_id = $1 AND ({filter}) ORDER BY t.id {lock}"
    ))
    .bind(org)
    .bind(day)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(held).collect())
}

/// Terms not ended before `today` ([`billing::follow`]'s input).
const AROUND: &str = "t.ends_on IS NULL OR t.ends_on >= $2";
/// Terms with something to invoice by `today`: a period begun and not charged, or days
/// charged beyond a cut.
const DUE: &str =
    "(t.billed_until <= $2 AND (t.ends_on IS NULL OR t.billed_until < t.ends_on)) OR t.billed_until > t.ends_on";

/// Terms around `today` and those with something due: everything a preview needs.
pub async fn live(conn: &mut PgConnection, org: OrgId, today: NaiveDate) -> sqlx::Result<Vec<Held>> {
    read(conn, org, &format!("{AROUND} OR {DUE}"), today, false).await
}

/// Terms with something to invoice by `today`, locked for the invoice's transaction.
pub async fn due(tx: &mut PgConnection, org: OrgId, today: NaiveDate) -> sqlx::Result<Vec<Held>> {
    read(tx, org, DUE, today, true).await
}

/// What `org`'s plan and standing say it is billed for from now on, `None` when not billed:
/// a trial is not, an active organization is, and a suspended one only if it was billed when
/// suspended (a suspension stops the service, not the plan; one that ended a trial stops
/// nothing that had begun).
pub async fn wanted(conn: &mut PgConnection, org: OrgId, held: &[Held]) -> sqlx::Result<Option<Price>> {
    let Some((status, price)) = current(conn, org).await? else { return Ok(None) };
    Ok(is_billed(status, held).then_some(price))
}

/// `org`'s standing and its plan's price.
async fn current(conn: &mut PgConnection, org: OrgId) -> sqlx::Result<Option<(OrgStatus, Price)>> {
    let row: Option<(OrgStatus, String, String, BillingCycle, Money, Option<Money>)> = sqlx::query_as(&format!(
        "SELECT o.status, {PRICE_COLUMNS}
           FROM subscriptions s JOIN plans p ON p.code = s.plan_code JOIN organizations o ON o.id = s.org_id
          WHERE s.org_id = $1"
    ))
    .bind(org)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|(status, code, name, cycle, price, overage_unit)| {
        (status, price_of((code, name, cycle, price, overage_unit)))
    }))
}

fn is_billed(status: OrgStatus, held: &[Held]) -> bool {
    match status {
        OrgStatus::Trial => false,
        OrgStatus::Active => true,
        OrgStatus::Suspended => held.iter().any(|t| t.ends_on.is_none()),
        OrgStatus::Closed => false,
    }
}

/// What `org` would be billed for from now on if it chose `price`'s plan now (choosing a plan
/// ends a trial; see [`crate::accounts::Standing::after_plan_choice`]).
pub async fn wanted_after_choice(
    conn: &mut PgConnection,
    org: OrgId,
    held: &[Held],
    price: &Price,
) -> sqlx::Result<Option<Price>> {
    let Some(standing) = crate::accounts::standing(conn, org).await? else { return Ok(None) };
    Ok(is_billed(standing.after_plan_choice(), held).then(|| price.clone()))
}

/// Bring `org`'s terms in line with its plan and standing, in the transaction that changed
/// them ([`billing::follow`] says how).
pub async fn follow(tx: &mut PgConnection, org: OrgId) -> sqlx::Result<()> {
    let today = today(&mut *tx).await?;
    let held = read(&mut *tx, org, AROUND, today, true).await?;
    let wanted = wanted(&mut *tx, org, &held).await?;
    apply(tx, org, &held, today, wanted.as_ref()).await
}

/// Bill `org`'s plan from today whatever its standing says: a suspended organization that was
/// billed when its owner closed it is billed again once reopened (a suspension stops the
/// service, not the plan; closing and reopening must not stop it either).
pub async fn resume(tx: &mut PgConnection, org: OrgId) -> sqlx::Result<()> {
    let today = today(&mut *tx).await?;
    let held = read(&mut *tx, org, AROUND, today, true).await?;
    let price = current(&mut *tx, org).await?.map(|(_, price)| price);
    apply(tx, org, &held, today, price.as_ref()).await
}

/// Edit `org`'s terms as [`billing::follow`] says for `wanted`.
async fn apply(
    tx: &mut PgConnection,
    org: OrgId,
    held: &[Held],
    today: NaiveDate,
    wanted: Option<&Price>,
) -> sqlx::Result<()> {
    for edit in billing::follow(held, today, wanted) {
        let q = match &edit {
            Edit::Delete(id) => sqlx::query("DELETE FROM plan_terms WHERE id = $1").bind(id),
            Edit::End(id, end) => sqlx::query("UPDATE plan_terms SET ends_on = $2 WHERE id = $1").bind(id).bind(end),
            Edit::Insert { price, starts_on } => sqlx::query(
                "INSERT INTO plan_terms (org_id, plan_code, starts_on, billed_until) VALUES ($1, $2, $3, $3)",
            )
            .bind(org)
            .bind(&price.code)
            .bind(starts_on),
        };
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

/// Organizations with a term that has something to invoice by `today`, after `after`, at most
/// `limit` of them, in id order.
pub async fn orgs_due(db: &sqlx::PgPool, today: NaiveDate, after: i64, limit: i64) -> sqlx::Result<Vec<OrgId>> {
    // Two scans, each on its partial index: periods begun and not charged; cuts not credited.
    sqlx::query_scalar(
        "SELECT org_id FROM (
            SELECT org_id FROM plan_terms WHERE billed_until <= $1 AND (ends_on IS NULL OR billed_until < ends_on)
            UNION
            SELECT org_id FROM plan_terms WHERE billed_until > ends_on AND ends_on <= $1
         ) due WHERE org_id > $2 ORDER BY org_id LIMIT $3",
    )
    .bind(today)
    .bind(after)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// Record where a term stands once an invoice is issued.
pub async fn billed(tx: &mut PgConnection, b: &Billed) -> sqlx::Result<()> {
    sqlx::query("UPDATE plan_terms SET billed_until = $2, charged_price = $3 WHERE id = $1")
        .bind(b.id)
        .bind(b.billed_until)
        .bind(b.charged)
        .execute(tx)
        .await?;
    Ok(())
}
