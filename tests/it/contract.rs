//! The contract, from the outside, against the real binary: schemathesis fuzzes the served
//! OpenAPI document (every phase, every check but positive_data_acceptance, a fresh seed each run
//! that its output names first), and a client generated from the document by a
//! mainstream generator drives a whole flow. Both are Python tools from PyPI; their scripts in
//! `tests/contract/` install them into virtual environments of their own.

use std::{path::PathBuf, process::Stdio};

use reqwest::{Method, Response};
use serde_json::{json, Value};
use tns_uetds_fake::FakeUetds;

use crate::{
    fixtures::{passenger, subscription, Fleet},
    helpers::{json_of, tns_admin, Env, InProcessScheduler, Proc, TestApp},
};

/// `tns dev` (API and scheduler with the adapters) on a database of its own, with the per-IP
/// limit out of the way (the fuzzer sends tens of thousands of unauthenticated probes) and U-ETDS
/// played by the fake. The fake lives as long as the server.
async fn server() -> (Proc, FakeUetds, Env) {
    let fake = FakeUetds::start_background();
    fake.set_validate_xsd(false);
    // Any credentials are a firm's here: a downstream's refusal of schema-valid credentials is
    // not the document's to say (the U-ETDS tests cover refusals).
    fake.set_open_accounts(true);
    let base = fake.base_url();
    let env = Env::new()
        .await
        .with_scheduler()
        .with(&[("TNS_AUTH_RATE_LIMIT", "1000000000"), ("TNS_ADAPTER_UETDS_BASE_URL", base.as_str())]);
    (Proc::start("dev", &env).await, fake, env)
}

/// Run a script of `tests/contract/` with the server's root URL; its output is the test's.
async fn run(script: &str, root: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/contract");
    let status = tokio::process::Command::new(dir.join(script))
        .arg(root)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .status()
        .await
        .unwrap_or_else(|e| panic!("{script} runs: {e}"));
    assert!(status.success(), "{script} against {root}: {status}");
}

#[tokio::test]
async fn schemathesis_finds_nothing_the_document_does_not_say() {
    let (server, _fake, env) = server().await;
    run("fuzz.sh", &server.api.root).await;
    // The hooks sent every endpoint the server took to loopback: its deliveries left nothing.
    let urls: Vec<String> = sqlx::query_scalar("SELECT endpoint_url FROM webhook_subscriptions")
        .fetch_all(&env.pool().await)
        .await
        .unwrap();
    assert!(!urls.is_empty(), "the run created subscriptions");
    let elsewhere: Vec<&String> = urls.iter().filter(|u| !u.starts_with("http://127.0.0.1:9/")).collect();
    assert!(elsewhere.is_empty(), "endpoints off the machine: {elsewhere:?}");
}

#[tokio::test]
async fn a_client_generated_from_the_document_drives_a_whole_flow() {
    let (server, _fake, _env) = server().await;
    run("client.sh", &server.api.root).await;
}

/// Assert the document lists `res`'s status for the operation (`method` in lower case, `path` its
/// template); the answer's body, for more checks.
async fn documented(doc: &Value, method: &str, path: &str, res: Response, status: u16) -> Value {
    let got = res.status().as_u16();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    assert_eq!(got, status, "{method} {path}: {body}");
    let listed = &doc["paths"][path][method]["responses"];
    assert!(listed.is_object(), "the document has no operation {method} {path}");
    assert!(
        listed.get(status.to_string()).is_some(),
        "{method} {path} answered {status}, which the document does not list"
    );
    body
}

