//! The loop every leased queue is worked by (submissions, webhook deliveries): claim in
//! batches as room allows, hand the items to a fixed set of runner tasks that attempt them one
//! at a time, record outcomes in batches, wake on NOTIFY or poll, and on shutdown stop
//! claiming, give back at once what no runner has started, let the attempts in progress finish
//! for a grace period and release what is left.
//!
//! ```text
//!   NOTIFY / poll ──▶ claim loop ──(≤ max_in_flight)──▶ runners ──▶ recorder ──▶ PostgreSQL
//!                        ▲                                            │
//!                        └──────── slots freed as outcomes land ◀─────┘
//! ```

use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use prometheus::{IntGauge, IntGaugeVec};
use sqlx::{postgres::PgListener, PgPool};
use tokio::sync::{mpsc, Notify, OwnedSemaphorePermit, Semaphore};

use tns_store::leases::{self, Lease, Table};

/// One leased queue: what to claim, how to attempt an item, how to record outcomes.
pub trait Queue: Send + Sync + 'static {
    type Item: Send + 'static;
    type Outcome: Send + 'static;
    /// For logs.
    const NAME: &'static str;
    const TABLE: Table;
    /// NOTIFY channel announcing new work.
    const CHANNEL: &'static str;

    /// Claim up to `n` due items with this claim's lease `token`, each with the row it was
    /// claimed as (held until an outcome names it: an item may name another row by the time
    /// the claim returns, see `lease_of`).
    fn claim(&self, n: usize, token: i64) -> impl Future<Output = sqlx::Result<Vec<(Lease, Self::Item)>>> + Send;
    /// The row the item names now and its lease token.
    fn lease_of(item: &Self::Item) -> Lease;
    fn attempt(self: Arc<Self>, item: Self::Item) -> impl Future<Output = Self::Outcome> + Send;
    /// The outcome's item id.
    fn id_of(outcome: &Self::Outcome) -> i64;
    /// Record a batch of outcomes in one statement (and whatever follows from them).
    fn record(&self, batch: &[Self::Outcome]) -> impl Future<Output = sqlx::Result<()>> + Send;
    /// Give back held items no attempt was started for (on shutdown): due again at once for any
    /// scheduler. Returns how many were still held.
    fn give_back(&self, held: &[Lease]) -> impl Future<Output = sqlx::Result<u64>> + Send;
    /// Pending rows by ready / waiting / leased, and the age of the longest-due one.
    fn depth_gauges(&self) -> (IntGaugeVec, IntGauge);
}

/// How hard a queue is worked.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Rows claimed per statement.
    pub batch: usize,
    /// Items this process holds at once (claimed, in attempt, or being recorded).
    pub max_in_flight: usize,
    /// Attempts in progress at once: the runner tasks (long-lived, so an item costs no task
    /// of its own). Claimed items wait for a free runner in claim order.
    pub runners: usize,
    pub poll_interval: Duration,
    pub shutdown_grace: Duration,
}

/// How long the claim loop and the recorder wait for a batch to fill up.
const BATCH_WAIT: Duration = Duration::from_millis(2);
/// The recorder waits for this many outcomes (or `BATCH_WAIT`) before writing.
const RECORD_MIN: usize = 32;

/// Items this process holds, by id (released on shutdown).
type Held = Arc<Mutex<HashMap<i64, Lease>>>;

/// An item or outcome with the slot it occupies until its outcome is recorded.
type Slotted<T> = (T, OwnedSemaphorePermit);

/// Claimed items waiting for a runner; the runners share the receiving end.
type Waiting<T> = Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Slotted<T>>>>;

fn lock(held: &Held) -> std::sync::MutexGuard<'_, HashMap<i64, Lease>> {
    held.lock().unwrap_or_else(|p| p.into_inner())
}

