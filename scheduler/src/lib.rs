//! The scheduler role: claims queued submissions in batches, calls the adapter plugins
//! concurrently (bounded per adapter, off the async runtime, with a timeout), and records the
//! outcomes in batches. Any number of schedulers may share one database.
//!
//! ```text
//!   NOTIFY / poll ──▶ claim loop ──(≤ max_in_flight)──▶ attempt tasks ──▶ completer ──▶ PostgreSQL
//!                        ▲                                                  │
//!                        └───────────── slots freed as outcomes land ◀──────┘
//! ```

pub mod adapters;
pub mod attempt;
pub mod metrics;
pub mod queue;
pub mod settings;

use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use sqlx::{postgres::PgListener, PgPool};
use tokio::sync::{mpsc, Notify, OwnedSemaphorePermit, Semaphore};

pub use settings::{Backoff, Settings};

use crate::{
    attempt::Context,
    metrics::Metrics,
    queue::{Claimed, Finished},
};

/// An attempt's outcome on its way to the database, with the slot it occupies.
struct Done {
    finished: Finished,
    adapter: String,
    claimed: Instant,
    _slot: OwnedSemaphorePermit,
}

/// How long the claim loop and the completer wait for a batch to fill up.
const BATCH_WAIT: Duration = Duration::from_millis(2);

/// Submissions this process holds, by id with their lease token (released on shutdown).
type Held = Arc<Mutex<HashMap<i64, i64>>>;

/// Run until `shutdown` resolves: then stop claiming, let in-flight attempts finish for up to
/// `shutdown_grace`, and release what is still unfinished.
pub async fn run(
    db: PgPool,
    settings: Settings,
    adapters: adapters::Registry,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let limits = adapters
        .list()
        .into_iter()
        .map(|(name, _, _)| (name, Arc::new(Semaphore::new(settings.adapter_concurrency))))
        .collect();
    let ctx = Arc::new(Context { settings: settings.clone(), adapters, limits, metrics: metrics.clone() });
    let wake = Arc::new(Notify::new());
    let held: Held = Arc::default();
    let slots = Arc::new(Semaphore::new(settings.max_in_flight));

    let listener = tokio::spawn(listen(db.clone(), wake.clone()));
    let gauges = tokio::spawn(report_depth(db.clone(), metrics.clone()));
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let completer = tokio::spawn(complete_loop(db.clone(), done_rx, held.clone(), metrics.clone()));
    tracing::info!(
        batch = settings.batch,
        max_in_flight = settings.max_in_flight,
        adapters = ?ctx.limits.keys().collect::<Vec<_>>(),
        "scheduler started"
    );

    tokio::pin!(shutdown);
    let mut after_org = 0;
    loop {
        // Wait for room, then claim as much as there is room for.
        let room = tokio::select! {
            p = slots.clone().acquire_owned() => p.expect("semaphore never closed"),
            _ = &mut shutdown => break,
        };
        if slots.available_permits() + 1 < settings.batch && slots.available_permits() + 1 < settings.max_in_flight {
            // Room for a few only: let a moment's completions add up, so claims stay batches
            // (one statement per row is what makes a queue slow).
            tokio::time::sleep(BATCH_WAIT).await;
        }
        let n = (1 + slots.available_permits()).min(settings.batch);
        drop(room);
        let token = rand::random::<i64>();
        let t0 = Instant::now();
        let claimed = match queue::claim(&db, n, settings.lease, token, after_org).await {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "claiming submissions failed; retrying in 1 s");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => continue,
                    _ = &mut shutdown => break,
                }
            }
        };
        let got = claimed.len();
        tracing::debug!(asked = n, got, ms = t0.elapsed().as_secs_f64() * 1e3, "claimed");
        after_org = claimed.last().map_or(0, |c| c.org_id);
        for item in claimed {
            let slot = slots.clone().try_acquire_owned().expect("room was counted before claiming");
            held.lock().unwrap_or_else(|p| p.into_inner()).insert(item.id, item.lease_token);
            metrics.in_flight.inc();
            tokio::spawn(attempt_one(ctx.clone(), item, slot, done_tx.clone()));
        }
        if got == 0 {
            // Drained for now: sleep until new work is announced, a retry may be due, or we stop.
            tokio::select! {
                _ = wake.notified() => {}
                _ = tokio::time::sleep(settings.poll_interval) => {}
                _ = &mut shutdown => break,
            }
        }
    }

    tracing::info!("scheduler stopping: no new claims; letting in-flight attempts finish");
    drop(done_tx);
    let all = u32::try_from(settings.max_in_flight).unwrap_or(u32::MAX);
    let drained = tokio::time::timeout(settings.shutdown_grace, slots.acquire_many(all)).await.is_ok();
    listener.abort();
    gauges.abort();
    if !drained {
        completer.abort();
        let left: Vec<(i64, i64)> = held.lock().unwrap_or_else(|p| p.into_inner()).drain().collect();
        match queue::release(&db, &left).await {
            Ok(n) => tracing::warn!(released = n, "released unfinished submissions to other schedulers"),
            Err(e) => tracing::error!(error = %e, "releasing submissions failed; their leases will expire"),
        }
    }
    tracing::info!("scheduler stopped");
    Ok(())
}

