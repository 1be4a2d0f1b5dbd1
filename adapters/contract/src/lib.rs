//! The adapter contract: what a downstream system must do for TNS, and how it describes itself.
//!
//! - [`Adapter`] is the one trait the scheduler sees.
//! - [`abi`] is the small, versioned C ABI a plugin (`cdylib`) exports: JSON bytes in and out,
//!   the plugin frees what it allocated, no panic crosses it. [`export_adapter!`] exports an
//!   adapter in one line.
//! - [`host`] loads plugins with libloading, checks the ABI version first, and wraps each back
//!   into the trait. Libraries are never unloaded.

pub mod abi;
pub mod host;
pub mod types;

pub use types::*;

/// How a failed call should be treated.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
#[serde(tag = "kind", content = "message", rename_all = "snake_case")]
pub enum AdapterError {
    /// Try again later (timeouts, 5xx, the downstream being down). The outcome of a write may
    /// be unknown: look the submission up before sending it again.
    #[error("transient: {0}")]
    Transient(String),
    /// The downstream refused the data; sending it again will not help.
    #[error("permanent: {0}")]
    Permanent(String),
    /// Credentials, endpoint or permissions are wrong; an operator or customer must act.
    #[error("configuration: {0}")]
    Configuration(String),
    /// Looks permanent but may pass (a downstream fault the adapter cannot place): tried again
    /// like a transient error, but the same error three attempts in a row fails the submission.
    #[error("suspect: {0}")]
    Suspect(String),
}

impl AdapterError {
    /// The same kind with its message changed by `f` (masked, shortened).
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> AdapterError {
        match self {
            AdapterError::Transient(m) => AdapterError::Transient(f(m)),
            AdapterError::Permanent(m) => AdapterError::Permanent(f(m)),
            AdapterError::Configuration(m) => AdapterError::Configuration(f(m)),
            AdapterError::Suspect(m) => AdapterError::Suspect(f(m)),
        }
    }
}

pub type AdapterResult<T> = Result<T, AdapterError>;

/// A downstream system. Calls block (plugins are called off the async runtime) and must be
/// safe to make from several threads at once.
///
/// A notification may take several downstream calls (U-ETDS: the trip, its passenger group,
/// the crew, the passengers). The host drives it one call at a time with [`Adapter::advance`]
/// and records each [`Step::Continue`]'s progress before the next call, so a notification that
/// fails halfway resumes where it stopped and nothing done is repeated.
pub trait Adapter: Send + Sync {
    /// What it is, what it takes and what it needs ([`Description`]); asked once, at load.
    fn describe(&self) -> Description;
    /// Make the next downstream call of `n` (at most one call that changes anything).
    fn advance(&self, n: &Notification) -> AdapterResult<Step>;
    /// Find out what the downstream already holds of `n` when the outcome of its last call is
    /// unknown (a timeout, a crash, a lost lease), without changing anything: `Done` when the
    /// notification is complete there, else `Continue` with the progress to go on from.
    fn reconcile(&self, n: &Notification) -> AdapterResult<Step>;
    /// Check credentials with the downstream before an organization's are saved: a wrong
    /// username or password is a `configuration` error carrying the downstream's message.
    fn verify_credentials(&self, req: &CredentialsCheck) -> AdapterResult<Account>;
    /// The downstream's report document for a delivered notification.
    fn report(&self, req: &ReportRequest) -> AdapterResult<Document>;
    /// The caller addresses the downstream accepts for these credentials, after the change
    /// asked for (if any). A downstream without such a list refuses (`permanent`).
    fn allow_list(&self, _req: &AllowListRequest) -> AdapterResult<AllowList> {
        Err(AdapterError::Permanent("this downstream keeps no list of caller addresses".into()))
    }
    /// What the downstream holds now of a delivered notification, read without changing
    /// anything (drift checks: was it cancelled or edited outside TNS?). `None` when this
    /// downstream cannot be asked.
    fn inspect(&self, _req: &InspectRequest) -> AdapterResult<Option<Observed>> {
        Ok(None)
    }
    /// A pre-flight check with the downstream's own services. `None` when this downstream
    /// cannot make it; a refusal of what was asked is a [`Finding`] that did not pass, while
    /// an error means the check could not be made.
    fn check(&self, _req: &CheckRequest) -> AdapterResult<Option<Finding>> {
        Ok(None)
    }
    /// The fields of `work` this downstream would refuse, found without calling it (a unit it
    /// has no code for): the API refuses such a submission (409 naming each field) instead of
    /// queueing one that must fail.
    fn screen(&self, _work: &Work) -> AdapterResult<Vec<Problem>> {
        Ok(Vec::new())
    }
    /// The code lists the downstream publishes; none when it publishes none.
    fn code_lists(&self, _req: &CodeListsRequest) -> AdapterResult<Vec<CodeList>> {
        Ok(Vec::new())
    }
}
