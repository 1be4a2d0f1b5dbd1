//! `downstream_settings`: which downstream an organization's submissions go to and, for U-ETDS,
//! its environment and web-service credentials (the password sealed by the caller).

use sqlx::{PgConnection, PgPool};

use tns_core::domain::kinds::Environment;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Setting {
    pub adapter: String,
    pub environment: Option<Environment>,
    pub ws_username: Option<String>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// U-ETDS credentials as stored: the password sealed with the data key.
pub struct StoredCredentials<'a> {
    pub environment: Environment,
    pub ws_username: &'a str,
    pub ws_password_sealed: Vec<u8>,
}

/// The organization's setting (`None`: never chosen, the default).
pub async fn get(db: &PgPool, org: i64) -> sqlx::Result<Option<Setting>> {
    sqlx::query_as("SELECT adapter, environment, ws_username, updated_at FROM downstream_settings WHERE org_id = $1")
        .bind(org)
        .fetch_optional(db)
        .await
}

/// The adapter new submissions of the organization go to, read inside the submit transaction.
pub async fn adapter_of(tx: &mut PgConnection, org: i64) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT adapter FROM downstream_settings WHERE org_id = $1").bind(org).fetch_optional(tx).await
}

/// Set the adapter with its credentials, or without any (which clears stored ones): one
/// statement, so nothing is ever half-set.
pub async fn set(db: &PgPool, org: i64, adapter: &str, creds: Option<StoredCredentials<'_>>) -> sqlx::Result<Setting> {
    let (env, user, sealed) = match creds {
        Some(c) => (Some(c.environment), Some(c.ws_username), Some(c.ws_password_sealed)),
        None => (None, None, None),
    };
    sqlx::query_as(
        "INSERT INTO downstream_settings (org_id, adapter, environment, ws_username, ws_password)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (org_id) DO UPDATE
            SET adapter = EXCLUDED.adapter, environment = EXCLUDED.environment, ws_username = EXCLUDED.ws_username,
                ws_password = EXCLUDED.ws_password, updated_at = now()
         RETURNING adapter, environment, ws_username, updated_at",
    )
    .bind(org)
    .bind(adapter)
    .bind(env)
    .bind(user)
    .bind(sealed)
    .fetch_one(db)
    .await
}

/// The organization's stored U-ETDS credentials: environment, user name and the sealed
/// password (`None` when it has none).
pub async fn sealed_credentials(db: &PgPool, org: i64) -> sqlx::Result<Option<(Environment, String, Vec<u8>)>> {
    sqlx::query_as(
        "SELECT environment, ws_username, ws_password FROM downstream_settings
          WHERE org_id = $1 AND ws_password IS NOT NULL",
    )
    .bind(org)
    .fetch_optional(db)
    .await
}
