//! Trials, suspension and the operators' commands: what a suspended organization may still do
//! (read its data, revoke a key, billing, support) and may not (create, change, submit), its
//! queued submissions held and released, trial expiry by the jobs, a plan choice lifting a
//! trial's suspension (and not an operator's), and the audit log.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};
use tns_core::env::RedisSettings;
use tns_jobs::periodic::Job;

use crate::{
    fixtures::{self, Fleet},
    helpers::{drain, error_body, json_of, tns_admin as admin, Api, Env, TestApp},
};

async fn set_status(env: &Env, org: i64, status: &str, reason: &str) -> Value {
    let org = org.to_string();
    let args = ["set-status", &org, status, "--reason", reason, "--operator", "deniz"];
    admin(env, &args).await.expect("set-status succeeds").remove(0)
}

async fn submit(api: &Api, key: &str, journey: i64) -> i64 {
    let res = api.req(Method::POST, &format!("/portal/journeys/{journey}/submit"), Some(key)).send().await.unwrap();
    json_of(res, 202).await["submission_id"].as_i64().unwrap()
}

async fn status_of(api: &Api, path: &str, key: &str) -> u16 {
    api.req(Method::GET, path, Some(key)).send().await.unwrap().status().as_u16()
}

/// A change a suspended organization may not make: creating a vehicle (refused before the body
/// is judged, so an empty one does).
async fn create_vehicle(api: &Api, key: &str) -> reqwest::Response {
    api.post("/portal/vehicles", Some(key), json!({})).await
}

