//! One attempt of one claimed submission: a sequence of adapter calls, each off the async
//! runtime, bounded per adapter and timed out, with the progress of every call recorded before
//! the next one starts; then the decision of what to record.
//!
//! - An attempt after the first starts by reconciling: the previous attempt's last call may
//!   have reached the downstream without its answer reaching us, so the adapter first finds
//!   out (read-only) what the downstream holds.
//! - A call starts only if it can finish, and its result be recorded, inside the submission's
//!   lease; otherwise the submission is given back (untried when no call was made), so two
//!   schedulers never call the downstream for the same submission at once.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use chrono::Utc;
use sqlx::PgPool;
use tns_adapter::{Adapter, AdapterError, Notification, Receipt, Step, Work};
use tracing::{field::Empty, Instrument};

use crate::{
    callers::{Lane, Panicked},
    metrics::Metrics,
    settings::SchedulerSettings,
};
use tns_adapter_host::credentials;
use tns_adapter_host::Plugins;
use tns_core::domain::kinds::{AttemptOutcome, SubmissionState};
use tns_store::submissions::queue::{self, Claimed, Finished};

/// Kept free at the end of a lease to record a call's result before the lease runs out: 5 s,
/// or a quarter of a shorter lease.
pub fn record_margin(lease: Duration) -> Duration {
    Duration::from_secs(5).min(lease / 4)
}

/// How a call sequence ended, before the retry policy is applied.
enum Outcome {
    /// Complete now (`delivered` or `partial`) or found complete by reconciling (`found`).
    Accepted(AttemptOutcome, Receipt),
    /// A call failed, in this phase.
    Failed(AdapterError, Phase),
    Timeout(Phase),
    /// The lease would end before the next call could finish and be recorded.
    GivenBack {
        tried: bool,
    },
    /// Another scheduler holds the submission now; nothing is recorded by this one.
    LeaseLost,
}

/// Which of the adapter's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Reconcile,
    Advance,
}

/// Everything an attempt needs, shared by all of a scheduler's attempts.
pub struct Context {
    pub settings: SchedulerSettings,
    pub adapters: Arc<Plugins>,
    /// Per loaded adapter: the permits bounding its calls and the threads running them.
    pub lanes: std::collections::HashMap<String, Lane>,
    pub metrics: Arc<Metrics>,
    pub db: PgPool,
}

/// Make one attempt and decide what to record, in a `submission` span naming the request that
/// queued it (its log lines, and each call's `adapter_call` span, carry that).
pub async fn run(ctx: Arc<Context>, item: Claimed) -> Finished {
    let span = tracing::info_span!(
        "submission",
        submission = item.id,
        org = item.org_id.get(),
        adapter = %item.adapter,
        operation = item.operation.as_str(),
        attempt = item.attempts,
        request_id = item.request_id.as_deref().unwrap_or(""),
        outcome = Empty,
        state = Empty,
    );
    if let Some(parent) = &item.traceparent {
        tns_core::telemetry::set_parent(&span, parent);
    }
    let started_at = Utc::now();
    let outcome = match (ctx.adapters.get(&item.adapter), ctx.lanes.get(&item.adapter)) {
        // Our deployment's problem, not the customer's: keep retrying until it is fixed.
        (None, _) | (_, None) => Outcome::Failed(
            AdapterError::Transient(format!("adapter `{}` is not loaded on this scheduler", item.adapter)),
            Phase::Advance,
        ),
        (Some(adapter), Some(lane)) => calls(&ctx, &item, adapter, lane).instrument(span.clone()).await,
    };
    let finished = decide(&ctx.settings, &item, outcome, started_at);
    span.record("outcome", finished.outcome.as_str());
    span.record("state", finished.state.as_str());
    tracing::debug!(parent: &span, "attempt decided");
    finished
}

