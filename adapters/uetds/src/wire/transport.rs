//! HTTP for SOAP: one pooled client per process, blocking calls.
//!
//! The adapter is called from many blocking threads at once, so a [`Transport`] owns a small
//! tokio runtime (two workers) that drives hyper's pooled client; a call hands its exchange to
//! that runtime and waits for the outcome, from any thread (even one that is itself inside
//! another runtime). TLS is rustls with ring and the platform's trust store, plus one optional
//! extra root (an egress proxy's or a simulator's own CA); plain `http://` is for simulators.
//!
//! Every request is authenticated twice, as U-ETDS wants: HTTP Basic with the web-service
//! credentials, and the same pair in the body's `wsuser`. The password never appears in an
//! error: every error is redacted ([`CallError::redact`]: each form of the credentials masked,
//! then cut to a short excerpt) before it is returned.

use std::{
    path::PathBuf,
    sync::{mpsc, Arc},
    time::Duration,
};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{
    header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE, USER_AGENT},
    Request, Uri,
};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::{
    client::legacy::{connect::HttpConnector, Client},
    rt::{TokioExecutor, TokioTimer},
};
use serde::{de::DeserializeOwned, Serialize};

use super::{
    redact::Secrets,
    soap::{self, CallError},
    Operation, WsUser,
};

/// Replies larger than this are refused (a trip report PDF comes base64 inside the SOAP).
pub const MAX_RESPONSE_BODY: usize = 8 * 1024 * 1024;

/// How long a pooled connection may sit unused before it is closed.
const POOL_IDLE: Duration = Duration::from_secs(30);

const USER_AGENT_VALUE: &str = concat!("TNS-UETDS/", env!("CARGO_PKG_VERSION"));

const SOAP_CONTENT_TYPE: &str = "text/xml; charset=utf-8";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportSettings {
    /// TCP connect (and TLS handshake) deadline.
    pub connect_timeout: Duration,
    /// The whole exchange, connect to last byte of the reply.
    pub call_timeout: Duration,
    /// A PEM file of root certificates trusted besides the platform's.
    pub extra_ca_pem: Option<PathBuf>,
}

/// The process's SOAP client. Cheap to clone; clones share the pool and the runtime.
#[derive(Clone)]
pub struct Transport {
    inner: Arc<Inner>,
}

struct Inner {
    /// `Option` so that dropping can shut it down without blocking.
    runtime: Option<tokio::runtime::Runtime>,
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    call_timeout: Duration,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport").field("call_timeout", &self.inner.call_timeout).finish_non_exhaustive()
    }
}

impl Transport {
    pub fn new(s: &TransportSettings) -> Result<Transport, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("uetds-http")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the HTTP runtime: {e}"))?;
        let tls = tls_config(s.extra_ca_pem.as_deref())?;
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false); // https URLs are handed to the TLS layer below
        tcp.set_connect_timeout(Some(s.connect_timeout));
        tcp.set_nodelay(true);
        let connector =
            HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().wrap_connector(tcp);
        let http = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(POOL_IDLE)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Ok(Transport { inner: Arc::new(Inner { runtime: Some(runtime), http, call_timeout: s.call_timeout }) })
    }

    /// Calls a U-ETDS operation at `url` and returns its `<return>`.
    pub fn call<O: Operation>(&self, url: &str, user: &WsUser, op: &O) -> Result<O::Return, CallError> {
        redacted(user, || {
            let body = soap::try_envelope(super::NAMESPACE, O::NAME, op)
                .map_err(|detail| CallError::Unreachable { sent: false, detail })?;
            let (status, reply) = self.exchange(url, user, O::ACTION, body)?;
            answer(status, &reply, || soap::parse_reply::<O>(&reply))
        })
    }

    /// Calls an operation known only at run time (namespace, wrapper element and SOAPAction
    /// from configuration) and returns its `<return>`.
    pub fn call_dynamic<B: Serialize, R: DeserializeOwned>(
        &self,
        url: &str,
        user: &WsUser,
        namespace: &str,
        name: &str,
        action: &str,
        body: &B,
    ) -> Result<R, CallError> {
        redacted(user, || {
            let body = soap::try_envelope(namespace, name, body)
                .map_err(|detail| CallError::Unreachable { sent: false, detail })?;
            let (status, reply) = self.exchange(url, user, action, body)?;
            answer(status, &reply, || soap::parse_return::<R>(&reply, name))
        })
    }

    /// POSTs the envelope and returns the status and the body of the reply.
    fn exchange(&self, url: &str, user: &WsUser, action: &str, envelope: String) -> Result<(u16, Bytes), CallError> {
        let not_sent = |detail: String| CallError::Unreachable { sent: false, detail };
        let uri: Uri = url.parse().map_err(|e| not_sent(format!("the service URL is not usable ({e})")))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(not_sent("the service URL must be http:// or https:// with a host".into()));
        }
        let soap_action = HeaderValue::from_str(&quoted(action))
            .map_err(|_| not_sent("the SOAPAction is not a valid header value".into()))?;
        let credentials = [user.kullanici_adi.as_str(), ":", user.sifre.as_str()].concat();
        let mut authorization =
            HeaderValue::from_str(&["Basic ", &base64::engine::general_purpose::STANDARD.encode(credentials)].concat())
                .map_err(|_| not_sent("the credentials cannot be sent".into()))?;
        authorization.set_sensitive(true);
        let request = Request::post(uri)
            .header(CONTENT_TYPE, HeaderValue::from_static(SOAP_CONTENT_TYPE))
            .header("SOAPAction", soap_action)
            .header(AUTHORIZATION, authorization)
            .header(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE))
            .body(Full::new(Bytes::from(envelope)))
            .map_err(|e| not_sent(format!("request not built: {e}")))?;

        let http = self.inner.http.clone();
        let timeout = self.inner.call_timeout;
        let (tx, rx) = mpsc::sync_channel(1);
        let runtime = self.inner.runtime.as_ref().expect("the runtime lives as long as the transport");
        runtime.spawn(async move {
            let outcome = tokio::time::timeout(timeout, send(http, request)).await.unwrap_or_else(|_| {
                Err(CallError::Unreachable { sent: true, detail: format!("no complete reply within {timeout:?}") })
            });
            let _ = tx.send(outcome);
        });
        rx.recv().unwrap_or_else(|_| {
            Err(CallError::Unreachable { sent: true, detail: "the HTTP runtime stopped during the call".into() })
        })
    }
}

