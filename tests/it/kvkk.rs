//! Personal data retention (KVKK): the jobs role erases the people of journeys and shipments
//! past the retention period — in their rows and in what their submissions sent — and of
//! retired personnel no kept record names, while the records, counts, states and references
//! stay; records inside the period and active people are left alone.

use reqwest::Method;
use serde_json::{json, Value};
use sqlx::PgPool;
use tns_core::{domain::personal::erased_identity, env::RedisSettings};
use tns_jobs::periodic::Job;

use crate::{fixtures::*, helpers::*};

const DAYS: u32 = 730;

/// Every row a query's `t` names, as PostgreSQL writes them out, one per line.
async fn rows_text(db: &PgPool, from: &str, id: i64) -> String {
    sqlx::query_scalar(&format!("SELECT COALESCE(string_agg(t::text, E'\\n' ORDER BY t.id), '') FROM {from}"))
        .bind(id)
        .fetch_one(db)
        .await
        .unwrap()
}

/// Everything the job may touch, as text: a second run must leave it exactly so.
async fn everything(db: &PgPool) -> String {
    let mut all = String::new();
    for table in ["journeys", "passengers", "personnel", "cargo", "submissions", "submission_attempts"] {
        let text: String = sqlx::query_scalar(&format!(
            "SELECT COALESCE(string_agg(t::text, E'\\n' ORDER BY t.id), '') FROM {table} t"
        ))
        .fetch_one(db)
        .await
        .unwrap();
        all.push_str(&text);
    }
    all
}

/// A journey of the fleet's vehicle with `crew` and `passengers`, submitted and delivered; its
/// id and the delivering submission's.
async fn delivered_journey(app: &Api, f: &Fleet, crew: &[i64], passengers: &[Value]) -> (i64, i64) {
    let mut body = journey(json!(f.vehicle_id));
    body["personnel_ids"] = json!(crew);
    let id = app.post_ok("/portal/journeys", f.key(), body, 201).await["id"].as_i64().unwrap();
    app.post_ok(
        &format!("/portal/journeys/{id}/passengers:bulk-upsert"),
        f.key(),
        json!({"passengers": passengers}),
        200,
    )
    .await;
    (id, submitted(app, f.key(), &format!("/portal/journeys/{id}/submit")).await)
}

/// Submit, wait for delivery; the submission's id.
async fn submitted(app: &Api, key: &str, path: &str) -> i64 {
    let res = app.req(Method::POST, path, Some(key)).header("Prefer", "wait=10").send().await.unwrap();
    let s = json_of(res, 202).await;
    assert_eq!(s["status"], "delivered", "{s}");
    s["submission_id"].as_i64().unwrap()
}

/// Move a journey's days to `days_ago` days before today (Türkiye's calendar, the job's).
async fn journey_ended(db: &PgPool, id: i64, days_ago: i32) {
    sqlx::query(
        "UPDATE journeys SET departure_date = (now() AT TIME ZONE 'Europe/Istanbul')::date - $2,
                arrival_date = (now() AT TIME ZONE 'Europe/Istanbul')::date - $2 WHERE id = $1",
    )
    .bind(id)
    .bind(days_ago)
    .execute(db)
    .await
    .unwrap();
}

