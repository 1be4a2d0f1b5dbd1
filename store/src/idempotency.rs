//! The `idempotency_keys` table: each key a credential used, the request it was used for (a
//! hash) and, once answered, the answer to replay. The middleware deciding what to keep is the
//! API's; this module only reads and writes the rows.

use sqlx::PgPool;
use tns_core::ids::OrgId;

/// How long an answer is replayed.
pub const RETENTION_HOURS: i64 = 24;
/// A first request that has not finished after this long is presumed dead (its process
/// crashed) and the key may be used again.
const ABANDONED_AFTER_SECS: i64 = 120;

/// Where a key's record lives: its organization, the credential that used it, the key.
#[derive(Debug, Clone)]
pub struct Slot {
    pub org: OrgId,
    pub credential: String,
    pub key: String,
}

/// What was kept of the first request and its answer.
#[derive(sqlx::FromRow)]
pub struct Kept {
    pub request_hash: Vec<u8>,
    /// `None` while the first request is still being answered.
    pub status: Option<i16>,
    pub content_type: Option<String>,
    /// `None` for an answer that must not be replayed (it carried a secret).
    pub body: Option<Vec<u8>>,
}

/// Claim the key for a request, or take over one that expired or whose first request died:
/// `false` when the key is taken (replay or refuse what is kept).
pub async fn claim(db: &PgPool, slot: &Slot, request_hash: &[u8]) -> sqlx::Result<bool> {
    let claimed: Option<bool> = sqlx::query_scalar(
        "INSERT INTO idempotency_keys (org_id, credential, key, request_hash) VALUES ($1, $6, $2, $3)
         ON CONFLICT (org_id, credential, key) DO UPDATE
            SET request_hash = EXCLUDED.request_hash, status = NULL, content_type = NULL, body = NULL, created_at = now()
          WHERE idempotency_keys.created_at < now() - make_interval(hours => $4)
             OR (idempotency_keys.status IS NULL AND idempotency_keys.created_at < now() - make_interval(secs => $5))
         RETURNING true",
    )
    .bind(slot.org)
    .bind(&slot.key)
    .bind(request_hash)
    .bind(RETENTION_HOURS as i32)
    .bind(ABANDONED_AFTER_SECS as f64)
    .bind(&slot.credential)
    .fetch_optional(db)
    .await?;
    Ok(claimed.is_some())
}

pub async fn kept(db: &PgPool, slot: &Slot) -> sqlx::Result<Option<Kept>> {
    sqlx::query_as(
        "SELECT request_hash, status, content_type, body FROM idempotency_keys
          WHERE org_id = $1 AND credential = $2 AND key = $3",
    )
    .bind(slot.org)
    .bind(&slot.credential)
    .bind(&slot.key)
    .fetch_optional(db)
    .await
}

/// Keep the answer (`body` `None`: only that the key was used).
pub async fn keep(
    db: &PgPool,
    slot: &Slot,
    status: u16,
    content_type: Option<&str>,
    body: Option<&[u8]>,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE idempotency_keys SET status = $4, content_type = $5, body = $6
          WHERE org_id = $1 AND credential = $2 AND key = $3",
    )
    .bind(slot.org)
    .bind(&slot.credential)
    .bind(&slot.key)
    .bind(status as i16)
    .bind(content_type)
    .bind(body)
    .execute(db)
    .await
    .map(|_| ())
}

/// Let the key go again (its first request failed before answering).
pub async fn release(db: &PgPool, slot: &Slot) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM idempotency_keys WHERE org_id = $1 AND credential = $2 AND key = $3 AND status IS NULL")
        .bind(slot.org)
        .bind(&slot.credential)
        .bind(&slot.key)
        .execute(db)
        .await
        .map(|_| ())
}

/// Drop answers older than the retention period.
pub async fn purge(db: &PgPool) -> sqlx::Result<u64> {
    sqlx::query("DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)")
        .bind(RETENTION_HOURS as i32)
        .execute(db)
        .await
        .map(|r| r.rows_affected())
}
