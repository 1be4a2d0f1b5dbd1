//! Webhook subscriptions, delivery records and test events, scoped by organization. Events
//! themselves are written by the `webhook_emit` SQL function (see the migration) inside the
//! change that causes them; the scheduler's delivery statements live in [`queue`].

pub mod queue;

use serde::Serialize;
use sqlx::{PgConnection, PgPool, Postgres, QueryBuilder};
use tns_core::ids::{OrgId, WebhookSubscriptionId};

use crate::pagination::{Keyed, Page};
use tns_core::domain::kinds::{AnyEventType, DeliveryStatus, EventType};

/// Subscriptions an organization may keep (deleted ones do not count).
pub const MAX_SUBSCRIPTIONS: i64 = 50;

/// A subscription, not deleted (its secrets are never read back).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Subscription {
    pub id: WebhookSubscriptionId,
    pub event_type: EventType,
    pub endpoint_url: String,
    /// 1 or 0, as the API has always shown it.
    pub active: i32,
    pub inactive_reason: Option<String>,
    pub failing_since: Option<chrono::DateTime<chrono::Utc>>,
    pub last_success_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Only while the previous secret still signs.
    pub previous_secret_expires_at: Option<chrono::DateTime<chrono::Utc>>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

impl Keyed for Subscription {
    fn key(&self) -> i64 {
        self.id.get()
    }
}

const SUB_COLUMNS: &str = "id, event_type, endpoint_url, active::int AS active, inactive_reason, failing_since, \
     last_success_at, CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END \
     AS previous_secret_expires_at, created_at, updated_at";

/// How long a rotated-out secret keeps signing beside the new one.
pub const PREVIOUS_SECRET_HOURS: i32 = 24;

