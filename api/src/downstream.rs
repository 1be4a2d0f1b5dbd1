//! The calls the API itself makes to a downstream (checking an organization's credentials
//! before they are saved, fetching a report), through the same adapter plugins the scheduler
//! loads: off the async runtime, each within a deadline, at most a few at once per process.

use std::{sync::Arc, time::Duration};

use tns_adapter::{
    Account, Adapter, AdapterError, AllowList, AllowListRequest, CheckRequest, Credentials, CredentialsCheck, Document,
    Finding, ReportRequest,
};
use tns_adapter_host::Plugins;
use tokio::sync::Semaphore;

use crate::error::ApiError;

/// Downstream calls in progress at once in one API process: they wait on a remote service, so
/// a burst of report downloads must not take every blocking thread.
const CONCURRENCY: usize = 16;

pub struct Downstreams {
    registry: Arc<Plugins>,
    timeout: Duration,
    slots: Arc<Semaphore>,
}

impl Downstreams {
    pub fn new(registry: Arc<Plugins>, timeout: Duration) -> Downstreams {
        Downstreams { registry, timeout, slots: Arc::new(Semaphore::new(CONCURRENCY)) }
    }

    /// No adapters at all (unit tests of the HTTP layer).
    pub fn none() -> Downstreams {
        Downstreams::new(Arc::new(Plugins::empty()), Duration::from_secs(1))
    }

    pub fn registry(&self) -> Arc<Plugins> {
        self.registry.clone()
    }

    pub fn has(&self, adapter: &str) -> bool {
        self.registry.get(adapter).is_some()
    }

    async fn call<T: Send + 'static>(
        &self,
        adapter: &str,
        f: impl FnOnce(&dyn Adapter) -> Result<T, AdapterError> + Send + 'static,
    ) -> Result<T, AdapterError> {
        let plugin = self.registry.get(adapter).ok_or_else(|| {
            AdapterError::Transient(format!("the `{adapter}` adapter is not installed on this API process"))
        })?;
        let permit = self.slots.clone().acquire_owned().await.expect("semaphore never closed");
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            f(plugin.as_ref())
        });
        match tokio::time::timeout(self.timeout, task).await {
            Err(_) => Err(AdapterError::Transient(format!("no answer within {} s", self.timeout.as_secs()))),
            Ok(Err(e)) => Err(AdapterError::Transient(format!("the adapter call failed: {e}"))),
            Ok(Ok(r)) => r,
        }
    }

    /// Check credentials with the downstream: a refusal is a 422 on `field` carrying the
    /// downstream's own message; a downstream that cannot be reached is a 503.
    pub async fn verify(&self, adapter: &str, credentials: Credentials, field: &str) -> Result<Account, ApiError> {
        let req = CredentialsCheck { credentials };
        match self.call(adapter, move |a| a.verify_credentials(&req)).await {
            Ok(account) => Ok(account),
            Err(AdapterError::Configuration(m) | AdapterError::Permanent(m)) => {
                Err(ApiError::validation(field, format!("the downstream refused the credentials: {m}")))
            }
            Err(AdapterError::Transient(m) | AdapterError::Suspect(m)) => {
                tracing::warn!(adapter, error = %m, "credentials could not be checked");
                Err(ApiError::Unavailable(format!(
                    "the downstream could not be reached to check the credentials ({m}); nothing was saved, try again later"
                )))
            }
        }
    }

    /// The downstream's list of caller addresses after `req`'s change: a refusal is a 409 with
    /// the downstream's message, wrong credentials a 409 saying what to fix, a downstream that
    /// cannot be reached a 503.
    pub async fn allow_list(&self, adapter: &str, req: AllowListRequest) -> Result<AllowList, ApiError> {
        match self.call(adapter, move |a| a.allow_list(&req)).await {
            Ok(list) => Ok(list),
            Err(AdapterError::Permanent(m)) => Err(ApiError::Conflict(format!("the downstream refused: {m}"))),
            Err(AdapterError::Configuration(m)) => Err(ApiError::Conflict(format!(
                "the downstream refused this organization's credentials ({m}); set them again with PUT /portal/downstream"
            ))),
            Err(AdapterError::Transient(m) | AdapterError::Suspect(m)) => {
                Err(ApiError::Unavailable(format!("the downstream could not be reached ({m}); try again later")))
            }
        }
    }

    /// A pre-flight check: `None` when the downstream cannot make it; an error when it could
    /// not be made this time.
    pub async fn check(&self, adapter: &str, req: CheckRequest) -> Result<Option<Finding>, AdapterError> {
        self.call(adapter, move |a| a.check(&req)).await
    }

    /// The downstream's report document: a refusal is a 409 with the downstream's message (it
    /// answered; it will not give this report), a downstream that cannot be reached a 503, wrong
    /// credentials a 409 saying what to fix.
    pub async fn report(&self, adapter: &str, req: ReportRequest) -> Result<Document, ApiError> {
        match self.call(adapter, move |a| a.report(&req)).await {
            Ok(doc) => Ok(doc),
            Err(AdapterError::Permanent(m)) => {
                Err(ApiError::Conflict(format!("the downstream does not give this report: {m}")))
            }
            Err(AdapterError::Configuration(m)) => Err(ApiError::Conflict(format!(
                "the downstream refused this organization's credentials ({m}); set them again with PUT /portal/downstream"
            ))),
            Err(AdapterError::Transient(m) | AdapterError::Suspect(m)) => {
                Err(ApiError::Unavailable(format!("the downstream could not be reached ({m}); try again later")))
            }
        }
    }
}
