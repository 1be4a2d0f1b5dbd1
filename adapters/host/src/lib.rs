//! The host side of the adapter plugins, for every role that calls them: the adapters this
//! process can call (every plugin library in the configured directory, loaded once with its
//! own `TNS_ADAPTER_<NAME>_*` settings, by name) and the organizations' [`credentials`].
//! Nothing here knows any particular adapter: each describes itself.

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
    Adapter, Description, PluginConfig,
};

/// Where plugins are looked for and how they are configured.
#[derive(Debug, Clone)]
pub struct AdapterSettings {
    pub dir: std::path::PathBuf,
    /// How long one plugin call may take before its outcome counts as unknown.
    pub call_timeout: Duration,
    /// A developer's machine: plugins may default to laxer settings.
    pub dev: bool,
    /// Every `TNS_*` variable of the process but the host's own, by name: each plugin gets its
    /// `TNS_ADAPTER_<NAME>_*` ones (the host knows no plugin's settings; each parses its own).
    pub vars: BTreeMap<String, String>,
}

/// The host's own variables under `TNS_ADAPTER_`: no plugin's settings.
const HOST_VARS: [&str; 3] = ["TNS_ADAPTER_DIR", "TNS_ADAPTER_TIMEOUT_SECS", "TNS_ADAPTER_CONCURRENCY"];

impl AdapterSettings {
    pub fn from_vars(vars: &Vars<'_>, profile: Profile) -> Result<AdapterSettings, ConfigError> {
        Ok(AdapterSettings {
            dir: match vars.get("TNS_ADAPTER_DIR") {
                Some(d) => PathBuf::from(d),
                // Next to the binary, where cargo and the container image put the plugins.
                None => std::env::current_exe()
                    .ok()
                    .and_then(|p| p.parent().map(Path::to_path_buf))
                    .unwrap_or_else(|| PathBuf::from(".")),
            },
            call_timeout: vars.parse_secs("TNS_ADAPTER_TIMEOUT_SECS", 60, 1, 600)?,
            dev: profile.is_dev(),
            vars: BTreeMap::new(),
        })
    }

    /// With the process's `TNS_*` variables (what [`Vars`] cannot list), for the plugins.
    pub fn with_vars(mut self, all: impl IntoIterator<Item = (String, String)>) -> AdapterSettings {
        self.vars = all
            .into_iter()
            .filter(|(k, v)| k.starts_with("TNS_") && !HOST_VARS.contains(&k.as_str()) && !v.trim().is_empty())
            .collect();
        self
    }

    /// What plugin `name` is created with.
    fn config_for(&self, name: &str) -> PluginConfig {
        let prefix = Description::settings_prefix(name);
        PluginConfig {
            vars: self
                .vars
                .iter()
                .filter_map(|(k, v)| k.strip_prefix(&prefix).map(|suffix| (suffix.to_string(), v.clone())))
                .collect(),
            prefix,
            dev: self.dev,
            call_timeout_ms: self.call_timeout.as_millis() as u64,
        }
    }

    /// Variables named like a loaded plugin's settings before they took the `TNS_ADAPTER_`
    /// prefix (`TNS_<NAME>_*`): ignoring one would send a deployment to the downstream's
    /// default endpoint, so it stops the process, naming the new name.
    fn renamed(&self, name: &str) -> Option<String> {
        let old = format!("TNS_{}_", name.to_ascii_uppercase());
        let var = self.vars.keys().find(|k| k.starts_with(&old))?;
        Some(format!(
            "{var} is not read any more: plugin `{name}`'s settings are {}* (rename it {})",
            Description::settings_prefix(name),
            var.replacen("TNS_", "TNS_ADAPTER_", 1)
        ))
    }
}

/// A plugin refused its settings, or a renamed setting is still set: the operator's
/// configuration error (the process exits as for any other).
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

pub struct Plugins {
    by_name: BTreeMap<String, Arc<Plugin>>,
    /// The plugin organizations that chose none submit to.
    default: Option<String>,
    pub failures: Vec<LoadError>,
}

impl Plugins {
    /// Every plugin in the directory, each created with its settings. A plugin that refuses
    /// its configuration, or renamed settings still set, stop the process (`Err`); other
    /// failures (a library of another ABI version) leave that plugin out, logged.
    pub fn load(settings: &AdapterSettings) -> anyhow::Result<Plugins> {
        let (plugins, mut failures) = load_dir(&settings.dir, |name| settings.config_for(name))?;
        if let Some(refused) = failures.iter().find(|f| f.is_configuration()) {
            return Err(Refused(refused.to_string()).into());
        }
        let mut by_name: BTreeMap<String, Arc<Plugin>> = BTreeMap::new();
        let mut default: Option<String> = None;
        for p in plugins {
            let d = p.describe();
            if let Some(message) = settings.renamed(&d.name) {
                return Err(Refused(message).into());
            }
            // Two libraries claiming one name: which one answers would depend on file order.
            if let Some(first) = by_name.get(&d.name) {
                failures.push(LoadError::Duplicate {
                    path: p.path().to_path_buf(),
                    name: d.name,
                    first: first.path().to_path_buf(),
                });
                continue;
            }
            if d.default {
                if let Some(first) = default.as_ref().and_then(|n| by_name.get(n)) {
                    failures.push(LoadError::SecondDefault {
                        path: p.path().to_path_buf(),
                        first: first.path().to_path_buf(),
                    });
                    continue;
                }
                default = Some(d.name.clone());
            }
            by_name.insert(d.name, Arc::new(p));
        }
        for f in &failures {
            tracing::error!(error = %f, "adapter plugin not loaded");
        }
        // Settings of an adapter that is not here: a typo, or a plugin missing from the image.
        for var in settings.vars.keys().filter(|k| k.starts_with("TNS_ADAPTER_")) {
            if !by_name.keys().any(|n| var.starts_with(&Description::settings_prefix(n))) {
                tracing::warn!(%var, "no loaded adapter reads this variable");
            }
        }
        Ok(Plugins { by_name, default, failures })
    }

    /// No adapters (tests of what does not call one).
    pub fn empty() -> Plugins {
        Plugins { by_name: BTreeMap::new(), default: None, failures: vec![] }
    }

    pub fn get(&self, name: &str) -> Option<Arc<Plugin>> {
        self.by_name.get(name).cloned()
    }

    /// Every loaded adapter's description, by name.
    pub fn descriptions(&self) -> Vec<Description> {
        self.by_name.values().map(|p| p.describe()).collect()
    }

    /// The adapter's description, when it is loaded.
    pub fn description(&self, name: &str) -> Option<Description> {
        self.by_name.get(name).map(|p| p.describe())
    }

    /// Where organizations that chose no downstream submit, when a loaded plugin says so.
    pub fn default_name(&self) -> Option<&str> {
        self.default.as_deref()
    }

    /// (name, version, library path) of every loaded adapter, by name.
    pub fn list(&self) -> Vec<(String, String, &Path)> {
        self.by_name.values().map(|p| (p.describe().name, p.describe().version, p.path())).collect()
    }
}
