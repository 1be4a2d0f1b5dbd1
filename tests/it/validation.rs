//! The validation table: what U-ETDS would reject is refused up front with a 422 naming the
//! field, and nothing is stored.

use serde_json::{json, Value};

use crate::{
    fixtures::{cargo, journey, passenger, person, vehicle, Fleet},
    helpers::{assert_invalid, json_of, TestApp},
};

/// Apply `change` (a JSON merge of top-level or nested fields) to `base`.
fn with(mut base: Value, change: Value) -> Value {
    fn merge(a: &mut Value, b: &Value) {
        match (a, b) {
            (Value::Object(a), Value::Object(b)) => {
                for (k, v) in b {
                    merge(a.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
            (a, b) => *a = b.clone(),
        }
    }
    merge(&mut base, &change);
    base
}

#[tokio::test]
async fn invalid_input_is_refused_naming_the_field() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let j = fleet.journey(&app).await;
    let passengers = format!("/portal/journeys/{j}/passengers");
    let v = json!(fleet.vehicle_id);

    let cases: Vec<(&str, Value, &str)> = vec![
        // Identity numbers: T.C. checksum for Turkish nationals (absent nationality = TR).
        (&passengers, with(passenger(1), json!({"identity_number": "17291716050"})), "identity_number"),
        (&passengers, with(passenger(1), json!({"identity_number": "11111111111"})), "identity_number"),
        (&passengers, with(passenger(1), json!({"identity_number": "01729171606"})), "identity_number"),
        (&passengers, with(passenger(1), json!({"identity_number": "1729171606"})), "identity_number"),
        (&passengers, with(passenger(1), json!({"nationality": "TR", "identity_number": "U12345"})), "identity_number"),
        (
            &passengers,
            with(passenger(1), json!({"nationality": "DE", "identity_number": "X".repeat(31)})),
            "identity_number",
        ),
        (&passengers, with(passenger(1), json!({"nationality": "GER"})), "nationality"),
        (&passengers, with(passenger(1), json!({"gender": "M"})), "gender"),
        (&passengers, with(passenger(1), json!({"boarding_place_code": 123456})), "boarding_place_code"),
        (&passengers, with(passenger(1), json!({"destination_place_code": "abc"})), "destination_place_code"),
        (&passengers, with(passenger(1), json!({"ticket_issue_date": "20.11.2026"})), "ticket_issue_date"),
        (&passengers, with(passenger(1), json!({"amount": -1})), "amount"),
        (&passengers, with(passenger(1), json!({"first_name": "A".repeat(51)})), "first_name"),
        (&passengers, with(passenger(1), json!({"last_name": "  "})), "last_name"),
        (&passengers, with(passenger(1), json!({"seat_no": "12345678901"})), "seat_no"),
        (&passengers, json!({"first_name": "A"}), "last_name"),
        // Journeys: dates, times, places, order, context, crew.
        ("/portal/journeys", with(journey(v.clone()), json!({"departure": {"date": "2026-02-30"}})), "departure.date"),
        ("/portal/journeys", with(journey(v.clone()), json!({"departure": {"time": "8:30"}})), "departure.time"),
        ("/portal/journeys", with(journey(v.clone()), json!({"arrival": {"time": "25:00"}})), "arrival.time"),
        (
            "/portal/journeys",
            with(journey(v.clone()), json!({"departure": {"district_id": "99999"}})),
            "departure.district_id",
        ),
        ("/portal/journeys", with(journey(v.clone()), json!({"arrival": {"date": "2026-11-30"}})), "arrival"),
        ("/portal/journeys", with(journey(v.clone()), json!({"vehicle_id": "X".repeat(21)})), "vehicle_id"),
        (
            "/portal/journeys",
            with(journey(v.clone()), json!({"personnel_ids": [fleet.driver_id, fleet.driver_id]})),
            "personnel_ids",
        ),
        // Scheduled by default: the context is required; a tarifesiz trip must not carry one.
        ("/portal/journeys", with(journey(v.clone()), json!({"tarifeli_context": null})), "tarifeli_context"),
        ("/portal/journeys", with(journey(v.clone()), json!({"trip_kind": "tarifesiz"})), "tarifeli_context"),
        ("/portal/journeys", with(journey(v.clone()), json!({"trip_kind": "charter"})), "trip_kind"),
        (
            "/portal/journeys",
            with(
                journey(v.clone()),
                json!({"tarifeli_context": {"firma_id": 1, "unet_guzergah_kodu": 1, "kalkis_yer_id": 1421,
                                                                  "varis_yer_id": 5, "seyahat_suresi_saat": 3}}),
            ),
            "tarifeli_context.varis_yer_id",
        ),
        (
            "/portal/journeys",
            {
                let mut partial = journey(v.clone());
                partial["tarifeli_context"] = json!({"firma_id": 1});
                partial
            },
            "tarifeli_context.unet_guzergah_kodu",
        ),
        ("/portal/journeys", json!({"vehicle_id": v.clone()}), "departure"),
        // Vehicles and personnel.
        ("/portal/vehicles", with(vehicle("34AB1"), json!({"vehicle_type": "bus"})), "vehicle_type"),
        ("/portal/vehicles", with(vehicle("34AB1"), json!({"plate": "34 AB-1"})), "plate"),
        ("/portal/vehicles", with(vehicle("34AB1"), json!({"model_year": 1800})), "model_year"),
        ("/portal/vehicles", with(vehicle("34AB1"), json!({"phone": "call me"})), "phone"),
        ("/portal/personnel", with(person(1, "driver"), json!({"identity_number": "23695921031"})), "identity_number"),
        ("/portal/personnel", with(person(1, "driver"), json!({"role_type": "captain"})), "role_type"),
        ("/portal/personnel", with(person(1, "driver"), json!({"gender": "e2"})), "gender"),
        // Cargo: tax numbers (VKN or T.C. with checksums), codes, amounts, places, order.
        (
            "/portal/cargo",
            with(cargo(fleet.vehicle_id), json!({"sender_tax_number": "4540536921"})),
            "sender_tax_number",
        ),
        (
            "/portal/cargo",
            with(cargo(fleet.vehicle_id), json!({"receiver_tax_number": "17291716050"})),
            "receiver_tax_number",
        ),
        (
            "/portal/cargo",
            with(cargo(fleet.vehicle_id), json!({"receiver_tax_number": "123456789"})),
            "receiver_tax_number",
        ),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"transport_type": 5})), "transport_type"),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"transport_mode": 0})), "transport_mode"),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"cargo_type": 0})), "cargo_type"),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"cargo_amount": -0.5})), "cargo_amount"),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"cargo_unit": "GRAM"})), "cargo_unit"),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"loading_city_id": 82})), "loading_city_id"),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"loading_district_id": 99999})), "loading_district_id"),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"loading_time": "7am"})), "loading_time"),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"unloading_date": "2026-11-30"})), "unloading_date"),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"sender_name": ""})), "sender_name"),
        ("/portal/cargo", with(cargo(fleet.vehicle_id), json!({"weight": 3})), "weight"),
    ];
    for (path, body, field) in cases {
        let res = app.post(path, Some(k), body.clone()).await;
        assert_eq!(res.status(), 422, "{path} {body}");
        assert_invalid(res, field).await;
    }
    // A record the body names that the organization does not have: 404 naming the field.
    let res =
        app.post("/portal/journeys", Some(k), with(journey(v.clone()), json!({"personnel_ids": [424242424]}))).await;
    crate::helpers::assert_missing(res, "personnel_ids[0]").await;
    for (table, expected) in [("passengers", 0), ("journeys", 1), ("vehicles", 1), ("personnel", 1), ("cargo", 0)] {
        let n: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {table}")).fetch_one(&app.db).await.unwrap();
        assert_eq!(n, expected, "nothing stored in {table} by refused calls");
    }

    // And the valid forms the table's neighbours pass.
    for (body, _) in [
        (with(passenger(1), json!({"nationality": "SY", "identity_number": "N0123456"})), ()),
        (with(passenger(2), json!({"identity_number": "10000000146"})), ()),
        (with(passenger(3), json!({"boarding_place_code": "99157", "amount": 0})), ()),
    ] {
        json_of(app.post(&passengers, Some(k), body).await, 201).await;
    }
    // A non-scheduled trip has no context; a scheduled one in its documented shape has one.
    let mut tarifesiz = journey(v.clone());
    tarifesiz["trip_kind"] = json!("tarifesiz");
    tarifesiz["tarifeli_context"] = Value::Null;
    assert_eq!(json_of(app.post("/portal/journeys", Some(k), tarifesiz).await, 201).await["trip_kind"], "tarifesiz");
    assert_eq!(
        json_of(app.post("/portal/journeys", Some(k), journey(v.clone())).await, 201).await["trip_kind"],
        "tarifeli"
    );
    let mut c = cargo(fleet.vehicle_id);
    c["sender_tax_number"] = json!("1234567890");
    c["receiver_tax_number"] = json!("10000000146");
    json_of(app.post("/portal/cargo", Some(k), c).await, 201).await;
}

#[tokio::test]
async fn non_json_and_wrong_types() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let res = app
        .req(reqwest::Method::POST, "/portal/vehicles", Some(&org.key))
        .header("content-type", "application/json")
        .body("{plate")
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(res, 400).await["error"], "Bad Request");
    assert_invalid(
        app.post("/portal/vehicles", Some(&org.key), json!({"plate": 34, "vehicle_type": "van"})).await,
        "plate",
    )
    .await;
    assert_invalid(app.post("/portal/vehicles", Some(&org.key), json!([1])).await, "body").await;
}
