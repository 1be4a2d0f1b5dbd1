//! Logs and traces. `RUST_LOG` filters (default `info`), `TNS_LOG_FORMAT` picks text or JSON;
//! with `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans are also exported over OTLP/HTTP ([`otlp`]).
//! The W3C `traceparent` of a span is how a trace crosses the queue: a request's is kept with
//! what it queued, and the work done later is made its child.

mod otlp;

use std::collections::HashMap;

use opentelemetry::{propagation::TextMapPropagator, trace::TraceContextExt};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::{fmt, layer::SubscriberExt, util::SubscriberInitExt, EnvFilter, Layer};

pub use otlp::{Otlp, Tracing};

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

/// Install the process's subscriber: the log on stderr, and the OTLP export when configured
/// (none at all otherwise, so spans cost what logging costs). Call inside the runtime; keep the
/// answer until the end, then [`Tracing::shutdown`] sends what is still buffered.
pub fn init(format: LogFormat, otlp: Option<Otlp>) -> Tracing {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let log = match format {
        LogFormat::Text => fmt::layer().with_writer(std::io::stderr).boxed(),
        LogFormat::Json => fmt::layer().json().with_writer(std::io::stderr).boxed(),
    };
    let (export, tracing) = match otlp.map(Otlp::start) {
        Some(Ok((layer, tracing))) => (Some(layer), tracing),
        Some(Err(e)) => {
            eprintln!("tns: OTLP export not started: {e}");
            (None, Tracing::default())
        }
        None => (None, Tracing::default()),
    };
    let _ = tracing_subscriber::registry().with(filter).with(log).with(export).try_init();
    tracing
}

/// The W3C `traceparent` of `span`, when it belongs to an exported trace.
pub fn traceparent(span: &Span) -> Option<String> {
    let cx = span.context();
    let sc = cx.span().span_context().clone();
    sc.is_valid().then(|| format!("00-{}-{}-{:02x}", sc.trace_id(), sc.span_id(), sc.trace_flags().to_u8()))
}

/// Make `span` a child of the span `traceparent` names (a caller's, or the request that queued
/// the work); an unreadable one is ignored.
pub fn set_parent(span: &Span, traceparent: &str) {
    let carrier = HashMap::from([("traceparent".to_string(), traceparent.to_string())]);
    let cx = TraceContextPropagator::new().extract(&carrier);
    if cx.span().span_context().is_valid() {
        let _ = span.set_parent(cx);
    }
}

/// The HTTP request the current task serves.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// Its `X-Request-Id`.
    pub id: String,
    /// Its span's `traceparent`, when traces are exported.
    pub traceparent: Option<String>,
}

tokio::task_local! {
    static REQUEST: RequestContext;
}

/// The HTTP request the current task serves, if it serves one: what the request queues (a
/// submission) keeps its ID and trace, so the work done later can be traced back to it.
pub fn request() -> Option<RequestContext> {
    REQUEST.try_with(Clone::clone).ok()
}

/// Run `f` as the work of `request`.
pub async fn serving<F: std::future::Future>(request: RequestContext, f: F) -> F::Output {
    REQUEST.scope(request, f).await
}
