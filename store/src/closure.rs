//! Closing an organization and, after the grace period, erasing it (KVKK): the closure columns
//! of `organizations` and the erasure's deletes. Closing ends billing (the current term ends that
//! day, [`crate::billing::terms::follow`]) and restricts the organization as a suspension does; reopening
//! restores the standing it had; erasing deletes every row it owns except what law and billing
//! keep ([`KEPT`]), in one transaction, audited.

use std::collections::BTreeMap;
use tns_core::ids::OrgId;

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tns_core::domain::kinds::{AuditAction, OrgStatus};

use crate::{
    audit::{self, Actor, Entry},
    billing::{self, Hold},
};

/// An organization's closure columns.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Closure {
    pub status: OrgStatus,
    /// `None` unless closed.
    pub closed_at: Option<DateTime<Utc>>,
    /// Until then the owner may reopen it; `None` unless closed.
    pub erase_after: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "status, closed_at, erase_after";

/// The closure of `org`; `None` for no such organization (an erased one is none).
pub async fn get(conn: impl sqlx::PgExecutor<'_>, org: OrgId) -> sqlx::Result<Option<Closure>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM organizations WHERE id = $1 AND erased_at IS NULL"))
        .bind(org)
        .fetch_optional(conn)
        .await
}

/// What closing or reopening did.
pub enum Changed {
    Done(Closure),
    /// It was already closed (closing), or is not closed (reopening): nothing changed.
    Unchanged(Closure),
}