/// Work `queue` until `shutdown` resolves.
pub async fn drive<Q: Queue>(queue: Arc<Q>, db: PgPool, limits: Limits, shutdown: impl Future<Output = ()>) {
    let wake = Arc::new(Notify::new());
    let held: Held = Arc::default();
    let slots = Arc::new(Semaphore::new(limits.max_in_flight));
    let listener = tokio::spawn(listen(db.clone(), Q::CHANNEL, wake.clone()));
    let gauges = tokio::spawn(report_depth(db.clone(), Q::TABLE, queue.depth_gauges()));
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let recorder = tokio::spawn(record_loop(queue.clone(), done_rx, held.clone(), limits.batch));
    let (claimed_tx, claimed_rx) = mpsc::unbounded_channel();
    let waiting: Waiting<Q::Item> = Arc::new(tokio::sync::Mutex::new(claimed_rx));
    let mut runners = tokio::task::JoinSet::new();
    for _ in 0..limits.runners.max(1) {
        runners.spawn(run_attempts(queue.clone(), waiting.clone(), done_tx.clone()));
    }
    drop(done_tx);

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
                tracing::error!(queue = Q::NAME, error = %tns_store::redacted(&e), "claiming failed; retrying in 1 s");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => continue,
                    _ = &mut shutdown => break,
                }
            }
        };
        let got = claimed.len();
        tracing::debug!(queue = Q::NAME, asked = n, got, ms = t0.elapsed().as_secs_f64() * 1e3, "claimed");
        {
            let mut h = lock(&held);
            for (lease, item) in claimed {
                let slot = slots.clone().try_acquire_owned().expect("room was counted before claiming");
                h.insert(lease.id, lease);
                // The runners are gone only when shutdown gave up waiting; the lease covers us.
                let _ = claimed_tx.send((item, slot));
            }
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
    drop(claimed_tx);
    give_back_unstarted(queue.as_ref(), &waiting, &held).await;
    let all = u32::try_from(limits.max_in_flight).unwrap_or(u32::MAX);
    let drained = tokio::time::timeout(limits.shutdown_grace, slots.acquire_many(all)).await.is_ok();
    listener.abort();
    gauges.abort();
    if !drained {
        // No attempt may start (or go on) once its lease is given to other schedulers.
        runners.abort_all();
        recorder.abort();
    }
    // Unfinished attempts (and anything that could not be given back) go to other schedulers
    // now rather than when their leases expire; the next claim records them as abandoned.
    let left: Vec<Lease> = lock(&held).drain().map(|(_, lease)| lease).collect();
    if !left.is_empty() {
        match leases::release(&db, Q::TABLE, &left).await {
            Ok(n) => tracing::warn!(queue = Q::NAME, released = n, "released unfinished work to other schedulers"),
            Err(e) => {
                tracing::error!(queue = Q::NAME, error = %tns_store::redacted(&e), "releasing failed; the leases will expire")
            }
        }
    }
}

/// On shutdown: take what no runner has started out of the waiting line and give it back
/// untried, so other schedulers take it at once instead of after the grace period (and no
/// attempt is counted for it). What cannot be given back stays held, to be released.
async fn give_back_unstarted<Q: Queue>(queue: &Q, waiting: &Waiting<Q::Item>, held: &Held) {
    let unstarted: Vec<Slotted<Q::Item>> = {
        let mut rx = waiting.lock().await;
        std::iter::from_fn(|| rx.try_recv().ok()).collect()
    };
    if unstarted.is_empty() {
        return;
    }
    let back: Vec<Lease> = unstarted.iter().map(|(item, _)| Q::lease_of(item)).collect();
    match queue.give_back(&back).await {
        Ok(n) => {
            let mut h = lock(held);
            for lease in &back {
                h.remove(&lease.id);
            }
            tracing::info!(queue = Q::NAME, given_back = n, "gave back what no attempt had started");
        }
        Err(e) => {
            tracing::warn!(queue = Q::NAME, error = %tns_store::redacted(&e), "giving back unstarted work failed; released instead")
        }
    }
}

/// A runner: attempt claimed items one at a time until the claim loop has stopped and
/// nothing is left waiting.
async fn run_attempts<Q: Queue>(
    queue: Arc<Q>,
    waiting: Waiting<Q::Item>,
    done: mpsc::UnboundedSender<Slotted<Q::Outcome>>,
) {
    loop {
        let next = waiting.lock().await.recv().await;
        let Some((item, slot)) = next else { return };
        let outcome = queue.clone().attempt(item).await;
        // The recorder is gone only when shutdown gave up waiting; the lease covers us.
        if done.send((outcome, slot)).is_err() {
            return;
        }
    }
}

/// Record outcomes in batches of up to `max`: whatever has arrived is written in one
/// statement, and what arrives while it is written makes the next batch (so batches grow with
/// the load). A database error is retried (the leases are long); the slots are freed once the
/// outcomes are stored.
async fn record_loop<Q: Queue>(
    queue: Arc<Q>,
    mut rx: mpsc::UnboundedReceiver<Slotted<Q::Outcome>>,
    held: Held,
    max: usize,
) {
    let mut buf = Vec::with_capacity(max);
    while rx.recv_many(&mut buf, max).await > 0 {
        if buf.len() < RECORD_MIN {
            // Outcomes arrive one by one; a moment later there are usually more to write with them.
            let _ = tokio::time::timeout(BATCH_WAIT, async {
                while buf.len() < RECORD_MIN {
                    let room = max - buf.len();
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
            tracing::error!(queue = Q::NAME, error = %tns_store::redacted(&e), n = outcomes.len(), "recording outcomes failed; retrying in 1 s");
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
            tracing::warn!(channel, error = %tns_store::redacted(&e), "listener lost; reconnecting in 1 s");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn report_depth(db: PgPool, table: Table, (gauge, oldest): (IntGaugeVec, IntGauge)) {
    loop {
        match leases::depth(&db, table).await {
            Ok(depth) => {
                gauge.with_label_values(&["ready"]).set(depth.ready);
                gauge.with_label_values(&["waiting"]).set(depth.waiting);
                gauge.with_label_values(&["leased"]).set(depth.leased);
                oldest.set(depth.oldest_due_secs);
            }
            Err(e) => tracing::warn!(?table, error = %tns_store::redacted(&e), "reading the queue depth failed"),
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}
