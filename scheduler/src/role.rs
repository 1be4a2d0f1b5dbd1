//! The scheduler as a role: prepared with its pool, adapters and metrics, then run until told
//! to stop, alone (`tns scheduler`) or beside the API in `tns dev`.

use std::{future::Future, sync::Arc};

use anyhow::Context;
use prometheus::Registry as MetricsRegistry;
use sqlx::PgPool;
use tns_adapter_host::Plugins;
use tns_store::{
    leases::{self, Table},
    DbSettings,
};

/// How often `drain` looks whether the queues are empty.
const DRAIN_CHECK: std::time::Duration = std::time::Duration::from_millis(20);

use crate::{metrics::Metrics, SchedulerSettings};

/// A scheduler ready to run: adapters loaded, its pool connected, its metrics registered.
pub struct Scheduler {
    settings: SchedulerSettings,
    db: PgPool,
    adapters: Arc<Plugins>,
    metrics: Arc<Metrics>,
}

impl Scheduler {
    /// Fails when no adapter plugin loaded: a scheduler without adapters could only let every
    /// submission time out.
    pub async fn prepare(
        settings: SchedulerSettings,
        db: &DbSettings,
        registry: &MetricsRegistry,
        adapters: Arc<Plugins>,
        adapter_dir: &std::path::Path,
    ) -> anyhow::Result<Scheduler> {
        if adapters.list().is_empty() {
            anyhow::bail!(
                "no adapter plugin loaded from {} (TNS_ADAPTER_DIR); `cargo build --workspace` builds the sandbox there",
                adapter_dir.display()
            );
        }
        let pool = tns_store::connect(&db.url, settings.db_connections, "tns-scheduler").await?;
        let metrics = Arc::new(Metrics::new(registry).context("registering scheduler metrics")?);
        Ok(Scheduler { settings, db: pool, adapters, metrics })
    }

    pub async fn run(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        crate::run(self.db, self.settings, self.adapters, self.metrics, shutdown).await
    }

    /// Run until every queue is empty — no submission or webhook delivery pending, due or
    /// waiting for its retry — then stop. What a test (or an operator emptying a queue before
    /// maintenance) drives the pipeline with, instead of waiting on a scheduler in the
    /// background.
    pub async fn drain(self) -> anyhow::Result<()> {
        let db = self.db.clone();
        let empty = async move {
            let mut tick = tokio::time::interval(DRAIN_CHECK);
            loop {
                tick.tick().await;
                let mut left = 0;
                for table in [Table::Submissions, Table::WebhookDeliveries] {
                    match leases::depth(&db, table).await {
                        Ok(depth) => left += depth.total(),
                        // Unknown counts as not empty: the queues are worked meanwhile.
                        Err(_) => left += 1,
                    }
                }
                if left == 0 {
                    return;
                }
            }
        };
        self.run(empty).await
    }

    /// The scheduler's pool (for its readiness probe).
    pub fn db(&self) -> &PgPool {
        &self.db
    }
}
