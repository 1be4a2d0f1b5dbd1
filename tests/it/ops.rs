use serde_json::Value;

use crate::helpers::*;

#[tokio::test]
async fn health_readiness_and_metrics() {
    let app = TestApp::spawn().await;
    let h = app.get_anon("/healthz").await;
    assert_eq!(h.status(), 200);
    let r = app.get_anon("/readyz").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), serde_json::json!({"postgres": "ok", "redis": "ok"}));

    let org = app.register().await;
    app.get("/portal/me", &org.key).await;
    app.delete("/portal/api-keys/12345", &org.key).await;
    let m = app.metrics().await;
    for needle in [
        r#"tns_http_requests_total{method="GET",route="/api/v1/portal/me",status="200"} 1"#,
        r#"tns_http_requests_total{method="DELETE",route="/api/v1/portal/api-keys/{id}",status="404"} 1"#,
        r#"tns_http_requests_total{method="POST",route="/api/v1/auth/register",status="201"} 1"#,
        r#"tns_http_request_duration_seconds_bucket{method="GET",route="/api/v1/portal/me",status="200",le="#,
        "tns_pg_pool_connections ",
        "tns_redis_pool_connections ",
        "tns_quota_redis_fallback_total 0",
    ] {
        assert!(m.contains(needle), "metrics lack {needle}:\n{m}");
    }
    assert!(!m.contains("12345"), "raw paths never become labels");
}

#[tokio::test]
async fn readiness_fails_when_redis_is_unreachable() {
    let app = TestApp::spawn_with(&[("TNS_REDIS_URL", "redis://127.0.0.1:1")]).await;
    let r = app.get_anon("/readyz").await;
    assert_eq!(r.status(), 503);
    assert_eq!(r.json::<Value>().await.unwrap()["redis"], "unreachable");
    assert_eq!(app.get_anon("/healthz").await.status(), 200);
}

#[tokio::test]
async fn openapi_document_covers_every_route() {
    let app = TestApp::spawn().await;
    let doc: Value = app.get_anon("/openapi.json").await.json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(doc["servers"][0]["url"], "/api/v1");
    let expected = [
        ("post", "/auth/register"),
        ("post", "/auth/token"),
        ("post", "/auth/login"),
        ("get", "/portal/me"),
        ("get", "/portal/api-keys"),
        ("post", "/portal/api-keys"),
        ("delete", "/portal/api-keys/{id}"),
        ("get", "/portal/usage"),
        ("get", "/portal/billing/plans"),
        ("get", "/portal/billing/subscription"),
        ("post", "/portal/billing/subscription/change"),
        ("get", "/openapi.json"),
        ("get", "/portal/vehicles"),
        ("post", "/portal/vehicles"),
        ("get", "/portal/vehicles/{id}"),
        ("put", "/portal/vehicles/{id}"),
        ("delete", "/portal/vehicles/{id}"),
        ("get", "/portal/personnel"),
        ("post", "/portal/personnel"),
        ("get", "/portal/personnel/{id}"),
        ("put", "/portal/personnel/{id}"),
        ("delete", "/portal/personnel/{id}"),
        ("get", "/portal/journeys"),
        ("post", "/portal/journeys"),
        ("get", "/portal/journeys/{id}"),
        ("put", "/portal/journeys/{id}"),
        ("delete", "/portal/journeys/{id}"),
        ("get", "/portal/journeys/{id}/passengers"),
        ("post", "/portal/journeys/{id}/passengers"),
        ("put", "/portal/journeys/{id}/passengers/{passenger_id}"),
        ("delete", "/portal/journeys/{id}/passengers/{passenger_id}"),
        ("post", "/portal/journeys/{id}/passengers:bulk-upsert"),
        ("get", "/portal/cargo"),
        ("post", "/portal/cargo"),
        ("get", "/portal/cargo/{id}"),
        ("put", "/portal/cargo/{id}"),
        ("delete", "/portal/cargo/{id}"),
        ("post", "/portal/journeys/{id}/submit"),
        ("post", "/portal/cargo/{id}/submit"),
        ("get", "/portal/submissions"),
        ("get", "/portal/submissions/{id}"),
        ("get", "/portal/downstream"),
        ("put", "/portal/downstream"),
        ("get", "/ref/cities"),
        ("get", "/ref/districts"),
        ("get", "/portal/support/tickets"),
        ("post", "/portal/support/tickets"),
        ("get", "/portal/webhooks"),
        ("post", "/portal/webhooks"),
        ("get", "/portal/webhooks/{id}"),
        ("put", "/portal/webhooks/{id}"),
        ("delete", "/portal/webhooks/{id}"),
        ("get", "/portal/webhooks/events"),
        ("get", "/portal/webhooks/events/{id}"),
        ("post", "/portal/webhooks/test-event"),
    ];
    let paths = doc["paths"].as_object().unwrap();
    let documented: usize = paths.values().map(|p| p.as_object().unwrap().len()).sum();
    assert_eq!(documented, expected.len(), "documented operations: {:?}", paths.keys().collect::<Vec<_>>());
    for (method, path) in expected {
        let op = &doc["paths"][path][method];
        assert!(op["responses"].is_object(), "{method} {path} is documented");
        // And the documented operation is really served (not 404/405).
        let res = app.req(method.to_uppercase().parse().unwrap(), path, None).send().await.unwrap();
        assert!(
            ![404, 405].contains(&res.status().as_u16()) || path.contains("{id}"),
            "{method} {path}: {}",
            res.status()
        );
    }
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
}
