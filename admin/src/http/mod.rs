//! The operators' admin HTTP API: `/admin/v1` on a listener of its own (`TNS_ADMIN_ADDR`),
//! never the tenants' port, for platform staff with operator tokens (hashed at rest, scoped,
//! revocable; see [`auth`]). It does what `tns admin` does, through the same functions
//! ([`crate::ops`]), and has its own OpenAPI document.
//!
//! A route is a handler taking an [`auth::Operator`] of the scope it needs, with its
//! `#[utoipa::path]` naming the same scope in `security(("operator_token" = ["…"]))`, registered
//! in [`routes`]; the document then lists it, with its scope, by construction.

pub mod audit;
pub mod auth;
pub mod error;
pub mod extract;
pub mod invoices;
pub mod openapi;
pub mod organizations;

use std::{future::Future, net::SocketAddr, sync::Arc};

use anyhow::Context;
use axum::{
    extract::DefaultBodyLimit,
    http::header,
    response::{IntoResponse, Response},
    Router,
};
use prometheus::{IntCounter, Registry};
use sqlx::PgPool;
use tns_core::env::{dev_stays_local, AuthRate, ConfigError, Profile, RedisSettings, Vars};
use tower_http::catch_panic::CatchPanicLayer;
use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};

use auth::Limits;
use error::AdminError;

/// Where the admin API is served.
pub const BASE: &str = "/admin/v1";

/// Largest request body (the inputs are a status, a plan code, a reason).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The admin API's settings: served only when `TNS_ADMIN_ADDR` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdminApiSettings {
    pub addr: SocketAddr,
    /// The refused tokens a client may send per window (the tenant API's budget of refused
    /// credentials, by the same variables).
    pub refused: AuthRate,
}

impl AdminApiSettings {
    /// `None` when `TNS_ADMIN_ADDR` is unset: no admin API. `tns dev` keeps it on loopback.
    pub fn from_vars(vars: &Vars<'_>, profile: Profile) -> Result<Option<AdminApiSettings>, ConfigError> {
        if vars.get("TNS_ADMIN_ADDR").is_none() {
            return Ok(None);
        }
        let addr = vars.parse("TNS_ADMIN_ADDR", "", "a socket address such as 10.0.0.5:8081")?;
        dev_stays_local(vars, profile, "TNS_ADMIN_ADDR", addr)?;
        Ok(Some(AdminApiSettings { addr, refused: AuthRate::from_vars(vars, profile)? }))
    }
}

/// What the handlers share.
#[derive(Clone)]
pub struct AdminState {
    pub db: PgPool,
    /// Where changes are published to the API processes.
    pub redis: RedisSettings,
    pub limits: Arc<Limits>,
}

impl AdminState {
    /// Its metrics are registered in `metrics` (the API process's registry).
    pub fn new(db: PgPool, redis: RedisSettings, refused: AuthRate, metrics: &Registry) -> AdminState {
        let lookups = IntCounter::new(
            "tns_admin_token_lookups_total",
            "Operator tokens looked up in PostgreSQL by the admin API",
        )
        .expect("valid metric");
        if let Err(e) = metrics.register(Box::new(lookups.clone())) {
            tracing::warn!(error = %e, "the admin API's metrics are not exposed");
        }
        AdminState { db, redis, limits: Arc::new(Limits::new(refused, lookups)) }
    }
}

/// Every route, with its operation in the document: add one here.
pub fn routes() -> OpenApiRouter<AdminState> {
    OpenApiRouter::with_openapi(openapi::AdminDoc::openapi())
        .routes(routes!(organizations::list))
        .routes(routes!(organizations::set_status))
        .routes(routes!(organizations::change_plan))
        .routes(routes!(organizations::submission))
        .routes(routes!(organizations::requeue))
        .routes(routes!(organizations::resolve))
        .routes(routes!(invoices::list))
        .routes(routes!(invoices::paid))
        .routes(routes!(invoices::void))
        .routes(routes!(audit::list))
        .routes(routes!(openapi_json))
}

/// The document, as served.
pub fn document() -> serde_json::Value {
    openapi::finish(routes().split_for_parts().1)
}

/// This document (needs no token: it holds nothing but the API's shape).
#[utoipa::path(get, path = "/openapi.json", operation_id = "get_admin_openapi", tag = "meta",
    responses((status = 200, description = "OpenAPI 3.1 document", body = Object)), security(()))]
