//! Request IDs and the request span.
//!
//! Every answer carries `X-Request-Id`: the caller's own when it sent a sane one (so a client or
//! a proxy can name its request in its own logs), else a new one. The request runs in a `request`
//! span holding that ID, the method, the route template, the organization once known, the status
//! and the latency, so every log line of the request names it; a 5xx body's `detail` ends with
//! the ID, so support can find the case from what a customer pastes.

use std::time::Duration;

use axum::{
    body::Body,
    extract::Request,
    http::{header, HeaderName, HeaderValue},
    middleware::{from_fn, Next},
    response::Response,
    Router,
};
use tns_core::{
    error_body::{status_name, Code},
    telemetry::{self, RequestContext},
};
use tower::ServiceBuilder;
use tower_http::trace::TraceLayer;
use tracing::{field::Empty, Span};

pub const HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// Longest ID taken from a caller (a UUID is 36, a W3C trace id 32).
const MAX_LEN: usize = 128;

/// The request's ID, in the request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

/// A caller's ID is kept only if it is short and plain (letters, digits, `-`, `_`, `.`, `:`): it
/// goes into logs and a response header, so nothing that could forge a log line or a header.
pub fn sane(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_LEN
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// 128 random bits in hex.
fn new_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// `routes` with request IDs and the request span around everything they serve (add it last,
/// so it is outermost and even a refusal by an outer layer has an ID).
pub fn traced<S: Clone + Send + Sync + 'static>(routes: Router<S>) -> Router<S> {
    let trace = TraceLayer::new_for_http()
        .make_span_with(|req: &Request| {
            let id = req.extensions().get::<RequestId>().map(|r| r.0.as_str()).unwrap_or("");
            let span = tracing::info_span!(
                "request",
                request_id = id,
                method = %req.method(),
                route = Empty,
                org = Empty,
                status = Empty,
                latency_ms = Empty,
            );
            // A caller's W3C trace continues here (exported only when OTLP is configured).
            if let Some(parent) = req.headers().get("traceparent").and_then(|v| v.to_str().ok()) {
                telemetry::set_parent(&span, parent);
            }
            span
        })
        .on_request(())
        .on_response(|res: &Response, latency: Duration, span: &Span| {
            span.record("status", res.status().as_u16());
            span.record("latency_ms", latency.as_secs_f64() * 1000.0);
            tracing::debug!("answered");
        });
    // One layer of three: `Router::layer` boxes each route once per call, and a boxed route is
    // cloned, box by box, for every request it serves.
    routes.layer(ServiceBuilder::new().layer(from_fn(assign)).layer(trace).layer(from_fn(serve_in_context)))
}

/// Inside the request's span: the request's ID and trace are the task's, for what it queues.
async fn serve_in_context(req: Request, next: Next) -> Response {
    let id = req.extensions().get::<RequestId>().map(|r| r.0.clone()).unwrap_or_default();
    let context = RequestContext { id, traceparent: telemetry::traceparent(&Span::current()) };
    telemetry::serving(context, next.run(req)).await
}

/// The route template the request was served by (raw paths would put IDs in every span name).
pub fn record_route(route: &str) {
    Span::current().record("route", route);
}

/// The organization the request acts for, once its credentials are known.
pub fn record_org(org: i64) {
    Span::current().record("org", org);
}

async fn assign(mut req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get(&HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| sane(v))
        .map(str::to_owned)
        .unwrap_or_else(new_id);
    req.extensions_mut().insert(RequestId(id.clone()));
    let mut res = next.run(req).await;
    if res.status().is_server_error() {
        res = name_in_detail(res, &id).await;
    }
    let value = HeaderValue::from_str(&id).expect("a sane or generated ID is a header value");
    res.headers_mut().insert(HEADER, value);
    res
}

/// Largest 5xx body rewritten (they are a line of JSON; a larger one is passed on as it is).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A JSON error body's `detail` gets " (request id …)" appended; any other body is kept.
async fn name_in_detail(res: Response, id: &str) -> Response {
    let json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        // Too large or broken: the body is gone either way; say so plainly.
        parts.headers.remove(header::CONTENT_LENGTH);
        let error = status_name(parts.status.as_u16(), parts.status.canonical_reason());
        let detail = format!("an unexpected error occurred (request id {id})");
        let code = Code::for_status(parts.status.as_u16());
        let body = serde_json::json!({ "error": error, "detail": detail, "code": code });
        return Response::from_parts(parts, Body::from(body.to_string()));
    };
    let mut value: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(_) => return Response::from_parts(parts, Body::from(bytes)),
    };
    if let Some(serde_json::Value::String(detail)) = value.get_mut("detail") {
        detail.push_str(&format!(" (request id {id})"));
    }
    let out = serde_json::to_vec(&value).expect("a JSON value serializes");
    parts.headers.insert(header::CONTENT_LENGTH, HeaderValue::from(out.len()));
    Response::from_parts(parts, Body::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_short_ids_are_kept() {
        assert!(sane("3f2a-..._:Z9"));
        assert!(sane(&"a".repeat(MAX_LEN)));
        assert!(!sane(&"a".repeat(MAX_LEN + 1)));
        assert!(!sane(""));
        assert!(!sane("a b"));
        assert!(!sane("a\nlevel=error"));
        assert!(!sane("ş"));
        assert_eq!(new_id().len(), 32);
        assert!(sane(&new_id()));
    }
}
