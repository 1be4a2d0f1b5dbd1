//! Webhook delivery (DESIGN.md "Webhooks"): the outbox rows `webhook_emit` writes are POSTed
//! by the scheduler, signed, with retries on a schedule, every attempt recorded.
//!
//! - [`sealing`]: subscription secrets at rest; [`signing`]: the signature and new secrets;
//! - [`guard`]: the SSRF guard, used by the API at creation and by the client at delivery;
//! - [`send`]: one HTTP attempt; [`queue`]: the delivery queue's statements.

pub mod guard;
pub mod queue;
pub mod sealing;
pub mod send;
pub mod signing;

use std::{sync::Arc, time::Instant};

use chrono::Utc;
use prometheus::IntGaugeVec;
use sqlx::PgPool;
use tokio::sync::Semaphore;

use crate::{
    leases::Table,
    metrics::Metrics,
    settings::WebhookSettings,
    webhooks::queue::{Attempted, Claimed},
    worker::Queue,
};

/// The delivery queue, as the worker loop sees it.
pub struct Deliveries {
    db: PgPool,
    settings: WebhookSettings,
    client: reqwest::Client,
    /// POSTs in flight (`concurrency`); more deliveries than this are held (claimed) at once.
    posts: Arc<Semaphore>,
    metrics: Arc<Metrics>,
}

impl Deliveries {
    pub fn new(db: PgPool, settings: WebhookSettings, metrics: Arc<Metrics>) -> anyhow::Result<Deliveries> {
        let client = send::client(&settings)?;
        let posts = Arc::new(Semaphore::new(settings.concurrency));
        Ok(Deliveries { db, settings, client, posts, metrics })
    }

    async fn deliver(&self, item: Claimed) -> Attempted {
        let _post = self.posts.acquire().await.expect("semaphore never closed");
        let started_at = Utc::now();
        let t0 = Instant::now();
        let resp = if !item.active {
            send::Response {
                outcome: "skipped",
                status: None,
                error: Some("the subscription is no longer active".into()),
                retry_after: None,
            }
        } else {
            match self.settings.data_key.open(item.org_id, &item.secret_sealed) {
                Ok(secret) => {
                    let headers = send::headers(&secret, &item.body, item.event_id, &item.event_type, Utc::now());
                    send::post(&self.client, &self.settings, &item.endpoint_url, headers, item.body).await
                }
                Err(_) => {
                    // Our problem (TNS_DATA_KEY is not the key it was sealed with): retried on
                    // the schedule, so a corrected key still delivers.
                    tracing::error!(
                        subscription = item.subscription_id,
                        "webhook secret cannot be unsealed: check TNS_DATA_KEY"
                    );
                    send::Response {
                        outcome: "unreachable",
                        status: None,
                        error: Some("the platform could not sign this delivery; it is retried".into()),
                        retry_after: None,
                    }
                }
            }
        };
        let elapsed = t0.elapsed();
        self.metrics.webhook_attempts.with_label_values(&[resp.outcome]).inc();
        self.metrics.webhook_attempt_duration.with_label_values(&[resp.outcome]).observe(elapsed.as_secs_f64());
        let retry_at = match resp.outcome {
            "delivered" | "skipped" => None,
            _ => self
                .settings
                .next_wait(item.attempts.max(1) as u32, resp.retry_after, rand::random::<f64>())
                .map(|d| Utc::now() + chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)),
        };
        Attempted {
            id: item.id,
            lease_token: item.lease_token,
            outcome: resp.outcome,
            response_status: resp.status.map(i32::from),
            error: resp.error,
            started_at,
            duration_ms: elapsed.as_millis().min(i32::MAX as u128) as i32,
            retry_at,
        }
    }
}

impl Queue for Deliveries {
    type Item = Claimed;
    type Outcome = Attempted;
    const NAME: &'static str = "webhooks";
    const TABLE: Table = Table::WebhookDeliveries;
    const CHANNEL: &'static str = queue::CHANNEL;

    async fn claim(&self, n: usize, token: i64) -> sqlx::Result<Vec<Claimed>> {
        queue::claim(&self.db, n, self.settings.lease, token).await
    }

    fn lease_of(item: &Claimed) -> (i64, i64) {
        (item.id, item.lease_token)
    }

    async fn attempt(self: Arc<Self>, item: Claimed) -> Attempted {
        self.deliver(item).await
    }

    fn id_of(a: &Attempted) -> i64 {
        a.id
    }

    async fn record(&self, batch: &[Attempted]) -> sqlx::Result<()> {
        let (recorded, deactivated) = queue::record(&self.db, batch, self.settings.disable_after).await?;
        if recorded.len() < batch.len() {
            tracing::warn!(
                lost = batch.len() - recorded.len(),
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

    fn depth_gauge(&self) -> &IntGaugeVec {
        &self.metrics.webhook_queue_depth
    }
}
