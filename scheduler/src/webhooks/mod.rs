//! Webhook delivery: the outbox rows `webhook_emit` writes are POSTed by the scheduler,
//! signed, with retries on a schedule, every attempt recorded.
//!
//! - [`sealing`]: subscription secrets at rest; [`signing`]: the signatures and new secrets;
//! - [`guard`]: the SSRF guard, used by the API at creation and by the client at delivery;
//! - [`send`]: one HTTP attempt; [`targets`]: endpoints and keys prepared per subscription;
//! - [`queue`]: the delivery queue's statements; [`lineup`]: claimed deliveries on their way
//!   to a POST slot, fairly across organizations and within each one's cap.

pub mod lineup;
pub mod resolver;
pub mod send;
pub mod targets;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use chrono::Utc;
use prometheus::{Histogram, IntCounter, IntGauge, IntGaugeVec};
use sqlx::PgPool;
use tracing::Instrument;

use crate::{
    metrics::Metrics,
    settings::WebhookSettings,
    webhooks::{
        lineup::{Lined, Lineup, Next, Ticket},
        targets::{Target, Targets},
    },
    worker::Queue,
};
use tns_core::domain::kinds::DeliveryOutcome;
use tns_store::{
    leases::{Lease, Table},
    webhooks::queue,
    webhooks::queue::{Attempted, ClaimFrom, Claimed, Cursor},
};

/// How long claims may go on from the organizations' cursors before one scans the queue from
/// its start again (see the migration …_webhook_queue_tuning.sql): the longest a delivery that
/// became due behind a cursor waits for it. Claims whose lease ran out are recovered then too
/// (their deliveries queued again, behind the cursors).
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
    by_outcome: Vec<(DeliveryOutcome, IntCounter, Histogram)>,
    /// Where the next claim starts.
    position: Mutex<Position>,
    /// What was claimed and waits for a POST slot.
    lineup: Arc<Lineup<Held>>,
}

/// Where claims resume: after the last row taken of each organization, unless it is time to
/// scan again; and whose turn comes first.
struct Position {
    cursors: HashMap<i64, Cursor>,
    rescanned: Instant,
    after_org: i64,
}

/// A claimed delivery, what it is sent with, and the moment its POST must have started by.
pub struct Held {
    delivery: Claimed,
    target: Prepared,
    send_by: Instant,
}

/// Where and how a delivery is sent: its subscription's target, or the attempt it makes
/// instead (skipped: the subscription is inactive; or a target that cannot be prepared).
/// Prepared once per subscription in each claim.
type Prepared = Result<Arc<Target>, send::Response>;

impl Lined for Held {
    fn lease(&self) -> Lease {
        self.delivery.lease()
    }
    fn send_by(&self) -> Instant {
        self.send_by
    }
}

/// What became of a claimed delivery.
pub enum Outcome {
    Attempted(Attempted),
    /// Not sent: it waited for a POST slot past its `send_by`.
    GivenBack(Lease),
    /// Nothing to record: shutting down, the delivery this names was given back already.
    Unused {
        id: i64,
    },
}

impl Deliveries {
    pub fn new(db: PgPool, settings: WebhookSettings, metrics: Arc<Metrics>) -> anyhow::Result<Deliveries> {
        let client = send::Client::new(settings.timeout, settings.policy)?;
        let position = Mutex::new(Position { cursors: HashMap::new(), rescanned: Instant::now(), after_org: 0 });
        // Every outcome a POST can have (not `abandoned`: that is recorded by a later claim).
        let by_outcome = DeliveryOutcome::ALL
            .iter()
            .filter(|o| **o != DeliveryOutcome::Abandoned)
            .map(|o| {
                (
                    *o,
                    metrics.webhook_attempts.with_label_values(&[o.as_str()]),
                    metrics.webhook_attempt_duration.with_label_values(&[o.as_str()]),
                )
            })
            .collect();
        let lineup = Arc::new(Lineup::new(settings.org_concurrency));
        Ok(Deliveries { db, settings, client, targets: Targets::default(), metrics, by_outcome, position, lineup })
    }

