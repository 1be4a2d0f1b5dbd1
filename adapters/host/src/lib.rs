//! The host side of the adapter plugins, for every role that calls them: the adapters this
//! process can call (every plugin library in the configured directory, loaded once with its
//! configuration, by name) and the organizations' [`credentials`].

pub mod credentials;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use tns_core::env::{ConfigError, Profile, Vars};

use tns_adapter::{
    host::{load_dir, LoadError, Plugin},
    Adapter,
};

/// Where plugins are looked for and how they are configured.
#[derive(Debug, Clone)]
pub struct AdapterSettings {
    pub dir: std::path::PathBuf,
    /// How long one plugin call may take before its outcome counts as unknown.
    pub call_timeout: Duration,
    /// The sandbox's records directory (shared by every process that should see the same
    /// sandbox); memory only when `None`.
    pub sandbox_state_dir: Option<std::path::PathBuf>,
    /// The U-ETDS plugin's configuration (endpoints, timeouts, the provisional scheduled
    /// service's names), as its JSON.
    pub uetds: serde_json::Value,
}

impl AdapterSettings {
    pub fn from_vars(vars: &Vars<'_>, profile: Profile) -> Result<AdapterSettings, ConfigError> {
        let call_timeout = vars.parse_secs("TNS_ADAPTER_TIMEOUT_SECS", 60, 1, 600)?;
        Ok(AdapterSettings {
            dir: match vars.get("TNS_ADAPTER_DIR") {
                Some(d) => PathBuf::from(d),
                // Next to the binary, where cargo and the container image put the plugins.
                None => std::env::current_exe()
                    .ok()
                    .and_then(|p| p.parent().map(Path::to_path_buf))
                    .unwrap_or_else(|| PathBuf::from(".")),
            },
            call_timeout,
            sandbox_state_dir: vars.get("TNS_SANDBOX_STATE_DIR").map(PathBuf::from),
            uetds: uetds_config(vars, profile, call_timeout)?,
        })
    }
}

/// The U-ETDS plugin's configuration (its JSON; the plugin checks it again when it loads).
fn uetds_config(
    vars: &Vars<'_>,
    profile: Profile,
    adapter_call_timeout: Duration,
) -> Result<serde_json::Value, ConfigError> {
    // Every call carries an organization's credentials in HTTP Basic and in its body: plain
    // http is for simulators, on a laptop (`tns dev`) or where the operator says so.
    let allow_http = vars.parse_bool("TNS_UETDS_ALLOW_HTTP", profile.is_dev())?;
    let http_url = |var: &'static str, v: &str| -> Result<String, ConfigError> {
        let ok = (v.starts_with("https://") || v.starts_with("http://")) && v.len() > "https://".len();
        if !ok {
            return Err(vars.bad(var, "must be an http:// or https:// URL"));
        }
        if v.starts_with("http://") && !allow_http {
            return Err(vars.bad(
                var,
                "must be an https:// URL: plain http:// would send the organizations' U-ETDS credentials readable \
                 (set TNS_UETDS_ALLOW_HTTP=true for a simulator)",
            ));
        }
        Ok(v.trim_end_matches('/').to_string())
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
    let half = (adapter_call_timeout / 2).max(Duration::from_millis(500));
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
        "allow_http": allow_http,
        "endpoints": endpoints,
        "connect_timeout_ms": vars.parse_secs("TNS_UETDS_CONNECT_TIMEOUT_SECS", 10, 1, 120)?.as_millis() as u64,
        "call_timeout_ms": call_timeout.as_millis() as u64,
        "ca_file": vars.get("TNS_UETDS_CA_FILE"),
        "goods_cancel_code": vars.parse_int("TNS_UETDS_GOODS_CANCEL_CODE", 1, 0, 99)?,
        "load_cancel_code": vars.parse_int("TNS_UETDS_LOAD_CANCEL_CODE", 1, 0, 99)?,
        "tarifeli": {
            "namespace": vars.get("TNS_UETDS_TARIFELI_NAMESPACE"),
            "action_prefix": vars.get("TNS_UETDS_TARIFELI_ACTION_PREFIX"),
            "operations": operations,
            "confirmed": vars.parse_bool("TNS_UETDS_TARIFELI_CONFIRMED", false)?,
        },
    }))
}

pub struct Plugins {
    by_name: BTreeMap<String, Arc<Plugin>>,
    pub failures: Vec<LoadError>,
}

impl Plugins {
    pub fn load(settings: &AdapterSettings) -> std::io::Result<Plugins> {
        let config_for = |name: &str| match name {
            "sandbox" => serde_json::json!({ "state_dir": settings.sandbox_state_dir }),
            "uetds" => settings.uetds.clone(),
            _ => serde_json::Value::Null,
        };
        let (plugins, mut failures) = load_dir(&settings.dir, config_for)?;
        let mut by_name: BTreeMap<String, Arc<Plugin>> = BTreeMap::new();
        for p in plugins {
            let name = p.describe().name;
            // Two libraries claiming one name: which one answers would depend on file order.
            if let Some(first) = by_name.get(&name) {
                failures.push(LoadError::Duplicate {
                    path: p.path().to_path_buf(),
                    name,
                    first: first.path().to_path_buf(),
                });
                continue;
            }
            by_name.insert(name, Arc::new(p));
        }
        for f in &failures {
            tracing::error!(error = %f, "adapter plugin not loaded");
        }
        Ok(Plugins { by_name, failures })
    }

    /// No adapters (tests of what does not call one).
    pub fn empty() -> Plugins {
        Plugins { by_name: BTreeMap::new(), failures: vec![] }
    }

    pub fn get(&self, name: &str) -> Option<Arc<Plugin>> {
        self.by_name.get(name).cloned()
    }

    /// (name, version, library path) of every loaded adapter, by name.
    pub fn list(&self) -> Vec<(String, String, &Path)> {
        self.by_name.values().map(|p| (p.describe().name, p.describe().version, p.path())).collect()
    }
}
