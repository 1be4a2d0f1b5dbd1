//! The webhook delivery queue's statements: claim a batch, record a batch of attempts, fail
//! what is left of deactivated subscriptions (releasing and depth are in `leases`). Schema and rules:
//! migrations/…_webhooks.sql.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgPool;

/// `webhook_emit` NOTIFYs here when it creates deliveries (see the migration).
pub const CHANNEL: &str = "tns_webhooks";

/// A claimed delivery with what is needed to send it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Claimed {
    pub id: i64,
    pub org_id: i64,
    pub event_id: i64,
    pub event_type: String,
    pub subscription_id: i64,
    /// Claims so far, this one included.
    pub attempts: i32,
    pub lease_token: i64,
    pub endpoint_url: String,
    pub secret_sealed: Vec<u8>,
    /// False when the subscription was deactivated or deleted after the event: not sent.
    pub active: bool,
    pub body: String,
}

/// Claim up to `n` due deliveries for `lease`, oldest due first. A due row whose lease ran
/// out was claimed by a scheduler that stopped: recorded as an `abandoned` attempt.
pub async fn claim(db: &PgPool, n: usize, lease: Duration, token: i64) -> sqlx::Result<Vec<Claimed>> {
    sqlx::query_as(
        "WITH due AS (
            SELECT id, org_id, lease_token AS old_token, leased_at AS old_leased_at
              FROM webhook_deliveries
             WHERE state = 'pending' AND run_at <= now() AND (lease_token IS NULL OR lease_expires_at <= now())
             ORDER BY run_at
             LIMIT $1
               FOR UPDATE SKIP LOCKED
         ), abandoned AS (
            INSERT INTO webhook_attempts (delivery_id, org_id, started_at, outcome, error)
            SELECT id, org_id, old_leased_at, 'abandoned', 'the scheduler sending it stopped before recording the outcome'
              FROM due WHERE old_token IS NOT NULL
         ), claimed AS (
            UPDATE webhook_deliveries d
               SET lease_expires_at = now() + make_interval(secs => $2), lease_token = $3, leased_at = now(),
                   attempts = d.attempts + 1
              FROM due
             WHERE d.id = due.id
            RETURNING d.id, d.org_id, d.event_id, d.event_type, d.subscription_id, d.attempts, d.lease_token
         )
         SELECT c.*, s.endpoint_url, s.secret_sealed, s.active, e.body
           FROM claimed c
           JOIN webhook_subscriptions s ON s.id = c.subscription_id
           JOIN webhook_events e ON e.id = c.event_id",
    )
    .bind(n as i64)
    .bind(lease.as_secs_f64())
    .bind(token)
    .fetch_all(db)
    .await
}

/// One attempt's outcome, as recorded.
#[derive(Debug, Clone)]
pub struct Attempted {
    pub id: i64,
    pub lease_token: i64,
    /// `delivered`, `rejected`, `timeout`, `unreachable`, `refused` or `skipped`.
    pub outcome: &'static str,
    pub response_status: Option<i32>,
    pub error: Option<String>,
    pub started_at: DateTime<Utc>,
    pub duration_ms: i32,
    /// When to try again; `None` with a failed outcome means the delivery has failed for good.
    pub retry_at: Option<DateTime<Utc>>,
}

/// A recorded delivery's new state.
#[derive(Debug, sqlx::FromRow)]
pub struct Recorded {
    pub id: i64,
    pub state: String,
}

