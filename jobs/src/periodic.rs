//! The periodic jobs: each idempotent (running one twice, or on two replicas at once, changes
//! nothing the first run did not), so leadership is what keeps them cheap, not what keeps them
//! correct.

use std::{sync::Arc, time::Duration};
use tns_core::ids::OrgId;

use chrono::Utc;
use sqlx::PgPool;
use tns_core::env::RedisSettings;
use tns_store::billing::invoices::Terms;

/// Rows one statement of a purge touches at most.
const PURGE_BATCH: i64 = 5_000;

/// Records whose personal data one transaction erases at most: a journey may have thousands of
/// passengers and submissions as large, so fewer than a purge's rows.
const ERASE_BATCH: i64 = 100;

#[derive(Clone)]
pub enum Job {
    /// Drop `Idempotency-Key` answers past their replay period.
    IdempotencyPurge,
    /// Drop webhook events (with their deliveries and attempts) older than the retention
    /// period once every delivery of theirs is final.
    WebhookRetention { days: u32 },
    /// Erase the personal data of journeys and shipments that ended more than `days` days ago,
    /// and of retired people no record that keeps its own names any more
    /// ([`tns_store::erasure`]).
    PersonalDataRetention { days: u32 },
    /// Erase the organizations their owners closed, once the grace period is over and their
    /// last invoice is issued ([`tns_store::closure::erase`]).
    OrganizationErasure,
    /// Suspend the organizations whose trial ended without a plan chosen.
    TrialExpiry,
    /// Build the data exports owners asked for; drop the archives past their 7 days
    /// ([`crate::exports`]).
    DataExports,
    /// Invoice every period that is over.
    Invoicing(Terms),
    /// Suspend the organizations with an invoice unpaid past its due date.
    Dunning,
    /// Ask the downstream about recently delivered records and record what changed outside
    /// TNS ([`crate::drift`]).
    DriftCheck(Arc<crate::drift::DriftCheck>),
    /// Read the downstream's code lists once a day ([`crate::code_lists`]).
    CodeLists(Arc<crate::code_lists::CodeListRefresh>),
}

/// A day's invoicing starts this long after it begins, so that the last calls of a month just
/// over are in the usage ledger (each API process adds its calls every `TNS_USAGE_FLUSH_SECS`,
/// at most 300 s). Calls added later still are billed by the next invoice.
const SETTLE: Duration = Duration::from_secs(3600);

impl Job {
    pub fn name(&self) -> &'static str {
        match self {
            Job::IdempotencyPurge => "idempotency-purge",
            Job::WebhookRetention { .. } => "webhook-retention",
            Job::PersonalDataRetention { .. } => "personal-data-retention",
            Job::OrganizationErasure => "organization-erasure",
            Job::TrialExpiry => "trial-expiry",
            Job::DataExports => "data-exports",
            Job::Invoicing(_) => "invoicing",
            Job::Dunning => "dunning",
            Job::DriftCheck(_) => "drift-check",
            Job::CodeLists(_) => "code-lists",
        }
    }

    pub fn every(&self) -> Duration {
        match self {
            Job::IdempotencyPurge => Duration::from_secs(600),
            Job::WebhookRetention { .. } => Duration::from_secs(3600),
            Job::PersonalDataRetention { .. } => Duration::from_secs(3600),
            Job::OrganizationErasure => Duration::from_secs(3600),
            Job::TrialExpiry => Duration::from_secs(60),
            Job::DataExports => Duration::from_secs(30),
            Job::Invoicing(_) => Duration::from_secs(300),
            Job::Dunning => Duration::from_secs(300),
            Job::DriftCheck(_) => Duration::from_secs(300),
            // A run reads nothing while the copy is fresh: hourly retries while the
            // downstream cannot be read.
            Job::CodeLists(_) => Duration::from_secs(3600),
        }
    }

    /// One run; how many rows it changed.
    pub async fn run(&self, db: &PgPool, redis: &RedisSettings) -> anyhow::Result<u64> {
        match self {
            Job::DriftCheck(check) => check.run(db).await,
            Job::CodeLists(refresh) => refresh.run(db).await,
            Job::IdempotencyPurge => Ok(tns_store::idempotency::purge(db).await?),
            Job::TrialExpiry => {
                let ended = tns_store::billing::standing::expire_trials(db).await?;
                for org in &ended {
                    tracing::info!(org = org.get(), "trial ended: organization suspended");
                }
                suspended(redis, &ended).await;
                Ok(ended.len() as u64)
            }
            Job::DataExports => crate::exports::run(db).await,
            Job::OrganizationErasure => erase_closed(db, redis).await,
            Job::Invoicing(terms) => {
                // The database's clock, which plan changes date their terms by.
                let today = tns_store::billing::terms::today_settled(db, SETTLE).await?;
                let issued = tns_store::billing::invoices::issue_due(db, today, *terms).await?;
                for id in &issued {
                    tracing::info!(invoice = id.get(), "invoice issued");
                }
                Ok(issued.len() as u64)
            }
            Job::Dunning => {
                let overdue = tns_store::billing::standing::suspend_overdue(db, Utc::now().date_naive()).await?;
                for org in &overdue {
                    tracing::info!(org = org.get(), "invoice overdue: organization suspended");
                }
                suspended(redis, &overdue).await;
                Ok(overdue.len() as u64)
            }
            Job::WebhookRetention { days } => {
                let mut total = 0;
                loop {
                    let n = tns_store::webhooks::purge_finished(db, *days, PURGE_BATCH).await?;
                    total += n;
                    if n < PURGE_BATCH as u64 {
                        return Ok(total);
                    }
                }
            }
            Job::PersonalDataRetention { days } => {
                // Records first: the people they free are erased in the same run.
                let journeys = batches(|| tns_store::erasure::journeys(db, *days, ERASE_BATCH)).await?;
                let shipments = batches(|| tns_store::erasure::shipments(db, *days, ERASE_BATCH)).await?;
                let people = batches(|| tns_store::erasure::people(db, ERASE_BATCH)).await?;
                if journeys + shipments + people > 0 {
                    // Counts only: nothing about whom.
                    tracing::info!(journeys, shipments, people, "personal data past retention erased");
                }
                Ok(journeys + shipments + people)
            }
        }
    }
}

