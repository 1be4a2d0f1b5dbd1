//! Journey creation, batched: concurrent creates queue here and the writer tasks (as many as
//! the role gives it, one per sixteen pool connections in the API) insert whatever has queued
//! in one statement and one commit. At low load a batch is one journey
//! (no added latency: nothing waits for a batch to fill); under load PostgreSQL does one
//! statement and one WAL flush for many journeys instead of one each.

use std::sync::Arc;
use tns_core::ids::OrgId;

use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot, Mutex};

use super::journeys::{insert_many, Journey, JourneyFields, ToCreate};

/// Journeys one statement carries at most.
const MAX_BATCH: usize = 64;

type Reply = oneshot::Sender<sqlx::Result<Option<Journey>>>;

struct Job {
    org: OrgId,
    fields: JourneyFields,
    by: String,
    reply: Reply,
}

#[derive(Clone)]
pub struct JourneyWriter {
    queue: mpsc::Sender<Job>,
}

/// The writer tasks behind a [`JourneyWriter`]: the role that owns them runs them (and stops
/// them when it stops).
pub struct Writers {
    db: PgPool,
    workers: usize,
    rx: Arc<Mutex<mpsc::Receiver<Job>>>,
}

impl Writers {
    /// Run the `workers` writer tasks (each holds at most one connection at a time) until every
    /// [`JourneyWriter`] is gone, or until dropped.
    pub async fn run(self) {
        let loops = (0..self.workers).map(|_| {
            let (db, rx) = (&self.db, &self.rx);
            async move {
                while let Some(batch) = next_batch(rx).await {
                    write(db, batch).await;
                }
            }
        });
        futures::future::join_all(loops).await;
    }
}

impl JourneyWriter {
    /// A writer on `db` and its `workers` writer tasks, not yet running.
    pub fn new(db: PgPool, workers: usize) -> (JourneyWriter, Writers) {
        let (queue, rx) = mpsc::channel::<Job>(MAX_BATCH * 16);
        let writers = Writers { db, workers: workers.max(1), rx: Arc::new(Mutex::new(rx)) };
        (JourneyWriter { queue }, writers)
    }

    /// Insert one journey, created `by` a credential; `None` when its vehicle record is not an
    /// active vehicle of `org`.
    pub async fn insert(&self, org: OrgId, fields: JourneyFields, by: &str) -> sqlx::Result<Option<Journey>> {
        let (reply, answer) = oneshot::channel();
        self.queue.send(Job { org, fields, by: by.to_string(), reply }).await.map_err(|_| sqlx::Error::PoolClosed)?;
        answer.await.map_err(|_| sqlx::Error::WorkerCrashed)?
    }
}

impl Job {
    fn row(&self) -> ToCreate<'_> {
        ToCreate { org: self.org, fields: &self.fields, by: &self.by }
    }
}

/// Wait for one job, then take whatever else is already queued (up to the batch size).
async fn next_batch(rx: &Mutex<mpsc::Receiver<Job>>) -> Option<Vec<Job>> {
    let mut rx = rx.lock().await;
    let first = rx.recv().await?;
    let mut batch = vec![first];
    while batch.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(job) => batch.push(job),
            Err(_) => break,
        }
    }
    Some(batch)
}

async fn write(db: &PgPool, batch: Vec<Job>) {
    let rows: Vec<ToCreate<'_>> = batch.iter().map(Job::row).collect();
    match insert_many(db, &rows).await {
        Ok(results) => {
            for (job, result) in batch.into_iter().zip(results) {
                let _ = job.reply.send(Ok(result));
            }
        }
        // An unreachable database fails every journey alike: writing each alone would make
        // the last wait the pool's acquire timeout once for every journey before it.
        Err(e) if crate::health::unreachable(&e) => {
            for job in batch {
                let _ = job.reply.send(Err(same_outage(&e)));
            }
        }
        // One bad row (a vehicle or person deleted meanwhile) fails the whole statement: then
        // each journey is written alone, so only its own request sees the error.
        Err(_) if batch.len() > 1 => {
            for job in batch {
                let result = insert_many(db, &[job.row()]).await.map(|mut r| r.pop().flatten());
                let _ = job.reply.send(result);
            }
        }
        Err(e) => {
            if let Some(job) = batch.into_iter().next() {
                let _ = job.reply.send(Err(e));
            }
        }
    }
}

/// The error each request of a batch is answered with when the database could not be reached
/// (a `sqlx::Error` is not `Clone`): the same kind of failure, so it is judged the same.
fn same_outage(e: &sqlx::Error) -> sqlx::Error {
    match e {
        sqlx::Error::Io(io) => sqlx::Error::Io(std::io::Error::new(io.kind(), io.to_string())),
        _ => sqlx::Error::PoolTimedOut,
    }
}
