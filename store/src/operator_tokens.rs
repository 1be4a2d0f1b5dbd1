//! The `operator_tokens` table: the credentials of the operators' admin API. A token is made
//! here and returned once; only its SHA-256 is stored. Creating and revoking one are audited in
//! their own transaction, like every operator action.

use sqlx::PgPool;
use tns_core::{domain::kinds::AuditAction, ids::OperatorTokenId, keys, scopes::operator::OperatorScope};

use crate::audit::{self, Actor, Entry};

/// A token as operators list it: never its hash.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct OperatorToken {
    pub id: OperatorTokenId,
    pub name: String,
    pub scopes: Vec<OperatorScope>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub revoked_at: Option<chrono::DateTime<chrono::Utc>>,
    pub last_used_at: Option<chrono::DateTime<chrono::Utc>>,
}

const COLUMNS: &str = "id, name, scopes, created_at, revoked_at, last_used_at";

/// Who a token authenticates, when it is not revoked.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Bearer {
    pub id: OperatorTokenId,
    pub name: String,
    pub scopes: Vec<OperatorScope>,
    pub revoked: bool,
}

/// A new token for `name` with `scopes`, made by `actor` (audited): the record and the token
/// itself, which nothing keeps.
pub async fn create(
    db: &PgPool,
    actor: &Actor,
    name: &str,
    scopes: &[OperatorScope],
) -> sqlx::Result<(OperatorToken, String)> {
    let (secret, hash) = keys::operator_token();
    let mut tx = db.begin().await?;
    let token: OperatorToken = sqlx::query_as(&format!(
        "INSERT INTO operator_tokens (name, token_hash, scopes) VALUES ($1, $2, $3) RETURNING {COLUMNS}"
    ))
    .bind(name)
    .bind(&hash[..])
    .bind(scopes)
    .fetch_one(&mut *tx)
    .await?;
    let entry = Entry {
        actor,
        action: AuditAction::CreateOperatorToken,
        org: None,
        before: serde_json::Value::Null,
        after: serde_json::json!({"id": token.id, "name": token.name, "scopes": token.scopes}),
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok((token, secret))
}

/// Every token, revoked ones included, newest first.
pub async fn list(db: &PgPool) -> sqlx::Result<Vec<OperatorToken>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM operator_tokens ORDER BY id DESC")).fetch_all(db).await
}

/// Revoke token `id` (audited the first time); the token, `None` for no such token.
pub async fn revoke(db: &PgPool, actor: &Actor, id: OperatorTokenId) -> sqlx::Result<Option<OperatorToken>> {
    let mut tx = db.begin().await?;
    let token: Option<OperatorToken> = sqlx::query_as(&format!(
        "UPDATE operator_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING {COLUMNS}"
    ))
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(token) = token else {
        // Already revoked (nothing changes, nothing is logged) or no such token.
        return sqlx::query_as(&format!("SELECT {COLUMNS} FROM operator_tokens WHERE id = $1"))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await;
    };
    let entry = Entry {
        actor,
        action: AuditAction::RevokeOperatorToken,
        org: None,
        before: serde_json::json!({"id": token.id, "name": token.name, "revoked_at": null}),
        after: serde_json::json!({"id": token.id, "name": token.name, "revoked_at": token.revoked_at}),
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Some(token))
}

/// The token whose SHA-256 is `hash`, revoked or not; an accepted one is marked used. Not
/// cached, so a revocation holds from the next request.
pub async fn authenticate(db: &PgPool, hash: &[u8; 32]) -> sqlx::Result<Option<Bearer>> {
    sqlx::query_as(
        "WITH found AS (SELECT id, name, scopes, revoked_at FROM operator_tokens WHERE token_hash = $1),
              touched AS (UPDATE operator_tokens t SET last_used_at = now() FROM found
                           WHERE t.id = found.id AND found.revoked_at IS NULL)
         SELECT id, name, scopes, revoked_at IS NOT NULL AS revoked FROM found",
    )
    .bind(&hash[..])
    .fetch_optional(db)
    .await
}
