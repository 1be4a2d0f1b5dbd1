use serde_json::{json, Value};

use crate::helpers::*;

#[tokio::test]
async fn plan_list_is_public_and_matches_the_spec() {
    let app = TestApp::spawn().await;
    let res = app.get_anon("/portal/billing/plans").await;
    assert_eq!(res.status(), 200);
    assert!(res.headers().contains_key("x-ratelimit-remaining"));
    let plans: Value = res.json().await.unwrap();
    let by_code = |c: &str| plans["data"].as_array().unwrap().iter().find(|p| p["code"] == c).cloned().unwrap();
    for (code, quota, price) in [
        ("Y-10", 1000, 14000.0),
        ("Y-25", 2500, 28000.0),
        ("Y-50", 5000, 40000.0),
        ("Y-100", 10000, 56000.0),
        ("Y-999", -1, 100000.0),
    ] {
        let p = by_code(code);
        assert_eq!((p["monthly_quota"].as_i64().unwrap(), p["price_try"].as_f64().unwrap()), (quota, price), "{code}");
        assert_eq!(p["billing_period"], "yearly");
        assert_eq!(p["overage_unit_try"], Value::Null);
    }
    let starter = by_code("starter");
    assert_eq!((starter["monthly_quota"].clone(), starter["price_try"].clone()), (json!(1000), json!(99.0)));
    assert_eq!(starter["billing_period"], "monthly");
    assert!(by_code("growth")["overage_unit_try"].as_f64().unwrap() > 0.0);
}

#[tokio::test]
async fn subscription_and_plan_change() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let sub: Value = app.get("/portal/billing/subscription", &org.key).await.json().await.unwrap();
    assert_eq!(
        (sub["code"].as_str(), sub["status"].as_str(), sub["monthly_quota"].as_i64()),
        (Some("starter"), Some("active"), Some(1000))
    );
    assert_eq!(sub["price_try"], 99.0);

    // A plan code names a plan: one that does not exist is not found.
    assert_missing(
        app.post("/portal/billing/subscription/change", Some(&org.key), json!({"plan_code": "Y-1"})).await,
        "plan_code",
    )
    .await;
    error_body(app.post("/portal/billing/subscription/change", Some(&org.key), json!({})).await, 422).await;
    let (_, reader) = app.create_key(&org.key, &["account:read"]).await;
    error_body(
        app.post("/portal/billing/subscription/change", Some(&reader), json!({"plan_code": "growth"})).await,
        403,
    )
    .await;
    let (_, journeys) = app.create_key(&org.key, &["journeys:write"]).await;
    error_body(app.get("/portal/billing/subscription", &journeys).await, 403).await;
    error_body(app.get("/portal/usage", &journeys).await, 403).await;

    let res = app.post("/portal/billing/subscription/change", Some(&org.key), json!({"plan_code": "growth"})).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["ok"], true);
    let sub: Value = app.get("/portal/billing/subscription", &reader).await.json().await.unwrap();
    assert_eq!(sub["code"], "growth");
    let res = app.get("/portal/me", &org.key).await;
    assert_eq!(header_i64(&res, "x-ratelimit-limit"), 10000);
    error_body(app.get_anon("/portal/billing/subscription").await, 401).await;
}

#[tokio::test]
async fn invoices_are_listed_per_organization() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let other = app.register().await;
    // Nothing issued yet: an empty list, in the documented shape.
    assert_eq!(app.get_ok("/portal/billing/invoices", &org.key).await["data"], json!([]));
    for (owner, start, total, status) in [
        (org.id, "2026-10-01", 116.82, "paid"),
        (org.id, "2026-11-01", 99.0, "open"),
        (other.id, "2026-10-01", 1.0, "open"),
    ] {
        sqlx::query(
            "INSERT INTO invoices (org_id, period_start, period_end, subtotal, total_amount, status)
             VALUES ($1, $2::date, ($2::date + interval '1 month' - interval '1 day')::date, $3, $3, $4)",
        )
        .bind(owner)
        .bind(start)
        .bind(total)
        .bind(status)
        .execute(&app.db)
        .await
        .unwrap();
    }
    let list = app.get_ok("/portal/billing/invoices", &org.key).await;
    let data = list["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "only the organization's own");
    assert_eq!(
        (data[0]["total_amount"].as_f64(), data[0]["status"].as_str()),
        (Some(99.0), Some("open")),
        "newest first"
    );
    assert_eq!(data[1]["total_amount"], 116.82);
    assert_eq!(
        (data[1]["period_start"].as_str(), data[1]["period_end"].as_str()),
        (Some("2026-10-01"), Some("2026-10-31"))
    );
    for field in ["id", "period_start", "period_end", "total_amount", "status", "created_at"] {
        assert!(!data[1][field].is_null(), "{field}");
    }
    let one = app.get_ok("/portal/billing/invoices?limit=1", &org.key).await;
    assert_eq!(one["has_more"], true);
    let (_, journeys) = app.create_key(&org.key, &["journeys:write"]).await;
    error_body(app.get("/portal/billing/invoices", &journeys).await, 403).await;
    error_body(app.get_anon("/portal/billing/invoices").await, 401).await;
}
