//! Changes of an organization's standing, each with its audit entry in one transaction.

use chrono::NaiveDate;
use sqlx::PgPool;
use tns_core::domain::kinds::{AuditAction, InvoiceStatus, OrgStatus};

use crate::{
    accounts::{self, Standing},
    audit::{self, Actor, Entry},
    plans::Switched,
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
    org: i64,
    to: OrgStatus,
    reason: Option<&str>,
) -> sqlx::Result<Option<(Standing, Standing)>> {
    let Some((before, after)) = accounts::set_status(&mut *tx, org, to, reason).await? else {
        return Ok(None);
    };
    crate::terms::follow(&mut *tx, org).await?;
    audit::record(&mut *tx, status_entry(actor, org, &before, &after, reason)).await?;
    Ok(Some((before, after)))
}

/// The audit entry of a change of status, whatever caused it.
fn status_entry<'a>(
    actor: &'a Actor,
    org: i64,
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

use crate::accounts::TRIAL_ENDED;

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

/// Why a status changed when a plan was chosen without a reason given (a tenant's choice).
pub const PLAN_CHOSEN: &str = "a plan was chosen";

/// Move `org` to plan `code` for `actor` (an operator, with a reason, or the organization
/// itself): the plan, billing following it, and the audit entries (the plan, and the status
/// when choosing the plan ended a trial) in one transaction. `None` for no such organization.
pub async fn change_plan(
    db: &PgPool,
    actor: &Actor,
    org: i64,
    code: &str,
    reason: Option<&str>,
) -> sqlx::Result<Option<Switched>> {
    let mut tx = db.begin().await?;
    let Some(switched) = crate::plans::switch(&mut tx, org, code).await? else {
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

/// Why the jobs suspend an organization with an overdue invoice (shown to it).
pub const INVOICE_OVERDUE: &str = "an invoice is unpaid past its due date: see GET /portal/billing/invoices and \
     pay it; the organization is reactivated once it is recorded as paid";

/// Suspend every organization with an open invoice due before `today`, audited as the
/// jobs'; the organizations suspended.
pub async fn suspend_overdue(db: &PgPool, today: NaiveDate) -> sqlx::Result<Vec<i64>> {
    let mut suspended = vec![];
    for (org, invoice) in crate::invoices::overdue(db, today).await? {
        let mut tx = db.begin().await?;
        // Suspended under the organization's row lock, which settling an invoice takes too, and
        // checked again under it: already suspended, or paid meanwhile, the change is dropped
        // with the transaction (an operator's reason stays; a closed organization stays closed).
        let Some((before, after)) =
            accounts::set_status(&mut tx, org, OrgStatus::Suspended, Some(INVOICE_OVERDUE)).await?
        else {
            continue;
        };
        if before.status.is_restricted() || !crate::invoices::has_overdue(&mut tx, org, today).await? {
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
        org: i64,
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
    id: i64,
    to: InvoiceStatus,
    reason: &str,
    today: NaiveDate,
) -> sqlx::Result<Settled> {
    let mut tx = db.begin().await?;
    let Some((org, status)) = crate::invoices::lock(&mut tx, id).await? else {
        return Ok(Settled::NoSuchInvoice);
    };
    if status != InvoiceStatus::Open || to == InvoiceStatus::Open {
        return Ok(Settled::NotOpen(status));
    }
    crate::invoices::set_status(&mut tx, id, to).await?;
    let entry = Entry {
        actor,
        action: AuditAction::SettleInvoice,
        org: Some(org),
        before: serde_json::json!({"invoice_id": id, "status": status}),
        after: serde_json::json!({"invoice_id": id, "status": to}),
        reason: Some(reason),
    };
    audit::record(&mut tx, entry).await?;
    let standing = accounts::standing_for_update(&mut tx, org).await?;
    let overdue_only = standing
        .is_some_and(|s| s.status == OrgStatus::Suspended && s.status_reason.as_deref() == Some(INVOICE_OVERDUE));
    let reactivated = overdue_only && !crate::invoices::has_overdue(&mut tx, org, today).await?;
    if reactivated {
        set_status(&mut tx, actor, org, OrgStatus::Active, Some("no overdue invoice is left")).await?;
    }
    tx.commit().await?;
    Ok(Settled::Done { org, reactivated })
}
