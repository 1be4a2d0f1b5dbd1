//! Idempotency-Key on POST: replay within 24 h, refusal of a reused key with another body,
//! keys scoped per organization, and secrets never replayed.

use serde_json::json;

use crate::{
    fixtures::{vehicle, Fleet},
    helpers::{assert_invalid, error_body, json_of, TestApp},
};

#[tokio::test]
async fn same_key_same_body_replays_the_first_answer() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let send = |key: &str, body: serde_json::Value| {
        app.req(reqwest::Method::POST, "/portal/vehicles", Some(k)).header("Idempotency-Key", key).json(&body).send()
    };

    let first = send("create-bus-1", vehicle("35XY100")).await.unwrap();
    assert_eq!(first.status(), 201);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first = first.json::<serde_json::Value>().await.unwrap();
    let again = send("create-bus-1", vehicle("35XY100")).await.unwrap();
    assert_eq!(again.status(), 201);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.json::<serde_json::Value>().await.unwrap(), first);
    let n: i64 =
        sqlx::query_scalar("SELECT count(*) FROM vehicles WHERE plate = '35XY100'").fetch_one(&app.db).await.unwrap();
    assert_eq!(n, 1, "created once");

    // The same key with another body is refused, clearly.
    assert_invalid(send("create-bus-1", vehicle("35XY101")).await.unwrap(), "Idempotency-Key").await;
    // A validation failure is an answer too: replayed, not re-run.
    let bad = json!({"plate": "35XY102", "vehicle_type": "ufo"});
    assert_invalid(send("bad-1", bad.clone()).await.unwrap(), "vehicle_type").await;
    let replay = send("bad-1", bad).await.unwrap();
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    assert_invalid(replay, "vehicle_type").await;
    assert_invalid(send(&"k".repeat(256), vehicle("35XY103")).await.unwrap(), "Idempotency-Key").await;

    // Keys belong to an organization: another one may use the same key.
    let other = app.register().await;
    let res = app
        .req(reqwest::Method::POST, "/portal/vehicles", Some(&other.key))
        .header("Idempotency-Key", "create-bus-1")
        .json(&vehicle("35XY100"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    assert!(res.headers().get("idempotent-replayed").is_none());

    // An expired record (older than 24 h) no longer replays.
    sqlx::query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'create-bus-1' AND org_id = $1")
        .bind(fleet.org.id)
        .execute(&app.db)
        .await
        .unwrap();
    error_body(send("create-bus-1", vehicle("35XY100")).await.unwrap(), 409).await;
    // plate now taken: a fresh run
}

#[tokio::test]
async fn a_new_api_key_is_never_stored_or_replayed() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let send = || {
        app.req(reqwest::Method::POST, "/portal/api-keys", Some(&org.key))
            .header("Idempotency-Key", "key-1")
            .json(&json!({"name": "ci", "scopes": ["journeys:read"]}))
            .send()
    };
    let created = json_of(send().await.unwrap(), 201).await;
    let secret = created["api_key"].as_str().unwrap().to_string();
    let repeat = error_body(send().await.unwrap(), 409).await;
    assert!(repeat["detail"].as_str().unwrap().contains("shown only once"));
    let stored: Option<Vec<u8>> =
        sqlx::query_scalar("SELECT body FROM idempotency_keys WHERE key = 'key-1'").fetch_one(&app.db).await.unwrap();
    assert!(stored.is_none(), "no body kept for a secret-bearing answer");
    let keys: i64 = sqlx::query_scalar("SELECT count(*) FROM api_keys WHERE org_id = $1 AND name = 'ci'")
        .bind(org.id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(keys, 1);
    assert!(!secret.is_empty());
}
