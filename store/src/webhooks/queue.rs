//! The webhook delivery queue's statements: claim a batch, record a batch of attempts, give
//! back what was not sent, fail what is left of deactivated subscriptions (releasing and depth
//! are in `leases`). Schema and rules: migrations/…_webhooks.sql, …_webhook_queue_tuning.sql
//! and …_webhook_hardening.sql.

use std::{collections::BTreeMap, time::Duration};
use tns_core::ids::OrgId;

use crate::leases::Lease;

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tns_core::domain::kinds::DeliveryOutcome;

/// `webhook_emit` NOTIFYs here when it creates deliveries (see the migration).
pub const CHANNEL: &str = "tns_webhooks";

/// A position in an organization's part of the queue, `(run_at, id)`: a claim takes that
/// organization's due rows after it.
pub type Cursor = (DateTime<Utc>, i64);

/// Where a claim starts and how much it may take.
#[derive(Debug, Clone)]
pub struct ClaimFrom {
    /// Per organization, the last row an earlier claim took; organizations without one are
    /// scanned from their first row.
    pub cursors: Vec<(i64, Cursor)>,
    /// Per organization, how many more deliveries the claiming scheduler may hold;
    /// organizations not listed may take `room`.
    pub rooms: Vec<(i64, usize)>,
    pub room: usize,
    /// The organization served last: the claim's turns start after it.
    pub after_org: i64,
}

impl ClaimFrom {
    /// Every organization from its first row, without limits.
    pub fn start() -> ClaimFrom {
        ClaimFrom { cursors: vec![], rooms: vec![], room: i32::MAX as usize, after_org: 0 }
    }
}

/// A claimed delivery with what is needed to send it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Claimed {
    pub id: i64,
    /// Where the leased row version is (its `ctid`, as text): recording finds it there without
    /// an index lookup. Nothing else changes a leased row, so it stays there; if it has moved
    /// anyway, the lease check fails and the delivery is treated as lost (sent again later).
    pub tid: String,
    /// With `id`, its place in its organization's part of the queue (see [`Cursor`]).
    pub run_at: DateTime<Utc>,
    pub org_id: OrgId,
    pub event_id: i64,
    pub event_type: String,
    pub subscription_id: i64,
    /// Claims so far, this one included.
    pub attempts: i32,
    pub lease_token: i64,
    /// Place in the claim's fair order.
    pub ord: i64,
    /// How many rows the claim could take of this organization, and how many due ones it
    /// found (fewer: it reached the end of the organization's due rows).
    pub lim: i32,
    pub found: i64,
    pub endpoint_url: String,
    pub secret_sealed: Vec<u8>,
    /// The secret a rotation replaced, while it still signs, and until when.
    pub previous_secret_sealed: Option<Vec<u8>>,
    pub previous_secret_until: Option<DateTime<Utc>>,
    /// False when the subscription was deactivated or deleted after the event: not sent.
    pub active: bool,
    pub body: String,
}

impl Claimed {
    pub fn lease(&self) -> Lease {
        Lease { org: self.org_id.get(), id: self.id, token: self.lease_token }
    }
}

