//! The validation table: what U-ETDS would reject is refused up front with a 422 naming the
//! field, and nothing is stored.

use serde_json::{json, Value};

use crate::{
    fixtures::{cargo, journey, passenger, person, subscription, vehicle, Fleet},
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

/// Text XML cannot carry (U+FFFE, U+FFFF) never reaches U-ETDS's SOAP calls: every way a value
/// can be written — create, bulk upsert, merge patch — refuses it with a 422 naming the field,
/// and nothing is stored.
#[tokio::test]
async fn characters_xml_cannot_carry_are_refused_naming_the_field() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let j = fleet.journey(&app).await;
    let passengers = format!("/portal/journeys/{j}/passengers");
    let stored = json_of(app.post(&passengers, Some(k), passenger(1)).await, 201).await;
    let one = format!("{passengers}/{}", stored["id"]);

    for bad in ["Ali\u{FFFE}", "\u{FFFF}Ali"] {
        let name = json!({"first_name": bad});
        assert_invalid(app.post(&passengers, Some(k), with(passenger(2), name.clone())).await, "first_name").await;
        let bulk = json!({"passengers": [passenger(3), with(passenger(4), name.clone())]});
        assert_invalid(app.post(&format!("{passengers}:bulk-upsert"), Some(k), bulk).await, "passengers[1].first_name")
            .await;
        assert_invalid(app.put(&one, k, name).await, "first_name").await;
    }
    let names: Vec<String> = sqlx::query_scalar("SELECT first_name FROM passengers").fetch_all(&app.db).await.unwrap();
    assert_eq!(names, ["Ali"], "only the valid passenger is stored, unchanged");

    // The other texts a request writes that U-ETDS is sent.
    let v = fleet.vehicle_id;
    let cases: Vec<(reqwest::Method, String, Value, &str)> = vec![
        (
            reqwest::Method::POST,
            "/portal/vehicles".into(),
            with(vehicle("34XML1"), json!({"brand": "\u{FFFE}"})),
            "brand",
        ),
        (reqwest::Method::PUT, format!("/portal/vehicles/{v}"), json!({"model": "X\u{FFFF}"}), "model"),
        (
            reqwest::Method::POST,
            "/portal/personnel".into(),
            with(person(7, "driver"), json!({"last_name": "D\u{FFFE}"})),
            "last_name",
        ),
        (
            reqwest::Method::PUT,
            format!("/portal/personnel/{}", fleet.driver_id),
            json!({"address": "\u{FFFF}"}),
            "address",
        ),
        (
            reqwest::Method::POST,
            "/portal/cargo".into(),
            with(cargo(v), json!({"sender_name": "A\u{FFFE}Ş"})),
            "sender_name",
        ),
        (reqwest::Method::POST, passengers.clone(), with(passenger(5), json!({"seat_no": "1\u{FFFF}"})), "seat_no"),
        (reqwest::Method::POST, format!("/portal/journeys/{j}/cancel"), json!({"reason": "\u{FFFE}"}), "reason"),
        (
            reqwest::Method::PUT,
            "/portal/downstream".into(),
            json!({"adapter": "uetds", "environment": "test", "ws_username": "999999", "ws_password": "pw\u{FFFE}"}),
            "ws_password",
        ),
    ];
    for (method, path, body, field) in cases {
        assert_invalid(app.call(method.clone(), &path, k, Some(body.clone())).await, field).await;
    }
}

