//! Request IDs and the spans that carry them: every answer names its request (`X-Request-Id`,
//! the caller's own when sane), a 5xx names it in `detail` (see `outage`), a submission keeps it
//! and the scheduler's log lines for its attempt carry it; and a whole run's log holds none of
//! the identity numbers it was given.

use std::sync::{Arc, Mutex};

use reqwest::Method;
use serde_json::{json, Value};

use crate::{
    fixtures::{self, passenger},
    helpers::*,
};

fn request_id(res: &reqwest::Response) -> String {
    res.headers()["x-request-id"].to_str().unwrap().to_string()
}

fn generated(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[tokio::test]
async fn every_answer_names_its_request_keeping_a_sane_id_the_caller_sent() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let sent = |path: &str, id: Option<&str>| {
        let mut r = app.req(Method::GET, path, Some(&org.key));
        if let Some(id) = id {
            r = r.header("x-request-id", id);
        }
        r.send()
    };
    // Answers of every kind get one, each its own.
    let (a, b) = (sent("/portal/me", None).await.unwrap(), sent("/portal/me", None).await.unwrap());
    assert!(generated(&request_id(&a)) && generated(&request_id(&b)), "{}", request_id(&a));
    assert_ne!(request_id(&a), request_id(&b));
    for path in ["/healthz", "/api/v1/no-such-route", "/api/v1/openapi.json"] {
        assert!(generated(&request_id(&sent(path, None).await.unwrap())), "{path}");
    }
    // The caller's own, when short and plain, is kept.
    let id = "client-7f3a_2026.11:26";
    assert_eq!(request_id(&sent("/portal/me", Some(id)).await.unwrap()), id);
    // Anything else is replaced, never echoed into a header or a log line.
    for bad in ["has space", "quote\"d", &"a".repeat(129), "ş"] {
        let res = sent("/portal/me", Some(bad)).await.unwrap();
        assert!(generated(&request_id(&res)), "{bad:?} was kept as {}", request_id(&res));
    }
}

