//! Vehicles and personnel: create, list, get, partial update, delete and retirement.

use reqwest::Method;
use serde_json::json;

use crate::{
    fixtures::{cargo, journey, person, vehicle, Fleet},
    helpers::{assert_invalid, assert_missing, error_body, json_of, tckn, TestApp},
};

#[tokio::test]
async fn vehicle_lifecycle() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let k = &org.key;

    let v = app.post_ok("/portal/vehicles", k, vehicle(" 34 abc 123 "), 201).await;
    assert_eq!(v["plate"], "34ABC123", "upper-cased, spaces removed");
    assert_eq!(v["status"], "active");
    assert_eq!(v["capacity"], 46);
    let id = v["id"].as_i64().unwrap();
    // The downstream's own test plate is not civil-shaped but must be accepted.
    app.post_ok("/portal/vehicles", k, vehicle("06TARIFESIZ123"), 201).await;
    error_body(app.post("/portal/vehicles", Some(k), vehicle("34ABC123")).await, 409).await;

    let got = app.get_ok(&format!("/portal/vehicles/{id}"), k).await;
    assert_eq!(got, v);

    // Any subset of fields; null clears an optional one; the whole record comes back.
    let res = app.put(&format!("/portal/vehicles/{id}"), k, json!({"capacity": 50, "brand": null})).await;
    let upd = json_of(res, 200).await;
    assert_eq!(upd["capacity"], 50);
    assert!(upd["brand"].is_null());
    assert_eq!(upd["plate"], "34ABC123");
    assert_eq!(upd["model"], "Travego");
    assert_invalid(app.put(&format!("/portal/vehicles/{id}"), k, json!({"vehicle_type": "ufo"})).await, "vehicle_type")
        .await;
    assert_invalid(app.put(&format!("/portal/vehicles/{id}"), k, json!({"plate": null})).await, "plate").await;
    assert_invalid(app.put(&format!("/portal/vehicles/{id}"), k, json!({"colour": "red"})).await, "colour").await;

    let list = app.get_ok("/portal/vehicles", k).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 2);
    assert_eq!(list["data"][0]["plate"], "06TARIFESIZ123", "newest first");
    assert_eq!(list["has_more"], false);

    // Nothing refers to it: deleted outright.
    json_of(app.delete(&format!("/portal/vehicles/{id}"), k).await, 200).await;
    error_body(app.get(&format!("/portal/vehicles/{id}"), k).await, 404).await;
    error_body(app.delete(&format!("/portal/vehicles/{id}"), k).await, 404).await;
    let left: i64 =
        sqlx::query_scalar("SELECT count(*) FROM vehicles WHERE id = $1").bind(id).fetch_one(&app.db).await.unwrap();
    assert_eq!(left, 0);
    // The plate is free again.
    app.post_ok("/portal/vehicles", k, vehicle("34ABC123"), 201).await;
}

#[tokio::test]
async fn referenced_vehicles_and_people_are_retired_not_removed() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let journey_id = fleet.journey(&app).await;
    let helper = app.post_ok("/portal/personnel", k, person(99, "driver"), 201).await;
    let mut c = cargo(fleet.vehicle_id);
    c["driver_id"] = helper["id"].clone();
    app.post_ok("/portal/cargo", k, c, 201).await;

    for (path, id) in [
        ("/portal/vehicles", fleet.vehicle_id),
        ("/portal/personnel", fleet.driver_id),
        ("/portal/personnel", helper["id"].as_i64().unwrap()),
    ] {
        json_of(app.delete(&format!("{path}/{id}"), k).await, 200).await;
        let kept = app.get_ok(&format!("{path}/{id}"), k).await;
        assert_eq!(kept["status"], "inactive", "{path}/{id} kept for history");
        let list = app.get_ok(path, k).await;
        assert!(list["data"].as_array().unwrap().iter().all(|r| r["id"] != id), "{path}: retired rows leave the list");
        error_body(app.put(&format!("{path}/{id}"), k, json!({})).await, 404).await;
        error_body(app.delete(&format!("{path}/{id}"), k).await, 404).await;
    }
    // The journey still shows its vehicle and crew.
    let j = app.get_ok(&format!("/portal/journeys/{journey_id}"), k).await;
    assert_eq!(j["vehicle_record_id"], fleet.vehicle_id);
    assert_eq!(j["personnel_ids"], json!([fleet.driver_id]));
    // A retired vehicle cannot carry new work, and its plate can be registered again.
    assert_missing(app.post("/portal/journeys", Some(k), journey(json!(fleet.vehicle_id))).await, "vehicle_id").await;
    app.post_ok("/portal/vehicles", k, vehicle(&fleet.plate), 201).await;
}

#[tokio::test]
async fn personnel_lifecycle_and_identity_rules() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let k = &org.key;

    let p = app.post_ok("/portal/personnel", k, person(5, "host"), 201).await;
    assert_eq!(p["identity_number"], tckn(5));
    assert_eq!(p["role_type"], "host");
    assert_eq!(p["status"], "active");
    let id = p["id"].as_i64().unwrap();
    error_body(app.post("/portal/personnel", Some(k), person(5, "driver")).await, 409).await;

    // A foreign national carries a passport number; a Turkish one needs a valid T.C. number.
    let mut foreign = person(6, "guide");
    foreign["nationality"] = json!("de");
    foreign["identity_number"] = json!("c01x00t47");
    let f = app.post_ok("/portal/personnel", k, foreign, 201).await;
    assert_eq!(f["identity_number"], "C01X00T47");
    assert_eq!(f["nationality"], "DE");
    let fid = f["id"].as_i64().unwrap();
    // Switching that person to TR would leave a Turkish national with a passport number: each
    // field is fine, the merged record is not, so the record's state refuses it (409).
    let b = error_body(app.put(&format!("/portal/personnel/{fid}"), k, json!({"nationality": "TR"})).await, 409).await;
    assert!(b["detail"].as_str().unwrap().starts_with("identity_number: "), "{b}");
    // Both at once are a valid change.
    let both = json!({"nationality": "TR", "identity_number": tckn(6006)});
    assert_eq!(json_of(app.put(&format!("/portal/personnel/{fid}"), k, both).await, 200).await["nationality"], "TR");

    let upd = json_of(
        app.put(&format!("/portal/personnel/{id}"), k, json!({"role_type": "driver", "phone": "05320000000"})).await,
        200,
    )
    .await;
    assert_eq!(upd["role_type"], "driver");
    assert_eq!(upd["first_name"], "Mehmet");
    assert_invalid(app.put(&format!("/portal/personnel/{id}"), k, json!({"role_type": "pilot"})).await, "role_type")
        .await;

    let list = app.get_ok("/portal/personnel", k).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 2);
    json_of(app.call(Method::DELETE, &format!("/portal/personnel/{id}"), k, None).await, 200).await;
    error_body(app.get(&format!("/portal/personnel/{id}"), k).await, 404).await;
}
