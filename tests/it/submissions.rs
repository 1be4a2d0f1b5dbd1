//! The submission pipeline end to end: submit through the API, schedulers claiming from the
//! real database and calling the real sandbox `.so` through libloading, outcomes read back
//! through the API and from the sandbox's own records.

use std::{collections::HashMap, time::Duration};

use reqwest::Method;
use serde_json::{json, Value};

use crate::{fixtures::*, helpers::*};

/// A journey on `plate` (not a vehicle record) with the fleet's driver and these passengers.
async fn journey_on(app: &Api, f: &Fleet, plate: &str, passengers: &[Value]) -> i64 {
    let mut body = journey(json!(plate));
    body["personnel_ids"] = json!([f.driver_id]);
    let id = app.post_ok("/portal/journeys", f.key(), body, 201).await["id"].as_i64().unwrap();
    if !passengers.is_empty() {
        let path = format!("/portal/journeys/{id}/passengers:bulk-upsert");
        app.post_ok(&path, f.key(), json!({ "passengers": passengers }), 200).await;
    }
    id
}

/// POST a submit and expect 202; `wait` adds `Prefer: wait=N`.
async fn submit(app: &Api, key: &str, path: &str, wait: Option<u64>) -> Value {
    let mut req = app.req(Method::POST, path, Some(key));
    if let Some(n) = wait {
        req = req.header("Prefer", format!("wait={n}"));
    }
    json_of(req.send().await.unwrap(), 202).await
}

async fn submit_journey(app: &Api, key: &str, id: i64, wait: Option<u64>) -> Value {
    submit(app, key, &format!("/portal/journeys/{id}/submit"), wait).await
}

