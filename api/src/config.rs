//! Configuration: environment variables only, parsed once at start-up.
//!
//! Every variable is documented in README.md with its default. A bad value stops start-up
//! with one line naming the variable and what is wrong with it.

use std::{
    fmt,
    net::SocketAddr,
    path::{Path, PathBuf},
    time::Duration,
};

use tns_scheduler::{
    adapters::AdapterSettings,
    settings::{
        default_org_concurrency, parse_schedule, WebhookSettings, DEFAULT_WEBHOOK_SCHEDULE, WEBHOOK_RECORD_MARGIN,
    },
    webhooks::sealing::DataKey,
};

/// Which parts of TNS this process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Api,
    Scheduler,
    Migrate,
    /// Everything in one process, with laptop-friendly defaults.
    Dev,
    /// List the adapter plugins that load, and exit.
    Adapters,
}

impl Role {
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "api" => Some(Role::Api),
            "scheduler" => Some(Role::Scheduler),
            "migrate" => Some(Role::Migrate),
            "dev" => Some(Role::Dev),
            "adapters" => Some(Role::Adapters),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailMode {
    /// Redis unreachable: keep serving, count locally, catch up later.
    Open,
    /// Redis unreachable: answer 503 rather than serve uncounted calls.
    Closed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Clone)]
pub struct Config {
    pub role: Role,
    pub listen_addr: SocketAddr,
    /// Where `/metrics` is served: a listener of its own, which the API's Service and Ingress
    /// need not expose.
    pub metrics_addr: SocketAddr,
    /// The longest a request may take before it is answered 503 (keep it above the 30 s a
    /// `Prefer: wait` may take).
    pub request_timeout: Duration,
    pub database_url: String,
    pub db_max_connections: u32,
    pub redis_url: String,
    pub redis_prefix: String,
    pub signing_secret: Vec<u8>,
    pub cookie_secure: bool,
    pub quota_enabled: bool,
    pub quota_fail_mode: FailMode,
    /// Fail-open: calls one process admits per organization and month beyond the last persisted
    /// total while Redis is unreachable.
    pub quota_fail_open_allowance: i64,
    pub auth_rate_limit: u64,
    pub auth_rate_window: Duration,
    pub auth_cache_ttl: Duration,
    pub usage_flush_interval: Duration,
    pub session_ttl: Duration,
    pub trust_forwarded_for: bool,
    pub migrate_on_start: bool,
    pub log_format: LogFormat,
    pub adapters: AdapterSettings,
    pub scheduler: tns_scheduler::Settings,
}

// The secret must never reach a log line, so Debug is written by hand.
impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("role", &self.role)
            .field("listen_addr", &self.listen_addr)
            .field("db_max_connections", &self.db_max_connections)
            .field("redis_prefix", &self.redis_prefix)
            .field("signing_secret", &"<redacted>")
            .field("quota_enabled", &self.quota_enabled)
            .field("quota_fail_mode", &self.quota_fail_mode)
            .finish_non_exhaustive()
    }
}

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

pub const MIN_SECRET_BYTES: usize = 32;

impl Config {
    pub fn from_env(role: Role) -> Result<Config, ConfigError> {
        Config::from_lookup(role, |k| std::env::var(k).ok())
    }

