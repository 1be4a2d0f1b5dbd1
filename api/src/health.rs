//! Probes outside the versioned API: `/healthz` (the process is up) and `/readyz`
//! (PostgreSQL and Redis reachable).

use std::time::Duration;

use axum::{extract::State, http::StatusCode, Json};
use serde_json::{json, Value};

use crate::state::AppState;

pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

pub async fn readyz(State(st): State<AppState>) -> (StatusCode, Json<Value>) {
    let pg = tokio::time::timeout(Duration::from_secs(2), sqlx::query("SELECT 1").execute(&st.db)).await;
    let pg_ok = matches!(pg, Ok(Ok(_)));
    let redis_ok = st.redis.ping().await.is_ok();
    let word = |ok: bool| if ok { "ok" } else { "unreachable" };
    let status = if pg_ok && redis_ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(json!({ "postgres": word(pg_ok), "redis": word(redis_ok) })))
}
