//! Leadership: exactly one replica of the jobs role runs the periodic work at a time. In a
//! Kubernetes cluster a `coordination.k8s.io` Lease decides ([`lease`]); elsewhere a PostgreSQL
//! advisory lock ([`postgres`]). Either way a term of leadership can end at any moment (a
//! renewal failed, the database connection dropped): the runner stops its jobs at once when it
//! does, and every job's effect is idempotent besides, so even two replicas that both believe
//! they lead for a moment do nothing twice.

pub mod lease;
pub mod postgres;

use std::time::Duration;

use tokio::{sync::watch, task::JoinHandle};

/// One term of leadership. Dropping it gives leadership up.
pub struct Leadership {
    lost: watch::Receiver<bool>,
    /// The task keeping the term (renewing the Lease, holding the lock's connection).
    keeper: JoinHandle<()>,
}

impl Leadership {
    fn new(keeper: impl FnOnce(watch::Sender<bool>) -> JoinHandle<()>) -> Leadership {
        let (tx, lost) = watch::channel(false);
        Leadership { lost, keeper: keeper(tx) }
    }

    /// Resolves when the term has ended.
    pub async fn lost(&mut self) {
        let _ = self.lost.wait_for(|lost| *lost).await;
    }
}

impl Drop for Leadership {
    fn drop(&mut self) {
        self.keeper.abort();
    }
}

/// How this replica competes for leadership.
pub enum Elector {
    Postgres(postgres::AdvisoryLock),
    Kubernetes(lease::LeaseLock),
}

impl Elector {
    /// Wait until this replica leads (trying again every `retry` while another one does, or
    /// while the coordinator cannot be reached).
    pub async fn acquire(&self, retry: Duration) -> Leadership {
        loop {
            let attempt = match self {
                Elector::Postgres(lock) => lock.try_acquire().await,
                Elector::Kubernetes(lease) => lease.try_acquire().await.map_err(anyhow::Error::from),
            };
            match attempt {
                Ok(Some(term)) => return term,
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "leader election failed; trying again"),
            }
            tokio::time::sleep(jittered(retry)).await;
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Elector::Postgres(_) => "postgres",
            Elector::Kubernetes(_) => "kubernetes",
        }
    }
}

/// `d` ± 20 %, so replicas started together do not knock in step.
fn jittered(d: Duration) -> Duration {
    d.mul_f64(0.8 + 0.4 * rand::random::<f64>())
}
