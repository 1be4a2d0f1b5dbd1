//! The adapter contract: what a downstream system (U-ETDS, the sandbox) must do for TNS.
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
}

pub type AdapterResult<T> = Result<T, AdapterError>;

/// A downstream system. Calls block (plugins are called off the async runtime) and must be
/// safe to make from several threads at once.
pub trait Adapter: Send + Sync {
    /// Name and version, as `tns adapters` lists them.
    fn describe(&self) -> Description;
    /// Notify a journey with its crew and passengers.
    fn submit_journey(&self, req: &JourneyRequest) -> AdapterResult<Receipt>;
    /// Send the changes to an already delivered journey (passengers added, changed, removed).
    fn amend_journey(&self, req: &AmendRequest) -> AdapterResult<Receipt>;
    /// Notify a cargo shipment.
    fn submit_cargo(&self, req: &CargoRequest) -> AdapterResult<Receipt>;
    /// Cancel a delivered notification.
    fn cancel(&self, req: &CancelRequest) -> AdapterResult<()>;
    /// What the downstream holds for our own reference, if anything: how an attempt whose
    /// outcome is unknown is resolved before anything is sent again.
    fn lookup(&self, req: &LookupRequest) -> AdapterResult<Option<Receipt>>;
    /// The downstream's report document for a delivered notification.
    fn report(&self, req: &ReportRequest) -> AdapterResult<Document>;
}
