use serde_json::{json, Value};

use crate::helpers::*;

#[tokio::test]
async fn create_list_and_revoke_a_key() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let res = app.post("/portal/api-keys", Some(&org.key), json!({"name": "ci", "scopes": ["journeys:read"]})).await;
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await.unwrap();
    let (id, key) = (created["id"].as_i64().unwrap(), created["api_key"].as_str().unwrap().to_string());
    assert_eq!(created["name"], "ci");
    assert_eq!(created["scopes"], json!(["journeys:read"]));
    assert!(key.starts_with(created["api_key_prefix"].as_str().unwrap()));

    let list: Value = app.get("/portal/api-keys", &org.key).await.json().await.unwrap();
    let entries = list["data"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["id"], id, "newest first");
    assert!(entries.iter().all(|e| e.get("api_key").is_none()), "the key is never shown again");

    let token = app.token(&key).await;
    let res = app.delete(&format!("/portal/api-keys/{id}"), &org.key).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"ok": true}));
    error_body(app.get("/portal/me", &key).await, 401).await;
    error_body(app.get("/portal/me", &token).await, 401).await;
    error_body(app.post("/auth/token", None, json!({"client_secret": key})).await, 401).await;

    let list: Value = app.get("/portal/api-keys", &org.key).await.json().await.unwrap();
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    error_body(app.delete(&format!("/portal/api-keys/{id}"), &org.key).await, 404).await;
    error_body(app.delete("/portal/api-keys/not-a-number", &org.key).await, 404).await;
}

#[tokio::test]
async fn scopes_are_enforced_and_only_subsets_can_be_minted() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let (_, journeys) = app.create_key(&org.key, &["journeys:read"]).await;
    let (_, reader) = app.create_key(&org.key, &["account:read"]).await;
    let (_, minter) = app.create_key(&org.key, &["account:write", "journeys:read"]).await;

    // /portal/me needs no scope; the key list needs account:read.
    assert_eq!(app.get("/portal/me", &journeys).await.status(), 200);
    error_body(app.get("/portal/api-keys", &journeys).await, 403).await;
    assert_eq!(app.get("/portal/api-keys", &reader).await.status(), 200);
    error_body(
        app.post("/portal/api-keys", Some(&reader), json!({"name": "x", "scopes": ["account:read"]})).await,
        403,
    )
    .await;

    // account:write implies account:read; a key cannot grant what it lacks.
    assert_eq!(app.get("/portal/api-keys", &minter).await.status(), 200);
    for ok in [&["journeys:read"][..], &["account:read"], &["account:write", "journeys:read"]] {
        assert_eq!(app.post("/portal/api-keys", Some(&minter), json!({"name": "x", "scopes": ok})).await.status(), 201);
    }
    for denied in [&["journeys:write"][..], &["webhooks:read"], &["account:write", "submissions:read"]] {
        error_body(app.post("/portal/api-keys", Some(&minter), json!({"name": "x", "scopes": denied})).await, 403)
            .await;
    }
    // Tokens carry the key's scopes.
    let t = app.token(&journeys).await;
    error_body(app.get("/portal/api-keys", &t).await, 403).await;

    for (body, field) in [
        (json!({"name": "x", "scopes": []}), "scopes"),
        (json!({"name": "x", "scopes": ["journeys:admin"]}), "scopes[0]"),
        (json!({"name": "", "scopes": ["journeys:read"]}), "name"),
        (json!({"name": "x", "scopes": "journeys:read"}), "scopes"),
        (json!({"scopes": ["journeys:read"]}), "name"),
    ] {
        let b = error_body(app.post("/portal/api-keys", Some(&org.key), body).await, 422).await;
        assert_eq!(b["field"], field, "{b}");
    }
}

#[tokio::test]
async fn another_organization_cannot_see_or_revoke_keys() {
    let app = TestApp::spawn().await;
    let a = app.register().await;
    let b = app.register().await;
    let (a_key_id, a_key) = app.create_key(&a.key, &["journeys:read"]).await;
    error_body(app.delete(&format!("/portal/api-keys/{a_key_id}"), &b.key).await, 404).await;
    assert_eq!(app.get("/portal/me", &a_key).await.status(), 200, "still valid");
    let list: Value = app.get("/portal/api-keys", &b.key).await.json().await.unwrap();
    assert!(list["data"].as_array().unwrap().iter().all(|e| e["id"] != a_key_id));
    let me: Value = app.get("/portal/me", &b.key).await.json().await.unwrap();
    assert_eq!(me["organization"]["id"], b.id);
}

#[tokio::test]
async fn key_count_is_bounded() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    // Fill up to the limit directly; the API must refuse the next one.
    sqlx::query(
        "INSERT INTO api_keys (org_id, created_by, name, prefix, key_hash, scopes)
         SELECT $1, $2, 'k' || g, 'sk_live_x', sha256(g::text::bytea), '{journeys:read}' FROM generate_series(1, 99) g",
    )
    .bind(org.id)
    .bind(org.user_id)
    .execute(&app.db)
    .await
    .unwrap();
    let b = error_body(
        app.post("/portal/api-keys", Some(&org.key), json!({"name": "x", "scopes": ["journeys:read"]})).await,
        409,
    )
    .await;
    assert!(b["detail"].as_str().unwrap().contains("100"));
}
