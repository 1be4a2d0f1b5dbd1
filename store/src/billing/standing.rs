//! Changes of an organization's standing, each with its audit entry in one transaction.

use chrono::NaiveDate;
use sqlx::{PgConnection, PgPool};
use tns_core::domain::kinds::{AuditAction, InvoiceStatus, OrgStatus};
use tns_core::ids::{InvoiceId, OrgId, SubmissionId};

use super::{lock_org, plans::Switched, Hold};
use crate::{
    accounts::{Standing, TRIAL_ENDED},
    audit::{self, Actor, Entry},
};

/// Set `org`'s status; the standing before and after, `None` for no such organization.
pub async fn change(
    db: &PgPool,
    actor: &Actor,
    org: OrgId,
    to: OrgStatus,
    reason: Option<&str>,
) -> sqlx::Result<Option<(Standing, Standing)>> {
    let mut tx = db.begin().await?;
    let Some((before, after)) = set_status(&mut tx, actor, org, to, reason).await? else {
        return Ok(None);
    };
    tx.commit().await?;
    Ok(Some((before, after)))
}

/// [`change`] inside the caller's transaction: the status, billing following it (leaving the
/// trial starts it, going back stops it), and the audit entry.
async fn set_status(
    tx: &mut sqlx::PgConnection,
    actor: &Actor,
    org: OrgId,
    to: OrgStatus,
    reason: Option<&str>,
) -> sqlx::Result<Option<(Standing, Standing)>> {
    let Some((before, after)) = write_status(&mut *tx, org, to, reason).await? else {
        return Ok(None);
    };
    super::terms::follow(&mut *tx, org).await?;
    audit::record(&mut *tx, status_entry(actor, org, &before, &after, reason)).await?;
    Ok(Some((before, after)))
}

/// The audit entry of a change of status, whatever caused it.
fn status_entry<'a>(
    actor: &'a Actor,
    org: OrgId,
    before: &Standing,
    after: &Standing,
    reason: Option<&'a str>,
) -> Entry<'a> {
    Entry {
        actor,
        action: AuditAction::SetStatus,
        org: Some(org),
        before: serde_json::to_value(before).unwrap_or_default(),
        after: serde_json::to_value(after).unwrap_or_default(),
        reason,
    }
}

