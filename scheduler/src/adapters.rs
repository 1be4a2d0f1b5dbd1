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
}

pub struct Registry {
    by_name: BTreeMap<String, Arc<Plugin>>,
    pub failures: Vec<LoadError>,
}

impl Registry {
    pub fn load(settings: &AdapterSettings) -> std::io::Result<Registry> {
        let config_for = |name: &str| match name {
            "sandbox" => serde_json::json!({ "state_dir": settings.sandbox_state_dir }),
            _ => serde_json::Value::Null,
        };
        let (plugins, failures) = load_dir(&settings.dir, config_for)?;
        for f in &failures {
            tracing::error!(error = %f, "adapter plugin not loaded");
        }
        let by_name = plugins.into_iter().map(|p| (p.describe().name, Arc::new(p))).collect();
        Ok(Registry { by_name, failures })
    }

    pub fn get(&self, name: &str) -> Option<Arc<Plugin>> {
        self.by_name.get(name).cloned()
    }

    /// (name, version, library path) of every loaded adapter, by name.
    pub fn list(&self) -> Vec<(String, String, &Path)> {
        self.by_name.values().map(|p| (p.describe().name, p.describe().version, p.path())).collect()
    }
}
