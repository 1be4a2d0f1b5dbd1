//! What every leased queue table shares (`submissions`, `webhook_queue`: `run_at`,
//! `lease_token`, keyed by organization and id): giving claimed rows back and counting the
//! queue.

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
            // A pending delivery's queue row (migrations/…_webhook_queue.sql).
            Table::WebhookDeliveries => "webhook_queue",
        }
    }

    /// The rows in the queue: an `unknown` submission waits there too, looked up again with
    /// back-off (the same predicate as the partial index, which the count then uses); every
    /// row of `webhook_queue` is a pending delivery.
    fn queued(self) -> &'static str {
        match self {
            Table::Submissions => "state IN ('pending', 'unknown')",
            Table::WebhookDeliveries => "true",
        }
    }

    /// Since when a row has been claimable: submissions keep their lease end in `run_at`,
    /// deliveries in `lease_expires_at` (a held one is not claimable before it).
    fn due_since(self) -> &'static str {
        match self {
            Table::Submissions => "run_at",
            Table::WebhookDeliveries => "CASE WHEN lease_token IS NULL THEN run_at ELSE lease_expires_at END",
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
pub async fn release(db: &PgPool, table: Table, held: &[Lease]) -> sqlx::Result<u64> {
    let (orgs, ids, tokens) = Lease::columns(held);
    let r = sqlx::query(&format!(
        "UPDATE {} q SET {}
           FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS h(org_id, id, token)
          WHERE q.org_id = h.org_id AND q.id = h.id AND q.lease_token = h.token",
        table.name(),
        table.expire_now()
    ))
    .bind(&orgs)
    .bind(&ids)
    .bind(&tokens)
    .execute(db)
    .await?;
    Ok(r.rows_affected())
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
    sqlx::query_as(&format!(
        "SELECT count(*) FILTER (WHERE lease_token IS NULL AND run_at <= now()) AS ready,
                count(*) FILTER (WHERE lease_token IS NULL AND run_at > now()) AS waiting,
                count(*) FILTER (WHERE lease_token IS NOT NULL) AS leased,
                COALESCE(floor(extract(epoch FROM now() - min({due}) FILTER (WHERE {due} <= now()))), 0)::bigint
                    AS oldest_due_secs
           FROM {} WHERE {}",
        table.name(),
        table.queued(),
        due = table.due_since()
    ))
    .fetch_one(db)
    .await
}
