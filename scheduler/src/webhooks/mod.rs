//! Webhook delivery (DESIGN.md "Webhooks"): the outbox rows `webhook_emit` writes are POSTed
//! by the scheduler, signed, with retries on a schedule, every attempt recorded.
//!
//! - [`sealing`]: subscription secrets at rest; [`signing`]: the signature and new secrets;
//! - [`guard`]: the SSRF guard, used by the API at creation and by the client at delivery;
//! - [`send`]: one HTTP attempt; [`targets`]: endpoints and keys prepared per subscription;
//! - [`queue`]: the delivery queue's statements.

pub mod guard;
pub mod queue;
pub mod sealing;
pub mod send;
pub mod signing;
pub mod targets;

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use chrono::Utc;
use prometheus::{Histogram, IntCounter, IntGaugeVec};
use sqlx::PgPool;

use crate::{
    leases::Table,
    metrics::Metrics,
    settings::WebhookSettings,
    webhooks::{
        queue::{Attempted, Claimed, Cursor},
        targets::Targets,
    },
    worker::Queue,
};

/// How long claims may go on from the cursor before one scans the queue from its start again
/// (see the migration …_webhook_queue_tuning.sql): the longest a delivery that became due
/// behind the cursor waits for it.
const RESCAN_EVERY: Duration = Duration::from_secs(1);

/// The delivery queue, as the worker loop sees it.
pub struct Deliveries {
    db: PgPool,
    settings: WebhookSettings,
    client: send::Client,
    targets: Targets,
    metrics: Arc<Metrics>,
    /// The attempt counter and duration histogram of each outcome, resolved once (a label
    /// lookup hashes and locks on every call).
    by_outcome: Vec<(&'static str, IntCounter, Histogram)>,
    /// Where the next claim starts, and when a claim last started from the beginning.
    cursor: Mutex<(Cursor, Instant)>,
}

/// A claimed delivery and the moment its POST must have started by.
pub struct Held {
    delivery: Claimed,
    send_by: Instant,
}

/// What became of a held delivery.
pub enum Outcome {
    Attempted(Attempted),
    /// Not sent: it waited for a POST slot past its `send_by`.
    GivenBack {
        id: i64,
        lease_token: i64,
    },
}

impl Deliveries {
    pub fn new(db: PgPool, settings: WebhookSettings, metrics: Arc<Metrics>) -> anyhow::Result<Deliveries> {
        let client = send::Client::new(settings.timeout, settings.allow_private)?;
        let cursor = Mutex::new((queue::START, Instant::now()));
        let by_outcome = send::OUTCOMES
            .iter()
            .map(|o| {
                (
                    *o,
                    metrics.webhook_attempts.with_label_values(&[o]),
                    metrics.webhook_attempt_duration.with_label_values(&[o]),
                )
            })
            .collect();
        Ok(Deliveries { db, settings, client, targets: Targets::default(), metrics, by_outcome, cursor })
    }

    fn cursor(&self) -> std::sync::MutexGuard<'_, (Cursor, Instant)> {
        self.cursor.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where the next claim starts: after the last one, unless it is time to scan again.
    fn claim_from(&self) -> Cursor {
        let mut c = self.cursor();
        if c.0 == queue::START || c.1.elapsed() >= RESCAN_EVERY {
            *c = (queue::START, Instant::now());
        }
        c.0
    }

    /// A full claim moves the cursor past what it took; a short one found the end of the due
    /// rows, so the next claim scans from the start.
    fn advance(&self, asked: usize, claimed: &[Claimed]) {
        let last = claimed.iter().map(|d| (d.run_at, d.id)).max();
        let mut c = self.cursor();
        c.0 = match last {
            Some(last) if claimed.len() >= asked => last,
            _ => queue::START,
        };
    }

