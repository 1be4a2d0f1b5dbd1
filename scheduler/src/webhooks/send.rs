//! One delivery attempt: POST the event's exact body, signed, to the subscription's endpoint
//! through the guarded client, and classify what happened. What is recorded of a failure is
//! its class and a fixed short reason (see [`Failure`]), never the error chain: that names
//! addresses, ports and resolver or TLS internals of our network.
//!
//! The client is hyper's own (hyper-util's pooled client), not reqwest: a delivery needs none
//! of what reqwest adds on top of it (redirects, proxies, cookies are all refused or unused
//! here), and that layer was measured at about a third of the cost of each POST (bench/README.md).

use std::{
    error::Error as StdError,
    time::{Duration, Instant},
};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http_body_util::{BodyExt, Full};
use hyper::{
    header::{HeaderName, HeaderValue, CONTENT_TYPE, RETRY_AFTER, USER_AGENT},
    Method, Request, StatusCode, Uri,
};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::{
    client::legacy::{connect::HttpConnector, Client as HyperClient},
    rt::TokioExecutor,
};
use rustls_platform_verifier::ConfigVerifierExt;

use crate::webhooks::resolver::{GuardedResolver, Unresolved};
use tns_core::domain::kinds::DeliveryOutcome;
use tns_core::{
    guard::{self, Policy, Refused},
    signing,
};

/// Response bodies are read (so the connection can be reused) up to this much, then dropped.
const MAX_RESPONSE_BODY: usize = 64 * 1024;

/// How long a pooled connection may sit unused before it is closed.
const POOL_IDLE: Duration = Duration::from_secs(30);

const USER_AGENT_VALUE: &str = concat!("TNS-Webhooks/", env!("CARGO_PKG_VERSION"));

/// The delivery client: names resolved through the SSRF guard, no proxy, redirects not
/// followed (a 3xx is a failed attempt: following one would let a receiver point us at an
/// internal address), TLS verified against the platform's roots, one timeout for the whole
/// exchange.
#[derive(Clone)]
pub struct Client {
    http: HyperClient<HttpsConnector<HttpConnector<GuardedResolver>>, Full<Bytes>>,
    timeout: Duration,
    policy: Policy,
}

impl Client {
    pub fn new(timeout: Duration, policy: Policy) -> anyhow::Result<Client> {
        install_tls_provider();
        let mut tcp = HttpConnector::new_with_resolver(GuardedResolver { allow_private: policy.allow_private });
        tcp.enforce_http(false); // https URLs are handed to the TLS layer below
        tcp.set_connect_timeout(Some(timeout));
        tcp.set_nodelay(true);
        let tls = rustls::ClientConfig::with_platform_verifier()?;
        let connector =
            HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().wrap_connector(tcp);
        let http = HyperClient::builder(TokioExecutor::new()).pool_idle_timeout(POOL_IDLE).build(connector);
        Ok(Client { http, timeout, policy })
    }
}

/// The delivery client's TLS uses rustls with ring (never aws-lc), installed as the process's
/// crypto provider; every process that builds a TLS client installs it first. Installing twice
/// is harmless.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// What the receiver (or the way to it) did.
#[derive(Debug, Clone)]
pub struct Response {
    pub outcome: DeliveryOutcome,
    pub status: Option<u16>,
    pub error: Option<String>,
    pub retry_after: Option<Duration>,
}

impl Response {
    /// An attempt that got no answer (or was not made), with why.
    pub fn failed(outcome: DeliveryOutcome, error: String) -> Response {
        Response { outcome, status: None, error: Some(error), retry_after: None }
    }
}

/// The headers of a delivery, ours and the Standard Webhooks ones: the event id (stable across
/// retries: receivers dedupe on it), when the attempt was made, the event type, and the
/// signatures. `X-Webhook-Signature` is the current secret's; `webhook-signature` has the
/// current secret's and, while a rotation's old secret still signs, the old one's.
pub fn headers(
    current: &signing::Key,
    previous: Option<&signing::Key>,
    body: &str,
    event_id: i64,
    event_type: &str,
    now: DateTime<Utc>,
) -> [(HeaderName, String); 7] {
    let (id, timestamp) = (event_id.to_string(), now.timestamp());
    let mut standard = current.sign_standard(&id, timestamp, body.as_bytes());
    if let Some(previous) = previous {
        standard.push(' ');
        standard.push_str(&previous.sign_standard(&id, timestamp, body.as_bytes()));
    }
    [
        (X_WEBHOOK_SIGNATURE, current.sign(body.as_bytes())),
        (X_WEBHOOK_ID, id.clone()),
        (X_WEBHOOK_TIMESTAMP, timestamp.to_string()),
        (X_WEBHOOK_EVENT, event_type.to_string()),
        (WEBHOOK_ID, id),
        (WEBHOOK_TIMESTAMP, timestamp.to_string()),
        (WEBHOOK_SIGNATURE, standard),
    ]
}

