//! API key rows. Every query is scoped by organization.

use sqlx::{PgConnection, PgPool};
use tns_core::ids::{KeyId, OrgId, UserId};

use tns_core::keys;
use tns_core::scopes::Scopes;

/// At most this many active keys per organization.
pub const MAX_ACTIVE_KEYS: i64 = 100;

/// An entry of the key list (the key itself is never shown again).
#[derive(Debug, sqlx::FromRow)]
pub struct ApiKeyInfo {
    pub id: KeyId,
    pub name: String,
    pub api_key_prefix: String,
    pub scopes: Vec<String>,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

/// A freshly created key: its entry and the full key, which nothing keeps.
#[derive(Debug)]
pub struct CreatedKey {
    pub info: ApiKeyInfo,
    pub api_key: String,
}

pub async fn insert(
    tx: &mut PgConnection,
    org: OrgId,
    user: UserId,
    name: &str,
    scopes: Scopes,
) -> sqlx::Result<CreatedKey> {
    let key = keys::generate();
    let names = scopes.names();
    let (id, created_at): (KeyId, chrono::DateTime<chrono::Utc>) = sqlx::query_as(
        "INSERT INTO api_keys (org_id, created_by, name, prefix, key_hash, scopes)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, created_at",
    )
    .bind(org)
    .bind(user)
    .bind(name)
    .bind(&key.display_prefix)
    .bind(&key.hash[..])
    .bind(&names)
    .fetch_one(tx)
    .await?;
    let info = ApiKeyInfo { id, name: name.to_string(), api_key_prefix: key.display_prefix, scopes: names, created_at };
    Ok(CreatedKey { info, api_key: key.secret })
}

/// Lock the organization's key set and count its active keys (serializes concurrent creates).
pub async fn lock_and_count(tx: &mut PgConnection, org: OrgId) -> sqlx::Result<i64> {
    sqlx::query("SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE").bind(org).execute(&mut *tx).await?;
    sqlx::query_scalar("SELECT count(*) FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL")
        .bind(org)
        .fetch_one(tx)
        .await
}

pub async fn list(db: &PgPool, org: OrgId) -> sqlx::Result<Vec<ApiKeyInfo>> {
    sqlx::query_as(
        "SELECT id, name, prefix AS api_key_prefix, scopes, created_at FROM api_keys
          WHERE org_id = $1 AND revoked_at IS NULL ORDER BY id DESC",
    )
    .bind(org)
    .fetch_all(db)
    .await
}

/// Revoke; false when the organization has no such active key.
pub async fn revoke(db: &PgPool, org: OrgId, id: KeyId) -> sqlx::Result<bool> {
    let r = sqlx::query("UPDATE api_keys SET revoked_at = now() WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL")
        .bind(org)
        .bind(id)
        .execute(db)
        .await?;
    Ok(r.rows_affected() == 1)
}

/// Revoke every active key member `user` of `org` made (they are leaving); the keys' ids.
pub async fn revoke_made_by(tx: &mut PgConnection, org: OrgId, user: UserId) -> sqlx::Result<Vec<KeyId>> {
    sqlx::query_scalar(
        "UPDATE api_keys SET revoked_at = now() WHERE org_id = $1 AND created_by = $2 AND revoked_at IS NULL RETURNING id",
    )
    .bind(org)
    .bind(user)
    .fetch_all(tx)
    .await
}

/// An API key as authentication needs it.
#[derive(Debug, Clone)]
pub struct KeyRecord {
    pub id: KeyId,
    pub org_id: OrgId,
    pub user_id: UserId,
    pub scopes: Scopes,
    pub revoked: bool,
}

#[derive(sqlx::FromRow)]
struct KeyRow {
    id: KeyId,
    org_id: OrgId,
    created_by: UserId,
    scopes: Vec<String>,
    revoked: bool,
}

impl From<KeyRow> for KeyRecord {
    fn from(r: KeyRow) -> Self {
        KeyRecord {
            id: r.id,
            org_id: r.org_id,
            user_id: r.created_by,
            scopes: Scopes::from_stored(&r.scopes),
            revoked: r.revoked,
        }
    }
}

const KEY_COLUMNS: &str = "SELECT id, org_id, created_by, scopes, revoked_at IS NOT NULL AS revoked FROM api_keys";

/// The key whose secret hashes to `hash`.
pub async fn by_hash(db: &PgPool, hash: &[u8; 32]) -> sqlx::Result<Option<KeyRecord>> {
    let row: Option<KeyRow> =
        sqlx::query_as(&format!("{KEY_COLUMNS} WHERE key_hash = $1")).bind(&hash[..]).fetch_optional(db).await?;
    Ok(row.map(KeyRecord::from))
}

pub async fn by_id(db: &PgPool, id: KeyId) -> sqlx::Result<Option<KeyRecord>> {
    let row: Option<KeyRow> =
        sqlx::query_as(&format!("{KEY_COLUMNS} WHERE id = $1")).bind(id).fetch_optional(db).await?;
    Ok(row.map(KeyRecord::from))
}