/// Claim up to `n` due deliveries for `lease`, fairly across organizations: the batch takes
/// each organization's oldest due delivery before anyone's second (turns starting after
/// `from.after_org`), so one tenant's backlog delays another's delivery by a claim at most.
/// Each organization contributes at most its share of `n` and its room (what the scheduler may
/// still hold of it), so a claim may return fewer than `n` while work remains. The answer is in
/// the fair order.
///
/// The organizations with pending rows are found by a loose index scan of the queue index (one
/// probe each, however long its backlog); each is read after its cursor (see
/// `…_webhook_queue_tuning.sql`: finished rows stay in the index as dead entries until VACUUM,
/// and a claim that always started at an organization's oldest row would step over all of
/// them). A delivery tried before moves its latest attempt from the row to `webhook_attempts`;
/// a due row whose lease ran out was claimed by a scheduler that stopped: recorded as an
/// `abandoned` attempt after it.
pub async fn claim(db: &PgPool, n: usize, lease: Duration, token: i64, from: &ClaimFrom) -> sqlx::Result<Vec<Claimed>> {
    let room = |r: usize| i32::try_from(r).unwrap_or(i32::MAX);
    let mut claimed: Vec<Claimed> = sqlx::query_as(
        "WITH RECURSIVE orgs(org_id) AS (
            -- Downwards, so each probe lands on an organization's newest entry: its oldest ones
            -- are where finished deliveries leave dead entries behind.
            (SELECT org_id FROM webhook_deliveries WHERE state = 'pending' ORDER BY org_id DESC LIMIT 1)
            UNION ALL
            SELECT (SELECT d.org_id FROM webhook_deliveries d
                     WHERE d.state = 'pending' AND d.org_id < orgs.org_id ORDER BY d.org_id DESC LIMIT 1)
              FROM orgs WHERE orgs.org_id IS NOT NULL
         ), pos AS (
            SELECT o.org_id, COALESCE(c.run_at, '-infinity') AS after_at, COALESCE(c.id, 0) AS after_id,
                   COALESCE(r.room, $9) AS room
              FROM orgs o
              LEFT JOIN unnest($4::bigint[], $5::timestamptz[], $6::bigint[]) AS c(org_id, run_at, id) USING (org_id)
              LEFT JOIN unnest($7::bigint[], $8::int[]) AS r(org_id, room) USING (org_id)
             WHERE o.org_id IS NOT NULL
         ), ready AS MATERIALIZED (
            -- Organizations with a claimable row after their cursor and room for it: the share
            -- of each is counted among these only (an organization whose rows all wait for a
            -- retry must not shrink everyone's share).
            SELECT pos.* FROM pos
             WHERE pos.room > 0
               AND EXISTS (SELECT 1 FROM webhook_deliveries w
                            WHERE w.state = 'pending' AND w.org_id = pos.org_id
                              AND (w.run_at, w.id) > (pos.after_at, pos.after_id) AND w.run_at <= now()
                              AND (w.lease_token IS NULL OR w.lease_expires_at <= now()))
         ), due AS MATERIALIZED (
            SELECT d.*, l.lim FROM ready
             CROSS JOIN LATERAL (
                SELECT LEAST(ready.room, GREATEST(1, ceil($1::numeric / (SELECT count(*) FROM ready)))::int) AS lim
             ) l
             CROSS JOIN LATERAL (
                SELECT w.ctid AS tid, w.id, w.org_id, w.run_at, w.lease_token AS old_token,
                       w.leased_at AS old_leased_at, w.attempt_started_at, w.attempt_duration_ms, w.attempt_outcome,
                       w.attempt_status, w.attempt_error
                  FROM webhook_deliveries w
                 WHERE w.state = 'pending' AND w.org_id = ready.org_id
                   AND (w.run_at, w.id) > (ready.after_at, ready.after_id) AND w.run_at <= now()
                   AND (w.lease_token IS NULL OR w.lease_expires_at <= now())
                 ORDER BY w.run_at, w.id
                 LIMIT l.lim
                   FOR UPDATE SKIP LOCKED
             ) d
         ), chosen AS (
            SELECT * FROM (
                SELECT ranked.*, row_number() OVER (ORDER BY rn, org_id <= $10, org_id) AS ord,
                       count(*) OVER (PARTITION BY org_id) AS found
                  FROM (SELECT due.*, row_number() OVER (PARTITION BY org_id ORDER BY run_at, id) AS rn FROM due) ranked
            ) fair
             WHERE ord <= $1
         ), history AS (
            INSERT INTO webhook_attempts (delivery_id, org_id, started_at, duration_ms, outcome, response_status, error)
            SELECT id, org_id, started_at, duration_ms, outcome, status, error FROM (
                SELECT id, org_id, attempt_started_at AS started_at, attempt_duration_ms AS duration_ms,
                       attempt_outcome AS outcome, attempt_status AS status, attempt_error AS error, 1 AS k
                  FROM chosen WHERE attempt_outcome IS NOT NULL
                UNION ALL
                SELECT id, org_id, old_leased_at, NULL, 'abandoned', NULL,
                       'abandoned: the scheduler sending it stopped before recording the outcome', 2
                  FROM chosen WHERE old_token IS NOT NULL
            ) moved
            ORDER BY id, k
         ), claimed AS (
            UPDATE webhook_deliveries d
               SET lease_expires_at = now() + make_interval(secs => $2), lease_token = $3, leased_at = now(),
                   attempts = d.attempts + 1, attempt_started_at = NULL, attempt_duration_ms = NULL,
                   attempt_outcome = NULL, attempt_status = NULL, attempt_error = NULL
              FROM chosen
             WHERE d.ctid = chosen.tid
            RETURNING d.id, d.ctid::text AS tid, d.run_at, d.org_id, d.event_id, d.event_type, d.subscription_id,
                      d.attempts, d.lease_token, chosen.ord, chosen.lim, chosen.found
         )
         SELECT c.*, s.endpoint_url, s.secret_sealed,
                CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_sealed END
                    AS previous_secret_sealed,
                CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_expires_at END
                    AS previous_secret_until,
                s.active, e.body
           FROM claimed c
           JOIN webhook_subscriptions s ON s.id = c.subscription_id AND s.org_id = c.org_id
           JOIN webhook_events e ON e.id = c.event_id AND e.org_id = c.org_id",
    )
    .bind(n as i64)
    .bind(lease.as_secs_f64())
    .bind(token)
    .bind(from.cursors.iter().map(|c| c.0).collect::<Vec<i64>>())
    .bind(from.cursors.iter().map(|c| c.1 .0).collect::<Vec<DateTime<Utc>>>())
    .bind(from.cursors.iter().map(|c| c.1 .1).collect::<Vec<i64>>())
    .bind(from.rooms.iter().map(|r| r.0).collect::<Vec<i64>>())
    .bind(from.rooms.iter().map(|r| room(r.1)).collect::<Vec<i32>>())
    .bind(room(from.room))
    .bind(from.after_org)
    .fetch_all(db)
    .await?;
    claimed.sort_by_key(|c| c.ord);
    Ok(claimed)
}