// Checked once, at compile time, rather than on every delivery.
const X_WEBHOOK_SIGNATURE: HeaderName = HeaderName::from_static("x-webhook-signature");
const X_WEBHOOK_ID: HeaderName = HeaderName::from_static("x-webhook-id");
const X_WEBHOOK_TIMESTAMP: HeaderName = HeaderName::from_static("x-webhook-timestamp");
const X_WEBHOOK_EVENT: HeaderName = HeaderName::from_static("x-webhook-event");
const WEBHOOK_ID: HeaderName = HeaderName::from_static("webhook-id");
const WEBHOOK_TIMESTAMP: HeaderName = HeaderName::from_static("webhook-timestamp");
const WEBHOOK_SIGNATURE: HeaderName = HeaderName::from_static("webhook-signature");
const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// Where a delivery goes: the endpoint URL checked by the guard (scheme, address literal;
/// names are checked by the resolver when connecting) and ready for the client.
pub fn target(client: &Client, url: &str) -> Result<Uri, Response> {
    let refused = |reason: &str| Response::failed(DeliveryOutcome::Refused, Failure::Blocked.with(reason));
    let url = guard::parse_endpoint(url, client.policy).map_err(|e| refused(&format!("the endpoint URL {e}")))?;
    url.as_str().parse().map_err(|_| refused("the endpoint URL is not usable"))
}

/// POST a delivery; with traces exported, `traceparent` names the attempt's span so the
/// receiver's own trace can continue it.
pub async fn post(
    client: &Client,
    uri: Uri,
    headers: [(HeaderName, String); 7],
    traceparent: Option<String>,
    body: String,
) -> Response {
    // Built in place: no builder is moved from call to call.
    let mut req = Request::new(Full::new(Bytes::from(body)));
    *req.method_mut() = Method::POST;
    *req.uri_mut() = uri;
    let h = req.headers_mut();
    h.reserve(headers.len() + 3);
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE));
    for (name, value) in headers.into_iter().chain(traceparent.map(|t| (TRACEPARENT, t))) {
        match HeaderValue::from_maybe_shared(Bytes::from(value)) {
            Ok(value) => h.insert(name, value),
            Err(_) => {
                return Response::failed(
                    DeliveryOutcome::Unreachable,
                    Failure::Unreachable.with("the request could not be built"),
                )
            }
        };
    }
    let deadline = tokio::time::Instant::from_std(Instant::now() + client.timeout);
    let resp = match tokio::time::timeout_at(deadline, client.http.request(req)).await {
        Err(_) => {
            return Response::failed(
                DeliveryOutcome::Timeout,
                Failure::Timeout.with("timed out waiting for the response"),
            )
        }
        Ok(Err(e)) => {
            let (failure, reason) = classify(&e);
            return Response::failed(failure.outcome(), failure.with(reason));
        }
        Ok(Ok(r)) => r,
    };
    let status = resp.status();
    let retry_after = resp.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
    let drained = tokio::time::timeout_at(deadline, drain(resp.into_body())).await;
    if status.is_success() {
        // The status is what counts; a body cut short after it does not undo the delivery.
        return Response {
            outcome: DeliveryOutcome::Delivered,
            status: Some(status.as_u16()),
            error: None,
            retry_after: None,
        };
    }
    let error = match drained {
        Err(_) => format!("HTTP {} and the body timed out", status.as_u16()),
        _ if status.is_redirection() => format!("HTTP {}: redirects are not followed", status.as_u16()),
        _ => format!("HTTP {}", status.as_u16()),
    };
    Response {
        outcome: DeliveryOutcome::Rejected,
        status: Some(status.as_u16()),
        error: Some(error),
        retry_after: retry_after.filter(|_| status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()),
    }
}

/// Read a response body up to [`MAX_RESPONSE_BODY`] and drop it; a longer one is cut off (and
/// its connection not reused).
async fn drain(mut body: hyper::body::Incoming) -> Result<(), hyper::Error> {
    let mut read = 0;
    while let Some(frame) = body.frame().await {
        if let Some(data) = frame?.data_ref() {
            read += data.len();
            if read > MAX_RESPONSE_BODY {
                break;
            }
        }
    }
    Ok(())
}