/// The database's own bounds (column types, CHECKs) hold every value the document admits: each
/// request that writes a bounded column, sent with the extreme the document states for it
/// (read from the served document), is stored.
#[tokio::test]
async fn the_extremes_the_document_admits_are_stored() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let doc: Value = app.get_anon("/openapi.json").await.json().await.unwrap();
    let schema = |name: &str| doc["components"]["schemas"][name].clone();
    let max = |name: &str| schema(name)["maximum"].as_i64().unwrap_or_else(|| panic!("{name} has a maximum"));
    // The largest number below an exclusive maximum.
    let below = |name: &str| f64::from_bits(schema(name)["exclusiveMaximum"].as_f64().unwrap().to_bits() - 1);
    let text = |name: &str| "ş".repeat(schema(name)["maxLength"].as_u64().unwrap() as usize);
    // As long as a plate may be written: 20 letters and digits, spaces between some.
    let plate = {
        let n = schema("Plate")["maxLength"].as_u64().unwrap() as usize;
        format!("{}{}", "7 ".repeat(n - 20), "Z".repeat(40 - n))
    };

    let vehicle = json!({"plate": plate, "vehicle_type": "tir", "brand": text("Text50"), "model": text("Text50"),
                         "model_year": max("ModelYear"), "capacity": max("Capacity"),
                         "phone": "+".repeat(17) + "123"});
    let person = with(
        person(9, "other"),
        json!({"first_name": text("Text50"), "last_name": text("Text50"),
                                                  "address": text("Text100"), "hes_code": text("Text50")}),
    );
    let mut journey = journey(json!(fleet.vehicle_id));
    journey["tarifeli_context"] = json!({"firma_id": max("PositiveCode"), "unet_guzergah_kodu": max("PositiveCode"),
                                         "kalkis_yer_id": crate::fixtures::KADIKOY, "varis_yer_id": crate::fixtures::CEYHAN,
                                         "seyahat_suresi_saat": max("TravelHours")});
    let j = fleet.journey(&app).await;
    let passenger = with(
        passenger(8),
        json!({"amount": below("Fare"), "seat_no": text("Text10"),
                                              "ticket_serial_no": text("Text30"), "first_name": text("Text50")}),
    );
    let cargo = with(
        cargo(fleet.vehicle_id),
        json!({"cargo_amount": below("CargoAmount"), "cargo_type": max("CargoTypeCode"),
                                                     "transport_type": max("TransportType"),
                                                     "sender_name": text("Text250"), "receiver_name": text("Text250")}),
    );
    let ticket = json!({"subject": text("Text200"), "body": text("Prose10000"), "priority": "urgent"});
    let key = json!({"name": text("Text100"), "scopes": ["journeys:read"]});
    // Each with the longest Idempotency-Key, which the key store keeps too.
    for (i, (path, body)) in [
        ("/portal/vehicles".to_string(), vehicle),
        ("/portal/personnel".to_string(), person),
        ("/portal/journeys".to_string(), journey),
        (format!("/portal/journeys/{j}/passengers"), passenger),
        ("/portal/cargo".to_string(), cargo),
        ("/portal/support/tickets".to_string(), ticket),
        ("/portal/api-keys".to_string(), key),
    ]
    .into_iter()
    .enumerate()
    {
        let idempotency_key = format!("{i}{}", "k".repeat(254));
        let res = app.req(reqwest::Method::POST, &path, Some(k)).header("idempotency-key", idempotency_key);
        json_of(res.json(&body).send().await.unwrap(), 201).await;
    }
}

/// A record is a JSON object, as the document says, at the top of a body and inside it: an array
/// of its fields in order (which serde alone would take) is a 422 naming where it stands, and
/// nothing is stored or done.
#[tokio::test]
async fn a_record_is_an_object_never_an_array_of_its_fields() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let j = fleet.journey(&app).await;
    let mut journey = journey(json!(fleet.vehicle_id));
    journey["departure"] = json!(["2026-12-01", "08:30", crate::fixtures::KADIKOY]);
    let in_order =
        json!(["Ali", "Kaya", crate::helpers::tckn(5), "E", null, crate::fixtures::KADIKOY, crate::fixtures::CEYHAN]);
    for (path, body, field) in [
        ("/portal/webhooks/test-event".to_string(), json!([]), "body"),
        ("/portal/vehicles".to_string(), json!(["34ARR1", "otobus"]), "body"),
        ("/portal/journeys".to_string(), journey, "departure"),
        (format!("/portal/journeys/{j}/passengers"), in_order.clone(), "body"),
        (format!("/portal/journeys/{j}/passengers:bulk-upsert"), json!({"passengers": [in_order]}), "passengers[0]"),
    ] {
        assert_invalid(app.post(&path, Some(k), body).await, field).await;
    }
    let hook = app.post_ok("/portal/webhooks", k, subscription(), 201).await;
    assert_invalid(app.put(&format!("/portal/webhooks/{}", hook["id"]), k, json!([])).await, "body").await;
    for (table, expected) in [("vehicles", 1), ("journeys", 1), ("passengers", 0), ("webhook_deliveries", 0)] {
        let n: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {table}")).fetch_one(&app.db).await.unwrap();
        assert_eq!(n, expected, "nothing stored in {table} by refused calls");
    }
}
