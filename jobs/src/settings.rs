//! The jobs role's settings, parsed from `TNS_*` variables (README.md lists them).

use std::time::Duration;

use tns_core::{
    basis::Basis,
    env::{ConfigError, RedisSettings, Vars},
    sealing::DataKey,
};
use tns_store::billing::invoices::Terms;

/// How leadership is decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Election {
    /// A PostgreSQL advisory lock (outside a cluster, `tns dev`).
    Postgres,
    /// A `coordination.k8s.io` Lease in `namespace`.
    Kubernetes { namespace: String, lease: String, duration: Duration },
}

#[derive(Debug, Clone)]
pub struct JobsSettings {
    pub election: Election,
    /// This replica's name in the Lease (`TNS_JOBS_IDENTITY`, else the pod's name).
    pub identity: String,
    /// How often a replica that does not lead tries again.
    pub retry: Duration,
    /// Days webhook events and deliveries are kept once final.
    pub retention_days: u32,
    /// Days after a journey or shipment ends that its personal data is kept.
    pub personal_data_retention_days: u32,
    /// Where the API processes' published limits and usage counters live.
    pub redis: RedisSettings,
    /// KDV and the days to pay, for the invoices issued.
    pub invoices: Terms,
    /// Opens the organizations' downstream passwords (drift checks ask with them).
    pub data_key: DataKey,
    pub drift: crate::drift::DriftSettings,
    /// The organization whose downstream account reads the downstream's code lists
    /// (`TNS_REFERENCE_ORG`); none: the shipped copies are served.
    pub reference_org: Option<i64>,
}

/// Two years: TNS's choice, not a period the law names (README, "Personal data retention"). Erasing
/// cannot be undone, so a trip's people stay through the whole calendar year after the trip's,
/// when that year's records are looked at, and no longer.
const PERSONAL_DATA_RETENTION_DAYS: u64 = 730;

/// Where a pod finds its own namespace.
const NAMESPACE_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

impl JobsSettings {
    pub fn from_vars(vars: &Vars<'_>, basis: &Basis) -> Result<JobsSettings, ConfigError> {
        let profile = basis.profile;
        // Inside a cluster the kubelet sets KUBERNETES_SERVICE_HOST for every pod (`tns dev`
        // leads through PostgreSQL wherever it runs, unless told otherwise).
        let in_cluster = vars.get("KUBERNETES_SERVICE_HOST").is_some() && !profile.is_dev();
        let kubernetes = match vars.get("TNS_JOBS_ELECTION").as_deref() {
            None | Some("auto") => in_cluster,
            Some("kubernetes") => true,
            Some("postgres") => false,
            Some(_) => return Err(vars.bad("TNS_JOBS_ELECTION", "must be `auto`, `kubernetes` or `postgres`")),
        };
        let election = if kubernetes {
            Election::Kubernetes {
                namespace: vars
                    .get("TNS_JOBS_LEASE_NAMESPACE")
                    .or_else(|| std::fs::read_to_string(NAMESPACE_FILE).ok().map(|s| s.trim().to_string()))
                    .unwrap_or_else(|| "default".into()),
                lease: vars.get("TNS_JOBS_LEASE_NAME").unwrap_or_else(|| "tns-jobs".into()),
                duration: vars.parse_secs("TNS_JOBS_LEASE_SECS", 15, 3, 300)?,
            }
        } else {
            Election::Postgres
        };
        let identity = vars
            .get("TNS_JOBS_IDENTITY")
            .or_else(|| vars.get("POD_NAME"))
            .or_else(|| vars.get("HOSTNAME"))
            .map(|h| format!("{h}-{}", std::process::id()))
            .unwrap_or_else(|| format!("tns-jobs-{}", std::process::id()));
        Ok(JobsSettings {
            election,
            identity,
            retry: vars.parse_secs("TNS_JOBS_RETRY_SECS", 5, 1, 300)?,
            retention_days: vars.parse_int("TNS_RETENTION_DAYS", 30, 1, 3650)? as u32,
            // At least 32: the drift checks compare trips up to 31 days back with what was sent.
            personal_data_retention_days: vars.parse_int(
                "TNS_PERSONAL_DATA_RETENTION_DAYS",
                PERSONAL_DATA_RETENTION_DAYS,
                32,
                3650,
            )? as u32,
            redis: RedisSettings::from_vars(vars)?,
            invoices: Terms::from_vars(vars)?,
            data_key: basis.data_key.clone(),
            drift: crate::drift::DriftSettings::from_vars(vars)?,
            reference_org: match vars.get("TNS_REFERENCE_ORG") {
                None => None,
                Some(_) => Some(vars.parse_int("TNS_REFERENCE_ORG", 0, 1, i64::MAX as u64)? as i64),
            },
        })
    }

