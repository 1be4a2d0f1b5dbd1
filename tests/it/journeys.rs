//! Journeys and their passengers: create (vehicle by id or plate, crew, scheduled or not),
//! partial update and delete while draft, filters and pagination, bulk upsert.

use serde_json::{json, Value};

use crate::{
    fixtures::{journey, passenger, Fleet, CEYHAN, IST_AIRPORT, KADIKOY},
    helpers::{assert_invalid, assert_missing, error_body, json_of, tckn, TestApp},
};

#[tokio::test]
async fn create_get_update_delete_a_draft_journey() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();

    let mut body = journey(json!(fleet.vehicle_id.to_string()));
    body["personnel_ids"] = json!([fleet.driver_id]);
    body["tarifeli_context"] = json!({"firma_id": 12, "unet_guzergah_kodu": 3401, "kalkis_yer_id": KADIKOY,
                                      "varis_yer_id": CEYHAN, "seyahat_suresi_saat": 12});
    let j = app.post_ok("/portal/journeys", k, body, 201).await;
    assert_eq!(j["status"], "draft");
    assert_eq!(j["vehicle_id"], fleet.vehicle_id.to_string());
    assert_eq!(j["plate"], fleet.plate);
    assert_eq!(j["vehicle_record_id"], fleet.vehicle_id);
    assert_eq!(j["trip_kind"], "tarifeli");
    assert_eq!(j["departure"], json!({"date": "2026-12-01", "time": "08:30", "district_id": "1421"}));
    assert_eq!(j["personnel_ids"], json!([fleet.driver_id]));
    let id = j["id"].as_i64().unwrap();
    assert_eq!(app.get_ok(&format!("/portal/journeys/{id}"), k).await, j);

    // A partial update of a nested field keeps the rest.
    let res = app.put(&format!("/portal/journeys/{id}"), k, json!({"departure": {"time": "09:00"}})).await;
    let upd = json_of(res, 200).await;
    assert_eq!(upd["departure"], json!({"date": "2026-12-01", "time": "09:00", "district_id": "1421"}));
    assert_eq!(upd["trip_kind"], "tarifeli");
    assert_eq!(upd["personnel_ids"], json!([fleet.driver_id]));
    // Fields each valid that break a rule across fields once merged: the record's state refuses them.
    for (patch, field) in [
        (json!({"arrival": {"date": "2026-11-30"}}), "arrival"),
        (json!({"tarifeli_context": null}), "tarifeli_context"),
        (json!({"trip_kind": "tarifesiz"}), "tarifeli_context"),
    ] {
        let b = error_body(app.put(&format!("/portal/journeys/{id}"), k, patch).await, 409).await;
        assert!(b["detail"].as_str().unwrap().starts_with(&format!("{field}: ")), "{b}");
    }
    // A field that breaks its own rule is the patch's fault.
    assert_invalid(
        app.put(&format!("/portal/journeys/{id}"), k, json!({"departure": {"time": "9"}})).await,
        "departure.time",
    )
    .await;
    // Changing the kind with its context is one valid change.
    let res = app
        .put(&format!("/portal/journeys/{id}"), k, json!({"trip_kind": "tarifesiz", "tarifeli_context": null}))
        .await;
    let upd = json_of(res, 200).await;
    assert_eq!(upd["trip_kind"], "tarifesiz");
    assert!(upd["tarifeli_context"].is_null());
    // Part of a context the journey does not hold is not a context: the whole object is needed.
    let b = error_body(
        app.put(
            &format!("/portal/journeys/{id}"),
            k,
            json!({"trip_kind": "tarifeli", "tarifeli_context": {"firma_id": 3}}),
        )
        .await,
        409,
    )
    .await;
    assert!(b["detail"].as_str().unwrap().starts_with("tarifeli_context."), "{b}");

    // Once submitted, a journey can no longer be changed or deleted.
    sqlx::query("UPDATE journeys SET status = 'submitted' WHERE id = $1").bind(id).execute(&app.db).await.unwrap();
    error_body(app.put(&format!("/portal/journeys/{id}"), k, json!({})).await, 409).await;
    error_body(app.delete(&format!("/portal/journeys/{id}"), k).await, 409).await;
    sqlx::query("UPDATE journeys SET status = 'draft' WHERE id = $1").bind(id).execute(&app.db).await.unwrap();
    app.post_ok(&format!("/portal/journeys/{id}/passengers"), k, passenger(1), 201).await;
    json_of(app.delete(&format!("/portal/journeys/{id}"), k).await, 200).await;
    error_body(app.get(&format!("/portal/journeys/{id}"), k).await, 404).await;
    let orphans: i64 = sqlx::query_scalar("SELECT count(*) FROM passengers WHERE journey_id = $1")
        .bind(id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(orphans, 0, "passengers go with their journey");
}