#[tokio::test]
async fn a_suspended_organization_keeps_profile_billing_and_support_and_its_queue_waits_until_reactivated() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let other_process = TestApp::start(env.clone()).await;
    let (f, g) = (Fleet::new(&app.api).await, Fleet::new(&app.api).await);
    let held = submit(&app.api, f.key(), f.journey(&app.api).await).await;
    let free = submit(&app.api, g.key(), g.journey(&app.api).await).await;
    // Both processes have served f (and so published its standing) before the suspension.
    for p in [&app, &other_process] {
        assert_eq!(status_of(&p.api, "/portal/vehicles", f.key()).await, 200);
    }

    let changed = set_status(&env, f.org.id, "suspended", "invoice 2026-10 unpaid").await;
    assert_eq!(changed["before"]["status"], "trial");
    assert_eq!(changed["after"]["status"], "suspended");

    // At once, on every process.
    for p in [&app, &other_process] {
        let detail =
            error_body(create_vehicle(&p.api, f.key()).await, 403).await["detail"].as_str().unwrap().to_string();
        assert!(detail.contains("suspended") && detail.contains("invoice 2026-10 unpaid"), "{detail}");
    }
    let res = app.api.req(Method::POST, "/portal/journeys", Some(f.key())).json(&json!({})).send().await.unwrap();
    assert_eq!(res.status(), 403, "writes are refused before the body is judged");
    for path in ["/portal/me", "/portal/billing/subscription", "/portal/billing/invoices", "/portal/support/tickets"] {
        assert_eq!(status_of(&app.api, path, f.key()).await, 200, "{path} stays open");
    }
    let me = app.api.get_ok("/portal/me", f.key()).await;
    assert_eq!(me["organization"]["status"], "suspended");
    assert_eq!(me["organization"]["status_reason"], "invoice 2026-10 unpaid");
    assert_eq!(create_vehicle(&app.api, g.key()).await.status(), 422, "other tenants are untouched");

    // The scheduler's claim passes f's submission by; g's is taken.
    let claimed = tns_store::submissions::queue::claim(&app.db, 10, Duration::from_millis(1), 42, 0).await.unwrap();
    assert_eq!(claimed.iter().map(|c| c.id).collect::<Vec<_>>(), vec![free]);

    let listed = admin(&env, &["orgs", "--status", "suspended"]).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0]["id"].as_i64(), listed[0]["queued"].as_i64()), (Some(f.org.id), Some(1)));

    set_status(&env, f.org.id, "active", "paid").await;
    assert_eq!(create_vehicle(&other_process.api, f.key()).await.status(), 422, "judged again, on every process");
    drain(&env).await;
    for (key, id) in [(f.key(), held), (g.key(), free)] {
        let s = app.api.get_ok(&format!("/portal/submissions/{id}"), key).await;
        assert_eq!(s["state"], "delivered", "{s}");
    }

    let log = admin(&env, &["audit", "--org", &f.org.id.to_string()]).await.unwrap();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0]["actor"], "operator:deniz");
    assert_eq!(log[0]["action"], "set_status");
    assert_eq!((&log[0]["before"]["status"], &log[0]["after"]["status"]), (&json!("suspended"), &json!("active")));
    assert_eq!(log[1]["reason"], "invoice 2026-10 unpaid");
    assert!(admin(&env, &["audit", "--org", &g.org.id.to_string()]).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_suspended_organization_reads_its_data_and_revokes_a_leaked_key_but_creates_changes_and_submits_nothing() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app.api).await;
    let key = f.key();
    let delivered = f.journey(&app.api).await;
    let submission = submit(&app.api, key, delivered).await;
    drain(&env).await;
    let draft = f.journey(&app.api).await;
    let hook = json!({"event_type": "journey.created", "endpoint_url": "http://127.0.0.1:9/hook"});
    let hook = app.api.post_ok("/portal/webhooks", key, hook, 201).await["id"].as_i64().unwrap();
    let leaked =
        app.api.post_ok("/portal/api-keys", key, json!({"name": "leaked", "scopes": ["journeys:read"]}), 201).await;
    let (leaked_id, leaked) = (leaked["id"].as_i64().unwrap(), leaked["api_key"].as_str().unwrap().to_string());
    assert_eq!(status_of(&app.api, "/portal/journeys", &leaked).await, 200);

    set_status(&env, f.org.id, "suspended", "invoice 2026-10 unpaid").await;

    // Every read of its own data answers.
    let reads = [
        "/portal/me".to_string(),
        "/portal/vehicles".into(),
        format!("/portal/vehicles/{}", f.vehicle_id),
        "/portal/personnel".into(),
        format!("/portal/personnel/{}", f.driver_id),
        "/portal/journeys".into(),
        format!("/portal/journeys/{delivered}"),
        format!("/portal/journeys/{delivered}/passengers"),
        "/portal/cargo".into(),
        "/portal/submissions".into(),
        format!("/portal/submissions/{submission}"),
        "/portal/webhooks".into(),
        format!("/portal/webhooks/{hook}"),
        "/portal/webhooks/events".into(),
        "/portal/downstream".into(),
        "/portal/api-keys".into(),
        "/portal/usage".into(),
        "/portal/billing/invoices".into(),
        "/portal/support/tickets".into(),
        "/ref/cities".into(),
    ];
    for path in &reads {
        assert_eq!(status_of(&app.api, path, key).await, 200, "GET {path}");
    }
    let head = app.api.req(Method::HEAD, "/portal/journeys", Some(key)).send().await.unwrap();
    assert_eq!(head.status(), 200);
    // The downstream's report of what was notified for it, fetched with its own credentials.
    let report = app.api.get(&format!("/portal/journeys/{delivered}/report"), key).await;
    assert_eq!(report.status(), 200);
    assert_eq!(report.headers()["content-type"], "application/pdf");

    // A leaked key can be revoked, and is refused from then on.
    json_of(app.api.delete(&format!("/portal/api-keys/{leaked_id}"), key).await, 200).await;
    let refused = error_body(app.api.get("/portal/journeys", &leaked).await, 401).await;
    assert!(refused["detail"].as_str().unwrap().contains("revoked"), "{refused}");
    // Support and billing answer, writes included.
    let ticket = json!({"subject": "Askıya alındık", "body": "Fatura ödendi", "priority": "high"});
    app.api.post_ok("/portal/support/tickets", key, ticket, 201).await;

    // Nothing is created, changed or submitted, each refused with why and what to do.
    let vehicle = fixtures::vehicle("34SUS01");
    let changes = [
        (Method::POST, "/portal/vehicles".to_string(), Some(vehicle)),
        (Method::PUT, format!("/portal/journeys/{draft}"), Some(json!({"departure": {"time": "09:15"}}))),
        (Method::POST, format!("/portal/journeys/{draft}/submit"), None),
        (Method::DELETE, format!("/portal/journeys/{draft}"), None),
        (Method::POST, "/portal/api-keys".into(), Some(json!({"name": "new", "scopes": ["journeys:read"]}))),
        (
            Method::POST,
            "/portal/webhooks".into(),
            Some(json!({"event_type": "journey.created", "endpoint_url": "http://127.0.0.1:9/x"})),
        ),
        (Method::DELETE, format!("/portal/webhooks/{hook}"), None),
    ];
    for (method, path, body) in changes {
        let res = app.api.call(method.clone(), &path, key, body).await;
        let detail = error_body(res, 403).await["detail"].as_str().unwrap().to_string();
        assert!(
            detail.contains("invoice 2026-10 unpaid") && detail.contains("reactivated"),
            "{method} {path}: {detail}"
        );
    }
    assert_eq!(app.api.get_ok("/portal/vehicles", key).await["data"].as_array().unwrap().len(), 1);
    let journey = app.api.get_ok(&format!("/portal/journeys/{draft}"), key).await;
    assert_eq!((&journey["status"], &journey["departure"]["time"]), (&json!("draft"), &json!("08:30")));
    assert_eq!(app.api.get_ok("/portal/webhooks", key).await["data"].as_array().unwrap().len(), 1);
    let keys = app.api.get_ok("/portal/api-keys", key).await;
    assert!(keys["data"].as_array().unwrap().iter().all(|k| k["name"] != "new"), "{keys}");

    // What it was served is counted; what it was refused is not.
    let usage = app.api.get_ok("/portal/usage", key).await;
    let calls = |endpoint: &str| {
        usage["by_endpoint"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["endpoint"] == endpoint)
            .map(|e| e["total_calls"].clone())
    };
    assert_eq!(calls("DELETE /portal/api-keys/{id}"), Some(json!(1)));
    assert_eq!(calls("POST /portal/vehicles"), Some(json!(1)), "the fleet's own, not the refused one");
    assert_eq!(calls("POST /portal/journeys/{id}/submit"), Some(json!(1)));
}

