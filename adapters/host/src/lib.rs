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
#[derive(Clone)]
pub struct AdapterSettings {
    pub dir: std::path::PathBuf,
    /// How long one plugin call may take before its outcome counts as unknown.
    pub call_timeout: Duration,
    /// A developer's machine: plugins may default to laxer settings.
    pub dev: bool,
    /// The process's `TNS_ADAPTER_*` variables but the host's own: each plugin gets its
    /// `TNS_ADAPTER_<NAME>_*` ones (the host knows no plugin's settings; each parses its own).
    pub vars: BTreeMap<String, String>,
    /// The names (never the values: the data key is among them) of the process's other `TNS_*`
    /// variables, to find a plugin setting still set under its old name.
    pub other_names: std::collections::BTreeSet<String>,
}

impl std::fmt::Debug for AdapterSettings {
    /// Names only: a plugin setting may be a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdapterSettings")
            .field("dir", &self.dir)
            .field("call_timeout", &self.call_timeout)
            .field("dev", &self.dev)
            .field("vars", &self.vars.keys())
            .finish_non_exhaustive()
    }
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
            other_names: Default::default(),
        })
    }

    /// With the process's `TNS_*` variables (what [`Vars`] cannot list), for the plugins.
    pub fn with_vars(mut self, all: impl IntoIterator<Item = (String, String)>) -> AdapterSettings {
        for (k, v) in all {
            if !k.starts_with("TNS_") || HOST_VARS.contains(&k.as_str()) || v.trim().is_empty() {
                continue;
            }
            if k.starts_with("TNS_ADAPTER_") {
                self.vars.insert(k, v);
            } else {
                self.other_names.insert(k);
            }
        }
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

    /// A loaded plugin's setting still set under the name it had before settings took the
    /// `TNS_ADAPTER_` prefix (`TNS_<NAME>_<SETTING>`, a setting the plugin reads): ignoring it
    /// would send a deployment to the downstream's default endpoint, so it stops the process,
    /// naming the new name.
    fn renamed(&self, d: &Description) -> Option<String> {
        let old = |suffix: &String| format!("TNS_{}_{suffix}", d.name.to_ascii_uppercase());
        let suffix = d.settings.iter().find(|s| self.other_names.contains(&old(s)))?;
        Some(format!(
            "{} is not read any more: plugin `{}`'s settings are {}* (rename it {}{suffix})",
            old(suffix),
            d.name,
            Description::settings_prefix(&d.name),
            Description::settings_prefix(&d.name),
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
            if let Some(message) = settings.renamed(&d) {
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