/// Give back held deliveries that were not sent (held too long to send within their lease):
/// due again at once, and the claim that did not lead to an attempt is not counted. Only rows
/// still held by the given tokens are touched. Returns how many were given back.
pub async fn give_back(db: &PgPool, held: &[Lease]) -> sqlx::Result<u64> {
    let (orgs, ids, tokens) = Lease::columns(held);
    let r = sqlx::query(
        "UPDATE webhook_deliveries d SET lease_token = NULL, attempts = d.attempts - 1
           FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS h(org_id, id, token)
          WHERE d.org_id = h.org_id AND d.id = h.id AND d.lease_token = h.token",
    )
    .bind(&orgs)
    .bind(&ids)
    .bind(&tokens)
    .execute(db)
    .await?;
    Ok(r.rows_affected())
}

/// One attempt's outcome, as recorded.
#[derive(Debug, Clone)]
pub struct Attempted {
    pub id: i64,
    /// See [`Claimed::tid`].
    pub tid: String,
    pub lease_token: i64,
    pub subscription_id: i64,
    /// `delivered`, `rejected`, `timeout`, `unreachable`, `refused` or `skipped`.
    pub outcome: DeliveryOutcome,
    pub response_status: Option<i32>,
    pub error: Option<String>,
    pub started_at: DateTime<Utc>,
    pub duration_ms: i32,
    /// When to try again; `None` with a failed outcome means the delivery has failed for good.
    pub retry_at: Option<DateTime<Utc>>,
}

/// What a batch says about each subscription it touched (`skipped` attempts say nothing):
/// whether any delivery succeeded, and when the first failed attempt started. In subscription
/// order, so concurrent recorders lock subscription rows in the same order.
fn health(batch: &[&Attempted]) -> BTreeMap<i64, (bool, Option<DateTime<Utc>>)> {
    let mut h: BTreeMap<i64, (bool, Option<DateTime<Utc>>)> = BTreeMap::new();
    for a in batch.iter().filter(|a| a.outcome != DeliveryOutcome::Skipped) {
        let (ok, first_failure) = h.entry(a.subscription_id).or_default();
        if a.outcome == DeliveryOutcome::Delivered {
            *ok = true;
        } else if first_failure.is_none_or(|f| a.started_at < f) {
            *first_failure = Some(a.started_at);
        }
    }
    h
}