#[tokio::test]
async fn vehicle_by_plate_registered_or_not() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let lower = fleet.plate.to_lowercase();
    let j = app.post_ok("/portal/journeys", k, journey(json!(lower)), 201).await;
    assert_eq!(j["plate"], fleet.plate);
    assert_eq!(j["vehicle_record_id"], fleet.vehicle_id, "a registered plate links its record");
    assert_eq!(j["trip_kind"], "tarifeli", "the documented default");
    let j = app.post_ok("/portal/journeys", k, journey(json!("06 TARIFESIZ 123")), 201).await;
    assert_eq!(j["plate"], "06TARIFESIZ123");
    assert!(j["vehicle_record_id"].is_null());
    // An id that is not this organization's vehicle.
    assert_missing(app.post("/portal/journeys", Some(k), journey(json!(999_999_999))).await, "vehicle_id").await;
    assert_invalid(app.post("/portal/journeys", Some(k), journey(json!("34-AB-12"))).await, "vehicle_id").await;
    // Airports are valid places.
    let mut body = journey(json!(fleet.vehicle_id));
    body["arrival"]["district_id"] = json!(IST_AIRPORT);
    app.post_ok("/portal/journeys", k, body, 201).await;
}

#[tokio::test]
async fn lists_filter_and_paginate_newest_first() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let mut ids = vec![];
    for day in 1..=5 {
        let mut body = journey(json!(fleet.vehicle_id));
        body["departure"]["date"] = json!(format!("2026-12-0{day}"));
        body["arrival"]["date"] = json!(format!("2026-12-0{day}"));
        ids.push(app.post_ok("/portal/journeys", k, body, 201).await["id"].as_i64().unwrap());
    }
    sqlx::query("UPDATE journeys SET status = 'delivered' WHERE id = $1").bind(ids[1]).execute(&app.db).await.unwrap();

    let mut seen = vec![];
    let mut path = "/portal/journeys?limit=2".to_string();
    loop {
        let page = app.get_ok(&path, k).await;
        seen.extend(page["data"].as_array().unwrap().iter().map(|j| j["id"].as_i64().unwrap()));
        match page["next_cursor"].as_str() {
            Some(c) => {
                assert_eq!(page["has_more"], true);
                path = format!("/portal/journeys?limit=2&cursor={c}");
            }
            None => {
                assert_eq!(page["has_more"], false);
                break;
            }
        }
    }
    assert_eq!(seen, ids.iter().rev().copied().collect::<Vec<_>>());

    let ids_of = |v: Value| v["data"].as_array().unwrap().iter().map(|j| j["id"].as_i64().unwrap()).collect::<Vec<_>>();
    assert_eq!(ids_of(app.get_ok("/portal/journeys?status=delivered", k).await), vec![ids[1]]);
    assert_eq!(
        ids_of(app.get_ok("/portal/journeys?departure_from=2026-12-02&departure_to=2026-12-04", k).await),
        vec![ids[3], ids[2], ids[1]]
    );
    assert_invalid(app.get("/portal/journeys?status=lost", k).await, "status").await;
    assert_invalid(app.get("/portal/journeys?limit=201", k).await, "limit").await;
    assert_invalid(app.get("/portal/journeys?cursor=nope", k).await, "cursor").await;
    assert_invalid(app.get("/portal/journeys?departure_from=1.12.2026", k).await, "departure_from").await;
}

