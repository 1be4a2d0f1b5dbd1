//! What every leased queue shares: the lease a claimed row is held by, releasing held rows and
//! counting the queue. The submissions keep the lease in the row (`run_at`, `lease_token`); the
//! webhook deliveries in one row per claim, so their queue's statements are its own
//! (`webhooks::queue`).

use sqlx::PgPool;

/// A claimed row as its claimer holds it: which row (organization and id: deliveries are keyed
/// by both) and the claim's lease token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub org: i64,
    pub id: i64,
    pub token: i64,
}

impl Lease {
    /// The leases' columns, for `unnest(orgs, ids, tokens)`.
    pub fn columns(leases: &[Lease]) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
        let col = |f: fn(&Lease) -> i64| leases.iter().map(f).collect();
        (col(|l| l.org), col(|l| l.id), col(|l| l.token))
    }
}

/// A leased queue.
#[derive(Debug, Clone, Copy)]
pub enum Table {
    Submissions,
    WebhookDeliveries,
}

/// Make held rows due again at once (shutdown), so another scheduler need not wait for the
/// lease to run out. Only rows still held by the given tokens are touched; the next claim
/// records the interrupted attempt as `abandoned`.
pub async fn release(db: &PgPool, table: Table, held: &[Lease]) -> sqlx::Result<u64> {
    match table {
        // A submission's lease ends at its `run_at` (see its migrations).
        Table::Submissions => {
            let (orgs, ids, tokens) = Lease::columns(held);
            let r = sqlx::query(
                "UPDATE submissions q SET run_at = now()
                   FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS h(org_id, id, token)
                  WHERE q.org_id = h.org_id AND q.id = h.id AND q.lease_token = h.token",
            )
            .bind(&orgs)
            .bind(&ids)
            .bind(&tokens)
            .execute(db)
            .await?;
            Ok(r.rows_affected())
        }
        Table::WebhookDeliveries => crate::webhooks::queue::release(db, held).await,
    }
}

/// A queue's rows now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct Depth {
    /// Due now and not held.
    pub ready: i64,
    /// Waiting for a retry.
    pub waiting: i64,
    /// Held by a scheduler (or by one that stopped, until its lease runs out).
    pub leased: i64,
    /// Seconds the longest-due row has been due without being taken (0 when none): ready rows,
    /// and held ones whose lease ran out. A queue that is worked keeps this near zero.
    pub oldest_due_secs: i64,
}

impl Depth {
    pub fn total(&self) -> i64 {
        self.ready + self.waiting + self.leased
    }
}

pub async fn depth(db: &PgPool, table: Table) -> sqlx::Result<Depth> {
    match table {
        // An `unknown` submission waits in the queue too, looked up again with back-off (the
        // same predicate as the partial index, which the count then uses); a held one is due
        // again when its lease ends, at its `run_at`.
        Table::Submissions => {
            sqlx::query_as(
                "SELECT count(*) FILTER (WHERE lease_token IS NULL AND run_at <= now()) AS ready,
                        count(*) FILTER (WHERE lease_token IS NULL AND run_at > now()) AS waiting,
                        count(*) FILTER (WHERE lease_token IS NOT NULL) AS leased,
                        COALESCE(floor(extract(epoch FROM now() - min(run_at) FILTER (WHERE run_at <= now()))), 0)::bigint
                            AS oldest_due_secs
                   FROM submissions WHERE state IN ('pending', 'unknown')",
            )
            .fetch_one(db)
            .await
        }
        Table::WebhookDeliveries => crate::webhooks::queue::depth(db).await,
    }
}
