//! The scheduler as a role: prepared with its pool, adapters and metrics, then run until told
//! to stop, alone (`tns scheduler`, with its probe and metrics listeners) or beside the API in
//! `tns dev`.

use std::{future::Future, sync::Arc};

use anyhow::Context;
use axum::{response::IntoResponse, routing::get, Router};
use prometheus::Registry as MetricsRegistry;
use sqlx::PgPool;
use tns_adapter_host::Registry;
use tns_core::{env::Listen, metrics as exposition};
use tns_store::{
    leases::{self, Table},
    DbSettings,
};

/// How often `drain` looks whether the queues are empty.
const DRAIN_CHECK: std::time::Duration = std::time::Duration::from_millis(20);

use crate::{metrics::Metrics, Settings};

/// A scheduler ready to run: adapters loaded, its pool connected, its metrics registered.
pub struct Scheduler {
    settings: Settings,
    db: PgPool,
    adapters: Arc<Registry>,
    metrics: Arc<Metrics>,
}

impl Scheduler {
    /// Fails when no adapter plugin loaded: a scheduler without adapters could only let every
    /// submission time out.
    pub async fn prepare(
        settings: Settings,
        db: &DbSettings,
        registry: &MetricsRegistry,
        adapters: Arc<Registry>,
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
                        Ok((due, waiting, held)) => left += due + waiting + held,
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

    /// `tns scheduler`: `/healthz` on the listen address and `/metrics` on the metrics one,
    /// until `shutdown`.
    pub async fn serve(
        self,
        listen: Listen,
        registry: MetricsRegistry,
        shutdown: impl Future<Output = ()>,
    ) -> anyhow::Result<()> {
        let bind = |addr, what: &'static str| async move {
            tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr} ({what})"))
        };
        let listener = bind(listen.addr, "TNS_LISTEN_ADDR").await?;
        let addr = listener.local_addr()?;
        let metrics_listener = bind(listen.metrics, "TNS_METRICS_ADDR").await?;
        let metrics_addr = metrics_listener.local_addr()?;
        let probes = Router::new().route("/healthz", get(|| async { "ok" }));
        let metrics = Router::new().route(
            "/metrics",
            get(move || {
                let body = exposition::render(&registry);
                async move { ([(axum::http::header::CONTENT_TYPE, exposition::CONTENT_TYPE)], body).into_response() }
            }),
        );
        let server = tokio::spawn(async move { axum::serve(listener, probes).await });
        let metrics_server = tokio::spawn(async move { axum::serve(metrics_listener, metrics).await });
        // Machine-readable start lines (tests and scripts wait for them).
        println!("metrics on http://{metrics_addr}");
        println!("listening on http://{addr}");
        let result = self.run(shutdown).await;
        server.abort();
        metrics_server.abort();
        result
    }
}
