//! Logging setup: `RUST_LOG` filters (default `info`), `TNS_LOG_FORMAT` picks text or JSON.

use tracing_subscriber::{fmt, EnvFilter};

use crate::config::LogFormat;

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