#[tokio::test]
async fn operator_commands_refuse_what_they_cannot_do_and_change_nothing() {
    let app = TestApp::spawn().await;
    let f = Fleet::new(&app.api).await;
    let org = f.org.id.to_string();
    let e = admin(&app.env, &["set-status", &org, "suspended", "--operator", "deniz"]).await.unwrap_err();
    assert!(e.contains("--reason"), "{e}");
    let e = admin(&app.env, &["set-status", "999999999", "suspended", "--reason", "x", "--operator", "d"]).await;
    assert!(e.unwrap_err().contains("no organization 999999999"));
    let e = admin(&app.env, &["set-status", &org, "banned", "--reason", "x", "--operator", "d"]).await.unwrap_err();
    assert!(e.contains("status must be one of"), "{e}");
    assert_eq!(status_of(&app.api, "/portal/vehicles", f.key()).await, 200);
    assert!(admin(&app.env, &["audit"]).await.unwrap().is_empty(), "nothing was done, nothing logged");
}

#[tokio::test]
async fn a_trial_that_ends_without_a_plan_is_suspended_and_choosing_a_plan_lifts_only_that() {
    let app = TestApp::spawn_with(&[("TNS_TRIAL_DAYS", "3")]).await;
    let f = Fleet::new(&app.api).await;
    let me = app.api.get_ok("/portal/me", f.key()).await;
    assert_eq!(me["organization"]["status"], "trial");
    let ends: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(me["organization"]["trial_ends_at"].clone()).unwrap();
    let days = (ends - chrono::Utc::now()).num_hours();
    assert!((71..=72).contains(&days), "a 3-day trial ends in {days} h");

    let redis =
        RedisSettings { url: app.env.get("TNS_REDIS_URL").into(), prefix: app.env.get("TNS_REDIS_PREFIX").into() };
    assert_eq!(Job::TrialExpiry.run(&app.db, &redis).await.unwrap(), 0, "not yet");
    sqlx::query("UPDATE organizations SET trial_ends_at = now() - interval '1 minute' WHERE id = $1")
        .bind(f.org.id)
        .execute(&app.db)
        .await
        .unwrap();
    assert_eq!(Job::TrialExpiry.run(&app.db, &redis).await.unwrap(), 1);
    assert_eq!(Job::TrialExpiry.run(&app.db, &redis).await.unwrap(), 0, "once");
    let refused = error_body(create_vehicle(&app.api, f.key()).await, 403).await;
    assert!(refused["detail"].as_str().unwrap().contains("trial period has ended"), "{refused}");
    let log = admin(&app.env, &["audit"]).await.unwrap();
    assert_eq!((&log[0]["actor"], &log[0]["action"]), (&json!("jobs"), &json!("trial_expired")));

    // Choosing a plan (the same one counts) lifts the trial's suspension.
    app.api.post_ok("/portal/billing/subscription/change", f.key(), json!({"plan_code": "starter"}), 200).await;
    assert_eq!(create_vehicle(&app.api, f.key()).await.status(), 422);
    assert_eq!(app.api.get_ok("/portal/me", f.key()).await["organization"]["status"], "active");

    // An operator's suspension is not lifted by a plan change.
    set_status(&app.env, f.org.id, "suspended", "abuse").await;
    app.api.post_ok("/portal/billing/subscription/change", f.key(), json!({"plan_code": "growth"}), 200).await;
    assert_eq!(create_vehicle(&app.api, f.key()).await.status(), 403);
}