async fn openapi_json() -> Response {
    static DOCUMENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let body = DOCUMENT.get_or_init(|| document().to_string()).clone();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The whole admin surface: `/admin/v1/…`, every other path a JSON 404.
pub fn router(state: AdminState) -> Router {
    let (api, _) = routes().split_for_parts();
    let api = api
        .fallback(|| async { AdminError::NotFound(format!("no such endpoint; see {BASE}/openapi.json")) })
        .method_not_allowed_fallback(|| async { AdminError::MethodNotAllowed })
        .with_state(state);
    let routes = Router::new()
        .nest(BASE, api)
        .fallback(|| async { AdminError::NotFound(format!("no such endpoint; the admin API is under {BASE}")) })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(CatchPanicLayer::custom(|_| error::internal()));
    tns_http::request_id::traced(routes)
}

/// The admin API, bound and ready to serve.
pub struct AdminApi {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    state: AdminState,
}

impl AdminApi {
    /// Bind `settings.addr` (port 0 picks one); its metrics go in `metrics`.
    pub async fn bind(
        settings: AdminApiSettings,
        db: PgPool,
        redis: RedisSettings,
        metrics: &Registry,
    ) -> anyhow::Result<AdminApi> {
        let listener = tokio::net::TcpListener::bind(settings.addr)
            .await
            .with_context(|| format!("cannot listen on {} (TNS_ADMIN_ADDR)", settings.addr))?;
        let state = AdminState::new(db, redis, settings.refused, metrics);
        Ok(AdminApi { addr: listener.local_addr()?, listener, state })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serve until `shutdown` resolves, then let the requests in flight finish.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        // The peer's address is the client whose refused tokens are counted.
        axum::serve(self.listener, router(self.state).into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(shutdown)
            .await
            .context("the admin API's listener failed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::{body::Body, http::Request};
    use tower::ServiceExt;

    fn state() -> AdminState {
        // A lazy pool: a request refused before its token is looked up touches nothing.
        let db = sqlx::postgres::PgPoolOptions::new().connect_lazy("postgres://127.0.0.1/unused").unwrap();
        let redis = RedisSettings { url: "redis://127.0.0.1:1".into(), prefix: "unit:".into() };
        let refused = AuthRate { limit: 60, window: std::time::Duration::from_secs(60) };
        AdminState::new(db, redis, refused, &Registry::new())
    }

    async fn call(method: &str, path: &str) -> (u16, serde_json::Value) {
        let req = Request::builder().method(method).uri(path).body(Body::empty()).unwrap();
        let res = router(state()).oneshot(req).await.unwrap();
        let status = res.status().as_u16();
        let body = axum::body::to_bytes(res.into_body(), 1 << 20).await.unwrap();
        (status, serde_json::from_slice(&body).unwrap_or_default())
    }

    /// Every operation of the document is served, and needs a token with the scope its
    /// description names; nothing but the document itself is open.
    #[tokio::test]
    async fn every_documented_route_is_served_and_states_its_scope() {
        let doc = document();
        assert_eq!(doc["openapi"], "3.1.0");
        assert_eq!(doc["components"]["securitySchemes"][openapi::SCHEME]["scheme"], "bearer");
        let mut served = vec![];
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                served.push(format!("{} {path}", method.to_uppercase()));
                let concrete = path.replace("{id}", "1").replace("{submission_id}", "2");
                let (status, body) = call(&method.to_uppercase(), &format!("{BASE}{concrete}")).await;
                if path == "/openapi.json" {
                    assert_eq!(status, 200);
                    continue;
                }
                assert_eq!(status, 401, "{method} {path} needs a token: {body}");
                assert!(body["detail"].as_str().unwrap().contains("Bearer"), "{body}");
                let scopes = op["security"][0][openapi::SCHEME].as_array().expect("a scope is stated");
                assert_eq!(scopes.len(), 1, "{method} {path}");
                let scope = scopes[0].as_str().unwrap();
                assert!(op["description"].as_str().unwrap().contains(&format!("scope `{scope}`")), "{method} {path}");
                assert!(op["responses"]["403"].is_object() && op["responses"]["401"].is_object());
            }
        }
        served.sort();
        assert_eq!(
            served,
            [
                "GET /audit",
                "GET /openapi.json",
                "GET /organizations",
                "GET /organizations/{id}/invoices",
                "GET /organizations/{id}/submissions/{submission_id}",
                "POST /invoices/{id}/paid",
                "POST /invoices/{id}/void",
                "POST /organizations/{id}/plan",
                "POST /organizations/{id}/requeue",
                "POST /organizations/{id}/status",
                "POST /organizations/{id}/submissions/{submission_id}/resolve",
            ]
        );
    }

    #[tokio::test]
    async fn unknown_routes_and_methods_answer_in_the_error_shape() {
        for (method, path, status) in [
            ("GET", "/admin/v1/nope", 404),
            ("GET", "/api/v1/portal/me", 404),
            ("DELETE", "/admin/v1/organizations", 405),
        ] {
            let (got, body) = call(method, path).await;
            assert_eq!(got, status, "{method} {path}");
            assert!(body["error"].is_string() && body["detail"].is_string(), "{body}");
            let code = if status == 404 { "not_found" } else { "method_not_allowed" };
            assert_eq!(body["code"], code, "{body}");
        }
        let doc = document();
        assert_eq!(
            doc["components"]["schemas"]["ErrorBody"]["properties"]["code"]["$ref"],
            "#/components/schemas/ErrorCode"
        );
        let codes = doc["components"]["schemas"]["ErrorCode"]["enum"].as_array().unwrap();
        assert!(codes.contains(&serde_json::json!("missing_scope")), "{codes:?}");
    }

    #[test]
    fn the_address_is_optional_and_dev_keeps_it_local() {
        let parse = |profile, vars: &[(&str, &str)]| {
            let vars: std::collections::HashMap<String, String> =
                vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let lookup = |k: &str| vars.get(k).cloned();
            AdminApiSettings::from_vars(&Vars::new(&lookup), profile)
        };
        assert_eq!(parse(Profile::Deployed, &[]).unwrap(), None);
        assert_eq!(parse(Profile::Deployed, &[("TNS_ADMIN_ADDR", "")]).unwrap(), None, "empty is unset");
        let s = parse(Profile::Deployed, &[("TNS_ADMIN_ADDR", "0.0.0.0:8081")]).unwrap().unwrap();
        assert_eq!(s.addr.port(), 8081);
        assert_eq!(parse(Profile::Deployed, &[("TNS_ADMIN_ADDR", "8081")]).unwrap_err().var, "TNS_ADMIN_ADDR");
        assert_eq!(parse(Profile::Dev, &[("TNS_ADMIN_ADDR", "0.0.0.0:8081")]).unwrap_err().var, "TNS_ADMIN_ADDR");
        assert!(parse(Profile::Dev, &[("TNS_ADMIN_ADDR", "127.0.0.1:0")]).unwrap().is_some());
    }
}
