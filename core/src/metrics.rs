//! Prometheus exposition, the same for every role's `/metrics`.

use prometheus::{Encoder, Registry, TextEncoder};

/// The text format's content type.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4";

/// Everything `registry` holds, in the text format.
pub fn render(registry: &Registry) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Err(e) = TextEncoder::new().encode(&registry.gather(), &mut buf) {
        tracing::error!(error = %e, "metrics encoding failed");
    }
    buf
}
