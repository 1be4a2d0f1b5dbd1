//! `Prefer: wait=N` on submit: wait until the submission is delivered or failed. Schedulers
//! NOTIFY the finished ids on `tns_submissions_done`; one listener per API process (a
//! background task of the role: [`Waiters::listen`]) wakes the waiters. Waiters also re-read
//! the row every half second, so a lost listener connection only makes them slower, never
//! stuck.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use sqlx::{postgres::PgListener, PgPool};
use tokio::sync::oneshot;

use tns_core::ids::SubmissionId;
use tns_store::submissions::{self, DONE_CHANNEL};

/// The longest wait a client may ask for (seconds).
pub const MAX_WAIT_SECS: u64 = 30;
const RECHECK: Duration = Duration::from_millis(500);

#[derive(Default)]
pub struct Waiters {
    by_id: Arc<Mutex<HashMap<i64, Vec<oneshot::Sender<()>>>>>,
}

impl Waiters {
    /// Return once submission `id` is final or `wait` has passed.
    pub async fn wait(&self, db: &PgPool, id: SubmissionId, wait: Duration) -> sqlx::Result<()> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Register before reading, so a notification between the read and the wait is not lost.
            let (tx, rx) = oneshot::channel();
            self.by_id.lock().unwrap_or_else(|p| p.into_inner()).entry(id.get()).or_default().push(tx);
            if submissions::is_final(db, id).await? {
                return Ok(());
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(());
            }
            let _ = tokio::time::timeout(RECHECK.min(deadline - now), rx).await;
        }
    }

    /// Wake waiters as submissions finish, for as long as the role runs (reconnecting when
    /// the connection is lost).
    /// A lost listener is warned about once, not once a reconnection attempt while the
    /// database is down.
    pub async fn listen(&self, db: &PgPool) {
        let mut lost = false;
        loop {
            if let Err(e) = listen_until_error(db, &self.by_id, &mut lost).await {
                if lost {
                    tracing::debug!(error = %tns_store::redacted(&e), "submission listener still lost");
                } else {
                    tracing::warn!(error = %tns_store::redacted(&e), "submission listener lost; reconnecting");
                    lost = true;
                }
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

async fn listen_until_error(
    db: &PgPool,
    by_id: &Mutex<HashMap<i64, Vec<oneshot::Sender<()>>>>,
    lost: &mut bool,
) -> sqlx::Result<()> {
    let mut listener = PgListener::connect_with(db).await?;
    listener.listen(DONE_CHANNEL).await?;
    if std::mem::take(lost) {
        tracing::info!("submission listener reconnected");
    }
    loop {
        let n = listener.recv().await?;
        let mut map = by_id.lock().unwrap_or_else(|p| p.into_inner());
        for id in n.payload().split(',').filter_map(|s| s.parse::<i64>().ok()) {
            for tx in map.remove(&id).unwrap_or_default() {
                let _ = tx.send(());
            }
        }
        // Waiters that timed out left closed senders behind; drop them now and then.
        if map.len() > 10_000 {
            map.retain(|_, v| {
                v.retain(|tx| !tx.is_closed());
                !v.is_empty()
            });
        }
    }
}
