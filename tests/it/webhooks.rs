//! Webhooks end to end: subscriptions through the API, events written by the real statements,
//! the scheduler delivering to real HTTP receivers on loopback; signatures checked with an
//! HMAC written here, independently of the code under test.

use std::{
    collections::{HashMap, VecDeque},
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::IntoResponse,
    Router,
};
use reqwest::Method;
use serde_json::{json, Value};

use crate::{fixtures::*, helpers::*};

#[test]
fn independent_hmac_matches_rfc_4231() {
    assert_eq!(
        hmac_sha256_hex(b"Jefe", b"what do ya want for nothing?"),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
}

/// What a receiver does with a request.
#[derive(Clone, Copy, Debug)]
enum Answer {
    Status(u16),
    /// 429 with `Retry-After: N`.
    RetryAfter(u64),
    /// Never answers (the scheduler's timeout must end the attempt).
    Hang,
}

#[derive(Debug, Clone)]
struct Received {
    headers: HeaderMap,
    body: Bytes,
}

#[derive(Default)]
struct ReceiverState {
    /// Answers in order; once used up, 200.
    script: Mutex<VecDeque<Answer>>,
    got: Mutex<Vec<Received>>,
}

/// A webhook receiver on loopback.
struct Receiver {
    addr: SocketAddr,
    state: Arc<ReceiverState>,
}

impl Receiver {
    async fn start(script: &[Answer]) -> Receiver {
        let state =
            Arc::new(ReceiverState { script: Mutex::new(script.iter().copied().collect()), ..Default::default() });
        async fn hook(
            State(st): State<Arc<ReceiverState>>,
            headers: HeaderMap,
            body: Bytes,
        ) -> axum::response::Response {
            st.got.lock().unwrap().push(Received { headers, body });
            let answer = st.script.lock().unwrap().pop_front().unwrap_or(Answer::Status(200));
            match answer {
                Answer::Status(s) => StatusCode::from_u16(s).unwrap().into_response(),
                Answer::RetryAfter(n) => {
                    (StatusCode::TOO_MANY_REQUESTS, [("retry-after", n.to_string())]).into_response()
                }
                Answer::Hang => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    StatusCode::OK.into_response()
                }
            }
        }
        let app = Router::new().route("/hook", axum::routing::post(hook)).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { addr, state }
    }

    fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    fn got(&self) -> Vec<Received> {
        self.state.got.lock().unwrap().clone()
    }

    async fn wait_for(&self, n: usize) -> Vec<Received> {
        for _ in 0..400 {
            let got = self.got();
            if got.len() >= n {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the receiver got {} requests, expected {n}", self.got().len());
    }
}

fn header<'a>(r: &'a Received, name: &str) -> &'a str {
    r.headers.get(name).unwrap_or_else(|| panic!("{name} missing")).to_str().unwrap()
}

async fn subscribe(app: &Api, key: &str, event_type: &str, url: &str, secret: Option<&str>) -> Value {
    let mut body = json!({"event_type": event_type, "endpoint_url": url});
    if let Some(s) = secret {
        body["secret"] = json!(s);
    }
    app.post_ok("/portal/webhooks", key, body, 201).await
}

