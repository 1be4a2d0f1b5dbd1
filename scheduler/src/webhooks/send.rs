//! One delivery attempt: POST the event's exact body, signed, to the subscription's endpoint
//! through the guarded client, and classify what happened.

use std::{error::Error as _, time::Duration};

use chrono::{DateTime, Utc};
use reqwest::{header::HeaderValue, redirect, Client, StatusCode, Url};

use super::{
    guard::{self, GuardedResolver, Refused},
    signing,
};
use crate::settings::WebhookSettings;

/// Response bodies are read (so the connection can be reused) up to this much, then dropped.
const MAX_RESPONSE_BODY: usize = 64 * 1024;

/// The delivery client: no redirects (a 3xx is a failed attempt: following one would let a
/// receiver point us at an internal address), no proxy, names resolved through the SSRF guard,
/// one timeout for the whole exchange.
pub fn client(settings: &WebhookSettings) -> anyhow::Result<Client> {
    install_tls_provider();
    Ok(Client::builder()
        .timeout(settings.timeout)
        .connect_timeout(settings.timeout)
        .redirect(redirect::Policy::none())
        .no_proxy()
        .dns_resolver(GuardedResolver::shared(settings.allow_private))
        .user_agent(concat!("TNS-Webhooks/", env!("CARGO_PKG_VERSION")))
        .pool_idle_timeout(Duration::from_secs(30))
        .build()?)
}

/// reqwest is built without a default TLS crypto provider (no aws-lc), so every process that
/// builds a reqwest client installs ring first. Installing twice is harmless.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// What the receiver (or the way to it) did.
#[derive(Debug, Clone)]
pub struct Response {
    /// `delivered`, `rejected`, `timeout`, `unreachable` or `refused`.
    pub outcome: &'static str,
    pub status: Option<u16>,
    pub error: Option<String>,
    pub retry_after: Option<Duration>,
}

impl Response {
    fn failed(outcome: &'static str, error: String) -> Response {
        Response { outcome, status: None, error: Some(error), retry_after: None }
    }
}

/// The headers of a delivery: signature of the exact body, event id (stable across retries:
/// receivers dedupe on it), when the attempt was made, and the event type.
pub fn headers(
    secret: &[u8],
    body: &str,
    event_id: i64,
    event_type: &str,
    now: DateTime<Utc>,
) -> [(&'static str, String); 4] {
    [
        ("x-webhook-signature", signing::sign(secret, body.as_bytes())),
        ("x-webhook-id", event_id.to_string()),
        ("x-webhook-timestamp", now.timestamp().to_string()),
        ("x-webhook-event", event_type.to_string()),
    ]
}

pub async fn post(
    client: &Client,
    settings: &WebhookSettings,
    url: &str,
    headers: [(&'static str, String); 4],
    body: String,
) -> Response {
    // The address literal case: the resolver is not asked for those, so check here.
    let url: Url = match guard::parse_endpoint(url, settings.allow_private) {
        Ok(u) => u,
        Err(e) => return Response::failed("refused", format!("endpoint_url {e}")),
    };
    let mut req = client.post(url).header("content-type", HeaderValue::from_static("application/json"));
    for (name, value) in headers {
        req = req.header(name, value);
    }
    let mut resp = match req.body(body).send().await {
        Ok(r) => r,
        Err(e) => return Response::failed(classify(&e), describe(&e)),
    };
    let status = resp.status();
    let retry_after = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
    let mut read = 0;
    let drained = loop {
        match resp.chunk().await {
            Ok(Some(c)) if read + c.len() <= MAX_RESPONSE_BODY => read += c.len(),
            Ok(Some(_)) => break Ok(()), // too long: stop reading, the connection is dropped
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    if status.is_success() {
        // The status is what counts; a body cut short after it does not undo the delivery.
        return Response { outcome: "delivered", status: Some(status.as_u16()), error: None, retry_after: None };
    }
    let error = match drained {
        Err(e) if e.is_timeout() => format!("HTTP {} and the body timed out", status.as_u16()),
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

fn classify(e: &reqwest::Error) -> &'static str {
    if chain(e).any(|s| s.is::<Refused>()) {
        "refused"
    } else if e.is_timeout() {
        "timeout"
    } else {
        "unreachable"
    }
}

fn chain<'a>(e: &'a reqwest::Error) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(e.source(), |s: &&'a (dyn std::error::Error + 'static)| (*s).source())
}

/// The error with its causes, without the URL (it is on the subscription already).
fn describe(e: &reqwest::Error) -> String {
    let mut out = if e.is_timeout() { "timed out".to_string() } else { "request failed".to_string() };
    for s in chain(e) {
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
