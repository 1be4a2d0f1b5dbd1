//! What the operators' two surfaces (the command line and the admin API) both do, once: each
//! change goes through `tns_store::billing::standing` (audited in its own transaction) and is then
//! published to every API process.

use serde::Serialize;
use serde_json::Value;
use sqlx::PgPool;
use tns_core::ids::{InvoiceId, OrgId, SubmissionId};
use tns_core::{
    domain::kinds::{InvoiceStatus, OrgStatus, SubmissionState},
    env::RedisSettings,
};
use tns_http::{
    answer,
    wire::{each, AttemptOut, SubmissionOut},
};
use tns_store::{
    audit::Actor,
    billing::standing::Settled,
    submissions::{
        requeue::Requeued,
        resolve::{NotResolved, Resolution, Resolved},
    },
};
use utoipa::ToSchema;

/// The organization an operator named by its number, if there is one: the only way the
/// operators' surfaces come to hold an [`OrgId`].
pub async fn organization(db: &PgPool, number: i64) -> sqlx::Result<Option<OrgId>> {
    tns_store::accounts::org_id(db, number).await
}

/// A change of an organization: what it was and is.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Changed {
    #[schema(value_type = i64)]
    pub organization: OrgId,
    pub before: serde_json::Value,
    pub after: serde_json::Value,
    /// `false`: the change is made, but Redis could not be told, so the API processes apply it
    /// within an hour rather than at once.
    pub published: bool,
}

/// Set `org`'s status; `None` for no such organization.
pub async fn set_status(
    db: &PgPool,
    redis: &RedisSettings,
    actor: &Actor,
    org: i64,
    to: OrgStatus,
    reason: &str,
) -> sqlx::Result<Option<Changed>> {
    let Some(org) = organization(db, org).await? else { return Ok(None) };
    let Some((before, after)) = tns_store::billing::standing::change(db, actor, org, to, Some(reason)).await? else {
        return Ok(None);
    };
    let (before, after) = (serde_json::to_value(before), serde_json::to_value(after));
    Ok(Some(changed(redis, org, before.unwrap_or_default(), after.unwrap_or_default()).await))
}

/// Move `org` to plan `code` (which exists); `None` for no such organization.
pub async fn change_plan(
    db: &PgPool,
    redis: &RedisSettings,
    actor: &Actor,
    org: i64,
    code: &str,
    reason: &str,
) -> sqlx::Result<Option<Changed>> {
    let Some(org) = organization(db, org).await? else { return Ok(None) };
    let Some(switched) = tns_store::billing::standing::change_plan(db, actor, org, code, Some(reason)).await? else {
        return Ok(None);
    };
    Ok(Some(changed(redis, org, switched.before.into(), code.into()).await))
}

/// Tell every API process (they read an organization's plan and standing from what is
/// published in Redis) by forgetting what is published.
async fn changed(redis: &RedisSettings, org: OrgId, before: serde_json::Value, after: serde_json::Value) -> Changed {
    let published = match tns_store::published::forget_limits(redis, &[org]).await {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(error = %e, org = org.get(), "a change could not be published to the API processes");
            false
        }
    };
    Changed { organization: org, before, after, published }
}

/// What the API processes do when a change could not be published.
pub const UNPUBLISHED: &str =
    "the change is made, but the API processes could not be told at once (Redis): they apply it within an hour";

/// A submission as it was sent, personal data unmasked, with its attempts.
#[derive(Debug, Serialize, ToSchema)]
pub struct Sent {
    pub submission: SubmissionOut,
    /// The snapshot sent downstream, exactly (identity numbers and names unmasked).
    pub sent: serde_json::Value,
    /// Each passenger's outcome, once delivered.
    pub passenger_results: Option<serde_json::Value>,
    pub attempts: Vec<AttemptOut>,
}

/// Submission `id` of `org` as it was sent, the look audited with `reason`; `None` when the
/// organization has no such submission (nothing is logged then).
pub async fn submission_sent(
    db: &PgPool,
    actor: &Actor,
    org: i64,
    id: i64,
    reason: &str,
) -> sqlx::Result<Option<Sent>> {
    let Some(org) = organization(db, org).await? else { return Ok(None) };
    // The operator's number names a submission of that organization only.
    let id = SubmissionId(id);
    let Some(found) = tns_store::submissions::detail(db, org, id).await? else {
        return Ok(None);
    };
    tns_store::billing::standing::viewed_submission(db, actor, org, id, reason).await?;
    let attempts = tns_store::submissions::attempts(db, org, id).await?;
    Ok(Some(Sent {
        submission: found.submission.into(),
        sent: found.snapshot.0,
        passenger_results: found.passenger_results.and_then(|r| serde_json::to_value(r.0).ok()),
        attempts: each(attempts),
    }))
}

