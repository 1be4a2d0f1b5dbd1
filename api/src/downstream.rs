//! The calls the API itself makes to a downstream (checking an organization's credentials
//! before they are saved, fetching a report), through the same adapter plugins the scheduler
//! loads: off the async runtime, each within a deadline, at most a few at once per process.

use std::{sync::Arc, time::Duration};
use tns_core::ids::OrgId;

use tns_adapter::{
    Account, Adapter, AdapterError, AllowList, AllowListRequest, CheckRequest, Credentials, CredentialsCheck, Document,
    Finding, Records, ReportRequest, Work,
};
use tns_adapter_host::Plugins;
use tokio::sync::Semaphore;

use crate::error::{ApiError, Code};

/// Downstream calls in progress at once in one API process: they wait on a remote service, so
/// a burst of report downloads must not take every blocking thread.
const CONCURRENCY: usize = 16;

/// How long screening a piece of work may take, waiting for a slot included.
const SCREEN_DEADLINE: Duration = Duration::from_secs(2);

pub struct Downstreams {
    registry: Arc<Plugins>,
    timeout: Duration,
    slots: Arc<Semaphore>,
    screens: Arc<Semaphore>,
}

impl Downstreams {
    pub fn new(registry: Arc<Plugins>, timeout: Duration) -> Downstreams {
        Downstreams {
            registry,
            timeout,
            slots: Arc::new(Semaphore::new(CONCURRENCY)),
            screens: Arc::new(Semaphore::new(CONCURRENCY)),
        }
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
        self.call_within(&self.slots, self.timeout, plugin, f).await
    }

    /// `f` on `plugin` off the runtime, waiting for one of `slots` and the call both within
    /// `deadline`.
    async fn call_within<T: Send + 'static>(
        &self,
        slots: &Arc<Semaphore>,
        deadline: Duration,
        plugin: Arc<tns_adapter::host::Plugin>,
        f: impl FnOnce(&dyn Adapter) -> Result<T, AdapterError> + Send + 'static,
    ) -> Result<T, AdapterError> {
        let slots = slots.clone();
        let run = async move {
            let permit = slots.acquire_owned().await.expect("semaphore never closed");
            tokio::task::spawn_blocking(move || {
                let _permit = permit;
                f(plugin.as_ref())
            })
            .await
        };
        match tokio::time::timeout(deadline, run).await {
            Err(_) => Err(AdapterError::Transient(format!("no answer within {} ms", deadline.as_millis()))),
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
            Err(AdapterError::Permanent(m)) => {
                Err(ApiError::Conflict(Code::DownstreamRefused, format!("the downstream refused: {m}")))
            }
            Err(AdapterError::Configuration(m)) => Err(credentials_refused(&m)),
            Err(AdapterError::Transient(m) | AdapterError::Suspect(m)) => {
                Err(ApiError::Unavailable(format!("the downstream could not be reached ({m}); try again later")))
            }
        }
    }

    /// Where `org`'s new submissions of `records` go: its chosen adapter, or the default one;
    /// a 409 when there is none, or when the adapter (loaded here) takes no such records.
    pub async fn adapter_for(
        &self,
        tx: &mut sqlx::PgConnection,
        org: OrgId,
        records: Records,
    ) -> Result<String, ApiError> {
        let chosen = match tns_store::downstream::adapter_of(tx, org).await? {
            Some(a) => a,
            None => self.registry.default_name().map(str::to_string).ok_or_else(|| {
                ApiError::Conflict(
                    Code::NoDownstream,
                    "this organization has chosen no downstream and this deployment has no default one; choose one with PUT /portal/downstream"
                        .into(),
                )
            })?,
        };
        if let Some(d) = self.registry.description(&chosen) {
            if !d.accepts(records) {
                let what = match records {
                    Records::Journeys => "journeys",
                    Records::Cargo => "cargo shipments",
                };
                return Err(ApiError::Conflict(
                    Code::DownstreamCannotTake,
                    format!(
                        "this organization submits to {} (`{chosen}`), which takes no {what}; choose another downstream with PUT /portal/downstream",
                        d.title.get("en")
                    ),
                ));
            }
        }
        Ok(chosen)
    }

    /// What `adapter` would refuse in `work`, as a 409 naming each field (the values are valid,
    /// the downstream cannot take them), before it is queued to fail. A plugin that cannot
    /// screen it (not loaded here, an error) lets it through: the submission then meets the
    /// downstream's own answer.
    pub async fn screen(&self, adapter: &str, work: Work) -> Result<(), ApiError> {
        let title = self.registry.description(adapter).map(|d| d.title.get("en").to_string());
        let Some(title) = title else { return Ok(()) };
        let Some(plugin) = self.registry.get(adapter) else { return Ok(()) };
        // Local work by contract, often under a record's lock: slots of its own (never behind
        // slow report downloads) and a short deadline, past which the work goes unscreened.
        match self.call_within(&self.screens, SCREEN_DEADLINE, plugin, move |a| a.screen(&work)).await {
            Ok(problems) if problems.is_empty() => Ok(()),
            Ok(problems) => Err(ApiError::Conflict(
                Code::DownstreamCannotTake,
                problems
                    .iter()
                    .map(|p| format!("{}: {} (this organization submits to {title})", p.field, p.detail))
                    .collect::<Vec<_>>()
                    .join("; "),
            )),
            Err(e) => {
                tracing::warn!(adapter, error = %e, "the adapter could not screen a submission; queued unscreened");
                Ok(())
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
            Err(AdapterError::Permanent(m)) => Err(ApiError::Conflict(
                Code::DownstreamRefused,
                format!("the downstream does not give this report: {m}"),
            )),
            Err(AdapterError::Configuration(m)) => Err(credentials_refused(&m)),
            Err(AdapterError::Transient(m) | AdapterError::Suspect(m)) => {
                Err(ApiError::Unavailable(format!("the downstream could not be reached ({m}); try again later")))
            }
        }
    }
}

/// The downstream refused the organization's stored credentials (`m` its message).
fn credentials_refused(m: &str) -> ApiError {
    ApiError::Conflict(
        Code::CredentialsRefused,
        format!(
            "the downstream refused this organization's credentials ({m}); set them again with PUT /portal/downstream"
        ),
    )
}
