//! `downstream_settings`: which downstream an organization's submissions go to, and the
//! credentials it gave for it: the fields its adapter's plugin describes, secret ones sealed by
//! the caller.

use std::collections::BTreeMap;
use tns_core::ids::OrgId;

use sqlx::{types::Json, PgConnection, PgPool};

/// Credential fields by name (as the adapter's plugin describes them).
pub type Fields = BTreeMap<String, String>;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Setting {
    pub adapter: String,
    /// The plain credential fields (the secret ones are never read back here).
    pub fields: Json<Fields>,
    /// The names of the secret fields that are set.
    pub secret_names: Vec<String>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// Credentials as stored: the plain fields, and each secret one sealed by the caller (base64).
#[derive(Debug, Clone, Default)]
pub struct StoredCredentials {
    pub fields: Fields,
    pub secrets: Fields,
}

const SETTING: &str =
    "adapter, fields, ARRAY(SELECT jsonb_object_keys(secrets) ORDER BY 1) AS secret_names, updated_at";

/// The organization's setting (`None`: never chosen, the default).
pub async fn get(db: &PgPool, org: OrgId) -> sqlx::Result<Option<Setting>> {
    sqlx::query_as(&format!("SELECT {SETTING} FROM downstream_settings WHERE org_id = $1"))
        .bind(org)
        .fetch_optional(db)
        .await
}

/// The adapter new submissions of the organization go to, read inside the submit transaction.
pub async fn adapter_of(tx: &mut PgConnection, org: OrgId) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT adapter FROM downstream_settings WHERE org_id = $1").bind(org).fetch_optional(tx).await
}

/// Set the adapter with its credentials (empty for one that takes none, which clears stored
/// ones): one statement, so nothing is ever half-set.
pub async fn set(db: &PgPool, org: OrgId, adapter: &str, creds: StoredCredentials) -> sqlx::Result<Setting> {
    sqlx::query_as(&format!(
        "INSERT INTO downstream_settings (org_id, adapter, fields, secrets)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (org_id) DO UPDATE
            SET adapter = EXCLUDED.adapter, fields = EXCLUDED.fields, secrets = EXCLUDED.secrets, updated_at = now()
         RETURNING {SETTING}"
    ))
    .bind(org)
    .bind(adapter)
    .bind(Json(creds.fields))
    .bind(Json(creds.secrets))
    .fetch_one(db)
    .await
}

/// The organization's stored credentials for `adapter` (`None` unless it is the adapter chosen
/// and has credentials): one adapter's credentials never reach another's plugin.
pub async fn credentials_for(db: &PgPool, org: OrgId, adapter: &str) -> sqlx::Result<Option<StoredCredentials>> {
    let row: Option<(Json<Fields>, Json<Fields>)> = sqlx::query_as(
        "SELECT fields, secrets FROM downstream_settings
          WHERE org_id = $1 AND adapter = $2 AND (fields <> '{}' OR secrets <> '{}')",
    )
    .bind(org)
    .bind(adapter)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|(f, s)| StoredCredentials { fields: f.0, secrets: s.0 }))
}
