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

    let b = error_body(
        app.post("/portal/billing/subscription/change", Some(&org.key), json!({"plan_code": "Y-1"})).await,
        422,
    )
    .await;
    assert_eq!(b["field"], "plan_code");
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
