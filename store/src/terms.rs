//! The `plan_terms` table: the days each organization spent on each plan, what invoices are
//! cut from. A term follows the organization's plan and standing: none while on trial, one
//! open term on the current plan otherwise, ended on the day of a change.

use chrono::NaiveDate;
use sqlx::PgConnection;
use tns_core::domain::{
    billing,
    kinds::{BillingCycle, OrgStatus},
    money::Money,
};

/// Today in UTC, the calendar billing counts days by.
const TODAY: &str = "(now() AT TIME ZONE 'UTC')::date";

/// Bring `org`'s terms in line with its plan and standing, in the transaction that changed
/// them: a trial has no open term; an active organization has one on its current plan, started
/// today if the plan changed (the day of a change is billed at the new plan). Terms of no days
/// are dropped, and changing back on the same day continues the term it had ended.
pub async fn follow(tx: &mut PgConnection, org: i64) -> sqlx::Result<()> {
    let wanted: Option<(String, OrgStatus)> = sqlx::query_as(
        "SELECT s.plan_code, o.status FROM subscriptions s JOIN organizations o ON o.id = s.org_id
          WHERE s.org_id = $1",
    )
    .bind(org)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((plan, status)) = wanted else { return Ok(()) };
    let open: Option<(i64, String, bool)> = sqlx::query_as(&format!(
        "SELECT id, plan_code, starts_on = {TODAY} FROM plan_terms WHERE org_id = $1 AND ends_on IS NULL FOR UPDATE"
    ))
    .bind(org)
    .fetch_optional(&mut *tx)
    .await?;
    // Billed while active, and while suspended after having been active (a suspension stops
    // the service, not the plan); a trial, and a suspension that ended a trial, are not.
    let billed = match status {
        OrgStatus::Trial => false,
        OrgStatus::Active => true,
        OrgStatus::Suspended => open.is_some(),
    };
    if let Some((id, current, started_today)) = &open {
        if billed && *current == plan {
            return Ok(());
        }
        let end = if *started_today {
            "DELETE FROM plan_terms WHERE id = $1".to_string()
        } else {
            format!("UPDATE plan_terms SET ends_on = {TODAY} WHERE id = $1")
        };
        sqlx::query(&end).bind(id).execute(&mut *tx).await?;
    }
    if !billed {
        return Ok(());
    }
    let reopened = sqlx::query(&format!(
        "UPDATE plan_terms SET ends_on = NULL WHERE org_id = $1 AND plan_code = $2 AND ends_on = {TODAY}"
    ))
    .bind(org)
    .bind(&plan)
    .execute(&mut *tx)
    .await?;
    if reopened.rows_affected() == 0 {
        sqlx::query(&format!(
            "INSERT INTO plan_terms (org_id, plan_code, starts_on, billed_until) VALUES ($1, $2, {TODAY}, {TODAY})"
        ))
        .bind(org)
        .bind(&plan)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// A term with days not invoiced yet, and its plan's prices.
#[derive(Debug, Clone)]
pub struct Unbilled {
    pub id: i64,
    pub org: i64,
    pub term: billing::Term,
    pub price: billing::Price,
}

type Row = (i64, i64, NaiveDate, Option<NaiveDate>, NaiveDate, String, String, BillingCycle, Money, Option<Money>);

const COLUMNS: &str = "t.id, t.org_id, t.starts_on, t.ends_on, t.billed_until, p.code, p.name, p.billing_period,
    p.price_try, p.overage_unit_try";

fn unbilled(r: Row) -> Unbilled {
    let (id, org, starts_on, ends_on, billed_until, code, name, cycle, price, overage_unit) = r;
    Unbilled {
        id,
        org,
        term: billing::Term { cycle, starts_on, ends_on, billed_until },
        price: billing::Price { code, name, cycle, price, overage_unit },
    }
}

/// Terms that may have a period over by `today`, at most `limit` of them after term `after`
/// (a superset, narrowed in SQL so that a quiet day reads little: the jobs ask each for its
/// next period).
pub async fn unbilled_page(db: &sqlx::PgPool, today: NaiveDate, after: i64, limit: i64) -> sqlx::Result<Vec<Unbilled>> {
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM plan_terms t JOIN plans p ON p.code = t.plan_code
          WHERE (t.ends_on IS NULL OR t.billed_until < t.ends_on) AND t.billed_until < $1 AND t.id > $2
            AND (t.ends_on <= $1
                 OR (p.billing_period = 'monthly' AND t.billed_until < date_trunc('month', $1)::date)
                 OR (p.billing_period = 'yearly' AND (t.billed_until + interval '1 year')::date <= $1))
          ORDER BY t.id LIMIT $3"
    ))
    .bind(today)
    .bind(after)
    .bind(limit)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(unbilled).collect())
}

/// Term `id` as it is now, locked until the transaction ends (so two runners invoice it one
/// after the other, the second seeing what the first billed).
pub async fn lock(tx: &mut PgConnection, id: i64) -> sqlx::Result<Option<Unbilled>> {
    let row: Option<Row> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM plan_terms t JOIN plans p ON p.code = t.plan_code WHERE t.id = $1 FOR UPDATE OF t"
    ))
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    Ok(row.map(unbilled))
}

/// Record that term `id` is invoiced up to (not including) `until`.
pub async fn billed(tx: &mut PgConnection, id: i64, until: NaiveDate) -> sqlx::Result<()> {
    sqlx::query("UPDATE plan_terms SET billed_until = $2 WHERE id = $1").bind(id).bind(until).execute(tx).await?;
    Ok(())
}
