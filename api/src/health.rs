//! Probes outside the versioned API: `/healthz` (the process is up) and `/readyz`
//! (PostgreSQL and Redis reachable, probed at most once a second).

use std::time::{Duration, Instant};

use axum::{extract::State, http::StatusCode, Json};
use serde_json::{json, Value};

use crate::state::AppState;

pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// How long a readiness probe's answer is reused: a flood of `/readyz` costs one query per
/// second, not one per call.
const PROBE_TTL: Duration = Duration::from_secs(1);

/// The last probe's answer and when it was made; one probe at a time (the others wait for it).
#[derive(Default)]
pub struct Readiness(tokio::sync::Mutex<Option<(Instant, bool, bool)>>);

pub async fn readyz(State(st): State<AppState>) -> (StatusCode, Json<Value>) {
    let (pg_ok, redis_ok) = {
        let mut last = st.readiness.0.lock().await;
        match *last {
            Some((at, pg, redis)) if at.elapsed() < PROBE_TTL => (pg, redis),
            _ => {
                let pg = tokio::time::timeout(Duration::from_secs(2), sqlx::query("SELECT 1").execute(&st.db)).await;
                let (pg, redis) = (matches!(pg, Ok(Ok(_))), st.redis.ping().await.is_ok());
                *last = Some((Instant::now(), pg, redis));
                (pg, redis)
            }
        }
    };
    let word = |ok: bool| if ok { "ok" } else { "unreachable" };
    let status = if pg_ok && redis_ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(json!({ "postgres": word(pg_ok), "redis": word(redis_ok) })))
}