    /// One attempt, on a runner (there are `concurrency` of them: the POSTs in flight).
    async fn deliver(&self, held: Held) -> Outcome {
        let item = held.delivery;
        if Instant::now() > held.send_by {
            return Outcome::GivenBack { id: item.id, lease_token: item.lease_token };
        }
        let started_at = Utc::now();
        let t0 = Instant::now();
        let resp = if !item.active {
            send::Response::failed("skipped", "the subscription is no longer active".into())
        } else {
            match self.targets.get(&item, &self.settings.data_key, &self.client) {
                Ok(target) => {
                    let headers = send::headers(&target.key, &item.body, item.event_id, &item.event_type, started_at);
                    send::post(&self.client, target.uri.clone(), headers, item.body).await
                }
                Err(failed) => failed,
            }
        };
        let elapsed = t0.elapsed();
        if let Some((_, attempts, duration)) = self.by_outcome.iter().find(|(o, ..)| *o == resp.outcome) {
            attempts.inc();
            duration.observe(elapsed.as_secs_f64());
        }
        let retry_at = match resp.outcome {
            "delivered" | "skipped" => None,
            _ => self
                .settings
                .next_wait(item.attempts.max(1) as u32, resp.retry_after, rand::random::<f64>())
                .map(|d| started_at + chrono::Duration::from_std(elapsed + d).unwrap_or(chrono::Duration::MAX)),
        };
        Outcome::Attempted(Attempted {
            id: item.id,
            tid: item.tid,
            lease_token: item.lease_token,
            subscription_id: item.subscription_id,
            outcome: resp.outcome,
            response_status: resp.status.map(i32::from),
            error: resp.error,
            started_at,
            duration_ms: elapsed.as_millis().min(i32::MAX as u128) as i32,
            retry_at,
        })
    }
}

impl Queue for Deliveries {
    type Item = Held;
    type Outcome = Outcome;
    const NAME: &'static str = "webhooks";
    const TABLE: Table = Table::WebhookDeliveries;
    const CHANNEL: &'static str = queue::CHANNEL;

    async fn claim(&self, n: usize, token: i64) -> sqlx::Result<Vec<Held>> {
        let (after, asked_at) = (self.claim_from(), Instant::now());
        let claimed = queue::claim(&self.db, n, self.settings.lease, token, after).await?;
        self.advance(n, &claimed);
        let send_by = self.settings.send_by(asked_at);
        Ok(claimed.into_iter().map(|delivery| Held { delivery, send_by }).collect())
    }

    fn lease_of(item: &Held) -> (i64, i64) {
        (item.delivery.id, item.delivery.lease_token)
    }

    async fn attempt(self: Arc<Self>, item: Held) -> Outcome {
        self.deliver(item).await
    }

    fn id_of(o: &Outcome) -> i64 {
        match o {
            Outcome::Attempted(a) => a.id,
            Outcome::GivenBack { id, .. } => *id,
        }
    }

    async fn record(&self, batch: &[Outcome]) -> sqlx::Result<()> {
        let mut attempted = Vec::with_capacity(batch.len());
        let mut given_back = vec![];
        for o in batch {
            match o {
                Outcome::Attempted(a) => attempted.push(a),
                Outcome::GivenBack { id, lease_token } => given_back.push((*id, *lease_token)),
            }
        }
        if !given_back.is_empty() {
            let n = queue::give_back(&self.db, &given_back).await?;
            tracing::warn!(
                given_back = n,
                "webhook deliveries waited for a POST slot too long to be sent within their lease; given back"
            );
        }
        if attempted.is_empty() {
            return Ok(());
        }
        let (recorded, deactivated) = queue::record(&self.db, &attempted, self.settings.disable_after).await?;
        if recorded.len() < attempted.len() {
            tracing::warn!(
                lost = attempted.len() - recorded.len(),
                "webhook leases lost before the attempts were recorded"
            );
        }
        if !deactivated.is_empty() {
            let failed = queue::fail_inactive(&self.db, &deactivated).await?;
            self.metrics.webhook_deactivations.inc_by(deactivated.len() as u64);
            tracing::warn!(subscriptions = ?deactivated, failed_deliveries = failed,
                "webhook subscriptions deactivated: no successful delivery for too long");
        }
        Ok(())
    }

    async fn give_back(&self, held: &[(i64, i64)]) -> sqlx::Result<u64> {
        queue::give_back(&self.db, held).await
    }

    fn depth_gauge(&self) -> &IntGaugeVec {
        &self.metrics.webhook_queue_depth
    }
}
