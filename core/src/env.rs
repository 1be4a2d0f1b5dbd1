//! Configuration parsing: environment variables only, read once at start-up. Each role parses
//! its own settings with [`Vars`]; a bad value stops start-up with one line naming the variable
//! and what is wrong with it.

use crate::ids::OrgId;
use std::{fmt, time::Duration};

/// Every environment variable the `tns` binary reads, whatever its role (`tns env` prints
/// them, so a deployment's manifests can be checked against the binary). A test keeps this
/// list and the code in step.
pub const VARIABLES: &[&str] = &[
    "HOSTNAME",
    "KUBERNETES_SERVICE_HOST",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_SERVICE_NAME",
    "POD_NAME",
    "RUST_LOG",
    "TNS_ADAPTER_CONCURRENCY",
    "TNS_ADAPTER_DIR",
    "TNS_ADAPTER_TIMEOUT_SECS",
    "TNS_ADMIN_ADDR",
    "TNS_AUTH_CACHE_TTL_MS",
    "TNS_AUTH_RATE_LIMIT",
    "TNS_AUTH_RATE_WINDOW_SECS",
    "TNS_COOKIE_SECURE",
    "TNS_DATABASE_URL",
    "TNS_DATA_KEY",
    "TNS_DB_ACQUIRE_TIMEOUT_SECS",
    "TNS_DB_MAX_CONNECTIONS",
    "TNS_DEV_ALLOW_REMOTE",
    "TNS_DRIFT_BATCH",
    "TNS_DRIFT_CHECKS",
    "TNS_DRIFT_DAYS_BACK",
    "TNS_DRIFT_INTERVAL_SECS",
    "TNS_DRIFT_PER_ORG",
    "TNS_EGRESS_IPS",
    "TNS_HEADER_READ_TIMEOUT_SECS",
    "TNS_JOBS_ELECTION",
    "TNS_JOBS_IDENTITY",
    "TNS_JOBS_LEASE_NAME",
    "TNS_JOBS_LEASE_NAMESPACE",
    "TNS_JOBS_LEASE_SECS",
    "TNS_JOBS_RETRY_SECS",
    "TNS_LISTEN_ADDR",
    "TNS_LOG_FORMAT",
    "TNS_MAIL_FROM",
    "TNS_MAX_CONNECTIONS",
    "TNS_METRICS_ADDR",
    "TNS_MIGRATE_ON_START",
    "TNS_ORGANIZATION_GRACE_DAYS",
    "TNS_PERSONAL_DATA_RETENTION_DAYS",
    "TNS_PUBLIC_URL",
    "TNS_QUOTA_ENABLED",
    "TNS_QUOTA_FAIL_MODE",
    "TNS_QUOTA_FAIL_OPEN_ALLOWANCE",
    "TNS_QUOTA_LEASE_MAX",
    "TNS_QUOTA_LEASE_MS",
    "TNS_REDIS_PREFIX",
    "TNS_REFERENCE_ORG",
    "TNS_REDIS_URL",
    "TNS_REQUEST_TIMEOUT_SECS",
    "TNS_RETENTION_DAYS",
    "TNS_KDV_PERCENT",
    "TNS_INVOICE_DUE_DAYS",
    "TNS_RETRY_BASE_MS",
    "TNS_RETRY_CAP_SECS",
    "TNS_RETRY_WINDOW_SECS",
    "TNS_SCHEDULER_BATCH",
    "TNS_SCHEDULER_DB_CONNECTIONS",
    "TNS_SCHEDULER_LEASE_SECS",
    "TNS_SCHEDULER_MAX_IN_FLIGHT",
    "TNS_SCHEDULER_POLL_MS",
    "TNS_SCHEDULER_SHUTDOWN_GRACE_SECS",
    "TNS_SESSION_TTL_SECS",
    "TNS_SIGNING_SECRET",
    "TNS_SMTP_ALLOW_PLAIN",
    "TNS_SMTP_URL",
    "TNS_TRIAL_DAYS",
    "TNS_TRUST_FORWARDED_FOR",
    "TNS_USAGE_FLUSH_SECS",
    "TNS_WEBHOOK_ALLOW_HTTP",
    "TNS_WEBHOOK_ALLOW_PRIVATE",
    "TNS_WEBHOOK_CONCURRENCY",
    "TNS_WEBHOOK_DISABLE_AFTER_SECS",
    "TNS_WEBHOOK_LEASE_SECS",
    "TNS_WEBHOOK_ORG_CONCURRENCY",
    "TNS_WEBHOOK_RETRY_AFTER_CAP_SECS",
    "TNS_WEBHOOK_RETRY_SCHEDULE",
    "TNS_WEBHOOK_TIMEOUT_SECS",
];