    /// Parse from any variable source; tests pass a map.
    pub fn from_lookup(role: Role, lookup: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let vars = Vars(&lookup);
        let dev = role == Role::Dev;
        let signing_secret = match vars.get("TNS_SIGNING_SECRET") {
            Some(s) if s.len() >= MIN_SECRET_BYTES => s.into_bytes(),
            Some(_) => {
                return Err(ConfigError {
                    var: "TNS_SIGNING_SECRET",
                    reason: format!("must be at least {MIN_SECRET_BYTES} bytes long"),
                })
            }
            // Only the API signs anything; a dev box gets a throw-away secret.
            None if dev || matches!(role, Role::Migrate | Role::Scheduler | Role::Adapters) => {
                use rand::RngCore;
                let mut b = [0u8; 32];
                rand::thread_rng().fill_bytes(&mut b);
                hex::encode(b).into_bytes()
            }
            None => {
                return Err(ConfigError {
                    var: "TNS_SIGNING_SECRET",
                    reason: format!(
                        "is required outside `tns dev` (a random string of at least {MIN_SECRET_BYTES} bytes)"
                    ),
                })
            }
        };
        let window = vars.parse_secs("TNS_AUTH_RATE_WINDOW_SECS", 60, 1, 86_400)?;
        let cache_ttl_ms = vars.parse_int("TNS_AUTH_CACHE_TTL_MS", 2000, 0, 4000)?;
        let scheduler = scheduler_settings(&vars, role)?;
        let listen_addr: SocketAddr = vars.parse(
            "TNS_LISTEN_ADDR",
            if dev { "127.0.0.1:8080" } else { "0.0.0.0:8080" },
            "a socket address such as 0.0.0.0:8080",
        )?;
        // `dev` runs with a public data key, a throw-away signing secret and relaxed limits: on
        // a laptop, not on a network, unless told so.
        if dev && !listen_addr.ip().is_loopback() && !vars.parse_bool("TNS_DEV_ALLOW_REMOTE", false)? {
            return Err(vars.bad(
                "TNS_LISTEN_ADDR",
                "`tns dev` listens on loopback only (it uses a public data key and relaxed limits); set \
                 TNS_DEV_ALLOW_REMOTE=true to listen elsewhere anyway",
            ));
        }
        Ok(Config {
            role,
            listen_addr,
            request_timeout: vars.parse_secs("TNS_REQUEST_TIMEOUT_SECS", 60, 1, 600)?,
            metrics_addr: vars.parse(
                "TNS_METRICS_ADDR",
                if dev { "127.0.0.1:9090" } else { "0.0.0.0:9090" },
                "a socket address such as 0.0.0.0:9090",
            )?,
            database_url: vars.url(
                "TNS_DATABASE_URL",
                "postgres://postgres@127.0.0.1:5432/tns",
                &["postgres://", "postgresql://"],
            )?,
            db_max_connections: vars.parse_int("TNS_DB_MAX_CONNECTIONS", 20, 1, 1000)? as u32,
            redis_url: vars.url("TNS_REDIS_URL", "redis://127.0.0.1:6379", &["redis://", "rediss://", "unix://"])?,
            redis_prefix: vars.get("TNS_REDIS_PREFIX").unwrap_or_else(|| "tns:".into()),
            signing_secret,
            cookie_secure: vars.parse_bool("TNS_COOKIE_SECURE", !dev)?,
            quota_enabled: vars.parse_bool("TNS_QUOTA_ENABLED", true)?,
            quota_fail_open_allowance: vars.parse_int("TNS_QUOTA_FAIL_OPEN_ALLOWANCE", 200, 0, 1_000_000)? as i64,
            quota_fail_mode: match vars.get("TNS_QUOTA_FAIL_MODE").as_deref() {
                None | Some("open") => FailMode::Open,
                Some("closed") => FailMode::Closed,
                Some(_) => return Err(vars.bad("TNS_QUOTA_FAIL_MODE", "must be `open` or `closed`")),
            },
            auth_rate_limit: vars.parse_int(
                "TNS_AUTH_RATE_LIMIT",
                if dev { 10_000 } else { 60 },
                1,
                u32::MAX as u64,
            )?,
            auth_rate_window: window,
            auth_cache_ttl: Duration::from_millis(cache_ttl_ms),
            usage_flush_interval: vars.parse_secs("TNS_USAGE_FLUSH_SECS", 15, 1, 3600)?,
            session_ttl: vars.parse_secs("TNS_SESSION_TTL_SECS", 43_200, 60, 30 * 86_400)?,
            trust_forwarded_for: vars.parse_bool("TNS_TRUST_FORWARDED_FOR", false)?,
            migrate_on_start: vars.parse_bool("TNS_MIGRATE_ON_START", true)?,
            adapters: AdapterSettings {
                dir: match vars.get("TNS_ADAPTER_DIR") {
                    Some(d) => PathBuf::from(d),
                    // Next to the binary, where cargo and the container image put the plugins.
                    None => std::env::current_exe()
                        .ok()
                        .and_then(|p| p.parent().map(Path::to_path_buf))
                        .unwrap_or_else(|| PathBuf::from(".")),
                },
                sandbox_state_dir: vars.get("TNS_SANDBOX_STATE_DIR").map(PathBuf::from),
                uetds: uetds_config(&vars, &scheduler)?,
            },
            scheduler,
            log_format: match vars.get("TNS_LOG_FORMAT").as_deref() {
                None | Some("text") => LogFormat::Text,
                Some("json") => LogFormat::Json,
                Some(_) => return Err(vars.bad("TNS_LOG_FORMAT", "must be `text` or `json`")),
            },
        })
    }
}

