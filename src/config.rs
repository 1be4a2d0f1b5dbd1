//! The process's configuration: which role it runs and each part's settings, parsed from
//! `TNS_*` environment variables once at start-up. Each part parses its own variables; this
//! module decides which parts a role needs, so a role never requires what it does not use
//! (the scheduler needs no signing secret, `migrate` no data key).

use tns_adapter_host::AdapterSettings;
use tns_core::{
    basis::Basis,
    env::{ConfigError, Listen, Profile, RedisSettings, Vars},
    guard::Policy,
    sealing::DataKey,
    telemetry::{LogFormat, Otlp},
};
use tns_store::DbSettings;

/// Which parts of TNS this process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Api,
    Scheduler,
    /// Singleton periodic work, run by the replica that leads.
    Jobs,
    Migrate,
    /// Everything in one process, with laptop-friendly defaults.
    Dev,
    /// List the adapter plugins that load, and exit.
    Adapters,
    /// An operator's command (`tns admin …`), then exit.
    Admin,
}

impl Role {
    /// As typed on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Role::Api => "api",
            Role::Scheduler => "scheduler",
            Role::Jobs => "jobs",
            Role::Migrate => "migrate",
            Role::Dev => "dev",
            Role::Adapters => "adapters",
            Role::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        [Role::Api, Role::Scheduler, Role::Jobs, Role::Migrate, Role::Dev, Role::Adapters, Role::Admin]
            .into_iter()
            .find(|r| r.name() == s)
    }

    pub fn profile(self) -> Profile {
        if self == Role::Dev {
            Profile::Dev
        } else {
            Profile::Deployed
        }
    }

    fn runs_api(self) -> bool {
        matches!(self, Role::Api | Role::Dev)
    }

    fn runs_scheduler(self) -> bool {
        matches!(self, Role::Scheduler | Role::Dev)
    }

    fn runs_jobs(self) -> bool {
        matches!(self, Role::Jobs | Role::Dev)
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub role: Role,
    pub log_format: LogFormat,
    /// Where spans are exported, when they are.
    pub otlp: Option<Otlp>,
    /// Where the process serves: the API, or the scheduler's probes; `/metrics` beside.
    pub listen: Listen,
    pub db: DbSettings,
    pub redis: RedisSettings,
    pub adapters: AdapterSettings,
    /// Present when the role serves the API.
    pub api: Option<tns_api::settings::ApiSettings>,
    /// Present when the role serves the API and `TNS_ADMIN_ADDR` is set: the operators' admin
    /// API beside it, on its own listener.
    pub admin: Option<tns_admin::http::AdminApiSettings>,
    /// Present when the role runs a scheduler.
    pub scheduler: Option<tns_scheduler::SchedulerSettings>,
    /// Present when the role runs the periodic jobs.
    pub jobs: Option<tns_jobs::JobsSettings>,
}

impl Config {
    pub fn from_env(role: Role) -> Result<Config, ConfigError> {
        let mut cfg = Config::from_lookup(role, |k| std::env::var(k).ok())?;
        // The plugins' own settings (`TNS_ADAPTER_<NAME>_*`), which only they know: the host
        // hands each its own when it loads them. (`vars()` would panic on a variable that is
        // not UTF-8, whoever's it is; such a value counts as unset, as with `from_lookup`.)
        let all = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
        cfg.adapters = cfg.adapters.with_vars(all);
        Ok(cfg)
    }

