//! What every leased queue table shares (`submissions`, `webhook_deliveries`: `state`,
//! `run_at`, `lease_token`): giving claimed rows back and counting the queue.

use sqlx::PgPool;

/// A leased queue table.
#[derive(Debug, Clone, Copy)]
pub enum Table {
    Submissions,
    WebhookDeliveries,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Submissions => "submissions",
            Table::WebhookDeliveries => "webhook_deliveries",
        }
    }

    /// The rows in the queue: an `unknown` submission waits there too, looked up again with
    /// back-off (the same predicate as the partial index, which the count then uses).
    fn queued(self) -> &'static str {
        match self {
            Table::Submissions => "state IN ('pending', 'unknown')",
            Table::WebhookDeliveries => "state = 'pending'",
        }
    }

    /// What makes a held row claimable again at once: submissions keep their lease end in
    /// `run_at`, deliveries in `lease_expires_at` (see their migrations).
    fn expire_now(self) -> &'static str {
        match self {
            Table::Submissions => "run_at = now()",
            Table::WebhookDeliveries => "lease_expires_at = now()",
        }
    }
}

/// Make held rows due again at once (shutdown), so another scheduler need not wait for the
/// lease to run out. Only rows still held by the given tokens are touched; the next claim
/// records the interrupted attempt as `abandoned`.
pub async fn release(db: &PgPool, table: Table, held: &[(i64, i64)]) -> sqlx::Result<u64> {
    let (ids, tokens): (Vec<i64>, Vec<i64>) = held.iter().copied().unzip();
    let r = sqlx::query(&format!(
        "UPDATE {} q SET {}
           FROM unnest($1::bigint[], $2::bigint[]) AS h(id, token)
          WHERE q.id = h.id AND q.lease_token = h.token",
        table.name(),
        table.expire_now()
    ))
    .bind(&ids)
    .bind(&tokens)
    .execute(db)
    .await?;
    Ok(r.rows_affected())
}

/// Queued rows: (due now, waiting for a retry, held by a scheduler).
pub async fn depth(db: &PgPool, table: Table) -> sqlx::Result<(i64, i64, i64)> {
    sqlx::query_as(&format!(
        "SELECT count(*) FILTER (WHERE lease_token IS NULL AND run_at <= now()),
                count(*) FILTER (WHERE lease_token IS NULL AND run_at > now()),
                count(*) FILTER (WHERE lease_token IS NOT NULL)
           FROM {} WHERE {}",
        table.name(),
        table.queued()
    ))
    .fetch_one(db)
    .await
}
