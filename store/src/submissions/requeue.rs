//! Re-queueing an organization's failed submissions, for operators (after a downstream outage
//! outlasted the retries, say): each journey or shipment whose latest submission failed gets a
//! new one sending the same thing (operation, adapter, snapshot) — a retry of what was sent,
//! not of what the record holds now. All of them and the audit entry are one transaction.
//! One whose personal data was erased past retention is passed by: it would send the erased
//! form.

use sqlx::{types::Json, PgConnection, PgPool};
use tns_core::domain::{
    kinds::{AuditAction, Operation, TargetType},
    warnings::Warning,
};
use tns_core::ids::{OrgId, SubmissionId};

use super::{enqueue, Queued, Target};
use crate::{
    audit::{self, Actor, Entry},
    billing::{lock_org, Hold},
    cargo, journeys,
};

/// A failed submission and the one queued in its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requeued {
    pub failed_id: SubmissionId,
    pub submission_id: SubmissionId,
}

#[derive(sqlx::FromRow)]
struct Failed {
    id: SubmissionId,
    target_type: TargetType,
    target_id: i64,
    operation: Operation,
    adapter: String,
    snapshot: Json<serde_json::Value>,
    #[sqlx(json)]
    warnings: Vec<Warning>,
}

impl Failed {
    fn target(&self) -> Target {
        Target::of(self.target_type, self.target_id)
    }
}

/// Queue again every failed submission of `org` that is its record's latest, for `actor`
/// (one audit entry listing them, none when there is nothing to queue); what was queued
/// (shipments, then journeys, each oldest first), `None` for no such organization. The
/// schedulers are woken at commit.
pub async fn requeue_failed(
    db: &PgPool,
    actor: &Actor,
    org: OrgId,
    reason: &str,
) -> sqlx::Result<Option<Vec<Requeued>>> {
    let mut tx = db.begin().await?;
    if lock_org(&mut tx, org, Hold::Reference).await?.is_none() {
        return Ok(None);
    }
    let candidates: Vec<Failed> = sqlx::query_as(
        "SELECT id, target_type, target_id, operation, adapter, snapshot, warnings FROM (
            SELECT DISTINCT ON (target_type, target_id) * FROM submissions WHERE org_id = $1
             ORDER BY target_type, target_id, id DESC) latest
          WHERE state = 'failed' AND personal_data_erased_at IS NULL
          ORDER BY target_type, target_id",
    )
    .bind(org)
    .fetch_all(&mut *tx)
    .await?;
    let mut requeued = Vec::with_capacity(candidates.len());
    for failed in candidates {
        // Lock the record as a submit does (in one order, so two re-queues cannot deadlock),
        // then make sure nobody submitted it since the candidates were read.
        let target = failed.target();
        let exists = match target {
            Target::Journey(id) => journeys::lock(&mut tx, org, id).await?.is_some(),
            Target::Cargo(id) => cargo::get_for_update(&mut tx, org, id).await?.is_some(),
        };
        if !exists || !still_latest(&mut tx, org, target, failed.id).await? {
            continue;
        }
        let by = actor.as_text();
        let sub = enqueue(
            &mut tx,
            org,
            target,
            Queued {
                operation: failed.operation,
                adapter: &failed.adapter,
                snapshot: &failed.snapshot.0,
                warnings: &failed.warnings,
                by: &by,
            },
        )
        .await?;
        requeued.push(Requeued { failed_id: failed.id, submission_id: sub.id });
    }
    if requeued.is_empty() {
        return Ok(Some(requeued));
    }
    let entry = Entry {
        actor,
        action: AuditAction::Requeue,
        org: Some(org),
        before: serde_json::json!({"failed_submission_ids": requeued.iter().map(|r| r.failed_id).collect::<Vec<_>>()}),
        after: serde_json::json!({"submission_ids": requeued.iter().map(|r| r.submission_id).collect::<Vec<_>>()}),
        reason: Some(reason),
    };
    audit::record(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(Some(requeued))
}

/// Whether failed submission `id` is still its record's latest, with none unfinished.
async fn still_latest(tx: &mut PgConnection, org: OrgId, target: Target, id: SubmissionId) -> sqlx::Result<bool> {
    sqlx::query_scalar(
        "SELECT NOT EXISTS (SELECT 1 FROM submissions WHERE org_id = $1 AND target_type = $2 AND target_id = $3
                               AND (id > $4 OR state IN ('pending', 'unknown')))",
    )
    .bind(org)
    .bind(target.kind())
    .bind(target.id())
    .bind(id)
    .fetch_one(tx)
    .await
}
