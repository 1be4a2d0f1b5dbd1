//! The usage ledger: the `usage_monthly` and `usage_overage` tables (calls per organization,
//! month and endpoint, and calls beyond a soft quota per organization and month) and
//! `usage_versions` (how many additions each organization-month has had). Each API process
//! adds the calls it admitted; Redis's live counters are a copy, seeded from here.

use std::collections::HashMap;
use tns_core::ids::OrgId;

use chrono::NaiveDate;
use sqlx::PgPool;
use tns_core::domain::{money::Money, month::Month};

/// One endpoint's usage in a month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointUsage {
    pub endpoint: String,
    pub total_calls: i64,
    pub error_calls: i64,
}

/// A month's per-endpoint counts (`month`: its first day), most used first.
pub async fn of_month(db: &PgPool, org: OrgId, month: NaiveDate) -> sqlx::Result<Vec<EndpointUsage>> {
    sqlx::query_as::<_, (String, i64, i64)>(
        "SELECT endpoint, total_calls, error_calls FROM usage_monthly
          WHERE org_id = $1 AND month = $2 ORDER BY total_calls DESC, endpoint",
    )
    .bind(org)
    .bind(month)
    .fetch_all(db)
    .await
    .map(|rows| {
        rows.into_iter()
            .map(|(endpoint, total_calls, error_calls)| EndpointUsage { endpoint, total_calls, error_calls })
            .collect()
    })
}

/// The hash field counting calls served beyond a soft quota.
pub const OVERAGE_FIELD: &str = "overage";

/// An organization-month's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MonthCounts {
    pub rows: Vec<EndpointUsage>,
    /// Calls served beyond a soft quota (billed as overage).
    pub overage: i64,
}

impl MonthCounts {
    /// Read from the hash's fields (`total` is the sum of the `t|` fields and not needed).
    pub fn from_fields(fields: &HashMap<String, i64>) -> MonthCounts {
        let mut by: HashMap<&str, (i64, i64)> = HashMap::new();
        let mut overage = 0;
        for (f, n) in fields {
            if let Some(ep) = f.strip_prefix("t|") {
                by.entry(ep).or_default().0 += n;
            } else if let Some(ep) = f.strip_prefix("e|") {
                by.entry(ep).or_default().1 += n;
            } else if f == OVERAGE_FIELD {
                overage += n;
            }
        }
        let rows = by
            .into_iter()
            .map(|(ep, (t, e))| EndpointUsage { endpoint: ep.to_string(), total_calls: t, error_calls: e })
            .collect();
        MonthCounts { rows, overage }
    }

    pub fn total(&self) -> i64 {
        self.rows.iter().map(|r| r.total_calls).sum()
    }

    /// The hash's fields, `total` included (to seed Redis from PostgreSQL).
    pub fn fields(&self) -> Vec<(String, i64)> {
        let mut out = vec![("total".to_string(), self.total()), (OVERAGE_FIELD.to_string(), self.overage)];
        for r in &self.rows {
            out.push((format!("t|{}", r.endpoint), r.total_calls));
            out.push((format!("e|{}", r.endpoint), r.error_calls));
        }
        out
    }
}

/// A month's counters as persisted.
pub async fn persisted(db: &PgPool, org: OrgId, month: Month) -> sqlx::Result<MonthCounts> {
    let rows = of_month(db, org, month.first_day()).await?;
    Ok(MonthCounts { rows, overage: overage(db, org, month.first_day()).await? })
}

/// Calls beyond a soft quota persisted for `org` in the month starting `month`.
pub async fn overage(conn: impl sqlx::PgExecutor<'_>, org: OrgId, month: NaiveDate) -> sqlx::Result<i64> {
    let n: Option<i64> = sqlx::query_scalar("SELECT calls FROM usage_overage WHERE org_id = $1 AND month = $2")
        .bind(org)
        .bind(month)
        .fetch_optional(conn)
        .await?;
    Ok(n.unwrap_or(0))
}

/// Overage rows `u` with the soft-plan terms `t` (and plans `p`) held in their month: what
/// prices them. A month without one (its soft plan never held a day: dropped the day it began
/// for a dearer plan, which that day is billed at) is not billed.
const PRICED_OVERAGE: &str = "usage_overage u
    JOIN plan_terms t ON t.org_id = u.org_id AND t.starts_on < (u.month + interval '1 month')::date
                     AND (t.ends_on IS NULL OR t.ends_on > u.month) AND (t.ends_on IS NULL OR t.ends_on > t.starts_on)
    JOIN plans p ON p.code = t.plan_code AND p.overage_unit_try IS NOT NULL";

/// Calls beyond a soft quota in months before `before` not invoiced yet, oldest first, each
/// with the price per call of the soft plan held last in that month (months without one, which
/// cannot have counted overage, are left out).
pub async fn unbilled_overage(
    conn: &mut sqlx::PgConnection,
    org: OrgId,
    before: NaiveDate,
) -> sqlx::Result<Vec<(Month, i64, Money)>> {
    let rows: Vec<(NaiveDate, i64, Money)> = sqlx::query_as(&format!(
        "SELECT DISTINCT ON (u.month) u.month, u.calls - u.billed_calls, p.overage_unit_try
               FROM {PRICED_OVERAGE}
              WHERE u.org_id = $1 AND u.month < $2 AND u.calls > u.billed_calls
              ORDER BY u.month, t.starts_on DESC, t.id DESC"
    ))
    .bind(org)
    .bind(before)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|(m, calls, unit)| (Month::of_day(m), calls, unit)).collect())
}

