//! Submission rows as the API reads and creates them (the scheduler's claim and complete
//! statements live in `tns-scheduler`), and the per-organization downstream setting.

use sqlx::{types::Json, PgConnection, PgPool, Postgres, QueryBuilder};
use tns_adapter::PassengerResult;
use tns_core::ids::{CargoId, JourneyId, OrgId, SubmissionId};

use crate::pagination::{Keyed, Page};
use tns_core::domain::{
    drift::Drift,
    kinds::{Operation, SubmissionState, TargetType},
    warnings::Warning,
};

/// What the downstream holds of a journey after its delivered submissions.
pub mod delivery;
/// Drift checks: delivered records against what the downstream holds now.
pub mod drift;
/// Erasing what submissions hold of people once their record is past retention.
pub mod erasure;
/// The queue's NOTIFY channels belong to the scheduler's queue; the API speaks on one and
/// listens on the other.
pub mod queue;
/// Operators queue failed submissions again.
pub mod requeue;
/// Operators settle a submission whose outcome was unknown.
pub mod resolve;

pub use queue::{DONE_CHANNEL, QUEUE_CHANNEL};

/// What the record is: a journey or a cargo shipment, by id.
pub use tns_core::ids::Target;

/// A submission row (`next_attempt_at` is its `run_at` while it waits for another attempt).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Submission {
    pub id: SubmissionId,
    pub target_type: TargetType,
    pub target_id: i64,
    pub operation: Operation,
    pub adapter: String,
    pub state: SubmissionState,
    pub downstream_reference: Option<String>,
    pub error_message: Option<String>,
    pub attempts: i32,
    pub next_attempt_at: Option<chrono::DateTime<chrono::Utc>>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub finished_at: Option<chrono::DateTime<chrono::Utc>>,
    #[sqlx(json)]
    pub warnings: Vec<Warning>,
    /// `user:<id>`, `key:<id>` or `operator:<name>`; `None` for submissions older than the column.
    pub submitted_by: Option<String>,
    /// What the last drift check found changed downstream; `None` while nothing differs.
    #[sqlx(json(nullable))]
    pub drift: Option<Drift>,
}

impl Submission {
    /// The journey or shipment it is of.
    pub fn target(&self) -> Target {
        Target::of(self.target_type, self.target_id)
    }

    /// The downstream's message with any number it quotes masked (for a credential that may
    /// not see who travels).
    pub fn mask_messages(&mut self) {
        self.error_message = self.error_message.as_deref().map(tns_core::domain::personal::mask_numbers);
    }
}

impl Keyed for Submission {
    fn key(&self) -> i64 {
        self.id.get()
    }
}

const COLUMNS: &str = "id, target_type, target_id, operation, adapter, state, downstream_reference, error_message, \
     attempts, CASE WHEN state IN ('pending', 'unknown') THEN run_at END AS next_attempt_at, created_at, finished_at, warnings, \
     submitted_by, drift";

/// A submission attempt row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Attempt {
    pub started_at: chrono::DateTime<chrono::Utc>,
    pub finished_at: chrono::DateTime<chrono::Utc>,
    /// An `AttemptOutcome`'s text.
    pub outcome: String,
    pub error: Option<String>,
    pub downstream_reference: Option<String>,
}

/// A delivered journey or amendment submission, as history to replay.
#[derive(Debug, sqlx::FromRow)]
pub struct Delivered {
    pub operation: Operation,
    pub adapter: String,
    pub snapshot: Json<serde_json::Value>,
    pub passenger_results: Option<Json<Vec<PassengerResult>>>,
    /// What the adapter keeps to change the notification later (`null` when nothing).
    pub downstream_state: Json<serde_json::Value>,
}

/// The record's unfinished (`pending` or `unknown`) submission, if it has one.
pub async fn pending_for(tx: &mut PgConnection, org: OrgId, target: Target) -> sqlx::Result<Option<Submission>> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM submissions
          WHERE org_id = $1 AND target_type = $2 AND target_id = $3 AND state IN ('pending', 'unknown')"
    ))
    .bind(org)
    .bind(target.kind())
    .bind(target.id())
    .fetch_optional(tx)
    .await
}

