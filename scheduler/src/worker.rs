//! The loop every leased queue is worked by (submissions, webhook deliveries): claim in
//! batches as room allows, run each item's attempt as its own task, record outcomes in
//! batches, wake on NOTIFY or poll, and on shutdown stop claiming, let in-flight attempts
//! finish for a grace period and release what is left.
//!
//! ```text
//!   NOTIFY / poll ──▶ claim loop ──(≤ max_in_flight)──▶ attempt tasks ──▶ recorder ──▶ PostgreSQL
//!                        ▲                                                  │
//!                        └───────────── slots freed as outcomes land ◀──────┘
//! ```

use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use prometheus::IntGaugeVec;
use sqlx::{postgres::PgListener, PgPool};
use tokio::sync::{mpsc, Notify, OwnedSemaphorePermit, Semaphore};

use crate::leases::{self, Table};

/// One leased queue: what to claim, how to attempt an item, how to record outcomes.
pub trait Queue: Send + Sync + 'static {
    type Item: Send + 'static;
    type Outcome: Send + 'static;
    /// For logs.
    const NAME: &'static str;
    const TABLE: Table;
    /// NOTIFY channel announcing new work.
    const CHANNEL: &'static str;

    /// Claim up to `n` due items with this claim's lease `token`.
    fn claim(&self, n: usize, token: i64) -> impl Future<Output = sqlx::Result<Vec<Self::Item>>> + Send;
    /// The item's (id, lease token).
    fn lease_of(item: &Self::Item) -> (i64, i64);
    fn attempt(self: Arc<Self>, item: Self::Item) -> impl Future<Output = Self::Outcome> + Send;
    /// The outcome's item id.
    fn id_of(outcome: &Self::Outcome) -> i64;
    /// Record a batch of outcomes in one statement (and whatever follows from them).
    fn record(&self, batch: &[Self::Outcome]) -> impl Future<Output = sqlx::Result<()>> + Send;
    /// Pending rows by ready / waiting / leased.
    fn depth_gauge(&self) -> &IntGaugeVec;
}

/// How hard a queue is worked.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Rows claimed per statement.
    pub batch: usize,
    /// Items this process holds at once (claimed, in attempt, or being recorded).
    pub max_in_flight: usize,
    pub poll_interval: Duration,
    pub shutdown_grace: Duration,
}

/// How long the claim loop and the recorder wait for a batch to fill up.
const BATCH_WAIT: Duration = Duration::from_millis(2);
/// Outcomes recorded per statement at most.
const RECORD_BATCH: usize = 256;

/// Items this process holds, by id with their lease token (released on shutdown).
type Held = Arc<Mutex<HashMap<i64, i64>>>;

fn lock(held: &Held) -> std::sync::MutexGuard<'_, HashMap<i64, i64>> {
    held.lock().unwrap_or_else(|p| p.into_inner())
}