#[tokio::test]
async fn passengers_add_list_update_remove() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let j = fleet.journey(&app).await;
    let base = format!("/portal/journeys/{j}/passengers");

    let p = app.post_ok(&base, k, passenger(1), 201).await;
    assert_eq!(p["journey_id"], j);
    assert_eq!(p["identity_number"], tckn(1));
    assert_eq!(p["amount"], 450.5);
    assert_eq!(p["ticket_issue_date"], "2026-11-20");
    let pid = p["id"].as_i64().unwrap();
    error_body(app.post(&base, Some(k), passenger(1)).await, 409).await;
    app.post_ok(&base, k, passenger(2), 201).await;

    let upd = json_of(app.put(&format!("{base}/{pid}"), k, json!({"seat_no": "7", "amount": 0})).await, 200).await;
    assert_eq!(upd["seat_no"], "7");
    assert_eq!(upd["amount"], 0.0);
    assert_eq!(upd["first_name"], "Ali");
    assert_invalid(app.put(&format!("{base}/{pid}"), k, json!({"gender": "X"})).await, "gender").await;
    // Changing to an identity number another passenger holds is a conflict.
    error_body(app.put(&format!("{base}/{pid}"), k, json!({"identity_number": tckn(2)})).await, 409).await;

    let list = app.get_ok(&base, k).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 2);
    json_of(app.delete(&format!("{base}/{pid}"), k).await, 200).await;
    error_body(app.delete(&format!("{base}/{pid}"), k).await, 404).await;
    assert_eq!(app.get_ok(&base, k).await["data"].as_array().unwrap().len(), 1);
    error_body(app.get("/portal/journeys/999999999/passengers", k).await, 404).await;
    error_body(app.post("/portal/journeys/999999999/passengers", Some(k), passenger(3)).await, 404).await;
}

async fn stored_passengers(app: &TestApp, journey: i64) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM passengers WHERE journey_id = $1")
        .bind(journey)
        .fetch_one(&app.db)
        .await
        .unwrap()
}