/// Suspend every trial that has ended, audited as the jobs'; the organizations suspended.
pub async fn expire_trials(db: &PgPool) -> sqlx::Result<Vec<OrgId>> {
    let mut tx = db.begin().await?;
    let ended = suspend_ended_trials(&mut tx, TRIAL_ENDED).await?;
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

/// Why a status changed when a plan was chosen without a reason given (a tenant's choice).
pub const PLAN_CHOSEN: &str = "a plan was chosen";

/// Move `org` to plan `code` for `actor` (an operator, with a reason, or the organization
/// itself): the plan, billing following it, and the audit entries (the plan, and the status
/// when choosing the plan ended a trial) in one transaction. `None` for no such organization.
pub async fn change_plan(
    db: &PgPool,
    actor: &Actor,
    org: OrgId,
    code: &str,
    reason: Option<&str>,
) -> sqlx::Result<Option<Switched>> {
    let mut tx = db.begin().await?;
    let Some(switched) = super::plans::switch(&mut tx, org, code).await? else {
        return Ok(None);
    };
    let entry = Entry {
        actor,
        action: AuditAction::ChangePlan,
        org: Some(org),
        before: serde_json::json!({"plan_code": switched.before}),
        after: serde_json::json!({"plan_code": code}),
        reason,
    };
    audit::record(&mut tx, entry).await?;
    if let Some((before, after)) = &switched.standing {
        audit::record(&mut tx, status_entry(actor, org, before, after, Some(reason.unwrap_or(PLAN_CHOSEN)))).await?;
    }
    tx.commit().await?;
    Ok(Some(switched))
}

/// Record that an operator looked at what a submission sent (personal data), and why.
pub async fn viewed_submission(
    db: &PgPool,
    actor: &Actor,
    org: OrgId,
    id: SubmissionId,
    reason: &str,
) -> sqlx::Result<()> {
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

/// Why the jobs suspend an organization with an overdue invoice (shown to it).
pub const INVOICE_OVERDUE: &str = "an invoice is unpaid past its due date: see GET /portal/billing/invoices and \
     pay it; the organization is reactivated once it is recorded as paid";

/// Suspend every organization with an open invoice due before `today`, audited as the
/// jobs'; the organizations suspended.
pub async fn suspend_overdue(db: &PgPool, today: NaiveDate) -> sqlx::Result<Vec<OrgId>> {
    let mut suspended = vec![];
    for (org, invoice) in super::invoices::overdue(db, today).await? {
        let mut tx = db.begin().await?;
        // Suspended under the organization's row lock, which settling an invoice takes too, and
        // checked again under it: already suspended, or paid meanwhile, the change is dropped
        // with the transaction (an operator's reason stays; a closed organization stays closed).
        let Some((before, after)) = write_status(&mut tx, org, OrgStatus::Suspended, Some(INVOICE_OVERDUE)).await?
        else {
            continue;
        };
        if before.status.is_restricted() || !super::invoices::has_overdue(&mut tx, org, today).await? {
            continue;
        }
        let entry = Entry {
            actor: &Actor::Jobs,
            action: AuditAction::InvoiceOverdue,
            org: Some(org),
            before: serde_json::json!({"status": before.status, "status_reason": before.status_reason}),
            after: serde_json::json!({"status": after.status, "status_reason": after.status_reason, "invoice_id": invoice}),
            reason: Some(INVOICE_OVERDUE),
        };
        audit::record(&mut tx, entry).await?;
        tx.commit().await?;
        suspended.push(org);
    }
    Ok(suspended)
}

/// What settling an invoice did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// Now `to`; `reactivated` when that lifted a suspension for an overdue invoice.
    Done {
        org: OrgId,
        reactivated: bool,
    },
    NoSuchInvoice,
    /// Only an open invoice is paid or voided.
    NotOpen(InvoiceStatus),
}

/// Record invoice `id` as paid or void for an operator (audited). An organization suspended
/// only for overdue invoices is reactivated when none is left.
pub async fn settle_invoice(
    db: &PgPool,
    actor: &Actor,
    id: InvoiceId,
    to: InvoiceStatus,
    reason: &str,
    today: NaiveDate,
) -> sqlx::Result<Settled> {
    let mut tx = db.begin().await?;
    // The organization first, as every billing transaction takes it (`super`'s lock order).
    let Some(org) = super::invoices::org_of(&mut tx, id).await? else { return Ok(Settled::NoSuchInvoice) };
    let standing = lock_org(&mut tx, org, Hold::Change).await?;
    let Some((_, status)) = super::invoices::lock(&mut tx, id).await? else {
        return Ok(Settled::NoSuchInvoice);
    };
    if status != InvoiceStatus::Open || to == InvoiceStatus::Open {
        return Ok(Settled::NotOpen(status));
    }
    super::invoices::set_status(&mut tx, id, to).await?;
    let entry = Entry {
        actor,
        action: AuditAction::SettleInvoice,
        org: Some(org),
        before: serde_json::json!({"invoice_id": id, "status": status}),
        after: serde_json::json!({"invoice_id": id, "status": to}),
        reason: Some(reason),
    };
    audit::record(&mut tx, entry).await?;
    let overdue_only = standing
        .is_some_and(|s| s.status == OrgStatus::Suspended && s.status_reason.as_deref() == Some(INVOICE_OVERDUE));
    let reactivated = overdue_only && !super::invoices::has_overdue(&mut tx, org, today).await?;
    if reactivated {
        set_status(&mut tx, actor, org, OrgStatus::Active, Some("no overdue invoice is left")).await?;
    }
    tx.commit().await?;
    Ok(Settled::Done { org, reactivated })
}

/// Set the status (with its reason); the standing before and after, `None` for no such
/// organization (an erased one is none). Leaving `trial` keeps the trial's end for the record;
/// leaving `closed` (an operator's change) ends the closure. Closing is
/// [`crate::closure::close`]'s, which records what reopening restores.
pub(crate) async fn write_status(
    tx: &mut PgConnection,
    org: OrgId,
    to: OrgStatus,
    reason: Option<&str>,
) -> sqlx::Result<Option<(Standing, Standing)>> {
    let Some(before) = super::lock_org(&mut *tx, org, Hold::Change).await? else { return Ok(None) };
    let after: Option<Standing> = sqlx::query_as(
        "UPDATE organizations
            SET status = $2, status_reason = $3, status_changed_at = now(),
                trial_ends_at = CASE WHEN $2 = 'trial' THEN COALESCE(trial_ends_at, now()) ELSE trial_ends_at END,
                closed_at = NULL, erase_after = NULL, closed_from = NULL, closed_from_reason = NULL, closed_billed = NULL
          WHERE id = $1 AND erased_at IS NULL
         RETURNING status, status_reason, trial_ends_at",
    )
    .bind(org)
    .bind(to)
    .bind(reason)
    .fetch_optional(&mut *tx)
    .await?;
    Ok(after.map(|after| (before, after)))
}

/// A plan was chosen: the status it leads to ([`Standing::after_plan_choice`]); the standing
/// before and after when that changed it.
pub(crate) async fn activate_on_plan_choice(
    tx: &mut PgConnection,
    org: OrgId,
) -> sqlx::Result<Option<(Standing, Standing)>> {
    let Some(before) = super::lock_org(&mut *tx, org, Hold::Change).await? else { return Ok(None) };
    if before.status == OrgStatus::Closed {
        // Chosen while closed: reopening restores what the choice leads to.
        let (from, reason): (OrgStatus, Option<String>) =
            sqlx::query_as("SELECT closed_from, closed_from_reason FROM organizations WHERE id = $1")
                .bind(org)
                .fetch_one(&mut *tx)
                .await?;
        let to = from.after_plan_choice(reason.as_deref() == Some(TRIAL_ENDED));
        if to != from {
            sqlx::query("UPDATE organizations SET closed_from = $2, closed_from_reason = NULL WHERE id = $1")
                .bind(org)
                .bind(to)
                .execute(&mut *tx)
                .await?;
        }
        return Ok(None);
    }
    let to = before.after_plan_choice();
    if to == before.status {
        return Ok(None);
    }
    write_status(tx, org, to, None).await
}

/// Suspend every trial that has ended: the organizations suspended.
async fn suspend_ended_trials(tx: &mut PgConnection, reason: &str) -> sqlx::Result<Vec<OrgId>> {
    sqlx::query_scalar(
        "UPDATE organizations SET status = 'suspended', status_reason = $1, status_changed_at = now()
          WHERE status = 'trial' AND trial_ends_at <= now()
         RETURNING id",
    )
    .bind(reason)
    .fetch_all(tx)
    .await
}
