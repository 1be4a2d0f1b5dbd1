//! The periodic jobs: each idempotent (running one twice, or on two replicas at once, changes
//! nothing the first run did not), so leadership is what keeps them cheap, not what keeps them
//! correct.

use std::time::Duration;

use sqlx::PgPool;
use tns_core::env::RedisSettings;

/// Rows one statement of a purge touches at most.
const PURGE_BATCH: i64 = 5_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// Drop `Idempotency-Key` answers past their replay period.
    IdempotencyPurge,
    /// Drop webhook events (with their deliveries and attempts) older than the retention
    /// period once every delivery of theirs is final.
    WebhookRetention { days: u32 },
    /// Suspend the organizations whose trial ended without a plan chosen.
    TrialExpiry,
}

impl Job {
    pub fn name(self) -> &'static str {
        match self {
            Job::IdempotencyPurge => "idempotency-purge",
            Job::WebhookRetention { .. } => "webhook-retention",
            Job::TrialExpiry => "trial-expiry",
        }
    }

    pub fn every(self) -> Duration {
        match self {
            Job::IdempotencyPurge => Duration::from_secs(600),
            Job::WebhookRetention { .. } => Duration::from_secs(3600),
            Job::TrialExpiry => Duration::from_secs(60),
        }
    }

    /// One run; how many rows it changed.
    pub async fn run(self, db: &PgPool, redis: &RedisSettings) -> anyhow::Result<u64> {
        match self {
            Job::IdempotencyPurge => Ok(tns_store::idempotency::purge(db).await?),
            Job::TrialExpiry => {
                let ended = tns_store::standing::expire_trials(db).await?;
                for org in &ended {
                    tracing::info!(org, "trial ended: organization suspended");
                }
                // Suspended in PostgreSQL already; should Redis be unreachable, the API
                // processes see it when the published limit expires (an hour at most).
                if let Err(e) = tns_store::published::forget_limits(redis, &ended).await {
                    tracing::warn!(error = %e, "could not tell the API processes at once about ended trials");
                }
                Ok(ended.len() as u64)
            }
            Job::WebhookRetention { days } => {
                let mut total = 0;
                loop {
                    let n = tns_store::webhooks::purge_finished(db, days, PURGE_BATCH).await?;
                    total += n;
                    if n < PURGE_BATCH as u64 {
                        return Ok(total);
                    }
                }
            }
        }
    }
}