/// Why an attempt got no answer, as recorded: `<class>: <reason>`, the reason one of a fixed
/// few short phrases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The guard: an internal address, or plain http where it is not allowed.
    Blocked,
    /// The host name does not resolve.
    Dns,
    /// Nothing listens there (connection refused).
    Refused,
    /// The connection was reset or closed before an answer.
    Reset,
    Timeout,
    /// The TLS handshake failed (certificate not trusted, expired, for another name, …).
    Tls,
    /// No route, or another connection or protocol failure.
    Unreachable,
}

impl Failure {
    pub fn class(self) -> &'static str {
        match self {
            Failure::Blocked => "blocked",
            Failure::Dns => "dns",
            Failure::Refused => "refused",
            Failure::Reset => "reset",
            Failure::Timeout => "timeout",
            Failure::Tls => "tls",
            Failure::Unreachable => "unreachable",
        }
    }

    /// The attempt's outcome (the recorded set is older than the classes).
    pub fn outcome(self) -> DeliveryOutcome {
        match self {
            Failure::Blocked => DeliveryOutcome::Refused,
            Failure::Timeout => DeliveryOutcome::Timeout,
            _ => DeliveryOutcome::Unreachable,
        }
    }

    /// The recorded error: `<class>: <reason>`.
    pub fn with(self, reason: &str) -> String {
        format!("{}: {reason}", self.class())
    }
}

/// The class of a request that got no answer, and a fixed reason; nothing of the error's own
/// text (addresses, ports, OS error numbers) is kept.
fn classify(e: &hyper_util::client::legacy::Error) -> (Failure, &'static str) {
    for cause in causes(e) {
        if cause.is::<Refused>() {
            return (Failure::Blocked, "the endpoint's address is not allowed");
        }
        if cause.is::<Unresolved>() {
            return (Failure::Dns, "the host name does not resolve");
        }
        if let Some(tls) = cause.downcast_ref::<rustls::Error>() {
            return (Failure::Tls, tls_reason(tls));
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            match io.kind() {
                K::ConnectionRefused => return (Failure::Refused, "the connection was refused"),
                K::TimedOut => return (Failure::Timeout, "timed out connecting"),
                K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
                    return (Failure::Reset, "the connection was closed before an answer")
                }
                K::HostUnreachable | K::NetworkUnreachable | K::NetworkDown | K::AddrNotAvailable => {
                    return (Failure::Unreachable, "no route to the host")
                }
                _ => {}
            }
        }
        if let Some(h) = cause.downcast_ref::<hyper::Error>() {
            if h.is_incomplete_message() || h.is_closed() || h.is_canceled() {
                return (Failure::Reset, "the connection was closed before an answer");
            }
            if h.is_parse() || h.is_parse_status() {
                return (Failure::Unreachable, "the answer was not HTTP");
            }
        }
    }
    (Failure::Unreachable, "the connection failed")
}

fn tls_reason(e: &rustls::Error) -> &'static str {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            C::UnknownIssuer | C::BadSignature => "the certificate is not trusted (unknown issuer)",
            C::Expired | C::ExpiredContext { .. } => "the certificate has expired",
            C::NotValidYet | C::NotValidYetContext { .. } => "the certificate is not valid yet",
            C::NotValidForName | C::NotValidForNameContext { .. } => "the certificate is for another name",
            C::Revoked => "the certificate is revoked",
            _ => "the certificate was not accepted",
        },
        _ => "the TLS handshake failed",
    }
}

/// An error and its causes, looking inside I/O errors too (`io::Error::source` skips the error
/// it wraps, which is where TLS and resolver errors are).
fn causes<'a>(e: &'a (dyn StdError + 'static)) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    std::iter::successors(Some(e), |s: &&'a (dyn StdError + 'static)| match s.downcast_ref::<std::io::Error>() {
        Some(io) => io.get_ref().map(|inner| inner as &(dyn StdError + 'static)).or_else(|| (*s).source()),
        None => (*s).source(),
    })
}

/// `Retry-After`: seconds, or an HTTP date.
pub fn parse_retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = DateTime::parse_from_rfc2822(v).ok()?;
    (at.with_timezone(&Utc) - Utc::now()).to_std().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("120"), Some(Duration::from_secs(120)));
        let soon = (Utc::now() + chrono::Duration::seconds(600)).to_rfc2822();
        let d = parse_retry_after(&soon).unwrap();
        assert!(d > Duration::from_secs(590) && d <= Duration::from_secs(600), "{d:?}");
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"), None, "in the past");
        assert_eq!(parse_retry_after("soon"), None);
    }
}
