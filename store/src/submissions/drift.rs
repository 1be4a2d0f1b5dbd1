//! Drift checks: which delivered records to look at downstream, what TNS expects the
//! downstream to hold of each, and recording what differs on the record's latest submission
//! with a `submission.drifted` event (the jobs role asks the downstream in between).
//!
//! A record is a candidate while the downstream holds it (`delivered` or `cancelled`, with a
//! reference), it departs on or after the first day looked at, its latest submission (no-show
//! reports aside, which change no fact compared) is delivered — an unfinished or failed one
//! means TNS itself is changing it — and that submission was not checked within the interval.

use std::time::Duration;
use tns_core::ids::OrgId;

use sqlx::{types::Json, PgPool};
use tns_adapter::{Kind, Observed};
use tns_core::domain::{
    drift::{Difference, Drift},
    kinds::{EventType, RecordStatus, TargetType},
};

use super::{delivery::Delivery, Submission, Target, COLUMNS};

/// A record to check, with its latest submission.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Candidate {
    pub submission_id: i64,
    pub org_id: OrgId,
    pub target_type: TargetType,
    pub target_id: i64,
    pub adapter: String,
    pub status: RecordStatus,
    pub downstream_reference: String,
}

impl Candidate {
    pub fn target(&self) -> Target {
        Target::of(self.target_type, self.target_id)
    }
}

/// What to ask the downstream about a candidate and what TNS expects it to answer.
#[derive(Debug, Clone)]
pub struct Expected {
    pub kind: Kind,
    /// What the adapter kept of the delivery (handed back with the question).
    pub downstream_state: serde_json::Value,
    /// Our references of the record's submissions (`tns-<id>`, and those they continued): the
    /// downstream's trip must carry one of them as its tag.
    pub references: Vec<String>,
    /// What TNS delivered, in the fields the downstream's answer is compared in.
    pub facts: Observed,
}

/// What recording a check did.
#[derive(Debug, Clone)]
pub enum Recorded {
    /// The downstream holds what TNS delivered (any earlier drift cleared).
    InStep,
    /// Differences other than the last check's: recorded and told.
    Drifted,
    /// The same differences as the last check found.
    Unchanged,
    /// A newer submission of the record appeared meanwhile: nothing recorded.
    Superseded,
}

/// Up to `limit` candidates, at most `per_org` of one organization, the longest unchecked
/// first, departing `days_back` days before today (Türkiye's calendar) or later, not checked
/// within `interval`.
pub async fn candidates(
    db: &PgPool,
    days_back: i32,
    interval: Duration,
    per_org: i64,
    limit: i64,
) -> sqlx::Result<Vec<Candidate>> {
    sqlx::query_as(
        "WITH day AS (SELECT (now() AT TIME ZONE INTERVAL '+03:00')::date - $1::int AS first),
         records AS (
            SELECT org_id, 'journey' AS target_type, id, status, downstream_reference FROM journeys
             WHERE status IN ('delivered', 'cancelled') AND downstream_reference IS NOT NULL AND departure_date >= (SELECT first FROM day)
            UNION ALL
            SELECT org_id, 'cargo', id, status, downstream_reference FROM cargo
             WHERE status IN ('delivered', 'cancelled') AND downstream_reference IS NOT NULL AND loading_date >= (SELECT first FROM day)
         ), latest AS (
            SELECT r.org_id, r.target_type, r.id AS target_id, r.status, r.downstream_reference,
                   s.id AS submission_id, s.adapter, s.drift_checked_at
              FROM records r CROSS JOIN LATERAL (
                   SELECT id, adapter, state, drift_checked_at FROM submissions s
                    WHERE s.org_id = r.org_id AND s.target_type = r.target_type AND s.target_id = r.id
                      AND s.operation <> 'no_show'
                    ORDER BY s.id DESC LIMIT 1) s
             WHERE s.state = 'delivered'
               AND (s.drift_checked_at IS NULL OR s.drift_checked_at < now() - make_interval(secs => $2))
         ), ranked AS (
            SELECT *, row_number() OVER (PARTITION BY org_id ORDER BY drift_checked_at NULLS FIRST, submission_id) AS n
              FROM latest
         )
         SELECT submission_id, org_id, target_type, target_id, adapter, status, downstream_reference FROM ranked
          WHERE n <= $3
          ORDER BY drift_checked_at NULLS FIRST, submission_id
          LIMIT $4",
    )
    .bind(days_back)
    .bind(interval.as_secs_f64())
    .bind(per_org)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// What the downstream should hold of `c` after its delivered submissions; `None` when
/// nothing delivered describes it (nothing to compare).
pub async fn expected(db: &PgPool, c: &Candidate) -> anyhow::Result<Option<Expected>> {
    let mut conn = db.acquire().await?;
    let cancelled = c.status == RecordStatus::Cancelled;
    let Some((_, state)) = super::delivered_state(&mut conn, c.org_id, c.target()).await? else {
        return Ok(None);
    };
    let references: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT r FROM submissions s, unnest(s.earlier_references || ('tns-' || s.id)) AS r
          WHERE s.org_id = $1 AND s.target_type = $2 AND s.target_id = $3",
    )
    .bind(c.org_id)
    .bind(c.target_type)
    .bind(c.target_id)
    .fetch_all(&mut *conn)
    .await?;
    match c.target() {
        Target::Journey(id) => {
            let history = super::delivered_history(&mut conn, c.org_id, id).await?;
            let Some(d) = Delivery::replay(&history)? else { return Ok(None) };
            let trip = d.trip();
            Ok(Some(Expected {
                kind: d.kind,
                downstream_state: state.0,
                references,
                facts: Observed {
                    cancelled,
                    plate: Some(trip.plate.clone()),
                    departure_date: Some(trip.departure.date.clone()),
                    departure_time: Some(trip.departure.time.clone()),
                    passengers: Some(d.passenger_count() as u32),
                    crew: Some(d.crew_count() as u32),
                },
            }))
        }
        Target::Cargo(id) => Ok(super::delivered_cargo(&mut conn, c.org_id, id).await?.map(|d| Expected {
            kind: Kind::Goods,
            downstream_state: state.0,
            references,
            facts: Observed {
                cancelled,
                plate: Some(d.held.plate),
                departure_date: Some(d.held.loading.date),
                departure_time: Some(d.held.loading.time),
                passengers: None,
                crew: None,
            },
        })),
    }
}

