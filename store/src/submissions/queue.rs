//! The submission queue's statements: claim a batch, complete a batch (releasing and depth
//! are in `leases`). The schema and its rules are in migrations/…_submissions.sql.

use std::{
    sync::LazyLock,
    time::{Duration, Instant},
};
use tns_core::ids::OrgId;

use chrono::{DateTime, Utc};
use sqlx::{types::Json, PgPool};

use crate::{leases::Lease, records};
use tns_core::domain::kinds::{AttemptOutcome, Operation, SubmissionState};

use crate::downstream::Fields;

/// Schedulers LISTEN here; the API NOTIFYs on every new submission.
pub const QUEUE_CHANNEL: &str = "tns_submissions";
/// Completing NOTIFYs the finished ids here, comma-separated (the API's `Prefer: wait`).
pub const DONE_CHANNEL: &str = "tns_submissions_done";

/// A claimed submission.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Claimed {
    pub id: i64,
    pub org_id: OrgId,
    pub operation: Operation,
    pub adapter: String,
    /// The stored snapshot's text, parsed once, by whoever reads it into the work.
    pub snapshot: Json<Box<serde_json::value::RawValue>>,
    /// Claims so far, this one included: above 1, an earlier attempt may have reached the
    /// downstream, so this one looks the reference up before sending.
    pub attempts: i32,
    pub created_at: DateTime<Utc>,
    /// This claim's token; completing needs it, so a scheduler that lost its lease cannot
    /// overwrite the work of the one that took over.
    pub lease_token: i64,
    /// Position in the claim's fair order.
    pub ord: i64,
    /// What earlier calls achieved (the adapter's own description; `null` at first).
    pub progress: Json<serde_json::Value>,
    /// References of earlier failed submissions whose progress this one continues.
    pub earlier_references: Vec<String>,
    /// The errors of this submission's last two attempts, the latest first (an attempt without
    /// one, as ``): the same suspect error three times in a row fails it.
    pub recent_errors: Vec<String>,
    /// `pending`, or `unknown` (an earlier call's outcome could not be looked up).
    pub state: SubmissionState,
    /// The downstream's reference the submission has so far (from a call, or an operator).
    pub downstream_reference: Option<String>,
    /// When the first of this submission and the earlier ones it continues was made: an
    /// uncertain write may have reached the downstream any day since.
    pub first_created_at: DateTime<Utc>,
    /// The organization's credentials for this submission's adapter, when it has set them
    /// (secret fields sealed); none when it has since chosen another adapter.
    pub credential_fields: Option<Json<Fields>>,
    pub credential_secrets: Option<Json<Fields>>,
    /// The ID of the HTTP request that queued it (`X-Request-Id`), if a request did.
    pub request_id: Option<String>,
    /// That request's span (`traceparent`), when traces are exported: the attempt's parent.
    pub traceparent: Option<String>,
    /// When the lease ends, by this process's clock (measured from before the claim was
    /// sent, so never later than the database's). Moved on as progress is recorded.
    #[sqlx(skip)]
    pub lease_ends: Option<Instant>,
}

impl Claimed {
    pub fn lease(&self) -> Lease {
        Lease { org: self.org_id.get(), id: self.id, token: self.lease_token }
    }

    /// Our reference downstream: stable across attempts, how lookups find the submission.
    pub fn reference(&self) -> String {
        format!("tns-{}", self.id)
    }
}