/// The calls of one attempt, until the notification is complete or a call fails.
async fn calls(ctx: &Context, item: &Claimed, adapter: Arc<dyn Adapter>, lane: &Lane) -> Outcome {
    let work = match Work::from_stored(item.operation.as_str(), &item.snapshot.0) {
        Ok(w) => w,
        Err(e) => return Outcome::Failed(AdapterError::Permanent(format!("unreadable snapshot: {e}")), Phase::Advance),
    };
    let sealed = credentials::Sealed {
        fields: item.credential_fields.as_ref().map(|f| f.0.clone()).unwrap_or_default(),
        secrets: item.credential_secrets.as_ref().map(|s| s.0.clone()).unwrap_or_default(),
    };
    let credentials = match sealed.is_empty() {
        true => None,
        false => match credentials::open(&ctx.settings.webhooks.data_key, item.org_id, &sealed) {
            Ok(c) => Some(c),
            Err(e) => return Outcome::Failed(AdapterError::Configuration(e.to_string()), Phase::Advance),
        },
    };
    let op = item.operation;
    let mut n = Arc::new(Notification {
        reference: item.reference(),
        credentials,
        work,
        progress: item.progress.0.clone(),
        earlier_references: item.earlier_references.clone(),
        since: Some(turkey_day(item.first_created_at)),
        downstream_reference: item.downstream_reference.clone(),
    });
    let mut lease_ends = item.lease_ends.unwrap_or_else(Instant::now);
    // An earlier attempt (of this submission, or of a failed one it continues) may have reached
    // the downstream without its answer reaching us.
    let uncertain = item.attempts > 1 || !item.earlier_references.is_empty();
    let mut phase = if uncertain { Phase::Reconcile } else { Phase::Advance };
    let mut tried = false;
    loop {
        // The last moment a call may start: one that starts later could still be running, or not
        // yet be recorded, when the lease runs out and another scheduler takes the submission.
        let start_by = lease_ends
            .checked_sub(ctx.settings.call_timeout + record_margin(ctx.settings.lease))
            .unwrap_or_else(Instant::now);
        let permit = match tokio::time::timeout_at(start_by.into(), lane.permits.clone().acquire_owned()).await {
            Ok(p) => p.expect("semaphore never closed"),
            // Waited too long for a free adapter slot: given back before the lease runs out.
            Err(_) => return Outcome::GivenBack { tried },
        };
        if Instant::now() > start_by {
            return Outcome::GivenBack { tried };
        }
        tried = true;
        let label = if phase == Phase::Reconcile { "reconcile" } else { op.as_str() };
        let call = tracing::info_span!("adapter_call", op = label, outcome = Empty, latency_ms = Empty);
        let (a, req) = (adapter.clone(), n.clone());
        // The permit moves into the call and is released only when the call returns, so a
        // hung plugin cannot hold more threads than the adapter's limit.
        let in_call = call.clone();
        let answer = lane.threads.call(move || {
            let _permit = permit;
            in_call.in_scope(|| match phase {
                Phase::Reconcile => a.reconcile(&req),
                Phase::Advance => a.advance(&req),
            })
        });
        let t0 = Instant::now();
        let result = match tokio::time::timeout(ctx.settings.call_timeout, answer).await {
            Err(_) => None,
            Ok(Err(_)) => Some(Err(AdapterError::Transient("adapter call failed: its thread ended".into()))),
            Ok(Ok(Err(Panicked(p)))) => Some(Err(AdapterError::Transient(format!("adapter call panicked: {p}")))),
            Ok(Ok(Ok(r))) => Some(r),
        };
        let outcome = match &result {
            None => "timeout",
            Some(Ok(Step::Continue { .. })) => "continue",
            Some(Ok(Step::Done { .. })) => "done",
            Some(Err(AdapterError::Transient(_))) => "transient",
            Some(Err(AdapterError::Permanent(_))) => "permanent",
            Some(Err(AdapterError::Configuration(_))) => "configuration",
            Some(Err(AdapterError::Suspect(_))) => "suspect",
        };
        call.record("outcome", outcome);
        call.record("latency_ms", t0.elapsed().as_secs_f64() * 1000.0);
        let labels = [item.adapter.as_str(), label, outcome];
        ctx.metrics.adapter_calls.with_label_values(&labels).inc();
        ctx.metrics.adapter_call_duration.with_label_values(&labels).observe(t0.elapsed().as_secs_f64());
        match result {
            None => return Outcome::Timeout(phase),
            Some(Err(e)) => return Outcome::Failed(e, phase),
            Some(Ok(Step::Done { receipt })) => {
                let kind = match phase {
                    Phase::Reconcile => AttemptOutcome::Found,
                    Phase::Advance if receipt.is_partial() => AttemptOutcome::Partial,
                    Phase::Advance => AttemptOutcome::Delivered,
                };
                return Outcome::Accepted(kind, receipt);
            }
            Some(Ok(Step::Continue { progress, downstream_reference })) => {
                if progress != n.progress {
                    let sent = Instant::now();
                    let (lease, reference) = (ctx.settings.lease, downstream_reference.as_deref());
                    match queue::record_progress(&ctx.db, item.id, item.lease_token, &progress, reference, lease).await
                    {
                        Ok(true) => lease_ends = sent + lease,
                        Ok(false) => return Outcome::LeaseLost,
                        // The call's effect is known to us only: the next attempt reconciles.
                        Err(e) => {
                            return Outcome::Failed(
                                AdapterError::Transient(format!("recording progress failed: {e}")),
                                phase,
                            )
                        }
                    }
                }
                n = Arc::new(Notification { progress, ..(*n).clone() });
                phase = Phase::Advance;
            }
        }
    }
}