/// Run `batch` until one erases fewer than [`ERASE_BATCH`] records (each is a transaction of
/// its own, so a long backlog never holds one open); how many in all.
async fn batches<F, Fut>(batch: F) -> sqlx::Result<u64>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = sqlx::Result<u64>>,
{
    let mut total = 0;
    loop {
        let n = batch().await?;
        total += n;
        if n < ERASE_BATCH as u64 {
            return Ok(total);
        }
    }
}

/// Closed organizations one run erases at most (each is one transaction deleting everything
/// it holds); the rest wait for the next run.
const ORGS_PER_RUN: i64 = 50;

/// Erase the closed organizations that are due; how many. One that cannot be erased now (its
/// last invoice not issued, or a failure, logged) is passed over for the next run.
async fn erase_closed(db: &PgPool, redis: &RedisSettings) -> anyhow::Result<u64> {
    use tns_store::closure::{self, Erasure};
    let (mut erased, mut after) = (vec![], 0);
    'pages: loop {
        let page = closure::due(db, after, ORGS_PER_RUN).await?;
        for &org in &page {
            after = org.get();
            match closure::erase(db, org).await {
                Ok(Erasure::Erased(deleted)) => {
                    let rows: u64 = deleted.values().sum();
                    tracing::info!(org = org.get(), rows, "closed organization erased");
                    erased.push(org);
                }
                Ok(Erasure::AwaitingInvoice) => {
                    tracing::info!(org = org.get(), "closed organization waits for its last invoice")
                }
                Ok(Erasure::NotDue) => {}
                Err(e) => {
                    tracing::warn!(org = org.get(), error = %tns_store::redacted(&e), "closed organization not erased; next run tries again")
                }
            }
            if erased.len() as i64 >= ORGS_PER_RUN {
                break 'pages;
            }
        }
        if (page.len() as i64) < ORGS_PER_RUN {
            break;
        }
    }
    // Its API keys are gone; what the API processes cached of its standing goes too.
    suspended(redis, &erased).await;
    Ok(erased.len() as u64)
}

/// Tell the API processes that `orgs` were suspended. Suspended in PostgreSQL already; should
/// Redis be unreachable, they see it when the published limit expires (an hour at most).
async fn suspended(redis: &RedisSettings, orgs: &[OrgId]) {
    if let Err(e) = tns_store::published::forget_limits(redis, orgs).await {
        tracing::warn!(error = %e, "could not tell the API processes at once about suspended organizations");
    }
}