/// Settle submission `id` of organization number `org`, whose outcome is unknown (see
/// `tns_store::submissions::resolve`).
pub async fn resolve(
    db: &PgPool,
    actor: &Actor,
    org: i64,
    id: i64,
    resolution: &Resolution,
    reason: &str,
) -> sqlx::Result<Result<ResolvedOut, NotResolved>> {
    let Some(found) = organization(db, org).await? else {
        return Ok(Err(NotResolved::NoSuchSubmission { org, id: SubmissionId(id) }));
    };
    let resolved = tns_store::submissions::resolve::resolve(db, actor, found, SubmissionId(id), resolution, reason);
    Ok(resolved.await?.map(ResolvedOut::from))
}

answer! {
    /// The submission as it goes back to the queue.
    #[derive(Debug, Clone)]
    ResolvedOut as Resolved from Resolved {
        #[schema(value_type = i64)]
        organization: OrgId,
        #[schema(value_type = i64)]
        submission_id: SubmissionId,
        /// `found` or `absent`.
        resolution: &'static str,
        downstream_reference: Option<String>,
        state: SubmissionState,
    }
}

answer! {
    /// A failed submission and the one queued in its place.
    #[derive(Debug, Clone)]
    RequeuedOut as Requeued from Requeued {
        #[schema(value_type = i64)]
        failed_id: SubmissionId,
        #[schema(value_type = i64)]
        submission_id: SubmissionId,
    }
}

/// What a re-queue did.
#[derive(Debug, Serialize, ToSchema)]
pub struct RequeuedAll {
    #[schema(value_type = i64)]
    pub organization: OrgId,
    /// The new submissions (shipments, then journeys, each oldest first; empty when nothing
    /// had failed).
    #[schema(value_type = Vec<i64>)]
    pub submission_ids: Vec<SubmissionId>,
    /// Each failed submission and the one queued in its place.
    pub requeued: Vec<RequeuedOut>,
}

/// Queue `org`'s failed submissions again, as they were sent (see
/// `tns_store::submissions::requeue`); `None` for no such organization.
pub async fn requeue(db: &PgPool, actor: &Actor, org: i64, reason: &str) -> sqlx::Result<Option<RequeuedAll>> {
    let Some(org) = organization(db, org).await? else { return Ok(None) };
    let requeued = tns_store::submissions::requeue::requeue_failed(db, actor, org, reason).await?;
    Ok(requeued.map(|requeued| RequeuedAll {
        organization: org,
        submission_ids: requeued.iter().map(|r| r.submission_id).collect(),
        requeued: each(requeued),
    }))
}

/// An invoice recorded as paid or void.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InvoiceSettled {
    #[schema(value_type = i64)]
    pub invoice: InvoiceId,
    #[schema(value_type = i64)]
    pub organization: OrgId,
    pub status: InvoiceStatus,
    /// The organization was suspended for overdue invoices and none is left: it is active again.
    pub reactivated: bool,
    /// `false`: reactivated, but Redis could not be told, so the API processes apply it within
    /// an hour rather than at once.
    pub published: bool,
}

/// Why an invoice was not settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotSettled {
    NoSuchInvoice,
    NotOpen(InvoiceStatus),
}

impl std::fmt::Display for NotSettled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotSettled::NoSuchInvoice => f.write_str("no such invoice"),
            NotSettled::NotOpen(s) => write!(f, "the invoice is {s}: only an open invoice is paid or voided"),
        }
    }
}

/// Record open invoice `id` as paid (or void it); an organization suspended only for overdue
/// invoices is reactivated, at once on every API process, when none is left.
pub async fn settle_invoice(
    db: &PgPool,
    redis: &RedisSettings,
    actor: &Actor,
    id: InvoiceId,
    to: InvoiceStatus,
    reason: &str,
) -> sqlx::Result<Result<InvoiceSettled, NotSettled>> {
    let today = chrono::Utc::now().date_naive();
    match tns_store::billing::standing::settle_invoice(db, actor, id, to, reason, today).await? {
        Settled::NoSuchInvoice => Ok(Err(NotSettled::NoSuchInvoice)),
        Settled::NotOpen(status) => Ok(Err(NotSettled::NotOpen(status))),
        Settled::Done { org, reactivated } => {
            let published = !reactivated || changed(redis, org, Value::Null, Value::Null).await.published;
            Ok(Ok(InvoiceSettled { invoice: id, organization: org, status: to, reactivated, published }))
        }
    }
}
