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