    fn position(&self) -> std::sync::MutexGuard<'_, Position> {
        self.position.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where the next claim starts (after each organization's cursor, unless it is time to scan
    /// again) and how much of each organization this scheduler may still take; whether it is
    /// time to recover expired claims first.
    fn claim_from(&self) -> (ClaimFrom, bool) {
        let cap = self.settings.org_held();
        let rooms = self.lineup.held().into_iter().map(|(org, held)| (org, cap.saturating_sub(held))).collect();
        let mut p = self.position();
        let rescan = p.rescanned.elapsed() >= RESCAN_EVERY;
        if rescan {
            p.cursors.clear();
            p.rescanned = Instant::now();
        }
        let from = ClaimFrom {
            cursors: p.cursors.iter().map(|(o, c)| (*o, *c)).collect(),
            rooms,
            room: cap,
            after_org: p.after_org,
        };
        (from, rescan)
    }

    /// An organization that gave all the claim could take of it keeps a cursor after the last
    /// row taken; one that gave less has no more due rows ahead, so the next claim scans it
    /// from its start (picking up what became due behind).
    fn advance(&self, claimed: &[Claimed]) {
        let mut p = self.position();
        for c in claimed {
            if c.found < i64::from(c.lim) {
                p.cursors.remove(&c.org_id.get());
            } else {
                let at = (c.run_at, c.id);
                let cursor = p.cursors.entry(c.org_id.get()).or_insert(at);
                *cursor = (*cursor).max(at);
            }
        }
        if let Some(last) = claimed.last() {
            p.after_org = last.org_id.get();
        }
    }

    /// What `d`'s subscription's deliveries in this claim are sent with.
    fn prepare(&self, d: &Claimed) -> Prepared {
        if !d.subscription.active {
            return Err(send::Response::failed(
                DeliveryOutcome::Skipped,
                "the subscription is no longer active".into(),
            ));
        }
        self.targets.get(d.subscription_id, d.org_id, &d.subscription, &self.settings.data_key, &self.client)
    }

    /// One attempt, on a runner (there are `concurrency` of them: the POSTs in flight).
    async fn deliver(&self, held: Held) -> Outcome {
        let (item, target) = (held.delivery, held.target);
        let lease = item.lease();
        if Instant::now() > held.send_by {
            return Outcome::GivenBack(lease);
        }
        let span = tracing::info_span!(
            "webhook",
            delivery = item.id,
            org = item.org_id.get(),
            event = item.event_id,
            event_type = %item.event_type,
            subscription = item.subscription_id,
            attempt = item.attempts,
            outcome = tracing::field::Empty,
            status = tracing::field::Empty,
        );
        let started_at = Utc::now();
        let t0 = Instant::now();
        let resp = match target {
            Ok(target) => {
                let previous = target.previous_at(started_at);
                let headers =
                    send::headers(&target.key, previous, &item.body, item.event_id, &item.event_type, started_at);
                let traceparent = tns_core::telemetry::traceparent(&span);
                send::post(&self.client, target.uri.clone(), headers, traceparent, item.body)
                    .instrument(span.clone())
                    .await
            }
            Err(failed) => failed,
        };
        let elapsed = t0.elapsed();
        span.record("outcome", resp.outcome.as_str());
        if let Some(status) = resp.status {
            span.record("status", status);
        }
        if let Some((_, attempts, duration)) = self.by_outcome.iter().find(|(o, ..)| *o == resp.outcome) {
            attempts.inc();
            duration.observe(elapsed.as_secs_f64());
        }
        let retry_at = match resp.outcome {
            DeliveryOutcome::Delivered | DeliveryOutcome::Skipped => None,
            _ => self
                .settings
                .next_wait(item.attempts.max(1) as u32, resp.retry_after, rand::random::<f64>())
                .map(|d| started_at + chrono::Duration::from_std(elapsed + d).unwrap_or(chrono::Duration::MAX)),
        };
        Outcome::Attempted(Attempted {
            lease,
            attempts: item.attempts,
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
    /// The worker's runners hold tickets; each asks the lineup which delivery to POST.
    type Item = Ticket;
    type Outcome = Outcome;
    const NAME: &'static str = "webhooks";
    const TABLE: Table = Table::WebhookDeliveries;
    const CHANNEL: &'static str = queue::CHANNEL;

    /// Parked at once, so a runner waiting in the lineup may take one of these before the claim
    /// returns (its ticket then names another): each comes with the lease it was claimed as.
    async fn claim(&self, n: usize, token: i64) -> sqlx::Result<Vec<(Lease, Ticket)>> {
        let ((from, rescan), asked_at) = (self.claim_from(), Instant::now());
        if rescan {
            // A failure leaves the claims for the next rescan; claiming goes on.
            match queue::recover(&self.db, None).await {
                Ok(0) => {}
                Ok(recovered) => tracing::warn!(
                    recovered,
                    "webhook claims whose lease ran out recovered: their deliveries are queued again"
                ),
                Err(e) => tracing::warn!(error = %tns_store::redacted(&e), "recovering expired webhook claims failed"),
            }
        }
        let claimed = queue::claim(&self.db, n, self.settings.lease, token, &from).await?;
        self.advance(&claimed);
        let send_by = self.settings.send_by(asked_at);
        let leases: Vec<Lease> = claimed.iter().map(Claimed::lease).collect();
        let mut prepared: HashMap<i64, Prepared> = HashMap::new();
        let held = claimed
            .into_iter()
            .map(|delivery| {
                let target =
                    prepared.entry(delivery.subscription_id).or_insert_with(|| self.prepare(&delivery)).clone();
                Held { delivery, target, send_by }
            })
            .collect();
        let tickets = self.lineup.park(held);
        Ok(leases.into_iter().zip(tickets).collect())
    }

    fn lease_of(item: &Ticket) -> Lease {
        item.lease()
    }

    async fn attempt(self: Arc<Self>, ticket: Ticket) -> Outcome {
        match self.lineup.next(&ticket).await {
            Next::Post(held, slot) => {
                let outcome = self.deliver(held).await;
                drop(slot);
                outcome
            }
            Next::Expired(held) => Outcome::GivenBack(held.lease()),
            Next::Closed => Outcome::Unused { id: ticket.lease().id },
        }
    }

    fn id_of(o: &Outcome) -> i64 {
        match o {
            Outcome::Attempted(a) => a.lease.id,
            Outcome::GivenBack(Lease { id, .. }) | Outcome::Unused { id } => *id,
        }
    }

    async fn record(&self, batch: &[Outcome]) -> sqlx::Result<()> {
        let mut attempted = Vec::with_capacity(batch.len());
        let mut given_back = vec![];
        for o in batch {
            match o {
                Outcome::Attempted(a) => attempted.push(a),
                Outcome::GivenBack(lease) => given_back.push(*lease),
                Outcome::Unused { .. } => {}
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
                "webhook attempts not recorded: their claims were recovered by another scheduler, or they were recorded already"
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

    /// On shutdown, with the tickets no runner took: every delivery still waiting for a slot
    /// is given back (those the tickets name, and those runners wait with), and the lineup
    /// hands out nothing more. A runner waiting behind an organization's cap when no ticket is
    /// left untaken is not reached here: it may still POST within the grace period.
    async fn give_back(&self, _unstarted: &[Lease]) -> sqlx::Result<u64> {
        let waiting: Vec<Lease> = self.lineup.close().iter().map(Held::lease).collect();
        queue::give_back(&self.db, &waiting).await
    }

    fn depth_gauges(&self) -> (IntGaugeVec, IntGauge) {
        (self.metrics.webhook_queue_depth.clone(), self.metrics.webhook_queue_oldest_due.clone())
    }
}
