//! The operators' admin HTTP API, against the real binary serving it beside the tenant API
//! (`TNS_ADMIN_ADDR`): operator tokens made and revoked by `tns admin token`, refused when
//! missing, unknown, revoked or without the route's scope; organizations found, suspended,
//! reactivated and moved to a plan with the effect on the tenant API at once; a submission as
//! sent, only with `personal-data` and a reason; failed submissions queued again and
//! delivered; the audit log; inputs refused naming the field; the document listing every route.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::{
    fixtures::{self, Fleet},
    helpers::{client, drain, error_body, json_of, tns_admin, Env, Proc},
};

/// The admin API of a running `tns`.
struct Admin {
    root: String,
    client: reqwest::Client,
}

impl Admin {
    fn of(p: &Proc) -> Admin {
        Admin { root: p.admin_root.clone().expect("the process serves the admin API"), client: client() }
    }

    async fn call(&self, method: Method, path: &str, token: Option<&str>, body: Option<Value>) -> Response {
        let mut r = self.client.request(method, format!("{}/admin/v1{path}", self.root));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        if let Some(b) = body {
            r = r.json(&b);
        }
        r.send().await.unwrap()
    }

    async fn get(&self, path: &str, token: &str) -> Response {
        self.call(Method::GET, path, Some(token), None).await
    }

    async fn post(&self, path: &str, token: &str, body: Value) -> Response {
        self.call(Method::POST, path, Some(token), Some(body)).await
    }
}

/// `tns api` with the admin API on a free port.
async fn start(env: &Env) -> (Proc, Admin) {
    let p = Proc::start("api", &env.with(&[("TNS_ADMIN_ADDR", "127.0.0.1:0")])).await;
    let admin = Admin::of(&p);
    (p, admin)
}

/// A token for operator `name` with `scopes` (`read,write`), made by `tns admin token create`.
async fn token(env: &Env, name: &str, scopes: &str) -> (i64, String) {
    let made = tns_admin(env, &["token", "create", name, "--scope", scopes, "--operator", "lead"]).await.unwrap();
    (made[0]["id"].as_i64().unwrap(), made[0]["token"].as_str().unwrap().to_string())
}

async fn assert_invalid(res: Response, field: &str) {
    let b = json_of(res, 422).await;
    assert_eq!((b["error"].as_str(), b["field"].as_str()), (Some("Validation Error"), Some(field)), "{b}");
    assert!(b["detail"].as_str().unwrap().starts_with(field), "{b}");
}

