//! Starting the scheduler: in its own role (`tns scheduler`, with `/healthz` and `/metrics`
//! on `TNS_LISTEN_ADDR`) or inside `tns dev` next to the API.

use std::{future::Future, net::SocketAddr, sync::Arc};

use anyhow::Context;
use axum::{response::IntoResponse, routing::get, Router};
use prometheus::{Encoder, Registry, TextEncoder};
use sqlx::PgPool;
use tns_scheduler::{adapters, metrics::Metrics};

use crate::{config::Config, db, startup::prepare_database};

/// Load the adapter plugins of `TNS_ADAPTER_DIR` (once per process: `tns dev` shares them
/// between the API and the scheduler). Plugins that fail to load are logged and left out.
pub fn load_adapters(cfg: &Config) -> anyhow::Result<Arc<adapters::Registry>> {
    let dir = &cfg.adapters.dir;
    let adapters =
        adapters::Registry::load(&cfg.adapters).with_context(|| format!("TNS_ADAPTER_DIR {}", dir.display()))?;
    for (name, version, path) in adapters.list() {
        tracing::info!(adapter = %name, %version, library = %path.display(), "adapter loaded");
    }
    Ok(Arc::new(adapters))
}

/// A scheduler ready to run: adapters loaded, its pool connected, its metrics registered.
pub struct Scheduler {
    cfg: Config,
    db: PgPool,
    adapters: Arc<adapters::Registry>,
    metrics: Arc<Metrics>,
}

impl Scheduler {
    /// Loads the adapters itself; see [`Scheduler::prepare_with`].
    pub async fn prepare(cfg: &Config, registry: &Registry) -> anyhow::Result<Scheduler> {
        Scheduler::prepare_with(cfg, registry, load_adapters(cfg)?).await
    }

    /// Fails when no adapter plugin loaded: a scheduler without adapters could only let every
    /// submission time out.
    pub async fn prepare_with(
        cfg: &Config,
        registry: &Registry,
        adapters: Arc<adapters::Registry>,
    ) -> anyhow::Result<Scheduler> {
        let dir = &cfg.adapters.dir;
        if adapters.list().is_empty() {
            anyhow::bail!(
                "no adapter plugin loaded from {} (TNS_ADAPTER_DIR); `cargo build --workspace` builds the sandbox there",
                dir.display()
            );
        }
        let db = db::connect(&cfg.database_url, cfg.scheduler.db_connections, "tns-scheduler").await?;
        let metrics = Arc::new(Metrics::new(registry).context("registering scheduler metrics")?);
        Ok(Scheduler { cfg: cfg.clone(), db, adapters, metrics })
    }

    pub async fn run(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        tns_scheduler::run(self.db, self.cfg.scheduler.clone(), self.adapters, self.metrics, shutdown).await
    }
}

/// `tns scheduler`: migrate if configured, serve `/healthz` on `TNS_LISTEN_ADDR` and
/// `/metrics` on `TNS_METRICS_ADDR`, run until `shutdown`.
pub async fn run_role(cfg: Config, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
    let pool = prepare_database(&Config { db_max_connections: 2, ..cfg.clone() }).await?;
    pool.close().await;
    let registry = Registry::new();
    let scheduler = Scheduler::prepare(&cfg, &registry).await?;
    let listener = crate::startup::bind(cfg.listen_addr, "TNS_LISTEN_ADDR").await?;
    let addr: SocketAddr = listener.local_addr()?;
    let metrics_listener = crate::startup::bind(cfg.metrics_addr, "TNS_METRICS_ADDR").await?;
    let metrics_addr = metrics_listener.local_addr()?;
    let probes = Router::new().route("/healthz", get(|| async { "ok" }));
    let metrics = Router::new().route(
        "/metrics",
        get(move || {
            let registry = registry.clone();
            async move {
                let mut buf = Vec::new();
                if let Err(e) = TextEncoder::new().encode(&registry.gather(), &mut buf) {
                    tracing::error!(error = %e, "metrics encoding failed");
                }
                ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], buf).into_response()
            }
        }),
    );
    let server = tokio::spawn(async move { axum::serve(listener, probes).await });
    let metrics_server = tokio::spawn(async move { axum::serve(metrics_listener, metrics).await });
    // Machine-readable start lines (tests and scripts wait for them).
    println!("metrics on http://{metrics_addr}");
    println!("listening on http://{addr}");
    let result = scheduler.run(shutdown).await;
    server.abort();
    metrics_server.abort();
    result
}