#[tokio::test]
async fn bulk_upsert_is_keyed_counted_and_all_or_nothing() {
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let k = fleet.key();
    let j = fleet.journey(&app).await;
    let path = format!("/portal/journeys/{j}/passengers:bulk-upsert");

    let first: Vec<Value> = (0..1000).map(passenger).collect();
    let out = app.post_ok(&path, k, json!({"passengers": first}), 200).await;
    assert_eq!((out["created"].as_u64(), out["updated"].as_u64()), (Some(1000), Some(0)));
    assert_eq!(out["data"].as_array().unwrap().len(), 1000);
    assert_eq!(out["data"][999]["identity_number"], tckn(999), "records in the order sent");
    assert_eq!(stored_passengers(&app, j).await, 1000);

    // 5 known (updated) and 10 new.
    let mut second: Vec<Value> = (995..1010).map(passenger).collect();
    for p in second.iter_mut() {
        p["last_name"] = json!("Güncel");
    }
    let out = app.post_ok(&path, k, json!({"passengers": second}), 200).await;
    assert_eq!((out["created"].as_u64(), out["updated"].as_u64()), (Some(10), Some(5)));
    assert!(out["data"].as_array().unwrap().iter().all(|p| p["last_name"] == "Güncel"));
    assert_eq!(stored_passengers(&app, j).await, 1010);

    // One bad entry: nothing of the call is stored, and the error names it.
    let mut bad: Vec<Value> = (2000..2010).map(passenger).collect();
    bad[7]["identity_number"] = json!("12345678901");
    assert_invalid(app.post(&path, Some(k), json!({"passengers": bad})).await, "passengers[7].identity_number").await;
    // An identity number listed twice is one passenger: the last entry's fields, the first's place.
    let mut dup: Vec<Value> = (3000..3003).map(passenger).collect();
    dup[2]["identity_number"] = json!(tckn(3000));
    dup[2]["first_name"] = json!("Son");
    let out = app.post_ok(&path, k, json!({"passengers": dup}), 200).await;
    assert_eq!((out["created"].as_u64(), out["updated"].as_u64()), (Some(2), Some(0)));
    assert_eq!(out["data"][0]["identity_number"], tckn(3000));
    assert_eq!(out["data"][0]["first_name"], "Son");
    assert_eq!(stored_passengers(&app, j).await, 1012);
    let mut unknown_place: Vec<Value> = (4000..4002).map(passenger).collect();
    unknown_place[1]["destination_place_code"] = json!(77777);
    assert_invalid(
        app.post(&path, Some(k), json!({"passengers": unknown_place})).await,
        "passengers[1].destination_place_code",
    )
    .await;
    assert_eq!(stored_passengers(&app, j).await, 1012);

    let too_many: Vec<Value> = (0..1001).map(passenger).collect();
    assert_invalid(app.post(&path, Some(k), json!({"passengers": too_many})).await, "passengers").await;
    assert_invalid(app.post(&path, Some(k), json!({"passengers": []})).await, "passengers").await;
    error_body(
        app.post("/portal/journeys/999999999/passengers:bulk-upsert", Some(k), json!({"passengers": [passenger(1)]}))
            .await,
        404,
    )
    .await;
}

#[tokio::test]
async fn concurrent_creates_are_batched_and_each_answered_for_itself() {
    let app = TestApp::spawn().await;
    let a = Fleet::new(&app).await;
    let b = Fleet::new(&app).await;
    let calls = (0..60).map(|i| {
        let (fleet, vehicle) = match i % 3 {
            0 => (&a, json!(a.vehicle_id)),
            1 => (&b, json!(b.plate)),
            _ => (&a, json!(b.vehicle_id)), // another organization's vehicle: refused
        };
        let api = app.api.clone();
        let body = journey(vehicle);
        async move { (i, fleet.org.id, api.post("/portal/journeys", Some(fleet.key()), body).await) }
    });
    for (i, org, res) in futures::future::join_all(calls).await {
        if i % 3 == 2 {
            assert_missing(res, "vehicle_id").await;
            continue;
        }
        let j = json_of(res, 201).await;
        let owner: i64 = sqlx::query_scalar("SELECT org_id FROM journeys WHERE id = $1")
            .bind(j["id"].as_i64().unwrap())
            .fetch_one(&app.db)
            .await
            .unwrap();
        assert_eq!(owner, org, "journey {i} stored for its own organization");
        let expected = if i % 3 == 0 { &a } else { &b };
        assert_eq!(j["plate"], expected.plate);
        assert_eq!(j["vehicle_record_id"], expected.vehicle_id);
    }
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM journeys").fetch_one(&app.db).await.unwrap();
    assert_eq!(n, 40);
}

