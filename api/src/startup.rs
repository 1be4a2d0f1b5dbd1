//! Building and running the API role: the `Application` binds its listener first (port 0 in
//! tests), then serves until told to stop, flushing usage counters on the way out.

use std::{
    future::{Future, IntoFuture},
    net::SocketAddr,
    sync::Arc,
    time::Duration,
};

use anyhow::Context;
use axum::{
    extract::Request,
    http::{header, StatusCode},
    middleware::{from_fn, from_fn_with_state, Next},
    response::{IntoResponse, Response},
    routing::get,
    Router,
};
use sqlx::PgPool;
use tns_adapter_host::Plugins;
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::{catch_panic::CatchPanicLayer, limit::RequestBodyLimitLayer, timeout::TimeoutLayer};

use crate::{
    background::Background,
    downstream::Downstreams,
    error::{error_response, ApiError, Code},
    health, metrics, portal,
    redis_store::RedisStore,
    settings::ApiSettings,
    state::AppState,
    v1,
};
use tns_core::{env::Listen, refdata};
use tns_store as db;
use tns_store::journey_writer::Writers;

use crate::limits::MAX_BODY_BYTES;

/// The whole HTTP surface.
pub fn app(state: AppState) -> Router {
    let probes = Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .with_state(state.clone());
    let api = Router::new().nest("/api/v1", v1::router(state.clone()));
    let everything = probes
        .merge(api)
        .merge(portal::router(state.clone()))
        // A browser gets a page, a program the API's JSON.
        .fallback(|headers: header::HeaderMap| async move {
            if portal::wants_html(&headers) {
                portal::not_found(&headers)
            } else {
                ApiError::NotFound("no such endpoint".into()).into_response()
            }
        });
    with_platform_layers(everything, state)
}

/// What every route gets: the body limit, panics turned into a plain 500, JSON error
/// bodies, and request metrics.
fn with_platform_layers(routes: Router, state: AppState) -> Router {
    // A slow client or a stuck dependency holds a request no longer than this.
    let timeout = TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, state.cfg.request_timeout);
    // One layer, outermost first: `Router::layer` boxes each route once per call, and a boxed
    // route is cloned, box by box, for every request it serves.
    let layers = ServiceBuilder::new()
        .layer(from_fn(metrics::known_methods))
        .layer(from_fn_with_state(state, metrics::observe))
        .layer(from_fn(json_errors))
        .layer(CatchPanicLayer::custom(|panic: Box<dyn std::any::Any + Send>| {
            let msg = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown");
            tracing::error!(panic = msg, "handler panicked");
            error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                Code::Internal,
                "an unexpected error occurred".into(),
                None,
            )
        }))
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        .layer(timeout);
    tns_http::request_id::traced(routes.layer(layers))
}

/// Any error answer that is not already JSON (axum's own 405, the body limit's 413, …)
/// is rewritten to the `{"error","detail","code"}` shape, keeping status and headers.
async fn json_errors(req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    let status = res.status();
    // JSON is already the shape; a page (the portal's) is for a person and says it its way.
    let is_json_or_page = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/html"));
    if status.as_u16() < 400 || is_json_or_page {
        return res;
    }
    let (parts, body) = res.into_parts();
    let detail = match status {
        StatusCode::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed.to_string(),
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge(crate::limits::MAX_BODY_BYTES).to_string(),
        _ => {
            let bytes = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes).trim().to_string();
            if text.is_empty() || status.is_server_error() {
                status.canonical_reason().unwrap_or("error").to_string()
            } else {
                text
            }
        }
    };
    let mut out = error_response(status, Code::for_status(status.as_u16()), detail, None);
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            out.headers_mut().append(name, value.clone());
        }
    }
    out
}

/// `/metrics` alone, for the metrics listener.
pub fn metrics_app(state: AppState) -> Router {
    Router::new().route("/metrics", get(metrics::render)).with_state(state)
}

/// Bind `addr` for what it serves (`what` names it in the error).
pub async fn bind(addr: SocketAddr, what: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr} ({what})"))
}

pub struct Application {
    listener: TcpListener,
    addr: SocketAddr,
    metrics: TcpListener,
    metrics_addr: SocketAddr,
    state: AppState,
    journey_writers: Writers,
}