/// Claim up to `n` due submissions for `lease`, fairly across organizations: every
/// organization with due work gets its oldest rows considered, and the batch takes each
/// organization's first row before anyone's second, starting after `after_org` (the last
/// organization the previous claim served) and wrapping around, so even claims of one row
/// take turns. One tenant's backlog of thousands thus delays another tenant's single
/// submission by at most a claim round or two. The answer is in that fair order.
///
/// Each organization contributes at most its share of `n` (locking candidates that are not
/// taken is what made claims slow), so a claim may return fewer than `n` while work remains.
///
/// The organizations are found by a loose index scan of the pending-rows index (one probe per
/// organization with pending work, however long its backlog). A row that is due while it
/// still holds a lease token was claimed by a scheduler that stopped or died: its attempt is
/// recorded as `abandoned` here.
pub async fn claim(db: &PgPool, n: usize, lease: Duration, token: i64, after_org: i64) -> sqlx::Result<Vec<Claimed>> {
    let sent = Instant::now();
    let mut claimed: Vec<Claimed> = sqlx::query_as(
        "WITH RECURSIVE orgs(org_id) AS (
            (SELECT org_id FROM submissions WHERE state IN ('pending', 'unknown') ORDER BY org_id LIMIT 1)
            UNION ALL
            SELECT (SELECT s.org_id FROM submissions s
                     WHERE s.state IN ('pending', 'unknown') AND s.org_id > orgs.org_id ORDER BY s.org_id LIMIT 1)
              FROM orgs WHERE orgs.org_id IS NOT NULL
         ), due AS (
            -- A suspended or closed organization's submissions wait (claimed again once reactivated
            -- or reopened; an erased one's go with it).
            SELECT d.* FROM orgs JOIN organizations o ON o.id = orgs.org_id AND o.status IN ('trial', 'active')
            CROSS JOIN LATERAL (
                SELECT s.id, s.org_id, s.run_at, s.lease_token AS old_token, s.leased_at AS old_leased_at
                  FROM submissions s
                 WHERE s.state IN ('pending', 'unknown') AND s.org_id = orgs.org_id AND s.run_at <= now()
                 ORDER BY s.run_at
                 LIMIT (SELECT GREATEST(1, ceil($1::numeric / count(*)))::int FROM orgs WHERE org_id IS NOT NULL)
                   FOR UPDATE SKIP LOCKED) d
         ), chosen AS (
            SELECT * FROM (
                SELECT ranked.*, row_number() OVER (ORDER BY rn, org_id <= $4, org_id) AS ord FROM (
                    SELECT due.*, row_number() OVER (PARTITION BY org_id ORDER BY run_at, id) AS rn FROM due) ranked
            ) fair
             WHERE ord <= $1
         ), abandoned AS (
            INSERT INTO submission_attempts (submission_id, org_id, started_at, outcome, error)
            SELECT id, org_id, old_leased_at, 'abandoned',
                   'the scheduler sending it stopped before recording the outcome; looked up downstream before sending again'
              FROM chosen WHERE old_token IS NOT NULL
         )
         UPDATE submissions s
            SET run_at = now() + make_interval(secs => $2), lease_token = $3, leased_at = now(), attempts = s.attempts + 1
           FROM chosen LEFT JOIN downstream_settings d ON d.org_id = chosen.org_id
          WHERE s.id = chosen.id
         RETURNING s.id, s.org_id, s.operation, s.adapter, s.snapshot, s.attempts, s.created_at, s.lease_token,
                   chosen.ord, s.progress, s.earlier_references,
                   CASE WHEN d.adapter = s.adapter THEN d.fields END AS credential_fields,
                   CASE WHEN d.adapter = s.adapter THEN d.secrets END AS credential_secrets,
                   -- A first claim (or the first since an operator found it absent downstream,
                   -- which starts its count again) has no earlier attempts to repeat; unless it
                   -- continues failed submissions, no earlier start: most claims skip both.
                   CASE WHEN s.attempts > 1 THEN
                       ARRAY(SELECT COALESCE(a.error, '') FROM submission_attempts a
                              WHERE a.submission_id = s.id ORDER BY a.id DESC LIMIT 2)
                   ELSE '{}' END AS recent_errors,
                   s.state, s.downstream_reference, s.request_id, s.traceparent,
                   CASE WHEN cardinality(s.earlier_references) = 0 THEN s.created_at ELSE
                       LEAST(s.created_at, (SELECT min(e.created_at) FROM submissions e
                                             WHERE e.id = ANY(ARRAY(SELECT substr(r, 5)::bigint FROM unnest(s.earlier_references) r
                                                                     WHERE r ~ '^tns-[0-9]{1,18}$'))
                                               AND e.org_id = s.org_id))
                   END AS first_created_at",
    )
    .bind(n as i64)
    .bind(lease.as_secs_f64())
    .bind(token)
    .bind(after_org)
    .fetch_all(db)
    .await?;
    claimed.sort_by_key(|c| c.ord);
    for c in &mut claimed {
        c.lease_ends = Some(sent + lease);
    }
    Ok(claimed)
}