/// One bad variable: printed as `VAR: reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub var: &'static str,
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.var, self.reason)
    }
}

impl std::error::Error for ConfigError {}

/// Which defaults apply: a deployment's, or the laptop's of `tns dev` (local addresses
/// allowed, relaxed limits, throw-away secrets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Deployed,
    Dev,
}

impl Profile {
    pub fn is_dev(self) -> bool {
        self == Profile::Dev
    }
}

/// The variables, from any source: the process environment, or a map in tests.
pub struct Vars<'a>(&'a dyn Fn(&str) -> Option<String>);

impl<'a> Vars<'a> {
    pub fn new(lookup: &'a dyn Fn(&str) -> Option<String>) -> Vars<'a> {
        Vars(lookup)
    }

    /// Empty counts as unset, so `VAR=` in an env file means "use the default".
    pub fn get(&self, var: &str) -> Option<String> {
        (self.0)(var).filter(|v| !v.trim().is_empty())
    }

    pub fn bad(&self, var: &'static str, reason: &str) -> ConfigError {
        ConfigError { var, reason: reason.to_string() }
    }

    pub fn parse<T: std::str::FromStr>(
        &self,
        var: &'static str,
        default: &str,
        expected: &str,
    ) -> Result<T, ConfigError> {
        let raw = self.get(var).unwrap_or_else(|| default.to_string());
        raw.trim().parse().map_err(|_| self.bad(var, &format!("`{raw}` is not {expected}")))
    }

    pub fn parse_int(&self, var: &'static str, default: u64, min: u64, max: u64) -> Result<u64, ConfigError> {
        let v: u64 = self.parse(var, &default.to_string(), "a whole number")?;
        if v < min || v > max {
            return Err(self.bad(var, &format!("must be between {min} and {max}, got {v}")));
        }
        Ok(v)
    }

    pub fn parse_secs(&self, var: &'static str, default: u64, min: u64, max: u64) -> Result<Duration, ConfigError> {
        self.parse_int(var, default, min, max).map(Duration::from_secs)
    }

    pub fn parse_bool(&self, var: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.get(var).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None => Ok(default),
            Some("true" | "1" | "yes") => Ok(true),
            Some("false" | "0" | "no") => Ok(false),
            Some(_) => Err(self.bad(var, "must be `true` or `false`")),
        }
    }

    pub fn url(&self, var: &'static str, default: &str, schemes: &[&str]) -> Result<String, ConfigError> {
        let v = self.get(var).unwrap_or_else(|| default.to_string());
        if !schemes.iter().any(|s| v.starts_with(s)) {
            return Err(self.bad(var, &format!("must start with one of {}", schemes.join(", "))));
        }
        Ok(v)
    }
}

/// Redis: where, and the prefix of every key (deployments may share one Redis).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisSettings {
    pub url: String,
    pub prefix: String,
}

impl RedisSettings {
    pub fn from_vars(vars: &Vars<'_>) -> Result<RedisSettings, ConfigError> {
        Ok(RedisSettings {
            url: vars.url("TNS_REDIS_URL", "redis://127.0.0.1:6379", &["redis://", "rediss://", "unix://"])?,
            prefix: vars.get("TNS_REDIS_PREFIX").unwrap_or_else(|| "tns:".into()),
        })
    }