#[tokio::test]
async fn operator_tokens_are_hashed_scoped_and_revocable_and_the_document_lists_every_route() {
    let env = Env::new().await;
    let (p, admin) = start(&env).await;
    let (reader_id, reader) = token(&env, "ayse", "read").await;
    let (_, writer) = token(&env, "deniz", "write,read,write").await;
    assert!(reader.starts_with("tnsop_") && reader.len() > 40, "{reader}");

    let listed = tns_admin(&env, &["token", "list"]).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0]["scopes"], json!(["write", "read"]), "each scope once: {}", listed[0]);
    for t in &listed {
        assert!(t.get("token").is_none() && t.get("token_hash").is_none(), "never the token: {t}");
    }
    let stored: Vec<u8> = sqlx::query_scalar("SELECT token_hash FROM operator_tokens WHERE id = $1")
        .bind(reader_id)
        .fetch_one(&env.pool().await)
        .await
        .unwrap();
    assert_eq!(stored, tns_core::keys::hash(&reader).to_vec(), "only the SHA-256 is stored");

    // Refused: no token, a tenant's key, an unknown token.
    let tenant = p.api.register().await;
    for bearer in [None, Some(tenant.key.as_str()), Some("tnsop_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")] {
        let res = admin.call(Method::GET, "/organizations", bearer, None).await;
        error_body(res, 401).await;
    }
    assert_eq!(admin.get("/organizations", &reader).await.status(), 200);
    // The scope is the route's: `read` cannot write, `write` alone is not `personal-data`.
    let res = admin.post(&format!("/organizations/{}/status", tenant.id), &reader, json!({})).await;
    let detail = error_body(res, 403).await["detail"].as_str().unwrap().to_string();
    assert!(detail.contains("`write`"), "{detail}");
    let res = admin.get(&format!("/organizations/{}/submissions/1?reason=x", tenant.id), &writer).await;
    assert!(error_body(res, 403).await["detail"].as_str().unwrap().contains("`personal-data`"));

    // Revoked: refused from the next request on.
    tns_admin(&env, &["token", "revoke", &reader_id.to_string(), "--operator", "lead"]).await.unwrap();
    let res = admin.get("/organizations", &reader).await;
    assert!(error_body(res, 401).await["detail"].as_str().unwrap().contains("revoked"));
    let listed = tns_admin(&env, &["token", "list"]).await.unwrap();
    let revoked = listed.iter().find(|t| t["id"] == reader_id).unwrap();
    assert!(revoked["revoked_at"].is_string() && revoked["last_used_at"].is_string(), "{revoked}");
    let e = tns_admin(&env, &["token", "revoke", "999999", "--operator", "lead"]).await.unwrap_err();
    assert!(e.contains("no operator token 999999"), "{e}");
    let e = tns_admin(&env, &["token", "create", "x", "--scope", "read,admin", "--operator", "lead"]).await;
    assert!(e.unwrap_err().contains("--scope"));

    // Making and revoking tokens is in the audit log, with who did it.
    let log = json_of(admin.get("/audit", &writer).await, 200).await;
    let actions: Vec<(&str, &str)> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["actor"].as_str().unwrap(), e["action"].as_str().unwrap()))
        .collect();
    assert_eq!(
        actions,
        [
            ("operator:lead", "revoke_operator_token"),
            ("operator:lead", "create_operator_token"),
            ("operator:lead", "create_operator_token")
        ]
    );

    // Not on the tenants' port; anything unknown here is a 404 in the same shape.
    assert_eq!(p.api.get_anon("/admin/v1/openapi.json").await.status(), 404);
    error_body(admin.get("/nope", &writer).await, 404).await;
    error_body(admin.call(Method::DELETE, "/audit", Some(&writer), None).await, 405).await;

    // The document: every route, each operation's scope stated, readable without a token.
    let doc = json_of(admin.call(Method::GET, "/openapi.json", None, None).await, 200).await;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(doc["servers"][0]["url"], "/admin/v1");
    let expected = [
        ("get", "/organizations", Some("read")),
        ("post", "/organizations/{id}/status", Some("write")),
        ("post", "/organizations/{id}/plan", Some("write")),
        ("get", "/organizations/{id}/submissions/{submission_id}", Some("personal-data")),
        ("post", "/organizations/{id}/requeue", Some("write")),
        ("post", "/organizations/{id}/submissions/{submission_id}/resolve", Some("write")),
        ("get", "/organizations/{id}/invoices", Some("read")),
        ("post", "/invoices/{id}/paid", Some("write")),
        ("post", "/invoices/{id}/void", Some("write")),
        ("get", "/audit", Some("read")),
        ("get", "/openapi.json", None),
    ];
    let documented: usize = doc["paths"].as_object().unwrap().values().map(|p| p.as_object().unwrap().len()).sum();
    assert_eq!(documented, expected.len(), "{}", doc["paths"]);
    for (method, path, scope) in expected {
        let op = &doc["paths"][path][method];
        assert!(op["responses"]["200"].is_object(), "{method} {path} is documented");
        if let Some(scope) = scope {
            assert_eq!(op["security"], json!([{"operator_token": [scope]}]), "{method} {path}");
            assert!(op["description"].as_str().unwrap().contains(&format!("`{scope}`")), "{method} {path}");
            assert!(op["responses"]["401"].is_object() && op["responses"]["403"].is_object());
        }
    }

    // Each route refuses a token holding every scope but the one its document states (the
    // extractor's type, not only the text, says which).
    let mut lacking = std::collections::HashMap::new();
    for (scope, others) in
        [("read", "write,personal-data"), ("write", "read,personal-data"), ("personal-data", "read,write")]
    {
        lacking.insert(scope, token(&env, &format!("not-{scope}"), others).await.1);
    }
    for (method, path, scope) in expected {
        let Some(scope) = scope else { continue };
        let concrete = path.replace("{id}", "1").replace("{submission_id}", "1");
        let (m, body) = if method == "post" { (Method::POST, Some(json!({}))) } else { (Method::GET, None) };
        error_body(admin.call(m, &concrete, Some(lacking[scope].as_str()), body).await, 403).await;
    }
}

