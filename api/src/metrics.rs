//! Prometheus metrics of one process, served at `/metrics`.

use std::time::Instant;

use axum::{
    extract::{MatchedPath, Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use prometheus::{HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry};

use tns_core::metrics;

use crate::state::AppState;

pub struct Metrics {
    registry: Registry,
    pub http_requests: IntCounterVec,
    pub http_duration: HistogramVec,
    pub quota_rejections: IntCounterVec,
    pub redis_fallback: IntCounter,
    /// Leases of call numbers granted to this process, and the calls admitted from them.
    pub quota_leases: IntCounter,
    pub quota_leased_calls: IntCounter,
    /// API keys looked up in the database (cache misses, invented keys included).
    pub key_lookups: IntCounter,
    pg_pool_size: IntGauge,
    pg_pool_idle: IntGauge,
    redis_pool_size: IntGauge,
    redis_pool_available: IntGauge,
}

impl Metrics {
    /// The process's registry, shared with the scheduler inside `tns dev`.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn new() -> Metrics {
        let registry = Registry::new();
        let http_requests = IntCounterVec::new(
            Opts::new("tns_http_requests_total", "HTTP requests by method, route template and status"),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let http_duration = HistogramVec::new(
            HistogramOpts::new(
                "tns_http_request_duration_seconds",
                "HTTP request latency by method, route template and status",
            )
            .buckets(vec![0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let quota_rejections = IntCounterVec::new(
            Opts::new("tns_quota_rejections_total", "Requests refused with 429, by limit"),
            &["limit"],
        )
        .expect("valid metric");
        let redis_fallback =
            IntCounter::new("tns_quota_redis_fallback_total", "Requests metered locally because Redis was unreachable")
                .expect("valid metric");
        let quota_leases = IntCounter::new(
            "tns_quota_leases_total",
            "Blocks of call numbers this process leased from Redis to admit calls without a round trip",
        )
        .expect("valid metric");
        let quota_leased_calls =
            IntCounter::new("tns_quota_leased_calls_total", "Requests admitted from a lease (no Redis round trip)")
                .expect("valid metric");
        let key_lookups = IntCounter::new(
            "tns_auth_key_lookups_total",
            "API keys looked up in PostgreSQL (not in this process's cache)",
        )
        .expect("valid metric");
        let gauge = |name: &str, help: &str| IntGauge::new(name, help).expect("valid metric");
        let m = Metrics {
            key_lookups,
            pg_pool_size: gauge("tns_pg_pool_connections", "PostgreSQL pool: open connections"),
            pg_pool_idle: gauge("tns_pg_pool_idle_connections", "PostgreSQL pool: idle connections"),
            redis_pool_size: gauge(
                "tns_redis_pool_connections",
                "Redis: open connections (the shared multiplexed one and pooled ones)",
            ),
            redis_pool_available: gauge("tns_redis_pool_available_connections", "Redis pool: idle connections"),
            registry,
            http_requests,
            http_duration,
            quota_rejections,
            redis_fallback,
            quota_leases,
            quota_leased_calls,
        };
        for c in [
            Box::new(m.http_requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(m.http_duration.clone()),
            Box::new(m.quota_rejections.clone()),
            Box::new(m.redis_fallback.clone()),
            Box::new(m.quota_leases.clone()),
            Box::new(m.quota_leased_calls.clone()),
            Box::new(m.key_lookups.clone()),
            Box::new(m.pg_pool_size.clone()),
            Box::new(m.pg_pool_idle.clone()),
            Box::new(m.redis_pool_size.clone()),
            Box::new(m.redis_pool_available.clone()),
        ] {
            m.registry.register(c).expect("metric registered once");
        }
        m
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// The route template a response was served by, set by the `/api/v1` admission layer
/// (outer layers only see the nest pattern).
#[derive(Clone)]
pub struct RouteTemplate(pub String);

/// The HTTP methods this service knows, as metric labels: a closed set, so a client inventing
/// methods cannot grow the series without bound.
pub fn method_label(m: &axum::http::Method) -> Option<&'static str> {
    use axum::http::Method;
    Some(match *m {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        // The registered safe-query method: routes answer it 405 like any method they lack.
        _ if m.as_str() == "QUERY" => "QUERY",
        _ => return None,
    })
}

/// Outside everything else: a method outside the standard set is 501 before anything records
/// it (metrics, usage, logs).
pub async fn known_methods(req: Request, next: Next) -> Response {
    if method_label(req.method()).is_none() {
        return crate::error::error_response(
            axum::http::StatusCode::NOT_IMPLEMENTED,
            crate::error::Code::NotImplemented,
            "this method is not implemented".into(),
            None,
        );
    }
    next.run(req).await
}

/// Count and time every request by route template, never raw paths.
pub async fn observe(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = method_label(req.method()).unwrap_or("OTHER");
    let matched = req.extensions().get::<MatchedPath>().map(|m| m.as_str().to_string());
    let res = next.run(req).await;
    let route = res
        .extensions()
        .get::<RouteTemplate>()
        .map(|r| if r.0.starts_with('/') { format!("/api/v1{}", r.0) } else { "unmatched".into() })
        .or(matched)
        .unwrap_or_else(|| "unmatched".into());
    tns_http::request_id::record_route(&route);
    let status = res.status().as_u16().to_string();
    let labels = [method, route.as_str(), status.as_str()];
    st.metrics.http_requests.with_label_values(&labels).inc();
    st.metrics.http_duration.with_label_values(&labels).observe(start.elapsed().as_secs_f64());
    res
}

pub async fn render(State(st): State<AppState>) -> Response {
    let m = &st.metrics;
    m.pg_pool_size.set(st.db.size() as i64);
    m.pg_pool_idle.set(st.db.num_idle() as i64);
    let (open, idle) = st.redis.connections();
    m.redis_pool_size.set(open as i64);
    m.redis_pool_available.set(idle as i64);
    ([(axum::http::header::CONTENT_TYPE, metrics::CONTENT_TYPE)], metrics::render(&m.registry)).into_response()
}
