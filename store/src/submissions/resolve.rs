//! Settling, for operators, a submission whose outcome downstream is `unknown` (an earlier
//! call may have reached the downstream and the look-up could not tell). An operator who
//! checked at the downstream (U-ETDS's own screens, say) says what is there:
//!
//! - **found**, with the downstream's reference: the submission goes back to the queue with that
//!   reference, which the adapter's look-up checks first (and confirms as ours) before carrying
//!   on from it;
//! - **absent**: nothing of it is held downstream under any of its references, so it goes back
//!   to the queue as new (no progress, no earlier references, no look-up) and is sent.
//!
//! The change and its audit entry are one transaction; the schedulers are woken.

use sqlx::PgPool;
use tns_core::domain::kinds::{AuditAction, SubmissionState};
use tns_core::ids::{OrgId, SubmissionId};

use super::QUEUE_CHANNEL;
use crate::audit::{self, Actor, Entry};

/// What the operator found downstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Found(String),
    Absent,
}

/// Why a submission was not resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotResolved {
    #[error("organization {org} has no submission {id}")]
    NoSuchSubmission { org: i64, id: SubmissionId },
    #[error("submission {id} is {state}, not unknown: only an unknown outcome is resolved")]
    NotUnknown { id: SubmissionId, state: SubmissionState },
    #[error("submission {id} is being looked up right now; try again in a minute")]
    Busy { id: SubmissionId },
    #[error("`{reference}` is not a downstream reference (digits)")]
    NotAReference { reference: String },
    #[error(
        "submission {id} already holds part of the notification downstream ({held}): it cannot be absent there; \
         resolve it as found with that reference"
    )]
    Held { id: SubmissionId, held: String },
}

/// The submission as it goes back to the queue.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub organization: OrgId,
    pub submission_id: SubmissionId,
    /// `found` or `absent`.
    pub resolution: &'static str,
    pub downstream_reference: Option<String>,
    pub state: SubmissionState,
}

pub async fn resolve(
    db: &PgPool,
    actor: &Actor,
    org: OrgId,
    id: SubmissionId,
    resolution: &Resolution,
    reason: &str,
) -> sqlx::Result<Result<Resolved, NotResolved>> {
    let mut tx = db.begin().await?;
    if let Resolution::Found(r) = resolution {
        if r.is_empty() || r.len() > 20 || !r.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(Err(NotResolved::NotAReference { reference: r.clone() }));
        }
    }
    let row: Option<(SubmissionState, Option<i64>, Option<String>, bool)> = sqlx::query_as(
        "SELECT state, lease_token, downstream_reference, progress <> 'null' FROM submissions
          WHERE org_id = $1 AND id = $2 FOR UPDATE",
    )
    .bind(org)
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let (reference, progressed) = match row {
        None => return Ok(Err(NotResolved::NoSuchSubmission { org: org.get(), id })),
        Some((state, ..)) if state != SubmissionState::Unknown => {
            return Ok(Err(NotResolved::NotUnknown { id, state }))
        }
        Some((_, Some(_), ..)) => return Ok(Err(NotResolved::Busy { id })),
        Some((_, None, reference, progressed)) => (reference, progressed),
    };
    // What an earlier call recorded proves the downstream holds part of it: sending it as new
    // would declare it twice.
    if matches!(resolution, Resolution::Absent) && (reference.is_some() || progressed) {
        let held = reference.map_or_else(|| "recorded progress".to_string(), |r| format!("reference {r}"));
        return Ok(Err(NotResolved::Held { id, held }));
    }
    let (name, found, message) = match resolution {
        Resolution::Found(r) => (
            "found",
            Some(r.as_str()),
            format!("resolved by an operator: held downstream as {r}; confirming and carrying on from it"),
        ),
        Resolution::Absent => ("absent", None, "resolved by an operator: not held downstream; sent as new".to_string()),
    };
    let absent = matches!(resolution, Resolution::Absent);
    let reference: Option<String> = sqlx::query_scalar(
        "UPDATE submissions
            SET state = 'pending', run_at = now(), error_message = $3,
                downstream_reference = CASE WHEN $5 THEN NULL ELSE COALESCE($4, downstream_reference) END,
                progress = CASE WHEN $5 THEN 'null'::jsonb ELSE progress END,
                earlier_references = CASE WHEN $5 THEN '{}' ELSE earlier_references END,
                attempts = CASE WHEN $5 THEN 0 ELSE attempts END
          WHERE org_id = $1 AND id = $2
         RETURNING downstream_reference",
    )
    .bind(org)
    .bind(id)
    .bind(&message)
    .bind(found)
    .bind(absent)
    .fetch_one(&mut *tx)
    .await?;
    let entry = Entry {
        actor,
        action: AuditAction::ResolveSubmission,
        org: Some(org),
        before: serde_json::json!({"submission_id": id, "state": "unknown"}),
        after: serde_json::json!({"resolution": name, "downstream_reference": found}),
        reason: Some(reason),
    };
    audit::record(&mut tx, entry).await?;
    sqlx::query("SELECT pg_notify($1, '')").bind(QUEUE_CHANNEL).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(Ok(Resolved {
        organization: org,
        submission_id: id,
        resolution: name,
        downstream_reference: reference,
        state: SubmissionState::Pending,
    }))
}