    /// The key holding an organization's published limit and standing, which every API
    /// process admits its calls against.
    pub fn limit_key(&self, org: OrgId) -> String {
        format!("{}{}", self.prefix, limit_key_suffix(org))
    }
}

/// [`RedisSettings::limit_key`] without the prefix.
pub fn limit_key_suffix(org: OrgId) -> String {
    format!("limit:{org}")
}

/// The key (without the prefix) of an organization-month's usage counters, a hash of
/// `total`, `t|<route>` calls, `e|<route>` errors and `overage` (calls beyond a soft quota).
pub fn usage_key_suffix(org: OrgId, month: crate::domain::month::Month) -> String {
    format!("usage:{org}:{month}")
}

/// The key (without the prefix) of the leases API processes hold on an organization-month's
/// call numbers (see `tns_store::published`).
pub fn lease_key_suffix(org: OrgId, month: crate::domain::month::Month) -> String {
    format!("lease:{org}:{month}")
}

/// The channel (after the prefix) on which an organization's leases are recalled; the message
/// is the organization's id.
pub const LEASE_RECALL_CHANNEL: &str = "quota:recall";

/// `TNS_AUTH_RATE_LIMIT` per `TNS_AUTH_RATE_WINDOW_SECS`: the unauthenticated requests a client
/// may send to the API, and, counted apart, the refused credentials it may send to the API or
/// the admin API before unknown ones are no longer looked up for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthRate {
    pub limit: u64,
    pub window: std::time::Duration,
}

impl AuthRate {
    pub fn from_vars(vars: &Vars<'_>, profile: Profile) -> Result<AuthRate, ConfigError> {
        let default = if profile.is_dev() { 10_000 } else { 60 };
        Ok(AuthRate {
            limit: vars.parse_int("TNS_AUTH_RATE_LIMIT", default, 1, u32::MAX as u64)?,
            window: vars.parse_secs("TNS_AUTH_RATE_WINDOW_SECS", 60, 1, 86_400)?,
        })
    }
}

/// Where a process serves: its port (`TNS_LISTEN_ADDR`) and `/metrics` on a listener of its
/// own (`TNS_METRICS_ADDR`), which a Service or Ingress for the first need not expose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listen {
    pub addr: std::net::SocketAddr,
    pub metrics: std::net::SocketAddr,
}

impl Listen {
    /// `tns dev` listens on loopback only (see [`dev_stays_local`]).
    pub fn from_vars(vars: &Vars<'_>, profile: Profile) -> Result<Listen, ConfigError> {
        let host = if profile.is_dev() { "127.0.0.1" } else { "0.0.0.0" };
        let addr: std::net::SocketAddr =
            vars.parse("TNS_LISTEN_ADDR", &format!("{host}:8080"), "a socket address such as 0.0.0.0:8080")?;
        let metrics: std::net::SocketAddr =
            vars.parse("TNS_METRICS_ADDR", &format!("{host}:9090"), "a socket address such as 0.0.0.0:9090")?;
        for (var, at) in [("TNS_LISTEN_ADDR", addr), ("TNS_METRICS_ADDR", metrics)] {
            dev_stays_local(vars, profile, var, at)?;
        }
        Ok(Listen { addr, metrics })
    }
}

/// `tns dev` listens on loopback only unless `TNS_DEV_ALLOW_REMOTE` says otherwise: it runs
/// with a public data key, a throw-away signing secret and relaxed limits. `var` names `at`.
pub fn dev_stays_local(
    vars: &Vars<'_>,
    profile: Profile,
    var: &'static str,
    at: std::net::SocketAddr,
) -> Result<(), ConfigError> {
    if profile.is_dev() && !vars.parse_bool("TNS_DEV_ALLOW_REMOTE", false)? && !at.ip().is_loopback() {
        return Err(vars.bad(
            var,
            "`tns dev` listens on loopback only (it uses a public data key and relaxed limits); set \
             TNS_DEV_ALLOW_REMOTE=true to listen elsewhere anyway",
        ));
    }
    Ok(())
}