/// Close `org` for `grace_days` days: restricted and unbilled from now, erasable after. The
/// status, billing following it and the audit entry in one transaction; `None` for no such
/// organization.
pub async fn close(db: &PgPool, actor: &Actor, org: OrgId, grace_days: u32) -> sqlx::Result<Option<Changed>> {
    let mut tx = db.begin().await?;
    let Some(before) = billing::lock_org(&mut tx, org, Hold::Change).await? else { return Ok(None) };
    if before.status == OrgStatus::Closed {
        return Ok(get(&mut *tx, org).await?.map(Changed::Unchanged));
    }
    // `closed_from` reads the row as it was before this statement: what reopening restores.
    let closure: Closure = sqlx::query_as(&format!(
        "UPDATE organizations
            SET status = 'closed', status_changed_at = now(),
                closed_from = status, closed_from_reason = status_reason,
                closed_billed = EXISTS (SELECT 1 FROM plan_terms t WHERE t.org_id = $1 AND t.ends_on IS NULL),
                closed_at = now(), erase_after = now() + make_interval(days => $2),
                status_reason = 'closed by its owner; its data is erased after '
                    || to_char((now() + make_interval(days => $2)) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')
                    || ' UTC unless it is reopened before (DELETE /api/v1/portal/closure)'
          WHERE id = $1
         RETURNING {COLUMNS}"
    ))
    .bind(org)
    .bind(grace_days as i32)
    .fetch_one(&mut *tx)
    .await?;
    crate::billing::terms::follow(&mut tx, org).await?;
    let entry = Entry {
        actor,
        action: AuditAction::CloseOrganization,
        org: Some(org),
        before: serde_json::json!({"status": before.status, "status_reason": before.status_reason}),
        after: serde_json::json!({"status": closure.status, "erase_after": closure.erase_after}),
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Some(Changed::Done(closure)))
}

/// Reopen `org` until it is erased: the standing it had when it closed (but active if that was a
/// suspension for invoices all settled since), billed as then, and the audit entry in one
/// transaction; `None` for no such organization.
pub async fn reopen(db: &PgPool, actor: &Actor, org: OrgId) -> sqlx::Result<Option<Changed>> {
    let mut tx = db.begin().await?;
    let row: Option<Closed> = sqlx::query_as(
        "SELECT status, closed_from, closed_from_reason, closed_billed
           FROM organizations WHERE id = $1 AND erased_at IS NULL FOR UPDATE",
    )
    .bind(org)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(Closed { status, closed_from, closed_from_reason: mut reason, closed_billed: billed }) = row else {
        return Ok(None);
    };
    let (OrgStatus::Closed, Some(mut to)) = (status, closed_from) else {
        return Ok(get(&mut *tx, org).await?.map(Changed::Unchanged));
    };
    if to == OrgStatus::Suspended && reason.as_deref() == Some(crate::billing::standing::INVOICE_OVERDUE) {
        let today = crate::billing::terms::today(&mut tx).await?;
        if !crate::billing::invoices::has_overdue(&mut tx, org, today).await? {
            (to, reason) = (OrgStatus::Active, None);
        }
    }
    let Some((before, after)) = billing::standing::write_status(&mut tx, org, to, reason.as_deref()).await? else {
        return Ok(None);
    };
    if to == OrgStatus::Suspended && billed == Some(true) {
        crate::billing::terms::resume(&mut tx, org).await?;
    } else {
        crate::billing::terms::follow(&mut tx, org).await?;
    }
    let entry = Entry {
        actor,
        action: AuditAction::ReopenOrganization,
        org: Some(org),
        before: serde_json::json!({"status": before.status}),
        after: serde_json::json!({"status": after.status, "status_reason": after.status_reason}),
        reason: None,
    };
    audit::record(&mut tx, entry).await?;
    let closure = get(&mut *tx, org).await?;
    tx.commit().await?;
    Ok(closure.map(Changed::Done))
}

/// What reopening reads of an organization.
#[derive(sqlx::FromRow)]
struct Closed {
    status: OrgStatus,
    closed_from: Option<OrgStatus>,
    closed_from_reason: Option<String>,
    closed_billed: Option<bool>,
}

/// What law and billing keep of an erased organization: its invoices (their lines go with
/// them, by reference), the credit it is still owed, and the audit log. Its own row stays too,
/// as their anchor (see [`erase`]).
pub const KEPT: &[&str] = &["invoices", "credit_balances", "audit_log"];

/// Every other table holding an organization's rows, in an order that deletes what refers to
/// a row before the row (rows of tables without `org_id` go with their parents, by reference:
/// passwords resets with their users, invoice lines are kept with their invoices).
pub const ERASED: &[&str] = &[
    "webhook_attempts",
    "webhook_queue",
    "webhook_deliveries",
    "webhook_events",
    "webhook_subscriptions",
    "submission_attempts",
    "submissions",
    "preflight_results",
    "preflight_policies",
    "passengers",
    "journey_crew",
    "cargo",
    "journeys",
    "vehicles",
    "personnel",
    "support_tickets",
    "idempotency_keys",
    "downstream_settings",
    "data_exports",
    "invitations",
    "api_keys",
    "users",
    // In the order an addition to the usage ledger writes them (`usage::add`).
    "usage_versions",
    "usage_monthly",
    "usage_overage",
    "plan_terms",
    "subscriptions",
];

/// Closed organizations whose grace period is over and that are not erased yet, after `after`
/// in id order, at most `limit` (pages, so those waiting for an invoice hold up no others).
pub async fn due(db: &PgPool, after: i64, limit: i64) -> sqlx::Result<Vec<OrgId>> {
    sqlx::query_scalar(
        "SELECT id FROM organizations
          WHERE status = 'closed' AND erased_at IS NULL AND erase_after <= now() AND id > $1
          ORDER BY id LIMIT $2",
    )
    .bind(after)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// What [`erase`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Erasure {
    /// Erased: the rows deleted, by table (tables with none left out).
    Erased(BTreeMap<&'static str, u64>),
    /// Its last invoice is not issued yet (the credit of its last term, or an overage not
    /// billed): erased by a later run, once invoicing has caught up.
    AwaitingInvoice,
    /// Reopened meanwhile, already erased, or its grace period is not over.
    NotDue,
}

/// Erase closed organization `org` once its grace period is over and nothing is left to
/// invoice: every row of [`ERASED`] goes, its own row keeps only its id, tax number (the
/// invoices name it by law; a new registration may use it again) and standing dates, and the
/// audit log says what went. One transaction, holding the organization's row and its invoicing
/// lock, the order invoicing takes them in, so no invoice is being written meanwhile.
pub async fn erase(db: &PgPool, org: OrgId) -> sqlx::Result<Erasure> {
    let mut tx = db.begin().await?;
    let due: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM organizations
          WHERE id = $1 AND status = 'closed' AND erased_at IS NULL AND erase_after <= now() FOR UPDATE",
    )
    .bind(org)
    .fetch_optional(&mut *tx)
    .await?;
    if due.is_none() {
        return Ok(Erasure::NotDue);
    }
    crate::billing::invoices::lock_invoicing(&mut tx, org).await?;
    let today = crate::billing::terms::today(&mut tx).await?;
    let unbilled = crate::usage::has_unbilled_overage(&mut tx, org).await?;
    if unbilled || !crate::billing::terms::due(&mut tx, org, today).await?.is_empty() {
        return Ok(Erasure::AwaitingInvoice);
    }
    let mut deleted = BTreeMap::new();
    for table in ERASED {
        let n = sqlx::query(&format!("DELETE FROM {table} WHERE org_id = $1")).bind(org).execute(&mut *tx).await?;
        if n.rows_affected() > 0 {
            deleted.insert(*table, n.rows_affected());
        }
    }
    sqlx::query(
        "UPDATE organizations
            SET name = '[erased]', status_reason = 'erased', erased_at = now(), tax_number_duplicate = true
          WHERE id = $1",
    )
    .bind(org)
    .execute(&mut *tx)
    .await?;
    let entry = Entry {
        actor: &Actor::Jobs,
        action: AuditAction::EraseOrganization,
        org: Some(org),
        before: serde_json::Value::Null,
        after: serde_json::json!({"deleted": deleted, "kept": KEPT}),
        reason: Some("closed by its owner; the grace period is over"),
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Erasure::Erased(deleted))
}