/// The record's latest delivered submission.
pub async fn last_delivered(tx: &mut PgConnection, org: OrgId, target: Target) -> sqlx::Result<Option<Submission>> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM submissions
          WHERE org_id = $1 AND target_type = $2 AND target_id = $3 AND state = 'delivered'
          ORDER BY id DESC LIMIT 1"
    ))
    .bind(org)
    .bind(target.kind())
    .bind(target.id())
    .fetch_optional(tx)
    .await
}

/// The adapter and the kept downstream state of the record's latest delivered notification
/// (not a cancellation): what a cancellation or a report needs.
pub async fn delivered_state(
    tx: &mut PgConnection,
    org: OrgId,
    target: Target,
) -> sqlx::Result<Option<(String, Json<serde_json::Value>)>> {
    sqlx::query_as(
        "SELECT adapter, downstream_state FROM submissions
          WHERE org_id = $1 AND target_type = $2 AND target_id = $3 AND state = 'delivered'
            AND operation NOT IN ('cancel', 'reactivate', 'no_show')
          ORDER BY id DESC LIMIT 1",
    )
    .bind(org)
    .bind(target.kind())
    .bind(target.id())
    .fetch_optional(tx)
    .await
}

/// The adapter and downstream reference of the record's latest submission when it is a whole
/// notification (journey or cargo) that failed after the downstream gave a reference: what it
/// holds of a record never delivered.
pub async fn failed_but_held(
    tx: &mut PgConnection,
    org: OrgId,
    target: Target,
) -> sqlx::Result<Option<(String, String)>> {
    sqlx::query_as(
        "SELECT adapter, downstream_reference FROM (
            SELECT * FROM submissions WHERE org_id = $1 AND target_type = $2 AND target_id = $3
             ORDER BY id DESC LIMIT 1) latest
          WHERE state = 'failed' AND operation IN ('journey', 'cargo') AND downstream_reference IS NOT NULL",
    )
    .bind(org)
    .bind(target.kind())
    .bind(target.id())
    .fetch_optional(tx)
    .await
}

/// The journey's delivered submissions, oldest first.
pub async fn delivered_history(tx: &mut PgConnection, org: OrgId, journey: JourneyId) -> sqlx::Result<Vec<Delivered>> {
    sqlx::query_as(
        "SELECT operation, adapter, snapshot, passenger_results, downstream_state FROM submissions
          WHERE org_id = $1 AND target_type = 'journey' AND target_id = $2 AND state = 'delivered'
            AND operation IN ('journey', 'amendment')
          ORDER BY id",
    )
    .bind(org)
    .bind(journey)
    .fetch_all(tx)
    .await
}

/// A delivered goods shipment as the downstream holds it: the adapter, the shipment as last
/// delivered (its first delivery's, or a later amendment's), and what the adapter keeps.
pub struct DeliveredCargo {
    pub adapter: String,
    pub held: tns_adapter::Cargo,
    pub downstream_state: serde_json::Value,
}

/// The shipment's last delivery (`None` before its first); a snapshot this code cannot read is
/// an internal error (the schema is ours).
pub async fn delivered_cargo(
    tx: &mut PgConnection,
    org: OrgId,
    cargo: CargoId,
) -> anyhow::Result<Option<DeliveredCargo>> {
    let row: Option<(Operation, String, Json<serde_json::Value>, Json<serde_json::Value>)> = sqlx::query_as(
        "SELECT operation, adapter, snapshot, downstream_state FROM submissions
          WHERE org_id = $1 AND target_type = 'cargo' AND target_id = $2 AND state = 'delivered'
            AND operation IN ('cargo', 'amendment')
          ORDER BY id DESC LIMIT 1",
    )
    .bind(org)
    .bind(cargo)
    .fetch_optional(tx)
    .await?;
    let Some((operation, adapter, Json(snapshot), Json(downstream_state))) = row else { return Ok(None) };
    let held = match operation {
        Operation::Amendment => {
            serde_json::from_value::<tns_adapter::Amendment>(snapshot)?
                .goods
                .ok_or_else(|| anyhow::anyhow!("cargo {cargo} has an amendment without its goods"))?
                .now
        }
        _ => serde_json::from_value(snapshot)?,
    };
    Ok(Some(DeliveredCargo { adapter, held, downstream_state }))
}

/// What a new submission sends, where, and who queued it.
pub struct Queued<'a> {
    pub operation: Operation,
    pub adapter: &'a str,
    pub snapshot: &'a serde_json::Value,
    pub warnings: &'a [Warning],
    /// `Principal::credential_id` of the caller, or `operator:<name>`.
    pub by: &'a str,
}

