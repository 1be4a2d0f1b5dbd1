//! The plugin's settings, parsed from its `TNS_ADAPTER_UETDS_*` variables as the host hands
//! them over.

use std::{collections::BTreeMap, path::PathBuf, time::Duration};

#[cfg(test)]
use tns_adapter::AdapterError;
use tns_adapter::{AdapterResult, Environment, PluginConfig};

/// The e-Devlet gateway every U-ETDS service is reached through.
pub(crate) const DEFAULT_BASE_URL: &str = "https://servis.turkiye.gov.tr";

/// One of U-ETDS's services.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Service {
    /// Non-scheduled passenger trips (tarifesiz, arızi).
    Arizi,
    /// Goods (eşya), V3 operations.
    Esya,
    /// Scheduled passenger trips (tarifeli): provisional, see `tarifeli.rs`.
    Tarifeli,
}

impl Service {
    pub(crate) fn key(self) -> &'static str {
        match self {
            Service::Arizi => "arizi",
            Service::Esya => "esya",
            Service::Tarifeli => "tarifeli",
        }
    }

    /// The service's path on the gateway. The test environment's paths carry `/test/`.
    fn path(self, env: Environment) -> String {
        let name = match self {
            Service::Arizi => "uetdsarizi",
            Service::Esya => "uetdsesya",
            Service::Tarifeli => "uetdstarifeli",
        };
        match env {
            Environment::Test => format!("/services/g2g/kdgm/test/{name}"),
            Environment::Production => format!("/services/g2g/kdgm/{name}"),
        }
    }
}

/// The provisional scheduled service's names: its WSDL is not public, so the namespace, the
/// SOAPAction prefix and each operation's element name can be set without a new build.
#[derive(Debug, Clone, Default)]
pub(crate) struct TarifeliNames {
    pub namespace: Option<String>,
    pub action_prefix: Option<String>,
    /// Our operation name → the service's element name.
    pub operations: BTreeMap<String, String>,
    /// The operator has confirmed these shapes with the Ministry: only then do scheduled trips
    /// go to the production environment (the test environment is open for trying).
    pub confirmed: bool,
}

/// The settings this plugin reads, each `TNS_ADAPTER_UETDS_<suffix>` (README.md documents them).
pub(crate) const SETTINGS: [&str; 12] = [
    "ALLOW_HTTP",
    "BASE_URL",
    "CALL_TIMEOUT_SECS",
    "CA_FILE",
    "CONNECT_TIMEOUT_SECS",
    "ENDPOINTS",
    "GOODS_CANCEL_CODE",
    "LOAD_CANCEL_CODE",
    "TARIFELI_ACTION_PREFIX",
    "TARIFELI_CONFIRMED",
    "TARIFELI_NAMESPACE",
    "TARIFELI_OPERATIONS",
];

#[derive(Debug, Clone)]
pub(crate) struct Config {
    base_url: String,
    /// `service.environment` → a whole URL, replacing base URL and path.
    endpoints: BTreeMap<String, String>,
    pub connect_timeout: Duration,
    pub call_timeout: Duration,
    pub ca_file: Option<PathBuf>,
    /// `seferIptalTurKodu` of a goods trip cancelled through TNS.
    pub goods_cancel_code: u32,
    /// `yukIptalTurKodu` sent when a load is taken off a delivered goods trip.
    pub load_cancel_code: u32,
    pub tarifeli: TarifeliNames,
}

fn parse_int(c: &PluginConfig, suffix: &str, default: u64, min: u64, max: u64) -> AdapterResult<u64> {
    match c.get(suffix) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| c.bad(suffix, &format!("must be a whole number from {min} to {max}"))),
    }
}

fn parse_bool(c: &PluginConfig, suffix: &str, default: bool) -> AdapterResult<bool> {
    match c.get(suffix).map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(default),
        Some(v) if ["true", "1", "yes"].contains(&v.as_str()) => Ok(true),
        Some(v) if ["false", "0", "no"].contains(&v.as_str()) => Ok(false),
        Some(_) => Err(c.bad(suffix, "must be true or false")),
    }
}