#[tokio::test]
async fn a_submission_keeps_the_request_that_queued_it_and_its_log_lines_say_so() {
    let env = Env::new().await.with_scheduler().with(&[
        ("TNS_LOG_FORMAT", "json"),
        // Everything any part writes, so the check below for identity numbers covers it all.
        ("RUST_LOG", "debug"),
        ("TNS_ADMIN_ADDR", "127.0.0.1:0"),
    ]);
    let p = Proc::start_logged("dev", &env).await;
    let org = p.register().await;
    let driver_tckn = tckn(org.id as u64 * 10 + 3);
    let passenger_tckn = tckn(org.id as u64 * 10 + 4);
    let plate = format!("34TRC{}", org.id % 100_000);
    let v = p.post_ok("/portal/vehicles", &org.key, fixtures::vehicle(&plate), 201).await;
    let mut person = fixtures::person(0, "driver");
    person["identity_number"] = json!(driver_tckn);
    let d = p.post_ok("/portal/personnel", &org.key, person, 201).await;
    let mut journey = fixtures::journey(v["id"].clone());
    journey["personnel_ids"] = json!([d["id"]]);
    let mut traveller = passenger(0);
    traveller["identity_number"] = json!(passenger_tckn);
    let j = p.post_ok("/portal/journeys", &org.key, journey, 201).await["id"].as_i64().unwrap();
    let path = format!("/portal/journeys/{j}/passengers:bulk-upsert");
    p.post_ok(&path, &org.key, json!({ "passengers": [traveller] }), 200).await;

    let id = "it-trace-submit-1";
    let res = p
        .req(Method::POST, &format!("/portal/journeys/{j}/submit"), Some(&org.key))
        .header("x-request-id", id)
        .header("Prefer", "wait=20")
        .send()
        .await
        .unwrap();
    assert_eq!(request_id(&res), id);
    let s = json_of(res, 202).await;
    assert_eq!(s["status"], "delivered", "{s}");
    let kept: Option<String> = sqlx::query_scalar("SELECT request_id FROM submissions WHERE org_id = $1")
        .bind(org.id)
        .fetch_one(&env.pool().await)
        .await
        .unwrap();
    assert_eq!(kept.as_deref(), Some(id));

    // The admin API names its answers too.
    let admin = client().get(format!("{}/admin/v1/openapi.json", p.admin_root.as_ref().unwrap())).send().await.unwrap();
    assert!(generated(&request_id(&admin)));

    // The request's own lines, and the scheduler's for the attempt, carry the ID. The attempt's
    // line comes just after the outcome is recorded, which is when the answer above could come.
    let spans_of = |line: &str, name: &str| -> Option<Value> {
        // `span` is the event's own span (its parent), `spans` the ones it runs in.
        let v: Value = serde_json::from_str(line).ok()?;
        let spans = v["spans"].as_array().into_iter().flatten();
        std::iter::once(&v["span"]).chain(spans).find(|s| s["name"] == name).cloned()
    };
    let attempt = eventually(std::time::Duration::from_secs(10), || async {
        let log = p.log.lock().unwrap().clone();
        log.iter()
            .filter_map(|l| spans_of(l, "submission"))
            .find(|s| s["request_id"] == id && s["state"] == "delivered")
    })
    .await;
    let attempt = attempt.expect("a log line of the attempt's span, naming the request");
    assert_eq!(attempt["org"], org.id, "{attempt}");
    assert_eq!(attempt["operation"], "journey", "{attempt}");
    let log = p.log.lock().unwrap().clone();
    // The line of its answer (`tower_http`'s, at debug) has the span whole: route and status too.
    let answered =
        log.iter().filter_map(|l| spans_of(l, "request")).find(|s| s["request_id"] == id && s["status"] == 202);
    let answered = answered.expect("the log line of the request's answer");
    assert_eq!(answered["route"], "/api/v1/portal/journeys/{id}/submit", "{answered}");
    assert_eq!(answered["org"], org.id, "{answered}");

    // No identity number it was given is anywhere in the log.
    assert!(log.len() > 20, "the run logged ({} lines)", log.len());
    for number in [&driver_tckn, &passenger_tckn] {
        let leaked: Vec<&String> = log.iter().filter(|l| l.contains(number.as_str())).collect();
        assert!(leaked.is_empty(), "identity number {number} in the log: {leaked:?}");
    }
}

/// What the receiver got.
#[derive(Default)]
struct Received {
    spans: Vec<Value>,
    /// The `traceparent` of each webhook POST.
    hooks: Vec<Option<String>>,
}

/// An OTLP/HTTP receiver (JSON) keeping every span posted to it, and a webhook endpoint
/// (`/hook`) keeping each POST's `traceparent`.
async fn otlp_receiver() -> (String, Arc<Mutex<Received>>) {
    let got: Arc<Mutex<Received>> = Arc::default();
    let (kept, hooks) = (got.clone(), got.clone());
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let hooks = hooks.clone();
            async move {
                let traceparent = headers.get("traceparent").map(|v| v.to_str().unwrap().to_string());
                hooks.lock().unwrap().hooks.push(traceparent);
                "ok"
            }
        }),
    );
    let app = app.route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                let v: Value = serde_json::from_slice(&body).expect("OTLP JSON");
                let kept = &mut kept.lock().unwrap().spans;
                for rs in v["resourceSpans"].as_array().into_iter().flatten() {
                    for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                        for span in ss["spans"].as_array().into_iter().flatten() {
                            let mut span = span.clone();
                            span["service"] = rs["resource"]["attributes"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .find(|a| a["key"] == "service.name")
                                .map(|a| a["value"]["stringValue"].clone())
                                .unwrap_or(Value::Null);
                            kept.push(span);
                        }
                    }
                }
                "{}"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), got)
}

