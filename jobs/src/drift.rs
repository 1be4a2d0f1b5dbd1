//! The drift checks: ask the downstream what it holds now of recently delivered records and
//! record what differs from what TNS delivered (a trip cancelled or edited on e-Devlet): on
//! the record's latest submission, with a `submission.drifted` event when a difference is new.
//!
//! Bounded: a run checks at most `batch` records, at most `per_org` of one organization, each
//! at most once per `interval`, a few calls at once; a run that meets a downstream failing
//! again and again stops early (the records not checked wait for the next run). These calls
//! are the platform's own: they count against no organization's quota.

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use futures::StreamExt;
use prometheus::{IntCounterVec, Opts, Registry as Metrics};
use sqlx::PgPool;
use tns_adapter::{Adapter, AdapterError, InspectRequest};
use tns_adapter_host::Plugins;
use tns_core::{
    domain::drift,
    env::{ConfigError, Vars},
    sealing::DataKey,
};
use tns_http::wire::SubmissionOut;
use tns_store::submissions::drift::{self as store, Candidate, Recorded};

/// Checks in flight at once.
const CONCURRENCY: usize = 4;

/// A check that could not be made is tried again this long after (behind the records due).
const RETRY_AFTER: Duration = Duration::from_secs(15 * 60);

/// Transient failures in a row that end a run early: the downstream is down, and asking it
/// the rest of the batch now would only wait on timeouts.
const GIVE_UP_AFTER: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriftSettings {
    pub enabled: bool,
    /// How long a checked record is left alone.
    pub interval: Duration,
    /// Records checked per run at most.
    pub batch: u32,
    /// Records of one organization checked per run at most.
    pub per_org: u32,
    /// Trips that departed up to this many days ago are still checked.
    pub days_back: u32,
}

impl DriftSettings {
    pub fn from_vars(vars: &Vars<'_>) -> Result<DriftSettings, ConfigError> {
        Ok(DriftSettings {
            enabled: vars.parse_bool("TNS_DRIFT_CHECKS", true)?,
            interval: vars.parse_secs("TNS_DRIFT_INTERVAL_SECS", 6 * 3600, 300, 7 * 86_400)?,
            batch: vars.parse_int("TNS_DRIFT_BATCH", 500, 1, 10_000)? as u32,
            per_org: vars.parse_int("TNS_DRIFT_PER_ORG", 20, 1, 1_000)? as u32,
            days_back: vars.parse_int("TNS_DRIFT_DAYS_BACK", 2, 0, 31)? as u32,
        })
    }
}

/// What a check came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The downstream holds what TNS delivered.
    InStep,
    /// A difference not found before (event sent).
    Drifted,
    /// The same difference as the last check found.
    StillDrifted,
    /// A newer submission of the record appeared during the check: nothing recorded.
    Superseded,
    /// Nothing to compare, or the downstream cannot be asked.
    NotAsked,
    /// The downstream refused the question (credentials, a reference it does not know).
    Refused,
    /// The downstream could not be reached; checked again after a while.
    Unreachable,
    /// TNS's own side failed (the database); checked again after a while.
    Failed,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::InStep => "in_step",
            Outcome::Drifted => "drifted",
            Outcome::StillDrifted => "still_drifted",
            Outcome::Superseded => "superseded",
            Outcome::NotAsked => "not_asked",
            Outcome::Refused => "refused",
            Outcome::Unreachable => "unreachable",
            Outcome::Failed => "failed",
        }
    }
}

/// What the checks need beside the database: the adapters, the key that opens the
/// organizations' downstream passwords, a deadline per call.
pub struct DriftCheck {
    pub settings: DriftSettings,
    adapters: Arc<Plugins>,
    data_key: DataKey,
    timeout: Duration,
    checks: IntCounterVec,
}

impl DriftCheck {
    pub fn new(
        settings: DriftSettings,
        adapters: Arc<Plugins>,
        data_key: DataKey,
        timeout: Duration,
        metrics: &Metrics,
    ) -> prometheus::Result<DriftCheck> {
        let checks = IntCounterVec::new(
            Opts::new("tns_drift_checks_total", "Drift checks of delivered records by outcome"),
            &["outcome"],
        )?;
        metrics.register(Box::new(checks.clone()))?;
        Ok(DriftCheck { settings, adapters, data_key, timeout, checks })
    }