/// `a=b,c=d` pairs.
fn pairs<'a>(c: &'a PluginConfig, suffix: &str, shape: &str) -> AdapterResult<Vec<(&'a str, &'a str)>> {
    c.get(suffix)
        .unwrap_or_default()
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| p.split_once('=').map(|(k, v)| (k.trim(), v.trim())).ok_or_else(|| c.bad(suffix, shape)))
        .collect()
}

impl Config {
    /// The plugin's settings, checked: every organization's credentials travel in each call's
    /// HTTP Basic header and body, so plain http is for simulators, on a laptop (`tns dev`)
    /// or where the operator says so.
    pub(crate) fn parse(c: &PluginConfig) -> AdapterResult<Config> {
        c.unknown(&SETTINGS)?;
        let allow_http = parse_bool(c, "ALLOW_HTTP", c.dev)?;
        let http_url = |suffix: &str, v: &str| -> AdapterResult<String> {
            let ok = (v.starts_with("https://") || v.starts_with("http://")) && v.len() > "https://".len();
            if !ok {
                return Err(c.bad(suffix, "must be an http:// or https:// URL"));
            }
            if v.starts_with("http://") && !allow_http {
                return Err(c.bad(
                    suffix,
                    &format!(
                        "must be an https:// URL: plain http:// would send the organizations' U-ETDS credentials readable (set {}=true for a simulator)",
                        c.var("ALLOW_HTTP")
                    ),
                ));
            }
            Ok(v.trim_end_matches('/').to_string())
        };
        let base_url = match c.get("BASE_URL") {
            Some(v) => {
                let url = http_url("BASE_URL", v.trim())?;
                // Only scheme, host and port: the services' paths stay U-ETDS's own.
                if url.splitn(4, '/').nth(3).is_some_and(|path| !path.is_empty()) {
                    return Err(c.bad("BASE_URL", "must be scheme, host and port only (no path)"));
                }
                url
            }
            None => DEFAULT_BASE_URL.to_string(),
        };
        let mut endpoints = BTreeMap::new();
        for (key, url) in pairs(c, "ENDPOINTS", "must be `service.environment=url` pairs separated by commas")? {
            let (service, env) = key.split_once('.').unwrap_or((key, ""));
            if !["arizi", "esya", "tarifeli"].contains(&service) || !["test", "production"].contains(&env) {
                return Err(c.bad(
                    "ENDPOINTS",
                    &format!("`{key}`: the service is arizi, esya or tarifeli and the environment test or production"),
                ));
            }
            endpoints.insert(key.to_string(), http_url("ENDPOINTS", url)?);
        }
        // One plugin call may make a few SOAP calls (reconciling reads a list, then the trips
        // in it): each must end well before the host stops waiting for the plugin call.
        let host_timeout = Duration::from_millis(if c.call_timeout_ms == 0 { 60_000 } else { c.call_timeout_ms });
        let half = (host_timeout / 2).max(Duration::from_millis(500));
        let call_timeout = match c.get("CALL_TIMEOUT_SECS") {
            None => half.min(Duration::from_secs(20)),
            Some(_) => {
                let t = Duration::from_secs(parse_int(c, "CALL_TIMEOUT_SECS", 20, 1, 300)?);
                if t > half {
                    return Err(c.bad("CALL_TIMEOUT_SECS", "must be at most half of TNS_ADAPTER_TIMEOUT_SECS"));
                }
                t
            }
        };
        let operations = pairs(c, "TARIFELI_OPERATIONS", "must be `operation=name` pairs separated by commas")?
            .into_iter()
            .map(|(ours, theirs)| (ours.to_string(), theirs.to_string()))
            .collect();
        Ok(Config {
            base_url,
            endpoints,
            connect_timeout: Duration::from_secs(parse_int(c, "CONNECT_TIMEOUT_SECS", 10, 1, 120)?),
            call_timeout,
            ca_file: c.get("CA_FILE").map(PathBuf::from),
            goods_cancel_code: parse_int(c, "GOODS_CANCEL_CODE", 1, 0, 99)? as u32,
            load_cancel_code: parse_int(c, "LOAD_CANCEL_CODE", 1, 0, 99)? as u32,
            tarifeli: TarifeliNames {
                namespace: c.get("TARIFELI_NAMESPACE").map(str::to_string),
                action_prefix: c.get("TARIFELI_ACTION_PREFIX").map(str::to_string),
                operations,
                confirmed: parse_bool(c, "TARIFELI_CONFIRMED", false)?,
            },
        })
    }