/// Work `queue` until `shutdown` resolves.
pub async fn drive<Q: Queue>(queue: Arc<Q>, db: PgPool, limits: Limits, shutdown: impl Future<Output = ()>) {
    let wake = Arc::new(Notify::new());
    let held: Held = Arc::default();
    let slots = Arc::new(Semaphore::new(limits.max_in_flight));
    let listener = tokio::spawn(listen(db.clone(), Q::CHANNEL, wake.clone()));
    let gauges = tokio::spawn(report_depth(db.clone(), Q::TABLE, queue.depth_gauge().clone()));
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let recorder = tokio::spawn(record_loop(queue.clone(), done_rx, held.clone()));

    tokio::pin!(shutdown);
    loop {
        // Wait for room, then claim as much as there is room for.
        let room = tokio::select! {
            p = slots.clone().acquire_owned() => p.expect("semaphore never closed"),
            _ = &mut shutdown => break,
        };
        if slots.available_permits() + 1 < limits.batch && slots.available_permits() + 1 < limits.max_in_flight {
            // Room for a few only: let a moment's completions add up, so claims stay batches
            // (one statement per row is what makes a queue slow).
            tokio::time::sleep(BATCH_WAIT).await;
        }
        let n = (1 + slots.available_permits()).min(limits.batch);
        drop(room);
        let token = rand::random::<i64>();
        let t0 = Instant::now();
        let claimed = match queue.claim(n, token).await {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(queue = Q::NAME, error = %e, "claiming failed; retrying in 1 s");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => continue,
                    _ = &mut shutdown => break,
                }
            }
        };
        let got = claimed.len();
        tracing::debug!(queue = Q::NAME, asked = n, got, ms = t0.elapsed().as_secs_f64() * 1e3, "claimed");
        for item in claimed {
            let slot = slots.clone().try_acquire_owned().expect("room was counted before claiming");
            let (id, token) = Q::lease_of(&item);
            lock(&held).insert(id, token);
            let (q, done) = (queue.clone(), done_tx.clone());
            tokio::spawn(async move {
                let outcome = q.attempt(item).await;
                // The recorder is gone only when shutdown gave up waiting; the lease covers us.
                let _ = done.send((outcome, slot));
            });
        }
        if got == 0 {
            // Drained for now: sleep until new work is announced, a retry may be due, or we stop.
            tokio::select! {
                _ = wake.notified() => {}
                _ = tokio::time::sleep(limits.poll_interval) => {}
                _ = &mut shutdown => break,
            }
        }
    }

    tracing::info!(queue = Q::NAME, "stopping: no new claims; letting in-flight attempts finish");
    drop(done_tx);
    let all = u32::try_from(limits.max_in_flight).unwrap_or(u32::MAX);
    let drained = tokio::time::timeout(limits.shutdown_grace, slots.acquire_many(all)).await.is_ok();
    listener.abort();
    gauges.abort();
    if !drained {
        recorder.abort();
        let left: Vec<(i64, i64)> = lock(&held).drain().collect();
        match leases::release(&db, Q::TABLE, &left).await {
            Ok(n) => tracing::warn!(queue = Q::NAME, released = n, "released unfinished work to other schedulers"),
            Err(e) => tracing::error!(queue = Q::NAME, error = %e, "releasing failed; the leases will expire"),
        }
    }
}

/// Record outcomes in batches: whatever has arrived is written in one statement. A database
/// error is retried (the leases are long); the slots are freed once the outcomes are stored.
async fn record_loop<Q: Queue>(
    queue: Arc<Q>,
    mut rx: mpsc::UnboundedReceiver<(Q::Outcome, OwnedSemaphorePermit)>,
    held: Held,
) {
    let mut buf = Vec::with_capacity(RECORD_BATCH);
    while rx.recv_many(&mut buf, RECORD_BATCH).await > 0 {
        if buf.len() < 32 {
            // Outcomes arrive one by one; a moment later there are usually more to write with them.
            let _ = tokio::time::timeout(BATCH_WAIT, async {
                while buf.len() < 32 {
                    let room = RECORD_BATCH - buf.len();
                    if rx.recv_many(&mut buf, room).await == 0 {
                        break;
                    }
                }
            })
            .await;
        }
        let (outcomes, slots): (Vec<Q::Outcome>, Vec<OwnedSemaphorePermit>) = buf.drain(..).unzip();
        let t0 = Instant::now();
        while let Err(e) = queue.record(&outcomes).await {
            tracing::error!(queue = Q::NAME, error = %e, n = outcomes.len(), "recording outcomes failed; retrying in 1 s");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        tracing::debug!(queue = Q::NAME, n = outcomes.len(), ms = t0.elapsed().as_secs_f64() * 1e3, "recorded");
        {
            let mut h = lock(&held);
            for o in &outcomes {
                h.remove(&Q::id_of(o));
            }
        }
        drop(slots);
    }
}

/// LISTEN for new work; reconnect on failure (polling covers the gap).
async fn listen(db: PgPool, channel: &'static str, wake: Arc<Notify>) {
    loop {
        let result: sqlx::Result<()> = async {
            let mut l = PgListener::connect_with(&db).await?;
            l.listen(channel).await?;
            loop {
                l.recv().await?;
                wake.notify_one();
            }
        }
        .await;
        if let Err(e) = result {
            tracing::warn!(channel, error = %e, "listener lost; reconnecting in 1 s");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn report_depth(db: PgPool, table: Table, gauge: IntGaugeVec) {
    loop {
        match leases::depth(&db, table).await {
            Ok((ready, waiting, leased)) => {
                gauge.with_label_values(&["ready"]).set(ready);
                gauge.with_label_values(&["waiting"]).set(waiting);
                gauge.with_label_values(&["leased"]).set(leased);
            }
            Err(e) => tracing::warn!(?table, error = %e, "reading the queue depth failed"),
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}
