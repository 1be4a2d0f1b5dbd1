//! The jobs role: singleton periodic work. Every replica competes for leadership
//! ([`leader`]); the one that leads runs the [`periodic`] jobs, each on its own period, and
//! stops them at once when its term ends. Run as many replicas as you like: one works, the
//! others wait to take over.

pub mod code_lists;
mod downstream;
pub mod drift;
pub mod exports;
pub mod leader;
pub mod periodic;
pub mod settings;

use std::{future::Future, sync::Arc};

use prometheus::{IntCounterVec, IntGauge, Opts, Registry};
use sqlx::PgPool;

use leader::Elector;
use periodic::Job;
pub use settings::JobsSettings;

pub struct Metrics {
    leading: IntGauge,
    runs: IntCounterVec,
}

impl Metrics {
    pub fn new(registry: &Registry) -> prometheus::Result<Metrics> {
        let leading = IntGauge::new("tns_jobs_leading", "1 while this replica leads the jobs role")?;
        let runs = IntCounterVec::new(
            Opts::new("tns_job_runs_total", "Runs of each periodic job by outcome"),
            &["job", "outcome"],
        )?;
        registry.register(Box::new(leading.clone()))?;
        registry.register(Box::new(runs.clone()))?;
        Ok(Metrics { leading, runs })
    }
}

/// Key of the leader lock outside a cluster (advisory locks are per database, so one
/// deployment's replicas, and only they, compete for it).
const LOCK_KEY: i64 = 0x746e_735f_6a6f_6273; // "tns_jobs"

/// How often the lock's holder checks that its session is alive.
const LOCK_CHECK: std::time::Duration = std::time::Duration::from_secs(2);

/// The jobs role, ready to run: its pool, how it competes for leadership, its metrics.
pub struct Runner {
    settings: JobsSettings,
    db: PgPool,
    elector: Elector,
    metrics: Arc<Metrics>,
    drift: Option<Arc<drift::DriftCheck>>,
    code_lists: Option<Arc<code_lists::CodeListRefresh>>,
}

impl Runner {
    /// In a cluster the Lease lives in the configured namespace, reached with the pod's
    /// service account (in-cluster configuration). `adapters` (each call within `call_timeout`)
    /// are what the drift checks and the code lists job ask.
    pub async fn prepare(
        settings: JobsSettings,
        database_url: &str,
        db: PgPool,
        registry: &Registry,
        adapters: Arc<tns_adapter_host::Plugins>,
        call_timeout: std::time::Duration,
    ) -> anyhow::Result<Runner> {
        use anyhow::Context;
        let elector = match &settings.election {
            settings::Election::Postgres => {
                Elector::Postgres(leader::postgres::AdvisoryLock::new(database_url, LOCK_KEY, LOCK_CHECK)?)
            }
            settings::Election::Kubernetes { namespace, lease, duration } => {
                let client = kube::Client::try_default().await.context("Kubernetes in-cluster configuration")?;
                let api = kube::Api::namespaced(client, namespace);
                Elector::Kubernetes(leader::lease::LeaseLock::new(api, lease, &settings.identity, *duration))
            }
        };
        let metrics = Arc::new(Metrics::new(registry).context("registering the jobs' metrics")?);
        let code_lists = settings.reference_org.map(|org| {
            Arc::new(code_lists::CodeListRefresh::new(org, adapters.clone(), settings.data_key.clone(), call_timeout))
        });
        let drift = drift::DriftCheck::new(settings.drift, adapters, settings.data_key.clone(), call_timeout, registry)
            .context("registering the drift checks' metrics")?;
        Ok(Runner { settings, db, elector, metrics, drift: Some(Arc::new(drift)), code_lists })
    }

    /// The role's pool (for its readiness probe).
    pub fn db(&self) -> &PgPool {
        &self.db
    }

    pub async fn run(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        let jobs = self.settings.jobs(self.drift, self.code_lists);
        run(self.db, self.settings, jobs, self.elector, self.metrics, shutdown).await
    }
}

/// Compete for leadership and run the jobs while leading, until `shutdown` resolves.
pub async fn run(
    db: PgPool,
    settings: JobsSettings,
    jobs: Vec<Job>,
    elector: Elector,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    tokio::pin!(shutdown);
    tracing::info!(election = elector.kind(), identity = %settings.identity, "jobs role started");
    loop {
        let mut term = tokio::select! {
            term = elector.acquire(settings.retry) => term,
            _ = &mut shutdown => return Ok(()),
        };
        metrics.leading.set(1);
        tracing::info!(identity = %settings.identity, "leading: running the jobs");
        let stop = tokio::select! {
            _ = work(&db, &settings.redis, &jobs, &metrics) => false,
            _ = term.lost() => {
                tracing::warn!("leadership lost: the jobs stopped");
                false
            }
            _ = &mut shutdown => true,
        };
        metrics.leading.set(0);
        // Dropping the term gives leadership up (the lock's session ends; the Lease is left to
        // expire).
        drop(term);
        if stop {
            return Ok(());
        }
    }
}

/// Every job on its own period, for as long as this future is polled (dropping it stops them
/// mid-run: each run is a statement or a transaction, rolled back if cut).
async fn work(db: &PgPool, redis: &tns_core::env::RedisSettings, jobs: &[Job], metrics: &Metrics) {
    let loops = jobs.iter().map(|job| async move {
        let mut tick = tokio::time::interval(job.every());
        loop {
            tick.tick().await;
            match job.run(db, redis).await {
                Ok(n) => {
                    metrics.runs.with_label_values(&[job.name(), "ok"]).inc();
                    tracing::debug!(job = job.name(), changed = n, "job ran");
                }
                Err(e) => {
                    metrics.runs.with_label_values(&[job.name(), "error"]).inc();
                    let error = match e.downcast_ref::<sqlx::Error>() {
                        Some(db) => tns_store::redacted(db),
                        None => e.to_string(),
                    };
                    tracing::warn!(job = job.name(), %error, "job failed; next period retries");
                }
            }
        }
    });
    futures::future::join_all(loops).await;
}
