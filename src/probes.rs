//! What a background role (scheduler, jobs) serves: `/healthz` (the process is up) and
//! `/readyz` (its database answers) on the listen address, `/metrics` on a listener of its own.

use std::{net::SocketAddr, time::Duration};

use anyhow::Context;
use axum::{http::StatusCode, response::IntoResponse, routing::get, Router};
use prometheus::Registry;
use sqlx::PgPool;
use tns_core::{env::Listen, metrics as exposition};

/// A readiness check that takes longer counts as not ready.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// The probe and metrics listeners, bound: serving until dropped.
pub struct Probes {
    pub addr: SocketAddr,
    pub metrics_addr: SocketAddr,
    servers: [tokio::task::JoinHandle<()>; 2],
}

impl Probes {
    pub async fn start(listen: Listen, registry: Registry, db: PgPool) -> anyhow::Result<Probes> {
        let bind = |addr, what: &'static str| async move {
            tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr} ({what})"))
        };
        let listener = bind(listen.addr, "TNS_LISTEN_ADDR").await?;
        let metrics_listener = bind(listen.metrics, "TNS_METRICS_ADDR").await?;
        let (addr, metrics_addr) = (listener.local_addr()?, metrics_listener.local_addr()?);
        let probes = Router::new().route("/healthz", get(|| async { "ok" })).route(
            "/readyz",
            get(move || {
                let db = db.clone();
                async move {
                    let ping = tokio::time::timeout(READY_TIMEOUT, sqlx::query("SELECT 1").execute(&db)).await;
                    match ping {
                        Ok(Ok(_)) => (StatusCode::OK, "ready"),
                        _ => (StatusCode::SERVICE_UNAVAILABLE, "database unreachable"),
                    }
                }
            }),
        );
        let metrics = Router::new().route(
            "/metrics",
            get(move || {
                let body = exposition::render(&registry);
                async move { ([(axum::http::header::CONTENT_TYPE, exposition::CONTENT_TYPE)], body).into_response() }
            }),
        );
        let serve = |listener: tokio::net::TcpListener, router: Router| {
            tokio::spawn(async move {
                if let Err(e) = axum::serve(listener, router).await {
                    tracing::error!(error = %e, "a probe listener failed");
                }
            })
        };
        let servers = [serve(listener, probes), serve(metrics_listener, metrics)];
        // Machine-readable start lines (tests and scripts wait for them).
        println!("metrics on http://{metrics_addr}");
        println!("listening on http://{addr}");
        Ok(Probes { addr, metrics_addr, servers })
    }
}

impl Drop for Probes {
    fn drop(&mut self) {
        for s in &self.servers {
            s.abort();
        }
    }
}
