//! What the jobs that ask a downstream share: an organization's credentials, opened for the
//! call, and one blocking adapter call within a deadline.

use std::time::Duration;

use sqlx::PgPool;
use tns_adapter::{AdapterError, AdapterResult, Credentials};
use tns_adapter_host::credentials;
use tns_core::sealing::DataKey;

/// The organization's downstream credentials, opened for the call (none stored: none); a
/// password the data key cannot open is the operator's configuration problem.
pub(crate) async fn credentials(
    db: &PgPool,
    key: &DataKey,
    org: i64,
) -> anyhow::Result<Result<Option<Credentials>, credentials::Unreadable>> {
    let Some((env, user, sealed)) = tns_store::downstream::sealed_credentials(db, org).await? else {
        return Ok(Ok(None));
    };
    Ok(credentials::open(key, org, env, user, &sealed).map(Some))
}

/// `call` off the async runtime (adapters block), given up on after `timeout` as a transient
/// failure (the call itself ends by the adapter's own timeouts).
pub(crate) async fn within<T: Send + 'static>(
    timeout: Duration,
    call: impl FnOnce() -> AdapterResult<T> + Send + 'static,
) -> AdapterResult<T> {
    match tokio::time::timeout(timeout, tokio::task::spawn_blocking(call)).await {
        Err(_) => Err(AdapterError::Transient(format!("no answer within {} s", timeout.as_secs()))),
        Ok(Err(e)) => Err(AdapterError::Transient(format!("the adapter call failed: {e}"))),
        Ok(Ok(r)) => r,
    }
}
