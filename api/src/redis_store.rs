//! The Redis connection pool with a short circuit breaker: after a failure, callers skip
//! Redis for a moment instead of each paying a connect timeout, and fall back to their
//! local behaviour (see `quota`).

use std::{
    future::Future,
    sync::atomic::{AtomicI64, Ordering},
    time::Duration,
};

use deadpool_redis::{Connection, Pool, PoolConfig, Runtime, Timeouts};

const CALL_TIMEOUT: Duration = Duration::from_millis(1000);
const BREAKER_OPEN_MS: i64 = 1000;

#[derive(Debug, thiserror::Error)]
#[error("redis unavailable: {0}")]
pub struct RedisDown(pub String);

pub struct RedisStore {
    pool: Pool,
    prefix: String,
    open_until_ms: AtomicI64,
}

impl RedisStore {
    pub fn new(url: &str, prefix: &str) -> anyhow::Result<RedisStore> {
        let mut cfg = deadpool_redis::Config::from_url(url);
        cfg.pool = Some(PoolConfig {
            max_size: 64,
            timeouts: Timeouts {
                wait: Some(Duration::from_secs(2)),
                create: Some(Duration::from_secs(1)),
                recycle: Some(Duration::from_secs(1)),
            },
            ..Default::default()
        });
        let pool = cfg.create_pool(Some(Runtime::Tokio1))?;
        Ok(RedisStore {
            pool,
            prefix: prefix.to_string(),
            open_until_ms: AtomicI64::new(0),
        })
    }

    pub fn key(&self, rest: &str) -> String {
        format!("{}{}", self.prefix, rest)
    }

    pub fn pool_status(&self) -> deadpool_redis::Status {
        self.pool.status()
    }

    /// Run one Redis interaction with a timeout; failures trip the breaker.
    pub async fn call<T, F, Fut>(&self, f: F) -> Result<T, RedisDown>
    where
        F: FnOnce(Connection) -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        let now = now_ms();
        if self.open_until_ms.load(Ordering::Relaxed) > now {
            return Err(RedisDown("circuit open after a recent failure".into()));
        }
        let result = tokio::time::timeout(CALL_TIMEOUT, async {
            let conn = self
                .pool
                .get()
                .await
                .map_err(|e| RedisDown(e.to_string()))?;
            f(conn).await.map_err(|e| RedisDown(e.to_string()))
        })
        .await
        .unwrap_or_else(|_| Err(RedisDown("timed out".into())));
        if result.is_err() {
            self.open_until_ms
                .store(now_ms() + BREAKER_OPEN_MS, Ordering::Relaxed);
        }
        result
    }

    /// A PING that bypasses the breaker (readiness must see the truth).
    pub async fn ping(&self) -> Result<(), RedisDown> {
        tokio::time::timeout(CALL_TIMEOUT, async {
            let mut conn = self
                .pool
                .get()
                .await
                .map_err(|e| RedisDown(e.to_string()))?;
            redis::cmd("PING")
                .query_async::<String>(&mut conn)
                .await
                .map_err(|e| RedisDown(e.to_string()))?;
            Ok(())
        })
        .await
        .unwrap_or_else(|_| Err(RedisDown("timed out".into())))
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