/// Poll a submission until it is final (for submissions sent without `Prefer: wait`).
async fn final_state(app: &Api, key: &str, id: i64) -> Value {
    for _ in 0..600 {
        let s = app.get_ok(&format!("/portal/submissions/{id}"), key).await;
        if s["state"] != "pending" {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("submission {id} still pending after 30 s");
}

fn outcomes(detail: &Value) -> Vec<&str> {
    detail["history"].as_array().unwrap().iter().map(|a| a["outcome"].as_str().unwrap()).collect()
}

fn foreign(n: &str) -> Value {
    json!({"first_name": "John", "last_name": "Smith", "identity_number": n, "gender": "E", "nationality": "GB",
           "boarding_place_code": KADIKOY, "destination_place_code": CEYHAN})
}

#[tokio::test]
async fn every_sandbox_scenario_end_to_end() {
    let env = Env::new().await.with_scheduler().with(&[("TNS_RETRY_WINDOW_SECS", "2")]);
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let key = f.key();

    // Accepted: a reference in U-ETDS's shape, every passenger referenced, journey delivered.
    let ok = journey_on(&app, &f, "34ABC123", &[passenger(1), passenger(2)]).await;
    let s = submit_journey(&app, key, ok, Some(10)).await;
    assert_eq!(s["status"], "delivered", "{s}");
    let id = s["submission_id"].as_i64().unwrap();
    let d = app.get_ok(&format!("/portal/submissions/{id}"), key).await;
    let reference = d["downstream_reference"].as_str().unwrap().to_string();
    assert_eq!(reference.len(), 14);
    assert!(reference.starts_with("261201"), "YYMMDD of the departure: {reference}");
    assert_eq!(
        (d["target_type"].as_str(), d["target_id"].as_i64(), d["operation"].as_str()),
        (Some("journey"), Some(ok), Some("journey"))
    );
    assert_eq!(d["error_message"], Value::Null);
    assert_eq!(outcomes(&d), ["delivered"]);
    assert_eq!(d["history"][0]["downstream_reference"], reference.as_str());
    assert!(d["passengers"].as_array().unwrap().iter().all(|p| p["downstream_reference"].is_string()));
    assert_eq!(d["snapshot"]["plate"], "34ABC123");
    // Who queued it: the API key that called.
    let key_id = app.get_ok("/portal/api-keys", key).await["data"][0]["id"].as_i64().unwrap();
    assert_eq!(d["submitted_by"], format!("key:{key_id}"));
    assert_eq!(d["snapshot"]["crew"][0]["role"], "driver");
    assert_eq!(d["snapshot"]["passengers"].as_array().unwrap().len(), 2);
    assert_eq!(d["snapshot"]["departure"]["city_id"], ISTANBUL, "district resolved to its province");
    let j = app.get_ok(&format!("/portal/journeys/{ok}"), key).await;
    assert_eq!(
        (j["status"].as_str(), j["downstream_reference"].as_str()),
        (Some("delivered"), Some(reference.as_str()))
    );

    // Partial passenger failure (U-ETDS code 88): delivered, the refused passenger named.
    let partial = journey_on(&app, &f, "34ABC124", &[passenger(3), foreign("FAIL0001")]).await;
    let s = submit_journey(&app, key, partial, Some(10)).await;
    assert_eq!(s["status"], "delivered");
    let d = app.get_ok(&format!("/portal/submissions/{}", s["submission_id"]), key).await;
    assert_eq!(outcomes(&d), ["partial"]);
    let msg = d["error_message"].as_str().unwrap();
    assert!(msg.starts_with("1 of 2 passengers refused") && msg.contains("88"), "{msg}");
    let refused: Vec<&Value> = d["passengers"].as_array().unwrap().iter().filter(|p| p["error"].is_string()).collect();
    assert_eq!(refused.len(), 1);

    // Permanent rejection: failed at the first attempt, never retried.
    let rejected = journey_on(&app, &f, "34REJECT1", &[]).await;
    let s = submit_journey(&app, key, rejected, Some(10)).await;
    assert_eq!(s["status"], "failed");
    let d = app.get_ok(&format!("/portal/submissions/{}", s["submission_id"]), key).await;
    assert_eq!(outcomes(&d), ["permanent"]);
    assert!(d["error_message"].as_str().unwrap().contains("yetki belgesine"));
    assert_eq!(app.get_ok(&format!("/portal/journeys/{rejected}"), key).await["status"], "failed");

    // Configuration error: failed, saying so.
    let config = journey_on(&app, &f, "34CONFIG1", &[]).await;
    let s = submit_journey(&app, key, config, Some(10)).await;
    assert_eq!(s["status"], "failed");
    let d = app.get_ok(&format!("/portal/submissions/{}", s["submission_id"]), key).await;
    assert_eq!(outcomes(&d), ["configuration"]);
    assert!(d["error_message"].as_str().unwrap().starts_with("downstream configuration:"));

    // Transient twice, then accepted on the third try.
    let flaky = journey_on(&app, &f, "34FLAKY3", &[]).await;
    let s = submit_journey(&app, key, flaky, Some(10)).await;
    assert_eq!(s["status"], "delivered", "{s}");
    let d = app.get_ok(&format!("/portal/submissions/{}", s["submission_id"]), key).await;
    assert_eq!(outcomes(&d), ["transient", "transient", "delivered"]);
    assert_eq!(d["attempts"], 3);

    // A slow answer: `submitted` while it is on its way, then delivered.
    let slow = journey_on(&app, &f, "34SLOW1500", &[]).await;
    let s = submit_journey(&app, key, slow, None).await;
    assert_eq!(s["status"], "pending");
    assert_eq!(app.get_ok(&format!("/portal/journeys/{slow}"), key).await["status"], "submitted");
    let d = final_state(&app, key, s["submission_id"].as_i64().unwrap()).await;
    assert_eq!(d["state"], "delivered");
    assert_eq!(app.get_ok(&format!("/portal/journeys/{slow}"), key).await["status"], "delivered");

    // A panicking plugin: contained, retried until the (short) window is spent, then failed —
    // and the scheduler keeps delivering.
    let panics = journey_on(&app, &f, "34PANIC1", &[]).await;
    let s = submit_journey(&app, key, panics, Some(15)).await;
    assert_eq!(s["status"], "failed", "{s}");
    let d = app.get_ok(&format!("/portal/submissions/{}", s["submission_id"]), key).await;
    assert!(d["error_message"].as_str().unwrap().starts_with("gave up after"), "{d}");
    assert!(d["history"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["outcome"] == "transient" && a["error"].as_str().unwrap().contains("panicked")));
    let after = journey_on(&app, &f, "34ABC125", &[]).await;
    assert_eq!(submit_journey(&app, key, after, Some(10)).await["status"], "delivered");

    // Cargo: delivered once; a second submit of a delivered shipment answers with that delivery.
    let c = app.post_ok("/portal/cargo", key, cargo(f.vehicle_id), 201).await["id"].as_i64().unwrap();
    let s = submit(&app, key, &format!("/portal/cargo/{c}/submit"), Some(10)).await;
    assert_eq!(s["status"], "delivered");
    let shipment = app.get_ok(&format!("/portal/cargo/{c}"), key).await;
    assert_eq!(shipment["status"], "delivered");
    assert_eq!(shipment["downstream_reference"].as_str().unwrap().len(), 14);
    let d = app.get_ok(&format!("/portal/submissions/{}", s["submission_id"]), key).await;
    assert_eq!(d["snapshot"]["plate"], f.plate.as_str());
    assert_eq!(d["snapshot"]["sender"]["tax_number"], VKN);
    let again = submit(&app, key, &format!("/portal/cargo/{c}/submit"), None).await;
    assert_eq!((&again["submission_id"], again["status"].as_str()), (&s["submission_id"], Some("delivered")));
    // Without a driver the shipment goes out all the same, with the warning.
    assert_eq!(s["warnings"][0]["code"], "no_driver");
    assert_eq!(s["warnings"][0]["field"], "driver_id");

    // The sandbox recorded each accepted notification exactly once.
    let records = sandbox_records(&env.sandbox_state());
    let mut per_ref: HashMap<String, usize> = HashMap::new();
    for r in &records {
        *per_ref.entry(r["reference"].as_str().unwrap().to_string()).or_default() += 1;
    }
    assert_eq!(records.len(), 6, "ok, partial, flaky, slow, after, cargo: {per_ref:?}");
    assert!(per_ref.values().all(|n| *n == 1), "{per_ref:?}");
}

#[tokio::test]
async fn resubmission_sends_only_the_difference_and_pending_submits_are_one() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let key = f.key();

    // No driver in the crew: it goes downstream all the same, with a warning naming the field.
    let mut body = journey(json!("34NODRIVER"));
    let host = app.post_ok("/portal/personnel", key, person(f.org.id as u64 * 10 + 2, "host"), 201).await;
    body["personnel_ids"] = json!([host["id"]]);
    let no_driver = app.post_ok("/portal/journeys", key, body, 201).await["id"].as_i64().unwrap();
    let s = submit_journey(&app, key, no_driver, Some(10)).await;
    assert_eq!(s["status"], "delivered");
    let codes: Vec<&str> = s["warnings"].as_array().unwrap().iter().map(|w| w["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"no_driver") && codes.contains(&"no_passengers"), "{s}");
    assert_eq!(s["warnings"], s["submission"]["warnings"]);
    let w = s["warnings"].as_array().unwrap().iter().find(|w| w["code"] == "no_driver").unwrap();
    assert_eq!(w["field"], "personnel_ids");
    assert!(w["detail"].as_str().unwrap().starts_with("personnel_ids: "));
    assert_eq!(
        app.get_ok(&format!("/portal/submissions/{}", s["submission_id"]), key).await["warnings"],
        s["warnings"]
    );

    // Submitting twice while pending returns the same submission.
    let j = journey_on(&app, &f, "34SLOW700", &[passenger(1), passenger(2), passenger(3)]).await;
    let first = submit_journey(&app, key, j, None).await;
    let second = submit_journey(&app, key, j, None).await;
    assert_eq!(first["submission_id"], second["submission_id"]);
    let id = first["submission_id"].as_i64().unwrap();
    assert_eq!(final_state(&app, key, id).await["state"], "delivered");
    let list = app.get_ok(&format!("/portal/submissions?target_type=journey&target_id={j}"), key).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);

    // Unchanged since delivery: nothing new to send; the answer is the delivering submission.
    let again = submit_journey(&app, key, j, None).await;
    assert_eq!((&again["submission_id"], again["status"].as_str()), (&first["submission_id"], Some("delivered")));

    // Add one, change one, remove one: only that goes downstream, as an amendment of the
    // delivered journey.
    let pax = app.get_ok(&format!("/portal/journeys/{j}/passengers"), key).await;
    let by_identity = |n: u64| {
        pax["data"].as_array().unwrap().iter().find(|p| p["identity_number"] == tckn(n).as_str()).unwrap()["id"]
            .as_i64()
            .unwrap()
    };
    let (p1, p2) = (by_identity(1), by_identity(2));
    app.put(&format!("/portal/journeys/{j}/passengers/{p1}"), key, json!({"seat_no": "40"})).await;
    assert_eq!(app.delete(&format!("/portal/journeys/{j}/passengers/{p2}"), key).await.status(), 200);
    let added =
        app.post_ok(&format!("/portal/journeys/{j}/passengers"), key, passenger(4), 201).await["id"].as_i64().unwrap();
    let s = submit_journey(&app, key, j, Some(10)).await;
    assert_eq!(s["status"], "delivered");
    let d = app.get_ok(&format!("/portal/submissions/{}", s["submission_id"]), key).await;
    assert_eq!(d["operation"], "amendment");
    let keys = |field: &str| -> Vec<String> {
        d["snapshot"][field].as_array().unwrap().iter().map(|p| p["key"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(keys("added"), [added.to_string()]);
    assert_eq!(keys("changed"), [p1.to_string()]);
    assert_eq!(keys("removed"), [p2.to_string()]);
    assert_eq!(d["snapshot"]["changed"][0]["seat_no"], "40");
    assert!(d["snapshot"]["removed"][0]["downstream_reference"].is_string(), "the passenger's own reference");
    assert_eq!(d["snapshot"]["downstream_reference"], d["downstream_reference"]);
    let j_now = app.get_ok(&format!("/portal/journeys/{j}"), key).await;
    assert_eq!(j_now["downstream_reference"], d["downstream_reference"]);
    let kinds: Vec<String> =
        sandbox_records(&env.sandbox_state()).iter().map(|r| r["kind"].as_str().unwrap().to_string()).collect();
    assert_eq!(kinds, ["journey", "journey", "amendment"], "the driverless journey, this one, its amendment");

    // Unknown and other tenants' records: 404, nothing queued.
    let other = app.register().await;
    for path in [format!("/portal/journeys/{j}/submit"), "/portal/journeys/999999/submit".into()] {
        let res = app.req(Method::POST, &path, Some(&other.key)).send().await.unwrap();
        error_body(res, 404).await;
    }
    let res = app.get(&format!("/portal/submissions/{id}"), &other.key).await;
    error_body(res, 404).await;
    assert_eq!(app.get_ok("/portal/submissions", &other.key).await["data"], json!([]));
}

#[tokio::test]
async fn submissions_list_filters_pages_and_validates() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let key = f.key();
    let good = journey_on(&app, &f, "34ABC123", &[]).await;
    let bad = journey_on(&app, &f, "34REJECT9", &[]).await;
    submit_journey(&app, key, good, Some(10)).await;
    submit_journey(&app, key, bad, Some(10)).await;
    let c = app.post_ok("/portal/cargo", key, cargo(f.vehicle_id), 201).await["id"].as_i64().unwrap();
    submit(&app, key, &format!("/portal/cargo/{c}/submit"), Some(10)).await;

    let all = app.get_ok("/portal/submissions", key).await;
    let ids: Vec<i64> = all["data"].as_array().unwrap().iter().map(|s| s["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first");
    let only = |q: &str| {
        let app = app.api.clone();
        let q = q.to_string();
        async move { app.get_ok(&format!("/portal/submissions?{q}"), key).await["data"].as_array().unwrap().clone() }
    };
    assert_eq!(only("state=failed").await.len(), 1);
    assert_eq!(only("state=failed").await[0]["target_id"], bad);
    assert_eq!(only("state=delivered&target_type=cargo").await.len(), 1);
    assert_eq!(only(&format!("target_type=journey&target_id={good}")).await[0]["state"], "delivered");

    let page = app.get_ok("/portal/submissions?limit=2", key).await;
    assert_eq!((page["data"].as_array().unwrap().len(), page["has_more"].as_bool()), (2, Some(true)));
    let next =
        app.get_ok(&format!("/portal/submissions?limit=2&cursor={}", page["next_cursor"].as_str().unwrap()), key).await;
    assert_eq!((next["data"].as_array().unwrap().len(), next["has_more"].as_bool()), (1, Some(false)));
    assert_eq!(next["data"][0]["id"], ids[2]);

    assert_invalid(app.get("/portal/submissions?state=done", key).await, "state").await;
    assert_invalid(app.get("/portal/submissions?target_type=bus", key).await, "target_type").await;
    assert_invalid(app.get("/portal/submissions?limit=500", key).await, "limit").await;

    // Reading submissions needs submissions:read; submitting needs journeys:write.
    let (_, reader) = app.create_key(key, &["journeys:read"]).await;
    error_body(app.get("/portal/submissions", &reader).await, 403).await;
    let res = app.req(Method::POST, &format!("/portal/journeys/{good}/submit"), Some(&reader)).send().await.unwrap();
    error_body(res, 403).await;
}

#[tokio::test]
async fn downstream_setting_defaults_to_the_sandbox() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let d = app.get_ok("/portal/downstream", &org.key).await;
    assert_eq!((d["adapter"].as_str(), d["updated_at"].is_null()), (Some("sandbox"), true));
    assert_eq!(d["available"], json!(["sandbox", "uetds"]));
    let d = json_of(app.put("/portal/downstream", &org.key, json!({"adapter": "sandbox"})).await, 200).await;
    assert!(d["updated_at"].is_string());
    assert_invalid(app.put("/portal/downstream", &org.key, json!({"adapter": "uetds"})).await, "environment").await;
    assert_invalid(app.put("/portal/downstream", &org.key, json!({"adapter": "nope"})).await, "adapter").await;
    assert_eq!(app.put("/portal/downstream", &org.key, json!({"adaptor": "sandbox"})).await.status(), 422);
    let (_, ops) = app.create_key(&org.key, &["journeys:write"]).await;
    error_body(app.put("/portal/downstream", &ops, json!({"adapter": "sandbox"})).await, 403).await;
}

/// Count submissions by state straight from the database.
async fn states(db: &sqlx::PgPool) -> HashMap<String, i64> {
    sqlx::query_as::<_, (String, i64)>("SELECT state, count(*) FROM submissions GROUP BY state")
        .fetch_all(db)
        .await
        .unwrap()
        .into_iter()
        .collect()
}

/// Queue `n` journeys of `f` on `plate` (created and submitted through the API).
async fn queue_journeys(app: &Api, f: &Fleet, plate: &str, n: usize) -> Vec<i64> {
    use futures::{stream, StreamExt};
    stream::iter(0..n)
        .map(|_| async move {
            let j = journey_on(app, f, plate, &[]).await;
            submit_journey(app, f.key(), j, None).await["submission_id"].as_i64().unwrap()
        })
        .buffer_unordered(16)
        .collect()
        .await
}

async fn wait_until(db: &sqlx::PgPool, what: &str, cond: impl Fn(&HashMap<String, i64>) -> bool) {
    for _ in 0..1200 {
        if cond(&states(db).await) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: still {:?} after 120 s", states(db).await);
}

#[tokio::test]
async fn two_schedulers_on_one_database_never_deliver_twice() {
    let env = Env::new().await.with_scheduler().with(&[("TNS_SCHEDULER_BATCH", "8")]);
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    let ids = queue_journeys(&app, &f, "34ABC123", 300).await;
    let (a, b) = tokio::join!(InProcessScheduler::start(&env), InProcessScheduler::start(&env));
    wait_until(&app.db, "all delivered", |s| s.get("delivered") == Some(&300)).await;
    a.stop().await;
    b.stop().await;
    // One claim and one attempt per submission: neither scheduler sent what the other held.
    let (claims, attempts): (i64, i64) =
        sqlx::query_as("SELECT sum(attempts)::bigint, (SELECT count(*) FROM submission_attempts) FROM submissions")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!((claims, attempts), (300, 300));
    let records = sandbox_records(&env.sandbox_state());
    assert_eq!(records.len(), 300);
    let refs: std::collections::HashSet<String> =
        records.iter().map(|r| r["reference"].as_str().unwrap().to_string()).collect();
    assert_eq!(refs, ids.iter().map(|id| format!("tns-{id}")).collect());
}

#[tokio::test]
async fn one_tenants_backlog_does_not_hold_up_another_tenant() {
    let env = Env::new().await.with_scheduler().with(&[
        ("TNS_SCHEDULER_BATCH", "16"),
        ("TNS_SCHEDULER_MAX_IN_FLIGHT", "32"),
        ("TNS_ADAPTER_CONCURRENCY", "32"),
        ("TNS_QUOTA_ENABLED", "false"),
    ]);
    let app = TestApp::start(env.clone()).await;
    let busy = Fleet::new(&app).await;
    let backlog = 1000;
    queue_journeys(&app, &busy, "34SLOW40", backlog).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    wait_until(&app.db, "the backlog is being worked", |s| s.get("delivered").copied().unwrap_or(0) >= 64).await;

    let quiet = Fleet::new(&app).await;
    let j = journey_on(&app, &quiet, "34ABC123", &[]).await;
    let count_busy = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM submissions WHERE org_id = $1 AND state = 'delivered'")
            .bind(busy.org.id)
            .fetch_one(&app.db)
            .await
            .unwrap()
    };
    let before = count_busy().await;
    let s = submit_journey(&app, quiet.key(), j, Some(30)).await;
    assert_eq!(s["status"], "delivered");
    let overtook = count_busy().await - before;
    // FIFO would have made it wait for the whole backlog; fair claims take it within a round or
    // two (what was in flight, plus two claims of 16, plus what finished meanwhile).
    assert!(overtook < 160, "{overtook} of the other tenant's submissions went first");
    assert!(count_busy().await < backlog as i64 - 500, "the backlog was still long when it went through");
}

#[tokio::test]
async fn sigterm_finishes_in_flight_work_and_kill_9_loses_nothing() {
    // A burst of 1000 slow submissions; the first scheduler process is killed with SIGKILL
    // while it holds some, a second one takes over after their leases run out and looks each
    // one up before sending.
    let env = Env::new().await.with_scheduler().with(&[
        ("TNS_ADAPTER_TIMEOUT_SECS", "2"),
        ("TNS_SCHEDULER_LEASE_SECS", "4"),
        ("TNS_SCHEDULER_MAX_IN_FLIGHT", "64"),
        ("TNS_QUOTA_ENABLED", "false"),
    ]);
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    queue_journeys(&app, &f, "34SLOW100", 1000).await;

    let mut first = tns_command("scheduler", &env).stdout(std::process::Stdio::null()).spawn().unwrap();
    wait_until(&app.db, "the first scheduler is delivering", |s| s.get("delivered").copied().unwrap_or(0) >= 100).await;
    first.start_kill().unwrap(); // SIGKILL
    first.wait().await.unwrap();
    // A statement the killed process had sent still commits on the server (a claim in
    // particular); count what it held only once its sessions are gone.
    wait_for_sessions_gone(&app.db, "tns-scheduler").await;
    let held: i64 =
        sqlx::query_scalar("SELECT count(*) FROM submissions WHERE lease_token IS NOT NULL AND state = 'pending'")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert!(held > 0, "killed while holding submissions");

    let mut second = tns_command("scheduler", &env).stdout(std::process::Stdio::null()).spawn().unwrap();
    wait_until(&app.db, "all delivered", |s| s.get("delivered") == Some(&1000)).await;
    let abandoned: i64 = sqlx::query_scalar("SELECT count(*) FROM submission_attempts WHERE outcome = 'abandoned'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(abandoned, held, "each submission the killed scheduler held is recorded as abandoned");
    let records = sandbox_records(&env.sandbox_state());
    let mut per_ref: HashMap<String, usize> = HashMap::new();
    for r in &records {
        *per_ref.entry(r["reference"].as_str().unwrap().to_string()).or_default() += 1;
    }
    assert_eq!(per_ref.len(), 1000, "every submission recorded by the sandbox");
    assert!(per_ref.values().all(|n| *n == 1), "none recorded twice");

    // SIGTERM with work in flight: the scheduler stops claiming, finishes what it holds and
    // exits cleanly; nothing stays leased.
    queue_journeys(&app, &f, "34SLOW1500", 20).await;
    for _ in 0..100 {
        let leased: i64 = sqlx::query_scalar("SELECT count(*) FROM submissions WHERE lease_token IS NOT NULL")
            .fetch_one(&app.db)
            .await
            .unwrap();
        if leased == 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = second.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = tokio::time::timeout(Duration::from_secs(30), second.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status}");
    let leased: i64 = sqlx::query_scalar("SELECT count(*) FROM submissions WHERE lease_token IS NOT NULL")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(leased, 0);
    assert_eq!(states(&app.db).await.get("delivered"), Some(&1020), "what it held was finished, not dropped");
}

/// PostgreSQL cut for 10 s while the scheduler delivers slow submissions (its connections
/// closed, new ones refused): the process stays up and says it is not ready, recovers by itself
/// once the database answers, and every submission is delivered exactly once — what it had sent
/// when the cut came, and could not record, is looked up by the next claim, not sent again.
#[tokio::test]
async fn a_database_outage_mid_delivery_loses_nothing_and_sends_nothing_twice() {
    let env = Env::new().await.with_scheduler().with(&[
        ("TNS_ADAPTER_TIMEOUT_SECS", "2"),
        ("TNS_SCHEDULER_LEASE_SECS", "4"),
        ("TNS_SCHEDULER_MAX_IN_FLIGHT", "32"),
        ("TNS_QUOTA_ENABLED", "false"),
    ]);
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    queue_journeys(&app, &f, "34SLOW100", 300).await;
    let proxy = ChaosProxy::start("127.0.0.1:5432").await;
    let through = proxy.url_for(env.get("TNS_DATABASE_URL"));
    let scheduler =
        Proc::start("scheduler", &env.with(&[("TNS_DATABASE_URL", &through), ("TNS_MIGRATE_ON_START", "false")])).await;
    let ready = || async { scheduler.get_anon("/readyz").await.status().as_u16() };
    wait_until(&app.db, "the scheduler is delivering", |s| s.get("delivered").copied().unwrap_or(0) >= 30).await;

    proxy.refuse();
    let held: i64 =
        sqlx::query_scalar("SELECT count(*) FROM submissions WHERE lease_token IS NOT NULL AND state = 'pending'")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert!(held > 0, "the cut comes with submissions in flight");
    let down = eventually(Duration::from_secs(30), || async { (ready().await == 503).then_some(()) }).await;
    assert!(down.is_some(), "the scheduler says it is not ready while the database is cut");
    // The outage's length (longer than a lease, so what was held when it came is given up), not
    // a wait for an outcome.
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(scheduler.get_anon("/healthz").await.status(), 200, "up throughout");
    proxy.restore();

    // All 300 delivered: none failed for an outage of TNS's own database.
    wait_until(&app.db, "all delivered after the outage", |s| s.get("delivered") == Some(&300)).await;
    let up = eventually(Duration::from_secs(30), || async { (ready().await == 200).then_some(()) }).await;
    assert!(up.is_some(), "ready again by itself");
    let records = sandbox_records(&env.sandbox_state());
    let mut per_ref: HashMap<String, usize> = HashMap::new();
    for r in &records {
        *per_ref.entry(r["reference"].as_str().unwrap().to_string()).or_default() += 1;
    }
    assert_eq!(per_ref.len(), 300, "every submission recorded by the sandbox");
    let twice: Vec<_> = per_ref.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "sent twice: {twice:?}");
}

async fn wait_for_sessions_gone(db: &sqlx::PgPool, application_name: &str) {
    for _ in 0..200 {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
        )
        .bind(application_name)
        .fetch_one(db)
        .await
        .unwrap();
        if n == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{application_name} sessions still open 5 s after the process died");
}

/// A client that knows only the documented API: a journey in its documented shape (no crew),
/// its passengers, a submit, and the submission delivered; a non-scheduled trip without crew the same way. What
/// U-ETDS will want but the journeys lack comes back as warnings.
#[tokio::test]
async fn spec_shaped_journeys_are_delivered_with_warnings_never_refused() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let org = app.register().await;
    let key = org.key.as_str();
    app.post_ok("/portal/vehicles", key, vehicle("34SPEC01"), 201).await;

    let scheduled = app.post_ok("/portal/journeys", key, journey(json!("34SPEC01")), 201).await;
    assert_eq!((scheduled["status"].as_str(), scheduled["trip_kind"].as_str()), (Some("draft"), Some("tarifeli")));
    let id = scheduled["id"].as_i64().unwrap();
    app.post_ok(&format!("/portal/journeys/{id}/passengers"), key, passenger(1), 201).await;
    let s = submit_journey(&app, key, id, Some(10)).await;
    assert_eq!(s["status"], "delivered", "{s}");
    let codes = |s: &Value| -> Vec<String> {
        s["warnings"].as_array().unwrap().iter().map(|w| w["code"].as_str().unwrap().to_string()).collect()
    };
    assert!(codes(&s).contains(&"no_driver".to_string()) && !codes(&s).contains(&"no_passengers".to_string()), "{s}");
    let listed = app.get_ok("/portal/submissions", key).await;
    assert_eq!(listed["data"][0]["state"], "delivered");
    assert_eq!(listed["data"][0]["target_type"], "journey");
    assert!(listed["data"][0]["downstream_reference"].is_string());

    let open = app.post_ok("/portal/journeys", key, tarifesiz(json!("34SPEC02")), 201).await;
    assert_eq!(open["trip_kind"], "tarifesiz");
    assert!(open["tarifeli_context"].is_null());
    let s = submit_journey(&app, key, open["id"].as_i64().unwrap(), Some(10)).await;
    assert_eq!(s["status"], "delivered", "{s}");
    assert!(codes(&s).contains(&"no_passengers".to_string()), "{s}");
    // The sandbox took both as U-ETDS would, crew or not.
    let kinds: Vec<String> =
        sandbox_records(&env.sandbox_state()).iter().map(|r| r["kind"].as_str().unwrap().to_string()).collect();
    assert_eq!(kinds, ["journey", "journey"]);
}

#[tokio::test]
async fn a_drained_scheduler_leaves_every_submission_final() {
    // No scheduler in the background: the test drives the queue itself.
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let f = Fleet::new(&app).await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let id = journey_on(&app, &f, "34ABC123", &[passenger(60 + n)]).await;
        ids.push(submit_journey(&app, f.key(), id, None).await["submission_id"].as_i64().unwrap());
    }
    drain(&env).await;
    for id in ids {
        let s = app.get_ok(&format!("/portal/submissions/{id}"), f.key()).await;
        assert_eq!(s["state"], "delivered", "{s}");
    }
}

#[tokio::test]
async fn the_sandbox_answers_pre_flight_checks_by_its_magic_values() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let key = f.key();
    // More checks than there are kinds is refused, naming the field, and changes nothing.
    let twice =
        json!({"mode": "refuse", "checks": ["identity", "identity", "identity", "identity", "identity", "identity"]});
    let refused = error_body(app.put("/portal/downstream/preflight", key, twice).await, 422).await;
    assert!(refused["detail"].as_str().unwrap().contains("checks"), "{refused}");
    assert_eq!(app.get_ok("/portal/downstream/preflight", key).await["mode"], "off");
    app.put("/portal/downstream/preflight", key, json!({"mode": "warn"})).await.error_for_status().unwrap();
    let mut odd = passenger(71);
    odd["last_name"] = json!("Mismatch");
    let id = journey_on(&app, &f, "34EXPIRED1", &[passenger(70), odd]).await;
    let s = submit_journey(&app, key, id, Some(10)).await;
    let sub = app.get_ok(&format!("/portal/submissions/{}", s["submission_id"]), key).await;
    assert_eq!(sub["state"], "delivered", "warnings never hold a submission back: {sub}");
    let failed: Vec<&str> = sub["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "check_failed")
        .map(|w| w["field"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["vehicle_id", "passengers[1]"], "{sub}");

    // Refused while they fail, with the field named; another organization's policy is its own.
    app.put("/portal/downstream/preflight", key, json!({"mode": "refuse"})).await.error_for_status().unwrap();
    let again = journey_on(&app, &f, "34EXPIRED1", &[passenger(72)]).await;
    let res = app.req(Method::POST, &format!("/portal/journeys/{again}/submit"), Some(key)).send().await.unwrap();
    assert_invalid(res, "vehicle_id").await;
    let other = Fleet::new(&app).await;
    let theirs = journey_on(&app, &other, "34EXPIRED1", &[passenger(73)]).await;
    let s = submit_journey(&app, other.key(), theirs, Some(10)).await;
    let sub = app.get_ok(&format!("/portal/submissions/{}", s["submission_id"]), other.key()).await;
    assert!(sub["warnings"].as_array().unwrap().iter().all(|w| w["code"] != "check_failed"), "{sub}");
}

#[tokio::test]
async fn attempts_go_with_their_submissions_when_an_organization_is_deleted() {
    // submission_attempts keeps no foreign keys (they cost the scheduler a check per attempt);
    // a statement trigger on submissions removes attempts with their submission.
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let (gone, kept) = (Fleet::new(&app).await, Fleet::new(&app).await);
    for f in [&gone, &kept] {
        let id = journey_on(&app, f, "34ABC123", &[passenger(70)]).await;
        submit_journey(&app, f.key(), id, None).await;
    }
    drain(&env).await;
    let db = env.pool().await;
    let attempts = |org: i64| {
        let db = db.clone();
        async move {
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM submission_attempts a JOIN submissions s ON s.id = a.submission_id
                  WHERE s.org_id = $1 AND a.org_id = $1",
            )
            .bind(org)
            .fetch_one(&db)
            .await
            .unwrap()
        }
    };
    assert_eq!((attempts(gone.org.id).await, attempts(kept.org.id).await), (1, 1));
    let before: i64 = sqlx::query_scalar("SELECT count(*) FROM submission_attempts").fetch_one(&db).await.unwrap();
    // Deleting the organization cascades to its submissions, and the trigger to their attempts.
    sqlx::query("DELETE FROM organizations WHERE id = $1").bind(gone.org.id).execute(&db).await.unwrap();
    let after: i64 = sqlx::query_scalar("SELECT count(*) FROM submission_attempts").fetch_one(&db).await.unwrap();
    let orphans: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM submission_attempts a WHERE NOT EXISTS (SELECT 1 FROM submissions s WHERE s.id = a.submission_id)",
    )
    .fetch_one(&db)
    .await
    .unwrap();
    assert_eq!((before - after, orphans), (1, 0));
    assert_eq!(attempts(kept.org.id).await, 1);
}
