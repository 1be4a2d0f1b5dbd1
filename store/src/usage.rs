//! The `usage_monthly` table: calls per organization, month and endpoint, as persisted from the
//! API's counters (which are in Redis while the month runs).

use chrono::NaiveDate;
use sqlx::PgPool;

/// One endpoint's usage in a month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointUsage {
    pub endpoint: String,
    pub total_calls: i64,
    pub error_calls: i64,
}

/// A month's per-endpoint counts (`month`: its first day), most used first.
pub async fn of_month(db: &PgPool, org: i64, month: NaiveDate) -> sqlx::Result<Vec<EndpointUsage>> {
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

pub enum Upsert {
    /// The flusher: Redis holds the full count, keep the larger of the two.
    Greatest,
    /// Shutdown with Redis down: these are increments.
    Add,
}

/// Write a month's per-endpoint counts (`month`: its first day).
pub async fn upsert(db: &PgPool, org: i64, month: NaiveDate, rows: &[EndpointUsage], mode: Upsert) -> sqlx::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let merge = match mode {
        Upsert::Greatest => {
            "total_calls = GREATEST(usage_monthly.total_calls, EXCLUDED.total_calls),
                             error_calls = GREATEST(usage_monthly.error_calls, EXCLUDED.error_calls)"
        }
        Upsert::Add => {
            "total_calls = usage_monthly.total_calls + EXCLUDED.total_calls,
                        error_calls = usage_monthly.error_calls + EXCLUDED.error_calls"
        }
    };
    let endpoints: Vec<&str> = rows.iter().map(|r| r.endpoint.as_str()).collect();
    let totals: Vec<i64> = rows.iter().map(|r| r.total_calls).collect();
    let errors: Vec<i64> = rows.iter().map(|r| r.error_calls).collect();
    sqlx::query(&format!(
        "INSERT INTO usage_monthly (org_id, month, endpoint, total_calls, error_calls)
         SELECT $1, $2, e, t, x FROM unnest($3::text[], $4::bigint[], $5::bigint[]) AS u(e, t, x)
         ON CONFLICT (org_id, month, endpoint) DO UPDATE SET {merge}"
    ))
    .bind(org)
    .bind(month)
    .bind(&endpoints)
    .bind(&totals)
    .bind(&errors)
    .execute(db)
    .await?;
    Ok(())
}