/// Mark `c` checked without a comparison (the downstream cannot be asked, or said it will not
/// answer): it waits its interval like a checked one.
pub async fn mark_checked(db: &PgPool, c: &Candidate) -> sqlx::Result<()> {
    due_in(db, c, Duration::ZERO, Duration::ZERO).await
}

/// Make `c` due again `after` from now (a check that could not be made), for checks left alone
/// for `interval`: it goes behind the records never or long unchecked, so a few failing ones
/// cannot hold up the rest.
pub async fn due_in(db: &PgPool, c: &Candidate, interval: Duration, after: Duration) -> sqlx::Result<()> {
    let back = interval.saturating_sub(after);
    sqlx::query(
        "UPDATE submissions SET drift_checked_at = now() - make_interval(secs => $3) WHERE org_id = $1 AND id = $2",
    )
    .bind(c.org_id)
    .bind(c.submission_id)
    .bind(back.as_secs_f64())
    .execute(db)
    .await
    .map(|_| ())
}

/// Record a check of `c` that found `differences` (none: in step), in one transaction: the
/// submission's `drift` and check time, and a `submission.drifted` event when the differences
/// are not the last check's. Nothing is recorded when a newer submission of the record
/// appeared meanwhile (the check compared against what is no longer the latest): the record
/// is held first, so one being queued now is waited for and seen.
///
/// The event's data is the submission as the APIs answer it, `E` (the store has no answer
/// types: their shape is the HTTP crate's).
pub async fn record<E: From<Submission> + serde::Serialize>(
    db: &PgPool,
    c: &Candidate,
    differences: Vec<Difference>,
) -> sqlx::Result<Recorded> {
    let mut tx = db.begin().await?;
    if !crate::records::hold(&mut tx, c.target(), c.org_id).await? {
        return Ok(Recorded::Superseded);
    }
    let before: Option<Option<Json<Drift>>> = sqlx::query_scalar(
        "SELECT s.drift FROM submissions s
          WHERE s.org_id = $1 AND s.id = $2
            AND NOT EXISTS (SELECT 1 FROM submissions n
                             WHERE n.org_id = s.org_id AND n.target_type = s.target_type
                               AND n.target_id = s.target_id AND n.id > s.id AND n.operation <> 'no_show')
            FOR UPDATE",
    )
    .bind(c.org_id)
    .bind(c.submission_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(before) = before else { return Ok(Recorded::Superseded) };
    let in_step = differences.is_empty();
    let new = !in_step && before.as_ref().map(|d| &d.0.differences) != Some(&differences);
    let drift = (!in_step).then(|| Drift { checked_at: chrono::Utc::now(), differences });
    let sub: Submission = sqlx::query_as(&format!(
        "UPDATE submissions SET drift = $3, drift_checked_at = now() WHERE org_id = $1 AND id = $2 RETURNING {COLUMNS}"
    ))
    .bind(c.org_id)
    .bind(c.submission_id)
    .bind(drift.map(Json))
    .fetch_one(&mut *tx)
    .await?;
    if new {
        let data = serde_json::to_value(E::from(sub)).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
        sqlx::query("SELECT webhook_emit(ARRAY[$1::bigint], ARRAY[$2::text], ARRAY[$3::jsonb])")
            .bind(c.org_id)
            .bind(EventType::SubmissionDrifted.as_str())
            .bind(Json(data))
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(match (in_step, new) {
        (true, _) => Recorded::InStep,
        (false, true) => Recorded::Drifted,
        (false, false) => Recorded::Unchanged,
    })
}
