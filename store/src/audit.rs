//! The `audit_log` table: what operators (and the jobs) did to organizations, who, when, the
//! state before and after. Rows are only inserted, each in the transaction of the change it
//! describes, so the log never shows a change that did not happen or misses one that did.

use sqlx::{PgConnection, PgPool};
use tns_core::domain::kinds::AuditAction;
use tns_core::ids::{KeyId, OperatorTokenId, OrgId, UserId};

/// Who acted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// An operator at the command line, by the name given (`--operator`, else `$USER`).
    Operator(String),
    /// An operator over the admin API, by the token it authenticated with.
    OperatorToken { id: OperatorTokenId, name: String },
    /// The organization itself: a user (signed in to the portal) or an API key (and its tokens).
    Tenant { user: UserId, key: Option<KeyId> },
    /// The periodic jobs.
    Jobs,
}

impl Actor {
    /// As the log (and a submission's `submitted_by`) names it.
    pub fn as_text(&self) -> String {
        match self {
            Actor::Operator(name) | Actor::OperatorToken { name, .. } => format!("operator:{name}"),
            Actor::Tenant { key: Some(key), .. } => format!("tenant:key:{key}"),
            Actor::Tenant { user, key: None } => format!("tenant:user:{user}"),
            Actor::Jobs => "jobs".into(),
        }
    }

    /// As records' `created_by` and `changed_by` name who changed them (`user:<id>`,
    /// `key:<id>` for a tenant's member or API key; the log's own name otherwise).
    pub fn credential(&self) -> String {
        match self {
            Actor::Tenant { key: Some(key), .. } => format!("key:{key}"),
            Actor::Tenant { user, key: None } => format!("user:{user}"),
            other => other.as_text(),
        }
    }

    /// The entry for deleting the record `id` of kind `record` ("journey", "vehicle", …).
    pub fn deleted<'a>(&'a self, org: OrgId, record: &str, id: i64, kept_inactive: bool) -> Entry<'a> {
        let mut before = serde_json::json!({"record": record, "id": id});
        if kept_inactive {
            before["kept_inactive"] = true.into();
        }
        Entry {
            actor: self,
            action: AuditAction::DeleteRecord,
            org: Some(org),
            before,
            after: serde_json::Value::Null,
            reason: None,
        }
    }

    fn token(&self) -> Option<OperatorTokenId> {
        match self {
            Actor::OperatorToken { id, .. } => Some(*id),
            _ => None,
        }
    }
}

/// One change to write.
pub struct Entry<'a> {
    pub actor: &'a Actor,
    pub action: AuditAction,
    pub org: Option<OrgId>,
    pub before: serde_json::Value,
    pub after: serde_json::Value,
    pub reason: Option<&'a str>,
}

pub async fn record(tx: &mut PgConnection, e: Entry<'_>) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO audit_log (actor, operator_token_id, action, org_id, before, after, reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(e.actor.as_text())
    .bind(e.actor.token())
    .bind(e.action)
    .bind(e.org)
    .bind(e.before)
    .bind(e.after)
    .bind(e.reason)
    .execute(tx)
    .await?;
    Ok(())
}

/// One row of the log as operators read it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Logged {
    pub id: i64,
    pub at: chrono::DateTime<chrono::Utc>,
    /// As [`Actor::as_text`] names it.
    pub actor: String,
    pub operator_token_id: Option<OperatorTokenId>,
    pub action: AuditAction,
    pub org_id: Option<OrgId>,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
    pub reason: Option<String>,
}

/// The newest `limit` entries (of `org` when given), newest first.
pub async fn list(db: &PgPool, org: Option<i64>, limit: i64) -> sqlx::Result<Vec<Logged>> {
    sqlx::query_as(
        "SELECT id, at, actor, operator_token_id, action, org_id, before, after, reason FROM audit_log
          WHERE $1::int8 IS NULL OR org_id = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(org)
    .bind(limit)
    .fetch_all(db)
    .await
}