/// Poll a delivery record until it is final.
async fn final_delivery(app: &Api, key: &str, id: i64) -> Value {
    for _ in 0..600 {
        let d = app.get_ok(&format!("/portal/webhooks/events/{id}"), key).await;
        if d["delivery_status"] != "pending" {
            return d;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("delivery {id} still pending after 15 s");
}

/// The organization's only delivery record.
async fn only_delivery(app: &Api, key: &str) -> Value {
    let list = app.get_ok("/portal/webhooks/events", key).await;
    let data = list["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{list}");
    data[0].clone()
}

fn outcomes(detail: &Value) -> Vec<&str> {
    detail["history"].as_array().unwrap().iter().map(|a| a["outcome"].as_str().unwrap()).collect()
}

/// A deployment whose webhooks may go to these tests' plain-http receivers on loopback.
async fn local_env() -> Env {
    Env::new().await.with(&[("TNS_WEBHOOK_ALLOW_HTTP", "true")])
}

fn fast_retries(env: &Env) -> Env {
    env.with_scheduler().with(&[
        ("TNS_WEBHOOK_RETRY_SCHEDULE", "100ms,100ms"),
        ("TNS_SCHEDULER_POLL_MS", "20"),
        ("TNS_WEBHOOK_ALLOW_HTTP", "true"),
    ])
}

#[tokio::test]
async fn journey_created_and_submission_events_are_signed_and_verifiable() {
    let env = fast_retries(&Env::new().await);
    let app = TestApp::start(env.clone()).await;
    let scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let rx = Receiver::start(&[]).await;
    let secret = "my-own-secret-0123456789";
    let created = subscribe(&app, f.key(), "journey.created", &rx.url(), Some(secret)).await;
    assert_eq!(created["secret"], secret, "shown once at creation");
    assert_eq!(created["active"], 1);
    let generated = subscribe(&app, f.key(), "submission.delivered", &rx.url(), None).await;
    let generated_secret = generated["secret"].as_str().unwrap().to_string();
    assert!(generated_secret.starts_with("whsec_") && generated_secret.len() > 30, "{generated_secret}");
    let listed = app.get_ok("/portal/webhooks", f.key()).await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 2);
    assert!(
        !listed.to_string().contains(secret) && !listed.to_string().contains(&generated_secret),
        "never shown again"
    );
    let stored: Vec<Vec<u8>> =
        sqlx::query_scalar("SELECT secret_sealed FROM webhook_subscriptions").fetch_all(&app.db).await.unwrap();
    assert!(stored.iter().all(|s| !s.windows(secret.len()).any(|w| w == secret.as_bytes())), "sealed at rest");

    let journey = f.journey(&app).await;
    let got = rx.wait_for(1).await;
    let r = &got[0];
    assert_eq!(
        header(r, "x-webhook-signature"),
        hmac_sha256_hex(secret.as_bytes(), &r.body),
        "signature of the raw body"
    );
    assert_eq!(header(r, "x-webhook-event"), "journey.created");
    assert_eq!(header(r, "content-type"), "application/json");
    let ts: i64 = header(r, "x-webhook-timestamp").parse().unwrap();
    assert!((chrono::Utc::now().timestamp() - ts).abs() < 60);
    let payload: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(header(r, "x-webhook-id"), payload["id"].to_string());
    assert_eq!(payload["type"], "journey.created");
    assert!(payload["created_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(payload["data"]["id"], journey);
    assert_eq!(payload["data"]["status"], "draft");
    assert_eq!(payload["data"]["departure"]["time"].as_str().unwrap().len(), 5, "HH:MM like the API");
    // The data is the journey as the API shows it (the documented schema): the same fields and
    // values, timestamps the same instants written the same way (UTC, `Z`).
    let shown = app.get_ok(&format!("/portal/journeys/{journey}"), f.key()).await;
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&payload["data"]), keys(&shown));
    for field in ["vehicle_id", "plate", "departure", "arrival", "trip_kind", "tarifeli_context", "personnel_ids"] {
        assert_eq!(payload["data"][field], shown[field], "{field}");
    }
    let same_time = |event: &Value, api: &Value, field: &str| {
        let (e, a) = (event[field].as_str().unwrap(), api[field].as_str().unwrap());
        assert!(e.ends_with('Z'), "{field}: {e}");
        let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap();
        assert_eq!(at(e), at(a), "{field}");
    };
    same_time(&payload["data"], &shown, "created_at");
    same_time(&payload["data"], &shown, "updated_at");
    let d = only_delivery(&app, f.key()).await;
    let d = final_delivery(&app, f.key(), d["id"].as_i64().unwrap()).await;
    assert_eq!((d["delivery_status"].as_str(), d["attempts"].as_i64()), (Some("delivered"), Some(1)));
    assert_eq!(d["last_response_status"], 200);
    assert_eq!(d["payload"].as_str().unwrap().as_bytes(), &r.body[..], "the record shows the exact bytes sent");

    // A delivered submission: `submission.delivered`, signed with the generated secret.
    let sub = app.post_ok(&format!("/portal/journeys/{journey}/submit"), f.key(), json!({}), 202).await;
    let got = rx.wait_for(2).await;
    let r = &got[1];
    assert_eq!(header(r, "x-webhook-event"), "submission.delivered");
    assert_eq!(header(r, "x-webhook-signature"), hmac_sha256_hex(generated_secret.as_bytes(), &r.body));
    assert_ne!(header(r, "x-webhook-signature"), hmac_sha256_hex(secret.as_bytes(), &r.body));
    let payload: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(payload["data"]["id"], sub["submission_id"]);
    assert_eq!(payload["data"]["state"], "delivered");
    assert!(payload["data"]["downstream_reference"].is_string());
    // With the submission's warnings (this journey has a driver but no passengers yet), and the
    // fields of a listed submission.
    assert_eq!(payload["data"]["warnings"], sub["warnings"]);
    assert_eq!(payload["data"]["warnings"][0]["code"], "no_passengers");
    let listed = app.get_ok("/portal/submissions", f.key()).await["data"][0].clone();
    assert_eq!(keys(&payload["data"]), keys(&listed));
    same_time(&payload["data"], &listed, "created_at");
    same_time(&payload["data"], &listed, "finished_at");

    // A test event to one subscription.
    let one = json!({"subscription_id": created["id"]});
    assert_eq!(
        app.post_ok("/portal/webhooks/test-event", f.key(), one, 200).await,
        json!({"ok": true, "deliveries": 1})
    );
    let got = rx.wait_for(3).await;
    assert_eq!(header(&got[2], "x-webhook-event"), "test");
    assert_eq!(header(&got[2], "x-webhook-signature"), hmac_sha256_hex(secret.as_bytes(), &got[2].body));
    // Without a body: every active subscription.
    let res = app.req(Method::POST, "/portal/webhooks/test-event", Some(f.key())).send().await.unwrap();
    assert_eq!(json_of(res, 200).await["deliveries"], 2);
    rx.wait_for(5).await;
    scheduler.stop().await;
    assert_eq!(rx.got().len(), 5, "nothing delivered twice");
}

#[tokio::test]
async fn failing_twice_then_succeeding_is_three_recorded_attempts_and_retry_after_is_honoured() {
    let env = fast_retries(&Env::new().await);
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let rx = Receiver::start(&[Answer::Status(500), Answer::Status(503)]).await;
    subscribe(&app, f.key(), "journey.created", &rx.url(), None).await;
    app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
    let d = only_delivery(&app, f.key()).await;
    let d = final_delivery(&app, f.key(), d["id"].as_i64().unwrap()).await;
    assert_eq!(d["delivery_status"], "delivered", "{d}");
    assert_eq!(d["attempts"], 3, "{d}");
    assert_eq!(outcomes(&d), ["rejected", "rejected", "delivered"], "{d}");
    let statuses: Vec<&Value> = d["history"].as_array().unwrap().iter().map(|a| &a["response_status"]).collect();
    assert_eq!(statuses, [&json!(500), &json!(503), &json!(200)]);
    let got = rx.got();
    assert_eq!(got.len(), 3, "{d}");
    assert!(got.iter().all(|r| r.body == got[0].body), "every retry carries the same bytes");
    let ids: Vec<&str> = got.iter().map(|r| header(r, "x-webhook-id")).collect();
    assert!(ids.iter().all(|i| *i == ids[0]), "and the same event id");

    // 429 with Retry-After: 1 — the next attempt waits the second, not the 100 ms schedule.
    let rx2 = Receiver::start(&[Answer::RetryAfter(1)]).await;
    let f2 = Fleet::new(&app).await;
    subscribe(&app, f2.key(), "journey.created", &rx2.url(), None).await;
    app.post_ok("/portal/webhooks/test-event", f2.key(), json!({}), 200).await;
    let d = only_delivery(&app, f2.key()).await;
    let d = final_delivery(&app, f2.key(), d["id"].as_i64().unwrap()).await;
    assert_eq!(outcomes(&d), ["rejected", "delivered"], "{d}");
    let at = |i: usize| chrono::DateTime::parse_from_rfc3339(d["history"][i]["started_at"].as_str().unwrap()).unwrap();
    assert!(at(1) - at(0) >= chrono::Duration::milliseconds(950), "{} then {}", at(0), at(1));
}

#[tokio::test]
async fn a_hanging_receiver_is_a_recorded_timeout_and_the_delivery_fails_after_the_schedule() {
    let env =
        fast_retries(&Env::new().await).with(&[("TNS_WEBHOOK_TIMEOUT_SECS", "1"), ("TNS_WEBHOOK_LEASE_SECS", "10")]);
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let rx = Receiver::start(&[Answer::Hang, Answer::Hang, Answer::Hang]).await;
    subscribe(&app, f.key(), "journey.created", &rx.url(), None).await;
    app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
    let d = only_delivery(&app, f.key()).await;
    let d = final_delivery(&app, f.key(), d["id"].as_i64().unwrap()).await;
    assert_eq!(d["delivery_status"], "failed");
    assert_eq!(outcomes(&d), ["timeout", "timeout", "timeout"], "1 try + 2 scheduled retries");
    assert!(d["last_error"].as_str().unwrap().contains("timed out"), "{d}");
    assert!(d["next_attempt_at"].is_null());
    let failing = app.get_ok("/portal/webhooks", f.key()).await["data"][0].clone();
    assert!(failing["failing_since"].is_string(), "{failing}");
    assert_eq!(failing["active"], 1, "not yet failing for 5 days");
}

#[tokio::test]
async fn a_subscription_failing_for_the_configured_period_is_deactivated() {
    let env = local_env().await.with_scheduler().with(&[
        ("TNS_WEBHOOK_RETRY_SCHEDULE", "200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms"),
        ("TNS_WEBHOOK_DISABLE_AFTER_SECS", "1"),
    ]);
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let rx = Receiver::start(&[Answer::Status(500); 20]).await;
    let sub = subscribe(&app, f.key(), "journey.created", &rx.url(), None).await;
    let id = sub["id"].as_i64().unwrap();
    app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
    let d = only_delivery(&app, f.key()).await;
    let d = final_delivery(&app, f.key(), d["id"].as_i64().unwrap()).await;
    assert_eq!(d["delivery_status"], "failed");
    let s = app.get_ok(&format!("/portal/webhooks/{id}"), f.key()).await;
    assert_eq!((s["active"].as_i64(), s["inactive_reason"].as_str()), (Some(0), Some("failing")), "{s}");
    // The schedule allows 9 attempts (8 retries of at least 160 ms, longer than the 1 s
    // allowance): fewer means the deactivation cut it short.
    let tries = rx.got().len();
    assert!((2..9).contains(&tries), "deactivation stopped the retries: {tries} attempts");
    assert_eq!(d["attempts"].as_u64(), Some(tries as u64));
    assert_eq!(d["last_error"], "the subscription is no longer active", "{d}");
    let queued: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_queue WHERE subscription_id = $1")
        .bind(id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(queued, 0, "a failed delivery leaves the queue");
    // New events no longer go to it; a test event to it says why.
    f.journey(&app).await;
    let err =
        error_body(app.post("/portal/webhooks/test-event", Some(f.key()), json!({"subscription_id": id})).await, 409)
            .await;
    assert!(err["detail"].as_str().unwrap().contains("inactive"));
    // Reactivating starts afresh.
    let s = app.put(&format!("/portal/webhooks/{id}"), f.key(), json!({"active": true})).await;
    let s = json_of(s, 200).await;
    assert_eq!((s["active"].as_i64(), s["failing_since"].is_null()), (Some(1), true), "{s}");
    assert_eq!(app.get_ok("/portal/webhooks/events", f.key()).await["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_rolled_back_change_emits_nothing() {
    let env = fast_retries(&Env::new().await);
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    let rx = Receiver::start(&[]).await;
    subscribe(&app, f.key(), "journey.created", &rx.url(), None).await;
    // A fault inside the journey-creating statement, after its events were written.
    sqlx::raw_sql(
        "CREATE FUNCTION refuse_crew() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'injected fault'; END $$;
         CREATE TRIGGER refuse_crew AFTER INSERT ON journey_crew FOR EACH ROW EXECUTE FUNCTION refuse_crew();",
    )
    .execute(&app.db)
    .await
    .unwrap();
    let mut body = journey(json!(f.vehicle_id));
    body["personnel_ids"] = json!([f.driver_id]);
    assert_eq!(app.post("/portal/journeys", Some(f.key()), body.clone()).await.status(), 500);
    let count = |table: &'static str| {
        let db = app.db.clone();
        async move { sqlx::query_scalar::<_, i64>(&format!("SELECT count(*) FROM {table}")).fetch_one(&db).await.unwrap() }
    };
    assert_eq!((count("journeys").await, count("webhook_events").await, count("webhook_deliveries").await), (0, 0, 0));
    // The same statement without the fault: the journey and its event, together.
    sqlx::raw_sql("DROP TRIGGER refuse_crew ON journey_crew").execute(&app.db).await.unwrap();
    let j = app.post_ok("/portal/journeys", f.key(), body, 201).await;
    assert_eq!((count("journeys").await, count("webhook_events").await), (1, 1));
    // Deliver everything there is to deliver.
    drain(&env).await;
    let got = rx.got();
    assert_eq!(got.len(), 1, "exactly the committed journey's event");
    assert_eq!(serde_json::from_slice::<Value>(&got[0].body).unwrap()["data"]["id"], j["id"]);
}

#[tokio::test]
async fn two_schedulers_deliver_each_event_once() {
    let env = fast_retries(&Env::new().await).with(&[("TNS_QUOTA_ENABLED", "false")]);
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    let rx = Receiver::start(&[]).await;
    for _ in 0..3 {
        subscribe(&app, f.key(), "journey.created", &rx.url(), None).await;
    }
    let (a, b) = (InProcessScheduler::start(&env).await, InProcessScheduler::start(&env).await);
    futures::future::join_all((0..50).map(|_| app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200)))
        .await;
    rx.wait_for(150).await;
    // Every delivery is final: nothing is left to claim, so nothing more can be sent; stopping
    // lets any attempt still in flight finish before the receiver's count is read.
    let settled = eventually(Duration::from_secs(15), || async {
        let pending: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'")
            .fetch_one(&app.db)
            .await
            .unwrap();
        (pending == 0).then_some(())
    })
    .await;
    assert!(settled.is_some(), "every delivery final");
    let queued: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_queue").fetch_one(&app.db).await.unwrap();
    assert_eq!(queued, 0, "a final delivery leaves the queue");
    a.stop().await;
    b.stop().await;
    let mut per: HashMap<(String, String), usize> = HashMap::new();
    for r in rx.got() {
        *per.entry((header(&r, "x-webhook-id").to_string(), header(&r, "x-webhook-signature").to_string()))
            .or_default() += 1;
    }
    assert_eq!(per.len(), 150, "50 events × 3 subscriptions");
    assert!(per.values().all(|n| *n == 1), "none delivered twice");
    let attempts: i64 =
        sqlx::query_scalar("SELECT count(*) FROM webhook_attempt_history").fetch_one(&app.db).await.unwrap();
    assert_eq!(attempts, 150);
}

#[tokio::test]
async fn the_ssrf_guard_refuses_internal_addresses_at_creation_and_at_delivery() {
    let env = fast_retries(&Env::new().await);
    let guarded = env.with(&[("TNS_WEBHOOK_ALLOW_PRIVATE", "false")]);
    let app = TestApp::start(guarded.clone()).await;
    let f = Fleet::new(&app).await;
    for url in [
        "http://127.0.0.1:8080/hook",
        "http://localhost:8080/hook",
        "http://[::1]/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.8/hook",
        "http://0x7f000001/hook",
        "ftp://example.com/hook",
        "file:///etc/passwd",
        "https://user:pw@example.com/hook",
        "not a url",
    ] {
        let res = app
            .post("/portal/webhooks", Some(f.key()), json!({"event_type": "journey.created", "endpoint_url": url}))
            .await;
        let err = error_body(res, 422).await;
        assert_eq!(err["field"], "endpoint_url", "{url}: {err}");
        // What a name resolved to inside our network is not the subscriber's to learn.
        let detail = err["detail"].as_str().unwrap();
        assert!(!detail.contains("127.0.0.1") && !detail.contains("::1"), "{url}: {err}");
    }
    // Allowed when it was created (an operator-allowed API), refused when a guarded scheduler
    // resolves it at delivery time.
    let open = TestApp::start(env.clone()).await;
    let rx = Receiver::start(&[]).await;
    let url = format!("http://localhost:{}/hook", rx.addr.port());
    subscribe(&open, f.key(), "journey.created", &url, None).await;
    let _scheduler = InProcessScheduler::start(&guarded).await;
    open.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
    let d = only_delivery(&app, f.key()).await;
    let d = final_delivery(&app, f.key(), d["id"].as_i64().unwrap()).await;
    assert_eq!(d["delivery_status"], "failed");
    assert_eq!(outcomes(&d), ["refused", "refused", "refused"]);
    assert_eq!(d["last_error"], "blocked: the endpoint's address is not allowed", "{d}");
    assert!(rx.got().is_empty(), "nothing reached the internal receiver");
}

#[tokio::test]
async fn subscriptions_validate_limit_scope_and_stop_on_delete() {
    let app = TestApp::start(local_env().await).await;
    let f = Fleet::new(&app).await;
    let k = f.key();
    let url = "http://127.0.0.1:9/hook";
    for (body, field) in [
        (json!({"event_type": "journey.deleted", "endpoint_url": url}), "event_type"),
        (json!({"event_type": "journey.created", "endpoint_url": url, "secret": ""}), "secret"),
        (json!({"event_type": "journey.created", "endpoint_url": url, "secret": "x".repeat(129)}), "secret"),
        (json!({"event_type": "journey.created", "endpoint_url": url, "secret": "tab\there"}), "secret"),
        (json!({"event_type": "journey.created", "endpoint_url": url, "secret": "şifre"}), "secret"),
        (json!({"event_type": "journey.created"}), "endpoint_url"),
    ] {
        assert_eq!(error_body(app.post("/portal/webhooks", Some(k), body).await, 422).await["field"], field);
    }
    // The caller chooses the secret (as documented): a short one is theirs to choose.
    let short = subscribe(&app, k, "submission.failed", url, Some("s3cr3t")).await;
    assert_eq!(short["secret"], "s3cr3t");
    json_of(app.delete(&format!("/portal/webhooks/{}", short["id"]), k).await, 200).await;
    let s = subscribe(&app, k, "journey.created", url, None).await;
    let id = s["id"].as_i64().unwrap();
    // A pending delivery (no scheduler runs here), failed by deactivation.
    app.post_ok("/portal/webhooks/test-event", k, json!({}), 200).await;
    let off = json_of(app.put(&format!("/portal/webhooks/{id}"), k, json!({"active": false})).await, 200).await;
    assert_eq!((off["active"].as_i64(), off["inactive_reason"].as_str()), (Some(0), Some("by request")));
    let d = only_delivery(&app, k).await;
    assert_eq!(d["delivery_status"], "failed");
    let err = error_body(app.put(&format!("/portal/webhooks/{id}"), k, json!({"active": "yes"})).await, 422).await;
    assert_eq!(err["field"], "active");
    let moved = json_of(
        app.put(&format!("/portal/webhooks/{id}"), k, json!({"active": true, "event_type": "submission.failed"})).await,
        200,
    )
    .await;
    assert_eq!((moved["active"].as_i64(), moved["event_type"].as_str()), (Some(1), Some("submission.failed")));
    // Filters on delivery records.
    let failed = app.get_ok("/portal/webhooks/events?delivery_status=failed&event_type=test", k).await;
    assert_eq!(failed["data"].as_array().unwrap().len(), 1);
    assert_eq!(app.get_ok("/portal/webhooks/events?delivery_status=pending", k).await["data"], json!([]));
    let bad = error_body(app.get("/portal/webhooks/events?delivery_status=lost", k).await, 422).await;
    assert_eq!(bad["field"], "delivery_status");

    // Scopes: a read-only key lists but cannot change anything.
    let ro = app.post_ok("/portal/api-keys", k, json!({"name": "ro", "scopes": ["webhooks:read"]}), 201).await
        ["api_key"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(app.get_ok("/portal/webhooks", &ro).await["data"].as_array().unwrap().len(), 1);
    error_body(
        app.post("/portal/webhooks", Some(&ro), json!({"event_type": "journey.created", "endpoint_url": url})).await,
        403,
    )
    .await;
    error_body(app.post("/portal/webhooks/test-event", Some(&ro), json!({})).await, 403).await;

    // Delete: gone from the API, its delivery record stays.
    assert_eq!(json_of(app.delete(&format!("/portal/webhooks/{id}"), k).await, 200).await, json!({"ok": true}));
    error_body(app.get(&format!("/portal/webhooks/{id}"), k).await, 404).await;
    error_body(app.delete(&format!("/portal/webhooks/{id}"), k).await, 404).await;
    assert_eq!(app.get_ok("/portal/webhooks/events", k).await["data"].as_array().unwrap().len(), 1);

    // At most 50 live subscriptions.
    for _ in 0..50 {
        subscribe(&app, k, "journey.created", url, None).await;
    }
    error_body(
        app.post("/portal/webhooks", Some(k), json!({"event_type": "journey.created", "endpoint_url": url})).await,
        409,
    )
    .await;
}

/// Every endpoint URL the document admits is stored, whichever way it is written (the database
/// keeps at most 2048 characters, and a URL is stored normalized: one without a path gains `/`,
/// a `'` in a query would become `%27`); a URL the document refuses is a 422 naming the field,
/// never a 500. `active` is a boolean, nothing else.
#[tokio::test]
async fn endpoint_urls_the_document_admits_are_stored_and_others_refused() {
    let app = TestApp::start(local_env().await).await;
    let k = &app.register().await.key;
    let doc: Value = app.get_anon("/openapi.json").await.json().await.unwrap();
    let max = doc["components"]["schemas"]["EndpointUrl"]["maxLength"].as_u64().unwrap() as usize;
    let head = "http://127.0.0.1:9?";
    let longest = format!("{head}{}", "q".repeat(max - head.len()));
    let stored = longest.replacen('?', "/?", 1);

    let s = subscribe(&app, k, "journey.created", &longest, None).await;
    assert_eq!(s["endpoint_url"], stored.as_str());
    let id = s["id"].as_i64().unwrap();
    let path = format!("/portal/webhooks/{id}");
    json_of(app.put(&path, k, json!({"endpoint_url": "http://127.0.0.1:9/other"})).await, 200).await;
    let changed = json_of(app.put(&path, k, json!({"endpoint_url": longest})).await, 200).await;
    assert_eq!(changed["endpoint_url"], stored.as_str());

    let too_long = format!("{longest}q");
    let quoted = format!("http://127.0.0.1:9/p?{}", "'".repeat(max - 21));
    for url in [too_long, quoted, "http://127.0.0.1:9/p?a='b'".to_string()] {
        let body = json!({"event_type": "journey.created", "endpoint_url": url});
        assert_eq!(error_body(app.post("/portal/webhooks", Some(k), body).await, 422).await["field"], "endpoint_url");
        let body = json!({"endpoint_url": url});
        assert_eq!(error_body(app.put(&path, k, body).await, 422).await["field"], "endpoint_url");
    }
    for active in [json!(1), json!(0), json!(1.0), json!("true")] {
        let err = error_body(app.put(&path, k, json!({"active": active})).await, 422).await;
        assert_eq!(err["field"], "active", "{active}: {err}");
    }
    let now: Vec<(String, bool)> =
        sqlx::query_as("SELECT endpoint_url, active FROM webhook_subscriptions").fetch_all(&app.db).await.unwrap();
    assert_eq!(now, [(stored, true)], "refused changes changed nothing");
}

/// A receiver answering every POST with a redirect to `to`.
async fn redirector(to: &str) -> String {
    let to = to.to_string();
    let app = Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let to = to.clone();
            async move { (StatusCode::FOUND, [("location", to)]).into_response() }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// A TLS endpoint whose certificate (tests/it/tls, self-signed) no trusted authority issued;
/// counts the TLS sessions a client completed with it.
async fn untrusted_tls_endpoint() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use rustls::pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer};
    tns_scheduler::webhooks::send::install_tls_provider();
    let cert = CertificateDer::from_pem_slice(include_bytes!("tls/untrusted-cert.pem")).unwrap();
    let key = PrivateKeyDer::from_pem_slice(include_bytes!("tls/untrusted-key.pem")).unwrap();
    let config = rustls::ServerConfig::builder().with_no_client_auth().with_single_cert(vec![cert], key).unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}/hook", listener.local_addr().unwrap());
    let sessions = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = sessions.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, counted) = (acceptor.clone(), counted.clone());
            tokio::spawn(async move {
                if acceptor.accept(tcp).await.is_ok() {
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    (url, sessions)
}

#[tokio::test]
async fn the_delivery_client_follows_no_redirect_and_trusts_no_unknown_certificate() {
    let env = fast_retries(&Env::new().await);
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    let target = Receiver::start(&[]).await;
    let closed = {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        format!("http://{}/hook", l.local_addr().unwrap())
    };
    let (tls, sessions) = untrusted_tls_endpoint().await;
    let mut name_of = HashMap::new();
    for (name, url) in [("redirect", redirector(&target.url()).await), ("closed", closed), ("untrusted tls", tls)] {
        let s = subscribe(&app, f.key(), "journey.created", &url, None).await;
        name_of.insert(s["id"].as_i64().unwrap(), name);
    }
    let _scheduler = InProcessScheduler::start(&env).await;
    // One test event: a delivery to each subscription.
    app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
    let list = app.get_ok("/portal/webhooks/events", f.key()).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 3, "{list}");
    for d in list["data"].as_array().unwrap() {
        let d = final_delivery(&app, f.key(), d["id"].as_i64().unwrap()).await;
        let name = name_of[&d["subscription_id"].as_i64().unwrap()];
        let (outcome, said) = match name {
            "redirect" => ("rejected", "redirects are not followed"),
            "closed" => ("unreachable", "refused"),
            _ => ("unreachable", "certificate"),
        };
        assert_eq!(d["delivery_status"], "failed", "{name}: {d}");
        assert_eq!(outcomes(&d), [outcome; 3], "{name}: {d}");
        assert!(d["last_error"].as_str().unwrap().contains(said), "{name}: {d}");
    }
    assert!(target.got().is_empty(), "the redirect was not followed");
    assert_eq!(sessions.load(std::sync::atomic::Ordering::SeqCst), 0, "no TLS session with an untrusted certificate");
}

#[tokio::test]
async fn an_interrupted_attempt_is_recorded_as_abandoned_between_the_others() {
    use tns_store::webhooks::queue::{self, Attempted, ClaimFrom};
    let env = fast_retries(&Env::new().await);
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    let rx = Receiver::start(&[]).await;
    subscribe(&app, f.key(), "journey.created", &rx.url(), None).await;
    app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
    // A first scheduler tries the delivery and records a rejection, due again at once …
    let start = ClaimFrom::start();
    let claimed = queue::claim(&app.db, 10, Duration::from_secs(60), 1, &start).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let c = &claimed[0];
    let rejected = Attempted {
        lease: c.lease(),
        attempts: c.attempts,
        subscription_id: c.subscription_id,
        outcome: tns_core::domain::kinds::DeliveryOutcome::Rejected,
        response_status: Some(500),
        error: Some("HTTP 500".into()),
        started_at: chrono::Utc::now(),
        duration_ms: 4,
        retry_at: Some(chrono::Utc::now()),
    };
    let (recorded, _) = queue::record(&app.db, &[&rejected], Duration::from_secs(3600)).await.unwrap();
    assert_eq!(recorded, [c.id]);
    // … a second claims it with a short lease and stops without a word, and while that lease
    // runs nobody else may take it …
    assert_eq!(queue::claim(&app.db, 10, Duration::from_millis(300), 2, &start).await.unwrap().len(), 1);
    assert!(queue::claim(&app.db, 10, Duration::from_secs(60), 3, &start).await.unwrap().is_empty());
    // … then a running scheduler takes it over once that lease has run out.
    let _scheduler = InProcessScheduler::start(&env).await;
    let d = final_delivery(&app, f.key(), c.id).await;
    assert_eq!(d["delivery_status"], "delivered", "{d}");
    assert_eq!(d["attempts"], 3, "{d}");
    assert_eq!(outcomes(&d), ["rejected", "abandoned", "delivered"], "{d}");
    assert_eq!(d["history"][0]["response_status"], 500, "{d}");
    assert_eq!(rx.got().len(), 1, "only the last attempt was sent here");
}

/// A claim's row: how many of its deliveries are open, and which it lists.
async fn claim_row(db: &sqlx::PgPool, token: i64) -> Option<(i32, Vec<i64>)> {
    sqlx::query_as("SELECT open, ids FROM webhook_claims WHERE token = $1")
        .bind(token)
        .fetch_optional(db)
        .await
        .unwrap()
}

/// The delivery queue: each row's delivery, claim count and the claim it names (a recovered one).
async fn queued(db: &sqlx::PgPool) -> Vec<(i64, i32, Option<i64>)> {
    sqlx::query_as("SELECT id, attempts, lease_token FROM webhook_queue ORDER BY id").fetch_all(db).await.unwrap()
}

/// An attempt at `c`: delivered, or (with `retry`) rejected and due again at once.
fn attempted(c: &tns_store::webhooks::queue::Claimed, retry: bool) -> tns_store::webhooks::queue::Attempted {
    use tns_core::domain::kinds::DeliveryOutcome;
    tns_store::webhooks::queue::Attempted {
        lease: c.lease(),
        attempts: c.attempts,
        subscription_id: c.subscription_id,
        outcome: if retry { DeliveryOutcome::Rejected } else { DeliveryOutcome::Delivered },
        response_status: Some(if retry { 500 } else { 200 }),
        error: retry.then(|| "HTTP 500".to_string()),
        started_at: chrono::Utc::now(),
        duration_ms: 3,
        retry_at: retry.then(chrono::Utc::now),
    }
}

/// Three deliveries of one organization claimed with `token`, in id order.
async fn three_claimed(app: &TestApp, token: i64) -> Vec<tns_store::webhooks::queue::Claimed> {
    use tns_store::webhooks::queue::{self, ClaimFrom};
    let f = Fleet::new(app).await;
    subscribe(app, f.key(), "journey.created", "http://127.0.0.1:9/hook", None).await;
    for _ in 0..3 {
        app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
    }
    let mut claimed = queue::claim(&app.db, 10, Duration::from_secs(60), token, &ClaimFrom::start()).await.unwrap();
    claimed.sort_by_key(|c| c.id);
    assert_eq!(claimed.len(), 3);
    claimed
}

/// A claim's deliveries leave the queue and its one row holds them: giving one back, recording
/// one, recovering the claim once its lease has run out (the late record of a recovered
/// delivery records nothing), and releasing a claim at shutdown, with the queue's depth and
/// every delivery's attempts exact at each step.
#[tokio::test]
async fn a_claims_row_holds_its_deliveries_until_each_is_recorded_given_back_or_recovered() {
    use tns_store::{
        leases::{self, Table},
        webhooks::queue::{self, Attempted, ClaimFrom},
    };
    let app = TestApp::start(local_env().await).await;
    let db = &app.db;
    let lease = Duration::from_secs(60);
    let depth = || async { leases::depth(db, Table::WebhookDeliveries).await.unwrap() };
    let claimed = three_claimed(&app, 7).await;
    let [a, b, c] = [&claimed[0], &claimed[1], &claimed[2]];
    assert!(claimed.iter().all(|c| c.attempts == 1 && c.lease_token == 7));
    assert_eq!(queued(db).await, [], "the claimed rows left the queue");
    assert_eq!(claim_row(db, 7).await, Some((3, vec![a.id, b.id, c.id])));
    let d = depth().await;
    assert_eq!((d.ready, d.waiting, d.leased), (0, 0, 3));

    // Giving one back queues it again uncounted; the claim keeps the other two.
    assert_eq!(queue::give_back(db, &[a.lease()]).await.unwrap(), 1);
    assert_eq!(queued(db).await, [(a.id, 0, None)]);
    assert_eq!(claim_row(db, 7).await, Some((2, vec![b.id, c.id])));
    // Recording one counts the claim down; recording it again records and counts nothing.
    assert_eq!(queue::record(db, &[&attempted(b, false)], lease).await.unwrap().0, [b.id]);
    assert_eq!(claim_row(db, 7).await, Some((1, vec![b.id, c.id])));
    assert_eq!(queue::record(db, &[&attempted(b, false)], lease).await.unwrap().0, Vec::<i64>::new());
    assert_eq!(claim_row(db, 7).await, Some((1, vec![b.id, c.id])));
    let d = depth().await;
    assert_eq!((d.ready, d.waiting, d.leased), (1, 0, 1));

    // The lease runs out: recovering queues the open entry, naming the claim, and the claim goes …
    sqlx::query("UPDATE webhook_claims SET lease_expires_at = now() - interval '1 second' WHERE token = 7")
        .execute(db)
        .await
        .unwrap();
    assert_eq!(queue::recover(db, None).await.unwrap(), 1, "only the delivery nobody recorded");
    assert_eq!(claim_row(db, 7).await, None);
    assert_eq!(queued(db).await, [(a.id, 0, None), (c.id, 1, Some(7))]);
    // … so the late record of its attempt records nothing.
    assert_eq!(queue::record(db, &[&attempted(c, false)], lease).await.unwrap().0, Vec::<i64>::new());
    let state: (String, i32) = sqlx::query_as("SELECT state, attempts FROM webhook_deliveries WHERE id = $1")
        .bind(c.id)
        .fetch_one(db)
        .await
        .unwrap();
    assert_eq!(state, ("pending".into(), 0));

    // The next claim takes both, records the lost attempt as abandoned, and settles.
    let again = queue::claim(db, 10, lease, 8, &ClaimFrom::start()).await.unwrap();
    let attempts: HashMap<i64, i32> = again.iter().map(|d| (d.id, d.attempts)).collect();
    assert_eq!(attempts, HashMap::from([(a.id, 1), (c.id, 2)]));
    let outcomes: Vec<Attempted> = again.iter().map(|d| attempted(d, false)).collect();
    let recorded = queue::record(db, &outcomes.iter().collect::<Vec<_>>(), lease).await.unwrap().0;
    assert_eq!(recorded.len(), 2);
    assert_eq!(claim_row(db, 8).await, None, "a claim with nothing open goes");
    let history: Vec<String> = sqlx::query_scalar(
        "SELECT outcome FROM webhook_attempt_history WHERE delivery_id = $1 ORDER BY seq NULLS LAST",
    )
    .bind(c.id)
    .fetch_all(db)
    .await
    .unwrap();
    assert_eq!(history, ["abandoned", "delivered"]);
    assert_eq!(depth().await.total(), 0);

    // Releasing at shutdown recovers the given claims at once, and only those.
    let mine = three_claimed(&app, 9).await;
    sqlx::query("UPDATE webhook_claims SET lease_expires_at = now() - interval '1 second' WHERE token = 9")
        .execute(db)
        .await
        .unwrap();
    let theirs = three_claimed(&app, 10).await;
    assert_eq!(leases::release(db, Table::WebhookDeliveries, &[theirs[0].lease()]).await.unwrap(), 3);
    assert_eq!(claim_row(db, 10).await, None);
    assert_eq!(claim_row(db, 9).await.map(|r| r.0), Some(3), "another expired claim is left to the rescans");
    let ids: Vec<(i64, i32, Option<i64>)> = theirs.iter().map(|d| (d.id, 1, Some(10))).collect();
    assert_eq!(queued(db).await, ids);
    let d = depth().await;
    assert_eq!((d.ready, d.leased), (3, 3));
    assert_eq!(mine.len(), 3);
}

/// Recording stays exact when it races a give-back of the same claim (as at shutdown, when the
/// unstarted deliveries go back while the recorder writes), when a batch is recorded twice (a
/// retried write), and when a claim with a retried delivery is recovered.
#[tokio::test]
async fn recording_is_exact_racing_a_give_back_twice_over_and_beside_a_retry() {
    use tns_store::webhooks::queue::{self, ClaimFrom};
    let app = TestApp::start(local_env().await).await;
    let db = &app.db;
    let lease = Duration::from_secs(60);
    let claimed = three_claimed(&app, 21).await;
    let [a, b, c] = [&claimed[0], &claimed[1], &claimed[2]];

    // `c` goes back first: `a` and `b` are open.
    assert_eq!(queue::give_back(db, &[c.lease()]).await.unwrap(), 1);
    // The claim is held while a give-back of `b`, then a record of `a`, wait for it: the
    // give-back (first in line) commits after the record's statement began, so the record
    // counts down from what the give-back left, and the claim goes.
    let waiting = |n: i64| async move {
        let waited = eventually(Duration::from_secs(10), || async {
            let waiting: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
            .fetch_one(db)
            .await
            .unwrap();
            (waiting == n).then_some(())
        })
        .await;
        assert!(waited.is_some(), "{n} waiting for the claim");
    };
    let mut hold = db.begin().await.unwrap();
    sqlx::query("SELECT 1 FROM webhook_claims WHERE token = 21 FOR UPDATE").execute(&mut *hold).await.unwrap();
    let give_back_b = tokio::spawn({
        let (db, b) = (db.clone(), b.lease());
        async move { queue::give_back(&db, &[b]).await.unwrap() }
    });
    waiting(1).await;
    let record_a = tokio::spawn({
        let (db, a) = (db.clone(), attempted(a, false));
        async move { queue::record(&db, &[&a], lease).await.unwrap().0 }
    });
    waiting(2).await;
    hold.commit().await.unwrap();
    assert_eq!(give_back_b.await.unwrap(), 1);
    assert_eq!(record_a.await.unwrap(), [a.id]);
    assert_eq!(claim_row(db, 21).await, None, "nothing is open");
    assert_eq!(queued(db).await, [(b.id, 0, None), (c.id, 0, None)]);
    // Giving back or recording again changes nothing.
    assert_eq!(queue::give_back(db, &[b.lease()]).await.unwrap(), 0);
    assert_eq!(queue::record(db, &[&attempted(a, false)], lease).await.unwrap().0, Vec::<i64>::new());
    assert_eq!(queued(db).await, [(b.id, 0, None), (c.id, 0, None)]);

    // A retry queues its delivery again, once, however often the batch is written …
    let mut again = queue::claim(db, 10, lease, 22, &ClaimFrom::start()).await.unwrap();
    again.sort_by_key(|d| d.id);
    assert_eq!(again.iter().map(|d| (d.id, d.attempts)).collect::<Vec<_>>(), [(b.id, 1), (c.id, 1)]);
    for recorded in [vec![c.id], vec![]] {
        assert_eq!(queue::record(db, &[&attempted(&again[1], true)], lease).await.unwrap().0, recorded);
        assert_eq!(claim_row(db, 22).await, Some((1, vec![b.id, c.id])));
        assert_eq!(queued(db).await, [(c.id, 1, None)]);
    }
    // … and recovering the claim queues only the delivery nobody recorded.
    sqlx::query("UPDATE webhook_claims SET lease_expires_at = now() - interval '1 second' WHERE token = 22")
        .execute(db)
        .await
        .unwrap();
    assert_eq!(queue::recover(db, None).await.unwrap(), 1);
    assert_eq!(queued(db).await, [(b.id, 1, Some(22)), (c.id, 1, None)]);
}

/// Three deliveries queued for a receiver that hangs on the first request it gets, to be sent
/// one at a time (`TNS_WEBHOOK_CONCURRENCY` 1) with the given timeout and lease (seconds).
async fn three_behind_a_hang(timeout: &str, lease: &str, more: &[(&str, &str)]) -> (Env, TestApp, Fleet, Receiver) {
    let env = fast_retries(&Env::new().await)
        .with(&[
            ("TNS_WEBHOOK_TIMEOUT_SECS", timeout),
            ("TNS_WEBHOOK_LEASE_SECS", lease),
            ("TNS_WEBHOOK_CONCURRENCY", "1"),
        ])
        .with(more);
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    let rx = Receiver::start(&[Answer::Hang]).await;
    subscribe(&app, f.key(), "journey.created", &rx.url(), None).await;
    for _ in 0..3 {
        app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
    }
    (env, app, f, rx)
}

#[tokio::test]
async fn a_delivery_that_cannot_start_within_its_lease_is_given_back_untried() {
    // A 1 s timeout and the shortest lease allowed (2 × 1 s + 5 s): the deliveries claimed with
    // the one that hangs may start only within 1 s of their claim, so they are given back, and
    // delivered afterwards with no attempt counted for the claim.
    let (env, app, f, rx) = three_behind_a_hang("1", "7", &[]).await;
    // Started after the events, so one claim holds all three.
    let _scheduler = InProcessScheduler::start(&env).await;
    let list = app.get_ok("/portal/webhooks/events", f.key()).await;
    let mut histories = vec![];
    for d in list["data"].as_array().unwrap() {
        let d = final_delivery(&app, f.key(), d["id"].as_i64().unwrap()).await;
        assert_eq!(d["delivery_status"], "delivered", "{d}");
        assert_eq!(d["attempts"].as_u64(), Some(outcomes(&d).len() as u64), "claims given back are not counted: {d}");
        histories.push(outcomes(&d).join(","));
    }
    histories.sort();
    assert_eq!(histories, ["delivered", "delivered", "timeout,delivered"]);
    let got = rx.got();
    assert_eq!(got.len(), 4, "the hanging request, its retry and the two given back, each sent once");
    let ids: std::collections::HashSet<&str> = got.iter().map(|r| header(r, "x-webhook-id")).collect();
    assert_eq!(ids.len(), 3);
}

#[tokio::test]
async fn claims_resume_after_their_cursor_and_a_rescan_finds_what_is_behind_it() {
    use tns_store::webhooks::queue::{self, ClaimFrom};
    let app = TestApp::start(local_env().await).await;
    let f = Fleet::new(&app).await;
    subscribe(&app, f.key(), "journey.created", "http://127.0.0.1:9/hook", None).await;
    for _ in 0..4 {
        app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
    }
    let lease = Duration::from_secs(60);
    let ids = |c: &[queue::Claimed]| {
        let mut v: Vec<i64> = c.iter().map(|d| d.id).collect();
        v.sort();
        v
    };
    let after = |c: &[queue::Claimed]| ClaimFrom {
        cursors: vec![(f.org.id, c.iter().map(|d| (d.run_at, d.id)).max().unwrap())],
        ..ClaimFrom::start()
    };
    let first = queue::claim(&app.db, 2, lease, 1, &ClaimFrom::start()).await.unwrap();
    let second = queue::claim(&app.db, 2, lease, 2, &after(&first)).await.unwrap();
    assert_eq!(second.len(), 2);
    assert!(ids(&first).last() < ids(&second).first(), "oldest first, then after the cursor");
    // The first two are given back: behind the cursor, so a claim from it finds nothing …
    let back: Vec<_> = first.iter().map(queue::Claimed::lease).collect();
    assert_eq!(queue::give_back(&app.db, &back).await.unwrap(), 2);
    assert!(queue::claim(&app.db, 2, lease, 3, &after(&second)).await.unwrap().is_empty());
    // … and a claim from the start does, with the untried claim not counted.
    let again = queue::claim(&app.db, 10, lease, 4, &ClaimFrom::start()).await.unwrap();
    assert_eq!(ids(&again), ids(&first));
    assert!(again.iter().all(|d| d.attempts == 1), "{again:?}");
}

#[tokio::test]
async fn a_claim_takes_turns_across_organizations_row_by_row() {
    use tns_store::webhooks::queue::{self, ClaimFrom};
    let app = TestApp::start(local_env().await).await;
    let (a, b) = (Fleet::new(&app).await, Fleet::new(&app).await);
    for f in [&a, &b] {
        subscribe(&app, f.key(), "journey.created", "http://127.0.0.1:9/hook", None).await;
        for _ in 0..3 {
            app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
        }
    }
    let (ao, bo) = (a.org.id, b.org.id);
    let lease = Duration::from_secs(60);
    let turns = |c: &[queue::Claimed]| c.iter().map(|d| (d.org_id.get(), d.id)).collect::<Vec<_>>();
    let orgs = |c: &[queue::Claimed]| c.iter().map(|d| d.org_id.get()).collect::<Vec<_>>();
    // Three rows: turns alternate, and the share that does not divide evenly goes to the first
    // in turn (A, after none), each organization's oldest first.
    let first = queue::claim(&app.db, 3, lease, 1, &ClaimFrom::start()).await.unwrap();
    assert_eq!(orgs(&first), [ao, bo, ao], "{first:?}");
    let t = turns(&first);
    assert!(t[0].1 < t[2].1, "each organization's in order: {t:?}");
    let shares: Vec<(i32, i64)> = first.iter().map(|d| (d.lim, d.found)).collect();
    assert_eq!(shares, [(2, 2), (1, 1), (2, 2)], "{first:?}");
    // What is left (A one, B two), turns starting after A: B first, all of it.
    let from = ClaimFrom { after_org: ao, ..ClaimFrom::start() };
    let second = queue::claim(&app.db, 4, lease, 2, &from).await.unwrap();
    assert_eq!(orgs(&second), [bo, ao, bo], "{second:?}");
    let t = turns(&second);
    assert!(t[0].1 < t[2].1, "each organization's in order: {t:?}");
    assert!(second.iter().all(|d| d.lim == 2 && d.found == if d.org_id.get() == ao { 1 } else { 2 }), "{second:?}");
}

#[tokio::test]
async fn deliveries_of_one_subscription_in_a_claim_share_one_copy_of_it() {
    use tns_store::webhooks::queue::{self, ClaimFrom};
    let app = TestApp::start(local_env().await).await;
    let (a, b) = (Fleet::new(&app).await, Fleet::new(&app).await);
    // A: two subscriptions, each sent three test events; B: one, sent two.
    let mut url_of = HashMap::new();
    for (f, urls, events) in
        [(&a, &["http://127.0.0.1:9/a1", "http://127.0.0.1:9/a2"][..], 3), (&b, &["http://127.0.0.1:9/b"][..], 2)]
    {
        for url in urls {
            let s = subscribe(&app, f.key(), "journey.created", url, None).await;
            url_of.insert(s["id"].as_i64().unwrap(), s["endpoint_url"].as_str().unwrap().to_string());
        }
        for _ in 0..events {
            app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
        }
    }
    let sealed: HashMap<i64, Vec<u8>> = sqlx::query_as("SELECT id, secret_sealed FROM webhook_subscriptions")
        .fetch_all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .filter(|(id, _): &(i64, Vec<u8>)| url_of.contains_key(id))
        .collect();
    let claimed = queue::claim(&app.db, 20, Duration::from_secs(60), 1, &ClaimFrom::start()).await.unwrap();
    assert_eq!(claimed.len(), 8, "{claimed:?}");
    for d in &claimed {
        let s = &d.subscription;
        assert_eq!(s.endpoint_url, url_of[&d.subscription_id], "{d:?}");
        assert_eq!(s.secret_sealed, sealed[&d.subscription_id], "{d:?}");
        assert!(s.active && s.previous_secret_sealed.is_none(), "{d:?}");
        // Every delivery of a subscription shares one copy of what the claim read of it.
        let first = claimed.iter().find(|o| o.subscription_id == d.subscription_id).unwrap();
        assert!(Arc::ptr_eq(&first.subscription, &d.subscription), "{d:?}");
    }
    let per_subscription = |id: i64| claimed.iter().filter(|d| d.subscription_id == id).count();
    let mut counts: Vec<usize> = url_of.keys().map(|id| per_subscription(*id)).collect();
    counts.sort();
    assert_eq!(counts, [2, 3, 3]);
}

#[tokio::test]
async fn each_subscriptions_deliveries_in_one_claim_go_to_its_endpoint_signed_with_its_secret() {
    let env = local_env().await;
    let app = TestApp::start(env.clone()).await;
    let (a, b) = (Fleet::new(&app).await, Fleet::new(&app).await);
    // A: two subscriptions with their own secrets and receivers; B: one. All queued before the
    // scheduler starts, so its first claim takes them together.
    let receivers = [Receiver::start(&[]).await, Receiver::start(&[]).await, Receiver::start(&[]).await];
    let secrets = ["secret-of-a-first-0123456", "secret-of-a-second-012345", "secret-of-b-only-01234567"];
    for (i, f) in [&a, &a, &b].into_iter().enumerate() {
        subscribe(&app, f.key(), "journey.created", &receivers[i].url(), Some(secrets[i])).await;
    }
    for (f, events) in [(&a, 4), (&b, 2)] {
        for _ in 0..events {
            app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
        }
    }
    let _scheduler = InProcessScheduler::start(&env).await;
    for (rx, (secret, expected)) in receivers.iter().zip(secrets.iter().zip([4, 4, 2])) {
        let got = rx.wait_for(expected).await;
        assert_eq!(got.len(), expected);
        for r in &got {
            assert_eq!(header(r, "x-webhook-signature"), hmac_sha256_hex(secret.as_bytes(), &r.body), "{secret}");
        }
        let ids: std::collections::HashSet<&str> = got.iter().map(|r| header(r, "x-webhook-id")).collect();
        assert_eq!(ids.len(), expected, "each event once");
    }
}

#[tokio::test]
async fn claims_take_each_organizations_oldest_first_and_keep_to_its_room() {
    use tns_store::webhooks::queue::{self, ClaimFrom};
    let app = TestApp::start(local_env().await).await;
    let (a, b) = (Fleet::new(&app).await, Fleet::new(&app).await);
    // A's backlog of four is older than B's two.
    for (f, n) in [(&a, 4), (&b, 2)] {
        subscribe(&app, f.key(), "journey.created", "http://127.0.0.1:9/hook", None).await;
        for _ in 0..n {
            app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
        }
    }
    let lease = Duration::from_secs(60);
    let orgs = |c: &[queue::Claimed]| c.iter().map(|d| d.org_id.get()).collect::<Vec<_>>();
    let (ao, bo) = (a.org.id, b.org.id);
    // Two rows: each organization's oldest, not A's two oldest.
    let first = queue::claim(&app.db, 2, lease, 1, &ClaimFrom::start()).await.unwrap();
    assert_eq!(orgs(&first), [ao, bo], "{first:?}");
    // Turns start after the organization served last; A may take one more (its room).
    let from = ClaimFrom { rooms: vec![(ao, 1)], after_org: ao, ..ClaimFrom::start() };
    let second = queue::claim(&app.db, 10, lease, 2, &from).await.unwrap();
    assert_eq!(orgs(&second), [bo, ao], "{second:?}");
    let oldest = |c: &[queue::Claimed], org| c.iter().filter(|d| d.org_id.get() == org).map(|d| d.id).min().unwrap();
    assert!(oldest(&first, ao) < oldest(&second, ao), "each organization's oldest first");
    // A has no room left: its last two rows stay for later.
    let from = ClaimFrom { rooms: vec![(ao, 0)], ..ClaimFrom::start() };
    assert!(queue::claim(&app.db, 10, lease, 3, &from).await.unwrap().is_empty());
    assert_eq!(orgs(&queue::claim(&app.db, 10, lease, 4, &ClaimFrom::start()).await.unwrap()), [ao, ao]);
}

#[tokio::test]
async fn a_stopping_scheduler_gives_back_at_once_what_it_had_not_started() {
    let (env, app, _f, rx) = three_behind_a_hang("2", "60", &[("TNS_WEBHOOK_RETRY_SCHEDULE", "1h")]).await;
    let scheduler = InProcessScheduler::start(&env).await;
    rx.wait_for(1).await;
    // Stopping waits for the attempt in progress (it times out), not for the two behind it.
    scheduler.stop().await;
    let rows: Vec<(i32, Option<i64>, String)> = sqlx::query_as(
        "SELECT q.attempts, q.lease_token, d.state FROM webhook_deliveries d JOIN webhook_queue q USING (org_id, id)
              ORDER BY q.attempts",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(
        rows,
        [(0, None, "pending".into()), (0, None, "pending".into()), (1, None, "pending".into())],
        "two given back untried and free for any scheduler, one tried and due for its retry"
    );
    let history: Vec<String> =
        sqlx::query_scalar("SELECT outcome FROM webhook_attempt_history").fetch_all(&app.db).await.unwrap();
    assert_eq!(history, ["timeout"]);
    assert_eq!(rx.got().len(), 1);
}

/// The Standard Webhooks signature, computed here: `v1,` and the base64 HMAC-SHA256 of
/// `{id}.{timestamp}.{body}` keyed with `key`.
fn standard_signature(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> String {
    use base64::{engine::general_purpose::STANDARD, Engine};
    let mut msg = format!("{id}.{timestamp}.").into_bytes();
    msg.extend_from_slice(body);
    format!("v1,{}", STANDARD.encode(hex::decode(hmac_sha256_hex(key, &msg)).unwrap()))
}

/// The key a `whsec_<base64>` secret stands for.
fn whsec_key(secret: &str) -> Vec<u8> {
    use base64::{engine::general_purpose::STANDARD, Engine};
    STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap()
}

/// A delivery as a receiver hands it to a verifier: the secret, the exact body, the headers.
struct Case<'a> {
    secret: &'a str,
    body: &'a [u8],
    headers: HeaderMap,
}

/// What the Standard Webhooks reference library for Python (`tests/webhooks/verify.sh`, from
/// PyPI) says of each delivery: `verified` or `refused: <its reason>`.
async fn library_verdicts(cases: &[Case<'_>]) -> Vec<String> {
    let cases: Vec<Value> = cases
        .iter()
        .map(|c| {
            let headers: serde_json::Map<String, Value> =
                c.headers.iter().map(|(k, v)| (k.to_string(), json!(v.to_str().unwrap()))).collect();
            json!({"secret": c.secret, "body": hex::encode(c.body), "headers": headers})
        })
        .collect();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let file = std::env::temp_dir().join(format!("tns-webhook-cases-{}-{nanos}.json", std::process::id()));
    std::fs::write(&file, serde_json::to_vec(&cases).unwrap()).unwrap();
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/webhooks/verify.sh");
    let out = tokio::process::Command::new(&script)
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap_or_else(|e| panic!("{} runs: {e}", script.display()));
    let _ = std::fs::remove_file(&file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "verify.sh: {}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|_| panic!("verdicts: {stdout}"))
}

#[tokio::test]
async fn deliveries_carry_standard_webhooks_signatures_the_reference_library_verifies() {
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
    let env = fast_retries(&Env::new().await);
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    // A generated secret, one the subscriber chose, and one of the form generated before
    // secrets were standard base64 (`whsec_` + base64url: `-` and `_` are not base64).
    let (generated, chosen, older) =
        (Receiver::start(&[]).await, Receiver::start(&[]).await, Receiver::start(&[]).await);
    let s = subscribe(&app, f.key(), "journey.created", &generated.url(), None).await;
    let secret = s["secret"].as_str().unwrap().to_string();
    assert_eq!(whsec_key(&secret).len(), 32, "whsec_ and 32 random bytes, standard base64: {secret}");
    let chosen_secret = "my-own-secret-0123456789";
    subscribe(&app, f.key(), "journey.created", &chosen.url(), Some(chosen_secret)).await;
    let older_secret = format!("whsec_{}", URL_SAFE_NO_PAD.encode([0xfb; 32]));
    assert!(older_secret.contains('-') && older_secret.contains('_'));
    subscribe(&app, f.key(), "journey.created", &older.url(), Some(&older_secret)).await;
    app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;

    let r = &generated.wait_for(1).await[0];
    let (id, ts) = (header(r, "webhook-id"), header(r, "webhook-timestamp"));
    assert_eq!((id, ts), (header(r, "x-webhook-id"), header(r, "x-webhook-timestamp")), "the same id and moment");
    assert_eq!(header(r, "webhook-signature"), standard_signature(&whsec_key(&secret), id, ts, &r.body));
    assert_eq!(header(r, "x-webhook-signature"), hmac_sha256_hex(secret.as_bytes(), &r.body), "as before");
    // Other secrets key the standard signature with their own bytes; X-Webhook-Signature is
    // unchanged for every secret.
    for (rx, secret) in [(&chosen, chosen_secret), (&older, older_secret.as_str())] {
        let r = &rx.wait_for(1).await[0];
        let (id, ts) = (header(r, "webhook-id"), header(r, "webhook-timestamp"));
        assert_eq!(header(r, "webhook-signature"), standard_signature(secret.as_bytes(), id, ts, &r.body), "{secret}");
        assert_eq!(header(r, "x-webhook-signature"), hmac_sha256_hex(secret.as_bytes(), &r.body), "{secret}");
    }

    // The reference library: the delivery verifies; a changed body, another secret and an old
    // timestamp (signed anew here, valid but for its age) are refused.
    let mut tampered = r.body.to_vec();
    let at = tampered.iter().position(|b| *b == b'{').unwrap() + 1;
    tampered.insert(at, b' ');
    // The delivery as though sent at `ts`: that timestamp, signed anew.
    let resigned = |ts: i64| {
        let mut h = r.headers.clone();
        h.insert("webhook-timestamp", ts.to_string().parse().unwrap());
        h.insert(
            "webhook-signature",
            standard_signature(&whsec_key(&secret), id, &ts.to_string(), &r.body).parse().unwrap(),
        );
        h
    };
    let now = chrono::Utc::now().timestamp();
    let other = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let verdicts = library_verdicts(&[
        Case { secret: &secret, body: &r.body, headers: r.headers.clone() },
        Case { secret: &secret, body: &tampered, headers: r.headers.clone() },
        Case { secret: other, body: &r.body, headers: r.headers.clone() },
        Case { secret: &secret, body: &r.body, headers: resigned(now - 600) },
        Case { secret: &secret, body: &r.body, headers: resigned(now) },
    ])
    .await;
    assert_eq!(
        verdicts,
        [
            "verified",
            "refused: No matching signature found",
            "refused: No matching signature found",
            "refused: Message timestamp too old",
            "verified",
        ]
    );
}

#[tokio::test]
async fn rotating_a_secret_shows_the_new_one_once_and_signs_with_both_for_a_day() {
    let env = fast_retries(&Env::new().await);
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let rx = Receiver::start(&[]).await;
    let s = subscribe(&app, f.key(), "journey.created", &rx.url(), None).await;
    let (id, first) = (s["id"].as_i64().unwrap(), s["secret"].as_str().unwrap().to_string());
    assert!(s["previous_secret_expires_at"].is_null());
    let path = format!("/portal/webhooks/{id}/rotate-secret");

    // Generated; the answer is the subscription with the new secret, never replayed.
    let rotate = |key: &'static str| app.req(Method::POST, &path, Some(f.key())).header("Idempotency-Key", key);
    let rotated = json_of(rotate("rotate-1").send().await.unwrap(), 200).await;
    let second = rotated["secret"].as_str().unwrap().to_string();
    assert!(second.starts_with("whsec_") && second != first, "{rotated}");
    assert_eq!((rotated["id"].as_i64(), rotated["event_type"].as_str()), (Some(id), Some("journey.created")));
    let until = chrono::DateTime::parse_from_rfc3339(rotated["previous_secret_expires_at"].as_str().unwrap()).unwrap();
    let left = until.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!(left > chrono::Duration::hours(23) && left <= chrono::Duration::hours(24), "{rotated}");
    let again = rotate("rotate-1").send().await.unwrap();
    let again = error_body(again, 409).await;
    assert!(!again.to_string().contains(&second), "not shown again: {again}");
    let shown = app.get_ok(&format!("/portal/webhooks/{id}"), f.key()).await;
    assert_eq!(shown["previous_secret_expires_at"], rotated["previous_secret_expires_at"], "rotated once only");
    assert!(!shown.to_string().contains(&second) && !shown.to_string().contains(&first));
    let sealed: Vec<Vec<u8>> =
        sqlx::query_scalar("SELECT previous_secret_sealed FROM webhook_subscriptions WHERE id = $1")
            .bind(id)
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert!(!sealed[0].windows(first.len()).any(|w| w == first.as_bytes()), "the old secret is sealed too");

    // Both sign: X-Webhook-Signature with the new secret, webhook-signature with both, so a
    // receiver verifies with either while it switches.
    let one = json!({"subscription_id": id});
    app.post_ok("/portal/webhooks/test-event", f.key(), one.clone(), 200).await;
    let r = rx.wait_for(1).await[0].clone();
    let (mid, ts) = (header(&r, "webhook-id"), header(&r, "webhook-timestamp"));
    assert_eq!(header(&r, "x-webhook-signature"), hmac_sha256_hex(second.as_bytes(), &r.body));
    let both = [&second, &first].map(|s| standard_signature(&whsec_key(s), mid, ts, &r.body)).join(" ");
    assert_eq!(header(&r, "webhook-signature"), both);

    // Chosen; rotating again within the day drops the oldest: at most two sign.
    let third = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let rotated = app.post_ok(&path, f.key(), json!({"secret": third}), 200).await;
    assert_eq!(rotated["secret"], third);
    app.post_ok("/portal/webhooks/test-event", f.key(), one.clone(), 200).await;
    let r2 = rx.wait_for(2).await[1].clone();
    let (mid2, ts2) = (header(&r2, "webhook-id"), header(&r2, "webhook-timestamp"));
    let both = [third, second.as_str()].map(|s| standard_signature(&whsec_key(s), mid2, ts2, &r2.body)).join(" ");
    assert_eq!(header(&r2, "webhook-signature"), both);
    fn case<'a>(secret: &'a str, r: &'a Received) -> Case<'a> {
        Case { secret, body: &r.body, headers: r.headers.clone() }
    }
    let verdicts = library_verdicts(&[
        case(&first, &r),
        case(&second, &r),
        case(third, &r2),
        case(&second, &r2),
        case(&first, &r2),
    ])
    .await;
    assert_eq!(verdicts, ["verified", "verified", "verified", "verified", "refused: No matching signature found"]);

    // After the day, the new secret alone.
    sqlx::query("UPDATE webhook_subscriptions SET previous_secret_expires_at = now() - interval '1 second'")
        .execute(&app.db)
        .await
        .unwrap();
    assert!(app.get_ok(&format!("/portal/webhooks/{id}"), f.key()).await["previous_secret_expires_at"].is_null());
    app.post_ok("/portal/webhooks/test-event", f.key(), one, 200).await;
    let r3 = rx.wait_for(3).await[2].clone();
    let (mid3, ts3) = (header(&r3, "webhook-id"), header(&r3, "webhook-timestamp"));
    assert_eq!(header(&r3, "webhook-signature"), standard_signature(&whsec_key(third), mid3, ts3, &r3.body));

    // Refusals: a bad secret, another organization's or no subscription, a read-only key.
    let bad = error_body(app.post(&path, Some(f.key()), json!({"secret": "tab\there"})).await, 422).await;
    assert_eq!(bad["field"], "secret");
    let g = Fleet::new(&app).await;
    error_body(app.post(&path, Some(g.key()), json!({})).await, 404).await;
    error_body(app.post("/portal/webhooks/999999999/rotate-secret", Some(f.key()), json!({})).await, 404).await;
    let (_, ro) = app.create_key(f.key(), &["webhooks:read"]).await;
    error_body(app.post(&path, Some(&ro), json!({})).await, 403).await;
}

#[tokio::test]
async fn plain_http_endpoints_are_refused_unless_the_operator_allows_them() {
    // The API and scheduler roles' default, https only (the test environment allows http, and
    // internal addresses so the receivers can be on loopback).
    let env = Env::new()
        .await
        .with_scheduler()
        .with(&[("TNS_WEBHOOK_RETRY_SCHEDULE", "100ms"), ("TNS_WEBHOOK_ALLOW_HTTP", "false")]);
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    let rx = Receiver::start(&[]).await;
    let create = json!({"event_type": "journey.created", "endpoint_url": rx.url()});
    let err = error_body(app.post("/portal/webhooks", Some(f.key()), create).await, 422).await;
    assert_eq!(err["field"], "endpoint_url", "{err}");
    assert!(err["detail"].as_str().unwrap().contains("https"), "{err}");
    let s = subscribe(&app, f.key(), "journey.created", "https://127.0.0.1:9/hook", None).await;
    let err = error_body(
        app.put(&format!("/portal/webhooks/{}", s["id"]), f.key(), json!({"endpoint_url": rx.url()})).await,
        422,
    )
    .await;
    assert_eq!(err["field"], "endpoint_url", "{err}");

    // Created where http was allowed, delivered by a scheduler where it is not: refused at
    // every attempt, nothing sent.
    let open = TestApp::start(env.with(&[("TNS_WEBHOOK_ALLOW_HTTP", "true")])).await;
    let plain = subscribe(&open, f.key(), "journey.created", &rx.url(), None).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    app.post_ok("/portal/webhooks/test-event", f.key(), json!({"subscription_id": plain["id"]}), 200).await;
    let d = only_delivery(&app, f.key()).await;
    let d = final_delivery(&app, f.key(), d["id"].as_i64().unwrap()).await;
    assert_eq!(outcomes(&d), ["refused", "refused"], "{d}");
    assert_eq!(d["last_error"], "blocked: the endpoint URL must be an https URL: plain http is not allowed here");
    assert!(rx.got().is_empty());
}

#[tokio::test]
async fn one_organizations_hanging_endpoints_do_not_hold_every_post_slot() {
    // Four POST slots, so one per organization (a quarter). A's ten deliveries go to endpoints
    // that hang for the whole test: they may hold one slot, and B's delivery goes out beside.
    let env = fast_retries(&Env::new().await).with(&[
        ("TNS_WEBHOOK_CONCURRENCY", "4"),
        ("TNS_WEBHOOK_TIMEOUT_SECS", "60"),
        ("TNS_WEBHOOK_LEASE_SECS", "300"),
    ]);
    let app = TestApp::start(env.clone()).await;
    let (a, b) = (Fleet::new(&app).await, Fleet::new(&app).await);
    let hanging = Receiver::start(&[Answer::Hang; 10]).await;
    for _ in 0..10 {
        subscribe(&app, a.key(), "journey.created", &hanging.url(), None).await;
    }
    let rx = Receiver::start(&[]).await;
    subscribe(&app, b.key(), "journey.created", &rx.url(), None).await;
    app.post_ok("/portal/webhooks/test-event", a.key(), json!({}), 200).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    hanging.wait_for(1).await;
    app.post_ok("/portal/webhooks/test-event", b.key(), json!({}), 200).await;
    let got = rx.wait_for(1).await;
    assert_eq!(header(&got[0], "x-webhook-event"), "test");
    assert_eq!(hanging.got().len(), 1, "A holds no more than its one slot");
    let d = only_delivery(&app, b.key()).await;
    assert_eq!(final_delivery(&app, b.key(), d["id"].as_i64().unwrap()).await["delivery_status"], "delivered");
}

#[tokio::test]
async fn concurrent_creates_cannot_pass_the_subscription_cap() {
    let app = TestApp::start(local_env().await).await;
    let f = Fleet::new(&app).await;
    let url = "http://127.0.0.1:9/hook";
    for _ in 0..49 {
        subscribe(&app, f.key(), "journey.created", url, None).await;
    }
    // Each insert waits a moment after its count, so concurrent creates overlap there.
    sqlx::raw_sql(
        "CREATE FUNCTION slow_subscribe() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN PERFORM pg_sleep(0.2); RETURN NEW; END $$;
         CREATE TRIGGER slow_subscribe BEFORE INSERT ON webhook_subscriptions
             FOR EACH ROW EXECUTE FUNCTION slow_subscribe();",
    )
    .execute(&app.db)
    .await
    .unwrap();
    let body = json!({"event_type": "journey.created", "endpoint_url": url});
    let answers =
        futures::future::join_all((0..5).map(|_| app.post("/portal/webhooks", Some(f.key()), body.clone()))).await;
    let mut statuses: Vec<u16> = answers.iter().map(|r| r.status().as_u16()).collect();
    statuses.sort();
    assert_eq!(statuses, [201, 409, 409, 409, 409]);
    let live: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_subscriptions WHERE deleted_at IS NULL")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(live, 50);
}

#[tokio::test]
async fn delivery_errors_are_recorded_as_a_class_and_a_short_reason() {
    let env = fast_retries(&Env::new().await);
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    let closed = {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        format!("http://{}/hook", l.local_addr().unwrap())
    };
    let (tls, _) = untrusted_tls_endpoint().await;
    let mut said = HashMap::new();
    for (url, error) in [
        (closed, "refused: the connection was refused"),
        ("http://nowhere.invalid/hook".to_string(), "dns: the host name does not resolve"),
        (tls, "tls: the certificate was not accepted"),
    ] {
        let s = subscribe(&app, f.key(), "journey.created", &url, None).await;
        said.insert(s["id"].as_i64().unwrap(), error);
    }
    let _scheduler = InProcessScheduler::start(&env).await;
    app.post_ok("/portal/webhooks/test-event", f.key(), json!({}), 200).await;
    for d in app.get_ok("/portal/webhooks/events", f.key()).await["data"].as_array().unwrap() {
        let d = final_delivery(&app, f.key(), d["id"].as_i64().unwrap()).await;
        let error = said[&d["subscription_id"].as_i64().unwrap()];
        assert_eq!(d["last_error"], error, "{d}");
        // Every attempt says the same, and nothing of the connection (addresses, ports, OS
        // error numbers).
        for a in d["history"].as_array().unwrap() {
            assert_eq!((a["outcome"].as_str(), a["error"].as_str()), (Some("unreachable"), Some(error)), "{d}");
        }
    }
}