    /// The jobs to run; the drift checks when enabled and given the adapters, the code lists
    /// job when a reference organization is set.
    pub fn jobs(
        &self,
        drift: Option<std::sync::Arc<crate::drift::DriftCheck>>,
        code_lists: Option<std::sync::Arc<crate::code_lists::CodeListRefresh>>,
    ) -> Vec<crate::periodic::Job> {
        use crate::periodic::Job;
        let mut jobs = vec![
            Job::IdempotencyPurge,
            Job::WebhookRetention { days: self.retention_days },
            Job::PersonalDataRetention { days: self.personal_data_retention_days },
            Job::OrganizationErasure,
            Job::TrialExpiry,
            Job::DataExports,
            Job::Invoicing(self.invoices),
            Job::Dunning,
        ];
        jobs.extend(drift.filter(|_| self.drift.enabled).map(Job::DriftCheck));
        jobs.extend(code_lists.map(Job::CodeLists));
        jobs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tns_core::env::Profile;

    fn settings(pairs: &[(&str, &str)]) -> Result<JobsSettings, ConfigError> {
        let map: std::collections::HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let lookup = move |k: &str| map.get(k).cloned();
        JobsSettings::from_vars(&Vars::new(&lookup), &Basis::for_tests(Profile::Deployed))
    }

    #[test]
    fn invoice_terms_default_to_kdv_20_and_14_days_and_refuse_nonsense() {
        let s = settings(&[]).unwrap();
        assert_eq!(s.invoices.tax_rate.as_percent(), rust_decimal::Decimal::from(20));
        assert_eq!(s.invoices.due_days, 14);
        let s = settings(&[("TNS_KDV_PERCENT", "18.5"), ("TNS_INVOICE_DUE_DAYS", "30")]).unwrap();
        assert_eq!(s.invoices.tax_rate.as_percent().to_string(), "18.5");
        assert_eq!(s.invoices.due_days, 30);
        for bad in ["-1", "101", "20%", "18.125"] {
            let e = settings(&[("TNS_KDV_PERCENT", bad)]).unwrap_err().to_string();
            assert!(e.contains("TNS_KDV_PERCENT"), "{bad}: {e}");
        }
        assert!(settings(&[("TNS_INVOICE_DUE_DAYS", "0")]).is_err());
    }

    #[test]
    fn personal_data_is_kept_two_years_by_default_and_never_less_than_the_drift_window() {
        assert_eq!(settings(&[]).unwrap().personal_data_retention_days, 730);
        let s = settings(&[("TNS_PERSONAL_DATA_RETENTION_DAYS", "365")]).unwrap();
        assert_eq!(s.personal_data_retention_days, 365);
        assert!(s
            .jobs(None, None)
            .iter()
            .any(|j| matches!(j, crate::periodic::Job::PersonalDataRetention { days: 365 })));
        for bad in ["31", "0", "3651", "a year"] {
            let e = settings(&[("TNS_PERSONAL_DATA_RETENTION_DAYS", bad)]).unwrap_err();
            assert_eq!(e.var, "TNS_PERSONAL_DATA_RETENTION_DAYS", "{bad}");
        }
    }
}
