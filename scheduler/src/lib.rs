//! The scheduler role: works two leased queues in PostgreSQL with the loop in [`worker`].
//!
//! - Submissions: claims queued submissions fairly across organizations, calls the adapter
//!   plugins (bounded per adapter, off the async runtime, with a timeout), records outcomes.
//! - Webhook deliveries ([`webhooks`]): POSTs signed events to subscribers, with retries.
//!
//! Any number of schedulers may share one database.

pub mod attempt;
pub mod callers;
pub mod metrics;
pub mod role;
pub mod settings;
pub mod webhooks;
pub mod worker;

use std::{
    collections::HashMap,
    future::Future,
    sync::{
        atomic::{AtomicI64, Ordering},
        Arc,
    },
    time::Instant,
};

use prometheus::{IntGauge, IntGaugeVec};
use sqlx::PgPool;
use tokio::sync::watch;
use tracing::Instrument;

pub use settings::{Backoff, SchedulerSettings, WebhookSettings};

use crate::{
    attempt::Context,
    callers::Lane,
    metrics::Metrics,
    worker::{Limits, Queue},
};
use tns_core::domain::kinds::SubmissionState;
use tns_store::{
    leases::{self, Lease},
    submissions::queue::{self, Claimed, Finished},
};

/// Run until `shutdown` resolves: then both queues stop claiming, let in-flight attempts
/// finish for up to `shutdown_grace`, and release what is still unfinished.
pub async fn run(
    db: PgPool,
    settings: SchedulerSettings,
    adapters: Arc<tns_adapter_host::Plugins>,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let lanes = adapters
        .list()
        .into_iter()
        .map(|(name, _, _)| {
            let lane = Lane::new(&name, settings.adapter_concurrency);
            (name, lane)
        })
        .collect();
    let ctx =
        Arc::new(Context { settings: settings.clone(), adapters, lanes, metrics: metrics.clone(), db: db.clone() });
    let hooks = webhooks::Deliveries::new(db.clone(), settings.webhooks.clone(), metrics.clone())?;
    tracing::info!(
        batch = settings.batch,
        max_in_flight = settings.max_in_flight,
        webhook_concurrency = settings.webhooks.concurrency,
        adapters = ?ctx.lanes.keys().collect::<Vec<_>>(),
        "scheduler started"
    );

    let (stop_tx, stop_rx) = watch::channel(false);
    let stopped = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let submissions = Submissions { db: db.clone(), ctx, after_org: AtomicI64::new(0) };
    // Every held submission is attempted at once (the adapters' own limits apply inside).
    let sub_limits = Limits {
        batch: settings.batch,
        max_in_flight: settings.max_in_flight,
        runners: settings.max_in_flight,
        poll_interval: settings.poll_interval,
        shutdown_grace: settings.shutdown_grace,
    };
    // Deliveries are claimed and recorded in batches larger than the POSTs in flight, so the
    // database round trips overlap the HTTP ones (see WebhookSettings::held); one runner per
    // POST slot.
    let held = settings.webhooks.held();
    let hook_limits =
        Limits { max_in_flight: held, batch: held / 2, runners: settings.webhooks.concurrency, ..sub_limits };
    let both = async {
        tokio::join!(
            worker::drive(Arc::new(submissions), db.clone(), sub_limits, stopped(stop_rx.clone())),
            worker::drive(Arc::new(hooks), db.clone(), hook_limits, stopped(stop_rx)),
        )
    };
    tokio::pin!(both);
    tokio::select! {
        _ = &mut both => {}
        _ = shutdown => {
            let _ = stop_tx.send(true);
            both.await;
        }
    }
    tracing::info!("scheduler stopped");
    Ok(())
}

/// The submission queue, as the worker loop sees it.
struct Submissions {
    db: PgPool,
    ctx: Arc<Context>,
    /// The last organization the previous claim served: the next claim starts after it.
    after_org: AtomicI64,
}

/// A submission's attempt on its way to the database.
struct Done {
    finished: Finished,
    adapter: String,
    claimed: Instant,
}

impl Queue for Submissions {
    type Item = Claimed;
    type Outcome = Done;
    const NAME: &'static str = "submissions";
    const TABLE: leases::Table = leases::Table::Submissions;
    const CHANNEL: &'static str = queue::QUEUE_CHANNEL;

    async fn claim(&self, n: usize, token: i64) -> sqlx::Result<Vec<(Lease, Claimed)>> {
        let s = &self.ctx.settings;
        let claimed = queue::claim(&self.db, n, s.lease, token, self.after_org.load(Ordering::Relaxed)).await?;
        self.after_org.store(claimed.last().map_or(0, |c| c.org_id.get()), Ordering::Relaxed);
        self.ctx.metrics.in_flight.add(claimed.len() as i64);
        Ok(claimed.into_iter().map(|c| (c.lease(), c)).collect())
    }

    fn lease_of(item: &Claimed) -> Lease {
        item.lease()
    }

    async fn attempt(self: Arc<Self>, item: Claimed) -> Done {
        let (claimed, adapter) = (Instant::now(), item.adapter.clone());
        Done { finished: attempt::run(self.ctx.clone(), item).await, adapter, claimed }
    }

    fn id_of(done: &Done) -> i64 {
        done.finished.id
    }

    async fn record(&self, batch: &[Done]) -> sqlx::Result<()> {
        let finished: Vec<Finished> = batch.iter().map(|d| d.finished.clone()).collect();
        let span = tracing::info_span!("record", submissions = finished.len());
        let completed = queue::complete(&self.db, &finished).instrument(span).await?;
        let states: HashMap<i64, SubmissionState> = completed.iter().map(|c| (c.id, c.state)).collect();
        let m = &self.ctx.metrics;
        for d in batch {
            let Some(state) = states.get(&d.finished.id) else {
                tracing::warn!(submission = d.finished.id, "lease lost before the outcome was recorded; dropped");
                continue;
            };
            m.claim_to_finish
                .with_label_values(&[d.adapter.as_str(), state.as_str()])
                .observe(d.claimed.elapsed().as_secs_f64());
            // `unknown` is not finished: it is looked up again.
            if !state.is_open() {
                m.finished.with_label_values(&[d.adapter.as_str(), state.as_str()]).inc();
            }
        }
        m.in_flight.sub(batch.len() as i64);
        Ok(())
    }

    /// Every held submission is attempted at once, so this finds little; it is released as
    /// though abandoned, so whoever claims it next asks the downstream first.
    async fn give_back(&self, held: &[Lease]) -> sqlx::Result<u64> {
        leases::release(&self.db, leases::Table::Submissions, held).await
    }

    fn depth_gauges(&self) -> (IntGaugeVec, IntGauge) {
        let m = &self.ctx.metrics;
        (m.queue_depth.clone(), m.queue_oldest_due.clone())
    }
}