/// Queue a submission, mark its record `submitted`, and wake the schedulers (the NOTIFY is
/// delivered when the transaction commits). It keeps the ID and trace of the HTTP request this
/// task serves, if any, so its attempts can be traced back to it.
///
/// When the record's latest submission failed with the same operation and adapter, its
/// progress is where this one starts: what the downstream already holds from it (a trip
/// declared before a later step was refused, say) is used, never sent twice. So is its
/// reference when no progress was recorded but one of its calls may have reached the
/// downstream (an attempt that timed out, failed transiently or was abandoned): this one then
/// looks it up before sending.
pub async fn enqueue(tx: &mut PgConnection, org: OrgId, target: Target, s: Queued<'_>) -> sqlx::Result<Submission> {
    let Queued { operation, adapter, snapshot, warnings, by } = s;
    let request = tns_core::telemetry::request();
    let (request_id, traceparent) = match request {
        Some(r) => (Some(r.id), r.traceparent),
        None => (None, None),
    };
    let sub: Submission = sqlx::query_as(&format!(
        "WITH prior AS (
            SELECT progress, earlier_references || ('tns-' || id) AS earlier FROM (
                SELECT * FROM submissions WHERE org_id = $1 AND target_type = $2 AND target_id = $3
                 ORDER BY id DESC LIMIT 1) latest
             WHERE state = 'failed' AND operation = $4 AND adapter = $5
               AND (progress <> 'null' OR EXISTS (
                    SELECT 1 FROM submission_attempts a
                     WHERE a.submission_id = latest.id AND a.outcome IN ('transient', 'timeout', 'abandoned')))
         ), cleared AS (
            -- A drift is about the record's latest submission: a new one (a no-show report aside,
            -- which changes nothing compared) is checked afresh once delivered.
            UPDATE submissions SET drift = NULL
             WHERE org_id = $1 AND target_type = $2 AND target_id = $3 AND drift IS NOT NULL AND $4 <> 'no_show'
         )
         INSERT INTO submissions (org_id, target_type, target_id, operation, adapter, snapshot, warnings, progress,
                                  earlier_references, submitted_by, request_id, traceparent)
         VALUES ($1, $2, $3, $4, $5, $6, $7, COALESCE((SELECT progress FROM prior), 'null'),
                 COALESCE((SELECT earlier FROM prior), '{{}}'), $8, $9, $10)
         RETURNING {COLUMNS}"
    ))
    .bind(org)
    .bind(target.kind())
    .bind(target.id())
    .bind(operation)
    .bind(adapter)
    .bind(Json(snapshot))
    .bind(Json(warnings))
    .bind(by)
    .bind(request_id)
    .bind(traceparent)
    .fetch_one(&mut *tx)
    .await?;
    let table = match target {
        Target::Journey(_) => "journeys",
        Target::Cargo(_) => "cargo",
    };
    sqlx::query(&format!("UPDATE {table} SET status = 'submitted', updated_at = now() WHERE org_id = $1 AND id = $2"))
        .bind(org)
        .bind(target.id())
        .execute(&mut *tx)
        .await?;
    sqlx::query("SELECT pg_notify($1, '')").bind(QUEUE_CHANNEL).execute(&mut *tx).await?;
    Ok(sub)
}

pub async fn get(db: &PgPool, org: OrgId, id: SubmissionId) -> sqlx::Result<Option<Submission>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM submissions WHERE org_id = $1 AND id = $2"))
        .bind(org)
        .bind(id)
        .fetch_optional(db)
        .await
}

/// A submission with what was sent and each passenger's outcome.
#[derive(Debug, sqlx::FromRow)]
pub struct Detailed {
    #[sqlx(flatten)]
    pub submission: Submission,
    pub snapshot: Json<serde_json::Value>,
    pub passenger_results: Option<Json<Vec<PassengerResult>>>,
}

pub async fn detail(db: &PgPool, org: OrgId, id: SubmissionId) -> sqlx::Result<Option<Detailed>> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS}, snapshot, passenger_results FROM submissions WHERE org_id = $1 AND id = $2"
    ))
    .bind(org)
    .bind(id)
    .fetch_optional(db)
    .await
}

