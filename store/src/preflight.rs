//! `preflight_policies` (an organization's pre-flight checks: mode and which) and
//! `preflight_results` (the checks that passed, kept for their day, keyed by a digest of what
//! was asked).

use chrono::NaiveDate;
use sqlx::{PgConnection, PgPool};
use tns_core::domain::preflight::{CheckKind, PreflightMode};
use tns_core::ids::OrgId;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Policy {
    pub mode: PreflightMode,
    pub checks: Vec<CheckKind>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// The organization's policy (`None`: never set, checks off).
pub async fn policy(db: &PgPool, org: OrgId) -> sqlx::Result<Option<Policy>> {
    sqlx::query_as("SELECT mode, checks, updated_at FROM preflight_policies WHERE org_id = $1")
        .bind(org)
        .fetch_optional(db)
        .await
}

pub async fn set_policy(
    db: &mut PgConnection,
    org: OrgId,
    mode: PreflightMode,
    checks: &[CheckKind],
) -> sqlx::Result<Policy> {
    sqlx::query_as(
        "INSERT INTO preflight_policies (org_id, mode, checks) VALUES ($1, $2, $3)
         ON CONFLICT (org_id) DO UPDATE SET mode = EXCLUDED.mode, checks = EXCLUDED.checks, updated_at = now()
         RETURNING mode, checks, updated_at",
    )
    .bind(org)
    .bind(mode)
    .bind(checks)
    .fetch_one(db)
    .await
}

/// One kept pass: what was asked (its digest) and what the downstream said.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Pass {
    pub subject: Vec<u8>,
    pub detail: Option<String>,
}

/// The passes kept for `day` among `subjects`.
pub async fn passes(db: &PgPool, org: OrgId, day: NaiveDate, subjects: &[Vec<u8>]) -> sqlx::Result<Vec<Pass>> {
    sqlx::query_as("SELECT subject, detail FROM preflight_results WHERE org_id = $1 AND day = $2 AND subject = ANY($3)")
        .bind(org)
        .bind(day)
        .bind(subjects)
        .fetch_all(db)
        .await
}

/// Keep `new` answers for `day` (a concurrent submit's answer to the same check wins), and
/// drop the organization's answers of earlier days: one transaction.
pub async fn keep(db: &PgPool, org: OrgId, day: NaiveDate, new: &[Pass]) -> sqlx::Result<()> {
    let mut tx = db.begin().await?;
    sqlx::query("DELETE FROM preflight_results WHERE org_id = $1 AND day < $2")
        .bind(org)
        .bind(day)
        .execute(&mut *tx)
        .await?;
    let subjects: Vec<&[u8]> = new.iter().map(|a| a.subject.as_slice()).collect();
    let details: Vec<Option<&str>> = new.iter().map(|a| a.detail.as_deref()).collect();
    sqlx::query(
        "INSERT INTO preflight_results (org_id, day, subject, detail)
         SELECT $1, $2, * FROM unnest($3::bytea[], $4::text[])
         ON CONFLICT DO NOTHING",
    )
    .bind(org)
    .bind(day)
    .bind(&subjects)
    .bind(&details)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}
