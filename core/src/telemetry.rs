//! Logging setup: `RUST_LOG` filters (default `info`), `TNS_LOG_FORMAT` picks text or JSON.

use tracing_subscriber::{fmt, EnvFilter};

use crate::env::{ConfigError, Vars};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

impl LogFormat {
    pub fn from_vars(vars: &Vars<'_>) -> Result<LogFormat, ConfigError> {
        match vars.get("TNS_LOG_FORMAT").as_deref() {
            None | Some("text") => Ok(LogFormat::Text),
            Some("json") => Ok(LogFormat::Json),
            Some(_) => Err(vars.bad("TNS_LOG_FORMAT", "must be `text` or `json`")),
        }
    }
}

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