/// The exchange proper: the request, then the reply's body up to [`MAX_RESPONSE_BODY`].
async fn send(
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> Result<(u16, Bytes), CallError> {
    let response = http.request(request).await.map_err(|e| CallError::Unreachable {
        // A connect error (DNS, TCP, TLS handshake) means nothing was written.
        sent: !e.is_connect(),
        detail: describe(&e),
    })?;
    let status = response.status().as_u16();
    let mut body = response.into_body();
    let mut read = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| CallError::Unreachable { sent: true, detail: describe(&e) })?;
        if let Some(data) = frame.data_ref() {
            if read.len() + data.len() > MAX_RESPONSE_BODY {
                let detail = format!("reply larger than {} MiB", MAX_RESPONSE_BODY / (1024 * 1024));
                return Err(if (200..300).contains(&status) {
                    CallError::Malformed(detail)
                } else {
                    CallError::Http { status, detail }
                });
            }
            read.extend_from_slice(data);
        }
    }
    Ok((status, Bytes::from(read)))
}

/// `call`'s error, whichever step it came from, redacted for `user`.
fn redacted<R>(user: &WsUser, call: impl FnOnce() -> Result<R, CallError>) -> Result<R, CallError> {
    call().map_err(|e| e.redact(&Secrets::of(user)))
}

/// A 2xx reply is parsed; any other is a Fault when it carries one, else an HTTP error.
fn answer<R>(status: u16, reply: &[u8], parse: impl FnOnce() -> Result<R, CallError>) -> Result<R, CallError> {
    if (200..300).contains(&status) {
        return parse();
    }
    match parse() {
        Err(fault @ CallError::Fault { .. }) => Err(fault),
        _ => Err(CallError::Http { status, detail: soap::snippet(reply) }),
    }
}

/// SOAP 1.1 clients send the action quoted; an empty one is `""`.
fn quoted(action: &str) -> String {
    ["\"", action, "\""].concat()
}

fn tls_config(extra_ca_pem: Option<&std::path::Path>) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::{pem::PemObject, CertificateDer};

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut extra = Vec::new();
    if let Some(path) = extra_ca_pem {
        let pem = std::fs::read(path).map_err(|e| format!("cannot read the CA file {}: {e}", path.display()))?;
        for cert in CertificateDer::pem_slice_iter(&pem) {
            extra.push(cert.map_err(|e| format!("bad certificate in {}: {e}", path.display()))?);
        }
        if extra.is_empty() {
            return Err(format!("no certificate in {}", path.display()));
        }
    }
    let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())
        .map_err(|e| format!("cannot set up TLS verification: {e}"))?;
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

/// The error with its causes (no URL, no credentials), at most 300 characters.
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.ends_with(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        cause = c.source();
    }
    out.chars().take(300).collect()
}
