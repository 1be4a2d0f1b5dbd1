//! The API role's settings, parsed from `TNS_*` variables (README.md lists them with their
//! defaults).

use std::{fmt, time::Duration};

use tns_core::{
    basis::Basis,
    env::{AuthRate, ConfigError, RedisSettings, Vars},
    guard::Policy,
    sealing::DataKey,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailMode {
    /// Redis unreachable: keep serving, count locally, catch up later.
    Open,
    /// Redis unreachable: answer 503 rather than serve uncounted calls.
    Closed,
}

/// How calls are metered against the monthly quota.
#[derive(Debug, Clone, Copy)]
pub struct QuotaSettings {
    /// `TNS_QUOTA_ENABLED`: off, nothing is counted or refused for quota.
    pub enabled: bool,
    pub fail_mode: FailMode,
    /// Fail-open: calls one process admits per organization and month beyond the last persisted
    /// total while Redis is unreachable.
    pub fail_open_allowance: i64,
    pub lease: crate::quota_lease::LeaseSettings,
}

impl QuotaSettings {
    fn from_vars(vars: &Vars<'_>) -> Result<QuotaSettings, ConfigError> {
        Ok(QuotaSettings {
            enabled: vars.parse_bool("TNS_QUOTA_ENABLED", true)?,
            fail_open_allowance: vars.parse_int("TNS_QUOTA_FAIL_OPEN_ALLOWANCE", 200, 0, 1_000_000)? as i64,
            lease: crate::quota_lease::LeaseSettings {
                max: vars.parse_int("TNS_QUOTA_LEASE_MAX", 256, 0, 100_000)? as i64,
                life: Duration::from_millis(vars.parse_int("TNS_QUOTA_LEASE_MS", 1000, 50, 5000)?),
            },
            fail_mode: match vars.get("TNS_QUOTA_FAIL_MODE").as_deref() {
                None | Some("open") => FailMode::Open,
                Some("closed") => FailMode::Closed,
                Some(_) => return Err(vars.bad("TNS_QUOTA_FAIL_MODE", "must be `open` or `closed`")),
            },
        })
    }
}

pub const MIN_SECRET_BYTES: usize = 32;

#[derive(Clone)]
pub struct ApiSettings {
    /// The longest a request may take before it is answered 503 (keep it above the 30 s a
    /// `Prefer: wait` may take).
    pub request_timeout: Duration,
    /// What the listener allows a client (header deadline, open connections).
    pub http: crate::serve::Limits,
    pub redis: RedisSettings,
    /// How long a new organization's trial lasts.
    pub trial_days: u32,
    /// KDV and days to pay, for previewing the next invoice.
    pub invoices: tns_store::billing::invoices::Terms,
    /// Where e-mail to members goes (invitations, password resets).
    pub mailer: crate::mail::Mailer,
    /// This deployment's address as people reach it (`TNS_PUBLIC_URL`), for the links in
    /// e-mail; never taken from a request's `Host` (a reset link must not point elsewhere).
    pub public_url: Option<String>,
    /// Signs access tokens. Never printed.
    pub signing_secret: Vec<u8>,
    /// Seals webhook secrets and downstream passwords (the scheduler opens them).
    pub data_key: DataKey,
    /// Which webhook endpoints a subscription may name.
    pub webhook_policy: Policy,
    /// The deadline of the adapter calls the API makes itself (credentials, reports).
    pub adapter_call_timeout: Duration,
    pub cookie_secure: bool,
    pub quota: QuotaSettings,
    pub auth_rate_limit: u64,
    pub auth_rate_window: Duration,
    pub auth_cache_ttl: Duration,
    pub usage_flush_interval: Duration,
    /// Days a closed organization may be reopened before the jobs role erases it.
    pub organization_grace_days: u32,
    pub session_ttl: Duration,
    pub trust_forwarded_for: bool,
    /// The addresses this deployment calls the downstream from (`TNS_EGRESS_IPS`), which
    /// organizations register at U-ETDS.
    pub egress_addresses: Vec<String>,
}

// The secrets must never reach a log line, so Debug is written by hand.
impl fmt::Debug for ApiSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiSettings")
            .field("redis_prefix", &self.redis.prefix)
            .field("signing_secret", &"<redacted>")
            .field("quota", &self.quota)
            .finish_non_exhaustive()
    }
}

