//! Probes outside the versioned API: `/healthz` (the process is up) and `/readyz` (PostgreSQL
//! reachable, as the database watch last found it, and Redis, pinged at most once a second).

use std::time::{Duration, Instant};

use axum::{extract::State, http::StatusCode, Json};
use serde_json::{json, Value};

use crate::state::AppState;

pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// How long a Redis ping's answer is reused: a flood of `/readyz` costs one ping per second,
/// not one per call.
const PROBE_TTL: Duration = Duration::from_secs(1);

/// The last Redis ping's answer and when it was made; one ping at a time (the others wait for it).
#[derive(Default)]
pub struct Readiness(tokio::sync::Mutex<Option<(Instant, bool)>>);

pub async fn readyz(State(st): State<AppState>) -> (StatusCode, Json<Value>) {
    // The watch probes PostgreSQL every second; while it finds it down, so does this.
    let pg_ok = !st.db_health.is_down();
    let redis_ok = {
        let mut last = st.readiness.0.lock().await;
        match *last {
            Some((at, redis)) if at.elapsed() < PROBE_TTL => redis,
            _ => {
                let redis = st.redis.ping().await.is_ok();
                *last = Some((Instant::now(), redis));
                redis
            }
        }
    };
    let word = |ok: bool| if ok { "ok" } else { "unreachable" };
    let status = if pg_ok && redis_ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(json!({ "postgres": word(pg_ok), "redis": word(redis_ok) })))
}