/// Create a subscription; `None` when the organization already has [`MAX_SUBSCRIPTIONS`]. The
/// organization's row is locked for the count and the insert, so concurrent creates are
/// counted one after the other (each counting alone, two creates at 49 would make 51). The
/// lock does not block what only references the organization (`FOR NO KEY UPDATE`).
pub async fn insert(
    db: &PgPool,
    org: OrgId,
    event_type: EventType,
    endpoint_url: &str,
    secret_sealed: &[u8],
) -> sqlx::Result<Option<Subscription>> {
    let mut tx = db.begin().await?;
    sqlx::query("SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE").bind(org).execute(&mut *tx).await?;
    let sub = sqlx::query_as(&format!(
        "INSERT INTO webhook_subscriptions (org_id, event_type, endpoint_url, secret_sealed)
         SELECT $1, $2, $3, $4
          WHERE (SELECT count(*) FROM webhook_subscriptions WHERE org_id = $1 AND deleted_at IS NULL) < $5
         RETURNING {SUB_COLUMNS}"
    ))
    .bind(org)
    .bind(event_type)
    .bind(endpoint_url)
    .bind(secret_sealed)
    .bind(MAX_SUBSCRIPTIONS)
    .fetch_optional(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(sub)
}

/// Replace a subscription's secret: the current one becomes the previous one, signing beside
/// the new one for [`PREVIOUS_SECRET_HOURS`] (a previous one still in its hours is dropped: at
/// most two sign). `None` when the organization has no such subscription.
pub async fn rotate_secret(
    db: impl sqlx::PgExecutor<'_>,
    org: OrgId,
    id: WebhookSubscriptionId,
    secret_sealed: &[u8],
) -> sqlx::Result<Option<Subscription>> {
    sqlx::query_as(&format!(
        "UPDATE webhook_subscriptions
            SET previous_secret_sealed = secret_sealed,
                previous_secret_expires_at = now() + make_interval(hours => $4),
                secret_sealed = $3, updated_at = now()
          WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL
         RETURNING {SUB_COLUMNS}"
    ))
    .bind(org)
    .bind(id)
    .bind(secret_sealed)
    .bind(PREVIOUS_SECRET_HOURS)
    .fetch_optional(db)
    .await
}

pub async fn list(db: &PgPool, org: OrgId, page: &Page) -> sqlx::Result<Vec<Subscription>> {
    let mut qb = QueryBuilder::<Postgres>::new(format!(
        "SELECT {SUB_COLUMNS} FROM webhook_subscriptions WHERE deleted_at IS NULL AND org_id = "
    ));
    qb.push_bind(org);
    page.push(&mut qb, "id");
    qb.build_query_as().fetch_all(db).await
}

pub async fn get(
    db: impl sqlx::PgExecutor<'_>,
    org: OrgId,
    id: WebhookSubscriptionId,
) -> sqlx::Result<Option<Subscription>> {
    sqlx::query_as(&format!(
        "SELECT {SUB_COLUMNS} FROM webhook_subscriptions WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL"
    ))
    .bind(org)
    .bind(id)
    .fetch_optional(db)
    .await
}

/// Change a subscription: each of `event_type`, `endpoint_url`, `active` that is given, in one
/// statement (no read-then-write race between concurrent changes). Deactivating fails its
/// waiting deliveries in the same transaction; reactivating starts it afresh (no failure streak).
pub async fn update(
    tx: &mut PgConnection,
    org: OrgId,
    id: WebhookSubscriptionId,
    event_type: Option<EventType>,
    endpoint_url: Option<&str>,
    active: Option<bool>,
) -> sqlx::Result<Option<Subscription>> {
    let sub: Option<Subscription> = sqlx::query_as(&format!(
        "UPDATE webhook_subscriptions
            SET event_type = COALESCE($3, event_type), endpoint_url = COALESCE($4, endpoint_url),
                inactive_reason = CASE WHEN COALESCE($5, active) THEN NULL
                                       WHEN active THEN 'by request' ELSE inactive_reason END,
                failing_since = CASE WHEN $5 AND NOT active THEN NULL ELSE failing_since END,
                active = COALESCE($5, active), updated_at = now()
          WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL
         RETURNING {SUB_COLUMNS}"
    ))
    .bind(org)
    .bind(id)
    .bind(event_type)
    .bind(endpoint_url)
    .bind(active)
    .fetch_optional(&mut *tx)
    .await?;
    if sub.as_ref().is_some_and(|s| s.active == 0) {
        queue::fail_inactive(&mut *tx, &[id.get()]).await?;
    }
    Ok(sub)
}

/// Delete a subscription: it stops at once and its waiting deliveries fail; the row stays
/// (inactive, hidden) so delivery records still name it.
pub async fn delete(tx: &mut PgConnection, org: OrgId, id: WebhookSubscriptionId) -> sqlx::Result<bool> {
    let deleted = sqlx::query(
        "UPDATE webhook_subscriptions SET deleted_at = now(), active = false, inactive_reason = 'deleted',
                updated_at = now()
          WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL",
    )
    .bind(org)
    .bind(id)
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    if deleted {
        queue::fail_inactive(&mut *tx, &[id.get()]).await?;
    }
    Ok(deleted)
}

/// Emit a `test` event with `data` to one subscription, or to every active one of the
/// organization. Returns the number of deliveries created.
pub async fn emit_test(
    db: &PgPool,
    org: OrgId,
    subscription: Option<WebhookSubscriptionId>,
    data: &impl Serialize,
) -> sqlx::Result<i32> {
    let data = serde_json::to_value(data).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    sqlx::query_scalar("SELECT webhook_emit(ARRAY[$1::bigint], ARRAY['test'], ARRAY[$2::jsonb], ARRAY[$3::bigint])")
        .bind(org)
        .bind(data)
        .bind(subscription)
        .fetch_one(db)
        .await
}

/// One event on its way to one subscription.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DeliveryRecord {
    pub id: i64,
    pub event_id: i64,
    pub event_type: AnyEventType,
    pub subscription_id: WebhookSubscriptionId,
    pub delivery_status: DeliveryStatus,
    pub attempts: i32,
    pub last_response_status: Option<i32>,
    pub last_error: Option<String>,
    /// Only while pending.
    pub next_attempt_at: Option<chrono::DateTime<chrono::Utc>>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub finished_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl Keyed for DeliveryRecord {
    fn key(&self) -> i64 {
        self.id
    }
}

const DELIVERY_COLUMNS: &str = "d.id, d.event_id, d.event_type, d.subscription_id, d.state AS delivery_status, \
     d.attempts, d.last_response_status, d.last_error, \
     CASE WHEN d.state = 'pending' THEN d.run_at END AS next_attempt_at, d.created_at, d.finished_at";

#[derive(Debug, Default)]
pub struct DeliveryFilter {
    pub delivery_status: Option<DeliveryStatus>,
    pub event_type: Option<AnyEventType>,
    pub subscription_id: Option<WebhookSubscriptionId>,
}

pub async fn deliveries(db: &PgPool, org: OrgId, f: &DeliveryFilter, page: &Page) -> sqlx::Result<Vec<DeliveryRecord>> {
    let mut qb =
        QueryBuilder::<Postgres>::new(format!("SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.org_id = "));
    qb.push_bind(org);
    if let Some(s) = &f.delivery_status {
        qb.push(" AND d.state = ").push_bind(*s);
    }
    if let Some(t) = &f.event_type {
        qb.push(" AND d.event_type = ").push_bind(*t);
    }
    if let Some(s) = f.subscription_id {
        qb.push(" AND d.subscription_id = ").push_bind(s);
    }
    page.push(&mut qb, "d.id");
    qb.build_query_as().fetch_all(db).await
}

/// A delivery record with the exact body that is sent.
#[derive(Debug, sqlx::FromRow)]
pub struct DeliveryDetail {
    #[sqlx(flatten)]
    pub record: DeliveryRecord,
    pub body: String,
}

pub async fn delivery(db: &PgPool, org: OrgId, id: i64) -> sqlx::Result<Option<DeliveryDetail>> {
    sqlx::query_as(&format!(
        "SELECT {DELIVERY_COLUMNS}, e.body FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
          WHERE d.org_id = $1 AND d.id = $2"
    ))
    .bind(org)
    .bind(id)
    .fetch_optional(db)
    .await
}

/// One attempt of a delivery.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DeliveryAttempt {
    pub started_at: chrono::DateTime<chrono::Utc>,
    pub duration_ms: Option<i32>,
    pub outcome: String,
    pub response_status: Option<i32>,
    pub error: Option<String>,
}

