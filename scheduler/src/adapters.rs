//! The adapters this process can call: every plugin library in the configured directory,
//! loaded once with its configuration, by name.

use std::{collections::BTreeMap, path::Path, sync::Arc};

use tns_adapter::{
    host::{load_dir, LoadError, Plugin},
    Adapter,
};

/// Where plugins are looked for and how they are configured.
#[derive(Debug, Clone)]
pub struct AdapterSettings {
    pub dir: std::path::PathBuf,
    /// The sandbox's records directory (shared by every process that should see the same
    /// sandbox); memory only when `None`.
    pub sandbox_state_dir: Option<std::path::PathBuf>,
    /// The U-ETDS plugin's configuration (endpoints, timeouts, the provisional scheduled
    /// service's names), as its JSON.
    pub uetds: serde_json::Value,
}

pub struct Registry {
    by_name: BTreeMap<String, Arc<Plugin>>,
    pub failures: Vec<LoadError>,
}

impl Registry {
    pub fn load(settings: &AdapterSettings) -> std::io::Result<Registry> {
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
        Ok(Registry { by_name, failures })
    }

    /// No adapters (tests of what does not call one).
    pub fn empty() -> Registry {
        Registry { by_name: BTreeMap::new(), failures: vec![] }
    }

    pub fn get(&self, name: &str) -> Option<Arc<Plugin>> {
        self.by_name.get(name).cloned()
    }

    /// (name, version, library path) of every loaded adapter, by name.
    pub fn list(&self) -> Vec<(String, String, &Path)> {
        self.by_name.values().map(|p| (p.describe().name, p.describe().version, p.path())).collect()
    }
}