    /// Where `service` of `env` answers: an override for it, or the base URL with U-ETDS's path.
    pub(crate) fn url(&self, service: Service, env: Environment) -> String {
        let key = format!("{}.{}", service.key(), env.as_str());
        self.endpoints.get(&key).cloned().unwrap_or_else(|| format!("{}{}", self.base_url, service.path(env)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dev: bool, vars: &[(&str, &str)]) -> AdapterResult<Config> {
        Config::parse(&PluginConfig {
            vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            prefix: "TNS_ADAPTER_UETDS_".into(),
            dev,
            call_timeout_ms: 60_000,
        })
    }

    fn var_of(e: AdapterError) -> String {
        e.to_string().split(':').nth(1).unwrap_or_default().trim().to_string()
    }

    #[test]
    fn endpoints_keep_the_paths_and_take_overrides() {
        let c = config(false, &[]).unwrap();
        assert_eq!(
            c.url(Service::Arizi, Environment::Test),
            "https://servis.turkiye.gov.tr/services/g2g/kdgm/test/uetdsarizi"
        );
        assert_eq!(
            c.url(Service::Esya, Environment::Production),
            "https://servis.turkiye.gov.tr/services/g2g/kdgm/uetdsesya"
        );
        let simulator = [("BASE_URL", "http://127.0.0.1:9999/"), ("ENDPOINTS", "esya.test=http://proxy:1/x")];
        let c = config(true, &simulator).unwrap();
        assert_eq!(
            c.url(Service::Arizi, Environment::Production),
            "http://127.0.0.1:9999/services/g2g/kdgm/uetdsarizi"
        );
        assert_eq!(c.url(Service::Esya, Environment::Test), "http://proxy:1/x");
        assert_eq!(var_of(config(false, &[("BASE_URL", "ftp://x")]).unwrap_err()), "TNS_ADAPTER_UETDS_BASE_URL");
        let e = config(false, &[("NONSENSE", "1")]).unwrap_err();
        assert_eq!(var_of(e), "TNS_ADAPTER_UETDS_NONSENSE", "a typo in the settings is refused");
        assert!(config(false, &[("CALL_TIMEOUT_SECS", "31")]).unwrap_err().to_string().contains("half"));
    }

    #[test]
    fn plain_http_only_where_allowed() {
        let e = config(false, &[("BASE_URL", "http://sim:8099")]).unwrap_err();
        assert_eq!(var_of(e.clone()), "TNS_ADAPTER_UETDS_BASE_URL");
        assert!(e.to_string().contains("TNS_ADAPTER_UETDS_ALLOW_HTTP"), "{e}");
        let e = config(false, &[("ENDPOINTS", "esya.test=http://proxy:1/x")]).unwrap_err();
        assert_eq!(var_of(e), "TNS_ADAPTER_UETDS_ENDPOINTS");
        assert!(config(false, &[("BASE_URL", "http://sim:8099"), ("ALLOW_HTTP", "true")]).is_ok());
        assert!(config(false, &[("BASE_URL", "https://egress:8443")]).is_ok());
        assert!(config(true, &[("BASE_URL", "http://127.0.0.1:8099")]).is_ok(), "dev talks to a simulator");
        let e = config(true, &[("BASE_URL", "http://127.0.0.1:8099"), ("ALLOW_HTTP", "false")]).unwrap_err();
        assert_eq!(var_of(e), "TNS_ADAPTER_UETDS_BASE_URL");
        assert_eq!(var_of(config(false, &[("ALLOW_HTTP", "perhaps")]).unwrap_err()), "TNS_ADAPTER_UETDS_ALLOW_HTTP");
        let e = config(false, &[("ENDPOINTS", "arizi.staging=https://x")]).unwrap_err();
        assert_eq!(var_of(e), "TNS_ADAPTER_UETDS_ENDPOINTS");
        let e = config(false, &[("BASE_URL", "https://egress:8443/path")]).unwrap_err();
        assert_eq!(var_of(e), "TNS_ADAPTER_UETDS_BASE_URL");
    }
}
