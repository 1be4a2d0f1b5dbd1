//! Cargo shipments: create, list with status filter, get, update and delete while draft.

use serde_json::json;

use crate::{
    fixtures::{cargo, person, Fleet, ADANA, KADIKOY},
    helpers::{assert_invalid, assert_missing, error_body, json_of, TestApp},
};

#[tokio::test]
async fn cargo_lifecycle() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();

    let mut body = cargo(fleet.vehicle_id);
    body["driver_id"] = json!(fleet.driver_id);
    let c = app.post_ok("/portal/cargo", k, body, 201).await;
    assert_eq!(c["status"], "draft");
    assert_eq!(c["vehicle_id"], fleet.vehicle_id);
    assert_eq!(c["driver_id"], fleet.driver_id);
    assert_eq!(c["cargo_amount"], 1250.5);
    assert_eq!(c["loading_time"], "07:00");
    let id = c["id"].as_i64().unwrap();
    assert_eq!(app.get_ok(&format!("/portal/cargo/{id}"), k).await, c);

    let upd =
        json_of(app.put(&format!("/portal/cargo/{id}"), k, json!({"cargo_unit": "TON", "cargo_amount": 3})).await, 200)
            .await;
    assert_eq!(upd["cargo_unit"], "TON");
    assert_eq!(upd["cargo_amount"], 3.0);
    assert_eq!(upd["sender_name"], "Gönderen A.Ş.");
    // Units are the enum's words exactly.
    assert_invalid(app.put(&format!("/portal/cargo/{id}"), k, json!({"cargo_unit": "ton"})).await, "cargo_unit").await;
    // Fields valid on their own that break a rule across fields once merged: the shipment's state refuses it.
    let b = error_body(app.put(&format!("/portal/cargo/{id}"), k, json!({"unloading_date": "2026-11-30"})).await, 409)
        .await;
    assert!(b["detail"].as_str().unwrap().starts_with("unloading_date: "), "{b}");
    let b = error_body(app.put(&format!("/portal/cargo/{id}"), k, json!({"loading_city_id": ADANA})).await, 409).await;
    assert!(b["detail"].as_str().unwrap().starts_with("loading_district_id: "), "{b}");
    // Dropping the driver is allowed.
    let upd = json_of(app.put(&format!("/portal/cargo/{id}"), k, json!({"driver_id": null})).await, 200).await;
    assert!(upd["driver_id"].is_null());

    let second = app.post_ok("/portal/cargo", k, cargo(fleet.vehicle_id), 201).await["id"].as_i64().unwrap();
    sqlx::query("UPDATE cargo SET status = 'failed' WHERE id = $1").bind(second).execute(&app.db).await.unwrap();
    let all = app.get_ok("/portal/cargo", k).await;
    assert_eq!(all["data"][0]["id"], second, "newest first");
    let failed = app.get_ok("/portal/cargo?status=failed", k).await;
    assert_eq!(failed["data"].as_array().unwrap().len(), 1);
    assert_eq!(app.get_ok("/portal/cargo?status=draft", k).await["data"][0]["id"], id);
    // A failed shipment may be corrected and sent again, never deleted; a pending or cancelled
    // one takes no change.
    json_of(app.put(&format!("/portal/cargo/{second}"), k, json!({"cargo_amount": 5})).await, 200).await;
    error_body(app.delete(&format!("/portal/cargo/{second}"), k).await, 409).await;
    for status in ["submitted", "cancelled"] {
        sqlx::query("UPDATE cargo SET status = $2 WHERE id = $1")
            .bind(second)
            .bind(status)
            .execute(&app.db)
            .await
            .unwrap();
        let b = error_body(app.put(&format!("/portal/cargo/{second}"), k, json!({})).await, 409).await;
        assert!(
            b["detail"].as_str().unwrap().contains(if status == "submitted" { "pending" } else { "cancelled" }),
            "{b}"
        );
    }

    json_of(app.delete(&format!("/portal/cargo/{id}"), k).await, 200).await;
    error_body(app.get(&format!("/portal/cargo/{id}"), k).await, 404).await;
}

#[tokio::test]
async fn cargo_references_are_checked() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let other = Fleet::new(&app).await;

    // Another organization's records do not exist for this one.
    assert_missing(app.post("/portal/cargo", Some(k), cargo(other.vehicle_id)).await, "vehicle_id").await;
    let mut body = cargo(fleet.vehicle_id);
    body["driver_id"] = json!(other.driver_id);
    assert_missing(app.post("/portal/cargo", Some(k), body).await, "driver_id").await;
    // A driver who is not a `driver` is what U-ETDS will not like: a warning at submission, not a refusal.
    let host = app.post_ok("/portal/personnel", k, person(77, "host"), 201).await;
    let mut body = cargo(fleet.vehicle_id);
    body["driver_id"] = host["id"].clone();
    app.post_ok("/portal/cargo", k, body, 201).await;
    // Kadıköy is in İstanbul, not Adana.
    let mut body = cargo(fleet.vehicle_id);
    body["unloading_city_id"] = json!(ADANA);
    body["unloading_district_id"] = json!(KADIKOY);
    assert_invalid(app.post("/portal/cargo", Some(k), body).await, "unloading_district_id").await;
}