/// The U-ETDS plugin's configuration (its JSON; the plugin checks it again when it loads).
fn uetds_config<F: Fn(&str) -> Option<String>>(
    vars: &Vars<'_, F>,
    scheduler: &tns_scheduler::Settings,
) -> Result<serde_json::Value, ConfigError> {
    let http_url = |var: &'static str, v: &str| -> Result<String, ConfigError> {
        let ok = (v.starts_with("https://") || v.starts_with("http://")) && v.len() > "https://".len();
        if ok {
            Ok(v.trim_end_matches('/').to_string())
        } else {
            Err(vars.bad(var, "must be an http:// or https:// URL"))
        }
    };
    let base_url = match vars.get("TNS_UETDS_BASE_URL") {
        Some(v) => {
            let url = http_url("TNS_UETDS_BASE_URL", &v)?;
            // Only scheme, host and port: the services' paths stay U-ETDS's own.
            if url.splitn(4, '/').nth(3).is_some_and(|path| !path.is_empty()) {
                return Err(vars.bad("TNS_UETDS_BASE_URL", "must be scheme, host and port only (no path)"));
            }
            url
        }
        None => "https://servis.turkiye.gov.tr".to_string(),
    };
    let mut endpoints = serde_json::Map::new();
    for pair in vars.get("TNS_UETDS_ENDPOINTS").unwrap_or_default().split(',').filter(|p| !p.trim().is_empty()) {
        let (key, url) = pair.split_once('=').ok_or_else(|| {
            vars.bad("TNS_UETDS_ENDPOINTS", "must be `service.environment=url` pairs separated by commas")
        })?;
        let key = key.trim();
        let (service, env) = key.split_once('.').unwrap_or((key, ""));
        if !["arizi", "esya", "tarifeli"].contains(&service) || !["test", "production"].contains(&env) {
            return Err(vars.bad(
                "TNS_UETDS_ENDPOINTS",
                &format!("`{key}`: the service is arizi, esya or tarifeli and the environment test or production"),
            ));
        }
        endpoints.insert(key.to_string(), http_url("TNS_UETDS_ENDPOINTS", url.trim())?.into());
    }
    // One plugin call may make a few SOAP calls (reconciling reads a list, then the trips in
    // it): each must end well before the scheduler stops waiting for the plugin call.
    let half = (scheduler.call_timeout / 2).max(Duration::from_millis(500));
    let call_timeout = match vars.get("TNS_UETDS_CALL_TIMEOUT_SECS") {
        None => half.min(Duration::from_secs(20)),
        Some(_) => {
            let t = vars.parse_secs("TNS_UETDS_CALL_TIMEOUT_SECS", 20, 1, 300)?;
            if t > half {
                return Err(vars.bad("TNS_UETDS_CALL_TIMEOUT_SECS", "must be at most half of TNS_ADAPTER_TIMEOUT_SECS"));
            }
            t
        }
    };
    let mut operations = serde_json::Map::new();
    for pair in
        vars.get("TNS_UETDS_TARIFELI_OPERATIONS").unwrap_or_default().split(',').filter(|p| !p.trim().is_empty())
    {
        let (ours, theirs) = pair.split_once('=').ok_or_else(|| {
            vars.bad("TNS_UETDS_TARIFELI_OPERATIONS", "must be `operation=name` pairs separated by commas")
        })?;
        operations.insert(ours.trim().to_string(), theirs.trim().into());
    }
    Ok(serde_json::json!({
        "base_url": base_url,
        "endpoints": endpoints,
        "connect_timeout_ms": vars.parse_secs("TNS_UETDS_CONNECT_TIMEOUT_SECS", 10, 1, 120)?.as_millis() as u64,
        "call_timeout_ms": call_timeout.as_millis() as u64,
        "ca_file": vars.get("TNS_UETDS_CA_FILE"),
        "goods_cancel_code": vars.parse_int("TNS_UETDS_GOODS_CANCEL_CODE", 1, 0, 99)?,
        "tarifeli": {
            "namespace": vars.get("TNS_UETDS_TARIFELI_NAMESPACE"),
            "action_prefix": vars.get("TNS_UETDS_TARIFELI_ACTION_PREFIX"),
            "operations": operations,
        },
    }))
}

