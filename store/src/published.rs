//! What the API processes read from Redis rather than PostgreSQL on every call: each
//! organization's limit and standing (`limit:{org}`), published by the API on a plan change.
//! A change made elsewhere (an operator's command, the jobs) forgets the published copy, and
//! the next call on any process publishes it afresh from PostgreSQL: the change holds at once
//! everywhere.

use tns_core::{env::RedisSettings, ids::OrgId};

/// Forget the published limits of `orgs`.
pub async fn forget_limits(redis: &RedisSettings, orgs: &[OrgId]) -> anyhow::Result<()> {
    if orgs.is_empty() {
        return Ok(());
    }
    let mut conn = connect(redis).await?;
    let keys: Vec<String> = orgs.iter().map(|o| redis.limit_key(*o)).collect();
    redis::cmd("DEL").arg(keys).query_async::<()>(&mut conn).await?;
    Ok(())
}

/// A connection for one command-line action or job run (not the API's pool), given up after
/// 5 s so an unreachable Redis never hangs the caller.
pub(crate) async fn connect(redis: &RedisSettings) -> anyhow::Result<redis::aio::MultiplexedConnection> {
    let client = redis::Client::open(redis.url.as_str())?;
    tokio::time::timeout(std::time::Duration::from_secs(5), client.get_multiplexed_async_connection())
        .await
        .map_err(|_| anyhow::anyhow!("connecting to Redis timed out"))?
        .map_err(Into::into)
}
