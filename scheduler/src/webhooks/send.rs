//! One delivery attempt: POST the event's exact body, signed, to the subscription's endpoint
//! through the guarded client, and classify what happened.
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
    Request, StatusCode, Uri,
};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::{
    client::legacy::{connect::HttpConnector, Client as HyperClient},
    rt::TokioExecutor,
};
use rustls_platform_verifier::ConfigVerifierExt;

use super::{
    guard::{self, GuardedResolver, Refused},
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
    allow_private: bool,
}

impl Client {
    pub fn new(timeout: Duration, allow_private: bool) -> anyhow::Result<Client> {
        install_tls_provider();
        let mut tcp = HttpConnector::new_with_resolver(GuardedResolver { allow_private });
        tcp.enforce_http(false); // https URLs are handed to the TLS layer below
        tcp.set_connect_timeout(Some(timeout));
        tcp.set_nodelay(true);
        let tls = rustls::ClientConfig::with_platform_verifier()?;
        let connector =
            HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().wrap_connector(tcp);
        let http = HyperClient::builder(TokioExecutor::new()).pool_idle_timeout(POOL_IDLE).build(connector);
        Ok(Client { http, timeout, allow_private })
    }
}

/// The delivery client's TLS uses rustls with ring (never aws-lc), installed as the process's
/// crypto provider; every process that builds a TLS client installs it first. Installing twice
/// is harmless.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Every outcome an attempt can have (`skipped`: not sent, the subscription is no longer
/// active).
pub const OUTCOMES: [&str; 6] = ["delivered", "rejected", "timeout", "unreachable", "refused", "skipped"];

/// What the receiver (or the way to it) did.
#[derive(Debug, Clone)]
pub struct Response {
    /// `delivered`, `rejected`, `timeout`, `unreachable` or `refused` (or `skipped`).
    pub outcome: &'static str,
    pub status: Option<u16>,
    pub error: Option<String>,
    pub retry_after: Option<Duration>,
}

impl Response {
    /// An attempt that got no answer (or was not made), with why.
    pub fn failed(outcome: &'static str, error: String) -> Response {
        Response { outcome, status: None, error: Some(error), retry_after: None }
    }
}

/// The headers of a delivery: signature of the exact body, event id (stable across retries:
/// receivers dedupe on it), when the attempt was made, and the event type.
pub fn headers(
    key: &signing::Key,
    body: &str,
    event_id: i64,
    event_type: &str,
    now: DateTime<Utc>,
) -> [(HeaderName, String); 4] {
    [
        (HeaderName::from_static("x-webhook-signature"), key.sign(body.as_bytes())),
        (HeaderName::from_static("x-webhook-id"), event_id.to_string()),
        (HeaderName::from_static("x-webhook-timestamp"), now.timestamp().to_string()),
        (HeaderName::from_static("x-webhook-event"), event_type.to_string()),
    ]
}

/// Where a delivery goes: the endpoint URL checked by the guard (its address literal, if any;
/// names are checked by the resolver when connecting) and ready for the client.
pub fn target(client: &Client, url: &str) -> Result<Uri, Response> {
    let url = guard::parse_endpoint(url, client.allow_private)
        .map_err(|e| Response::failed("refused", format!("endpoint_url {e}")))?;
    url.as_str().parse().map_err(|e| Response::failed("refused", format!("endpoint_url is not usable ({e})")))
}

pub async fn post(client: &Client, uri: Uri, headers: [(HeaderName, String); 4], body: String) -> Response {
    let mut req = Request::post(uri)
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .header(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE));
    for (name, value) in headers {
        req = req.header(name, value);
    }
    let req = match req.body(Full::new(Bytes::from(body))) {
        Ok(r) => r,
        Err(e) => return Response::failed("unreachable", format!("request failed: {e}")),
    };
    let deadline = tokio::time::Instant::from_std(Instant::now() + client.timeout);
    let resp = match tokio::time::timeout_at(deadline, client.http.request(req)).await {
        Err(_) => return Response::failed("timeout", "timed out waiting for the response".into()),
        Ok(Err(e)) => return Response::failed(classify(&e), describe(&e)),
        Ok(Ok(r)) => r,
    };
    let status = resp.status();
    let retry_after = resp.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
    let drained = tokio::time::timeout_at(deadline, drain(resp.into_body())).await;
    if status.is_success() {
        // The status is what counts; a body cut short after it does not undo the delivery.
        return Response { outcome: "delivered", status: Some(status.as_u16()), error: None, retry_after: None };
    }
    let error = match drained {
        Err(_) => format!("HTTP {} and the body timed out", status.as_u16()),
        _ if status.is_redirection() => format!("HTTP {}: redirects are not followed", status.as_u16()),
        _ => format!("HTTP {}", status.as_u16()),
    };
    Response {
        outcome: "rejected",
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

fn classify(e: &hyper_util::client::legacy::Error) -> &'static str {
    if causes(e).any(|s| s.is::<Refused>()) {
        "refused"
    } else if causes(e)
        .any(|s| s.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut))
    {
        "timeout"
    } else {
        "unreachable"
    }
}

fn causes<'a>(e: &'a (dyn StdError + 'static)) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    std::iter::successors(Some(e), |s: &&'a (dyn StdError + 'static)| (*s).source())
}

/// The error with its causes, without the URL (it is on the subscription already).
fn describe(e: &hyper_util::client::legacy::Error) -> String {
    let mut out = if classify(e) == "timeout" { "timed out".to_string() } else { "request failed".to_string() };
    for s in causes(e) {
        let text = s.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
    }
    out.chars().take(500).collect()
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
