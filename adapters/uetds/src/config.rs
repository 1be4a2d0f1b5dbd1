//! The plugin's configuration, as the host hands it over (JSON built from `TNS_UETDS_*`).

use std::{collections::BTreeMap, path::PathBuf, time::Duration};

use serde::Deserialize;
use tns_adapter::{AdapterError, Environment};

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
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct TarifeliNames {
    pub namespace: Option<String>,
    pub action_prefix: Option<String>,
    /// Our operation name → the service's element name.
    pub operations: BTreeMap<String, String>,
    /// The operator has confirmed these shapes with the Ministry: only then do scheduled trips
    /// go to the production environment (the test environment is open for trying).
    pub confirmed: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    base_url: Option<String>,
    /// Plain `http://` endpoints allowed (the host's `TNS_UETDS_ALLOW_HTTP`).
    #[serde(default)]
    allow_http: bool,
    #[serde(default)]
    endpoints: BTreeMap<String, String>,
    #[serde(default)]
    connect_timeout_ms: Option<u64>,
    #[serde(default)]
    call_timeout_ms: Option<u64>,
    #[serde(default)]
    ca_file: Option<PathBuf>,
    #[serde(default)]
    goods_cancel_code: Option<u32>,
    load_cancel_code: Option<u32>,
    #[serde(default)]
    tarifeli: TarifeliNames,
}

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

impl Config {
    pub(crate) fn parse(raw: &[u8]) -> Result<Config, AdapterError> {
        let bad = |e: String| AdapterError::Configuration(format!("uetds configuration: {e}"));
        let raw: Raw = if raw.is_empty() || raw == b"null" {
            serde_json::from_str("{}").map_err(|e| bad(e.to_string()))?
        } else {
            serde_json::from_slice(raw).map_err(|e| bad(e.to_string()))?
        };
        // Plain http would send the credentials readable: only when the host allows it.
        let url_ok = |u: &str| u.starts_with("https://") || (raw.allow_http && u.starts_with("http://"));
        let base_url = raw.base_url.unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        let wanted = if raw.allow_http { "an http(s)" } else { "an https" };
        if !url_ok(&base_url) {
            return Err(bad(format!("base_url `{base_url}` is not {wanted} URL")));
        }
        for (key, url) in &raw.endpoints {
            if !url_ok(url) {
                return Err(bad(format!("endpoint {key}: `{url}` is not {wanted} URL")));
            }
        }
        Ok(Config {
            base_url: base_url.trim_end_matches('/').to_string(),
            endpoints: raw.endpoints,
            connect_timeout: Duration::from_millis(raw.connect_timeout_ms.unwrap_or(10_000)),
            call_timeout: Duration::from_millis(raw.call_timeout_ms.unwrap_or(20_000)),
            ca_file: raw.ca_file,
            goods_cancel_code: raw.goods_cancel_code.unwrap_or(1),
            load_cancel_code: raw.load_cancel_code.unwrap_or(1),
            tarifeli: raw.tarifeli,
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

    #[test]
    fn endpoints_keep_the_paths_and_take_overrides() {
        let c = Config::parse(b"null").unwrap();
        assert_eq!(
            c.url(Service::Arizi, Environment::Test),
            "https://servis.turkiye.gov.tr/services/g2g/kdgm/test/uetdsarizi"
        );
        assert_eq!(
            c.url(Service::Esya, Environment::Production),
            "https://servis.turkiye.gov.tr/services/g2g/kdgm/uetdsesya"
        );
        let simulator = br#"{"base_url": "http://127.0.0.1:9999/", "endpoints": {"esya.test": "http://proxy:1/x"}"#;
        let c = Config::parse(&[&simulator[..], br#", "allow_http": true}"#].concat()).unwrap();
        assert_eq!(
            c.url(Service::Arizi, Environment::Production),
            "http://127.0.0.1:9999/services/g2g/kdgm/uetdsarizi"
        );
        assert_eq!(c.url(Service::Esya, Environment::Test), "http://proxy:1/x");
        assert!(Config::parse(br#"{"base_url": "ftp://x"}"#).is_err());
        // Plain http only when the host allows it, for the base URL and each endpoint alike.
        assert!(Config::parse(&[&simulator[..], b"}"].concat()).is_err());
        assert!(Config::parse(br#"{"base_url": "http://127.0.0.1:9999"}"#).is_err());
        let e = Config::parse(br#"{"endpoints": {"arizi.test": "http://proxy:1/x"}}"#).unwrap_err();
        assert!(e.to_string().contains("arizi.test") && e.to_string().contains("https"), "{e}");
        assert!(Config::parse(br#"{"nonsense": 1}"#).is_err(), "a typo in the configuration is refused");
    }
}