fn scheduler_settings<F: Fn(&str) -> Option<String>>(
    vars: &Vars<'_, F>,
    role: Role,
) -> Result<tns_scheduler::Settings, ConfigError> {
    let ms = Duration::from_millis;
    let call_timeout = vars.parse_secs("TNS_ADAPTER_TIMEOUT_SECS", 60, 1, 600)?;
    let lease = vars.parse_secs("TNS_SCHEDULER_LEASE_SECS", 300, 2, 7200)?;
    // A call starts only if it can end, and be recorded, inside the lease; a lease shorter than
    // that would never let one start.
    if lease <= call_timeout + tns_scheduler::attempt::record_margin(lease) {
        return Err(vars.bad(
            "TNS_SCHEDULER_LEASE_SECS",
            "must be longer than TNS_ADAPTER_TIMEOUT_SECS plus the recording margin (5 s, or a quarter of the lease)",
        ));
    }
    Ok(tns_scheduler::Settings {
        batch: vars.parse_int("TNS_SCHEDULER_BATCH", 64, 1, 1000)? as usize,
        max_in_flight: vars.parse_int("TNS_SCHEDULER_MAX_IN_FLIGHT", 256, 1, 10_000)? as usize,
        adapter_concurrency: vars.parse_int("TNS_ADAPTER_CONCURRENCY", 64, 1, 1024)? as usize,
        call_timeout,
        lease,
        poll_interval: ms(vars.parse_int("TNS_SCHEDULER_POLL_MS", 1000, 10, 60_000)?),
        retry: tns_scheduler::Backoff {
            base: ms(vars.parse_int("TNS_RETRY_BASE_MS", 2000, 1, 600_000)?),
            cap: vars.parse_secs("TNS_RETRY_CAP_SECS", 3600, 1, 86_400)?,
            window: vars.parse_secs("TNS_RETRY_WINDOW_SECS", 86_400, 0, 30 * 86_400)?,
        },
        shutdown_grace: vars.parse_secs("TNS_SCHEDULER_SHUTDOWN_GRACE_SECS", 25, 0, 3600)?,
        db_connections: vars.parse_int("TNS_SCHEDULER_DB_CONNECTIONS", 4, 1, 100)? as u32,
        webhooks: webhook_settings(vars, role)?,
    })
}

/// Webhook delivery, and the data key that seals subscription secrets (the API seals, the
/// scheduler unseals: both need the same key).
fn webhook_settings<F: Fn(&str) -> Option<String>>(
    vars: &Vars<'_, F>,
    role: Role,
) -> Result<WebhookSettings, ConfigError> {
    let data_key = match vars.get("TNS_DATA_KEY") {
        Some(k) => {
            DataKey::from_hex(&k).ok_or_else(|| vars.bad("TNS_DATA_KEY", "must be 64 hexadecimal digits (32 bytes)"))?
        }
        None => match role {
            Role::Api | Role::Scheduler => {
                return Err(vars.bad(
                    "TNS_DATA_KEY",
                    "is required outside `tns dev` (64 hexadecimal digits, e.g. `openssl rand -hex 32`)",
                ))
            }
            // A fixed, public key: `tns dev` data is not secret, and a dev database must
            // stay readable across restarts.
            Role::Dev => DataKey::new(*b"tns dev data key: not a secret!!"),
            Role::Migrate | Role::Adapters => DataKey::new([0; 32]),
        },
    };
    let schedule = vars.get("TNS_WEBHOOK_RETRY_SCHEDULE").unwrap_or_else(|| DEFAULT_WEBHOOK_SCHEDULE.to_string());
    let timeout = vars.parse_secs("TNS_WEBHOOK_TIMEOUT_SECS", 10, 1, 60)?;
    let lease = vars.parse_secs("TNS_WEBHOOK_LEASE_SECS", 120, 2, 3600)?;
    // A POST must end, and be recorded, inside its lease (or a second scheduler could send the
    // delivery meanwhile); a held delivery that cannot start in time is given back. The lease
    // leaves room to wait for a slot besides.
    if lease < timeout * WebhookSettings::MIN_LEASE_TIMEOUTS + WEBHOOK_RECORD_MARGIN {
        return Err(vars.bad(
            "TNS_WEBHOOK_LEASE_SECS",
            &format!(
                "must be at least {} × TNS_WEBHOOK_TIMEOUT_SECS + {} s",
                WebhookSettings::MIN_LEASE_TIMEOUTS,
                WEBHOOK_RECORD_MARGIN.as_secs()
            ),
        ));
    }
    let concurrency = vars.parse_int("TNS_WEBHOOK_CONCURRENCY", 64, 1, 4096)?;
    let org_concurrency = vars.parse_int(
        "TNS_WEBHOOK_ORG_CONCURRENCY",
        default_org_concurrency(concurrency as usize) as u64,
        1,
        concurrency,
    )?;
    Ok(WebhookSettings {
        data_key,
        schedule: parse_schedule(&schedule).map_err(|e| vars.bad("TNS_WEBHOOK_RETRY_SCHEDULE", &e))?,
        jitter: 0.2,
        retry_after_cap: vars.parse_secs("TNS_WEBHOOK_RETRY_AFTER_CAP_SECS", 12 * 3600, 1, 7 * 86_400)?,
        timeout,
        concurrency: concurrency as usize,
        org_concurrency: org_concurrency as usize,
        lease,
        disable_after: vars.parse_secs("TNS_WEBHOOK_DISABLE_AFTER_SECS", 5 * 86_400, 1, 365 * 86_400)?,
        allow_private: vars.parse_bool("TNS_WEBHOOK_ALLOW_PRIVATE", role == Role::Dev)?,
        allow_http: vars.parse_bool("TNS_WEBHOOK_ALLOW_HTTP", role == Role::Dev)?,
    })
}