/// Record a batch of attempts in one statement: the deliveries (only those still held by this
/// token) with their attempt, and each subscription's health: a success clears
/// `failing_since`; a failure sets it if unset, and deactivates the subscription (reason
/// `failing`) once it has gone `disable_after` without a success. Returns the ids of the
/// deliveries recorded and of the subscriptions this batch deactivated.
pub async fn record(db: &PgPool, batch: &[&Attempted], disable_after: Duration) -> sqlx::Result<(Vec<i64>, Vec<i64>)> {
    fn col<'a, T>(batch: &[&'a Attempted], f: impl Fn(&'a Attempted) -> T) -> Vec<T> {
        batch.iter().map(|a| f(a)).collect()
    }
    let health = health(batch);
    let rows: Vec<(Option<i64>, Option<i64>)> = sqlx::query_as(
        "WITH d AS (
            UPDATE webhook_deliveries d
               SET state = CASE WHEN r.outcome = 'delivered' THEN 'delivered'
                                WHEN r.retry_at IS NULL THEN 'failed' ELSE 'pending' END,
                   run_at = COALESCE(r.retry_at, d.run_at),
                   lease_token = NULL,
                   last_response_status = r.status,
                   last_error = r.error,
                   finished_at = CASE WHEN r.outcome = 'delivered' OR r.retry_at IS NULL THEN now() END,
                   attempt_started_at = r.started_at, attempt_duration_ms = r.duration_ms, attempt_outcome = r.outcome,
                   attempt_status = r.status, attempt_error = r.error
              FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::int[], $5::text[], $6::timestamptz[],
                          $7::int[], $8::timestamptz[], $13::tid[])
                   AS r(id, token, outcome, status, error, started_at, duration_ms, retry_at, tid)
             WHERE d.ctid = r.tid AND d.id = r.id AND d.lease_token = r.token
            RETURNING d.id
         ), subs AS (
            UPDATE webhook_subscriptions s
               SET last_success_at = CASE WHEN h.ok THEN now() ELSE s.last_success_at END,
                   failing_since = CASE WHEN h.ok THEN NULL ELSE COALESCE(s.failing_since, h.first_failure) END,
                   active = s.active AND (h.ok OR COALESCE(s.failing_since, h.first_failure)
                                                  > now() - make_interval(secs => $12)),
                   inactive_reason = CASE WHEN s.active AND NOT h.ok AND COALESCE(s.failing_since, h.first_failure)
                                               <= now() - make_interval(secs => $12)
                                          THEN 'failing' ELSE s.inactive_reason END,
                   updated_at = now()
              FROM unnest($9::bigint[], $10::bool[], $11::timestamptz[]) AS h(subscription_id, ok, first_failure)
             -- A healthy subscription's row is rewritten at most once a minute (last_success_at
             -- is that precise), not once per batch.
             WHERE s.id = h.subscription_id
               AND (NOT h.ok OR s.failing_since IS NOT NULL OR s.last_success_at IS NULL
                    OR s.last_success_at < now() - interval '1 minute')
            RETURNING s.id, s.active, s.inactive_reason
         )
         SELECT d.id, NULL::bigint FROM d
         UNION ALL
         SELECT NULL, subs.id FROM subs WHERE NOT subs.active AND subs.inactive_reason = 'failing'",
    )
    .bind(col(batch, |a| a.id))
    .bind(col(batch, |a| a.lease_token))
    .bind(col(batch, |a| a.outcome.as_str()))
    .bind(col(batch, |a| a.response_status))
    .bind(col(batch, |a| a.error.as_deref()))
    .bind(col(batch, |a| a.started_at))
    .bind(col(batch, |a| a.duration_ms))
    .bind(col(batch, |a| a.retry_at))
    .bind(health.keys().copied().collect::<Vec<i64>>())
    .bind(health.values().map(|h| h.0).collect::<Vec<bool>>())
    .bind(health.values().map(|h| h.1).collect::<Vec<Option<DateTime<Utc>>>>())
    .bind(disable_after.as_secs_f64())
    .bind(col(batch, |a| a.tid.as_str()))
    .fetch_all(db)
    .await?;
    let mut recorded = vec![];
    let mut deactivated = vec![];
    for (id, sub) in rows {
        match (id, sub) {
            (Some(id), _) => recorded.push(id),
            (_, Some(sub)) => deactivated.push(sub),
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
