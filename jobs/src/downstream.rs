//! What the jobs that ask a downstream share: an organization's credentials, opened for the
//! call, and one blocking adapter call within a deadline.

use std::time::Duration;
use tns_core::ids::OrgId;

use sqlx::PgPool;
use tns_adapter::{AdapterError, AdapterResult, Credentials};
use tns_adapter_host::credentials;
use tns_core::sealing::DataKey;

/// The organization's credentials for `adapter`, opened for the call (none stored, or stored
/// for another adapter: none); a secret the data key cannot open is the operator's
/// configuration problem.
pub(crate) async fn credentials(
    db: &PgPool,
    key: &DataKey,
    org: OrgId,
    adapter: &str,
) -> anyhow::Result<Result<Option<Credentials>, credentials::Unreadable>> {
    let Some(stored) = tns_store::downstream::credentials_for(db, org, adapter).await? else {
        return Ok(Ok(None));
    };
    let sealed = credentials::Sealed { fields: stored.fields, secrets: stored.secrets };
    Ok(credentials::open(key, org, &sealed).map(Some))
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