struct Vars<'a, F: Fn(&str) -> Option<String>>(&'a F);

impl<F: Fn(&str) -> Option<String>> Vars<'_, F> {
    /// Empty counts as unset, so `VAR=` in an env file means "use the default".
    fn get(&self, var: &str) -> Option<String> {
        (self.0)(var).filter(|v| !v.trim().is_empty())
    }

    fn bad(&self, var: &'static str, reason: &str) -> ConfigError {
        ConfigError { var, reason: reason.to_string() }
    }

    fn parse<T: std::str::FromStr>(&self, var: &'static str, default: &str, expected: &str) -> Result<T, ConfigError> {
        let raw = self.get(var).unwrap_or_else(|| default.to_string());
        raw.trim().parse().map_err(|_| self.bad(var, &format!("`{raw}` is not {expected}")))
    }

    fn parse_int(&self, var: &'static str, default: u64, min: u64, max: u64) -> Result<u64, ConfigError> {
        let v: u64 = self.parse(var, &default.to_string(), "a whole number")?;
        if v < min || v > max {
            return Err(self.bad(var, &format!("must be between {min} and {max}, got {v}")));
        }
        Ok(v)
    }

    fn parse_secs(&self, var: &'static str, default: u64, min: u64, max: u64) -> Result<Duration, ConfigError> {
        self.parse_int(var, default, min, max).map(Duration::from_secs)
    }

    fn parse_bool(&self, var: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.get(var).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None => Ok(default),
            Some("true" | "1" | "yes") => Ok(true),
            Some("false" | "0" | "no") => Ok(false),
            Some(_) => Err(self.bad(var, "must be `true` or `false`")),
        }
    }

    fn url(&self, var: &'static str, default: &str, schemes: &[&str]) -> Result<String, ConfigError> {
        let v = self.get(var).unwrap_or_else(|| default.to_string());
        if !schemes.iter().any(|s| v.starts_with(s)) {
            return Err(self.bad(var, &format!("must start with one of {}", schemes.join(", "))));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(role: Role, vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let m: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(role, |k| m.get(k).cloned())
    }

    #[test]
    fn api_requires_a_long_enough_secret() {
        assert_eq!(parse(Role::Api, &[]).unwrap_err().var, "TNS_SIGNING_SECRET");
        assert_eq!(parse(Role::Api, &[("TNS_SIGNING_SECRET", "short")]).unwrap_err().var, "TNS_SIGNING_SECRET");
        let secret = "x".repeat(32);
        assert_eq!(parse(Role::Api, &[("TNS_SIGNING_SECRET", &secret)]).unwrap_err().var, "TNS_DATA_KEY");
        let key = "ab".repeat(32);
        assert_eq!(
            parse(Role::Api, &[("TNS_SIGNING_SECRET", &secret), ("TNS_DATA_KEY", "abcd")]).unwrap_err().var,
            "TNS_DATA_KEY"
        );
        let c = parse(Role::Api, &[("TNS_SIGNING_SECRET", &secret), ("TNS_DATA_KEY", &key)]).unwrap();
        assert!(!c.scheduler.webhooks.allow_private, "internal addresses refused outside dev");
        assert!(c.cookie_secure);
        assert_eq!(c.auth_rate_limit, 60);
    }

    #[test]
    fn dev_stays_on_loopback_unless_told_otherwise() {
        let e = parse(Role::Dev, &[("TNS_LISTEN_ADDR", "0.0.0.0:8080")]).unwrap_err();
        assert_eq!(e.var, "TNS_LISTEN_ADDR");
        assert!(e.reason.contains("TNS_DEV_ALLOW_REMOTE"), "{}", e.reason);
        assert!(parse(Role::Dev, &[("TNS_LISTEN_ADDR", "0.0.0.0:8080"), ("TNS_DEV_ALLOW_REMOTE", "true")]).is_ok());
        assert!(parse(Role::Dev, &[("TNS_LISTEN_ADDR", "[::1]:8080")]).is_ok());
    }

    #[test]
    fn dev_has_laptop_defaults() {
        let c = parse(Role::Dev, &[]).unwrap();
        assert!(!c.cookie_secure);
        assert_eq!(c.listen_addr.to_string(), "127.0.0.1:8080");
        assert_eq!(c.signing_secret.len(), 64);
        assert!(c.scheduler.webhooks.allow_private, "dev delivers to local receivers");
        assert_eq!(c.scheduler.webhooks.schedule.len(), 9);
    }

    #[test]
    fn bad_values_name_their_variable() {
        let e = parse(Role::Dev, &[("TNS_DB_MAX_CONNECTIONS", "many")]).unwrap_err();
        assert_eq!(e.to_string(), "TNS_DB_MAX_CONNECTIONS: `many` is not a whole number");
        let e = parse(Role::Dev, &[("TNS_AUTH_CACHE_TTL_MS", "9000")]).unwrap_err();
        assert_eq!(e.var, "TNS_AUTH_CACHE_TTL_MS");
        let e = parse(Role::Dev, &[("TNS_REDIS_URL", "http://x")]).unwrap_err();
        assert_eq!(e.var, "TNS_REDIS_URL");
        let e = parse(Role::Dev, &[("TNS_QUOTA_FAIL_MODE", "maybe")]).unwrap_err();
        assert_eq!(e.var, "TNS_QUOTA_FAIL_MODE");
        let e = parse(Role::Dev, &[("TNS_WEBHOOK_RETRY_SCHEDULE", "5s,soon")]).unwrap_err();
        assert_eq!(e.var, "TNS_WEBHOOK_RETRY_SCHEDULE");
        // The lease must hold two timeouts and the recording margin: 2 × 30 s + 5 s.
        let e = parse(Role::Dev, &[("TNS_WEBHOOK_TIMEOUT_SECS", "30"), ("TNS_WEBHOOK_LEASE_SECS", "64")]).unwrap_err();
        assert_eq!(e.var, "TNS_WEBHOOK_LEASE_SECS");
        assert!(parse(Role::Dev, &[("TNS_WEBHOOK_TIMEOUT_SECS", "30"), ("TNS_WEBHOOK_LEASE_SECS", "65")]).is_ok());
        let e = parse(Role::Dev, &[("TNS_LISTEN_ADDR", "nowhere")]).unwrap_err();
        assert_eq!(e.var, "TNS_LISTEN_ADDR");
    }

    #[test]
    fn webhook_org_concurrency_and_plain_http() {
        let secret = "x".repeat(32);
        let key = "ab".repeat(32);
        let api = parse(Role::Api, &[("TNS_SIGNING_SECRET", &secret), ("TNS_DATA_KEY", &key)]).unwrap();
        let hooks = &api.scheduler.webhooks;
        assert_eq!((hooks.concurrency, hooks.org_concurrency), (64, 16), "a quarter by default");
        assert!(!hooks.allow_http, "https only outside dev");
        assert!(parse(Role::Dev, &[]).unwrap().scheduler.webhooks.allow_http);
        let c = parse(Role::Dev, &[("TNS_WEBHOOK_CONCURRENCY", "3")]).unwrap();
        assert_eq!(c.scheduler.webhooks.org_concurrency, 1, "at least one");
        let c = parse(Role::Dev, &[("TNS_WEBHOOK_ORG_CONCURRENCY", "64")]).unwrap();
        assert_eq!(c.scheduler.webhooks.org_concurrency, 64);
        let e = parse(Role::Dev, &[("TNS_WEBHOOK_ORG_CONCURRENCY", "65")]).unwrap_err();
        assert_eq!(e.var, "TNS_WEBHOOK_ORG_CONCURRENCY", "at most TNS_WEBHOOK_CONCURRENCY");
        let e = parse(Role::Dev, &[("TNS_WEBHOOK_ALLOW_HTTP", "sometimes")]).unwrap_err();
        assert_eq!(e.var, "TNS_WEBHOOK_ALLOW_HTTP");
    }
}
