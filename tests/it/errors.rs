use reqwest::{header, Method};

use crate::helpers::*;

#[tokio::test]
async fn malformed_requests_get_json_errors() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let post = |body: &'static str, ctype: &'static str| {
        app.req(Method::POST, "/portal/api-keys", Some(&org.key)).header(header::CONTENT_TYPE, ctype).body(body).send()
    };
    // Not JSON at all, JSON with the wrong content type, truncated JSON, trailing garbage.
    error_body(post("name=x", "application/x-www-form-urlencoded").await.unwrap(), 400).await;
    error_body(post(r#"{"name":"x","scopes":["journeys:read"]}"#, "text/plain").await.unwrap(), 400).await;
    error_body(post(r#"{"name":"x","#, "application/json").await.unwrap(), 400).await;
    error_body(post(r#"{"name":"x","scopes":["journeys:read"]} {}"#, "application/json").await.unwrap(), 400).await;
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
    assert_eq!(b["field"], "vehicle_type");
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
    assert_eq!(b["error"], "Not Found");
    error_body(app.client.get(format!("{}/not-api", app.root)).send().await.unwrap(), 404).await;
    let res = app.req(Method::PUT, "/portal/me", Some(&org.key)).send().await.unwrap();
    assert!(res.headers()[header::ALLOW].to_str().unwrap().contains("GET"));
    let b = error_body(res, 405).await;
    assert_eq!(b["error"], "Method Not Allowed");

    let big = format!(r#"{{"name":"{}","scopes":["journeys:read"]}}"#, "x".repeat(1024 * 1024 + 10));
    let res = app
        .req(Method::POST, "/portal/api-keys", Some(&org.key))
        .header(header::CONTENT_TYPE, "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    let b = error_body(res, 413).await;
    assert_eq!(b["error"], "Payload Too Large");
    // Just under the limit is parsed (and then refused by validation, not by size).
    let near = format!(r#"{{"name":"{}","scopes":["journeys:read"]}}"#, "x".repeat(1000 * 1000));
    let res = app.post("/portal/api-keys", Some(&org.key), serde_json::from_str(&near).unwrap()).await;
    let b = error_body(res, 422).await;
    assert_eq!(b["field"], "name");
}