impl ApiSettings {
    /// Outside `tns dev` the signing secret is required; `tns dev` gets a throw-away one.
    pub fn from_vars(vars: &Vars<'_>, basis: &Basis) -> Result<ApiSettings, ConfigError> {
        let profile = basis.profile;
        let dev = profile.is_dev();
        let signing_secret = match vars.get("TNS_SIGNING_SECRET") {
            Some(s) if s.len() >= MIN_SECRET_BYTES => s.into_bytes(),
            Some(_) => {
                return Err(vars.bad("TNS_SIGNING_SECRET", &format!("must be at least {MIN_SECRET_BYTES} bytes long")))
            }
            None if dev => {
                use rand::RngCore;
                let mut b = [0u8; 32];
                rand::thread_rng().fill_bytes(&mut b);
                hex::encode(b).into_bytes()
            }
            None => {
                return Err(vars.bad(
                    "TNS_SIGNING_SECRET",
                    &format!("is required outside `tns dev` (a random string of at least {MIN_SECRET_BYTES} bytes)"),
                ))
            }
        };
        let cache_ttl_ms = vars.parse_int("TNS_AUTH_CACHE_TTL_MS", 2000, 0, 4000)?;
        let auth_rate = AuthRate::from_vars(vars, profile)?;
        Ok(ApiSettings {
            request_timeout: vars.parse_secs("TNS_REQUEST_TIMEOUT_SECS", 60, 1, 600)?,
            http: crate::serve::Limits {
                header_read_timeout: vars.parse_secs("TNS_HEADER_READ_TIMEOUT_SECS", 10, 1, 300)?,
                max_connections: vars.parse_int("TNS_MAX_CONNECTIONS", 10_000, 1, 1_000_000)? as usize,
            },
            redis: RedisSettings::from_vars(vars)?,
            trial_days: vars.parse_int("TNS_TRIAL_DAYS", 14, 1, 365)? as u32,
            invoices: tns_store::billing::invoices::Terms::from_vars(vars)?,
            mailer: crate::mail::Mailer::from_vars(vars, profile)?,
            public_url: public_url(vars, dev)?,
            signing_secret,
            data_key: basis.data_key.clone(),
            webhook_policy: basis.policy,
            adapter_call_timeout: basis.call_timeout,
            cookie_secure: vars.parse_bool("TNS_COOKIE_SECURE", !dev)?,
            quota: QuotaSettings::from_vars(vars)?,
            auth_rate_limit: auth_rate.limit,
            auth_rate_window: auth_rate.window,
            auth_cache_ttl: Duration::from_millis(cache_ttl_ms),
            usage_flush_interval: vars.parse_secs("TNS_USAGE_FLUSH_SECS", 5, 1, 300)?,
            organization_grace_days: vars.parse_int("TNS_ORGANIZATION_GRACE_DAYS", 30, 1, 365)? as u32,
            session_ttl: vars.parse_secs("TNS_SESSION_TTL_SECS", 43_200, 60, 30 * 86_400)?,
            trust_forwarded_for: vars.parse_bool("TNS_TRUST_FORWARDED_FOR", false)?,
            egress_addresses: egress_addresses(vars)?,
        })
    }
}

/// `TNS_EGRESS_IPS`: comma-separated IP addresses (none when unset).
fn egress_addresses(vars: &Vars<'_>) -> Result<Vec<String>, ConfigError> {
    let raw = vars.get("TNS_EGRESS_IPS").unwrap_or_default();
    raw.split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(|a| {
            a.parse::<std::net::IpAddr>()
                .map(|ip| ip.to_string())
                .map_err(|_| vars.bad("TNS_EGRESS_IPS", &format!("`{a}` is not an IP address")))
        })
        .collect()
}

/// `TNS_PUBLIC_URL`: `http(s)://host[:port]`, no path; `tns dev` assumes its own address.
fn public_url(vars: &Vars<'_>, dev: bool) -> Result<Option<String>, ConfigError> {
    let Some(url) = vars.get("TNS_PUBLIC_URL") else {
        return Ok(
            dev.then(|| format!("http://{}", vars.get("TNS_LISTEN_ADDR").unwrap_or_else(|| "127.0.0.1:8080".into())))
        );
    };
    let url = url.trim_end_matches('/').to_string();
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !host.contains('/') && !host.contains(char::is_whitespace) => Ok(Some(url)),
        _ => Err(vars.bad("TNS_PUBLIC_URL", "must be `https://host[:port]` (scheme and host, no path)")),
    }
}