/// A delivery's attempts, oldest first (earlier ones are in `webhook_attempts`, the latest on
/// the delivery; the view reads both from one snapshot).
pub async fn delivery_attempts(db: &PgPool, org: OrgId, id: i64) -> sqlx::Result<Vec<DeliveryAttempt>> {
    sqlx::query_as(
        "SELECT started_at, duration_ms, outcome, response_status, error FROM webhook_attempt_history
          WHERE org_id = $1 AND delivery_id = $2 ORDER BY seq NULLS LAST",
    )
    .bind(org)
    .bind(id)
    .fetch_all(db)
    .await
}

/// Drop events older than `days` whose every delivery is final, with their deliveries and
/// attempts, at most `batch` events a statement so no statement holds locks for long. Returns
/// the events dropped (call again while it is `batch`).
pub async fn purge_finished(db: &PgPool, days: u32, batch: i64) -> sqlx::Result<u64> {
    sqlx::query(
        "DELETE FROM webhook_events WHERE id IN (
             SELECT e.id FROM webhook_events e
              WHERE e.created_at < now() - make_interval(days => $1)
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                                 WHERE d.event_id = e.id AND d.org_id = e.org_id AND d.state = 'pending')
              ORDER BY e.id
              LIMIT $2)",
    )
    .bind(days as i32)
    .bind(batch)
    .execute(db)
    .await
    .map(|r| r.rows_affected())
}