#[tokio::test]
async fn personal_data_past_retention_is_erased_once_and_the_records_stay() {
    let (app, _scheduler, f) = delivering().await;
    let (db, key) = (&app.db, f.key());
    let n = f.org.id as u64 * 100;

    // Two hosts besides the fleet's (active) driver: each on one journey, both retired later.
    let mut host = person(n + 1, "host");
    host["first_name"] = json!("Nurhayat");
    host["last_name"] = json!("Çetinkaya");
    host["phone"] = json!("+90 533 444 55 66");
    host["address"] = json!("Moda Cad. 12, Kadıköy");
    let old_host = app.post_ok("/portal/personnel", key, host, 201).await["id"].as_i64().unwrap();
    let recent_host = app.post_ok("/portal/personnel", key, person(n + 2, "host"), 201).await["id"].as_i64().unwrap();

    let (old_id, passport) = (tckn(n + 11), "U7654321");
    let mut traveller = passenger(n + 11);
    traveller["first_name"] = json!("Sevgül");
    traveller["last_name"] = json!("Öztürkmen");
    traveller["phone"] = json!("+90 532 765 43 21");
    traveller["ticket_serial_no"] = json!("TKT-90817");
    traveller["baggage"] = json!(["BAG55501"]);
    let foreigner = json!({"first_name": "Josephine", "last_name": "Whitfield", "identity_number": passport,
                           "gender": "K", "nationality": "GB", "boarding_place_code": KADIKOY,
                           "destination_place_code": CEYHAN, "seat_no": "14"});
    let (old, old_sub) = delivered_journey(&app, &f, &[f.driver_id, old_host], &[traveller, foreigner]).await;
    let recent_id = tckn(n + 21);
    let (recent, recent_sub) = delivered_journey(&app, &f, &[f.driver_id, recent_host], &[passenger(n + 21)]).await;

    let mut shipment = cargo(f.vehicle_id);
    shipment["driver_id"] = json!(f.driver_id);
    shipment["items"] = json!([{"cargo_type": 7, "cargo_amount": 10, "cargo_unit": "KG",
                                "sender_tax_number": tckn(n + 31), "sender_name": "Hüsnü Bayraktaroğlu",
                                "receiver_tax_number": VKN, "receiver_name": "Alıcı Lojistik"}]);
    let c = app.post_ok("/portal/cargo", key, shipment, 201).await["id"].as_i64().unwrap();
    let cargo_sub = submitted(&app, key, &format!("/portal/cargo/{c}/submit")).await;

    for id in [old_host, recent_host] {
        json_of(app.delete(&format!("/portal/personnel/{id}"), key).await, 200).await;
    }
    // A downstream message quoting a passenger, as U-ETDS's refusals do.
    sqlx::query("UPDATE submissions SET error_message = $2 WHERE id = $1")
        .bind(old_sub)
        .bind(format!("yolcu {old_id} / {passport}: kayıt uyarısı"))
        .execute(db)
        .await
        .unwrap();
    sqlx::query("UPDATE submission_attempts SET error = $2 WHERE submission_id = $1")
        .bind(old_sub)
        .bind(format!("88: {old_id} TC KIMLIK NO HATALI"))
        .execute(db)
        .await
        .unwrap();

    // One day past the period, and exactly at its end (still kept).
    journey_ended(db, old, DAYS as i32 + 1).await;
    journey_ended(db, recent, DAYS as i32).await;
    sqlx::query(
        "UPDATE cargo SET loading_date = (now() AT TIME ZONE 'Europe/Istanbul')::date - $2,
                unloading_date = (now() AT TIME ZONE 'Europe/Istanbul')::date - $2 WHERE id = $1",
    )
    .bind(c)
    .bind(DAYS as i32 + 1)
    .execute(db)
    .await
    .unwrap();

    let before_old = app.get_ok(&format!("/portal/journeys/{old}"), key).await;
    let recent_rows = rows_text(db, "passengers t WHERE journey_id = $1", recent).await;
    let recent_sent = rows_text(db, "submissions t WHERE target_type = 'journey' AND target_id = $1", recent).await;
    let driver_row = rows_text(db, "personnel t WHERE id = $1", f.driver_id).await;
    let recent_host_row = rows_text(db, "personnel t WHERE id = $1", recent_host).await;

    let redis =
        RedisSettings { url: app.env.get("TNS_REDIS_URL").into(), prefix: app.env.get("TNS_REDIS_PREFIX").into() };
    let job = Job::PersonalDataRetention { days: DAYS };
    assert_eq!(job.run(db, &redis).await.unwrap(), 3, "one journey, one shipment, one person");

    // The old journey: the same record, reference, passengers and submission state…
    let after_old = app.get_ok(&format!("/portal/journeys/{old}"), key).await;
    assert_eq!(after_old, before_old, "the journey itself holds no one and is as it was");
    assert!(after_old["downstream_reference"].is_string());
    let sub = app.get_ok(&format!("/portal/submissions/{old_sub}"), key).await;
    assert_eq!((sub["state"].as_str(), sub["target_id"].as_i64()), (Some("delivered"), Some(old)));
    assert_eq!(sub["downstream_reference"], after_old["downstream_reference"]);
    assert_eq!(sub["snapshot"]["passengers"].as_array().unwrap().len(), 2, "counts stay");
    assert_eq!(sub["snapshot"]["crew"].as_array().unwrap().len(), 2);
    assert_eq!(sub["snapshot"]["passengers"][1]["person"]["identity_number"], "[erased]");
    assert_eq!(sub["snapshot"]["passengers"][1]["seat_no"], "14", "what is not a person stays");
    assert_eq!(sub["snapshot"]["crew"][0]["first_name"], "[erased]");
    assert_eq!(sub["error_message"], "yolcu [erased] / [erased]: kayıt uyarısı");
    // …its passengers in the erased form, through the API as in the rows.
    let listed = app.get_ok(&format!("/portal/journeys/{old}/passengers"), key).await;
    let listed = listed["data"].as_array().unwrap();
    assert_eq!(listed.len(), 2);
    for p in listed {
        let id = p["id"].as_i64().unwrap();
        assert_eq!(p["identity_number"], erased_identity(id));
        assert_eq!((p["first_name"].as_str(), p["last_name"].as_str()), (Some("[erased]"), Some("[erased]")));
        assert_eq!((&p["phone"], &p["ticket_serial_no"], &p["baggage"]), (&Value::Null, &Value::Null, &json!([])));
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM passengers WHERE journey_id = $1")
        .bind(old)
        .fetch_one(db)
        .await
        .unwrap();
    assert_eq!(count, 2);
    // Nowhere in its rows is anyone left: passengers, what was sent (snapshot, results,
    // messages, progress), the attempts.
    let gone = [
        old_id.as_str(),
        passport,
        "Sevgül",
        "Öztürkmen",
        "Josephine",
        "Whitfield",
        "765 43 21",
        "TKT-90817",
        "BAG55501",
        "Mehmet",
        "Demir",
        "Nurhayat",
        "Çetinkaya",
    ];
    let driver_number = tckn(f.org.id as u64 * 10 + 1);
    for text in [
        rows_text(db, "passengers t WHERE journey_id = $1", old).await,
        rows_text(db, "submissions t WHERE target_type = 'journey' AND target_id = $1", old).await,
        rows_text(db, "submission_attempts t WHERE submission_id = $1", old_sub).await,
    ] {
        assert!(!text.is_empty());
        for value in gone.iter().copied().chain([driver_number.as_str(), tckn(n + 1).as_str()]) {
            assert!(!text.contains(value), "{value} is still in {text}");
        }
    }
    let erased_at: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT personal_data_erased_at FROM journeys WHERE id = $1")
            .bind(old)
            .fetch_one(db)
            .await
            .unwrap();
    assert!(erased_at.is_some());

    // The shipment: its parties erased, in the row, its loads and what was sent.
    let shipment = app.get_ok(&format!("/portal/cargo/{c}"), key).await;
    assert_eq!((shipment["status"].as_str(), shipment["sender_name"].as_str()), (Some("delivered"), Some("[erased]")));
    assert_eq!(shipment["items"][0]["receiver_tax_number"], "[erased]");
    let sent = app.get_ok(&format!("/portal/submissions/{cargo_sub}"), key).await;
    assert_eq!(
        (sent["state"].as_str(), sent["snapshot"]["items"].as_array().map(Vec::len)),
        (Some("delivered"), Some(1))
    );
    for text in [
        rows_text(db, "cargo t WHERE id = $1", c).await,
        rows_text(db, "submissions t WHERE target_type = 'cargo' AND target_id = $1", c).await,
    ] {
        for value in [VKN, TCKN, tckn(n + 31).as_str(), "Gönderen", "Alıcı", "Hüsnü", "Mehmet", driver_number.as_str()]
        {
            assert!(!text.contains(value), "{value} is still in {text}");
        }
    }

    // People: the retired host of the old journey only, erased; the active driver (on both
    // journeys) and the retired host of the kept one untouched.
    let host = app.get_ok(&format!("/portal/personnel/{old_host}"), key).await;
    assert_eq!(host["status"], "inactive");
    assert_eq!(host["identity_number"], erased_identity(old_host));
    assert_eq!((host["first_name"].as_str(), host["last_name"].as_str()), (Some("[erased]"), Some("[erased]")));
    assert_eq!((&host["phone"], &host["address"]), (&Value::Null, &Value::Null));
    assert_eq!(rows_text(db, "personnel t WHERE id = $1", f.driver_id).await, driver_row);
    assert_eq!(rows_text(db, "personnel t WHERE id = $1", recent_host).await, recent_host_row);

    // The journey inside the period: untouched, rows and what was sent.
    assert_eq!(rows_text(db, "passengers t WHERE journey_id = $1", recent).await, recent_rows);
    assert_eq!(
        rows_text(db, "submissions t WHERE target_type = 'journey' AND target_id = $1", recent).await,
        recent_sent
    );
    assert!(recent_rows.contains(&recent_id) && recent_sent.contains(&recent_id) && recent_sub > 0);

    // A second run finds nothing left and changes nothing.
    let once = everything(db).await;
    assert_eq!(job.run(db, &redis).await.unwrap(), 0);
    assert_eq!(everything(db).await, once, "a second run changes nothing");

    // The erased journey is history: its people take no changes, and nothing of it is sent again.
    let more = json!({"passengers": [passenger(n + 12)]});
    let e = error_body(app.post(&format!("/portal/journeys/{old}/passengers:bulk-upsert"), Some(key), more).await, 409)
        .await;
    assert!(e["detail"].as_str().unwrap().contains("erased"), "{e}");
    let e = error_body(
        app.req(Method::POST, &format!("/portal/journeys/{old}/submit"), Some(key)).send().await.unwrap(),
        409,
    )
    .await;
    assert!(e["detail"].as_str().unwrap().contains("erased"), "{e}");
    let e = error_body(app.put(&format!("/portal/cargo/{c}"), key, json!({"cargo_amount": 3})).await, 409).await;
    assert!(e["detail"].as_str().unwrap().contains("erased"), "{e}");
    // Had its last submission failed, an operator's re-queue would pass it by.
    sqlx::query("UPDATE submissions SET state = 'failed' WHERE id = $1").bind(old_sub).execute(db).await.unwrap();
    let operator = tns_store::audit::Actor::Operator("ayse".into());
    let requeued =
        tns_store::submissions::requeue::requeue_failed(db, &operator, f.org.tenant(db).await, "U-ETDS was down").await;
    assert_eq!(requeued.unwrap(), Some(vec![]));
    let pending: i64 = sqlx::query_scalar("SELECT count(*) FROM submissions WHERE state IN ('pending', 'unknown')")
        .fetch_one(db)
        .await
        .unwrap();
    assert_eq!(pending, 0);
}