impl Application {
    /// Bind the listeners and load the reference data; `db` is ready (migrated) and
    /// `adapters` loaded by the caller, which may share them with a scheduler.
    pub async fn build(
        cfg: ApiSettings,
        listen: Listen,
        db: PgPool,
        adapters: Arc<Plugins>,
    ) -> anyhow::Result<Application> {
        let redis = RedisStore::new(&cfg.redis.url, &cfg.redis.prefix).context("TNS_REDIS_URL")?;
        let listener = bind(listen.addr, "TNS_LISTEN_ADDR").await?;
        let addr = listener.local_addr()?;
        let metrics = bind(listen.metrics, "TNS_METRICS_ADDR").await?;
        let metrics_addr = metrics.local_addr()?;
        let refdata = refdata::install(
            db::refdata::load(&db).await.context("cannot load reference data (are migrations applied?)")?,
        );
        let downstreams = Downstreams::new(adapters, cfg.adapter_call_timeout);
        let (state, journey_writers) = AppState::new(cfg, db, redis, refdata, downstreams);
        Ok(Application { listener, addr, metrics, metrics_addr, state, journey_writers })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn metrics_addr(&self) -> SocketAddr {
        self.metrics_addr
    }

    pub fn state(&self) -> AppState {
        self.state.clone()
    }

    /// Serve until `shutdown` resolves, then drain connections, stop the role's background
    /// tasks and flush usage.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let state = self.state.clone();
        let mut background = Background::default();
        background.spawn("database watch", {
            let state = state.clone();
            async move { state.db_health.watch(&state.db).await }
        });
        background.spawn("usage flush", {
            let state = state.clone();
            async move {
                let every = state.cfg.usage_flush_interval;
                let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                loop {
                    tick.tick().await;
                    // The counts wait (in Redis, or counted locally) until the database is back,
                    // rather than warning once an organization and a tick.
                    if !state.db_health.is_down() {
                        state.quota.flush().await;
                    }
                }
            }
        });
        background.spawn("quota leases", state.quota.leases().clone().run());
        background.spawn("journey writers", self.journey_writers.run());
        background.spawn("submission listener", {
            let state = state.clone();
            async move { state.waiters.listen(&state.db).await }
        });
        background.spawn("metrics listener", {
            let served = axum::serve(self.metrics, metrics_app(state.clone())).into_future();
            async move {
                if let Err(e) = served.await {
                    tracing::error!(error = %e, "the metrics listener failed");
                }
            }
        });
        let served = crate::serve::serve(self.listener, app(state.clone()), state.cfg.http, shutdown).await;
        background.stop(Duration::from_secs(5)).await;
        tokio::time::timeout(Duration::from_secs(10), state.quota.flush_on_shutdown()).await.ok();
        served.context("HTTP server failed")
    }
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        tokio::signal::ctrl_c().await.ok();
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutdown requested");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::ApiSettings;
    use tns_core::refdata::RefData;
    use tns_core::{
        basis::Basis,
        env::{Profile, Vars},
    };
    use tower::ServiceExt;

    #[tokio::test]
    async fn a_panicking_handler_answers_a_plain_json_500() {
        let vars = |_: &str| None;
        let cfg = ApiSettings::from_vars(&Vars::new(&vars), &Basis::for_tests(Profile::Dev)).unwrap();
        // Lazy pool and Redis client: nothing here touches either.
        let db = sqlx::postgres::PgPoolOptions::new().connect_lazy("postgres://127.0.0.1/unused").unwrap();
        let redis = RedisStore::new(&cfg.redis.url, "unit:").unwrap();
        let (state, _) = AppState::new(cfg, db, redis, refdata::install(RefData::default()), Downstreams::none());
        let routes = Router::new().route("/boom", get(|| async { panic!("secret internal detail") as &str }));
        let app = with_platform_layers(routes, state.clone());

        let res = app.oneshot(Request::builder().uri("/boom").body(axum::body::Body::empty()).unwrap()).await.unwrap();
        assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(res.into_body(), 4096).await.unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["error"], "Internal Server Error");
        assert_eq!(json["code"], "internal");
        assert!(!String::from_utf8_lossy(&body).contains("secret"));
        let text = metrics::render(axum::extract::State(state)).await;
        let text = axum::body::to_bytes(text.into_body(), 1 << 20).await.unwrap();
        assert!(String::from_utf8_lossy(&text).contains(r#"route="/boom",status="500""#));
    }
}