#[tokio::test]
async fn a_failing_row_fails_only_its_own_create() {
    use tns_core::domain::fields::{Day, Time};
    use tns_core::ids::{PersonId, VehicleId};
    use tns_store::{
        journey_writer::JourneyWriter,
        journeys::{self, JourneyFields, VehicleChoice},
    };
    let app = TestApp::spawn().await;
    let fleet = Fleet::new(&app).await;
    let (writer, writers) = JourneyWriter::new(app.db.clone(), 1);
    tokio::spawn(writers.run());
    let stop = |time: &str, district: i64| journeys::Stop {
        date: Day("2026-12-01".parse().unwrap()),
        time: Time(time.parse().unwrap()),
        district_id: Some(district as i32),
        country: None,
        place: None,
    };
    let fields = |crew: Vec<i64>| JourneyFields {
        vehicle: VehicleChoice::Record(VehicleId(fleet.vehicle_id)),
        departure: stop("08:00", KADIKOY),
        arrival: stop("12:00", CEYHAN),
        trip_kind: tns_core::domain::kinds::TripKind::Tarifesiz,
        tarifeli_context: None,
        personnel_ids: crew.into_iter().map(PersonId).collect(),
    };
    // A crew member that does not exist breaks its row's foreign key (validation normally
    // stops this; here it stands for a person deleted between validation and the write).
    let org = fleet.org.tenant(&app.db).await;
    let results = futures::future::join_all([
        writer.insert(org, fields(vec![fleet.driver_id]), "key:1"),
        writer.insert(org, fields(vec![987_654_321]), "key:2"),
        writer.insert(org, fields(vec![]), "user:3"),
    ])
    .await;
    let first = results[0].as_ref().unwrap().as_ref().unwrap();
    assert_eq!(first.journey.personnel_ids, vec![PersonId(fleet.driver_id)]);
    assert!(results[1].is_err());
    // Each journey of a batch names its own creator.
    let third = results[2].as_ref().unwrap().as_ref().unwrap();
    assert_eq!((first.stamp.created_by.as_deref(), third.stamp.created_by.as_deref()), (Some("key:1"), Some("user:3")));
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM journeys").fetch_one(&app.db).await.unwrap();
    assert_eq!(n, 2);
}

/// Journeys stored before the kind was an input keep the kind they had: a context meant a
/// scheduled trip, none a non-scheduled one. (Migrated for real: the database is brought to the
/// version before, journeys are written the old way, then the rest of the migrations run.)
#[tokio::test]
async fn existing_journeys_keep_their_kind() {
    let url = crate::helpers::fresh_database().await;
    let db = sqlx::PgPool::connect(&url).await.unwrap();
    let all = &tns_store::MIGRATOR;
    let before = sqlx::migrate::Migrator {
        migrations: all.migrations.iter().filter(|m| m.version < 20261124000007).cloned().collect::<Vec<_>>().into(),
        ..sqlx::migrate::Migrator::DEFAULT
    };
    before.run(&db).await.unwrap();
    let org: i64 =
        sqlx::query_scalar("INSERT INTO organizations (name, tax_number) VALUES ('Old', '1234567890') RETURNING id")
            .fetch_one(&db)
            .await
            .unwrap();
    for ctx in [
        Some(json!({"firma_id": 1, "unet_guzergah_kodu": 2, "kalkis_yer_id": KADIKOY, "varis_yer_id": CEYHAN,
                             "seyahat_suresi_saat": 3})),
        None,
    ] {
        sqlx::query(
            "INSERT INTO journeys (org_id, vehicle_ref, plate, departure_date, departure_time, departure_district_id,
                                   arrival_date, arrival_time, arrival_district_id, tarifeli_context)
             VALUES ($1, '34OLD1', '34OLD1', '2026-12-01', '08:00', 1421, '2026-12-01', '12:00', 1219, $2)",
        )
        .bind(org)
        .bind(ctx)
        .execute(&db)
        .await
        .unwrap();
    }
    all.run(&db).await.unwrap();
    let kinds: Vec<(String, bool)> =
        sqlx::query_as("SELECT trip_kind, tarifeli_context IS NOT NULL FROM journeys ORDER BY id")
            .fetch_all(&db)
            .await
            .unwrap();
    assert_eq!(kinds, [("tarifeli".to_string(), true), ("tarifesiz".to_string(), false)]);
    // And the rule holds from now on, in the database too.
    let mismatch = sqlx::query("UPDATE journeys SET trip_kind = 'tarifesiz' WHERE tarifeli_context IS NOT NULL")
        .execute(&db)
        .await;
    assert!(mismatch.is_err(), "a tarifesiz journey with a context is refused by the constraint");
}