pub async fn attempts(db: &PgPool, org: OrgId, id: SubmissionId) -> sqlx::Result<Vec<Attempt>> {
    sqlx::query_as(
        "SELECT started_at, finished_at, outcome, error, downstream_reference FROM submission_attempts
          WHERE org_id = $1 AND submission_id = $2 ORDER BY id",
    )
    .bind(org)
    .bind(id)
    .fetch_all(db)
    .await
}

/// True once the submission is no longer `pending`: `delivered`, `failed`, `unknown` (or gone).
pub async fn is_final(db: &PgPool, id: SubmissionId) -> sqlx::Result<bool> {
    let state: Option<String> =
        sqlx::query_scalar("SELECT state FROM submissions WHERE id = $1").bind(id).fetch_optional(db).await?;
    Ok(state.is_none_or(|s| s != "pending"))
}

#[derive(Debug, Default)]
pub struct Filter {
    pub state: Option<SubmissionState>,
    pub of: Option<Of>,
    /// Created on this day or later, on Europe/Istanbul's calendar (the portal's).
    pub created_from: Option<chrono::NaiveDate>,
    /// Created on this day or earlier, on Europe/Istanbul's calendar.
    pub created_to: Option<chrono::NaiveDate>,
    /// Only those a drift check found changed outside TNS (`true`), or only the others.
    pub drifted: Option<bool>,
}

/// Whose submissions a list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Of {
    /// Every journey's, or every shipment's.
    Kind(TargetType),
    /// One record's.
    Record(Target),
    /// Those of the journey and of the shipment with this number: a `target_id` given without
    /// its `target_type` names no one record.
    Numbered(i64),
}

impl Of {
    /// From a list's `target_type` and `target_id`, each optional.
    pub fn from_parts(kind: Option<TargetType>, id: Option<i64>) -> Option<Of> {
        match (kind, id) {
            (Some(kind), Some(id)) => Some(Of::Record(Target::of(kind, id))),
            (Some(kind), None) => Some(Of::Kind(kind)),
            (None, Some(id)) => Some(Of::Numbered(id)),
            (None, None) => None,
        }
    }
}

pub async fn list(db: &PgPool, org: OrgId, filter: &Filter, page: &Page) -> sqlx::Result<Vec<Submission>> {
    let mut qb: QueryBuilder<'_, Postgres> =
        QueryBuilder::new(format!("SELECT {COLUMNS} FROM submissions WHERE org_id = "));
    qb.push_bind(org);
    if let Some(s) = &filter.state {
        qb.push(" AND state = ").push_bind(*s);
    }
    match filter.of {
        Some(Of::Kind(kind)) => qb.push(" AND target_type = ").push_bind(kind),
        Some(Of::Record(target)) => {
            qb.push(" AND target_type = ").push_bind(target.kind()).push(" AND target_id = ").push_bind(target.id())
        }
        Some(Of::Numbered(id)) => qb.push(" AND target_id = ").push_bind(id),
        None => &mut qb,
    };
    // Bounds on the instant (not on a computed day) so the primary key's order stays usable.
    if let Some(d) = filter.created_from {
        qb.push(" AND created_at >= (").push_bind(d).push("::timestamp AT TIME ZONE 'Europe/Istanbul')");
    }
    if let Some(d) = filter.created_to {
        qb.push(" AND created_at < ((").push_bind(d).push(" + 1)::timestamp AT TIME ZONE 'Europe/Istanbul')");
    }
    match filter.drifted {
        Some(true) => qb.push(" AND drift IS NOT NULL"),
        Some(false) => qb.push(" AND drift IS NULL"),
        None => &mut qb,
    };
    page.push(&mut qb, "id");
    qb.build_query_as().fetch_all(db).await
}

/// `org`'s submissions of the last `days` days (Istanbul's calendar, the portal's), counted
/// per day and state, oldest day first.
pub async fn daily_states(
    db: &PgPool,
    org: OrgId,
    days: i32,
) -> sqlx::Result<Vec<(chrono::NaiveDate, SubmissionState, i64)>> {
    sqlx::query_as(
        "SELECT (created_at AT TIME ZONE 'Europe/Istanbul')::date AS day, state, count(*)
           FROM submissions
          WHERE org_id = $1 AND created_at >= now() - make_interval(days => $2)
          GROUP BY 1, 2 ORDER BY 1, 2",
    )
    .bind(org)
    .bind(days)
    .fetch_all(db)
    .await
}
