//! Span export over OTLP/HTTP, configured by the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT`
//! (the collector's base URL; `/v1/traces` is added) or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the
//! full URL), `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the default, or `http/json`) and
//! `OTEL_SERVICE_NAME`. Spans are batched and posted from the SDK's own thread through hyper on
//! this process's runtime (rustls with ring, as every TLS client here), so the export shares the
//! HTTP stack the webhooks use and never blocks a request.

use std::{future::Future, pin::Pin, time::Duration};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{HttpClient, HttpError};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::{trace::SdkTracerProvider, Resource};
use rustls_platform_verifier::ConfigVerifierExt;
use tracing::Subscriber;
use tracing_subscriber::registry::LookupSpan;

use crate::env::{ConfigError, Vars};

/// How long one export may take (the SDK drops the batch after that, and says so).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// A collector's answer is a line; more is not read.
const MAX_ANSWER: usize = 64 * 1024;

/// Where spans go, read from the standard variables; `None` when no endpoint is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Otlp {
    /// The full URL spans are posted to.
    pub url: String,
    pub json: bool,
    pub service: String,
}

impl Otlp {
    /// `service` names the process when `OTEL_SERVICE_NAME` does not (`tns-api`, …).
    pub fn from_vars(vars: &Vars<'_>, service: &str) -> Result<Option<Otlp>, ConfigError> {
        let url = match (vars.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), vars.get("OTEL_EXPORTER_OTLP_ENDPOINT")) {
            (Some(full), _) => ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", full),
            (None, Some(base)) => ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("{}/v1/traces", base.trim_end_matches('/'))),
            (None, None) => return Ok(None),
        };
        let (var, url) = url;
        match url::Url::parse(&url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
            _ => return Err(vars.bad(var, "must be an http:// or https:// URL")),
        }
        let json = match vars.get("OTEL_EXPORTER_OTLP_PROTOCOL").as_deref() {
            None | Some("http/protobuf") => false,
            Some("http/json") => true,
            Some(_) => {
                return Err(vars.bad("OTEL_EXPORTER_OTLP_PROTOCOL", "must be `http/protobuf` or `http/json` (no gRPC)"))
            }
        };
        let service = vars.get("OTEL_SERVICE_NAME").unwrap_or_else(|| service.to_string());
        Ok(Some(Otlp { url, json, service }))
    }

    /// The layer that turns spans into exported ones, and the provider behind it.
    pub(super) fn start<S>(
        self,
    ) -> Result<(tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::SdkTracer>, Tracing), String>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let protocol = if self.json { Protocol::HttpJson } else { Protocol::HttpBinary };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(Post::new()?)
            .with_endpoint(self.url)
            .with_protocol(protocol)
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| e.to_string())?;
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(Resource::builder().with_service_name(self.service).build())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("tns"));
        Ok((layer, Tracing(Some(provider))))
    }
}

/// The export, kept until the process ends.
#[derive(Default)]
pub struct Tracing(Option<SdkTracerProvider>);

impl Tracing {
    /// Send what is still buffered (the SDK's thread waits on this runtime, so not from it).
    pub async fn shutdown(self) {
        if let Some(provider) = self.0 {
            let _ = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        }
    }
}

/// The exporter's HTTP client: hyper on the runtime that started it (the SDK calls from a
/// thread of its own, where no runtime runs).
#[derive(Debug, Clone)]
struct Post {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    runtime: tokio::runtime::Handle,
}

impl Post {
    fn new() -> Result<Post, String> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let tls = rustls::ClientConfig::with_platform_verifier().map_err(|e| format!("TLS: {e}"))?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        let connector =
            HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().wrap_connector(http);
        let client = Client::builder(hyper_util::rt::TokioExecutor::new()).build(connector);
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| "no async runtime".to_string())?;
        Ok(Post { client, runtime })
    }
}

impl HttpClient for Post {
    fn send_bytes<'s, 'f>(
        &'s self,
        request: http::Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<http::Response<Bytes>, HttpError>> + Send + 'f>>
    where
        's: 'f,
        Self: 'f,
    {
        let client = self.client.clone();
        let task = self.runtime.spawn(async move {
            // The answer's body within the same deadline: a collector that stalls mid-answer
            // must not hold the SDK's thread (nor the process's shutdown).
            let exchange = async {
                let (parts, body) = request.into_parts();
                let answer = client.request(http::Request::from_parts(parts, Full::new(body))).await?;
                let (parts, body) = answer.into_parts();
                let body = Limited::new(body, MAX_ANSWER).collect().await?.to_bytes();
                Ok::<_, HttpError>(http::Response::from_parts(parts, body))
            };
            tokio::time::timeout(EXPORT_TIMEOUT, exchange).await?
        });
        Box::pin(async move { task.await? })
    }
}
