//! KVKK data exports: the owner asks, the jobs role builds a ZIP of JSON and CSV files with
//! everything held about the organization (personal data in the clear, no secrets), kept 7 days;
//! nobody else may ask or read it, and each step is in the audit log.

use std::io::Read;

use reqwest::Method;
use serde_json::{json, Value};
use tns_core::env::RedisSettings;
use tns_jobs::periodic::Job;

use crate::{
    fixtures::{passenger, Fleet},
    helpers::*,
};

async fn request(app: &TestApp, key: &str) -> reqwest::Response {
    app.req(Method::POST, "/portal/exports", Some(key)).send().await.unwrap()
}

async fn build(app: &TestApp) -> u64 {
    let redis =
        RedisSettings { url: app.env.get("TNS_REDIS_URL").into(), prefix: app.env.get("TNS_REDIS_PREFIX").into() };
    Job::DataExports.run(&app.db, &redis).await.unwrap()
}

/// The archive's files by name.
fn unzip(bytes: &[u8]) -> std::collections::BTreeMap<String, String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a ZIP archive");
    let mut files = std::collections::BTreeMap::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        let mut text = String::new();
        f.read_to_string(&mut text).unwrap();
        files.insert(f.name().unwrap().to_string(), text);
    }
    files
}

#[tokio::test]
async fn the_owner_gets_everything_held_about_the_organization_and_nobody_else_does() {
    let app = TestApp::spawn().await;
    let f = Fleet::new(&app).await;
    let j = f.journey(&app).await;
    let traveller = passenger(f.org.id as u64 * 10 + 5);
    let identity = traveller["identity_number"].as_str().unwrap().to_string();
    let path = format!("/portal/journeys/{j}/passengers:bulk-upsert");
    app.post_ok(&path, f.key(), json!({ "passengers": [traveller] }), 200).await;
    let hook = app.post_ok("/portal/webhooks", f.key(), crate::fixtures::subscription(), 201).await;
    let secret = hook["secret"].as_str().expect("the subscription's secret, shown once").to_string();

    // An admin's API key (not the owner's) may not ask; nor may another organization read.
    let admin_key = app.admin_key(&f.org, &["account:write"]).await;
    let refused = error_body(request(&app, &admin_key).await, 403).await;
    assert!(refused["detail"].as_str().unwrap().contains("owner"), "{refused}");

    // The owner asks: answered at once, built by the jobs role.
    let asked = json_of(request(&app, f.key()).await, 202).await;
    assert_eq!(asked["state"], "pending", "{asked}");
    let id = asked["id"].as_i64().unwrap();
    error_body(request(&app, f.key()).await, 409).await;
    let download = format!("/portal/exports/{id}/download");
    error_body(app.get(&download, f.key()).await, 409).await;
    let other = app.register().await;
    error_body(app.get(&format!("/portal/exports/{id}"), &other.key).await, 404).await;
    error_body(app.get(&download, &other.key).await, 404).await;

    assert_eq!(build(&app).await, 1);
    let ready = app.get_ok(&format!("/portal/exports/{id}"), f.key()).await;
    assert_eq!(ready["state"], "ready", "{ready}");
    assert!(ready["size_bytes"].as_i64().unwrap() > 0);
    let (at, until) = (ready["ready_at"].as_str().unwrap(), ready["expires_at"].as_str().unwrap());
    let kept = chrono::DateTime::parse_from_rfc3339(until).unwrap() - chrono::DateTime::parse_from_rfc3339(at).unwrap();
    assert_eq!(kept.num_days(), 7);
    assert_eq!(app.get_ok("/portal/exports", f.key()).await[0]["id"], id);

    let res = app.get(&download, f.key()).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/zip");
    let files = unzip(&res.bytes().await.unwrap());
    for part in [
        "organization",
        "members",
        "vehicles",
        "personnel",
        "journeys",
        "passengers",
        "webhook_subscriptions",
        "audit_log",
    ] {
        assert!(files.contains_key(&format!("{part}.json")) && files.contains_key(&format!("{part}.csv")), "{part}");
    }
    assert!(files.contains_key("README.txt"));
    let journeys: Vec<Value> = serde_json::from_str(&files["journeys.json"]).unwrap();
    assert_eq!(journeys.iter().map(|j| j["id"].as_i64().unwrap()).collect::<Vec<_>>(), [j]);
    let passengers: Vec<Value> = serde_json::from_str(&files["passengers.json"]).unwrap();
    assert_eq!(passengers[0]["identity_number"], identity.as_str(), "personal data in the clear");
    let csv = &files["passengers.csv"];
    assert!(csv.lines().next().unwrap().contains("identity_number") && csv.contains(&identity), "{csv}");
    let organization: Vec<Value> = serde_json::from_str(&files["organization.json"]).unwrap();
    assert_eq!(organization[0]["id"], f.org.id);
    // Nothing of another organization, and no secret nor its hash anywhere.
    let everything: String = files.values().cloned().collect();
    assert!(!everything.contains(&other.tax_number), "another organization's data");
    for secret in
        [secret.as_str(), f.key(), admin_key.as_str(), "$argon2", "password_hash", "key_hash", "secret_sealed"]
    {
        assert!(!everything.contains(secret), "{secret} is in the archive");
    }

    // Who asked and who downloaded is in the audit log.
    let audited: Vec<(String, String)> =
        sqlx::query_as("SELECT action, actor FROM audit_log WHERE org_id = $1 AND action LIKE '%export' ORDER BY id")
            .bind(f.org.id)
            .fetch_all(&app.db)
            .await
            .unwrap();
    let actions: Vec<&str> = audited.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(actions, ["request_export", "download_export"], "{audited:?}");

    // After 7 days the archive is dropped; the record of it stays.
    sqlx::query("UPDATE data_exports SET expires_at = now() - interval '1 second' WHERE id = $1")
        .bind(id)
        .execute(&app.db)
        .await
        .unwrap();
    assert_eq!(build(&app).await, 1);
    assert_eq!(app.get_ok(&format!("/portal/exports/{id}"), f.key()).await["state"], "expired");
    error_body(app.get(&download, f.key()).await, 404).await;
    let left: Option<i64> = sqlx::query_scalar("SELECT length(archive)::int8 FROM data_exports WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(left, None, "the archive itself is gone");

    // Three a day.
    for _ in 0..2 {
        json_of(request(&app, f.key()).await, 202).await;
        build(&app).await;
    }
    let res = request(&app, f.key()).await;
    assert!(res.headers().contains_key("retry-after"));
    error_body(res, 429).await;
}

/// The portal's "Your data" page does the same for the owner signed in: ask, then download.
#[tokio::test]
async fn the_owner_asks_and_downloads_from_the_portal() {
    use crate::portal::Visitor;
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let page = v.get("/settings/data").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains(r#"action="/settings/data""#), "the owner is offered the button");
    let asked = v.submit("/settings/data", "/settings/data", &[]).await;
    assert_eq!((asked.status.as_u16(), asked.location()), (303, "/settings/data?done=asked"), "{}", asked.body);
    assert_eq!(build(&app).await, 1);
    let page = v.get("/settings/data").await;
    let id: i64 = sqlx::query_scalar("SELECT id FROM data_exports WHERE org_id = $1")
        .bind(org.id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    let link = format!("/settings/data/{id}/download");
    assert!(page.body.contains(&link), "{}", page.body);
    let res = v.client.get(format!("{}{link}", v.root)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let files = unzip(&res.bytes().await.unwrap());
    assert!(files["members.json"].contains(&org.email));
}