/// Whether `org` has overage an invoice is still to bill (priced by a soft plan it held that
/// month; the current month's is billed once it is over).
pub async fn has_unbilled_overage(conn: &mut sqlx::PgConnection, org: OrgId) -> sqlx::Result<bool> {
    sqlx::query_scalar(&format!(
        "SELECT EXISTS (SELECT 1 FROM {PRICED_OVERAGE} WHERE u.org_id = $1 AND u.calls > u.billed_calls)"
    ))
    .bind(org)
    .fetch_one(conn)
    .await
}

/// Record that `calls` more of `org`'s overage in `month` are invoiced.
pub async fn overage_billed(tx: &mut sqlx::PgConnection, org: OrgId, month: Month, calls: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE usage_overage SET billed_calls = billed_calls + $3 WHERE org_id = $1 AND month = $2")
        .bind(org)
        .bind(month.first_day())
        .bind(calls)
        .execute(tx)
        .await?;
    Ok(())
}

/// Organizations with overage of a month before `before` not invoiced yet, after `after`, at
/// most `limit`, in id order.
pub async fn orgs_with_unbilled_overage(
    db: &PgPool,
    before: NaiveDate,
    after: i64,
    limit: i64,
) -> sqlx::Result<Vec<OrgId>> {
    sqlx::query_scalar(&format!(
        "SELECT DISTINCT u.org_id FROM {PRICED_OVERAGE}
          WHERE u.calls > u.billed_calls AND u.month < $1 AND u.org_id > $2
          ORDER BY u.org_id LIMIT $3"
    ))
    .bind(before)
    .bind(after)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// Add `counts` to the ledger, in one transaction: the calls one API process admitted (and
/// the errors it counted) since its last flush. Returns the organization-month's new ledger
/// version (each addition gets the next one), by which Redis's copy of the month knows whether
/// it was seeded with this addition; `None` when the organization is erased (or gone): its counts
/// have nowhere to go.
pub async fn add(db: &PgPool, org: OrgId, month: Month, counts: &MonthCounts) -> sqlx::Result<Option<i64>> {
    let rows = &counts.rows;
    let endpoints: Vec<&str> = rows.iter().map(|r| r.endpoint.as_str()).collect();
    let totals: Vec<i64> = rows.iter().map(|r| r.total_calls).collect();
    let errors: Vec<i64> = rows.iter().map(|r| r.error_calls).collect();
    let mut tx = db.begin().await?;
    // The organization before its usage rows, as its erasure takes them (which holds the row
    // until it has deleted them: an addition waits, then finds it erased).
    let live: Option<i64> =
        sqlx::query_scalar("SELECT id FROM organizations WHERE id = $1 AND erased_at IS NULL FOR KEY SHARE")
            .bind(org)
            .fetch_optional(&mut *tx)
            .await?;
    if live.is_none() {
        return Ok(None);
    }
    // The version row first: it serializes additions to the month, and a seed reading the
    // ledger sees an addition whole or not at all, with the version that says which.
    let version: i64 = sqlx::query_scalar(
        "INSERT INTO usage_versions (org_id, month, version) VALUES ($1, $2, 1)
         ON CONFLICT (org_id, month) DO UPDATE SET version = usage_versions.version + 1
         RETURNING version",
    )
    .bind(org)
    .bind(month.first_day())
    .fetch_one(&mut *tx)
    .await?;
    if !rows.is_empty() {
        sqlx::query(
            "INSERT INTO usage_monthly (org_id, month, endpoint, total_calls, error_calls)
             SELECT $1, $2, e, t, x FROM unnest($3::text[], $4::bigint[], $5::bigint[]) AS u(e, t, x)
             ON CONFLICT (org_id, month, endpoint) DO UPDATE
               SET total_calls = usage_monthly.total_calls + EXCLUDED.total_calls,
                   error_calls = usage_monthly.error_calls + EXCLUDED.error_calls",
        )
        .bind(org)
        .bind(month.first_day())
        .bind(&endpoints)
        .bind(&totals)
        .bind(&errors)
        .execute(&mut *tx)
        .await?;
    }
    if counts.overage > 0 {
        sqlx::query(
            "INSERT INTO usage_overage (org_id, month, calls) VALUES ($1, $2, $3)
             ON CONFLICT (org_id, month) DO UPDATE SET calls = usage_overage.calls + EXCLUDED.calls",
        )
        .bind(org)
        .bind(month.first_day())
        .bind(counts.overage)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(Some(version))
}

/// The ledger of a month as one consistent read, with its version (0: nothing added yet):
/// what Redis's copy of the month is seeded with.
pub async fn ledger(db: &PgPool, org: OrgId, month: Month) -> sqlx::Result<(MonthCounts, i64)> {
    let mut tx = db.begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
    let version: Option<i64> =
        sqlx::query_scalar("SELECT version FROM usage_versions WHERE org_id = $1 AND month = $2")
            .bind(org)
            .bind(month.first_day())
            .fetch_optional(&mut *tx)
            .await?;
    let rows = sqlx::query_as::<_, (String, i64, i64)>(
        "SELECT endpoint, total_calls, error_calls FROM usage_monthly WHERE org_id = $1 AND month = $2",
    )
    .bind(org)
    .bind(month.first_day())
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|(endpoint, total_calls, error_calls)| EndpointUsage { endpoint, total_calls, error_calls })
    .collect();
    let overage = overage(&mut *tx, org, month.first_day()).await?;
    tx.commit().await?;
    Ok((MonthCounts { rows, overage }, version.unwrap_or(0)))
}
