use reqwest::{header, Method};
use serde_json::json;

use crate::{
    fixtures::{vehicle, Fleet},
    helpers::*,
};

#[tokio::test]
async fn malformed_requests_get_json_errors() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let post = |body: &'static str, ctype: &'static str| {
        app.req(Method::POST, "/portal/api-keys", Some(&org.key)).header(header::CONTENT_TYPE, ctype).body(body).send()
    };
    // Not JSON at all, JSON with the wrong content type, truncated JSON, trailing garbage.
    let b = error_body(post("name=x", "application/x-www-form-urlencoded").await.unwrap(), 400).await;
    assert_eq!(b["code"], "unsupported_media_type");
    let b = error_body(post(r#"{"name":"x","scopes":["journeys:read"]}"#, "text/plain").await.unwrap(), 400).await;
    assert_eq!(b["code"], "unsupported_media_type");
    let b = error_body(post(r#"{"name":"x","#, "application/json").await.unwrap(), 400).await;
    assert_eq!(b["code"], "malformed_json");
    let b =
        error_body(post(r#"{"name":"x","scopes":["journeys:read"]} {}"#, "application/json").await.unwrap(), 400).await;
    assert_eq!(b["code"], "malformed_json");
    // Trailing bytes make a body malformed even when its value would also miss fields: 400, not 422.
    let vehicle = |body: &'static str| {
        app.req(Method::POST, "/portal/vehicles", Some(&org.key))
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
    };
    let b = error_body(vehicle(r#"{"plate":"34ABC123"}}"#).await.unwrap(), 400).await;
    assert_eq!(b["error"], "Bad Request");
    error_body(vehicle(r#"{"plate":"34ABC123"} x"#).await.unwrap(), 400).await;
    error_body(vehicle("[1] 2").await.unwrap(), 400).await;
    // Whitespace after the value is fine; the missing field is then the problem.
    let b = error_body(vehicle("{\"plate\":\"34ABC123\"}\n\t ").await.unwrap(), 422).await;
    assert_eq!((&b["field"], &b["code"]), (&json!("vehicle_type"), &json!("invalid_field")));
    // JSON of the wrong shape: 422 naming the field.
    let b = error_body(post(r#"{"name":7,"scopes":[]}"#, "application/json").await.unwrap(), 422).await;
    assert_eq!(b["field"], "name");
    let b = error_body(post(r#"[1,2]"#, "application/json").await.unwrap(), 422).await;
    assert_eq!(b["field"], "body");
    let b = error_body(post(r#"{"name":"x","scopes":[1]}"#, "application/json").await.unwrap(), 422).await;
    assert_eq!(b["field"], "scopes[0]");
}

#[tokio::test]
async fn unknown_routes_wrong_methods_and_big_bodies() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let b = error_body(app.get("/portal/nothing-here", &org.key).await, 404).await;
    assert_eq!((&b["error"], &b["code"]), (&json!("Not Found"), &json!("not_found")));
    let b = error_body(app.client.get(format!("{}/not-api", app.root)).send().await.unwrap(), 404).await;
    assert_eq!(b["code"], "not_found");
    let res = app.req(Method::PUT, "/portal/me", Some(&org.key)).send().await.unwrap();
    assert!(res.headers()[header::ALLOW].to_str().unwrap().contains("GET"));
    let b = error_body(res, 405).await;
    assert_eq!((&b["error"], &b["code"]), (&json!("Method Not Allowed"), &json!("method_not_allowed")));

    let big = format!(r#"{{"name":"{}","scopes":["journeys:read"]}}"#, "x".repeat(1024 * 1024 + 10));
    let res = app
        .req(Method::POST, "/portal/api-keys", Some(&org.key))
        .header(header::CONTENT_TYPE, "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    let b = error_body(res, 413).await;
    assert_eq!((&b["error"], &b["code"]), (&json!("Payload Too Large"), &json!("payload_too_large")));
    // Just under the limit is parsed (and then refused by validation, not by size).
    let near = format!(r#"{{"name":"{}","scopes":["journeys:read"]}}"#, "x".repeat(1000 * 1000));
    let res = app.post("/portal/api-keys", Some(&org.key), serde_json::from_str(&near).unwrap()).await;
    let b = error_body(res, 422).await;
    assert_eq!(b["field"], "name");
}

/// Beside the contract's `error` and `detail`, a machine `code` names the case, so a client
/// branches on it rather than on the text.
#[tokio::test]
async fn each_case_answers_its_code() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let code = |b: &serde_json::Value| b["code"].as_str().unwrap().to_string();

    let b = error_body(app.post("/portal/vehicles", Some(k), vehicle(&fleet.plate)).await, 409).await;
    assert_eq!(code(&b), "duplicate", "{b}");
    let b = error_body(app.post("/portal/vehicles", Some(k), json!({"plate": "34ABC123"})).await, 422).await;
    assert_eq!((code(&b), &b["field"]), ("invalid_field".into(), &json!("vehicle_type")));
    let (_, reader) = app.create_key(k, &["journeys:read"]).await;
    let b = error_body(app.post("/portal/vehicles", Some(&reader), vehicle("34COD01")).await, 403).await;
    assert_eq!(code(&b), "missing_scope", "{b}");
    let b = error_body(app.get_anon("/portal/me").await, 401).await;
    assert_eq!(code(&b), "unauthorized", "{b}");

    // Submitted (no scheduler here, so its submission stays pending): it is no draft to delete,
    // and its pending submission refuses a change until it has finished.
    let id = fleet.journey(&app).await;
    json_of(app.req(Method::POST, &format!("/portal/journeys/{id}/submit"), Some(k)).send().await.unwrap(), 202).await;
    let b = error_body(app.delete(&format!("/portal/journeys/{id}"), k).await, 409).await;
    assert_eq!(code(&b), "not_draft", "{b}");
    let b =
        error_body(app.put(&format!("/portal/journeys/{id}"), k, json!({"departure": {"time": "09:00"}})).await, 409)
            .await;
    assert_eq!(code(&b), "pending_submission", "{b}");
    let b =
        error_body(app.req(Method::POST, &format!("/portal/journeys/{id}/cancel"), Some(k)).send().await.unwrap(), 409)
            .await;
    assert_eq!(code(&b), "pending_submission", "{b}");

    // A repeated Idempotency-Key whose first answer carried a secret (never replayed).
    let mint = || {
        app.req(Method::POST, "/portal/api-keys", Some(k))
            .header("Idempotency-Key", "codes-1")
            .json(&json!({"name": "ci", "scopes": ["journeys:read"]}))
            .send()
    };
    json_of(mint().await.unwrap(), 201).await;
    let b = error_body(mint().await.unwrap(), 409).await;
    assert_eq!(code(&b), "idempotency_conflict", "{b}");
}