#[tokio::test]
async fn a_submission_s_trace_runs_whole_from_the_callers_span_to_the_downstream_calls() {
    let (endpoint, got) = otlp_receiver().await;
    let env = Env::new().await.with_scheduler().with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        // Batches go out every 100 ms rather than 5 s.
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ]);
    let p = Proc::start("dev", &env).await;
    let fleet = fixtures::Fleet::new(&p).await;
    let j = fleet.journey(&p).await;
    let path = format!("/portal/journeys/{j}/passengers:bulk-upsert");
    p.post_ok(&path, fleet.key(), json!({ "passengers": [passenger(fleet.org.id as u64 * 10 + 2)] }), 200).await;
    let hook = json!({"event_type": "submission.delivered", "endpoint_url": format!("{endpoint}/hook")});
    p.post_ok("/portal/webhooks", fleet.key(), hook, 201).await;

    // The caller's own trace: its span is the request's parent.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let trace = format!("{:016x}{now:016x}", u64::from(std::process::id()) + 1);
    let caller = "00f067aa0ba902b7";
    let res = p
        .req(Method::POST, &format!("/portal/journeys/{j}/submit"), Some(fleet.key()))
        .header("traceparent", format!("00-{trace}-{caller}-01"))
        .header("Prefer", "wait=20")
        .send()
        .await
        .unwrap();
    let s = json_of(res, 202).await;
    assert_eq!(s["status"], "delivered", "{s}");

    // The request, the attempt (queued by it, run by the scheduler) and its downstream call,
    // each the child of the one before, all in the caller's trace.
    let of_trace = || -> Vec<Value> {
        got.lock().unwrap().spans.iter().filter(|s| s["traceId"] == trace.as_str()).cloned().collect()
    };
    let named = |all: &[Value], name: &str| all.iter().find(|s| s["name"] == name).cloned();
    let whole = eventually(std::time::Duration::from_secs(15), || async {
        let all = of_trace();
        Some((named(&all, "request")?, named(&all, "submission")?, named(&all, "adapter_call")?))
    })
    .await;
    let (request, submission, call) = whole.unwrap_or_else(|| panic!("a whole trace; got {:#?}", of_trace()));
    assert_eq!(request["parentSpanId"], caller, "{request}");
    assert_eq!(submission["parentSpanId"], request["spanId"], "{submission}");
    assert_eq!(call["parentSpanId"], submission["spanId"], "{call}");
    assert_eq!(request["service"], "tns-dev");
    let attribute = |span: &Value, key: &str| {
        span["attributes"].as_array().into_iter().flatten().find(|a| a["key"] == key).map(|a| a["value"].clone())
    };
    assert_eq!(attribute(&request, "route"), Some(json!({"stringValue": "/api/v1/portal/journeys/{id}/submit"})));
    assert_eq!(attribute(&call, "outcome"), Some(json!({"stringValue": "done"})));

    // The webhook POST names its own span, which the receiver's trace can continue; that span
    // is exported too.
    let sent = eventually(std::time::Duration::from_secs(15), || async {
        let traceparent = got.lock().unwrap().hooks.first().cloned()?;
        let traceparent = traceparent.expect("a webhook POST carries traceparent");
        let parts: Vec<String> = traceparent.split('-').map(str::to_string).collect();
        let spans = got.lock().unwrap().spans.clone();
        let span = spans.into_iter().find(|s| s["name"] == "webhook" && s["spanId"] == parts[2].as_str())?;
        Some((parts, span))
    })
    .await;
    let (parts, webhook) = sent.expect("the webhook POST and its exported span");
    assert_eq!((parts.len(), parts[0].as_str(), parts[1].len()), (4, "00", 32), "{parts:?}");
    assert_eq!(webhook["traceId"], parts[1].as_str());
    assert_eq!(attribute(&webhook, "outcome"), Some(json!({"stringValue": "delivered"})));
}