async fn attempt_one(ctx: Arc<Context>, item: Claimed, slot: OwnedSemaphorePermit, done: mpsc::UnboundedSender<Done>) {
    let claimed = Instant::now();
    let adapter = item.adapter.clone();
    let finished = attempt::run(ctx, item).await;
    // The completer is gone only when shutdown gave up waiting; the lease then covers us.
    let _ = done.send(Done { finished, adapter, claimed, _slot: slot });
}

/// Record outcomes in batches: whatever has arrived is written in one statement. A database
/// error is retried (the leases are long); the slots are freed once the outcome is stored.
async fn complete_loop(db: PgPool, mut rx: mpsc::UnboundedReceiver<Done>, held: Held, metrics: Arc<Metrics>) {
    let mut buf = Vec::with_capacity(256);
    while rx.recv_many(&mut buf, 256).await > 0 {
        if buf.len() < 32 {
            // Outcomes arrive one by one; a moment later there are usually more to write with them.
            let _ = tokio::time::timeout(BATCH_WAIT, async {
                while buf.len() < 32 {
                    let room = 256 - buf.len();
                    if rx.recv_many(&mut buf, room).await == 0 {
                        break;
                    }
                }
            })
            .await;
        }
        let batch: Vec<Finished> = buf.iter().map(|d| d.finished.clone()).collect();
        let t0 = Instant::now();
        let completed = loop {
            match queue::complete(&db, &batch).await {
                Ok(c) => break c,
                Err(e) => {
                    tracing::error!(error = %e, n = batch.len(), "recording outcomes failed; retrying in 1 s");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        };
        tracing::debug!(n = batch.len(), ms = t0.elapsed().as_secs_f64() * 1e3, "recorded");
        let states: HashMap<i64, &str> = completed.iter().map(|c| (c.id, c.state.as_str())).collect();
        {
            let mut h = held.lock().unwrap_or_else(|p| p.into_inner());
            for d in &buf {
                h.remove(&d.finished.id);
                let Some(state) = states.get(&d.finished.id) else {
                    tracing::warn!(submission = d.finished.id, "lease lost before the outcome was recorded; dropped");
                    continue;
                };
                metrics
                    .claim_to_finish
                    .with_label_values(&[d.adapter.as_str(), state])
                    .observe(d.claimed.elapsed().as_secs_f64());
                if *state != "pending" {
                    metrics.finished.with_label_values(&[d.adapter.as_str(), state]).inc();
                }
            }
        }
        metrics.in_flight.sub(buf.len() as i64);
        buf.clear(); // frees the slots
    }
}

/// LISTEN for new submissions; reconnect on failure (polling covers the gap).
async fn listen(db: PgPool, wake: Arc<Notify>) {
    loop {
        let result: sqlx::Result<()> = async {
            let mut l = PgListener::connect_with(&db).await?;
            l.listen(queue::QUEUE_CHANNEL).await?;
            loop {
                l.recv().await?;
                wake.notify_one();
            }
        }
        .await;
        if let Err(e) = result {
            tracing::warn!(error = %e, "queue listener lost; reconnecting in 1 s");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn report_depth(db: PgPool, metrics: Arc<Metrics>) {
    loop {
        match queue::depth(&db).await {
            Ok((ready, waiting, leased)) => {
                metrics.queue_depth.with_label_values(&["ready"]).set(ready);
                metrics.queue_depth.with_label_values(&["waiting"]).set(waiting);
                metrics.queue_depth.with_label_values(&["leased"]).set(leased);
            }
            Err(e) => tracing::warn!(error = %e, "reading the queue depth failed"),
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}