    /// Parse from any variable source; tests pass a map. The plugins get no variables here.
    pub fn from_lookup(role: Role, lookup: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let vars = Vars::new(&lookup);
        let profile = role.profile();
        let adapters = AdapterSettings::from_vars(&vars, profile)?;
        // The API seals webhook secrets and downstream passwords, the scheduler and the jobs
        // (drift checks) open them: all need the same key. `tns dev` uses a fixed, public one (its data is not secret, and a
        // dev database must stay readable across restarts).
        let basis = || -> Result<Basis, ConfigError> {
            let fallback = (profile == Profile::Dev).then(|| DataKey::new(*b"tns dev data key: not a secret!!"));
            Ok(Basis {
                profile,
                data_key: DataKey::from_vars(&vars, fallback)?,
                call_timeout: adapters.call_timeout,
                policy: Policy::from_vars(&vars, profile)?,
            })
        };
        let api = match role.runs_api() {
            true => Some(tns_api::settings::ApiSettings::from_vars(&vars, &basis()?)?),
            false => None,
        };
        let admin = match role.runs_api() {
            true => tns_admin::http::AdminApiSettings::from_vars(&vars, profile)?,
            false => None,
        };
        let scheduler = match role.runs_scheduler() {
            true => Some(tns_scheduler::SchedulerSettings::from_vars(&vars, &basis()?)?),
            false => None,
        };
        let jobs = match role.runs_jobs() {
            true => Some(tns_jobs::JobsSettings::from_vars(&vars, &basis()?)?),
            false => None,
        };
        Ok(Config {
            role,
            log_format: LogFormat::from_vars(&vars)?,
            otlp: Otlp::from_vars(&vars, &format!("tns-{}", role.name()))?,
            listen: Listen::from_vars(&vars, profile)?,
            db: DbSettings::from_vars(&vars)?,
            redis: RedisSettings::from_vars(&vars)?,
            adapters,
            api,
            admin,
            scheduler,
            jobs,
        })
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
    fn api_requires_a_long_enough_secret_and_a_data_key() {
        assert_eq!(parse(Role::Api, &[]).unwrap_err().var, "TNS_DATA_KEY");
        let key = "ab".repeat(32);
        assert_eq!(parse(Role::Api, &[("TNS_DATA_KEY", &key)]).unwrap_err().var, "TNS_SIGNING_SECRET");
        assert_eq!(
            parse(Role::Api, &[("TNS_DATA_KEY", &key), ("TNS_SIGNING_SECRET", "short")]).unwrap_err().var,
            "TNS_SIGNING_SECRET"
        );
        let secret = "x".repeat(32);
        assert_eq!(
            parse(Role::Api, &[("TNS_SIGNING_SECRET", &secret), ("TNS_DATA_KEY", "abcd")]).unwrap_err().var,
            "TNS_DATA_KEY"
        );
        let c = parse(Role::Api, &[("TNS_SIGNING_SECRET", &secret), ("TNS_DATA_KEY", &key)]).unwrap();
        let api = c.api.unwrap();
        assert!(!api.webhook_policy.allow_private, "internal addresses refused outside dev");
        assert!(api.cookie_secure);
        assert_eq!(api.auth_rate_limit, 60);
        assert!(c.scheduler.is_none(), "the api role runs no scheduler");
        assert!(c.admin.is_none(), "no admin API unless TNS_ADMIN_ADDR is set");
        let vars =
            [("TNS_SIGNING_SECRET", secret.as_str()), ("TNS_DATA_KEY", &key), ("TNS_ADMIN_ADDR", "0.0.0.0:8081")];
        assert_eq!(parse(Role::Api, &vars).unwrap().admin.unwrap().addr.port(), 8081);
        let c = parse(Role::Scheduler, &vars).unwrap();
        assert!(c.admin.is_none(), "only the roles serving the API serve the admin API");
    }

    #[test]
    fn each_role_needs_only_what_it_uses() {
        let key = "ab".repeat(32);
        let c = parse(Role::Scheduler, &[("TNS_DATA_KEY", &key)]).expect("no signing secret needed");
        assert!(c.api.is_none() && c.scheduler.is_some());
        assert_eq!(parse(Role::Scheduler, &[]).unwrap_err().var, "TNS_DATA_KEY");
        let c = parse(Role::Migrate, &[]).expect("migrate needs no secrets");
        assert!(c.api.is_none() && c.scheduler.is_none());
        assert!(parse(Role::Adapters, &[]).is_ok());
    }

    #[test]
    fn dev_stays_on_loopback_unless_told_otherwise() {
        let e = parse(Role::Dev, &[("TNS_LISTEN_ADDR", "0.0.0.0:8080")]).unwrap_err();
        assert_eq!(e.var, "TNS_LISTEN_ADDR");
        assert!(e.reason.contains("TNS_DEV_ALLOW_REMOTE"), "{}", e.reason);
        assert!(parse(Role::Dev, &[("TNS_LISTEN_ADDR", "0.0.0.0:8080"), ("TNS_DEV_ALLOW_REMOTE", "true")]).is_ok());
        assert!(parse(Role::Dev, &[("TNS_LISTEN_ADDR", "[::1]:8080")]).is_ok());
        assert_eq!(parse(Role::Dev, &[("TNS_METRICS_ADDR", "0.0.0.0:9090")]).unwrap_err().var, "TNS_METRICS_ADDR");
        assert_eq!(parse(Role::Dev, &[("TNS_ADMIN_ADDR", "0.0.0.0:8081")]).unwrap_err().var, "TNS_ADMIN_ADDR");
        assert!(parse(Role::Dev, &[]).unwrap().admin.is_none(), "dev serves no admin API unless asked");
    }

    #[test]
    fn dev_has_laptop_defaults() {
        let c = parse(Role::Dev, &[]).unwrap();
        let (api, scheduler) = (c.api.unwrap(), c.scheduler.unwrap());
        assert!(!api.cookie_secure);
        assert_eq!(c.listen.addr.to_string(), "127.0.0.1:8080");
        assert_eq!(api.signing_secret.len(), 64);
        assert!(scheduler.webhooks.policy.allow_private, "dev delivers to local receivers");
        assert_eq!(scheduler.webhooks.schedule.len(), 9);
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
        let e =
            parse(Role::Dev, &[("TNS_ADAPTER_TIMEOUT_SECS", "300"), ("TNS_SCHEDULER_LEASE_SECS", "300")]).unwrap_err();
        assert_eq!(e.var, "TNS_SCHEDULER_LEASE_SECS");
    }

    #[test]
    fn webhook_org_concurrency_and_plain_http() {
        let key = "ab".repeat(32);
        let c = parse(Role::Scheduler, &[("TNS_DATA_KEY", &key)]).unwrap();
        let hooks = c.scheduler.unwrap().webhooks;
        assert_eq!((hooks.concurrency, hooks.org_concurrency), (64, 16), "a quarter by default");
        assert!(!hooks.policy.allow_http, "https only outside dev");
        assert!(parse(Role::Dev, &[]).unwrap().scheduler.unwrap().webhooks.policy.allow_http);
        let hooks = |vars: &[(&str, &str)]| parse(Role::Dev, vars).map(|c| c.scheduler.unwrap().webhooks);
        assert_eq!(hooks(&[("TNS_WEBHOOK_CONCURRENCY", "3")]).unwrap().org_concurrency, 1, "at least one");
        assert_eq!(hooks(&[("TNS_WEBHOOK_ORG_CONCURRENCY", "64")]).unwrap().org_concurrency, 64);
        let e = hooks(&[("TNS_WEBHOOK_ORG_CONCURRENCY", "65")]).unwrap_err();
        assert_eq!(e.var, "TNS_WEBHOOK_ORG_CONCURRENCY", "at most TNS_WEBHOOK_CONCURRENCY");
        let e = hooks(&[("TNS_WEBHOOK_ALLOW_HTTP", "sometimes")]).unwrap_err();
        assert_eq!(e.var, "TNS_WEBHOOK_ALLOW_HTTP");
    }

    /// Every `"TNS_…"` (and the few platform variables') literal in the code is in
    /// `VARIABLES`, and every entry there is read somewhere and documented in README.md.
    /// Prefixes (`"TNS_ADAPTER_"`) are no variables, and a plugin's own settings
    /// (`TNS_ADAPTER_<NAME>_*`, in its crate) are not the binary's: the plugin parses them and
    /// its tests check them.
    #[test]
    fn the_variable_list_matches_the_code_and_the_readme() {
        use std::{collections::BTreeSet, path::Path};
        fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() && !p.ends_with("target") && !p.ends_with("tests") && !p.ends_with("bench") {
                    rust_files(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = vec![];
        for dir in ["src", "core", "store", "api", "scheduler", "jobs", "admin", "http", "adapters"] {
            rust_files(&root.join(dir), &mut files);
        }
        let listed: BTreeSet<&str> = tns_core::env::VARIABLES.iter().copied().collect();
        let mut found = BTreeSet::new();
        for f in files {
            let mut text = std::fs::read_to_string(&f).unwrap();
            let rel = f.strip_prefix(root).unwrap();
            if rel == Path::new("core/src/env.rs") {
                // The list itself reads nothing.
                let start = text.find("pub const VARIABLES").expect("VARIABLES in core/src/env.rs");
                let end = start + text[start..].find("];").unwrap();
                text.replace_range(start..end, "");
            }
            let plugin = rel.starts_with("adapters")
                && !rel.starts_with("adapters/host")
                && !rel.starts_with("adapters/contract");
            for part in text.split('"').skip(1).step_by(2) {
                let platform = ["KUBERNETES_SERVICE_HOST", "POD_NAME", "HOSTNAME"].contains(&part)
                    || (part.starts_with("OTEL_") && part.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
                let ours = part.len() > 4
                    && part.starts_with("TNS_")
                    && !part.ends_with('_')
                    && !(plugin && part.starts_with("TNS_ADAPTER_"))
                    && part.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
                if ours || platform {
                    found.insert(part.to_string());
                }
            }
        }
        let found: BTreeSet<&str> = found.iter().map(String::as_str).collect();
        let unlisted: Vec<_> = found.difference(&listed).collect();
        assert!(unlisted.is_empty(), "read but not in VARIABLES: {unlisted:?}");
        let unread: Vec<_> = listed.difference(&found).filter(|v| **v != "RUST_LOG").collect();
        assert!(unread.is_empty(), "in VARIABLES but read nowhere: {unread:?}");
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        let undocumented: Vec<_> = listed.iter().filter(|v| !readme.contains(&format!("`{v}`"))).collect();
        assert!(undocumented.is_empty(), "not in README.md: {undocumented:?}");
    }
}
