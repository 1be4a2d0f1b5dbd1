//! Billing and standing: an organization's plan (`plans`), the days it holds each plan
//! (`terms`), what it is invoiced (`invoices`) and its standing (`standing`: status changes and
//! the billing that follows them). They read and write one another's rows in one transaction,
//! so they live together, and every such transaction starts from [`lock_org`].
//!
//! **Lock order** (ARCHITECTURE.md, "Invariants"): the organization's row ([`lock_org`]), then
//! its invoicing lock (`invoices::lock_invoicing`) when what is due is read, then its terms, its
//! invoices and its usage rows. A transaction that takes them in another order can deadlock with
//! the invoicing job.

pub mod invoices;
pub mod plans;
pub mod standing;
pub mod terms;

use sqlx::PgConnection;
use tns_core::ids::OrgId;

use crate::accounts::Standing;

/// How a transaction holds an organization's row until it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// To change the organization: its standing, plan or closure (`FOR UPDATE`).
    Change,
    /// To write what refers to it (an invoice, re-queued submissions), which it must outlast:
    /// it cannot be erased or deleted meanwhile (`FOR KEY SHARE`).
    Reference,
}

/// Take organization `org`'s row as `hold` says, first in every billing transaction; its
/// standing, `None` for no such organization.
pub async fn lock_org(tx: &mut PgConnection, org: OrgId, hold: Hold) -> sqlx::Result<Option<Standing>> {
    let lock = match hold {
        Hold::Change => "FOR UPDATE",
        Hold::Reference => "FOR KEY SHARE",
    };
    sqlx::query_as(&format!("SELECT status, status_reason, trial_ends_at FROM organizations WHERE id = $1 {lock}"))
        .bind(org)
        .fetch_optional(tx)
        .await
}
