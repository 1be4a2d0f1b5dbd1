//! The U-ETDS adapter end to end: the API, a scheduler calling the real `libtns_adapter_uetds.so`,
//! and a fake U-ETDS on loopback that judges every request as the gateway would (path,
//! SOAPAction, Basic auth, `<wsuser>`, namespaces, the published XSDs through xmllint) and
//! keeps what it was sent. Each test asserts on the fake's state: what U-ETDS would hold.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};
use tns::config::Role;
use tns_jobs::drift::{self, DriftCheck};
use tns_uetds_fake::{Behaviour, FakeUetds, Status, TEST_PASSWORD, TEST_USER};

use crate::{fixtures::*, helpers::*};

/// An organization on U-ETDS's test environment, its API, and a scheduler, against a fake.
struct Setup {
    fake: FakeUetds,
    app: TestApp,
    _scheduler: InProcessScheduler,
    f: Fleet,
}

impl Setup {
    async fn new() -> Setup {
        Setup::with(&[]).await
    }

    async fn with(overrides: &[(&str, &str)]) -> Setup {
        Setup::as_firm(overrides, TEST_USER, TEST_PASSWORD).await
    }

    /// With the organization's U-ETDS account `user` / `password` (the fake knows it).
    async fn as_firm(overrides: &[(&str, &str)], user: &str, password: &str) -> Setup {
        // On its own thread: the plugin's blocking calls must not wait on this test's runtime.
        let fake = FakeUetds::start_background();
        fake.add_account(user, password);
        let base = fake.base_url();
        let env = Env::new()
            .await
            .with_scheduler()
            .with(&[("TNS_ADAPTER_UETDS_BASE_URL", base.as_str()), ("TNS_ADAPTER_TIMEOUT_SECS", "4")])
            .with(overrides);
        let app = TestApp::start(env.clone()).await;
        let scheduler = InProcessScheduler::start(&env).await;
        let f = Fleet::new(&app).await;
        let creds = json!({"adapter": "uetds", "environment": "test", "ws_username": user, "ws_password": password});
        json_of(app.put("/portal/downstream", f.key(), creds).await, 200).await;
        Setup { fake, app, _scheduler: scheduler, f }
    }

    fn key(&self) -> &str {
        self.f.key()
    }

    /// A non-scheduled journey with the fleet's driver and these passengers; its id.
    async fn tarifesiz(&self, plate: &str, passengers: &[Value]) -> i64 {
        let mut body = tarifesiz(json!(plate));
        body["personnel_ids"] = json!([self.f.driver_id]);
        self.journey(body, passengers).await
    }

    async fn journey(&self, body: Value, passengers: &[Value]) -> i64 {
        let id = self.app.post_ok("/portal/journeys", self.key(), body, 201).await["id"].as_i64().unwrap();
        if !passengers.is_empty() {
            let path = format!("/portal/journeys/{id}/passengers:bulk-upsert");
            self.app.post_ok(&path, self.key(), json!({ "passengers": passengers }), 200).await;
        }
        id
    }

    /// POST an action (submit, cancel) and wait for its submission to finish; the submission.
    async fn act(&self, path: &str) -> Value {
        let res = self.app.req(Method::POST, path, Some(self.key())).header("Prefer", "wait=20").send().await.unwrap();
        let out = json_of(res, 202).await;
        let id = out["submission_id"].as_i64().unwrap();
        self.app.get_ok(&format!("/portal/submissions/{id}"), self.key()).await
    }

    async fn submit(&self, journey: i64) -> Value {
        self.act(&format!("/portal/journeys/{journey}/submit")).await
    }

    /// What the submission sent as our reference.
    fn reference(sub: &Value) -> String {
        format!("tns-{}", sub["id"])
    }
}

fn outcomes(sub: &Value) -> Vec<String> {
    sub["history"].as_array().unwrap().iter().map(|a| a["outcome"].as_str().unwrap().to_string()).collect()
}

fn passport(n: &str) -> Value {
    json!({"first_name": "John", "last_name": "Smith", "identity_number": n, "gender": "E", "nationality": "GB",
           "boarding_place_code": KADIKOY, "destination_place_code": CEYHAN, "seat_no": "3"})
}

#[tokio::test]
async fn credentials_are_checked_with_u_etds_before_they_are_saved() {
    let fake = FakeUetds::start_background();
    let base = fake.base_url();
    let app = TestApp::start(Env::new().await.with_scheduler().with(&[("TNS_ADAPTER_UETDS_BASE_URL", &base)])).await;
    let org = app.register().await;
    let put = |body: Value| app.put("/portal/downstream", &org.key, body);

    // Wrong password: U-ETDS's own words, nothing saved.
    let wrong = json!({"adapter": "uetds", "environment": "test", "ws_username": TEST_USER, "ws_password": "nope"});
    let b = error_body(put(wrong).await, 422).await;
    assert_eq!(b["field"], "ws_password");
    assert!(b["detail"].as_str().unwrap().contains("KULLANICI ADI YADA SIFRE HATALI"), "{b}");
    assert_eq!(app.get_ok("/portal/downstream", &org.key).await["adapter"], "sandbox");

    // Each credential field is required for U-ETDS, and only for it.
    assert_invalid(
        put(json!({"adapter": "uetds", "environment": "test", "ws_username": TEST_USER})).await,
        "ws_password",
    )
    .await;
    assert_invalid(
        put(json!({"adapter": "uetds", "environment": "staging", "ws_username": "1", "ws_password": "x"})).await,
        "environment",
    )
    .await;
    assert_invalid(put(json!({"adapter": "sandbox", "ws_username": TEST_USER})).await, "ws_username").await;

    // Right ones: saved, the user name shown, the password never, and sealed at rest.
    let right =
        json!({"adapter": "uetds", "environment": "test", "ws_username": TEST_USER, "ws_password": TEST_PASSWORD});
    let d = json_of(put(right).await, 200).await;
    assert_eq!(
        (d["adapter"].as_str(), d["environment"].as_str(), d["ws_username"].as_str()),
        (Some("uetds"), Some("test"), Some(TEST_USER))
    );
    assert!(!d.to_string().contains(TEST_PASSWORD));
    assert_eq!(app.get_ok("/portal/me", &org.key).await["organization"]["ws_username"], TEST_USER);
    // The fields as the plugin describes them: the password among the secrets, sealed.
    let (fields, secrets): (Value, Value) =
        sqlx::query_as("SELECT fields, secrets FROM downstream_settings WHERE org_id = $1")
            .bind(org.id)
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(fields, json!({"environment": "test", "ws_username": TEST_USER}));
    let sealed = secrets["ws_password"].as_str().unwrap();
    let sealed = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, sealed).unwrap();
    assert!(!sealed.windows(TEST_PASSWORD.len()).any(|w| w == TEST_PASSWORD.as_bytes()), "sealed, not in the clear");
    assert!(!secrets.to_string().contains(TEST_PASSWORD));
    let checks = fake.requests_for("kullaniciKontrol");
    assert_eq!(checks.len(), 2);
    assert!(checks.iter().all(|r| r.path == "/services/g2g/kdgm/test/uetdsarizi"));
    fake.assert_no_violations();

    // Back to the sandbox: nothing half-set stays behind.
    json_of(put(json!({"adapter": "sandbox"})).await, 200).await;
    let left: (Value, Value) = sqlx::query_as("SELECT fields, secrets FROM downstream_settings WHERE org_id = $1")
        .bind(org.id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(left, (json!({}), json!({})));
    assert_eq!(app.get_ok("/portal/me", &org.key).await["organization"]["ws_username"], Value::Null);

    // U-ETDS unreachable: 503, nothing saved.
    let closed =
        TestApp::start(Env::new().await.with_scheduler().with(&[("TNS_ADAPTER_UETDS_BASE_URL", "http://127.0.0.1:9")]))
            .await;
    let org = closed.register().await;
    let right =
        json!({"adapter": "uetds", "environment": "test", "ws_username": TEST_USER, "ws_password": TEST_PASSWORD});
    error_body(closed.put("/portal/downstream", &org.key, right).await, 503).await;
    assert_eq!(closed.get_ok("/portal/downstream", &org.key).await["adapter"], "sandbox");
}

#[tokio::test]
async fn an_organization_cannot_use_us_to_guess_u_etds_passwords() {
    let fake = FakeUetds::start_background();
    let app = TestApp::start(Env::new().await.with(&[("TNS_ADAPTER_UETDS_BASE_URL", &fake.base_url())])).await;
    let (org, other) = (app.register().await, app.register().await);
    let guess = |n: usize| json!({"adapter": "uetds", "environment": "test", "ws_username": TEST_USER, "ws_password": format!("guess{n}")});
    for n in 0..10 {
        error_body(app.put("/portal/downstream", &org.key, guess(n)).await, 422).await;
    }
    let res = app.put("/portal/downstream", &org.key, guess(10)).await;
    assert!(res.headers().contains_key("retry-after"));
    error_body(res, 429).await;
    assert_eq!(fake.requests_for("kullaniciKontrol").len(), 10, "the eleventh never reached U-ETDS");
    // Another organization's checks are its own.
    error_body(app.put("/portal/downstream", &other.key, guess(0)).await, 422).await;
}

#[tokio::test]
async fn a_non_scheduled_journey_goes_through_every_step_and_later_changes_follow() {
    let s = Setup::new().await;
    let (p1, p2, foreigner) = (passenger(11), passenger(12), passport("U1234567"));
    let id = s.tarifesiz(&s.f.plate, &[p1.clone(), p2.clone(), foreigner]).await;
    let sub = s.submit(id).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    assert_eq!(outcomes(&sub), ["delivered"]);
    s.fake.assert_no_violations();

    // What U-ETDS holds: one trip under our reference, its group, the driver, three passengers.
    let reference = Setup::reference(&sub);
    let trips = s.fake.trips_with_firma_sefer_no(&reference);
    assert_eq!(trips.len(), 1, "one trip, declared once");
    let trip = &trips[0];
    assert_eq!(sub["downstream_reference"], trip.reference.to_string());
    assert_eq!((trip.plate.as_str(), trip.departure_time.as_str()), (s.f.plate.as_str(), "08:30"));
    assert_eq!(trip.departure_date.to_string(), "2026-12-01");
    let groups: Vec<_> = trip.valid_groups().collect();
    assert_eq!(groups.len(), 1);
    assert_eq!((groups[0].start_province, groups[0].start_district), (ISTANBUL, KADIKOY));
    assert_eq!((groups[0].end_province, groups[0].end_district), (ADANA, CEYHAN));
    assert_eq!(groups[0].end_place, "Ceyhan");
    let crew: Vec<_> = trip.active_crew().collect();
    assert_eq!(crew.len(), 1);
    assert_eq!((crew[0].kind, crew[0].identity.as_str()), (0, tckn(s.f.org.id as u64 * 10 + 1).as_str()));
    let held: Vec<(String, String)> =
        trip.valid_passengers().map(|p| (p.identity.clone(), p.nationality.clone())).collect();
    assert_eq!(held.len(), 3);
    assert!(held.contains(&("U1234567".to_string(), "GB".to_string())), "{held:?}");
    assert!(held.contains(&(tckn(11), "TR".to_string())), "{held:?}");
    for op in ["seferEkle", "seferGrupEkle", "personelEkle", "yolcuEkleCoklu"] {
        assert_eq!(s.fake.calls(op), 1, "{op} called once");
    }
    // Each passenger's U-ETDS reference is on the submission.
    let refs: Vec<String> = trip.valid_passengers().map(|p| p.ticket_ref.to_string()).collect();
    let results = sub["passengers"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| refs.contains(&r["downstream_reference"].as_str().unwrap().to_string())));

    // The report is U-ETDS's PDF.
    let res = s.app.req(Method::GET, &format!("/portal/journeys/{id}/report"), Some(s.key())).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/pdf");
    assert!(res.bytes().await.unwrap().starts_with(b"%PDF"));

    // Later changes: a later departure, one passenger removed, one changed, one added.
    let path = format!("/portal/journeys/{id}");
    json_of(s.app.put(&path, s.key(), json!({"departure": {"time": "09:15"}})).await, 200).await;
    let list = s.app.get_ok(&format!("/portal/journeys/{id}/passengers"), s.key()).await;
    let pid = |identity: &str| {
        list["data"].as_array().unwrap().iter().find(|p| p["identity_number"] == identity).unwrap()["id"]
            .as_i64()
            .unwrap()
    };
    let removed = s.app.delete(&format!("/portal/journeys/{id}/passengers/{}", pid(&tckn(11))), s.key()).await;
    assert_eq!(removed.status(), 200);
    let changed = s
        .app
        .put(&format!("/portal/journeys/{id}/passengers/{}", pid(&tckn(12))), s.key(), json!({"seat_no": "44"}))
        .await;
    assert_eq!(changed.status(), 200);
    s.app.post_ok(&format!("/portal/journeys/{id}/passengers"), s.key(), passenger(13), 201).await;
    let amendment = s.submit(id).await;
    assert_eq!(
        (amendment["operation"].as_str(), amendment["state"].as_str()),
        (Some("amendment"), Some("delivered")),
        "{amendment}"
    );
    s.fake.assert_no_violations();
    let trip = s.fake.trip(trip.reference).unwrap();
    assert_eq!(trip.departure_time, "09:15", "seferGuncelle");
    assert_eq!(trip.firma_sefer_no, reference, "the update keeps the trip's own number");
    let mut held: Vec<(String, Option<String>)> =
        trip.valid_passengers().map(|p| (p.identity.clone(), p.seat.clone())).collect();
    held.sort();
    let mut want = vec![
        ("U1234567".to_string(), Some("3".to_string())),
        (tckn(12), Some("44".to_string())),
        (tckn(13), Some("12".to_string())),
    ];
    want.sort();
    assert_eq!(held, want, "removed and old entries cancelled, new ones added");
    assert_eq!(s.fake.calls("yolcuIptalUetdsYolcuRefNoIle"), 2);
    assert_eq!(s.fake.calls("seferEkle"), 1, "no second trip");

    // Cancellation: downstream, then the journey takes nothing more.
    let cancel = s.act(&format!("/portal/journeys/{id}/cancel")).await;
    assert_eq!(
        (cancel["operation"].as_str(), cancel["state"].as_str()),
        (Some("cancel"), Some("delivered")),
        "{cancel}"
    );
    let trip = s.fake.trip(trip.reference).unwrap();
    assert_eq!(trip.status.label(), "İptal");
    assert_eq!(s.app.get_ok(&path, s.key()).await["status"], "cancelled");
    error_body(s.app.put(&path, s.key(), json!({"departure": {"time": "10:00"}})).await, 409).await;
    let again = s.app.req(Method::POST, &format!("{path}/submit"), Some(s.key())).send().await.unwrap();
    error_body(again, 409).await;
    // Cancelling again answers the same cancellation.
    let res = s.app.req(Method::POST, &format!("{path}/cancel"), Some(s.key())).send().await.unwrap();
    assert_eq!(json_of(res, 202).await["submission_id"], cancel["id"]);
    assert_eq!(s.fake.calls("seferIptal"), 1);
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn code_88_keeps_each_passengers_result_and_only_the_refused_go_again() {
    let s = Setup::new().await;
    s.fake.refuse_passenger(&tckn(22), "Yolcu kimlik bilgisi doğrulanamadı");
    let id = s.tarifesiz(&s.f.plate, &[passenger(21), passenger(22), passenger(23)]).await;
    let sub = s.submit(id).await;
    assert_eq!(sub["state"], "delivered");
    assert_eq!(outcomes(&sub), ["partial"]);
    assert!(sub["error_message"].as_str().unwrap().contains("Yolcu kimlik bilgisi doğrulanamadı"), "{sub}");
    let refused: Vec<&Value> = sub["passengers"].as_array().unwrap().iter().filter(|p| !p["error"].is_null()).collect();
    assert_eq!(refused.len(), 1);

    // Submitting again sends the refused passenger alone.
    s.fake.accept_passenger(&tckn(22));
    let again = s.submit(id).await;
    assert_eq!((again["operation"].as_str(), again["state"].as_str()), (Some("amendment"), Some("delivered")));
    let batches = s.fake.requests_for("yolcuEkleCoklu");
    assert_eq!(batches.len(), 2);
    let second = batches[1].element.as_ref().unwrap().children_named("yolcuBilgileri").count();
    assert_eq!(second, 1, "only the refused passenger is sent again");
    let trip = &s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub))[0];
    assert_eq!(trip.valid_passengers().count(), 3);
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn an_answer_lost_after_the_write_is_found_never_sent_again() {
    let s = Setup::new().await;
    // The trip is stored but its answer lost; then the passengers' answer is lost too.
    s.fake.script("seferEkle", 1, Behaviour::LoseAnswer);
    s.fake.script("yolcuEkleCoklu", 1, Behaviour::LoseAnswer);
    let id = s.tarifesiz(&s.f.plate, &[passenger(31), passenger(32)]).await;
    let sub = s.submit(id).await;
    let sub = if sub["state"] == "pending" { final_state(&s, &sub).await } else { sub };
    assert_eq!(sub["state"], "delivered", "{sub}");
    let trips = s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub));
    assert_eq!(trips.len(), 1, "the lost trip was found, not declared again");
    assert_eq!(trips[0].valid_passengers().count(), 2, "the lost passengers were found, not added again");
    assert_eq!(s.fake.calls("seferEkle"), 1);
    assert_eq!(s.fake.calls("yolcuEkleCoklu"), 1);
    assert!(s.fake.calls("seferBildirimListele") >= 1 && s.fake.calls("bildirimOzeti") >= 1, "looked up");
    let history = outcomes(&sub);
    assert_eq!(history.first().map(String::as_str), Some("transient"), "{history:?}");
    assert_eq!(history.last().map(String::as_str), Some("found"), "{history:?}");
    s.fake.assert_no_violations();
}