/// How many attempts in a row must meet the same suspect error before it fails the submission.
const SUSPECT_REPEATS: usize = 3;

/// The retry policy: accepted → `delivered`; permanent or configuration → `failed`; transient or
/// timeout → `pending` with backoff, or `failed` once the retry window is spent; suspect → as
/// transient, but `failed` when the two attempts before met the same error; given back → due
/// again at once.
fn decide(
    settings: &SchedulerSettings,
    item: &Claimed,
    outcome: Outcome,
    started_at: chrono::DateTime<Utc>,
) -> Finished {
    let mut f = Finished {
        id: item.id,
        lease_token: item.lease_token,
        state: SubmissionState::Failed,
        retry_at: None,
        downstream_reference: None,
        error_message: None,
        passenger_results: None,
        outcome: AttemptOutcome::Permanent,
        error: None,
        started_at,
        downstream_state: None,
        untried: false,
        was_unknown: item.state == SubmissionState::Unknown,
    };
    // The next try, with backoff, and whether it would fall past the retry window.
    let span = |d: Duration| chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX);
    let at = Utc::now() + span(settings.retry.delay(item.attempts.max(1) as u32, rand::random::<f64>()));
    let window_spent = at > item.created_at + span(settings.retry.window);
    // A failed look-up ends its retries when the window is spent, or once the submission is
    // `unknown` (no window applies to it any more).
    let look_up_gives_up = window_spent || item.state == SubmissionState::Unknown;
    let retry = |f: &mut Finished, error: String| {
        if window_spent {
            f.error_message = Some(format!("gave up after {} attempts: {error}", item.attempts));
        } else {
            f.state = SubmissionState::Pending;
            f.retry_at = Some(at);
            f.error_message = Some(format!("attempt {} failed, retrying: {error}", item.attempts));
        }
        f.error = Some(error);
    };
    // Looking an uncertain write up failed: never sent again blindly, looked up again with
    // back-off (no retry window) until it is known or an operator resolves it.
    let unknown = |f: &mut Finished, outcome: AttemptOutcome, error: String| {
        f.state = SubmissionState::Unknown;
        f.outcome = outcome;
        f.retry_at = Some(at);
        f.error_message = Some(format!(
            "outcome unknown: an earlier call may have reached the downstream, and looking it up failed ({error}); \
             it is not sent again until it is known: looked up again at {}, or resolved by an operator",
            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ));
        f.error = Some(error);
    };
    match outcome {
        Outcome::Failed(AdapterError::Permanent(e) | AdapterError::Suspect(e), Phase::Reconcile) => {
            unknown(&mut f, AttemptOutcome::Permanent, e);
        }
        Outcome::Failed(AdapterError::Transient(e), Phase::Reconcile) if look_up_gives_up => {
            unknown(&mut f, AttemptOutcome::Transient, e);
        }
        Outcome::Timeout(Phase::Reconcile) if look_up_gives_up => {
            unknown(
                &mut f,
                AttemptOutcome::Timeout,
                format!("the look-up got no answer within {} s", settings.call_timeout.as_secs()),
            );
        }
        Outcome::Accepted(kind, receipt) => {
            f.state = SubmissionState::Delivered;
            f.outcome = kind;
            f.downstream_reference = Some(receipt.downstream_reference.clone());
            let refused: Vec<String> = receipt
                .passengers
                .iter()
                .filter_map(|p| p.error.as_ref().map(|e| format!("passenger {}: {e}", p.key)))
                .collect();
            if !refused.is_empty() {
                let mut msg = format!("{} of {} passengers refused; ", refused.len(), receipt.passengers.len());
                msg.push_str(&refused.join("; "));
                f.error_message = Some(truncate(msg, 2000));
                f.error.clone_from(&f.error_message);
            }
            f.passenger_results = serde_json::to_value(&receipt.passengers).ok();
            f.downstream_state = Some(receipt.state);
        }
        Outcome::Failed(AdapterError::Permanent(e), _) => {
            f.error_message = Some(e.clone());
            f.error = Some(e);
        }
        Outcome::Failed(AdapterError::Configuration(e), _) => {
            f.outcome = AttemptOutcome::Configuration;
            f.error_message = Some(format!("downstream configuration: {e}"));
            f.error = Some(e);
        }
        Outcome::Failed(AdapterError::Transient(e), _) => {
            f.outcome = AttemptOutcome::Transient;
            retry(&mut f, e);
        }
        // The third time in a row it is taken for what it looks like.
        Outcome::Failed(AdapterError::Suspect(e), _)
            if item.recent_errors.len() >= SUSPECT_REPEATS - 1
                && item.recent_errors.iter().take(SUSPECT_REPEATS - 1).all(|r| *r == e) =>
        {
            f.error_message = Some(format!("the same error {SUSPECT_REPEATS} attempts in a row: {e}"));
            f.error = Some(e);
        }
        Outcome::Failed(AdapterError::Suspect(e), _) => {
            f.outcome = AttemptOutcome::Transient;
            retry(&mut f, e);
        }
        Outcome::Timeout(_) => {
            f.outcome = AttemptOutcome::Timeout;
            retry(&mut f, format!("no answer within {} s; outcome unknown", settings.call_timeout.as_secs()));
        }
        Outcome::GivenBack { tried } => {
            // An `unknown` one stays so: it is still to be looked up.
            f.state = if item.state == SubmissionState::Unknown { item.state } else { SubmissionState::Pending };
            f.retry_at = Some(Utc::now());
            f.outcome = AttemptOutcome::GivenBack;
            f.untried = !tried;
            f.error = Some("the lease would end before the next call could finish; left to the next claim".into());
            f.error_message.clone_from(&f.error);
        }
        // Recorded by nobody: the completion is fenced by the lease token this claim no
        // longer holds, and the scheduler that holds it now records its own outcome.
        Outcome::LeaseLost => f.state = SubmissionState::Pending,
    }
    f
}

/// The Türkiye calendar day (`YYYY-MM-DD`, UTC+3 all year) of `at`.
fn turkey_day(at: chrono::DateTime<Utc>) -> String {
    (at + chrono::Duration::hours(3)).format("%Y-%m-%d").to_string()
}

fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}
