//! The scheduler role. Its work — claiming queued submissions and calling adapters, webhook
//! delivery — arrives with issues 4 and 5. Until then it says so instead of pretending.

pub mod adapters;

use std::future::Future;

pub const NOTHING_TO_RUN: &str =
    "the scheduler has no jobs yet: submission delivery and webhooks are not implemented in this version";

/// Run the scheduler until `shutdown` resolves. Today: report that there is nothing to run
/// and return at once.
pub async fn run(shutdown: impl Future<Output = ()>) {
    tracing::warn!("{NOTHING_TO_RUN}");
    drop(shutdown);
}