/// Poll a submission until it is final.
async fn final_state(s: &Setup, sub: &Value) -> Value {
    let path = format!("/portal/submissions/{}", sub["id"]);
    for _ in 0..400 {
        let now = s.app.get_ok(&path, s.key()).await;
        if now["state"] != "pending" {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{path} still pending after 20 s");
}

#[tokio::test]
async fn each_kind_of_failure_is_classified() {
    let s = Setup::new().await;

    // A business refusal: failed at once with U-ETDS's message.
    s.fake.script(
        "seferEkle",
        1,
        Behaviour::business(34, "Girilen plaka Bakanlık kayıtlarında herhangi bir yetki belgesine kayıtlı değil!"),
    );
    let sub = s.submit(s.tarifesiz("34REF001", &[]).await).await;
    assert_eq!((sub["state"].as_str(), outcomes(&sub)), (Some("failed"), vec!["permanent".to_string()]));
    assert!(sub["error_message"].as_str().unwrap().contains("yetki belgesine kayıtlı değil"), "{sub}");

    // The gateway refusing the credentials: a configuration failure saying what to fix.
    s.fake.script("seferEkle", 1, Behaviour::Status(401));
    let sub = s.submit(s.tarifesiz("34CFG001", &[]).await).await;
    assert_eq!((sub["state"].as_str(), outcomes(&sub)), (Some("failed"), vec!["configuration".to_string()]));
    assert!(sub["error_message"].as_str().unwrap().contains("PUT /portal/downstream"), "{sub}");

    // An HTML page, a SOAP fault, an empty answer: transient, retried, delivered once.
    s.fake.script("seferEkle", 1, Behaviour::Html);
    s.fake.script("seferEkle", 1, Behaviour::fault("Server", "Servis geçici olarak kullanılamıyor"));
    s.fake.script("seferEkle", 1, Behaviour::Empty);
    let sub = s.submit(s.tarifesiz("34TRN001", &[]).await).await;
    let sub = if sub["state"] == "pending" { final_state(&s, &sub).await } else { sub };
    assert_eq!(sub["state"], "delivered", "{sub}");
    assert_eq!(&outcomes(&sub)[..3], ["transient", "transient", "transient"]);
    assert_eq!(s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub)).len(), 1);

    // The connection reset before an answer, nothing done: uncertain, so looked up, found
    // missing, sent again, declared once.
    s.fake.script("seferEkle", 1, Behaviour::Reset);
    let sub = s.submit(s.tarifesiz("34RST001", &[]).await).await;
    let sub = if sub["state"] == "pending" { final_state(&s, &sub).await } else { sub };
    assert_eq!(sub["state"], "delivered", "{sub}");
    assert_eq!(s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub)).len(), 1, "declared once");
    assert!(["transient", "timeout"].contains(&outcomes(&sub)[0].as_str()), "{:?}", outcomes(&sub));

    // A hang past the call's timeout: outcome unknown, looked up, not sent twice.
    s.fake.script("seferEkle", 1, Behaviour::HangAfterWrite(Duration::from_secs(5)));
    let sub = s.submit(s.tarifesiz("34HNG001", &[]).await).await;
    let sub = if sub["state"] == "pending" { final_state(&s, &sub).await } else { sub };
    assert_eq!(sub["state"], "delivered", "{sub}");
    assert_eq!(s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub)).len(), 1, "declared once");
    assert!(outcomes(&sub).iter().any(|o| o == "transient" || o == "timeout"), "{:?}", outcomes(&sub));
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn faults_are_taken_by_whose_side_they_name_and_a_repeating_one_fails_on_its_third_time() {
    let s = Setup::new().await;

    // Refused before it was processed (the request's side), an operation the service does not
    // have, a body its schema rejects: failed at once with the service's message, sent once.
    let refusals = [
        ("34CLI001", Behaviour::fault("Client", "Geçersiz istek: aracPlaka boş olamaz"), "aracPlaka boş olamaz"),
        (
            "34OPS001",
            Behaviour::fault("Server", "Cannot find dispatch method for {http://uetds.unetws.udhb.gov.tr/}seferEkle"),
            "Cannot find dispatch method",
        ),
        (
            "34XSD001",
            Behaviour::fault("Server", "Unmarshalling Error: cvc-datatype-valid.1.2.1"),
            "Unmarshalling Error",
        ),
    ];
    for (plate, behaviour, words) in refusals {
        s.fake.script("seferEkle", 1, behaviour);
        let sub = s.submit(s.tarifesiz(plate, &[]).await).await;
        assert_eq!((sub["state"].as_str(), outcomes(&sub)), (Some("failed"), vec!["permanent".to_string()]), "{sub}");
        assert!(sub["error_message"].as_str().unwrap().contains(words), "{sub}");
    }
    assert_eq!(s.fake.calls("seferEkle"), 3, "none sent again");

    // A program error on the service's side may pass: tried again, but the third time in a row
    // it is taken for what it looks like.
    s.fake.script("seferEkle", 3, Behaviour::fault("Server", "java.lang.NullPointerException"));
    let sub = s.submit(s.tarifesiz("34NPE001", &[]).await).await;
    let sub = if sub["state"] == "pending" { final_state(&s, &sub).await } else { sub };
    assert_eq!(sub["state"], "failed", "{sub}");
    assert_eq!(outcomes(&sub), ["transient", "transient", "permanent"]);
    assert!(sub["error_message"].as_str().unwrap().contains("3 attempts in a row"), "{sub}");
    assert!(sub["error_message"].as_str().unwrap().contains("NullPointerException"), "{sub}");
    assert_eq!(s.fake.calls("seferEkle"), 6);

    // Another error between two of them starts the count again: the fourth attempt delivers.
    s.fake.script("seferEkle", 2, Behaviour::fault("Server", "java.lang.NullPointerException"));
    s.fake.script("seferEkle", 1, Behaviour::fault("Server", "Servis geçici olarak kullanılamıyor"));
    let sub = s.submit(s.tarifesiz("34NPE002", &[]).await).await;
    let sub = if sub["state"] == "pending" { final_state(&s, &sub).await } else { sub };
    assert_eq!(sub["state"], "delivered", "{sub}");
    assert_eq!(&outcomes(&sub)[..3], ["transient", "transient", "transient"]);
    assert_eq!(s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub)).len(), 1);
    s.fake.assert_no_violations();
}