/// Record a batch of attempts in one statement: the deliveries (only those still held by this
/// token), their attempt rows, and each subscription's health: a success clears
/// `failing_since`; a failure sets it if unset, and deactivates the subscription (reason
/// `failing`) once it has gone `disable_after` without a success. Returns the deliveries'
/// new states and the ids of subscriptions this batch deactivated.
pub async fn record(
    db: &PgPool,
    batch: &[Attempted],
    disable_after: Duration,
) -> sqlx::Result<(Vec<Recorded>, Vec<i64>)> {
    fn col<T>(batch: &[Attempted], f: impl Fn(&Attempted) -> T) -> Vec<T> {
        batch.iter().map(f).collect()
    }
    let rows: Vec<(Option<i64>, Option<String>, Option<i64>)> = sqlx::query_as(
        "WITH r AS (
            SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::int[], $5::text[], $6::timestamptz[],
                                 $7::int[], $8::timestamptz[])
                AS r(id, token, outcome, status, error, started_at, duration_ms, retry_at)
         ), d AS (
            UPDATE webhook_deliveries d
               SET state = CASE WHEN r.outcome = 'delivered' THEN 'delivered'
                                WHEN r.retry_at IS NULL THEN 'failed' ELSE 'pending' END,
                   run_at = COALESCE(r.retry_at, d.run_at),
                   lease_token = NULL,
                   last_response_status = r.status,
                   last_error = r.error,
                   finished_at = CASE WHEN r.outcome = 'delivered' OR r.retry_at IS NULL THEN now() END
              FROM r
             WHERE d.id = r.id AND d.lease_token = r.token
            RETURNING d.id, d.org_id, d.subscription_id, d.state
         ), attempts AS (
            INSERT INTO webhook_attempts (delivery_id, org_id, started_at, duration_ms, outcome, response_status, error)
            SELECT r.id, d.org_id, r.started_at, r.duration_ms, r.outcome, r.status, r.error FROM r JOIN d ON d.id = r.id
         ), health AS (
            SELECT d.subscription_id, bool_or(r.outcome = 'delivered') AS ok, min(r.started_at) AS first_failure
              FROM d JOIN r ON r.id = d.id
             WHERE r.outcome <> 'skipped'
             GROUP BY d.subscription_id
         ), subs AS (
            UPDATE webhook_subscriptions s
               SET last_success_at = CASE WHEN h.ok THEN now() ELSE s.last_success_at END,
                   failing_since = CASE WHEN h.ok THEN NULL ELSE COALESCE(s.failing_since, h.first_failure) END,
                   active = s.active AND (h.ok OR COALESCE(s.failing_since, h.first_failure)
                                                  > now() - make_interval(secs => $9)),
                   inactive_reason = CASE WHEN s.active AND NOT h.ok AND COALESCE(s.failing_since, h.first_failure)
                                               <= now() - make_interval(secs => $9)
                                          THEN 'failing' ELSE s.inactive_reason END,
                   updated_at = now()
              FROM health h
             -- A healthy subscription's row is rewritten at most once a minute (last_success_at
             -- is that precise), not once per batch.
             WHERE s.id = h.subscription_id
               AND (NOT h.ok OR s.failing_since IS NOT NULL OR s.last_success_at IS NULL
                    OR s.last_success_at < now() - interval '1 minute')
            RETURNING s.id, s.active, s.inactive_reason
         )
         SELECT d.id, d.state, NULL::bigint FROM d
         UNION ALL
         SELECT NULL, NULL, subs.id FROM subs WHERE NOT subs.active AND subs.inactive_reason = 'failing'",
    )
    .bind(col(batch, |a| a.id))
    .bind(col(batch, |a| a.lease_token))
    .bind(col(batch, |a| a.outcome))
    .bind(col(batch, |a| a.response_status))
    .bind(col(batch, |a| a.error.clone()))
    .bind(col(batch, |a| a.started_at))
    .bind(col(batch, |a| a.duration_ms))
    .bind(col(batch, |a| a.retry_at))
    .bind(disable_after.as_secs_f64())
    .fetch_all(db)
    .await?;
    let mut recorded = vec![];
    let mut deactivated = vec![];
    for (id, state, sub) in rows {
        match (id, state, sub) {
            (Some(id), Some(state), _) => recorded.push(Recorded { id, state }),
            (_, _, Some(sub)) => deactivated.push(sub),
            _ => {}
        }
    }
    Ok((recorded, deactivated))
}

/// Fail the pending deliveries of subscriptions that are no longer active (deactivated for
/// failing, by request, or deleted), except those a scheduler holds right now: recording
/// their attempt settles them. Returns how many were failed.
pub async fn fail_inactive(db: impl sqlx::PgExecutor<'_>, subscriptions: &[i64]) -> sqlx::Result<u64> {
    let r = sqlx::query(
        "UPDATE webhook_deliveries d
            SET state = 'failed', finished_at = now(), last_error = 'the subscription is no longer active'
           FROM webhook_subscriptions s
          WHERE s.id = ANY($1) AND NOT s.active AND d.subscription_id = s.id
            AND d.state = 'pending' AND d.lease_token IS NULL",
    )
    .bind(subscriptions)
    .execute(db)
    .await?;
    Ok(r.rows_affected())
}