/// Record what the calls so far achieved (and the downstream's reference, once it gave one),
/// while this claim still holds the submission, and renew its lease: a notification of many
/// calls keeps its lease as long as it makes progress. `false` when the lease was lost (another
/// scheduler holds the submission now).
pub async fn record_progress(
    db: &PgPool,
    id: i64,
    token: i64,
    progress: &serde_json::Value,
    reference: Option<&str>,
    lease: Duration,
) -> sqlx::Result<bool> {
    let r = sqlx::query(
        "UPDATE submissions SET progress = $3, run_at = now() + make_interval(secs => $4),
                downstream_reference = COALESCE($5, downstream_reference)
          WHERE id = $1 AND lease_token = $2",
    )
    .bind(id)
    .bind(token)
    .bind(Json(progress))
    .bind(lease.as_secs_f64())
    .bind(reference)
    .execute(db)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// How an attempt ended, as recorded.
#[derive(Debug, Clone)]
pub struct Finished {
    pub id: i64,
    pub lease_token: i64,
    /// `pending` or `unknown` (tried again at `retry_at`), `delivered` or `failed`.
    pub state: SubmissionState,
    pub retry_at: Option<DateTime<Utc>>,
    pub downstream_reference: Option<String>,
    pub error_message: Option<String>,
    pub passenger_results: Option<serde_json::Value>,
    /// The attempt's outcome and error.
    pub outcome: AttemptOutcome,
    pub error: Option<String>,
    pub started_at: DateTime<Utc>,
    /// What the adapter keeps of the delivered notification (the receipt's `state`).
    pub downstream_state: Option<serde_json::Value>,
    /// Given back before any call was made: the claim is not counted, and no attempt recorded.
    pub untried: bool,
    /// The submission was `unknown` when claimed (its state cannot change while the claim holds
    /// it): becoming `unknown` is told to waiters and webhooks, staying so is not.
    pub was_unknown: bool,
}

/// What completing a submission changed.
#[derive(Debug, sqlx::FromRow)]
pub struct Completed {
    pub id: i64,
    pub state: SubmissionState,
}

/// Record a batch of attempts in one statement: the submissions (only those this scheduler
/// still holds by token), their attempt rows, the journey or shipment status, which mirrors its
/// latest submission, the `submission.delivered` / `.failed` / `.unknown` webhook events, and one
/// NOTIFY of those ids for the API's `Prefer: wait`.
pub async fn complete(db: &PgPool, batch: &[Finished]) -> sqlx::Result<Vec<Completed>> {
    fn col<T>(batch: &[Finished], f: impl Fn(&Finished) -> T) -> Vec<T> {
        batch.iter().map(f).collect()
    }
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "WITH r AS (
            SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::timestamptz[], $5::text[], $6::text[],
                                 $7::jsonb[], $8::text[], $9::text[], $10::timestamptz[], $12::jsonb[], $13::bool[],
                                 $14::bool[])
                AS r(id, token, state, retry_at, reference, message, passengers, outcome, error, started_at,
                     downstream_state, untried, was_unknown)
         ), s AS (
            UPDATE submissions s
               SET state = r.state,
                   run_at = COALESCE(r.retry_at, s.run_at),
                   lease_token = NULL,
                   attempts = s.attempts - CASE WHEN r.untried THEN 1 ELSE 0 END,
                   downstream_reference = COALESCE(r.reference, s.downstream_reference),
                   downstream_state = COALESCE(r.downstream_state, s.downstream_state),
                   error_message = CASE WHEN r.untried THEN s.error_message ELSE r.message END,
                   passenger_results = COALESCE(r.passengers, s.passenger_results),
                   finished_at = CASE WHEN r.state IN ('pending', 'unknown') THEN NULL ELSE now() END
              FROM r
             -- Only a pending row holds a token. (Naming the state here would invite the planner
             -- to walk every pending row through the partial indexes instead of looking ids up.)
             WHERE s.id = r.id AND s.lease_token = r.token
            -- With the attempt's own values: an outcome (of a lost lease) for the same id in the
            -- batch that did not update the row must not add an attempt or an event.
            RETURNING s.id, s.org_id, s.target_type, s.target_id, s.operation, s.adapter, s.state,
                      s.downstream_reference, s.error_message, s.attempts, s.created_at, s.finished_at, s.warnings,
                      s.submitted_by, s.run_at, r.was_unknown, r.untried, r.started_at AS attempt_started_at,
                      r.outcome AS attempt_outcome, r.error AS attempt_error, r.reference AS attempt_reference
         ), attempts AS (
            INSERT INTO submission_attempts (submission_id, org_id, started_at, outcome, error, downstream_reference)
            SELECT id, org_id, attempt_started_at, attempt_outcome, attempt_error, attempt_reference FROM s
             WHERE NOT untried
         ), finished AS (
            -- The record's status mirrors its latest submission; a cancellation that went
            -- through makes it `cancelled`, one that failed leaves it as its latest other
            -- submission left it; a re-activation that went through makes it `delivered`
            -- again, one that failed leaves it `cancelled`; a no-show leaves it as it was.
            SELECT s.*, CASE WHEN s.operation NOT IN ('cancel', 'reactivate', 'no_show') THEN s.state
                             WHEN s.operation = 'cancel' AND s.state = 'delivered' THEN 'cancelled'
                             WHEN s.operation = 'reactivate' AND s.state = 'delivered' THEN 'delivered'
                             WHEN s.operation = 'reactivate' THEN 'cancelled'
                             ELSE (SELECT p.state FROM submissions p
                                    WHERE p.org_id = s.org_id AND p.target_type = s.target_type
                                      AND p.target_id = s.target_id
                                      AND p.operation NOT IN ('cancel', 'reactivate', 'no_show')
                                    ORDER BY p.id DESC LIMIT 1) END AS status
              FROM s WHERE s.state IN ('delivered', 'failed')
         ), {mirror}, told AS (
            -- What a waiter (`Prefer: wait`) and a webhook are told of: a finished submission, and
            -- one that has just become `unknown` (not each look-up that leaves it so).
            SELECT s.* FROM s
             WHERE s.state IN ('delivered', 'failed') OR (s.state = 'unknown' AND NOT s.was_unknown)
         ), notified AS (
            SELECT pg_notify($11, string_agg(id::text, ',')) FROM told
            HAVING count(*) > 0
         ), events AS (
            -- submission.delivered / .failed / .unknown, in the statement that records them. The data
            -- is the submission as GET /portal/submissions lists it.
            SELECT webhook_emit(array_agg(s.org_id), array_agg('submission.' || s.state), array_agg(
                       jsonb_build_object('id', s.id, 'target_type', s.target_type, 'target_id', s.target_id,
                                          'operation', s.operation, 'adapter', s.adapter, 'state', s.state,
                                          'downstream_reference', s.downstream_reference,
                                          'error_message', s.error_message, 'attempts', s.attempts,
                                          'next_attempt_at', CASE WHEN s.state = 'unknown' THEN json_time(s.run_at) END,
                                          'created_at', json_time(s.created_at),
                                          'finished_at', json_time(s.finished_at), 'warnings', s.warnings,
                                          'submitted_by', s.submitted_by)))
              FROM told s
             -- Only events someone subscribes to (what webhook_emit would keep, as of this
             -- statement's snapshot): most batches build no event data at all.
             WHERE EXISTS (SELECT 1 FROM webhook_subscriptions w
                            WHERE w.org_id = s.org_id AND w.active AND w.event_type = 'submission.' || s.state)
         )
         SELECT s.id, s.state FROM s LEFT JOIN notified ON true CROSS JOIN events",
            mirror = records::mirror("finished")
        )
    });
    sqlx::query_as(&SQL)
        .bind(col(batch, |f| f.id))
        .bind(col(batch, |f| f.lease_token))
        .bind(col(batch, |f| f.state.as_str()))
        .bind(col(batch, |f| f.retry_at))
        .bind(col(batch, |f| f.downstream_reference.clone()))
        .bind(col(batch, |f| f.error_message.clone()))
        .bind(col(batch, |f| f.passenger_results.clone().map(Json)))
        .bind(col(batch, |f| f.outcome.as_str()))
        .bind(col(batch, |f| f.error.clone()))
        .bind(col(batch, |f| f.started_at))
        .bind(DONE_CHANNEL)
        .bind(col(batch, |f| f.downstream_state.clone().map(Json)))
        .bind(col(batch, |f| f.untried))
        .bind(col(batch, |f| f.was_unknown))
        .fetch_all(db)
        .await
}
