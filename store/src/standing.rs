//! Changes of an organization's standing, each with its audit entry in one transaction.

use sqlx::PgPool;
use tns_core::domain::kinds::{AuditAction, OrgStatus};

use crate::{
    accounts::{self, Standing},
    audit::{self, Actor, Entry},
};

/// Set `org`'s status; the standing before and after, `None` for no such organization.
pub async fn change(
    db: &PgPool,
    actor: &Actor,
    org: i64,
    to: OrgStatus,
    reason: Option<&str>,
) -> sqlx::Result<Option<(Standing, Standing)>> {
    let mut tx = db.begin().await?;
    let Some((before, after)) = accounts::set_status(&mut tx, org, to, reason).await? else {
        return Ok(None);
    };
    let entry = Entry {
        actor,
        action: AuditAction::SetStatus,
        org: Some(org),
        before: serde_json::to_value(&before).unwrap_or_default(),
        after: serde_json::to_value(&after).unwrap_or_default(),
        reason,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Some((before, after)))
}

/// Why the jobs suspend an ended trial (shown to the organization).
pub const TRIAL_ENDED: &str = "the trial period has ended: choose a plan (POST /portal/billing/subscription/change)";

/// Suspend every trial that has ended, audited as the jobs'; the organizations suspended.
pub async fn expire_trials(db: &PgPool) -> sqlx::Result<Vec<i64>> {
    let mut tx = db.begin().await?;
    let ended = accounts::expire_trials(&mut tx, TRIAL_ENDED).await?;
    for org in &ended {
        let entry = Entry {
            actor: &Actor::Jobs,
            action: AuditAction::TrialExpired,
            org: Some(*org),
            before: serde_json::json!({"status": OrgStatus::Trial}),
            after: serde_json::json!({"status": OrgStatus::Suspended, "status_reason": TRIAL_ENDED}),
            reason: Some(TRIAL_ENDED),
        };
        audit::record(&mut tx, entry).await?;
    }
    tx.commit().await?;
    Ok(ended)
}

/// Move `org` to plan `code` for an operator (audited); the plans before and after, `None` for
/// no such organization.
pub async fn change_plan(
    db: &PgPool,
    actor: &Actor,
    org: i64,
    code: &str,
    reason: &str,
) -> sqlx::Result<Option<(String, String)>> {
    let mut tx = db.begin().await?;
    let Some(before) = crate::plans::switch(&mut tx, org, code).await? else {
        return Ok(None);
    };
    let entry = Entry {
        actor,
        action: AuditAction::ChangePlan,
        org: Some(org),
        before: serde_json::json!({"plan_code": before}),
        after: serde_json::json!({"plan_code": code}),
        reason: Some(reason),
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Some((before, code.to_string())))
}

/// Record that an operator looked at what a submission sent (personal data), and why.
pub async fn viewed_submission(db: &PgPool, actor: &Actor, org: i64, id: i64, reason: &str) -> sqlx::Result<()> {
    let mut tx = db.begin().await?;
    let entry = Entry {
        actor,
        action: AuditAction::ViewSubmission,
        org: Some(org),
        before: serde_json::Value::Null,
        after: serde_json::json!({"submission_id": id}),
        reason: Some(reason),
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await
}
