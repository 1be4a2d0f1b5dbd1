//! Every route's scope, as the OpenAPI document states it (`security: [{"bearer": [scope]}]`),
//! is the one the API enforces: a credential without it gets 403 — before its body is even
//! read, so a wrong body is not a 422 — and one with only it gets past the check.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;

/// Every scope but `scope` and the write scope that implies it.
fn all_but(scope: &str) -> Vec<&'static str> {
    let implied_by = scope.replace(":read", ":write");
    [
        "journeys:read",
        "journeys:write",
        "submissions:read",
        "webhooks:read",
        "webhooks:write",
        "account:read",
        "account:write",
    ]
    .into_iter()
    .filter(|s| *s != scope && *s != implied_by)
    .collect()
}

#[tokio::test]
async fn each_route_enforces_exactly_the_scope_the_document_states() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let doc = app.get_ok("/openapi.json", &org.key).await;
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let bearer = op["security"].as_array().unwrap().iter().find_map(|r| r.get("bearer"));
            let Some(needed) = bearer.and_then(Value::as_array) else { continue };
            let needed: Vec<&str> = needed.iter().map(|s| s.as_str().unwrap()).collect();
            assert!(needed.len() <= 1, "{method} {path}: one scope per route, got {needed:?}");
            let concrete = path.replace("{id}", "999999999").replace("{passenger_id}", "999999999");
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let call = |key: String| {
                let mut req = app.req(method.clone(), &concrete, Some(&key));
                if method == Method::POST || method == Method::PUT {
                    // Not a valid body for any route: the scope must be judged before it.
                    req = req.json(&json!({"unknown_field": true}));
                }
                async move { req.send().await.unwrap().status().as_u16() }
            };
            // Keys are revoked after use: an organization holds at most 100 active ones.
            let (app, owner) = (&app, org.key.as_str());
            let key = |scopes: Vec<&'static str>| async move { app.create_key(owner, &scopes).await };
            let revoke = |id: i64| async move { app.delete(&format!("/portal/api-keys/{id}"), owner).await };
            match needed.first().copied() {
                Some(scope) => {
                    let (id, without) = key(all_but(scope)).await;
                    assert_eq!(call(without).await, 403, "{method} {path} without {scope}");
                    revoke(id).await;
                    let scope: &'static str = all_but("none").into_iter().find(|s| *s == scope).unwrap();
                    let (id, with) = key(vec![scope]).await;
                    assert_ne!(call(with).await, 403, "{method} {path} with only {scope}");
                    revoke(id).await;
                }
                None => {
                    let (id, any) = key(vec!["submissions:read"]).await;
                    assert_ne!(call(any).await, 403, "{method} {path} needs no scope");
                    revoke(id).await;
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} operations were checked");
}