#[tokio::test]
async fn operators_suspend_reactivate_and_change_plans_and_the_tenant_api_follows_at_once() {
    let env = Env::new().await;
    let (p, admin) = start(&env).await;
    let (_, op) = token(&env, "deniz", "read,write").await;
    let tenant = p.api.register().await;
    let other = p.api.register().await;
    let path = |what: &str| format!("/organizations/{}/{what}", tenant.id);
    // Served (so the tenant's standing is published) before anything changes.
    assert_eq!(p.api.get("/portal/vehicles", &tenant.key).await.status(), 200);

    let found = json_of(admin.get(&format!("/organizations?search={}", tenant.email), &op).await, 200).await;
    assert_eq!(found["data"].as_array().unwrap().len(), 1, "{found}");
    let org = &found["data"][0];
    assert_eq!((org["id"].as_i64(), org["plan_code"].as_str()), (Some(tenant.id), Some("starter")));
    assert_eq!((org["status"].as_str(), org["queued"].as_i64()), (Some("trial"), Some(0)));
    let all = json_of(admin.get("/organizations?limit=1", &op).await, 200).await;
    assert_eq!(all["data"][0]["id"], other.id, "newest first, at most `limit`");

    let changed = json_of(
        admin.post(&path("status"), &op, json!({"status": "suspended", "reason": "invoice 2026-10 unpaid"})).await,
        200,
    )
    .await;
    assert_eq!(
        (changed["before"]["status"].as_str(), changed["after"]["status"].as_str()),
        (Some("trial"), Some("suspended"))
    );
    assert_eq!(changed["published"], true);
    // At once: the tenant's next change is refused, with the reason.
    let res = p.api.post("/portal/vehicles", Some(&tenant.key), json!({})).await;
    assert!(error_body(res, 403).await["detail"].as_str().unwrap().contains("invoice 2026-10 unpaid"));
    assert_eq!(p.api.post("/portal/vehicles", Some(&other.key), json!({})).await.status(), 422, "others are untouched");
    let suspended = json_of(admin.get("/organizations?status=suspended", &op).await, 200).await;
    assert_eq!(
        suspended["data"].as_array().unwrap().iter().map(|o| o["id"].as_i64().unwrap()).collect::<Vec<_>>(),
        [tenant.id]
    );

    admin.post(&path("status"), &op, json!({"status": "active", "reason": "paid"})).await.error_for_status().unwrap();
    assert_eq!(p.api.post("/portal/vehicles", Some(&tenant.key), json!({})).await.status(), 422);

    let changed =
        json_of(admin.post(&path("plan"), &op, json!({"plan_code": "growth", "reason": "sales deal"})).await, 200)
            .await;
    assert_eq!((&changed["before"], &changed["after"]), (&json!("starter"), &json!("growth")));
    let res = p.api.get("/portal/vehicles", &tenant.key).await;
    assert_eq!(res.headers()["x-ratelimit-limit"], "10000", "the new quota holds at once");

    // Who, what, before, after, why: newest first.
    let log = json_of(admin.get(&format!("/audit?org={}", tenant.id), &op).await, 200).await;
    let log = log["data"].as_array().unwrap();
    let actions: Vec<&str> = log.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["change_plan", "set_status", "set_status"]);
    assert!(log.iter().all(|e| e["actor"] == "operator:deniz" && e["org_id"] == tenant.id));
    assert_eq!((&log[0]["before"]["plan_code"], &log[0]["after"]["plan_code"]), (&json!("starter"), &json!("growth")));
    assert_eq!((&log[1]["before"]["status"], &log[1]["after"]["status"]), (&json!("suspended"), &json!("active")));
    assert_eq!(log[2]["reason"], "invoice 2026-10 unpaid");
    assert_eq!(json_of(admin.get("/audit?limit=1", &op).await, 200).await["data"].as_array().unwrap().len(), 1);

    // Refused, naming what is wrong, and nothing changes.
    let bad_bodies = [
        (json!({"status": "banned", "reason": "x"}), "status"),
        (json!({"status": "active"}), "reason"),
        (json!({"status": "active", "reason": "   "}), "reason"),
        (json!({"status": "active", "reason": "x".repeat(501)}), "reason"),
        (json!({"status": "active", "reason": "x", "colour": "red"}), "colour"),
    ];
    for (body, field) in bad_bodies {
        assert_invalid(admin.post(&path("status"), &op, body).await, field).await;
    }
    assert_invalid(admin.post(&path("plan"), &op, json!({"reason": "x"})).await, "plan_code").await;
    assert_invalid(admin.post(&path("requeue"), &op, json!({})).await, "reason").await;
    for (query, field) in
        [("limit=0", "limit"), ("limit=1001", "limit"), ("status=gone", "status"), ("colour=red", "colour")]
    {
        assert_invalid(admin.get(&format!("/organizations?{query}"), &op).await, field).await;
    }
    assert_invalid(admin.get("/audit?org=acme", &op).await, "org").await;
    let res = admin.post(&path("plan"), &op, json!({"plan_code": "nope", "reason": "x"})).await;
    assert!(error_body(res, 404).await["detail"].as_str().unwrap().starts_with("plan_code: "));
    let res = admin.post("/organizations/999999999/status", &op, json!({"status": "active", "reason": "x"})).await;
    assert!(error_body(res, 404).await["detail"].as_str().unwrap().contains("999999999"));
    error_body(admin.post("/organizations/acme/status", &op, json!({"status": "active", "reason": "x"})).await, 404)
        .await;
    let res = admin.client.post(format!("{}/admin/v1{}", admin.root, path("status"))).bearer_auth(&op).body("{").send();
    error_body(res.await.unwrap(), 400).await;
    let huge = json!({"status": "active", "reason": "x".repeat(70_000)});
    error_body(admin.post(&path("status"), &op, huge).await, 413).await;
    let me = p.api.get_ok("/portal/me", &tenant.key).await;
    assert_eq!(
        (me["organization"]["status"].as_str(), me["subscription"]["code"].as_str()),
        (Some("active"), Some("growth"))
    );
    assert_eq!(
        json_of(admin.get(&format!("/audit?org={}", tenant.id), &op).await, 200).await["data"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[tokio::test]
async fn a_submission_as_sent_needs_the_personal_data_scope_and_a_reason_and_the_look_is_audited() {
    let env = Env::new().await.with_scheduler();
    let (p, admin) = start(&env).await;
    let (_, op) = token(&env, "deniz", "personal-data,read").await;
    let f = Fleet::new(&p.api).await;
    let journey = f.journey(&p.api).await;
    let res = p.api.req(Method::POST, &format!("/portal/journeys/{journey}/submit"), Some(f.key())).send().await;
    let id = json_of(res.unwrap(), 202).await["submission_id"].as_i64().unwrap();
    drain(&env).await;
    let path = format!("/organizations/{}/submissions/{id}", f.org.id);

    assert_invalid(admin.get(&path, &op).await, "reason").await;
    assert_invalid(admin.get(&format!("{path}?reason="), &op).await, "reason").await;
    let shown = json_of(admin.get(&format!("{path}?reason=ticket%207"), &op).await, 200).await;
    assert_eq!(shown["submission"]["state"], "delivered");
    assert_eq!(shown["sent"]["crew"][0]["identity_number"].as_str().unwrap().len(), 11, "unmasked: {shown}");
    assert_eq!(shown["attempts"].as_array().unwrap().len(), 1);
    // Looked up within its organization.
    let other = Fleet::new(&p.api).await;
    let res = admin.get(&format!("/organizations/{}/submissions/{id}?reason=x", other.org.id), &op).await;
    error_body(res, 404).await;

    let log = json_of(admin.get(&format!("/audit?org={}", f.org.id), &op).await, 200).await;
    assert_eq!(log["data"].as_array().unwrap().len(), 1, "{log}");
    let entry = &log["data"][0];
    assert_eq!((entry["actor"].as_str(), entry["action"].as_str()), (Some("operator:deniz"), Some("view_submission")));
    assert_eq!((&entry["after"]["submission_id"], &entry["reason"]), (&json!(id), &json!("ticket 7")));
}

#[tokio::test]
async fn failed_submissions_are_queued_again_as_sent_and_delivered() {
    let env = Env::new().await.with_scheduler();
    let (p, admin) = start(&env).await;
    let (_, op) = token(&env, "deniz", "write,read").await;
    let f = Fleet::new(&p.api).await;
    let key = f.key();
    // The sandbox fails a `FLAKY2` plate's first try of every submission: with no retry window
    // it fails, retried it is delivered.
    let flaky = p.api.post_ok("/portal/vehicles", key, fixtures::vehicle("34FLAKY2"), 201).await["id"].clone();
    let mut body = fixtures::journey(flaky);
    body["personnel_ids"] = json!([f.driver_id]);
    let journey = p.api.post_ok("/portal/journeys", key, body, 201).await["id"].as_i64().unwrap();
    let fine = f.journey(&p.api).await;
    let mut failed = 0;
    for j in [journey, fine] {
        let res = p.api.req(Method::POST, &format!("/portal/journeys/{j}/submit"), Some(key)).send().await.unwrap();
        let id = json_of(res, 202).await["submission_id"].as_i64().unwrap();
        if j == journey {
            failed = id;
        }
    }
    drain(&env.with(&[("TNS_RETRY_WINDOW_SECS", "0")])).await;
    let sub = p.api.get_ok(&format!("/portal/submissions/{failed}"), key).await;
    assert_eq!(sub["state"], "failed", "{sub}");
    let path = format!("/organizations/{}/requeue", f.org.id);

    let (_, reader) = token(&env, "ayse", "read").await;
    error_body(admin.post(&path, &reader, json!({"reason": "x"})).await, 403).await;
    let requeued = json_of(admin.post(&path, &op, json!({"reason": "the downstream is back"})).await, 200).await;
    let ids = requeued["submission_ids"].as_array().unwrap().clone();
    assert_eq!(ids.len(), 1, "only the failed one, not the delivered one: {requeued}");
    assert_eq!(requeued["requeued"][0]["failed_id"], failed);
    let new = ids[0].as_i64().unwrap();
    let queued = p.api.get_ok(&format!("/portal/submissions/{new}"), key).await;
    assert_eq!((queued["state"].as_str(), queued["operation"].as_str()), (Some("pending"), Some("journey")));
    assert_eq!(p.api.get_ok(&format!("/portal/journeys/{journey}"), key).await["status"], "submitted");
    // Its latest submission is now pending: nothing more to queue (the command line says so too).
    let again = tns_admin(&env, &["requeue", &f.org.id.to_string(), "--reason", "again", "--operator", "deniz"]).await;
    assert_eq!(again.unwrap()[0]["submission_ids"], json!([]));
    let e = tns_admin(&env, &["requeue", &f.org.id.to_string(), "--operator", "deniz"]).await.unwrap_err();
    assert!(e.contains("--reason"), "{e}");
    error_body(admin.post("/organizations/999999999/requeue", &op, json!({"reason": "x"})).await, 404).await;
    // Only an `unknown` outcome is resolved (the U-ETDS tests resolve one); the rest is refused.
    let resolve = format!("/organizations/{}/submissions/{new}/resolve", f.org.id);
    let found = json!({"resolution": "found", "downstream_reference": "123", "reason": "checked"});
    error_body(admin.post(&resolve, &reader, found.clone()).await, 403).await;
    let e = error_body(admin.post(&resolve, &op, found.clone()).await, 409).await;
    assert!(e["detail"].as_str().unwrap().contains("not unknown"), "{e}");
    let nowhere = format!("/organizations/{}/submissions/999999999/resolve", f.org.id);
    error_body(admin.post(&nowhere, &op, found).await, 404).await;
    assert_invalid(
        admin.post(&resolve, &op, json!({"resolution": "found", "reason": "x"})).await,
        "downstream_reference",
    )
    .await;
    let both = json!({"resolution": "absent", "downstream_reference": "1", "reason": "x"});
    assert_invalid(admin.post(&resolve, &op, both).await, "downstream_reference").await;
    assert_invalid(admin.post(&resolve, &op, json!({"resolution": "maybe", "reason": "x"})).await, "resolution").await;

    drain(&env).await;
    let sub = p.api.get_ok(&format!("/portal/submissions/{new}"), key).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    assert_eq!(sub["snapshot"]["plate"], "34FLAKY2", "what was sent, sent again");
    assert_eq!(p.api.get_ok(&format!("/portal/journeys/{journey}"), key).await["status"], "delivered");

    let log = json_of(admin.get(&format!("/audit?org={}", f.org.id), &op).await, 200).await;
    assert_eq!(log["data"].as_array().unwrap().len(), 1, "an empty re-queue logs nothing: {log}");
    let entry = &log["data"][0];
    assert_eq!((entry["action"].as_str(), entry["reason"].as_str()), (Some("requeue"), Some("the downstream is back")));
    assert_eq!(
        (&entry["before"]["failed_submission_ids"], &entry["after"]["submission_ids"]),
        (&json!([failed]), &json!([new]))
    );
}

#[tokio::test]
async fn operators_list_an_organizations_invoices_and_record_one_paid_or_void() {
    let env = Env::new().await;
    let (p, admin) = start(&env).await;
    let (_, reader) = token(&env, "ayse", "read").await;
    let (_, writer) = token(&env, "deniz", "write").await;
    let org = p.register().await;
    let db = env.pool().await;
    let terms = tns_store::billing::invoices::Terms {
        tax_rate: tns_core::domain::billing::TaxRate::percent(20.into()).unwrap(),
        due_days: 14,
    };
    // Two months, invoiced one at a time: two invoices.
    let mut ids = vec![];
    for (from, to) in [("2026-09-01", "2026-10-01"), ("2026-10-01", "2026-11-01")] {
        sqlx::query(
            "INSERT INTO plan_terms (org_id, plan_code, starts_on, ends_on, billed_until)
             VALUES ($1, 'starter', $2::date, $3::date, $2::date)",
        )
        .bind(org.id)
        .bind(from)
        .bind(to)
        .execute(&db)
        .await
        .unwrap();
        ids.extend(tns_store::billing::invoices::issue_due(&db, "2026-11-25".parse().unwrap(), terms).await.unwrap());
    }

    let listed = json_of(admin.get(&format!("/organizations/{}/invoices", org.id), &reader).await, 200).await;
    let data = listed["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!((data[0]["total_amount"].as_f64(), data[0]["status"].as_str()), (Some(118.8), Some("open")));
    error_body(admin.get(&format!("/organizations/{}/invoices?limit=0", org.id), &reader).await, 422).await;
    error_body(admin.get("/organizations/999999999/invoices", &reader).await, 404).await;

    // Reading is not writing.
    error_body(admin.post(&format!("/invoices/{}/paid", ids[0]), &reader, json!({"reason": "x"})).await, 403).await;
    assert_invalid(admin.post(&format!("/invoices/{}/paid", ids[0]), &writer, json!({})).await, "reason").await;
    let paid =
        json_of(admin.post(&format!("/invoices/{}/paid", ids[0]), &writer, json!({"reason": "EFT 991"})).await, 200)
            .await;
    assert_eq!((paid["status"].as_str(), paid["organization"].as_i64()), (Some("paid"), Some(org.id)));
    let voided =
        json_of(admin.post(&format!("/invoices/{}/void", ids[1]), &writer, json!({"reason": "dup"})).await, 200).await;
    assert_eq!(voided["status"], "void");
    // Settled once; an unknown invoice is a 404.
    let again =
        error_body(admin.post(&format!("/invoices/{}/void", ids[0]), &writer, json!({"reason": "x"})).await, 409).await;
    assert!(again["detail"].as_str().unwrap().contains("is paid"), "{again}");
    error_body(admin.post("/invoices/999999/paid", &writer, json!({"reason": "x"})).await, 404).await;
    // The tenant sees it, and the audit log names the operator.
    let mine = p.get_ok("/portal/billing/invoices", &org.key).await;
    let statuses: Vec<&str> = mine["data"].as_array().unwrap().iter().map(|i| i["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["void", "paid"]);
    let log = json_of(admin.get(&format!("/audit?org={}", org.id), &reader).await, 200).await;
    let first = &log["data"][0];
    assert_eq!((first["actor"].as_str(), first["action"].as_str()), (Some("operator:deniz"), Some("settle_invoice")));
}

/// The audit log says which token made a change (two operators may share a name), records
/// every change of status whatever caused it, and cannot be changed in the database.
#[tokio::test]
async fn the_audit_log_names_the_token_records_every_status_change_and_is_append_only() {
    let env = Env::new().await;
    let (p, admin) = start(&env).await;
    let (first_id, first) = token(&env, "ayse", "read,write").await;
    let (second_id, second) = token(&env, "ayse", "read,write").await;
    let org = p.register().await;
    let path = format!("/organizations/{}/status", org.id);
    json_of(admin.post(&path, &first, json!({"status": "suspended", "reason": "fraud check"})).await, 200).await;
    json_of(admin.post(&path, &second, json!({"status": "trial", "reason": "cleared"})).await, 200).await;
    // A plan set by an operator ends the trial: both the plan and the status are on the record.
    let plan = format!("/organizations/{}/plan", org.id);
    json_of(admin.post(&plan, &first, json!({"plan_code": "growth", "reason": "deal"})).await, 200).await;

    let log = json_of(admin.get(&format!("/audit?org={}", org.id), &first).await, 200).await;
    let rows: Vec<(&str, &str, Option<i64>)> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["action"].as_str().unwrap(), e["actor"].as_str().unwrap(), e["operator_token_id"].as_i64()))
        .collect();
    assert_eq!(
        rows,
        [
            ("set_status", "operator:ayse", Some(first_id)),
            ("change_plan", "operator:ayse", Some(first_id)),
            ("set_status", "operator:ayse", Some(second_id)),
            ("set_status", "operator:ayse", Some(first_id)),
        ]
    );
    assert_eq!(log["data"][0]["after"]["status"], "active");

    // Append-only in the database itself, for the role the application uses.
    let db = env.pool().await;
    for refused in [
        "UPDATE audit_log SET reason = 'nothing happened'",
        "DELETE FROM audit_log",
        "TRUNCATE audit_log",
        "UPDATE audit_log SET actor = 'jobs', org_id = NULL",
        // Detaching entries from an organization that exists is refused too.
        "UPDATE audit_log SET org_id = NULL",
    ] {
        let e = sqlx::query(refused).execute(&db).await.unwrap_err();
        assert!(e.to_string().contains("append-only"), "{refused}: {e}");
    }
    // The entries outlive their organization (the schema's own ON DELETE SET NULL passes).
    sqlx::query("DELETE FROM organizations WHERE id = $1").bind(org.id).execute(&db).await.unwrap();
    let kept: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE org_id IS NULL AND action <> 'create_operator_token'")
            .fetch_one(&db)
            .await
            .unwrap();
    assert_eq!(kept, 4);
}

#[tokio::test]
async fn a_client_past_its_refused_tokens_is_answered_429_without_a_lookup_and_others_go_on() {
    let env = Env::new().await.with(&[("TNS_AUTH_RATE_LIMIT", "3")]);
    let (p, admin) = start(&env).await;
    let (_, used) = token(&env, "ayse", "read").await;
    let (_, unused) = token(&env, "deniz", "read").await;
    // Another client: the same listener, reached from another loopback address.
    let guesser = Admin {
        root: admin.root.clone(),
        client: reqwest::Client::builder().local_address(std::net::IpAddr::from([127, 0, 0, 2])).build().unwrap(),
    };
    let lookups = || async {
        let m = p.api.metrics().await;
        m.lines().find_map(|l| l.strip_prefix("tns_admin_token_lookups_total ")?.parse::<i64>().ok()).unwrap()
    };
    assert_eq!(admin.get("/organizations", &used).await.status(), 200);
    let before = lookups().await;

    for n in 0..3 {
        let res = guesser.get("/organizations", &format!("tnsop_guess{n}")).await;
        assert!(error_body(res, 401).await["detail"].as_str().unwrap().contains("invalid operator token"));
    }
    assert_eq!(lookups().await, before + 3, "each refused token so far was looked up");
    for n in 3..6 {
        let res = guesser.get("/organizations", &format!("tnsop_guess{n}")).await;
        let retry_after: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&retry_after), "{retry_after}");
        let refused = error_body(res, 429).await;
        assert!(refused["detail"].as_str().unwrap().contains("refused operator tokens from this address"), "{refused}");
    }
    // Not even a real token is looked up for that client, unless it was answered here lately
    // (colleagues behind one port-forward are one client).
    assert_eq!(error_body(guesser.get("/organizations", &unused).await, 429).await["error"], "Too Many Requests");
    assert_eq!(lookups().await, before + 3, "nothing looked up beyond the budget");
    assert_eq!(guesser.get("/organizations", &used).await.status(), 200);

    // Another client has its own budget: its valid tokens work, its bad guesses are looked up.
    assert_eq!(admin.get("/organizations", &unused).await.status(), 200);
    error_body(admin.get("/organizations", "tnsop_mine").await, 401).await;
    assert_eq!(lookups().await, before + 6);
}