    /// One run: the records due, checked a few at once; how many were found drifted anew.
    pub async fn run(&self, db: &PgPool) -> anyhow::Result<u64> {
        let s = self.settings;
        let due =
            store::candidates(db, s.days_back as i32, s.interval, i64::from(s.per_org), i64::from(s.batch)).await?;
        // Once the checks keep failing, those not started yet are skipped, and the run ends
        // when those in flight have (their calls never outlive it).
        let stopped = AtomicBool::new(false);
        let stopped = &stopped;
        let mut checks = futures::stream::iter(due)
            .map(|c| async move {
                if stopped.load(Ordering::Relaxed) {
                    return None;
                }
                match self.check(db, &c).await {
                    Ok(outcome) => Some(outcome),
                    Err(e) => {
                        let error = match e.downcast_ref::<sqlx::Error>() {
                            Some(db) => tns_store::redacted(db),
                            None => e.to_string(),
                        };
                        tracing::warn!(org = c.org_id.get(), submission = c.submission_id, %error, "drift check failed");
                        // Behind the others, so one record that cannot be checked holds up none.
                        let _ = store::due_in(db, &c, self.settings.interval, RETRY_AFTER).await;
                        Some(Outcome::Failed)
                    }
                }
            })
            .buffered(CONCURRENCY);
        let (mut drifted, mut failing) = (0, 0);
        while let Some(outcome) = checks.next().await {
            let Some(outcome) = outcome else { continue };
            self.checks.with_label_values(&[outcome.label()]).inc();
            match outcome {
                Outcome::Drifted => drifted += 1,
                Outcome::Unreachable | Outcome::Failed => failing += 1,
                _ => failing = 0,
            }
            if failing == GIVE_UP_AFTER {
                tracing::warn!("drift checks keep failing; the rest wait for the next run");
                stopped.store(true, Ordering::Relaxed);
            }
        }
        Ok(drifted)
    }

    /// Check one record.
    pub async fn check(&self, db: &PgPool, c: &Candidate) -> anyhow::Result<Outcome> {
        let Some(expected) = store::expected(db, c).await? else {
            store::mark_checked(db, c).await?;
            return Ok(Outcome::NotAsked);
        };
        let Some(adapter) = self.adapters.get(&c.adapter) else {
            tracing::warn!(adapter = %c.adapter, "drift checks: the adapter is not installed on the jobs role");
            store::mark_checked(db, c).await?;
            return Ok(Outcome::NotAsked);
        };
        let credentials = match crate::downstream::credentials(db, &self.data_key, c.org_id, &c.adapter).await? {
            Ok(credentials) => credentials,
            Err(unreadable) => {
                tracing::warn!(org = c.org_id.get(), error = %unreadable, "drift check: the organization's credentials");
                store::mark_checked(db, c).await?;
                return Ok(Outcome::Refused);
            }
        };
        let req = InspectRequest {
            credentials,
            kind: expected.kind,
            downstream_reference: c.downstream_reference.clone(),
            downstream_state: expected.downstream_state,
            references: expected.references,
        };
        match crate::downstream::within(self.timeout, move || adapter.inspect(&req)).await {
            Ok(None) => {
                store::mark_checked(db, c).await?;
                Ok(Outcome::NotAsked)
            }
            Ok(Some(found)) => {
                let differences = drift::differences(&expected.facts, &found);
                Ok(match store::record::<SubmissionOut>(db, c, differences).await? {
                    Recorded::InStep => Outcome::InStep,
                    Recorded::Drifted => Outcome::Drifted,
                    Recorded::Unchanged => Outcome::StillDrifted,
                    Recorded::Superseded => Outcome::Superseded,
                })
            }
            Err(AdapterError::Transient(m) | AdapterError::Suspect(m)) => {
                tracing::debug!(org = c.org_id.get(), submission = c.submission_id, error = %m, "drift check: downstream unreachable");
                store::due_in(db, c, self.settings.interval, RETRY_AFTER).await?;
                Ok(Outcome::Unreachable)
            }
            Err(AdapterError::Permanent(m) | AdapterError::Configuration(m)) => {
                tracing::warn!(org = c.org_id.get(), submission = c.submission_id, error = %m, "drift check refused by the downstream");
                store::mark_checked(db, c).await?;
                Ok(Outcome::Refused)
            }
        }
    }
}