/// `tns admin resolve …` as an operator would run it: again while the submission is being
/// looked up that moment (it is refused then, so a look-up's result cannot cross the
/// resolution).
async fn resolve(s: &Setup, args: &[&str]) -> Result<Vec<Value>, String> {
    let mut all = vec!["resolve"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--operator", "ayse"]);
    for _ in 0..100 {
        match tns_admin(&s.app.env, &all).await {
            Err(e) if e.contains("being looked up") => tokio::time::sleep(Duration::from_millis(50)).await,
            other => return other,
        }
    }
    panic!("still being looked up after 100 tries")
}

/// Poll a submission until `done` holds for it (20 s at most).
async fn until(s: &Setup, id: i64, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let path = format!("/portal/submissions/{id}");
    for _ in 0..400 {
        let now = s.app.get_ok(&path, s.key()).await;
        if done(&now) {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{path}: not {what} after 20 s: {}", s.app.get_ok(&path, s.key()).await);
}

#[tokio::test]
async fn a_lost_declaration_is_found_whichever_days_the_trip_list_means() {
    // No public source says whether the list's dates are departure or notification days; here
    // they are notification days, and the journey departs on another day than it is declared.
    let s = Setup::new().await;
    s.fake.list_by_notification_day();
    s.fake.script("seferEkle", 1, Behaviour::LoseAnswer);
    let sub = s.submit(s.tarifesiz(&s.f.plate, &[passenger(41), passenger(42)]).await).await;
    let sub = if sub["state"] == "pending" { final_state(&s, &sub).await } else { sub };
    assert_eq!(sub["state"], "delivered", "{sub}");
    let trips = s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub));
    assert_eq!(trips.len(), 1, "found by the day it was declared, not declared twice");
    assert_eq!(trips[0].valid_passengers().count(), 2);
    assert_eq!(s.fake.calls("seferEkle"), 1);
    assert!(s.fake.calls("seferBildirimListele") >= 2, "the departure day, then the days since the first attempt");
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn a_look_up_that_cannot_answer_waits_as_unknown_never_declaring_twice_until_an_operator_resolves_it() {
    let s = Setup::new().await;
    let hook = json!({"event_type": "submission.unknown", "endpoint_url": "http://127.0.0.1:9/tns"});
    s.app.post_ok("/portal/webhooks", s.key(), hook, 201).await;
    // The trip is stored but its answer lost; then the trip list refuses every look-up.
    s.fake.script("seferEkle", 1, Behaviour::LoseAnswer);
    s.fake.script("seferBildirimListele", 10_000, Behaviour::business(99, "Sorgulama servisi hata verdi"));
    let journey = s.tarifesiz(&s.f.plate, &[passenger(51)]).await;
    let id = s.submit(journey).await["id"].as_i64().unwrap();
    let sub = until(&s, id, "unknown", |v| v["state"] == "unknown").await;
    assert!(sub["error_message"].as_str().unwrap().contains("outcome unknown"), "{sub}");
    assert!(sub["error_message"].as_str().unwrap().contains("Sorgulama servisi hata verdi"), "{sub}");
    assert!(sub["next_attempt_at"].is_string(), "looked up again: {sub}");
    // Looked up again with back-off, and never declared a second time meanwhile.
    let listed = s.fake.calls("seferBildirimListele");
    let again = || s.fake.calls("seferBildirimListele") > listed;
    for _ in 0..400 {
        if again() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(again(), "looked up again");
    let sub = s.app.get_ok(&format!("/portal/submissions/{id}"), s.key()).await;
    assert_eq!(sub["state"], "unknown", "{sub}");
    assert_eq!(s.fake.calls("seferEkle"), 1, "never declared twice");
    let journey_now = s.app.get_ok(&format!("/portal/journeys/{journey}"), s.key()).await;
    assert_eq!(journey_now["status"], "submitted", "the record waits with it");
    // Submitting again returns the same submission (one in flight per record).
    assert_eq!(s.submit(journey).await["id"], id);
    // One `submission.unknown` event, when it became so (not one per look-up).
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_events WHERE org_id = $1 AND type = $2")
        .bind(s.f.org.id)
        .bind("submission.unknown")
        .fetch_one(&s.app.db)
        .await
        .unwrap();
    assert_eq!(events, 1);

    // An operator who found the trip at U-ETDS gives its reference: confirmed as ours (its
    // tag), carried on from, delivered; still declared once.
    let trip = s.fake.trips_with_firma_sefer_no(&format!("tns-{id}"))[0].reference.to_string();
    let org = s.f.org.id.to_string();
    let sid = id.to_string();
    let refused = resolve(&s, &[&org, &sid, "maybe", "--reason", "x"]).await;
    assert!(refused.unwrap_err().contains("possible values: found, absent"));
    let refused = resolve(&s, &[&org, &sid, "found", "TR-1", "--reason", "x"]).await;
    assert!(refused.unwrap_err().contains("not a downstream reference"));
    let out = resolve(&s, &[&org, &sid, "found", &trip, "--reason", "seen on e-Devlet"]).await.unwrap();
    assert_eq!((out[0]["resolution"].as_str(), out[0]["state"].as_str()), (Some("found"), Some("pending")), "{out:?}");
    let sub = until(&s, id, "delivered", |v| v["state"] == "delivered").await;
    assert_eq!(sub["downstream_reference"], trip.as_str());
    let trips = s.fake.trips_with_firma_sefer_no(&format!("tns-{id}"));
    assert_eq!((trips.len(), trips[0].valid_passengers().count()), (1, 1));
    assert_eq!(s.fake.calls("seferEkle"), 1);
    let logged: String =
        sqlx::query_scalar("SELECT actor FROM audit_log WHERE org_id = $1 AND action = 'resolve_submission'")
            .bind(s.f.org.id)
            .fetch_one(&s.app.db)
            .await
            .unwrap();
    assert_eq!(logged, "operator:ayse");
    // Only an unknown outcome is resolved.
    let late = resolve(&s, &[&org, &sid, "absent", "--reason", "x"]).await;
    assert!(late.unwrap_err().contains("not unknown"));

    // A declaration refused by the service's side (nothing written), then look-ups that fail:
    // unknown again. The operator finds nothing at U-ETDS: `absent` sends it as new, once.
    s.fake.script("seferEkle", 1, Behaviour::fault("Server", "Servis geçici olarak kullanılamıyor"));
    let other = s.tarifesiz("34ABS001", &[]).await;
    let id = s.submit(other).await["id"].as_i64().unwrap();
    until(&s, id, "unknown", |v| v["state"] == "unknown").await;
    assert!(s.fake.trips_with_firma_sefer_no(&format!("tns-{id}")).is_empty());
    let sid = id.to_string();
    let out = resolve(&s, &[&org, &sid, "absent", "--reason", "not on e-Devlet"]).await.unwrap();
    assert_eq!(out[0]["resolution"], "absent");
    until(&s, id, "delivered", |v| v["state"] == "delivered").await;
    assert_eq!(s.fake.trips_with_firma_sefer_no(&format!("tns-{id}")).len(), 1);
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn recovering_a_shuttles_lost_trips_costs_calls_in_proportion_to_them() {
    // Twelve trips of one bus on one day, every declaration's answer lost: each journey's
    // look-up lists the bus's trips, and each trip's summary is read once for all of them.
    let s = Setup::new().await;
    const N: usize = 12;
    s.fake.script("seferEkle", N, Behaviour::LoseAnswer);
    let mut journeys = vec![];
    for i in 0..N {
        let mut body = tarifesiz(json!(s.f.plate.clone()));
        body["personnel_ids"] = json!([s.f.driver_id]);
        body["departure"]["time"] = json!(format!("{:02}:00", 6 + i));
        body["arrival"]["time"] = json!(format!("{:02}:50", 6 + i));
        journeys.push(s.journey(body, &[]).await);
    }
    let mut ids = vec![];
    for j in &journeys {
        let res = s.app.req(Method::POST, &format!("/portal/journeys/{j}/submit"), Some(s.key())).send().await.unwrap();
        ids.push(json_of(res, 202).await["submission_id"].as_i64().unwrap());
    }
    for id in &ids {
        until(&s, *id, "delivered", |v| v["state"] == "delivered").await;
    }
    for id in &ids {
        assert_eq!(s.fake.trips_with_firma_sefer_no(&format!("tns-{id}")).len(), 1, "tns-{id} declared once");
    }
    assert_eq!(s.fake.calls("seferEkle"), N);
    let (listings, summaries) = (s.fake.calls("seferBildirimListele"), s.fake.calls("bildirimOzeti"));
    eprintln!("{N} lost trips of one bus recovered with {listings} listings and {summaries} summaries");
    // Per journey: its listing(s), its trip's summary once (shared), the summary of what it
    // holds; the old per-journey scan of every trip of the day read N² summaries.
    assert!(summaries <= 3 * N, "{summaries} summaries for {N} trips (N² would be {})", N * N);
    assert!(listings <= 3 * N, "{listings} listings for {N} trips");
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn a_vehicle_swap_moves_the_trip_and_a_reference_the_update_gives_back_replaces_ours() {
    let s = Setup::new().await;
    s.fake.renumber_on_update();
    let id = s.tarifesiz(&s.f.plate, &[passenger(71)]).await;
    let first = s.submit(id).await;
    assert_eq!(first["state"], "delivered", "{first}");
    let trip = s.fake.trips_with_firma_sefer_no(&Setup::reference(&first))[0].reference;

    // Another bus for the same trip: the Ministry's own operation for a swap, not an update.
    let spare = s.app.post_ok("/portal/vehicles", s.key(), vehicle("34SWP002"), 201).await["id"].clone();
    let path = format!("/portal/journeys/{id}");
    json_of(s.app.put(&path, s.key(), json!({"vehicle_id": spare})).await, 200).await;
    let swap = s.submit(id).await;
    assert_eq!((swap["operation"].as_str(), swap["state"].as_str()), (Some("amendment"), Some("delivered")), "{swap}");
    assert_eq!((s.fake.calls("seferPlakaDegistir"), s.fake.calls("seferGuncelle")), (1, 0));
    assert_eq!(s.fake.trip(trip).unwrap().plate, "34SWP002");

    // Another departure time: an update, whose answer names the trip anew here; that reference
    // is the journey's from now on, and the next change goes to it.
    json_of(s.app.put(&path, s.key(), json!({"departure": {"time": "10:45"}})).await, 200).await;
    let update = s.submit(id).await;
    assert_eq!(update["state"], "delivered", "{update}");
    assert_eq!(s.fake.calls("seferGuncelle"), 1);
    let renumbered = s.fake.trips_with_firma_sefer_no(&Setup::reference(&first))[0].reference;
    assert_ne!(renumbered, trip);
    assert_eq!(update["downstream_reference"], renumbered.to_string());
    let journey = s.app.get_ok(&path, s.key()).await;
    assert_eq!(journey["downstream_reference"], renumbered.to_string(), "{journey}");
    s.app.post_ok(&format!("{path}/passengers"), s.key(), passenger(72), 201).await;
    let more = s.submit(id).await;
    assert_eq!(more["state"], "delivered", "{more}");
    assert_eq!(s.fake.trip(renumbered).unwrap().valid_passengers().count(), 2);
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn a_cancelled_journey_is_reactivated_at_u_etds_and_takes_changes_again() {
    let s = Setup::new().await;
    let id = s.tarifesiz(&s.f.plate, &[passenger(81)]).await;
    let path = format!("/portal/journeys/{id}");
    // Nothing to re-activate before it is cancelled.
    let e = error_body(s.app.post(&format!("{path}/reactivate"), Some(s.key()), json!({})).await, 409).await;
    assert!(e["detail"].as_str().unwrap().contains("not cancelled"), "{e}");
    let first = s.submit(id).await;
    let trip = s.fake.trips_with_firma_sefer_no(&Setup::reference(&first))[0].reference;
    let cancel = s.act(&format!("{path}/cancel")).await;
    assert_eq!(cancel["state"], "delivered", "{cancel}");
    assert_eq!(s.app.get_ok(&path, s.key()).await["status"], "cancelled");
    assert_eq!(s.fake.trip(trip).unwrap().status, Status::Cancelled);

    let back = s.act(&format!("{path}/reactivate")).await;
    assert_eq!((back["operation"].as_str(), back["state"].as_str()), (Some("reactivate"), Some("delivered")), "{back}");
    assert_eq!(s.fake.calls("seferAktif"), 1);
    assert_eq!(s.fake.trip(trip).unwrap().status, Status::Valid, "valid again at U-ETDS");
    let journey = s.app.get_ok(&path, s.key()).await;
    assert_eq!(
        (journey["status"].as_str(), journey["downstream_reference"].as_str()),
        (Some("delivered"), Some(trip.to_string().as_str()))
    );
    // Again: nothing to do (it is not cancelled now).
    error_body(s.app.post(&format!("{path}/reactivate"), Some(s.key()), json!({})).await, 409).await;
    // It takes changes again, as an amendment of the trip.
    s.app.post_ok(&format!("{path}/passengers"), s.key(), passenger(82), 201).await;
    let more = s.submit(id).await;
    assert_eq!((more["operation"].as_str(), more["state"].as_str()), (Some("amendment"), Some("delivered")), "{more}");
    assert_eq!(s.fake.trip(trip).unwrap().valid_passengers().count(), 2);
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn a_passenger_who_did_not_come_is_reported_by_seat_and_identity_number() {
    let s = Setup::new().await;
    let mut seatless = passenger(92);
    seatless.as_object_mut().unwrap().remove("seat_no");
    let id = s.tarifesiz(&s.f.plate, &[passenger(91), seatless]).await;
    let path = format!("/portal/journeys/{id}");
    let list = s.app.get_ok(&format!("{path}/passengers"), s.key()).await;
    let pid = |identity: String| {
        list["data"].as_array().unwrap().iter().find(|p| p["identity_number"] == identity.as_str()).unwrap()["id"]
            .as_i64()
            .unwrap()
    };
    let (came_not, no_seat) = (pid(tckn(91)), pid(tckn(92)));
    let report = |p: i64| format!("{path}/passengers/{p}/no-show");
    // Before the journey is delivered there is nothing to report on.
    error_body(s.app.post(&report(came_not), Some(s.key()), json!({})).await, 409).await;
    let first = s.submit(id).await;
    assert_eq!(first["state"], "delivered", "{first}");

    let sub = s.act(&report(came_not)).await;
    assert_eq!((sub["operation"].as_str(), sub["state"].as_str()), (Some("no_show"), Some("delivered")), "{sub}");
    let trip = s.fake.trips_with_firma_sefer_no(&Setup::reference(&first))[0].clone();
    let reported: Vec<&str> =
        trip.passengers.iter().filter(|p| p.no_show.is_some()).map(|p| p.identity.as_str()).collect();
    assert_eq!(reported, [tckn(91).as_str()]);
    assert_eq!(s.app.get_ok(&path, s.key()).await["status"], "delivered", "the journey stays delivered");
    // The downstream knows a passenger by seat: one without a seat number is refused, naming it.
    assert_invalid(s.app.post(&report(no_seat), Some(s.key()), json!({})).await, "seat_no").await;
    // Another journey's passenger, or none, is nowhere.
    error_body(s.app.post(&format!("{path}/passengers/999999999/no-show"), Some(s.key()), json!({})).await, 404).await;
    assert_invalid(s.app.post(&report(came_not), Some(s.key()), json!({"note": ""})).await, "note").await;
    s.fake.assert_no_violations();
}

/// A passenger at `seat` with these baggage barcodes.
fn with_bags(n: u64, seat: &str, barcodes: &[&str]) -> Value {
    let mut p = passenger(n);
    p["seat_no"] = json!(seat);
    p["baggage"] = json!(barcodes);
    p
}

/// The barcodes U-ETDS holds on a trip: (identity number, seat, barcode), sorted.
fn baggage_of(trip: &tns_uetds_fake::Trip) -> Vec<(String, String, String)> {
    let mut held: Vec<_> =
        trip.valid_baggage().map(|b| (b.identity.clone(), b.seat.clone(), b.barcode.clone())).collect();
    held.sort();
    held
}

#[tokio::test]
async fn baggage_follows_its_passengers_and_an_uncertain_baggage_call_is_judged_by_its_count() {
    let s = Setup::new().await;
    // The baggage is stored, its answer lost: the summary's count shows the call went through.
    s.fake.script("yolcuBagajEkle", 1, Behaviour::LoseAnswer);
    let passengers = [with_bags(41, "1", &["b-1", "B2"]), with_bags(42, "2", &["B3"]), passenger(43)];
    let id = s.tarifesiz(&s.f.plate, &passengers).await;
    let sub = s.submit(id).await;
    let sub = if sub["state"] == "pending" { final_state(&s, &sub).await } else { sub };
    assert_eq!(sub["state"], "delivered", "{sub}");
    let reference = sub["downstream_reference"].as_str().unwrap().parse().unwrap();
    let bag = |n: u64, seat: &str, code: &str| (tckn(n), seat.to_string(), code.to_string());
    let trip = s.fake.trip(reference).unwrap();
    assert_eq!(baggage_of(&trip), [bag(41, "1", "B-1"), bag(41, "1", "B2"), bag(42, "2", "B3")]);
    assert_eq!(s.fake.calls("yolcuBagajEkle"), 1, "the call whose answer was lost is not made again");
    assert_eq!(outcomes(&sub).last().map(String::as_str), Some("found"), "{sub}");

    // Later: 41 trades B2 for B4, 42 moves to seat 9 (their baggage moves with the entry), 43
    // checks a bag in. A change of baggage alone keeps the passenger's entry.
    let path = format!("/portal/journeys/{id}/passengers");
    let list = s.app.get_ok(&path, s.key()).await;
    let pid = |n: u64| {
        let p = list["data"].as_array().unwrap().iter().find(|p| p["identity_number"] == tckn(n).as_str()).unwrap();
        p["id"].as_i64().unwrap()
    };
    let one = |n: u64| format!("{path}/{}", pid(n));
    let shown = json_of(s.app.put(&one(41), s.key(), json!({"baggage": ["B-1", "b4"]})).await, 200).await;
    assert_eq!(shown["baggage"], json!(["B-1", "B4"]), "{shown}");
    json_of(s.app.put(&one(42), s.key(), json!({"seat_no": "9"})).await, 200).await;
    json_of(s.app.put(&one(43), s.key(), json!({"baggage": ["B5"]})).await, 200).await;
    let amendment = s.submit(id).await;
    assert_eq!((amendment["operation"].as_str(), amendment["state"].as_str()), (Some("amendment"), Some("delivered")));
    let trip = s.fake.trip(reference).unwrap();
    assert_eq!(
        baggage_of(&trip),
        [bag(41, "1", "B-1"), bag(41, "1", "B4"), bag(42, "9", "B3"), bag(43, "12", "B5")],
        "withdrawn before the entry was cancelled, added again under the new one"
    );
    assert_eq!(s.fake.calls("yolcuIptalUetdsYolcuRefNoIle"), 1, "only 42's entry is replaced");
    assert_eq!((s.fake.calls("yolcuBagajIptal"), s.fake.calls("yolcuBagajEkle")), (2, 2));
    assert_eq!(trip.baggage.iter().filter(|b| b.barcode == "B-1").count(), 1, "a kept barcode is never sent again");
    // Nothing left to send: submitting again changes nothing.
    let again = s.app.req(Method::POST, &format!("/portal/journeys/{id}/submit"), Some(s.key())).send().await.unwrap();
    assert_eq!(json_of(again, 202).await["submission_id"], amendment["id"]);

    // Baggage is bounded and needs a seat: U-ETDS knows it by seat.
    let mut seatless = with_bags(44, "1", &["B6"]);
    seatless.as_object_mut().unwrap().remove("seat_no");
    assert_invalid(s.app.post(&path, Some(s.key()), seatless).await, "baggage").await;
    let mut many = passenger(44);
    many["baggage"] = json!((0..21).map(|i| format!("X{i}")).collect::<Vec<_>>());
    assert_invalid(s.app.post(&path, Some(s.key()), many).await, "baggage").await;
    assert_invalid(s.app.post(&path, Some(s.key()), with_bags(44, "1", &["B 8"])).await, "baggage[0]").await;
    assert_eq!(s.app.get_ok(&path, s.key()).await["data"].as_array().unwrap().len(), 3, "nothing half-written");
    // A barcode listed twice, in any case, is one tag.
    let once = s.app.post_ok(&path, s.key(), with_bags(44, "1", &["B7", "b7", "B8"]), 201).await;
    assert_eq!(once["baggage"], json!(["B7", "B8"]), "{once}");
    // A tag is on one bag: another passenger of the journey may not carry it (409 naming it),
    // whichever way the passengers are written; nothing is half-written.
    let e = error_body(s.app.post(&path, Some(s.key()), with_bags(45, "2", &["b8"])).await, 409).await;
    assert!(e["detail"].as_str().unwrap().contains("barcode B8"), "{e}");
    let bulk = json!({"passengers": [with_bags(45, "2", &["C1"]), with_bags(46, "3", &["C1"])]});
    error_body(s.app.post(&format!("{path}:bulk-upsert"), Some(s.key()), bulk).await, 409).await;
    let e = error_body(s.app.put(&one(41), s.key(), json!({"baggage": ["B7"]})).await, 409).await;
    assert!(e["detail"].as_str().unwrap().contains("barcode B7"), "{e}");
    assert_eq!(s.app.get_ok(&path, s.key()).await["data"].as_array().unwrap().len(), 4, "nothing half-written");
    s.fake.assert_no_violations();
}

/// The warnings of a submission: (code, field, detail).
fn warnings_of(sub: &Value) -> Vec<(String, String, String)> {
    let text = |w: &Value, k: &str| w[k].as_str().unwrap_or_default().to_string();
    sub["warnings"].as_array().unwrap().iter().map(|w| (text(w, "code"), text(w, "field"), text(w, "detail"))).collect()
}

#[tokio::test]
async fn pre_flight_checks_ask_u_etds_once_a_day_and_warn_or_refuse_by_the_organizations_policy() {
    let s = Setup::new().await;
    let checks = ["aracMuayeneSorgula", "yetkiBelgesiKontrol", "meslekiYeterlilikSorgula", "kimlikDogrulama"];
    let asked = |s: &Setup| checks.map(|op| s.fake.calls(op));
    // Off until the organization turns them on: nothing is asked.
    let policy = s.app.get_ok("/portal/downstream/preflight", s.key()).await;
    assert_eq!((policy["mode"].as_str(), policy["updated_at"].is_null()), (Some("off"), true), "{policy}");
    let first = s.tarifesiz(&s.f.plate, &[passenger(61)]).await;
    assert_eq!(s.submit(first).await["state"], "delivered");
    assert_eq!(asked(&s), [0, 0, 0, 0]);

    // `warn`: the vehicle's inspection ran out the day before departure, and one passenger's
    // number does not match their name. The submission goes, with a warning for each.
    let put = |body: Value| s.app.put("/portal/downstream/preflight", s.key(), body);
    assert_invalid(put(json!({"mode": "sometimes"})).await, "mode").await;
    let set = json_of(put(json!({"mode": "warn"})).await, 200).await;
    assert_eq!(set["checks"], json!(["vehicle_inspection", "authorisation", "qualification", "identity"]));
    s.fake.registers(|r| {
        r.inspections.insert(s.f.plate.clone(), chrono::NaiveDate::from_ymd_opt(2026, 11, 30).unwrap());
        r.mismatched.insert(tckn(62));
    });
    let id = s.tarifesiz(&s.f.plate, &[passenger(61), passenger(62)]).await;
    let sub = s.submit(id).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    let warned: Vec<(String, String, String)> =
        warnings_of(&sub).into_iter().filter(|w| w.0.starts_with("check_")).collect();
    assert_eq!(
        warned.iter().map(|w| (w.0.as_str(), w.1.as_str())).collect::<Vec<_>>(),
        [("check_failed", "vehicle_id"), ("check_failed", "passengers[1]")],
        "{warned:?}"
    );
    assert!(warned[0].2.contains("2026-11-30"), "what U-ETDS said: {warned:?}");
    assert!(!warned[1].2.contains(&tckn(62)), "no identity number in a warning: {warned:?}");
    // One each for the vehicle, the driver's qualification, and three identities (the
    // driver's and the passengers').
    assert_eq!(asked(&s), [1, 1, 1, 3]);
    s.fake.assert_no_violations();

    // The same day, what passed is kept: an amendment asks again only what failed (it may have
    // been put right since).
    let path = format!("/portal/journeys/{id}");
    json_of(s.app.put(&path, s.key(), json!({"departure": {"time": "09:45"}})).await, 200).await;
    let amendment = s.submit(id).await;
    assert_eq!((amendment["operation"].as_str(), amendment["state"].as_str()), (Some("amendment"), Some("delivered")));
    assert_eq!(warnings_of(&amendment).iter().filter(|w| w.0 == "check_failed").count(), 2);
    assert_eq!(asked(&s), [2, 1, 1, 4]);

    // `refuse`: a journey on the same bus is not submitted while its inspection is out, and
    // the 422 names the field; nothing is queued.
    json_of(put(json!({"mode": "refuse"})).await, 200).await;
    let refused = s.tarifesiz(&s.f.plate, &[passenger(62)]).await;
    let res =
        s.app.req(Method::POST, &format!("/portal/journeys/{refused}/submit"), Some(s.key())).send().await.unwrap();
    let body = json_of(res, 422).await;
    assert_eq!(body["field"], "vehicle_id", "{body}");
    assert!(body["detail"].as_str().unwrap().contains("and 1 more"), "{body}");
    assert_eq!(s.app.get_ok(&format!("/portal/journeys/{refused}"), s.key()).await["status"], "draft");
    assert_eq!(asked(&s), [3, 1, 1, 5], "passes kept, failures asked again");

    // Put right at the Ministry the same day: the next submit passes.
    s.fake.registers(|r| {
        r.inspections.clear();
        r.mismatched.clear();
    });
    let sub = s.submit(refused).await;
    assert_eq!(sub["state"], "delivered", "{sub}");

    // A check U-ETDS cannot answer refuses nothing: it is a warning that it was not made.
    json_of(put(json!({"mode": "refuse", "checks": ["identity", "identity"]})).await, 200).await;
    s.fake.script("kimlikDogrulama", 1, Behaviour::Status(503));
    let unanswered = s.tarifesiz(&s.f.plate, &[passenger(64)]).await;
    let sub = s.submit(unanswered).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    let warned: Vec<(String, String)> =
        warnings_of(&sub).into_iter().filter(|w| w.0.starts_with("check_")).map(|w| (w.0, w.1)).collect();
    assert_eq!(warned, [("check_not_made".to_string(), "passengers[0]".to_string())]);
    assert_eq!(s.app.get_ok("/portal/downstream/preflight", s.key()).await["checks"], json!(["identity"]));
    let audited: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE org_id = $1 AND action = 'set_preflight'")
            .bind(s.f.org.id)
            .fetch_one(&s.app.db)
            .await
            .unwrap();
    assert_eq!(audited, 3);
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn a_route_change_moves_the_passenger_group_too() {
    let s = Setup::new().await;
    let id = s.tarifesiz(&s.f.plate, &[passenger(95)]).await;
    let first = s.submit(id).await;
    assert_eq!(first["state"], "delivered", "{first}");
    let path = format!("/portal/journeys/{id}");
    // Another time only: the trip changes, the group's places do not.
    json_of(s.app.put(&path, s.key(), json!({"departure": {"time": "07:10"}})).await, 200).await;
    assert_eq!(s.submit(id).await["state"], "delivered");
    assert_eq!((s.fake.calls("seferGuncelle"), s.fake.calls("seferGrupGuncelle")), (1, 0));
    // Another destination: the trip and its group both move.
    json_of(s.app.put(&path, s.key(), json!({"arrival": {"district_id": KADIKOY.to_string()}})).await, 200).await;
    let moved = s.submit(id).await;
    assert_eq!(moved["state"], "delivered", "{moved}");
    assert_eq!((s.fake.calls("seferGuncelle"), s.fake.calls("seferGrupGuncelle")), (2, 1));
    let trip = &s.fake.trips_with_firma_sefer_no(&Setup::reference(&first))[0];
    let group = trip.groups.iter().find(|g| g.status == Status::Valid).unwrap();
    assert_eq!(group.end_district, KADIKOY, "{group:?}");
    assert_eq!(trip.valid_passengers().count(), 1, "its passengers stay in it");
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn the_platforms_addresses_are_registered_at_u_etds_with_the_firms_credentials() {
    let s = Setup::with(&[("TNS_EGRESS_IPS", "203.0.113.7, 2001:db8::7")]).await;
    let path = "/portal/downstream/allowed-addresses";
    let listed = s.app.get_ok(path, s.key()).await;
    assert_eq!(listed["platform_addresses"], json!(["203.0.113.7", "2001:db8::7"]));
    assert_eq!(listed["data"], json!([]));
    let added = s.app.post_ok(path, s.key(), json!({"first": "203.0.113.7"}), 201).await;
    assert_eq!((added["data"][0]["first"].as_str(), added["data"][0]["last"].as_str()), (Some("203.0.113.7"), None));
    let added = s.app.post_ok(path, s.key(), json!({"first": "2001:db8::7"}), 201).await;
    assert_eq!(added["data"].as_array().unwrap().len(), 2);
    assert_invalid(s.app.post(path, Some(s.key()), json!({"first": "not-an-address"})).await, "first").await;
    let first = added["data"][0]["id"].as_str().unwrap().to_string();
    let after = json_of(s.app.delete(&format!("{path}/{first}"), s.key()).await, 200).await;
    assert_eq!(after["data"].as_array().unwrap().len(), 1);
    assert_eq!(after["data"][0]["first"], "2001:db8::7");
    // U-ETDS keeps at least one: its refusal, in its words.
    let last = after["data"][0]["id"].as_str().unwrap().to_string();
    let e = error_body(s.app.delete(&format!("{path}/{last}"), s.key()).await, 409).await;
    assert!(e["detail"].as_str().unwrap().contains("Son IP kaydı silinemez"), "{e}");
    error_body(s.app.delete(&format!("{path}/x1"), s.key()).await, 404).await;
    // Each change in the audit log as the key that made it.
    let changes: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE org_id = $1 AND action = 'change_allowed_addresses' AND actor LIKE 'tenant:key:%'",
    )
    .bind(s.f.org.id)
    .fetch_one(&s.app.db)
    .await
    .unwrap();
    assert_eq!(changes, 3);
    // U-ETDS took a change but its list could not be read after it: 503, and the change is
    // audited all the same, as one whose outcome is unknown.
    s.fake.script("ipListele", 1, Behaviour::Status(503));
    error_body(s.app.post(path, Some(s.key()), json!({"first": "198.51.100.9"})).await, 503).await;
    let last: Value = sqlx::query_scalar(
        "SELECT after FROM audit_log WHERE org_id = $1 AND action = 'change_allowed_addresses' ORDER BY id DESC LIMIT 1",
    )
    .bind(s.f.org.id)
    .fetch_one(&s.app.db)
    .await
    .unwrap();
    assert_eq!(last["outcome"], "unknown", "{last}");
    assert_eq!(last["change"]["first"], "198.51.100.9", "{last}");
    // The sandbox keeps no such list.
    let other = s.app.register().await;
    error_body(s.app.get(path, &other.key).await, 409).await;
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn a_submission_that_failed_after_an_uncertain_call_is_looked_up_when_sent_again() {
    // No retry window: the first attempt's lost answer fails the submission at once.
    let s = Setup::with(&[("TNS_RETRY_WINDOW_SECS", "0")]).await;
    s.fake.script("seferEkle", 1, Behaviour::LoseAnswer);
    let id = s.tarifesiz(&s.f.plate, &[passenger(97)]).await;
    let first = s.submit(id).await;
    assert_eq!(first["state"], "failed", "{first}");
    assert_eq!(s.fake.trips_with_firma_sefer_no(&Setup::reference(&first)).len(), 1, "the trip is there");
    // Sent again (by the member, or `tns admin requeue`): it carries the failed one's reference,
    // looks it up, finds the trip and carries on from it.
    let again = s.submit(id).await;
    assert_eq!(again["state"], "delivered", "{again}");
    assert_eq!(s.fake.calls("seferEkle"), 1, "not declared twice");
    let trips = s.fake.trips_with_firma_sefer_no(&Setup::reference(&first));
    assert_eq!((trips.len(), trips[0].valid_passengers().count()), (1, 1));
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn cargo_goes_to_the_goods_service_with_every_field_mapped() {
    let s = Setup::new().await;
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    let id = s.app.post_ok("/portal/cargo", s.key(), body.clone(), 201).await["id"].as_i64().unwrap();
    let sub = s.act(&format!("/portal/cargo/{id}/submit")).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    s.fake.assert_no_violations();
    let trip = s
        .fake
        .cargo_trips()
        .into_iter()
        .find(|t| t.firma_sefer_no.as_deref() == Some(&Setup::reference(&sub)))
        .unwrap();
    assert_eq!(sub["downstream_reference"], trip.id.to_string());
    assert_eq!(
        (trip.plate1.as_str(), trip.driver1.as_str()),
        (s.f.plate.as_str(), tckn(s.f.org.id as u64 * 10 + 1).as_str())
    );
    assert_eq!((trip.start_date.to_string(), trip.start_time.as_str()), ("2026-12-01".to_string(), "07:00"));
    assert_eq!((trip.end_date.to_string(), trip.end_time.as_str()), ("2026-12-02".to_string(), "09:45"));
    let loads: Vec<_> = trip.valid_loads().collect();
    assert_eq!(loads.len(), 1);
    let load = &loads[0].input;
    for (field, want) in [
        ("yukMiktari", "1250.5"),
        ("yukMiktariBirimi", "KG"),
        ("yukCinsId", "7"),
        ("gonderenVergiNo", VKN),
        ("gonderenUnvan", "Gönderen A.Ş."),
        ("aliciVergiNo", TCKN),
        ("yuklemeIlMernisKodu", "34"),
        ("yuklemeIlceMernisKodu", "1421"),
        ("bosaltmaIlceMernisKodu", "1219"),
        ("yuklemeTarihi", "01/12/2026"),
        ("bosaltmaSaati", "09:45"),
    ] {
        assert_eq!(load.child_text(field), Some(want), "{field}");
    }
    let res = s.app.req(Method::GET, &format!("/portal/cargo/{id}/report"), Some(s.key())).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.bytes().await.unwrap().starts_with(b"%PDF"));

    let cancel = s.act(&format!("/portal/cargo/{id}/cancel")).await;
    assert_eq!(cancel["state"], "delivered", "{cancel}");
    assert_eq!(s.fake.cargo_trip(trip.id).unwrap().status.label(), "İptal");
    assert_eq!(s.app.get_ok(&format!("/portal/cargo/{id}"), s.key()).await["status"], "cancelled");

    // A unit U-ETDS has no code for is refused when the shipment is created.
    // Valid values the organization's downstream cannot take: a conflict naming the field.
    body["cargo_unit"] = json!("M3");
    let e = error_body(s.app.post("/portal/cargo", Some(s.key()), body.clone()).await, 409).await;
    assert!(e["detail"].as_str().unwrap().starts_with("cargo_unit: "), "{e}");
    body["cargo_unit"] = json!("KG");
    body["transport_type"] = json!(3);
    let e = error_body(s.app.post("/portal/cargo", Some(s.key()), body).await, 409).await;
    assert!(e["detail"].as_str().unwrap().starts_with("transport_type: "), "{e}");
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn a_scheduled_journey_goes_to_the_provisional_scheduled_service() {
    let s = Setup::new().await;
    let mut body = journey(json!(s.f.plate));
    body["personnel_ids"] = json!([s.f.driver_id]);
    let id = s.journey(body, &[passenger(41), passport("P777")]).await;
    let sub = s.submit(id).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    s.fake.assert_no_violations();
    let trips = s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub));
    assert_eq!(trips.len(), 1);
    assert_eq!((trips[0].route_code, trips[0].travel_hours), (Some(1001), Some(12)));
    assert_eq!(trips[0].valid_passengers().count(), 2);
    assert_eq!(s.fake.calls("yolcuBiletEkle"), 2, "one ticket per call");
    assert!(s
        .fake
        .requests()
        .iter()
        .filter(|r| r.op.as_deref() == Some("seferEkle"))
        .all(|r| r.path.ends_with("/test/uetdstarifeli")));

    // The scheduled service takes no baggage: such a journey fails before any call, saying so.
    let mut body = journey(json!(s.f.plate));
    body["personnel_ids"] = json!([s.f.driver_id]);
    let id = s.journey(body, &[with_bags(42, "4", &["B1"])]).await;
    let sub = s.submit(id).await;
    assert_eq!(sub["state"], "failed", "{sub}");
    assert!(sub["error_message"].as_str().unwrap().contains("no baggage"), "{sub}");
    assert_eq!(s.fake.calls("seferEkle"), 1, "nothing was declared for it");
}

#[tokio::test]
async fn scheduled_trips_reach_production_only_once_the_operator_confirms_the_service() {
    let production = json!({"adapter": "uetds", "environment": "production", "ws_username": TEST_USER, "ws_password": TEST_PASSWORD});
    for confirmed in [false, true] {
        let s =
            Setup::with(&[("TNS_ADAPTER_UETDS_TARIFELI_CONFIRMED", if confirmed { "true" } else { "false" })]).await;
        json_of(s.app.put("/portal/downstream", s.key(), production.clone()).await, 200).await;
        let mut body = journey(json!(s.f.plate));
        body["personnel_ids"] = json!([s.f.driver_id]);
        let sub = s.submit(s.journey(body, &[passenger(61)]).await).await;
        if confirmed {
            assert_eq!(sub["state"], "delivered", "{sub}");
            assert!(s.fake.requests().iter().any(|r| r.path.ends_with("/kdgm/uetdstarifeli")), "production's path");
        } else {
            // Refused before any call, saying what the operator must do.
            assert_eq!((sub["state"].as_str(), outcomes(&sub)), (Some("failed"), vec!["configuration".to_string()]));
            assert!(sub["error_message"].as_str().unwrap().contains("TNS_ADAPTER_UETDS_TARIFELI_CONFIRMED"), "{sub}");
            assert_eq!(s.fake.calls("seferEkle"), 0);
            // A non-scheduled trip goes to production as ever.
            let sub = s.submit(s.tarifesiz("34PRD001", &[]).await).await;
            assert_eq!(sub["state"], "delivered", "{sub}");
        }
        s.fake.assert_no_violations();
    }
}

#[tokio::test]
async fn a_call_that_cannot_finish_inside_its_lease_is_given_back_untried() {
    // One adapter slot. The first submission's call hangs in the sandbox for 5 s (past its 2 s
    // timeout; the slot stays taken until the plugin returns); the second waits for the slot
    // longer than its lease allows and is given back untried, then delivered by a later claim.
    let env = Env::new().await.with_scheduler().with(&[
        ("TNS_ADAPTER_CONCURRENCY", "1"),
        ("TNS_ADAPTER_TIMEOUT_SECS", "2"),
        ("TNS_SCHEDULER_LEASE_SECS", "4"),
    ]);
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let mut slow = journey(json!("34SLOW5000"));
    slow["personnel_ids"] = json!([f.driver_id]);
    let slow = app.post_ok("/portal/journeys", f.key(), slow, 201).await["id"].as_i64().unwrap();
    let slow = app.req(Method::POST, &format!("/portal/journeys/{slow}/submit"), Some(f.key())).send().await.unwrap();
    let slow = json_of(slow, 202).await["submission_id"].as_i64().unwrap();
    // The slow submission is claimed (its call takes the one slot as it starts) before the
    // second is submitted.
    let claimed = eventually(Duration::from_secs(10), || async {
        let leased: bool = sqlx::query_scalar("SELECT lease_token IS NOT NULL FROM submissions WHERE id = $1")
            .bind(slow)
            .fetch_one(&app.db)
            .await
            .unwrap();
        leased.then_some(())
    })
    .await;
    assert!(claimed.is_some(), "the slow submission was claimed");
    let quick = f.journey(&app).await;
    let res = app
        .req(Method::POST, &format!("/portal/journeys/{quick}/submit"), Some(f.key()))
        .header("Prefer", "wait=20")
        .send()
        .await
        .unwrap();
    let quick = json_of(res, 202).await;
    assert_eq!(quick["status"], "delivered", "{quick}");
    let detail = app.get_ok(&format!("/portal/submissions/{}", quick["submission_id"]), f.key()).await;
    assert_eq!(outcomes(&detail), ["delivered"], "the give-back left no attempt behind");
    assert_eq!(detail["attempts"], 1, "nor counted one");
    let given_back: i64 = sqlx::query_scalar("SELECT count(*) FROM submission_attempts WHERE submission_id = $1")
        .bind(quick["submission_id"].as_i64().unwrap())
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(given_back, 1);
    // The slow one timed out, was looked up, and found: the sandbox holds it once.
    let mut slow_detail = Value::Null;
    for _ in 0..200 {
        slow_detail = app.get_ok(&format!("/portal/submissions/{slow}"), f.key()).await;
        if slow_detail["state"] != "pending" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(slow_detail["state"], "delivered", "{slow_detail}");
    assert_eq!(outcomes(&slow_detail).last().map(String::as_str), Some("found"));
    let records = sandbox_records(&env.sandbox_state());
    assert_eq!(records.iter().filter(|r| r["reference"] == format!("tns-{slow}")).count(), 1);
}

#[tokio::test]
async fn a_submission_failed_halfway_is_continued_by_the_next_not_repeated() {
    let s = Setup::new().await;
    // The trip is declared, then its crew is refused: the submission fails with the trip held
    // downstream.
    s.fake.script("personelEkle", 1, Behaviour::business(34, "Mesleki yeterlilik bulunamadı."));
    let id = s.tarifesiz(&s.f.plate, &[passenger(51)]).await;
    let failed = s.submit(id).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    assert!(failed["error_message"].as_str().unwrap().contains("Mesleki yeterlilik"), "{failed}");
    let first = Setup::reference(&failed);
    assert_eq!(s.fake.trips_with_firma_sefer_no(&first).len(), 1);

    // Submitting again goes on from the trip and group already there.
    let sub = s.submit(id).await;
    assert_eq!((sub["operation"].as_str(), sub["state"].as_str()), (Some("journey"), Some("delivered")), "{sub}");
    assert_eq!(s.fake.calls("seferEkle"), 1, "the trip is not declared twice");
    assert_eq!(s.fake.calls("seferGrupEkle"), 1, "nor its group");
    let trips = s.fake.trips();
    assert_eq!(trips.len(), 1);
    assert_eq!(sub["downstream_reference"], trips[0].reference.to_string());
    assert_eq!((trips[0].active_crew().count(), trips[0].valid_passengers().count()), (1, 1));
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn numbers_u_etds_quotes_are_shown_only_to_credentials_that_may_read_journeys() {
    let s = Setup::new().await;
    s.fake.script("personelEkle", 1, Behaviour::business(34, format!("{TCKN} için mesleki yeterlilik bulunamadı.")));
    let id = s.tarifesiz(&s.f.plate, &[passenger(52)]).await;
    let failed = s.submit(id).await;
    assert!(failed["error_message"].as_str().unwrap().contains(TCKN), "the owner's key sees it: {failed}");
    let (_, auditor) = s.app.create_key(s.key(), &["submissions:read"]).await;
    let path = format!("/portal/submissions/{}", failed["id"]);
    let seen = s.app.get_ok(&path, &auditor).await;
    let list = s.app.get_ok("/portal/submissions", &auditor).await;
    for text in [&seen["error_message"], &seen["history"][0]["error"], &list["data"][0]["error_message"]] {
        let text = text.as_str().unwrap();
        assert!(text.contains("mesleki yeterlilik") && !text.contains(TCKN), "{text}");
    }
    let (_, reader) = s.app.create_key(s.key(), &["submissions:read", "journeys:read"]).await;
    assert!(s.app.get_ok(&path, &reader).await["error_message"].as_str().unwrap().contains(TCKN));
}

#[tokio::test]
async fn tns_dev_delivers_to_a_u_etds_simulator_exactly_what_was_submitted() {
    // The real binary, its plugins loaded from next to it, configured by the environment only.
    let fake = FakeUetds::start_background();
    let base = fake.base_url();
    let env = Env::new().await.with_scheduler().with(&[("TNS_ADAPTER_UETDS_BASE_URL", base.as_str())]);
    let tns = Proc::start("dev", &env).await;
    let f = Fleet::new(&tns).await;
    let put = |password: &str| {
        let body =
            json!({"adapter": "uetds", "environment": "test", "ws_username": TEST_USER, "ws_password": password});
        tns.put("/portal/downstream", f.key(), body)
    };
    let refused = error_body(put("wrong-password").await, 422).await;
    assert!(refused["detail"].as_str().unwrap().contains("KULLANICI ADI YADA SIFRE HATALI"), "{refused}");
    json_of(put(TEST_PASSWORD).await, 200).await;

    let mut body = tarifesiz(json!(f.plate));
    body["personnel_ids"] = json!([f.driver_id]);
    let id = tns.post_ok("/portal/journeys", f.key(), body, 201).await["id"].as_i64().unwrap();
    let mut foreigner = passport("C01X00T47");
    foreigner["first_name"] = json!("Émilie");
    foreigner["last_name"] = json!("Dubois-Öztürk");
    foreigner["gender"] = json!("K");
    foreigner["nationality"] = json!("FR");
    let sent = [passenger(61), foreigner];
    let path = format!("/portal/journeys/{id}/passengers:bulk-upsert");
    tns.post_ok(&path, f.key(), json!({ "passengers": sent }), 200).await;
    let res =
        tns.req(Method::POST, &format!("/portal/journeys/{id}/submit"), Some(f.key())).header("Prefer", "wait=20");
    let sub = json_of(res.send().await.unwrap(), 202).await;
    assert_eq!(sub["status"], "delivered", "{sub}");

    let trip = &fake.trips_with_firma_sefer_no(&format!("tns-{}", sub["submission_id"]))[0];
    /// Identity, names, nationality, gender, seat.
    type Sent = (String, String, String, String, Option<String>, Option<String>);
    let mut held: Vec<Sent> = trip
        .valid_passengers()
        .map(|p| {
            (
                p.identity.clone(),
                p.first_name.clone(),
                p.last_name.clone(),
                p.nationality.clone(),
                p.gender.clone(),
                p.seat.clone(),
            )
        })
        .collect();
    held.sort();
    let mut want: Vec<_> = sent
        .iter()
        .map(|p| {
            (
                p["identity_number"].as_str().unwrap().to_string(),
                p["first_name"].as_str().unwrap().to_string(),
                p["last_name"].as_str().unwrap().to_string(),
                p["nationality"].as_str().unwrap_or("TR").to_string(),
                p["gender"].as_str().map(str::to_string),
                p["seat_no"].as_str().map(str::to_string),
            )
        })
        .collect();
    want.sort();
    assert_eq!(held, want, "every passenger as submitted");
    assert_eq!(trip.active_crew().count(), 1);

    let mut shipment = cargo(f.vehicle_id);
    shipment["driver_id"] = json!(f.driver_id);
    let cid = tns.post_ok("/portal/cargo", f.key(), shipment, 201).await["id"].as_i64().unwrap();
    let res = tns.req(Method::POST, &format!("/portal/cargo/{cid}/submit"), Some(f.key())).header("Prefer", "wait=20");
    let sub = json_of(res.send().await.unwrap(), 202).await;
    assert_eq!(sub["status"], "delivered", "{sub}");
    assert_eq!(fake.cargo_trips().len(), 1);
    assert_eq!(fake.cargo_trips()[0].valid_loads().count(), 1);
    fake.assert_no_violations();
}

#[tokio::test]
async fn a_continued_submission_withdraws_what_the_journey_no_longer_has_and_a_half_done_one_can_be_cancelled() {
    let s = Setup::new().await;
    // Trip, group and crew are held when the passengers are refused for the caller's IP: the
    // submission fails as the customer's configuration to fix.
    s.fake.script("yolcuEkleCoklu", 1, Behaviour::business(7, "Bu IP adresinden erişim yetkiniz bulunmamaktadır"));
    let id = s.tarifesiz(&s.f.plate, &[passenger(71)]).await;
    let failed = s.submit(id).await;
    assert_eq!((failed["state"].as_str(), outcomes(&failed)), (Some("failed"), vec!["configuration".to_string()]));
    let trip = s.fake.trips()[0].reference;
    assert_eq!(failed["downstream_reference"], trip.to_string(), "what the downstream gave is kept");
    assert_eq!(s.fake.trip(trip).unwrap().active_crew().count(), 1);

    // Meanwhile the driver leaves the journey: the next submission withdraws them and goes on.
    let path = format!("/portal/journeys/{id}");
    json_of(s.app.put(&path, s.key(), json!({"personnel_ids": null})).await, 200).await;
    let sub = s.submit(id).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    let held = s.fake.trip(trip).unwrap();
    assert_eq!(held.active_crew().count(), 0, "the driver who left was withdrawn");
    assert_eq!(held.valid_passengers().count(), 1);
    assert_eq!((s.fake.calls("seferEkle"), s.fake.calls("personelIptal")), (1, 1));
    s.fake.assert_no_violations();

    // A journey that failed with its trip held can be cancelled, though never delivered.
    s.fake.script("personelEkle", 1, Behaviour::business(34, "Mesleki yeterlilik bulunamadı."));
    let other = s.tarifesiz("34HLF002", &[]).await;
    assert_eq!(s.submit(other).await["state"], "failed");
    let cancel = s.act(&format!("/portal/journeys/{other}/cancel")).await;
    assert_eq!(cancel["state"], "delivered", "{cancel}");
    let held = s.fake.trips().into_iter().find(|t| t.plate == "34HLF002").unwrap();
    assert_eq!(held.status.label(), "İptal");
    assert_eq!(s.app.get_ok(&format!("/portal/journeys/{other}"), s.key()).await["status"], "cancelled");
    // Its passengers take no more changes.
    let res = s.app.post(&format!("/portal/journeys/{other}/passengers"), Some(s.key()), passenger(72)).await;
    error_body(res, 409).await;
}

/// A firm whose password is special to XML and URLs, with a space and Turkish letters.
const HOSTILE_USER: &str = "123456";
const HOSTILE_PASSWORD: &str = "Gizli&<Ağaç> 2026";

/// Every form of [`HOSTILE_PASSWORD`] an answer could carry out: as sent, XML-escaped,
/// URL-encoded, its spaces collapsed, and the `Authorization: Basic` token (standard or
/// URL-safe, padded or not).
fn hostile_forms() -> Vec<String> {
    use base64::{engine::general_purpose as g, Engine as _};
    let pair = format!("{HOSTILE_USER}:{HOSTILE_PASSWORD}");
    vec![
        HOSTILE_PASSWORD.into(),
        "Gizli&amp;&lt;Ağaç&gt; 2026".into(),
        "Gizli%26%3CA%C4%9Fa%C3%A7%3E%202026".into(),
        g::STANDARD.encode(&pair),
        g::STANDARD_NO_PAD.encode(&pair),
        g::URL_SAFE.encode(&pair),
        g::URL_SAFE_NO_PAD.encode(&pair),
    ]
}

/// `text` carries no form of [`HOSTILE_PASSWORD`], whatever whitespace it put inside one.
fn assert_no_password(what: &str, text: &str) {
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    let squeezed = squeeze(text);
    for form in hostile_forms() {
        assert!(!squeezed.contains(&squeeze(&form)), "{what} carries the password as {form:?}: {text}");
    }
}

#[tokio::test]
async fn a_u_etds_answer_quoting_the_credentials_never_shows_them_in_a_credential_check() {
    let fake = FakeUetds::start_background();
    fake.add_account(HOSTILE_USER, HOSTILE_PASSWORD);
    let app =
        TestApp::start(Env::new().await.with_scheduler().with(&[("TNS_ADAPTER_UETDS_BASE_URL", &fake.base_url())]))
            .await;
    let org = app.register().await;
    let creds = json!({"adapter": "uetds", "environment": "test", "ws_username": HOSTILE_USER,
                       "ws_password": HOSTILE_PASSWORD});
    let check = |status: u16| {
        let (app, org, creds) = (&app, &org, creds.clone());
        async move { error_body(app.put("/portal/downstream", &org.key, creds).await, status).await }
    };
    let encoded = hostile_forms()[2].clone();
    let token = hostile_forms()[3].clone();

    // The service's own refusal repeating the login: a 422 with its words, the password masked.
    fake.script(
        "kullaniciKontrol",
        1,
        Behaviour::business(
            1,
            format!("KULLANICI ADI YADA SIFRE HATALI: {HOSTILE_USER}:{HOSTILE_PASSWORD} ({encoded})"),
        ),
    );
    let b = check(422).await;
    assert_no_password("a refusal", &b.to_string());
    let detail = b["detail"].as_str().unwrap();
    assert!(detail.contains(&format!("KULLANICI ADI YADA SIFRE HATALI: {HOSTILE_USER}:*** (***)")), "{b}");

    // A gateway quoting the request (the Basic header, the envelope), a fault quoting both:
    // 503s that still say what happened.
    fake.script("kullaniciKontrol", 1, Behaviour::Echo(502));
    let b = check(503).await;
    assert_no_password("a gateway's echo", &b.to_string());
    assert!(b["detail"].as_str().unwrap().contains("HTTP 502"), "{b}");
    fake.script(
        "kullaniciKontrol",
        1,
        Behaviour::fault("Server", format!("Basic {token} reddedildi (sifre {HOSTILE_PASSWORD})")),
    );
    let b = check(503).await;
    assert_no_password("a fault", &b.to_string());
    assert!(b["detail"].as_str().unwrap().contains("SOAP fault"), "{b}");
    assert_eq!(app.get_ok("/portal/downstream", &org.key).await["adapter"], "sandbox", "nothing saved");

    // Unscripted, the same credentials are right.
    json_of(app.put("/portal/downstream", &org.key, creds.clone()).await, 200).await;
    fake.assert_no_violations();
}

#[tokio::test]
async fn a_u_etds_answer_quoting_the_credentials_never_reaches_a_submission_or_a_report() {
    let s = Setup::as_firm(&[], HOSTILE_USER, HOSTILE_PASSWORD).await;
    let quoted = format!("{HOSTILE_USER}:{HOSTILE_PASSWORD}");

    // A passenger refused with a message quoting the password.
    s.fake.refuse_passenger(&tckn(61), &format!("Yolcu reddedildi ({quoted})"));
    let partial = s.submit(s.tarifesiz(&s.f.plate, &[passenger(61), passenger(62)]).await).await;
    assert_eq!((partial["state"].as_str(), outcomes(&partial)), (Some("delivered"), vec!["partial".to_string()]));
    assert!(partial["error_message"].as_str().unwrap().contains("Yolcu reddedildi"), "{partial}");

    // A gateway quoting the request once (transient, retried), then delivered.
    s.fake.script("seferEkle", 1, Behaviour::Echo(503));
    let retried = s.submit(s.tarifesiz("34ECH001", &[]).await).await;
    let retried = if retried["state"] == "pending" { final_state(&s, &retried).await } else { retried };
    assert_eq!(retried["state"], "delivered", "{retried}");
    assert_eq!(outcomes(&retried)[0], "transient");
    assert!(retried["history"][0]["error"].as_str().unwrap().contains("HTTP 503"), "{retried}");

    // A business refusal quoting it: failed, with U-ETDS's words.
    s.fake.script("seferEkle", 1, Behaviour::business(34, format!("Plaka kayıtlı değil ({quoted})")));
    let failed = s.submit(s.tarifesiz("34ECH002", &[]).await).await;
    assert_eq!((failed["state"].as_str(), outcomes(&failed)), (Some("failed"), vec!["permanent".to_string()]));
    assert!(failed["error_message"].as_str().unwrap().contains("Plaka kayıtlı değil"), "{failed}");

    for sub in [&partial, &retried, &failed] {
        let path = format!("/portal/submissions/{}", sub["id"]);
        assert_no_password(&path, &s.app.get_ok(&path, s.key()).await.to_string());
    }
    assert_no_password("the list", &s.app.get_ok("/portal/submissions", s.key()).await.to_string());
    // Nor anything stored: submissions (their progress too) and every attempt.
    let stored: Vec<String> = sqlx::query_scalar(
        "SELECT coalesce(string_agg(row_to_json(s)::text, ' '), '') FROM submissions s
         UNION ALL SELECT coalesce(string_agg(row_to_json(a)::text, ' '), '') FROM submission_attempts a",
    )
    .fetch_all(&s.app.db)
    .await
    .unwrap();
    let stored = stored.join(" ");
    assert!(stored.contains("Yolcu reddedildi") && stored.contains("Plaka kayıtlı değil"), "{stored}");
    assert_no_password("the stored submissions", &stored);

    // A report refused with the same words: a 409 without them.
    let journey = partial["target_id"].as_i64().unwrap();
    s.fake.script("seferDetayCiktisiAl", 1, Behaviour::business(1, format!("Rapor yok ({quoted})")));
    let res =
        s.app.req(Method::GET, &format!("/portal/journeys/{journey}/report"), Some(s.key())).send().await.unwrap();
    let b = error_body(res, 409).await;
    assert!(b["detail"].as_str().unwrap().contains("Rapor yok"), "{b}");
    assert_no_password("a report's refusal", &b.to_string());
    s.fake.assert_no_violations();
}

/// The jobs role's drift checks against `s`'s fake: every record due again at once
/// (`interval` zero) unless told otherwise, at most `per_org` of an organization per run.
fn drift_check(s: &Setup, interval: Duration, per_org: u32) -> DriftCheck {
    let cfg = s.app.env.config(Role::Jobs);
    let adapters = tns::roles::load_adapters(&cfg).unwrap();
    let settings = drift::DriftSettings { enabled: true, interval, batch: 100, per_org, days_back: 2 };
    let key = cfg.jobs.unwrap().data_key;
    DriftCheck::new(settings, adapters, key, Duration::from_secs(4), &prometheus::Registry::new()).unwrap()
}

/// Tomorrow, as a request's date: drift checks look at recent and coming trips only.
fn tomorrow() -> String {
    (chrono::Utc::now().date_naive() + chrono::Days::new(1)).to_string()
}

async fn drifted_events(s: &Setup) -> Vec<Value> {
    sqlx::query_scalar::<_, String>("SELECT body FROM webhook_events WHERE org_id = $1 AND type = $2 ORDER BY id")
        .bind(s.f.org.id)
        .bind("submission.drifted")
        .fetch_all(&s.app.db)
        .await
        .unwrap()
        .iter()
        .map(|b| serde_json::from_str(b).unwrap())
        .collect()
}

fn differences(sub: &Value) -> Vec<(String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap().to_string();
    sub["drift"]["differences"]
        .as_array()
        .unwrap_or(&vec![])
        .iter()
        .map(|d| (text(&d["field"]), text(&d["expected"]), text(&d["found"])))
        .collect()
}

#[tokio::test]
async fn a_trip_cancelled_or_changed_outside_tns_is_noticed_shown_and_told_once() {
    let s = Setup::new().await;
    let hook = json!({"event_type": "submission.drifted", "endpoint_url": "http://127.0.0.1:9/tns"});
    json_of(s.app.post("/portal/webhooks", Some(s.key()), hook).await, 201).await;
    let mut body = tarifesiz(json!(s.f.plate));
    body["personnel_ids"] = json!([s.f.driver_id]);
    body["departure"]["date"] = json!(tomorrow());
    body["arrival"]["date"] = json!(tomorrow());
    let id = s.journey(body, &[passenger(91), passenger(92)]).await;
    let sub = s.submit(id).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    let trip = s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub))[0].reference;
    let path = format!("/portal/submissions/{}", sub["id"]);
    let check = drift_check(&s, Duration::ZERO, 20);

    // In step: nothing shown, nothing told, one summary read.
    let before = s.fake.calls("bildirimOzeti");
    assert_eq!(check.run(&s.app.db).await.unwrap(), 0);
    assert_eq!(s.fake.calls("bildirimOzeti"), before + 1);
    assert!(s.app.get_ok(&path, s.key()).await.get("drift").is_none());

    // On e-Devlet: cancelled, moved to another vehicle, a passenger cancelled.
    assert!(s.fake.edit_trip(trip, |t| {
        t.status = Status::Cancelled;
        t.plate = "06XYZ99".into();
        t.passengers[0].status = Status::Cancelled;
    }));
    assert_eq!(check.run(&s.app.db).await.unwrap(), 1, "found drifted");
    let seen = s.app.get_ok(&path, s.key()).await;
    let plate = s.f.plate.replace(' ', "").to_uppercase();
    let expected = [
        ("state".to_string(), "active".to_string(), "cancelled".to_string()),
        ("plate".into(), plate, "06XYZ99".into()),
        ("passengers".into(), "2".into(), "1".into()),
    ];
    assert_eq!(differences(&seen), expected, "{seen}");
    // The journey itself is left as TNS holds it: the drift says what differs, a person decides.
    assert_eq!(s.app.get_ok(&format!("/portal/journeys/{id}"), s.key()).await["status"], "delivered");
    let events = drifted_events(&s).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["data"]["id"], sub["id"]);
    assert_eq!(differences(&events[0]["data"]), expected, "the event carries the drift");

    // The portal's page of the submission shows it too, and the journey's page says so.
    let visitor = crate::portal::Visitor::owner(&s.app, &s.f.org).await;
    let page = visitor.get(&format!("/submissions/{}", sub["id"])).await;
    assert!(page.body.contains("id=\"drift-h\"") && page.body.contains("06XYZ99"), "{}", page.body);
    let journey_page = visitor.get(&format!("/journeys/{id}")).await;
    assert!(
        journey_page.body.contains("TNS dışında değişmiş</strong>: state, plate, passengers"),
        "{}",
        journey_page.body
    );

    // Listed by the filter, on the API and in the portal.
    let ids = |v: Value| v["data"].as_array().unwrap().iter().map(|s| s["id"].clone()).collect::<Vec<_>>();
    assert_eq!(ids(s.app.get_ok("/portal/submissions?drifted=true", s.key()).await), [sub["id"].clone()]);
    assert!(!ids(s.app.get_ok("/portal/submissions?drifted=false", s.key()).await).contains(&sub["id"]));
    let listed = visitor.get("/submissions?drifted=true").await;
    assert!(listed.body.contains(&format!(r#"href="/submissions/{}""#, sub["id"])), "{}", listed.body);
    assert_invalid(s.app.get("/portal/submissions?drifted=maybe", s.key()).await, "drifted").await;

    // Found again: shown, not told again.
    assert_eq!(check.run(&s.app.db).await.unwrap(), 0);
    assert_eq!(drifted_events(&s).await.len(), 1);
    assert_eq!(differences(&s.app.get_ok(&path, s.key()).await), expected);

    // Put back on e-Devlet: in step again, the drift cleared.
    let plate = s.fake.trip(trip).map(|_| s.f.plate.clone()).unwrap();
    assert!(s.fake.edit_trip(trip, |t| {
        t.status = Status::Valid;
        t.plate = plate;
        t.passengers[0].status = Status::Valid;
    }));
    assert_eq!(check.run(&s.app.db).await.unwrap(), 0);
    assert!(s.app.get_ok(&path, s.key()).await.get("drift").is_none());
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn drift_checks_cover_goods_trips_and_stay_within_their_bounds() {
    let s = Setup::new().await;
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    body["loading_date"] = json!(tomorrow());
    body["unloading_date"] = json!(tomorrow());
    let mut subs = vec![];
    for _ in 0..3 {
        let id = s.app.post_ok("/portal/cargo", s.key(), body.clone(), 201).await["id"].as_i64().unwrap();
        let sub = s.act(&format!("/portal/cargo/{id}/submit")).await;
        assert_eq!(sub["state"], "delivered", "{sub}");
        subs.push(sub);
    }
    // A shipment whose trip left long ago is not looked at.
    let mut old = body.clone();
    (old["loading_date"], old["unloading_date"]) = (json!("2026-01-05"), json!("2026-01-06"));
    let id = s.app.post_ok("/portal/cargo", s.key(), old, 201).await["id"].as_i64().unwrap();
    assert_eq!(s.act(&format!("/portal/cargo/{id}/submit")).await["state"], "delivered");

    // The first shipment's trip is cancelled on e-Devlet; the third's reference names a trip
    // declared under another sender's reference (never compared: refused).
    let trip_of = |sub: &Value| {
        s.fake.cargo_trips().into_iter().find(|t| t.firma_sefer_no.as_deref() == Some(&Setup::reference(sub))).unwrap()
    };
    assert!(s.fake.edit_cargo_trip(trip_of(&subs[0]).id, |t| t.status = Status::Cancelled));
    assert!(s.fake.edit_cargo_trip(trip_of(&subs[2]).id, |t| {
        t.status = Status::Cancelled;
        t.firma_sefer_no = Some("another-firm-7".into());
    }));

    // Two per organization per run, each checked once per interval: 2, then 1, then none.
    let check = drift_check(&s, Duration::from_secs(3600), 2);
    let details = || s.fake.calls("seferDetayiV3");
    let start = details();
    assert_eq!(check.run(&s.app.db).await.unwrap(), 1);
    assert_eq!(details(), start + 2);
    assert_eq!(check.run(&s.app.db).await.unwrap(), 0);
    assert_eq!(details(), start + 3);
    assert_eq!(check.run(&s.app.db).await.unwrap(), 0);
    assert_eq!(details(), start + 3, "nothing due within the interval");

    let first = s.app.get_ok(&format!("/portal/submissions/{}", subs[0]["id"]), s.key()).await;
    assert_eq!(differences(&first), [("state".to_string(), "active".to_string(), "cancelled".to_string())]);
    for sub in &subs[1..] {
        let now = s.app.get_ok(&format!("/portal/submissions/{}", sub["id"]), s.key()).await;
        assert!(now.get("drift").is_none(), "{now}");
    }
    // Cancelling it through TNS queues another submission: the first's drift is cleared, and
    // the cancellation delivered is what the next check compares with (in step).
    let cancel = s.act(&format!("/portal/cargo/{}/cancel", subs[0]["target_id"])).await;
    assert_eq!(cancel["state"], "delivered", "{cancel}");
    let first = s.app.get_ok(&format!("/portal/submissions/{}", subs[0]["id"]), s.key()).await;
    assert!(first.get("drift").is_none(), "{first}");
    let start = details();
    assert_eq!(check.run(&s.app.db).await.unwrap(), 0);
    assert_eq!(details(), start + 1, "the cancellation is checked");
    let checked = s.app.get_ok(&format!("/portal/submissions/{}", cancel["id"]), s.key()).await;
    assert!(checked.get("drift").is_none(), "{checked}");
    // Another organization sees nothing of it.
    let other = Fleet::new(&s.app).await;
    error_body(s.app.get(&format!("/portal/submissions/{}", subs[0]["id"]), other.key()).await, 404).await;
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn a_drift_check_the_downstream_cannot_answer_waits_for_the_next_run_and_a_failing_one_ends_it() {
    let s = Setup::new().await;
    let mut body = tarifesiz(json!(s.f.plate));
    body["departure"]["date"] = json!(tomorrow());
    body["arrival"]["date"] = json!(tomorrow());
    let mut subs = vec![];
    for _ in 0..7 {
        let id = s.journey(body.clone(), &[]).await;
        subs.push(s.submit(id).await);
    }
    let check = drift_check(&s, Duration::from_secs(3600), 20);
    let summaries = || s.fake.calls("bildirimOzeti");
    // U-ETDS down: the run stops after five failures in a row; nothing is marked checked.
    s.fake.script("bildirimOzeti", 100, Behaviour::Status(503));
    let start = summaries();
    assert_eq!(check.run(&s.app.db).await.unwrap(), 0);
    let tried = summaries() - start;
    assert!((5..=8).contains(&tried), "stopped early after {tried} calls");
    // Every call of that run ended with it: none arrives later.
    assert_eq!(summaries() - start, tried);
    s.fake.clear_scripts();
    // Back: the next run checks those not tried; the failed ones are tried again after a while
    // (behind the others), and nothing is due after that within the interval.
    let start = summaries();
    assert_eq!(check.run(&s.app.db).await.unwrap(), 0);
    assert_eq!(summaries() - start, 7 - tried);
    assert_eq!(check.run(&s.app.db).await.unwrap(), 0);
    assert_eq!(summaries() - start, 7 - tried, "each checked once per interval");
    let waiting: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM submissions WHERE org_id = $1
            AND drift_checked_at BETWEEN now() - interval '46 minutes' AND now() - interval '44 minutes'",
    )
    .bind(s.f.org.id)
    .fetch_one(&s.app.db)
    .await
    .unwrap();
    assert_eq!(waiting as usize, tried, "the failed ones are due again in 15 minutes");
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn a_trip_abroad_sends_the_country_and_place_to_its_passenger_group() {
    let s = Setup::new().await;
    let mut body = tarifesiz(json!(s.f.plate));
    body["personnel_ids"] = json!([s.f.driver_id]);
    body["arrival"] = json!({"date": "2026-12-02", "time": "06:00", "country": "bg", "place": "Sofya"});
    let id = s.journey(body.clone(), &[passenger(96)]).await;
    let path = format!("/portal/journeys/{id}");
    let shown = s.app.get_ok(&path, s.key()).await;
    assert_eq!(shown["arrival"], json!({"date": "2026-12-02", "time": "06:00", "country": "BG", "place": "Sofya"}));
    assert_eq!(shown["departure"]["district_id"], KADIKOY.to_string(), "a stop at home is as before");
    assert!(shown["departure"].get("country").is_none());

    let sub = s.submit(id).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    let trip = &s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub))[0];
    let group = trip.groups.iter().find(|g| g.status == Status::Valid).unwrap();
    assert_eq!((group.start_country.as_str(), group.start_province, group.start_district), ("TR", ISTANBUL, KADIKOY));
    assert_eq!((group.end_country.as_str(), group.end_province, group.end_place.as_str()), ("BG", 0, "Sofya"));
    assert_eq!(trip.valid_passengers().count(), 1);

    // Moved to another city abroad: the group follows.
    let moved = json!({"arrival": {"place": "Plovdiv"}});
    json_of(s.app.put(&path, s.key(), moved).await, 200).await;
    assert_eq!(s.submit(id).await["state"], "delivered");
    let trip = &s.fake.trips_with_firma_sefer_no(&Setup::reference(&sub))[0];
    let group = trip.groups.iter().find(|g| g.status == Status::Valid).unwrap();
    assert_eq!((group.end_country.as_str(), group.end_place.as_str()), ("BG", "Plovdiv"), "{group:?}");
    s.fake.assert_no_violations();

    // What a stop abroad must and must not have, each refused naming its field.
    let refused = [
        (json!({"date": "2026-12-02", "time": "06:00", "country": "BG"}), "arrival.place"),
        (
            json!({"date": "2026-12-02", "time": "06:00", "country": "BG", "place": "Sofya", "district_id": CEYHAN}),
            "arrival.district_id",
        ),
        (json!({"date": "2026-12-02", "time": "06:00", "place": "Sofya", "district_id": CEYHAN}), "arrival.place"),
        (json!({"date": "2026-12-02", "time": "06:00"}), "arrival.district_id"),
        (json!({"date": "2026-12-02", "time": "06:00", "country": "Bulgaria", "place": "Sofya"}), "arrival.country"),
    ];
    for (arrival, field) in refused {
        let mut bad = body.clone();
        bad["arrival"] = arrival.clone();
        assert_invalid(s.app.post("/portal/journeys", Some(s.key()), bad).await, field).await;
    }
    let mut both = body.clone();
    both["departure"] = json!({"date": "2026-12-01", "time": "08:30", "country": "GR", "place": "Atina"});
    assert_invalid(s.app.post("/portal/journeys", Some(s.key()), both).await, "arrival.country").await;
    let mut scheduled = journey(json!(s.f.plate));
    scheduled["arrival"] = body["arrival"].clone();
    assert_invalid(s.app.post("/portal/journeys", Some(s.key()), scheduled).await, "arrival.country").await;
}

#[tokio::test]
async fn the_portal_registers_the_platforms_addresses_at_u_etds() {
    let s = Setup::with(&[("TNS_EGRESS_IPS", "203.0.113.50")]).await;
    let v = crate::portal::Visitor::owner(&s.app, &s.f.org).await;
    let page = "/settings/downstream/addresses";
    // Linked from the downstream's page once U-ETDS is chosen.
    assert!(v.get("/settings/downstream").await.body.contains(&format!(r#"href="{page}""#)));
    let seen = v.get(page).await;
    assert_eq!(seen.status, reqwest::StatusCode::OK, "{}", seen.body);
    assert!(seen.body.contains("<code>203.0.113.50</code>"), "the platform's address: {}", seen.body);

    let added = v.submit(page, page, &[("first", "203.0.113.50"), ("last", "")]).await;
    assert_eq!((added.status.as_u16(), added.location()), (303, "/settings/downstream/addresses?done=added"));
    let held = s.app.get_ok("/portal/downstream/allowed-addresses", s.key()).await;
    assert_eq!(held["data"][0]["first"], "203.0.113.50", "{held}");
    let shown = v.get(added.location()).await;
    assert!(shown.body.contains("<td><code>203.0.113.50</code></td>"), "{}", shown.body);

    // Not an address: the API's message beside the field, what was typed kept.
    let bad = v.submit(page, page, &[("first", "not-an-address"), ("last", "")]).await;
    assert_eq!(bad.status.as_u16(), 422, "{}", bad.body);
    assert!(bad.body.contains(r#"id="first-error""#) && bad.body.contains(r#"value="not-an-address""#), "{}", bad.body);

    // U-ETDS keeps at least one: its refusal shown on the page, in its words.
    let id = held["data"][0]["id"].as_str().unwrap().to_string();
    let kept = v.submit(page, &format!("{page}/{id}/remove"), &[]).await;
    assert_eq!(kept.status.as_u16(), 409, "{}", kept.body);
    assert!(kept.body.contains("Son IP kaydı silinemez"), "{}", kept.body);
    let more = v.submit(page, page, &[("first", "198.51.100.1"), ("last", "198.51.100.9")]).await;
    assert_eq!(more.status.as_u16(), 303, "{}", more.body);
    let removed = v.submit(page, &format!("{page}/{id}/remove"), &[]).await;
    assert_eq!((removed.status.as_u16(), removed.location()), (303, "/settings/downstream/addresses?done=removed"));
    let held = s.app.get_ok("/portal/downstream/allowed-addresses", s.key()).await;
    assert_eq!(held["data"].as_array().unwrap().len(), 1);
    assert_eq!(
        (held["data"][0]["first"].as_str(), held["data"][0]["last"].as_str()),
        (Some("198.51.100.1"), Some("198.51.100.9"))
    );
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn an_amendment_that_renamed_the_trip_then_failed_leaves_the_journey_on_the_new_reference() {
    let s = Setup::new().await;
    s.fake.renumber_on_update();
    let id = s.tarifesiz(&s.f.plate, &[passenger(74)]).await;
    let first = s.submit(id).await;
    assert_eq!(first["state"], "delivered", "{first}");
    let path = format!("/portal/journeys/{id}");
    // Another time (the update renames the trip) and another crew member, whom U-ETDS refuses.
    let host = s.app.post_ok("/portal/personnel", s.key(), person(75, "host"), 201).await["id"].clone();
    let change = json!({"departure": {"time": "11:15"}, "personnel_ids": [s.f.driver_id, host]});
    json_of(s.app.put(&path, s.key(), change).await, 200).await;
    s.fake.script("personelEkle", 1, Behaviour::business(23, "Personel bilgileri hatalı"));
    let failed = s.submit(id).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    let renamed = s.fake.trips_with_firma_sefer_no(&Setup::reference(&first))[0].reference.to_string();
    assert_ne!(renamed, first["downstream_reference"].as_str().unwrap());
    let journey = s.app.get_ok(&path, s.key()).await;
    assert_eq!(journey["downstream_reference"], renamed.as_str(), "the trip is known by its new reference: {journey}");
    // Cancelled from the journey now, it is the renamed trip that is cancelled.
    let cancel = s.act(&format!("{path}/cancel")).await;
    assert_eq!(cancel["state"], "delivered", "{cancel}");
    assert_eq!(s.fake.trip(renamed.parse().unwrap()).unwrap().status, Status::Cancelled);
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn a_goods_trip_carries_its_trailer_plate_and_second_driver() {
    let s = Setup::new().await;
    let second = s.app.post_ok("/portal/personnel", s.key(), person(77, "driver"), 201).await["id"].as_i64().unwrap();
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    body["second_driver_id"] = json!(second);
    body["trailer_plate"] = json!("34 rmk 77");
    let made = s.app.post_ok("/portal/cargo", s.key(), body.clone(), 201).await;
    assert_eq!((made["trailer_plate"].as_str(), made["second_driver_id"].as_i64()), (Some("34RMK77"), Some(second)));
    let sub = s.act(&format!("/portal/cargo/{}/submit", made["id"])).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    let trip = s.fake.cargo_trips().into_iter().find(|t| t.firma_sefer_no.as_deref() == Some(&Setup::reference(&sub)));
    let trip = trip.unwrap();
    assert_eq!(trip.plate2.as_deref(), Some("34RMK77"));
    assert_eq!(trip.driver2.as_deref(), Some(tckn(77).as_str()));
    s.fake.assert_no_violations();
    // A shipment without either says nothing of them.
    let plain = s.app.post_ok("/portal/cargo", s.key(), cargo(s.f.vehicle_id), 201).await;
    assert!(plain.get("trailer_plate").is_none() && plain.get("second_driver_id").is_none(), "{plain}");

    // The second driver is another person than the first, a driver needs a first, and either
    // must be the organization's.
    let mut same = body.clone();
    same["second_driver_id"] = json!(s.f.driver_id);
    assert_invalid(s.app.post("/portal/cargo", Some(s.key()), same).await, "second_driver_id").await;
    let mut alone = body.clone();
    alone.as_object_mut().unwrap().remove("driver_id");
    assert_invalid(s.app.post("/portal/cargo", Some(s.key()), alone).await, "second_driver_id").await;
    let mut stranger = body.clone();
    stranger["second_driver_id"] = json!(987_654_321);
    let e = error_body(s.app.post("/portal/cargo", Some(s.key()), stranger).await, 404).await;
    assert!(e["detail"].as_str().unwrap().starts_with("second_driver_id"), "{e}");
    let mut bad_plate = body.clone();
    bad_plate["trailer_plate"] = json!("34-RMK");
    assert_invalid(s.app.post("/portal/cargo", Some(s.key()), bad_plate).await, "trailer_plate").await;
}

#[tokio::test]
async fn a_delivered_goods_shipment_is_edited_in_place_at_u_etds() {
    let s = Setup::new().await;
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    (body["loading_date"], body["unloading_date"]) = (json!(tomorrow()), json!(tomorrow()));
    body["unloading_time"] = json!("23:00");
    let id = s.app.post_ok("/portal/cargo", s.key(), body, 201).await["id"].as_i64().unwrap();
    let first = s.act(&format!("/portal/cargo/{id}/submit")).await;
    assert_eq!(first["state"], "delivered", "{first}");
    let reference = Setup::reference(&first);
    let trip_of =
        |s: &Setup| s.fake.cargo_trips().into_iter().find(|t| t.firma_sefer_no.as_deref() == Some(&reference));
    let path = format!("/portal/cargo/{id}");

    // The amount alone: the load is edited, the trip is not; the tags stay ours.
    let put = json_of(s.app.put(&path, s.key(), json!({"cargo_amount": 2750.5})).await, 200).await;
    assert_eq!(put["status"], "delivered", "an edit leaves the state until it is submitted: {put}");
    let sub = s.act(&format!("{path}/submit")).await;
    assert_eq!((sub["operation"].as_str(), sub["state"].as_str()), (Some("amendment"), Some("delivered")), "{sub}");
    assert_eq!(sub["downstream_reference"], first["downstream_reference"]);
    let trip = trip_of(&s).expect("the trip keeps its tag");
    assert_eq!((trip.updates, s.fake.calls("yukDuzenleV3"), s.fake.calls("seferDuzenleV3")), (0, 1, 0));
    let load = trip.valid_loads().next().unwrap().clone();
    assert_eq!((load.updates, load.firma_yuk_no.as_deref()), (1, Some(reference.as_str())));
    assert_eq!(load.input.child_text("yukMiktari"), Some("2750.5"));
    s.fake.assert_no_violations();

    // A trailer and a later loading: the trip is edited (the load's day moves with it).
    json_of(s.app.put(&path, s.key(), json!({"trailer_plate": "34TR55", "loading_time": "11:20"})).await, 200).await;
    let sub = s.act(&format!("{path}/submit")).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    let trip = trip_of(&s).unwrap();
    assert_eq!((trip.plate2.as_deref(), trip.start_time.as_str(), trip.updates), (Some("34TR55"), "11:20", 1));
    assert_eq!(s.fake.calls("seferEkle") + s.fake.calls("yeniSeferEkleV3"), 1, "never declared again");

    // Nothing changed since: the last delivery answers; a drift check finds it in step.
    let again = s.app.req(Method::POST, &format!("{path}/submit"), Some(s.key())).send().await.unwrap();
    assert_eq!(json_of(again, 202).await["submission_id"], sub["id"]);
    let details = s.fake.calls("seferDetayiV3");
    drift_check(&s, Duration::ZERO, 20).run(&s.app.db).await.unwrap();
    assert!(s.fake.calls("seferDetayiV3") > details, "the shipment was checked");
    let checked = s.app.get_ok(&format!("/portal/submissions/{}", sub["id"]), s.key()).await;
    assert!(checked.get("drift").is_none(), "the amended shipment is what U-ETDS holds: {checked}");
    // A cancelled shipment takes no more changes.
    s.act(&format!("{path}/cancel")).await;
    error_body(s.app.put(&path, s.key(), json!({"cargo_amount": 1})).await, 409).await;
    s.fake.assert_no_violations();
}

#[tokio::test]
async fn dangerous_goods_go_with_their_un_number_and_way_of_carrying() {
    let s = Setup::new().await;
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    (body["un_number"], body["dangerous_packaging"], body["dangerous_exemption"]) =
        (json!("1203"), json!("tank"), json!("1.1.3.6"));
    let made = s.app.post_ok("/portal/cargo", s.key(), body.clone(), 201).await;
    assert_eq!((made["un_number"].as_str(), made["dangerous_packaging"].as_str()), (Some("1203"), Some("tank")));
    let id = made["id"].as_i64().unwrap();
    let sub = s.act(&format!("/portal/cargo/{id}/submit")).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    let trip = s.fake.cargo_trips().into_iter().find(|t| t.firma_sefer_no.as_deref() == Some(&Setup::reference(&sub)));
    let load = trip.unwrap().loads[0].clone();
    assert_eq!(load.transport_kind, "1", "declared dangerous");
    let sent = |name: &str| load.input.child_text(name).map(str::to_string);
    assert_eq!(
        (sent("unId"), sent("tehlikeliMaddeTasimaSekli"), sent("muafiyetTuru")),
        (Some("1203".into()), Some("2".into()), Some("1.1.3.6".into()))
    );
    s.fake.assert_no_violations();

    // Carried in bulk after all, without the exemption: the delivered load is edited.
    let path = format!("/portal/cargo/{id}");
    let put = json!({"dangerous_packaging": "bulk", "dangerous_exemption": null});
    json_of(s.app.put(&path, s.key(), put).await, 200).await;
    assert_eq!(s.act(&format!("{path}/submit")).await["state"], "delivered");
    let trip = s.fake.cargo_trips().into_iter().find(|t| t.firma_sefer_no.as_deref() == Some(&Setup::reference(&sub)));
    let load = trip.unwrap().loads[0].clone();
    assert_eq!(load.input.child_text("tehlikeliMaddeTasimaSekli"), Some("3"));
    assert_eq!(load.input.child_text("muafiyetTuru"), None);
    s.fake.assert_no_violations();

    // The number and the way of carrying go together; an exemption needs them.
    let with = |changes: Value| {
        let mut b = cargo(s.f.vehicle_id);
        for (k, v) in changes.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };
    let post = |b: Value| s.app.post("/portal/cargo", Some(s.key()), b);
    assert_invalid(post(with(json!({"un_number": "1203"}))).await, "dangerous_packaging").await;
    assert_invalid(post(with(json!({"dangerous_packaging": "tank"}))).await, "un_number").await;
    assert_invalid(post(with(json!({"dangerous_exemption": "1"}))).await, "dangerous_exemption").await;
    assert_invalid(post(with(json!({"un_number": "12A3", "dangerous_packaging": "tank"}))).await, "un_number").await;
    assert_invalid(
        post(with(json!({"un_number": "1203", "dangerous_packaging": "barrel"}))).await,
        "dangerous_packaging",
    )
    .await;
}

#[tokio::test]
async fn goods_unloaded_abroad_go_with_the_country_and_no_province() {
    let s = Setup::new().await;
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    let o = body.as_object_mut().unwrap();
    o.remove("unloading_city_id");
    o.remove("unloading_district_id");
    o.insert("unloading_country".into(), json!("de"));
    let made = s.app.post_ok("/portal/cargo", s.key(), body.clone(), 201).await;
    assert_eq!(made["unloading_country"], "DE");
    assert!(made.get("unloading_city_id").is_none() && made.get("loading_country").is_none(), "{made}");
    let sub = s.act(&format!("/portal/cargo/{}/submit", made["id"])).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    s.fake.assert_no_violations();
    let trip = s.fake.cargo_trips().into_iter().find(|t| t.firma_sefer_no.as_deref() == Some(&Setup::reference(&sub)));
    let load = &trip.unwrap().loads[0].input;
    assert_eq!((load.child_text("yuklemeUlkeKodu"), load.child_text("yuklemeIlMernisKodu")), (Some("TR"), Some("34")));
    assert_eq!((load.child_text("bosaltmaUlkeKodu"), load.child_text("bosaltmaIlMernisKodu")), (Some("DE"), None));
    assert_eq!(load.child_text("bosaltmaIlceMernisKodu"), None);

    // Abroad means no province or district; at home both.
    let mut both = body.clone();
    both["unloading_city_id"] = json!(ADANA);
    assert_invalid(s.app.post("/portal/cargo", Some(s.key()), both).await, "unloading_city_id").await;
    let mut neither = cargo(s.f.vehicle_id);
    neither.as_object_mut().unwrap().remove("loading_district_id");
    assert_invalid(s.app.post("/portal/cargo", Some(s.key()), neither).await, "loading_district_id").await;
    // Brought home by a merge patch: the country removed, a province and district given.
    let path = format!("/portal/cargo/{}", s.app.post_ok("/portal/cargo", s.key(), body, 201).await["id"]);
    let home = json!({"unloading_country": null, "unloading_city_id": ADANA, "unloading_district_id": CEYHAN});
    let moved = json_of(s.app.put(&path, s.key(), home).await, 200).await;
    assert_eq!((moved["unloading_city_id"].as_i64(), moved.get("unloading_country")), (Some(ADANA), None));
}

#[tokio::test]
async fn a_cancelled_shipment_is_reactivated_at_u_etds_with_its_load() {
    let s = Setup::new().await;
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    let id = s.app.post_ok("/portal/cargo", s.key(), body, 201).await["id"].as_i64().unwrap();
    let path = format!("/portal/cargo/{id}");
    // Nothing to re-activate before it is cancelled.
    let e = error_body(s.app.post(&format!("{path}/reactivate"), Some(s.key()), json!({})).await, 409).await;
    assert!(e["detail"].as_str().unwrap().contains("not cancelled"), "{e}");
    let sub = s.act(&format!("{path}/submit")).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    let trip = s.fake.cargo_trips().into_iter().find(|t| t.firma_sefer_no.as_deref() == Some(&Setup::reference(&sub)));
    let trip = trip.unwrap().id;
    assert_eq!(s.act(&format!("{path}/cancel")).await["state"], "delivered");
    // On U-ETDS's portal the load was cancelled as well.
    assert!(s.fake.edit_cargo_trip(trip, |t| t.loads[0].status = Status::Cancelled));

    let back = s.act(&format!("{path}/reactivate")).await;
    assert_eq!((back["operation"].as_str(), back["state"].as_str()), (Some("reactivate"), Some("delivered")), "{back}");
    assert_eq!((s.fake.calls("seferAktifEtV3"), s.fake.calls("yukAktifEtV3")), (1, 1));
    let held = s.fake.cargo_trip(trip).unwrap();
    assert_eq!((held.status, held.loads[0].status), (Status::Valid, Status::Valid));
    assert_eq!(s.app.get_ok(&path, s.key()).await["status"], "delivered");
    // Again: nothing to do (it is not cancelled now).
    error_body(s.app.post(&format!("{path}/reactivate"), Some(s.key()), json!({})).await, 409).await;

    // Cancelled and re-activated by hand on U-ETDS's portal meanwhile: the refusal of what is
    // active already is done, and a load never cancelled is left alone.
    assert_eq!(s.act(&format!("{path}/cancel")).await["state"], "delivered");
    assert!(s.fake.edit_cargo_trip(trip, |t| t.status = Status::Valid));
    let again = s.act(&format!("{path}/reactivate")).await;
    assert_eq!(again["state"], "delivered", "{again}");
    assert_eq!((s.fake.calls("seferAktifEtV3"), s.fake.calls("yukAktifEtV3")), (2, 1));
    s.fake.assert_no_violations();

    // A shipment cancelled before it was ever delivered (its trip declared, its load refused)
    // has no delivery to bring back: submitted again instead.
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    let half = s.app.post_ok("/portal/cargo", s.key(), body, 201).await["id"].as_i64().unwrap();
    s.fake.script("sefereYukEkleV3", 1, Behaviour::business(23, "Yük bilgileri hatalı"));
    assert_eq!(s.act(&format!("/portal/cargo/{half}/submit")).await["state"], "failed");
    assert_eq!(s.act(&format!("/portal/cargo/{half}/cancel")).await["state"], "delivered");
    let e =
        error_body(s.app.post(&format!("/portal/cargo/{half}/reactivate"), Some(s.key()), json!({})).await, 409).await;
    assert!(e["detail"].as_str().unwrap().contains("before it was ever delivered"), "{e}");

    // The portal offers it on a cancelled shipment's page.
    assert_eq!(s.act(&format!("{path}/cancel")).await["state"], "delivered");
    let page = crate::portal::Visitor::owner(&s.app, &s.f.org).await.get(&format!("/cargo/{id}")).await;
    assert!(page.body.contains(&format!(r#"action="/cargo/{id}/reactivate""#)), "{}", page.body);
}

/// The code lists job against `s`'s fake, reading with `s`'s organization's account.
fn code_list_refresh(s: &Setup) -> tns_jobs::code_lists::CodeListRefresh {
    let cfg = s.app.env.config(Role::Jobs);
    let adapters = tns::roles::load_adapters(&cfg).unwrap();
    let key = cfg.jobs.unwrap().data_key;
    tns_jobs::code_lists::CodeListRefresh::new(s.f.org.id, adapters, key, Duration::from_secs(4))
}

fn codes_of(list: &Value) -> Vec<String> {
    list["codes"].as_array().unwrap().iter().map(|c| c["code"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn code_lists_come_from_u_etds_daily_and_a_shipment_is_cancelled_with_a_kind_from_them() {
    let s = Setup::new().await;
    let db = s.app.env.pool().await;

    // Before the job has read anything: the shipped copies, an unknown list is a 404.
    let transport = s.app.get_ok("/ref/code-lists/transport_kinds", s.key()).await;
    assert_eq!((transport["source"].as_str(), codes_of(&transport)), (Some("shipped"), vec!["1".into(), "2".into()]));
    assert!(transport.get("refreshed_at").is_none(), "{transport}");
    assert_eq!(codes_of(&s.app.get_ok("/ref/code-lists/trip_cancel_kinds", s.key()).await), Vec::<String>::new());
    error_body(s.app.get("/ref/code-lists/colours", s.key()).await, 404).await;

    // The job reads every list from the goods service, with the organization's account; a
    // list U-ETDS does not answer keeps its copy and is asked again at the next run.
    let refresh = code_list_refresh(&s);
    s.fake.script("paramYukBirimi", 2, Behaviour::fault("Server", "geçici hata"));
    assert_eq!(refresh.run(&db).await.unwrap(), 7, "all but the units");
    let units = s.app.get_ok("/ref/code-lists/goods_units", s.key()).await;
    assert_eq!((units["source"].as_str(), codes_of(&units).len()), (Some("shipped"), 6), "{units}");
    assert_eq!(refresh.run(&db).await.unwrap(), 9, "asked again, every list now from U-ETDS");
    for op in ["seferIptalTurleri", "iptalTurleri", "paramTasimaTurleri", "paramTehlikeliMaddeTasimaSekli"] {
        assert_eq!(s.fake.calls(op), 2, "{op}");
    }
    assert_eq!(s.fake.calls("paramYukTuru"), 4, "for dangerous goods and for the others, twice");
    let all = s.app.get_ok("/ref/code-lists", s.key()).await;
    let lists = all["data"].as_array().unwrap();
    assert_eq!(lists.len(), 9, "{all}");
    assert!(lists.iter().all(|l| l["source"] == "downstream" && l["refreshed_at"].is_string()), "{all}");
    let list = |name: &str| lists.iter().find(|l| l["name"] == name).unwrap().clone();
    assert_eq!(codes_of(&list("trip_cancel_kinds")), ["1", "2", "3"]);
    assert_eq!(codes_of(&list("goods_types")), ["1", "2", "3"]);
    assert_eq!(codes_of(&list("dangerous_goods_types")), ["101", "103"]);
    assert_eq!(list("dangerous_packaging")["codes"][2], json!({"code": "3", "name": "DÖKME"}));
    assert_eq!(codes_of(&list("dangerous_exemptions")), ["1", "2"]);
    // Fresh for a day: the next run asks nothing.
    assert_eq!(refresh.run(&db).await.unwrap(), 0);
    assert_eq!(s.fake.calls("seferIptalTurleri"), 2);

    // A shipment's cancellation takes a kind from the list (422 naming the field otherwise);
    // a journey's takes none.
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    let id = s.app.post_ok("/portal/cargo", s.key(), body, 201).await["id"].as_i64().unwrap();
    assert_eq!(s.act(&format!("/portal/cargo/{id}/submit")).await["state"], "delivered");
    let cancel = format!("/portal/cargo/{id}/cancel");
    let e = error_body(s.app.post(&cancel, Some(s.key()), json!({"cancel_kind": "9"})).await, 422).await;
    assert_eq!(e["field"], "cancel_kind", "{e}");
    assert!(e["detail"].as_str().unwrap().contains("1, 2, 3"), "{e}");
    let journey = s.tarifesiz(&s.f.plate, &[]).await;
    let path = format!("/portal/journeys/{journey}/cancel");
    assert_invalid(s.app.post(&path, Some(s.key()), json!({"cancel_kind": "2"})).await, "cancel_kind").await;
    // The portal's cancel form offers the list's kinds for a shipment.
    let v = crate::portal::Visitor::owner(&s.app, &s.f.org).await;
    let delivered =
        s.app.get_ok("/portal/submissions?target_type=cargo", s.key()).await["data"][0]["id"].as_i64().unwrap();
    let page = format!("/submissions/{delivered}");
    let seen = v.get(&page).await;
    assert!(
        seen.body.contains(r#"name="cancel_kind""#) && seen.body.contains(r#"<option value="2">"#),
        "{}",
        seen.body
    );
    let fields = [("cancel_kind", "2"), ("reason", "Araç arızası")];
    let posted = v.submit(&page, &format!("/submissions/{delivered}/cancel"), &fields).await;
    assert_eq!(posted.status, reqwest::StatusCode::SEE_OTHER, "{}", posted.body);
    let queued = posted.location().trim_start_matches("/submissions/").split('?').next().unwrap().to_string();
    let sub = final_state(&s, &json!({"id": queued.parse::<i64>().unwrap()})).await;
    let trip = s.fake.cargo_trip(sub["downstream_reference"].as_str().unwrap().parse().unwrap()).unwrap();
    assert_eq!((trip.cancel_code.as_deref(), trip.cancel_reason.as_deref()), (Some("2"), Some("Araç arızası")));
    s.fake.assert_no_violations();
}

/// A further load of a shipment: `n` units of goods type 7 from the fleet's sender.
fn item(amount: f64) -> Value {
    json!({"cargo_type": 7, "cargo_amount": amount, "cargo_unit": "KG", "sender_tax_number": VKN,
           "sender_name": "İkinci Gönderen", "receiver_tax_number": TCKN, "receiver_name": "İkinci Alıcı"})
}

#[tokio::test]
async fn a_shipment_with_several_loads_is_one_trip_and_its_loads_change_one_by_one() {
    let s = Setup::new().await;
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    (body["loading_date"], body["unloading_date"]) = (json!(tomorrow()), json!(tomorrow()));
    body["unloading_time"] = json!("23:00");
    let mut dangerous = item(40.0);
    dangerous["un_number"] = json!("1203");
    dangerous["dangerous_packaging"] = json!("tank");
    body["items"] = json!([item(100.0), dangerous]);
    let id = s.app.post_ok("/portal/cargo", s.key(), body.clone(), 201).await["id"].as_i64().unwrap();

    // The loads go in one call whose answer is lost: they are found by their tags, none sent twice.
    s.fake.script("sefereYukEkleV3", 1, Behaviour::LoseAnswer);
    let first = s.act(&format!("/portal/cargo/{id}/submit")).await;
    assert_eq!(first["state"], "delivered", "{first}");
    assert_eq!((s.fake.calls("yeniSeferEkleV3"), s.fake.calls("sefereYukEkleV3")), (1, 1));
    let reference = Setup::reference(&first);
    let trip_of =
        |s: &Setup| s.fake.cargo_trips().into_iter().find(|t| t.firma_sefer_no.as_deref() == Some(&reference));
    let trip = trip_of(&s).unwrap();
    let tags: Vec<String> = trip.valid_loads().map(|l| l.firma_yuk_no.clone().unwrap()).collect();
    assert_eq!(tags, [reference.clone(), format!("{reference}-2"), format!("{reference}-3")]);
    let third = &trip.valid_loads().nth(2).unwrap().input;
    assert_eq!(
        (third.child_text("tasimaTuruKodu"), third.child_text("unId"), third.child_text("tehlikeliMaddeTasimaSekli")),
        (Some("1"), Some("1203"), Some("2"))
    );
    assert_eq!(trip.valid_loads().nth(1).unwrap().input.child_text("gonderenUnvan"), Some("İkinci Gönderen"));
    let shown = s.app.get_ok(&format!("/portal/cargo/{id}"), s.key()).await;
    assert_eq!(shown["items"].as_array().map(Vec::len), Some(2), "{shown}");

    // One load changed, one taken off: edited and withdrawn, the shipment's own untouched.
    let path = format!("/portal/cargo/{id}");
    json_of(s.app.put(&path, s.key(), json!({"items": [item(150.0)]})).await, 200).await;
    let sub = s.act(&format!("{path}/submit")).await;
    assert_eq!((sub["operation"].as_str(), sub["state"].as_str()), (Some("amendment"), Some("delivered")), "{sub}");
    let trip = trip_of(&s).unwrap();
    let load = |tag: &str| trip.loads.iter().find(|l| l.firma_yuk_no.as_deref() == Some(tag)).unwrap().clone();
    assert_eq!(load(&format!("{reference}-2")).input.child_text("yukMiktari"), Some("150"));
    let gone = load(&format!("{reference}-3"));
    assert_eq!((gone.status.label(), gone.cancel_code.as_deref()), ("İptal", Some("1")));
    assert_eq!((load(&reference).updates, s.fake.calls("yukDuzenleV3"), s.fake.calls("yukIptalEtV3")), (0, 1, 1));

    // A load added back: declared on the same trip, whose answer lost again is found by its tag.
    s.fake.script("sefereYukEkleV3", 1, Behaviour::LoseAnswer);
    json_of(s.app.put(&path, s.key(), json!({"items": [item(150.0), item(9.0)]})).await, 200).await;
    let sub = s.act(&format!("{path}/submit")).await;
    assert_eq!(sub["state"], "delivered", "{sub}");
    let trip = trip_of(&s).unwrap();
    assert_eq!(trip.valid_loads().count(), 3, "{:?}", trip.loads);
    assert_eq!(s.fake.calls("sefereYukEkleV3"), 2);
    assert_eq!(s.fake.calls("yeniSeferEkleV3"), 1, "never declared again");

    // Cancelled, its loads withdrawn by hand too: re-activation brings back the trip and each load.
    assert_eq!(s.act(&format!("{path}/cancel")).await["state"], "delivered");
    let trip_id = trip.id;
    s.fake.edit_cargo_trip(trip_id, |t| t.loads.iter_mut().for_each(|l| l.status = Status::Cancelled));
    let back = s.act(&format!("{path}/reactivate")).await;
    assert_eq!(back["state"], "delivered", "{back}");
    let trip = trip_of(&s).unwrap();
    assert_eq!((trip.status.label(), trip.valid_loads().count()), ("Geçerli", 3), "{:?}", trip.loads);
    assert_eq!(s.fake.calls("yukAktifEtV3"), 3, "the shipment's loads, not the one it withdrew");

    // Back to the shipment's own load alone; then every load is withdrawn with the trip.
    json_of(s.app.put(&path, s.key(), json!({"items": null})).await, 200).await;
    assert_eq!(s.act(&format!("{path}/submit")).await["state"], "delivered");
    assert_eq!(trip_of(&s).unwrap().valid_loads().count(), 1);
    s.fake.assert_no_violations();

    // Validation: at most 49, each load's dangerous-goods fields together, units U-ETDS has.
    body["items"] = json!(vec![item(1.0); 50]);
    assert_invalid(s.app.post("/portal/cargo", Some(s.key()), body.clone()).await, "items").await;
    let mut half = item(1.0);
    half["un_number"] = json!("1203");
    body["items"] = json!([item(1.0), half]);
    assert_invalid(s.app.post("/portal/cargo", Some(s.key()), body.clone()).await, "items[1].dangerous_packaging")
        .await;
    let mut m3 = item(1.0);
    m3["cargo_unit"] = json!("M3");
    body["items"] = json!([m3]);
    let e = error_body(s.app.post("/portal/cargo", Some(s.key()), body).await, 409).await;
    assert!(e["detail"].as_str().unwrap().starts_with("items[0].cargo_unit: "), "{e}");
}

#[tokio::test]
async fn a_load_refused_among_others_fails_the_shipment_and_sending_it_again_brings_the_trip_in_step() {
    let s = Setup::new().await;
    s.fake.set_keep_requests(true);
    let mut body = cargo(s.f.vehicle_id);
    body["driver_id"] = json!(s.f.driver_id);
    body["items"] = json!([item(1.0), item(2.0)]);
    let id = s.app.post_ok("/portal/cargo", s.key(), body, 201).await["id"].as_i64().unwrap();
    // The submission's reference is `tns-<id>`: the id its table gives next.
    let next: i64 =
        sqlx::query_scalar("SELECT last_value + CASE WHEN is_called THEN 1 ELSE 0 END FROM submissions_id_seq")
            .fetch_one(&s.app.db)
            .await
            .unwrap();
    s.fake.refuse_load(&format!("tns-{next}-2"), "YÜK CİNSİ HATALI");

    let failed = s.act(&format!("/portal/cargo/{id}/submit")).await;
    assert_eq!(Setup::reference(&failed), format!("tns-{next}"));
    assert_eq!(failed["state"], "failed", "{failed}");
    assert!(failed.to_string().contains("YÜK CİNSİ HATALI"), "U-ETDS's words: {failed}");
    let trip = s.fake.cargo_trips().pop().unwrap();
    let held: Vec<_> = trip.valid_loads().map(|l| l.firma_yuk_no.clone().unwrap()).collect();
    assert_eq!(held, [format!("tns-{next}"), format!("tns-{next}-3")], "the others were taken");

    // Edited (the refused load taken out, the shipment's own amount changed) and sent again:
    // the same trip, brought in step with what was taken — the own load edited, the one now
    // out of place withdrawn and declared at its new place — and nothing held twice.
    let path = format!("/portal/cargo/{id}");
    json_of(s.app.put(&path, s.key(), json!({"cargo_amount": 999, "items": [item(2.0)]})).await, 200).await;
    let again = s.act(&format!("{path}/submit")).await;
    assert_eq!(again["state"], "delivered", "{again}");
    assert_eq!(again["downstream_reference"], trip.id.to_string());
    let trip = s.fake.cargo_trip(trip.id).unwrap();
    let amounts: Vec<_> = trip.valid_loads().map(|l| l.input.child_text("yukMiktari").unwrap().to_string()).collect();
    assert_eq!(amounts, ["999", "2"], "{:?}", trip.loads);
    assert_eq!(
        (s.fake.calls("yukDuzenleV3"), s.fake.calls("yukIptalEtV3"), s.fake.calls("yeniSeferEkleV3")),
        (1, 1, 1)
    );
    let calls = s.fake.requests_for("sefereYukEkleV3");
    let sent = calls.last().unwrap().element.as_ref().unwrap().children_named("yukBilgileriInputList").count();
    assert_eq!((calls.len(), sent), (2, 1), "only the missing load declared");

    // Sent once more unchanged: the last delivery answers, nothing is called.
    let res = s.app.req(Method::POST, &format!("{path}/submit"), Some(s.key())).send().await.unwrap();
    assert_eq!(json_of(res, 202).await["submission_id"], again["id"]);

    // Amended later, its loads tagged from two submissions: each is known by its place in the
    // delivery, edited in place; a load added is tagged from the first's tag.
    json_of(s.app.put(&path, s.key(), json!({"items": [item(3.0), item(4.0)]})).await, 200).await;
    let amended = s.act(&format!("{path}/submit")).await;
    assert_eq!((amended["operation"].as_str(), amended["state"].as_str()), (Some("amendment"), Some("delivered")));
    let trip = s.fake.cargo_trip(trip.id).unwrap();
    let held: Vec<_> = trip
        .valid_loads()
        .map(|l| (l.firma_yuk_no.clone().unwrap(), l.input.child_text("yukMiktari").unwrap().to_string()))
        .collect();
    let m = again["id"].as_i64().unwrap();
    let want = [(format!("tns-{next}"), "999"), (format!("tns-{m}-2"), "3"), (format!("tns-{next}-3"), "4")];
    assert_eq!(held, want.map(|(t, a)| (t, a.to_string())), "{:?}", trip.loads);
    assert_eq!(s.fake.calls("yeniSeferEkleV3"), 1);
    s.fake.assert_no_violations();
}