#[tokio::test]
async fn operators_change_plans_and_look_at_what_was_sent_on_the_record() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app.api).await;
    let org = f.org.id.to_string();
    let id = submit(&app.api, f.key(), f.journey(&app.api).await).await;
    drain(&env).await;

    let changed =
        admin(&env, &["plan", &org, "growth", "--reason", "sales deal", "--operator", "deniz"]).await.unwrap();
    assert_eq!((&changed[0]["before"], &changed[0]["after"]), (&json!("starter"), &json!("growth")));
    let me = app.api.get_ok("/portal/me", f.key()).await;
    assert_eq!(me["subscription"]["code"], "growth");
    assert_eq!(me["organization"]["status"], "active", "a plan set by an operator ends the trial");
    let res = app.api.req(Method::GET, "/portal/vehicles", Some(f.key())).send().await.unwrap();
    assert_eq!(res.headers()["x-ratelimit-limit"], "10000", "the new quota holds at once");
    let e = admin(&env, &["plan", &org, "nope", "--reason", "x", "--operator", "deniz"]).await.unwrap_err();
    assert!(e.contains("no plan `nope`"), "{e}");

    let e = admin(&env, &["submission", &org, &id.to_string(), "--operator", "deniz"]).await.unwrap_err();
    assert!(e.contains("--reason"), "looking at personal data needs a reason: {e}");
    let shown = admin(&env, &["submission", &org, &id.to_string(), "--reason", "ticket 7", "--operator", "deniz"])
        .await
        .unwrap()
        .remove(0);
    assert_eq!(shown["submission"]["state"], "delivered");
    assert_eq!(shown["sent"]["crew"][0]["identity_number"].as_str().unwrap().len(), 11, "unmasked: {shown}");
    assert_eq!(shown["attempts"].as_array().unwrap().len(), 1);
    let other = Fleet::new(&app.api).await.org.id.to_string();
    let e = admin(&env, &["submission", &other, &id.to_string(), "--reason", "x", "--operator", "d"]).await;
    assert!(e.unwrap_err().contains("has no submission"), "submissions are looked up within their organization");

    let log = admin(&env, &["audit", "--org", &org]).await.unwrap();
    let actions: Vec<&str> = log.iter().map(|l| l["action"].as_str().unwrap()).collect();
    // The plan change, and the end of the trial it caused, each on the record.
    assert_eq!(actions, ["view_submission", "set_status", "change_plan"]);
    assert_eq!(log[0]["reason"], "ticket 7");
    assert_eq!(
        (log[1]["before"]["status"].as_str(), log[1]["after"]["status"].as_str()),
        (Some("trial"), Some("active"))
    );
    assert_eq!((log[1]["actor"].as_str(), log[1]["reason"].as_str()), (Some("operator:deniz"), Some("sales deal")));
}
