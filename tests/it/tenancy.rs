//! The cross-tenant matrix: every resource × every verb from another organization answers
//! 404 and leaves the record untouched.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{
    fixtures::{cargo, passenger, Fleet},
    helpers::{error_body, TestApp},
};

#[tokio::test]
async fn another_organizations_records_are_invisible_and_untouched() {
    let app = TestApp::spawn().await;
    let owner = Fleet::new(&app).await;
    let intruder = Fleet::new(&app).await;
    let k = owner.key();
    let j = owner.journey(&app).await;
    let p =
        app.post_ok(&format!("/portal/journeys/{j}/passengers"), k, passenger(1), 201).await["id"].as_i64().unwrap();
    let c = app.post_ok("/portal/cargo", k, cargo(owner.vehicle_id), 201).await["id"].as_i64().unwrap();
    // A pending submission of the owner's journey (no scheduler runs here, so it stays pending).
    let sub = app.post_ok(&format!("/portal/journeys/{j}/submit"), k, json!({}), 202).await["submission_id"]
        .as_i64()
        .unwrap();

    // A webhook subscription with a (pending) delivery record.
    let hook = app
        .post_ok(
            "/portal/webhooks",
            k,
            json!({"event_type": "journey.created", "endpoint_url": "http://127.0.0.1:9/"}),
            201,
        )
        .await["id"]
        .as_i64()
        .unwrap();
    app.post_ok("/portal/webhooks/test-event", k, json!({}), 200).await;
    let delivery = app.get_ok("/portal/webhooks/events", k).await["data"][0]["id"].as_i64().unwrap();

    let records = [
        format!("/portal/webhooks/{hook}"),
        format!("/portal/vehicles/{}", owner.vehicle_id),
        format!("/portal/personnel/{}", owner.driver_id),
        format!("/portal/journeys/{j}"),
        format!("/portal/cargo/{c}"),
        format!("/portal/journeys/{j}/passengers/{p}"),
    ];
    let before: Vec<Value> = futures::future::join_all(records[..5].iter().map(|r| app.get_ok(r, k))).await;
    let passengers_before = app.get_ok(&format!("/portal/journeys/{j}/passengers"), k).await;

    let x = intruder.key();
    let mut calls: Vec<(Method, String, Option<Value>)> = vec![];
    for r in &records {
        if !r.contains("/passengers/") {
            calls.push((Method::GET, r.clone(), None));
        }
        calls.push((Method::PUT, r.clone(), Some(json!({}))));
        calls.push((Method::DELETE, r.clone(), None));
    }
    calls.push((Method::GET, format!("/portal/journeys/{j}/passengers"), None));
    calls.push((Method::GET, format!("/portal/webhooks/events/{delivery}"), None));
    calls.push((Method::POST, "/portal/webhooks/test-event".into(), Some(json!({"subscription_id": hook}))));
    calls.push((Method::POST, format!("/portal/journeys/{j}/submit"), None));
    calls.push((Method::POST, format!("/portal/cargo/{c}/submit"), None));
    calls.push((Method::POST, format!("/portal/journeys/{j}/passengers"), Some(passenger(2))));
    calls.push((
        Method::POST,
        format!("/portal/journeys/{j}/passengers:bulk-upsert"),
        Some(json!({"passengers": [passenger(3)]})),
    ));
    for (method, path, body) in calls {
        let res = app.call(method.clone(), &path, x, body).await;
        assert_eq!(res.status(), 404, "{method} {path} from another organization");
        error_body(res, 404).await;
    }

    // The intruder cannot point its own records at the owner's either.
    let mut body = cargo(owner.vehicle_id);
    body["driver_id"] = json!(owner.driver_id);
    assert_eq!(app.post("/portal/cargo", Some(x), body).await.status(), 404);
    let mut jb = crate::fixtures::journey(json!(owner.vehicle_id));
    jb["personnel_ids"] = json!([owner.driver_id]);
    assert_eq!(app.post("/portal/journeys", Some(x), jb).await.status(), 404);

    // Lists show only one's own.
    for list in ["/portal/vehicles", "/portal/personnel", "/portal/journeys", "/portal/cargo"] {
        let mine = app.get_ok(list, x).await;
        let ids: Vec<&Value> = mine["data"].as_array().unwrap().iter().map(|r| &r["id"]).collect();
        assert!(!before.iter().any(|b| ids.contains(&&b["id"])), "{list} leaks another tenant's rows");
    }

    // The owner's webhooks and deliveries too; the intruder's test event reaches none of them.
    assert_eq!(app.get_ok("/portal/webhooks", x).await["data"], json!([]));
    assert_eq!(app.get_ok("/portal/webhooks/events", x).await["data"], json!([]));
    assert_eq!(app.post_ok("/portal/webhooks/test-event", x, json!({}), 200).await["deliveries"], 0);

    // The owner's submission is invisible too.
    error_body(app.get(&format!("/portal/submissions/{sub}"), x).await, 404).await;
    assert_eq!(app.get_ok("/portal/submissions", x).await["data"], json!([]));

    let after: Vec<Value> = futures::future::join_all(records[..5].iter().map(|r| app.get_ok(r, k))).await;
    assert_eq!(before, after, "records untouched");
    assert_eq!(passengers_before, app.get_ok(&format!("/portal/journeys/{j}/passengers"), k).await);
}
