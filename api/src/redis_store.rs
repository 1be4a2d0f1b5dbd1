//! The Redis connection with a short circuit breaker: after a failure, callers skip Redis
//! for a moment instead of each paying a connect timeout, and fall back to their local
//! behaviour (see `quota`).

use std::{
    future::Future,
    sync::{
        atomic::{AtomicI64, Ordering},
        Mutex,
    },
    time::Duration,
};

use deadpool_redis::{Pool, PoolConfig, Runtime, Timeouts};
use redis::aio::MultiplexedConnection;

pub const CALL_TIMEOUT: Duration = Duration::from_millis(1000);
const BREAKER_OPEN_MS: i64 = 1000;

#[derive(Debug, thiserror::Error)]
#[error("redis unavailable: {0}")]
pub struct RedisDown(pub String);

pub struct RedisStore {
    /// Creates (and health-checks) connections.
    pool: Pool,
    /// One multiplexed connection taken out of the pool and shared by every request: it
    /// pipelines concurrent commands and skips the pool's per-checkout PING round trip, which
    /// doubled the Redis cost of each request. Replaced from the pool after an error.
    shared: Mutex<Option<MultiplexedConnection>>,
    prefix: String,
    open_until_ms: AtomicI64,
    /// For subscriptions, which need a connection of their own.
    client: redis::Client,
}

impl RedisStore {
    pub fn new(url: &str, prefix: &str) -> anyhow::Result<RedisStore> {
        let mut cfg = deadpool_redis::Config::from_url(url);
        cfg.pool = Some(PoolConfig {
            max_size: 16,
            timeouts: Timeouts {
                wait: Some(Duration::from_secs(2)),
                create: Some(Duration::from_secs(1)),
                recycle: Some(Duration::from_secs(1)),
            },
            ..Default::default()
        });
        let pool = cfg.create_pool(Some(Runtime::Tokio1))?;
        let client = redis::Client::open(url)?;
        Ok(RedisStore {
            pool,
            shared: Mutex::new(None),
            prefix: prefix.to_string(),
            open_until_ms: AtomicI64::new(0),
            client,
        })
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn key(&self, rest: &str) -> String {
        format!("{}{}", self.prefix, rest)
    }

    /// (open, idle) connections: the shared one plus the pool's own.
    pub fn connections(&self) -> (usize, usize) {
        let st = self.pool.status();
        let shared = self.shared.lock().unwrap_or_else(|p| p.into_inner()).is_some() as usize;
        (st.size + shared, st.available)
    }

    /// Run one Redis interaction with a timeout; failures trip the breaker.
    pub async fn call<T, F, Fut>(&self, f: F) -> Result<T, RedisDown>
    where
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        if self.open_until_ms.load(Ordering::Relaxed) > now_ms() {
            return Err(RedisDown("circuit open after a recent failure".into()));
        }
        let result = tokio::time::timeout(CALL_TIMEOUT, async {
            let conn = self.connection().await?;
            f(conn).await.map_err(|e| RedisDown(e.to_string()))
        })
        .await
        .unwrap_or_else(|_| Err(RedisDown("timed out".into())));
        if result.is_err() {
            self.shared.lock().unwrap_or_else(|p| p.into_inner()).take();
            self.open_until_ms.store(now_ms() + BREAKER_OPEN_MS, Ordering::Relaxed);
        }
        result
    }

    async fn connection(&self) -> Result<MultiplexedConnection, RedisDown> {
        if let Some(c) = self.shared.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            return Ok(c.clone());
        }
        let fresh = self.pool.get().await.map_err(|e| RedisDown(e.to_string()))?;
        let conn = deadpool_redis::Connection::take(fresh);
        *self.shared.lock().unwrap_or_else(|p| p.into_inner()) = Some(conn.clone());
        Ok(conn)
    }

    /// The messages published on `channel` from now on, on a connection of their own (the
    /// stream ends when the connection does), and the connection's sink, to ping it with.
    pub async fn subscribe(
        &self,
        channel: &str,
    ) -> Result<(redis::aio::PubSubSink, redis::aio::PubSubStream), RedisDown> {
        let subscribed = tokio::time::timeout(CALL_TIMEOUT, async {
            let mut sub = self.client.get_async_pubsub().await?;
            sub.subscribe(channel).await?;
            redis::RedisResult::Ok(sub.split())
        });
        match subscribed.await {
            Ok(r) => r.map_err(|e| RedisDown(e.to_string())),
            Err(_) => Err(RedisDown("timed out".into())),
        }
    }

    /// A PING on a fresh pool checkout, bypassing the breaker (readiness must see the truth).
    pub async fn ping(&self) -> Result<(), RedisDown> {
        tokio::time::timeout(CALL_TIMEOUT, async {
            let mut conn = self.pool.get().await.map_err(|e| RedisDown(e.to_string()))?;
            redis::cmd("PING").query_async::<String>(&mut conn).await.map_err(|e| RedisDown(e.to_string()))?;
            Ok(())
        })
        .await
        .unwrap_or_else(|_| Err(RedisDown("timed out".into())))
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
