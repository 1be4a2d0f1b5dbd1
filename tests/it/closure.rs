//! Closing an organization (KVKK erasure): the owner closes it; for the grace period it reads
//! and exports but changes nothing, is billed for nothing, and may be reopened; then the jobs
//! role erases everything it holds except its invoices and the audit log, once its last invoice
//! is issued, leaving every other organization as it was.

use chrono::{Days, NaiveDate};
use reqwest::Method;
use serde_json::{json, Value};
use sqlx::PgPool;
use tns_core::{domain::billing::TaxRate, env::RedisSettings, ids::InvoiceId};
use tns_jobs::periodic::Job;
use tns_store::billing::invoices::{issue_due, Terms};

use crate::{
    fixtures::{delivering, passenger, Fleet},
    helpers::*,
};

fn redis(app: &TestApp) -> RedisSettings {
    RedisSettings { url: app.env.get("TNS_REDIS_URL").into(), prefix: app.env.get("TNS_REDIS_PREFIX").into() }
}

async fn close(app: &TestApp, key: &str, confirm: &str) -> reqwest::Response {
    app.post("/portal/closure", Some(key), json!({ "confirm": confirm })).await
}

async fn today(db: &PgPool) -> NaiveDate {
    sqlx::query_scalar("SELECT (now() AT TIME ZONE 'UTC')::date").fetch_one(db).await.unwrap()
}

/// Invoice everything due up to tomorrow (a closing's credit is due once its term has ended,
/// today or tomorrow by which plan keeps the day).
async fn invoice(db: &PgPool) -> Vec<InvoiceId> {
    let terms = Terms { tax_rate: TaxRate::percent(20.into()).unwrap(), due_days: 14 };
    issue_due(db, today(db).await + Days::new(1), terms).await.unwrap()
}

async fn actions(db: &PgPool, org: i64) -> Vec<String> {
    sqlx::query_scalar("SELECT action FROM audit_log WHERE org_id = $1 ORDER BY id")
        .bind(org)
        .fetch_all(db)
        .await
        .unwrap()
}

/// Every table with an `org_id` column and how many rows `org` has in it (those with none left
/// out): what an organization holds, whatever tables later migrations add.
async fn held(db: &PgPool, org: i64) -> Vec<(String, i64)> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT c.table_name::text FROM information_schema.columns c
           JOIN information_schema.tables t USING (table_schema, table_name)
          WHERE c.table_schema = 'public' AND c.column_name = 'org_id' AND t.table_type = 'BASE TABLE'
          ORDER BY c.table_name",
    )
    .fetch_all(db)
    .await
    .unwrap();
    let mut held = vec![];
    for t in tables {
        let n: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {t} WHERE org_id = $1"))
            .bind(org)
            .fetch_one(db)
            .await
            .unwrap();
        if n > 0 {
            held.push((t, n));
        }
    }
    held
}

/// The tables in which some row, written out as text, contains `needle`.
async fn tables_containing(db: &PgPool, needle: &str) -> Vec<String> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    )
    .fetch_all(db)
    .await
    .unwrap();
    let mut found = vec![];
    for t in tables {
        let hit: bool = sqlx::query_scalar(&format!("SELECT EXISTS (SELECT 1 FROM {t} x WHERE x::text LIKE $1)"))
            .bind(format!("%{needle}%"))
            .fetch_one(db)
            .await
            .unwrap();
        if hit {
            found.push(t);
        }
    }
    found
}