/// Answers the fuzzer seldom reaches — a cancelled journey's refusals, a reused or repeated
/// `Idempotency-Key`, an oversized body where none is expected, a suspended organization's
/// credential on a route that changes something — provoked for real and each found in the document.
#[tokio::test]
async fn answers_the_fuzzer_seldom_reaches_are_in_the_document() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let doc: Value = app.get_anon("/openapi.json").await.json().await.unwrap();
    let f = Fleet::new(&app).await;
    let k = f.key();

    // A cancelled journey takes no more changes, its passengers none either.
    let j = f.journey(&app).await;
    let p = app.post_ok(&format!("/portal/journeys/{j}/passengers"), k, passenger(1), 201).await["id"].clone();
    for action in ["submit", "cancel"] {
        let res = app.req(Method::POST, &format!("/portal/journeys/{j}/{action}"), Some(k)).header("Prefer", "wait=20");
        let out = json_of(res.send().await.unwrap(), 202).await;
        assert_eq!(out["status"], "delivered", "{action}: {out}");
    }
    let (journey, passengers) = (format!("/portal/journeys/{j}"), format!("/portal/journeys/{j}/passengers"));
    let one = format!("{passengers}/{p}");
    let bulk = json!({"passengers": [passenger(2)]});
    for (method, template, path, body) in [
        ("delete", "/portal/journeys/{id}/passengers/{passenger_id}", &one, None),
        ("put", "/portal/journeys/{id}/passengers/{passenger_id}", &one, Some(json!({"seat_no": "3"}))),
        ("post", "/portal/journeys/{id}/passengers", &passengers, Some(passenger(3))),
        ("post", "/portal/journeys/{id}/passengers:bulk-upsert", &format!("{passengers}:bulk-upsert"), Some(bulk)),
        ("put", "/portal/journeys/{id}", &journey, Some(json!({"personnel_ids": []}))),
        ("post", "/portal/journeys/{id}/submit", &format!("{journey}/submit"), None),
    ] {
        let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let body = documented(&doc, method, template, app.call(m, path, k, body).await, 409).await;
        assert!(body["detail"].as_str().unwrap().contains("cancelled"), "{method} {path}: {body}");
    }

    // `Idempotency-Key`: the same key with another request; a repeat of an answer carrying a
    // secret; any key on the anonymous routes.
    let with_key =
        |path: &str, key: &str| app.req(Method::POST, path, Some(k)).header("idempotency-key", key.to_string());
    let ticket = |subject: &str| json!({"subject": subject, "body": "?", "priority": "low"});
    let tickets = "/portal/support/tickets";
    documented(&doc, "post", tickets, with_key(tickets, "k1").json(&ticket("a")).send().await.unwrap(), 201).await;
    documented(&doc, "post", tickets, with_key(tickets, "k1").json(&ticket("b")).send().await.unwrap(), 422).await;
    let hook = app.post_ok("/portal/webhooks", k, subscription(), 201).await;
    let rotate = format!("/portal/webhooks/{}/rotate-secret", hook["id"]);
    for status in [200, 409] {
        let res = with_key(&rotate, "k2").send().await.unwrap();
        documented(&doc, "post", "/portal/webhooks/{id}/rotate-secret", res, status).await;
    }
    let logout = app.req(Method::POST, "/auth/logout", None).header("idempotency-key", "k3").send().await.unwrap();
    documented(&doc, "post", "/auth/logout", logout, 422).await;

    // A body over the limit, where the operation takes none.
    let big = app.req(Method::GET, "/portal/vehicles", Some(k)).body(vec![b' '; (1 << 20) + 1]).send().await.unwrap();
    documented(&doc, "get", "/portal/vehicles", big, 413).await;

    // A suspended organization reads (a public route too) but changes nothing.
    let org = f.org.id.to_string();
    tns_admin(&env, &["set-status", &org, "suspended", "--reason", "unpaid", "--operator", "qa"]).await.unwrap();
    let res = app.req(Method::GET, "/openapi.json", Some(k)).send().await.unwrap();
    documented(&doc, "get", "/openapi.json", res, 200).await;
    let res = app
        .call(Method::POST, "/portal/support/tickets", k, Some(json!({"subject": "s", "body": "b", "priority": "low"})))
        .await;
    documented(&doc, "post", "/portal/support/tickets", res, 201).await;
    let res = app.call(Method::POST, "/portal/webhooks/test-event", k, None).await;
    documented(&doc, "post", "/portal/webhooks/test-event", res, 403).await;
}
