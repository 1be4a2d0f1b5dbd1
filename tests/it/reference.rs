//! Reference data, support tickets, and the scopes the operations endpoints require.

use serde_json::json;

use crate::{
    fixtures::{vehicle, CEYHAN, ISTANBUL, IST_AIRPORT, KADIKOY},
    helpers::{assert_invalid, error_body, TestApp},
};

#[tokio::test]
async fn cities_and_districts_from_the_downstream_list() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let cities = app.get_ok("/ref/cities", &org.key).await;
    let cities = cities["data"].as_array().unwrap();
    assert_eq!(cities.len(), 81);
    assert_eq!(cities[33], json!({"id": 34, "name": "Istanbul"}));

    let all = app.get_ok("/ref/districts", &org.key).await;
    let all = all["data"].as_array().unwrap();
    assert_eq!(all.len(), 972 + 56);
    let istanbul = app.get_ok(&format!("/ref/districts?city_id={ISTANBUL}"), &org.key).await;
    let istanbul = istanbul["data"].as_array().unwrap();
    assert!(istanbul.iter().all(|d| d["city_id"] == ISTANBUL));
    assert!(istanbul.iter().any(|d| d["id"] == KADIKOY && d["kind"] == "district"));
    assert!(istanbul.iter().any(|d| d["id"] == IST_AIRPORT && d["kind"] == "airport"));
    assert!(!istanbul.iter().any(|d| d["id"] == CEYHAN));
    // The document lists the province ids; another is refused naming the parameter.
    assert_invalid(app.get("/ref/districts?city_id=99", &org.key).await, "city_id").await;
    assert_invalid(app.get("/ref/districts?city_id=x", &org.key).await, "city_id").await;
    error_body(app.get_anon("/ref/cities").await, 401).await;
}

#[tokio::test]
async fn support_tickets() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let t = app
        .post_ok(
            "/portal/support/tickets",
            &org.key,
            json!({"subject": "U-ETDS hatası", "body": "Sefer gitmedi", "priority": "high"}),
            201,
        )
        .await;
    assert_eq!(t["status"], "open");
    assert_eq!(t["priority"], "high");
    assert_eq!(t["body"], "Sefer gitmedi");
    let list = app.get_ok("/portal/support/tickets", &org.key).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    assert_eq!(list["data"][0]["id"], t["id"]);
    assert_eq!(list["data"][0]["subject"], "U-ETDS hatası");
    assert_invalid(
        app.post("/portal/support/tickets", Some(&org.key), json!({"subject": "x", "body": "y", "priority": "asap"}))
            .await,
        "priority",
    )
    .await;
    assert_invalid(
        app.post("/portal/support/tickets", Some(&org.key), json!({"subject": "", "body": "y", "priority": "low"}))
            .await,
        "subject",
    )
    .await;
    let other = app.register().await;
    assert_eq!(app.get_ok("/portal/support/tickets", &other.key).await["data"], json!([]));
}

#[tokio::test]
async fn operations_scopes() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let (_, reader) = app.create_key(&org.key, &["journeys:read"]).await;
    let (_, billing) = app.create_key(&org.key, &["account:read"]).await;
    app.get_ok("/portal/vehicles", &reader).await;
    app.get_ok("/ref/cities", &reader).await;
    error_body(app.post("/portal/vehicles", Some(&reader), vehicle("34AA11")).await, 403).await;
    error_body(app.get("/portal/journeys", &billing).await, 403).await;
    app.get_ok("/portal/support/tickets", &billing).await;
    error_body(
        app.post("/portal/support/tickets", Some(&reader), json!({"subject": "a", "body": "b", "priority": "low"}))
            .await,
        403,
    )
    .await;
}