#[tokio::test]
async fn a_closed_organization_reads_and_exports_but_changes_nothing_is_unbilled_and_may_reopen() {
    let app = TestApp::spawn().await;
    let f = Fleet::new(&app).await;
    let j = f.journey(&app).await;
    app.post_ok("/portal/billing/subscription/change", f.key(), json!({"plan_code": "starter"}), 200).await;
    assert_eq!(invoice(&app.db).await.len(), 1, "the month is charged in advance");

    // Only the owner: an admin's key may not, whatever its scopes.
    let admin_key = app.admin_key(&f.org, &["account:read", "account:write"]).await;
    let refused = error_body(close(&app, &admin_key, &f.org.tax_number).await, 403).await;
    assert!(refused["detail"].as_str().unwrap().contains("owner"), "{refused}");
    error_body(app.get("/portal/closure", &admin_key).await, 403).await;

    // Typed by mistake, or not at all: nothing happens.
    assert_invalid(close(&app, f.key(), "1234567890").await, "confirm").await;
    assert_invalid(app.post("/portal/closure", Some(f.key()), json!({})).await, "confirm").await;
    assert_eq!(app.get_ok("/portal/closure", f.key()).await["status"], "active");

    let closed = json_of(close(&app, f.key(), &f.org.tax_number).await, 202).await;
    assert_eq!(closed["status"], "closed", "{closed}");
    let (closed_at, erase_after) = (closed["closed_at"].as_str().unwrap(), closed["erase_after"].as_str().unwrap());
    let grace: i64 = sqlx::query_scalar("SELECT extract(day FROM $2::timestamptz - $1::timestamptz)::int8")
        .bind(closed_at)
        .bind(erase_after)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(grace, 30, "the default grace period");
    error_body(close(&app, f.key(), &f.org.tax_number).await, 409).await;

    // Restricted at once: it reads, exports and sees why; it creates, changes and submits nothing.
    let refused =
        error_body(app.post("/portal/vehicles", Some(f.key()), crate::fixtures::vehicle("34CLS01")).await, 403).await;
    assert!(refused["detail"].as_str().unwrap().contains("closed by its owner"), "{refused}");
    error_body(
        app.req(Method::POST, &format!("/portal/journeys/{j}/submit"), Some(f.key())).send().await.unwrap(),
        403,
    )
    .await;
    assert_eq!(app.get_ok(&format!("/portal/journeys/{j}"), f.key()).await["id"], j);
    json_of(app.post("/portal/exports", Some(f.key()), json!({})).await, 202).await;
    assert_eq!(app.get_ok("/portal/me", f.key()).await["organization"]["status"], "closed");

    // Billed for nothing from today: the current term ended, its unused days are credited.
    let current: i64 = sqlx::query_scalar("SELECT count(*) FROM plan_terms WHERE org_id = $1 AND ends_on IS NULL")
        .bind(f.org.id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(current, 0, "no term runs while closed");
    let credited = invoice(&app.db).await;
    assert_eq!(credited.len(), 1, "the cut is credited");
    let total: rust_decimal::Decimal =
        sqlx::query_scalar("SELECT sum(amount) FROM invoice_lines WHERE invoice_id = $1 AND kind = 'credit'")
            .bind(credited[0])
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert!(total < rust_decimal::Decimal::ZERO, "a credit line: {total}");

    // Reopened: as it was, billed again from today, and it works again.
    let reopened = json_of(app.delete("/portal/closure", f.key()).await, 200).await;
    assert_eq!((reopened["status"].as_str(), &reopened["erase_after"]), (Some("active"), &Value::Null), "{reopened}");
    error_body(app.delete("/portal/closure", f.key()).await, 409).await;
    app.post_ok("/portal/vehicles", f.key(), crate::fixtures::vehicle("34CLS02"), 201).await;
    let current: i64 = sqlx::query_scalar("SELECT count(*) FROM plan_terms WHERE org_id = $1 AND ends_on IS NULL")
        .bind(f.org.id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(current, 1, "billed again");
    let audited = actions(&app.db, f.org.id).await;
    assert!(
        audited.ends_with(&["close_organization".into(), "request_export".into(), "reopen_organization".into()]),
        "{audited:?}"
    );
    // Nobody but the owner closes, and operators do not either.
    let other = app.register().await;
    assert_eq!(app.get_ok("/portal/closure", &other.key).await["status"], "trial", "each organization its own");
    let refused =
        tns_admin(&app.env, &["set-status", &f.org.id.to_string(), "closed", "--reason", "x", "--operator", "ayse"])
            .await;
    let refused = refused.unwrap_err();
    assert!(refused.contains("owner's decision"), "{refused}");
}

#[tokio::test]
async fn a_closed_organization_is_erased_after_its_grace_period_and_its_last_invoice_keeping_invoices_and_the_log() {
    let (app, scheduler, f) = delivering().await;
    let bystander = Fleet::new(&app).await;
    let redis = redis(&app);

    // Everything an organization accumulates: a delivered journey with a passenger, a webhook,
    // a ticket, a second key, an export, an invoice.
    let traveller = passenger(f.org.id as u64 * 10 + 7);
    let identity = traveller["identity_number"].as_str().unwrap().to_string();
    let j = f.journey(&app).await;
    app.post_ok(
        &format!("/portal/journeys/{j}/passengers:bulk-upsert"),
        f.key(),
        json!({"passengers": [traveller]}),
        200,
    )
    .await;
    let sub = json_of(
        app.req(Method::POST, &format!("/portal/journeys/{j}/submit"), Some(f.key()))
            .header("Prefer", "wait=10")
            .send()
            .await
            .unwrap(),
        202,
    )
    .await;
    assert_eq!(sub["status"], "delivered", "{sub}");
    app.post_ok("/portal/webhooks", f.key(), crate::fixtures::subscription(), 201).await;
    app.post_ok("/portal/support/tickets", f.key(), json!({"subject": "s", "body": "b", "priority": "low"}), 201).await;
    app.create_key(f.key(), &["journeys:read"]).await;
    json_of(app.post("/portal/exports", Some(f.key()), json!({})).await, 202).await;
    Job::DataExports.run(&app.db, &redis).await.unwrap();
    app.post_ok("/portal/billing/subscription/change", f.key(), json!({"plan_code": "starter"}), 200).await;
    bystander.journey(&app).await;
    invoice(&app.db).await;
    let bystander_before = held(&app.db, bystander.org.id).await;

    json_of(close(&app, f.key(), &f.org.tax_number).await, 202).await;
    let erasure = Job::OrganizationErasure;
    assert_eq!(erasure.run(&app.db, &redis).await.unwrap(), 0, "not within the grace period");

    // The grace period over (its end moved, as time would), but the closing's credit is not
    // invoiced yet: it waits for it.
    sqlx::query("UPDATE organizations SET erase_after = now() - interval '1 second' WHERE id = $1")
        .bind(f.org.id)
        .execute(&app.db)
        .await
        .unwrap();
    assert_eq!(erasure.run(&app.db, &redis).await.unwrap(), 0, "waits for its last invoice");
    assert!(held(&app.db, f.org.id).await.iter().any(|(t, _)| t == "journeys"));
    assert_eq!(invoice(&app.db).await.len(), 1, "the credit");
    let invoices: Vec<i64> = sqlx::query_scalar("SELECT id FROM invoices WHERE org_id = $1")
        .bind(f.org.id)
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(invoices.len(), 2);

    assert_eq!(erasure.run(&app.db, &redis).await.unwrap(), 1);
    assert_eq!(erasure.run(&app.db, &redis).await.unwrap(), 0, "once");

    // Only what law and billing keep is left; the people are nowhere.
    let left: Vec<String> = held(&app.db, f.org.id).await.into_iter().map(|(t, _)| t).collect();
    // Closed the day its plan began, the whole month charged is credited: a balance it is owed.
    assert_eq!(left, ["audit_log", "credit_balances", "invoices"]);
    let lines: i64 = sqlx::query_scalar("SELECT count(*) FROM invoice_lines WHERE invoice_id = ANY($1)")
        .bind(&invoices)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert!(lines >= 4, "the invoices keep their lines: {lines}");
    assert_eq!(tables_containing(&app.db, &identity).await, Vec::<String>::new());
    assert_eq!(tables_containing(&app.db, &f.org.email).await, Vec::<String>::new());
    let (name, erased): (String, bool) =
        sqlx::query_as("SELECT name, erased_at IS NOT NULL FROM organizations WHERE id = $1")
            .bind(f.org.id)
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!((name.as_str(), erased), ("[erased]", true));
    let (after,): (Value,) =
        sqlx::query_as("SELECT after FROM audit_log WHERE org_id = $1 AND action = 'erase_organization'")
            .bind(f.org.id)
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(after["deleted"]["passengers"], 1, "{after}");
    assert_eq!(after["deleted"]["journeys"], 1, "{after}");

    // Its credentials are gone; its tax number and address may register again.
    // (An API process trusts a key it looked up for `TNS_AUTH_CACHE_TTL_MS` at most.)
    let gone = eventually(std::time::Duration::from_secs(10), || async {
        (app.get("/portal/me", f.key()).await.status() == 401).then_some(())
    })
    .await;
    assert!(gone.is_some(), "its API key stops working");
    let login = app.post("/auth/login", None, json!({"email": f.org.email, "password": f.org.password})).await;
    error_body(login, 401).await;
    let again = app
        .post(
            "/auth/register",
            None,
            json!({"organization_name": "Acme Yeniden", "tax_number": f.org.tax_number, "full_name": "Ayşe Yılmaz",
                   "email": f.org.email, "password": "correct horse"}),
        )
        .await;
    json_of(again, 201).await;

    // Nobody else lost anything.
    assert_eq!(held(&app.db, bystander.org.id).await, bystander_before);
    scheduler.stop().await;
}

#[tokio::test]
async fn the_owner_closes_and_reopens_from_the_portal() {
    use crate::portal::Visitor;
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let page = v.get("/settings/data").await;
    assert!(page.body.contains(r#"action="/settings/data/close""#), "{}", page.body);

    let wrong = v.submit("/settings/data", "/settings/data/close", &[("confirm", "0000000000")]).await;
    assert_eq!(wrong.status.as_u16(), 422);
    assert!(wrong.body.contains(r#"id="c-confirm-error""#), "the field names its error: {}", wrong.body);

    let closed = v.submit("/settings/data", "/settings/data/close", &[("confirm", &org.tax_number)]).await;
    assert_eq!((closed.status.as_u16(), closed.location()), (303, "/settings/data?done=closed#closure-h"));
    let page = v.get("/settings/data").await;
    assert!(page.body.contains(r#"action="/settings/data/reopen""#), "{}", page.body);
    assert_eq!(app.get_ok("/portal/closure", &org.key).await["status"], "closed");

    let reopened = v.submit("/settings/data", "/settings/data/reopen", &[]).await;
    assert_eq!(reopened.location(), "/settings/data?done=reopened#closure-h");
    assert_eq!(app.get_ok("/portal/closure", &org.key).await["status"], "trial");
}

/// What `org` is billed for now: whether a term runs.
async fn billed(db: &PgPool, org: i64) -> bool {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM plan_terms WHERE org_id = $1 AND ends_on IS NULL)")
        .bind(org)
        .fetch_one(db)
        .await
        .unwrap()
}

async fn choose_starter(app: &TestApp, org: &Org) {
    app.post_ok("/portal/billing/subscription/change", &org.key, json!({"plan_code": "starter"}), 200).await;
}

async fn standing(app: &TestApp, key: &str) -> (String, Value) {
    let me = app.get_ok("/portal/me", key).await;
    (me["organization"]["status"].as_str().unwrap().to_string(), me["organization"]["status_reason"].clone())
}

#[tokio::test]
async fn reopening_restores_the_standing_and_billing_it_had_and_what_was_settled_or_chosen_meanwhile() {
    let app = TestApp::spawn().await;

    // Suspended by an operator while billed: closing stops the billing, reopening brings both back.
    let org = app.register().await;
    choose_starter(&app, &org).await;
    tns_admin(&app.env, &["set-status", &org.id.to_string(), "suspended", "--reason", "abuse", "--operator", "ayse"])
        .await
        .unwrap();
    assert!(billed(&app.db, org.id).await, "a suspension stops the service, not the plan");
    json_of(close(&app, &org.key, &org.tax_number).await, 202).await;
    assert!(!billed(&app.db, org.id).await);
    json_of(app.delete("/portal/closure", &org.key).await, 200).await;
    assert_eq!(standing(&app, &org.key).await, ("suspended".into(), json!("abuse")));
    assert!(billed(&app.db, org.id).await, "billed again, as before it closed");

    // Suspended for an invoice settled while closed: reopened active.
    let org = app.register().await;
    choose_starter(&app, &org).await;
    sqlx::query("UPDATE organizations SET status = 'suspended', status_reason = $2 WHERE id = $1")
        .bind(org.id)
        .bind(tns_store::billing::standing::INVOICE_OVERDUE)
        .execute(&app.db)
        .await
        .unwrap();
    json_of(close(&app, &org.key, &org.tax_number).await, 202).await;
    json_of(app.delete("/portal/closure", &org.key).await, 200).await;
    assert_eq!(standing(&app, &org.key).await, ("active".into(), Value::Null), "nothing is overdue");

    // A trial that chose a plan while closed: reopened active, and billed from then.
    let org = app.register().await;
    json_of(close(&app, &org.key, &org.tax_number).await, 202).await;
    choose_starter(&app, &org).await;
    assert!(!billed(&app.db, org.id).await, "nothing billed while closed");
    json_of(app.delete("/portal/closure", &org.key).await, 200).await;
    assert_eq!(standing(&app, &org.key).await.0, "active");
    assert!(billed(&app.db, org.id).await);
}
