//! The portal's submissions, reference pickers and cargo pages, through a browser without
//! scripts (htmx's requests are plain GETs and posts too): the API's filters, the live status
//! that polls until final, retrying a failed submission, the look-ups, a shipment made through
//! its form and submitted, and the tenancy and role rules.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    fixtures::{cargo, delivering, vehicle, Fleet, ADANA, CEYHAN, ISTANBUL, KADIKOY},
    helpers::{json_of, TestApp},
    portal::{Seen, Visitor},
};

/// A shipment on vehicle `plate` (made for it), submitted through the API; the submission.
async fn shipped(app: &TestApp, f: &Fleet, plate: &str, wait: Option<u64>) -> Value {
    let v = app.post_ok("/portal/vehicles", f.key(), vehicle(plate), 201).await["id"].as_i64().unwrap();
    let c = app.post_ok("/portal/cargo", f.key(), cargo(v), 201).await["id"].as_i64().unwrap();
    let mut req = app.req(Method::POST, &format!("/portal/cargo/{c}/submit"), Some(f.key()));
    if let Some(n) = wait {
        req = req.header("Prefer", format!("wait={n}"));
    }
    json_of(req.send().await.unwrap(), 202).await["submission"].clone()
}

/// Ask for the live status fragment until it is final (a bounded poll, as a browser would).
async fn until_final(v: &Visitor, id: i64) -> Seen {
    for _ in 0..600 {
        let s = v.get(&format!("/submissions/{id}/status")).await;
        assert_eq!(s.status, StatusCode::OK, "{}", s.body);
        if !s.body.contains("state-pending") {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("submission {id} still pending after 30 s");
}

fn row(id: i64) -> String {
    format!(r#"href="/submissions/{id}""#)
}

#[tokio::test]
async fn the_submissions_list_filters_as_the_api_does() {
    let (app, _scheduler, f) = delivering().await;
    let v = Visitor::owner(&app, &f.org).await;
    let ok = shipped(&app, &f, "34OKAY1", Some(10)).await;
    let bad = shipped(&app, &f, "34REJECT1", Some(10)).await;
    assert_eq!((ok["state"].as_str(), bad["state"].as_str()), (Some("delivered"), Some("failed")));
    let (ok, bad) = (ok["id"].as_i64().unwrap(), bad["id"].as_i64().unwrap());

    let all = v.get("/submissions").await;
    assert_eq!(all.status, StatusCode::OK);
    assert!(all.body.contains(&row(ok)) && all.body.contains(&row(bad)), "{}", all.body);
    assert!(all.body.contains(r#"<th scope="col">"#));
    let failed = v.get("/submissions?state=failed&target_type=&created_from=").await;
    assert!(failed.body.contains(&row(bad)) && !failed.body.contains(&row(ok)), "{}", failed.body);
    assert!(failed.body.contains(r#"<option value="failed" selected>"#), "the filter is kept");
    let journeys = v.get("/submissions?target_type=journey").await;
    assert!(!journeys.body.contains(&row(ok)) && !journeys.body.contains(&row(bad)));
    // Days on Istanbul's calendar, as the dashboard counts them.
    let today = (chrono::Utc::now() + chrono::Duration::hours(3)).date_naive();
    let day = |d: chrono::NaiveDate| d.format("%Y-%m-%d").to_string();
    let from_today = v.get(&format!("/submissions?created_from={}&created_to={}", day(today), day(today))).await;
    assert!(from_today.body.contains(&row(ok)) && from_today.body.contains(&row(bad)), "{}", from_today.body);
    let tomorrow = v.get(&format!("/submissions?created_from={}", day(today.succ_opt().unwrap()))).await;
    assert!(!tomorrow.body.contains(&row(ok)) && !tomorrow.body.contains(&row(bad)));
    let yesterday = v.get(&format!("/submissions?created_to={}", day(today.pred_opt().unwrap()))).await;
    assert!(!yesterday.body.contains(&row(ok)));
    // The API's filter agrees.
    let api =
        app.get_ok(&format!("/portal/submissions?created_from={}", day(today.succ_opt().unwrap())), f.key()).await;
    assert_eq!(api["data"].as_array().unwrap().len(), 0);
    // A filter the API refuses is shown beside its field, with the API's words.
    let wrong = v.get("/submissions?state=lost&created_to=2026-13-01").await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(wrong.body.contains(r#"id="q-state-error""#), "{}", wrong.body);
    assert_eq!(app.get("/portal/submissions?state=lost", f.key()).await.status(), 422);
}

#[tokio::test]
async fn the_live_status_polls_while_pending_and_stops_once_delivered() {
    let (app, _scheduler, f) = delivering().await;
    let v = Visitor::owner(&app, &f.org).await;
    let s = shipped(&app, &f, "34SLOW1500", None).await;
    let id = s["id"].as_i64().unwrap();
    let pending = v.get(&format!("/submissions/{id}/status")).await;
    assert_eq!(pending.status, StatusCode::OK);
    assert!(pending.body.starts_with(&format!(r#"<div id="submission-{id}" aria-live="polite""#)), "{}", pending.body);
    assert!(pending.body.contains("state-pending"), "{}", pending.body);
    assert!(
        pending
            .body
            .contains(&format!(r#"hx-get="/submissions/{id}/status" hx-trigger="every 2s" hx-swap="outerHTML""#)),
        "{}",
        pending.body
    );
    let done = until_final(&v, id).await;
    assert!(done.body.contains("state-delivered") && done.body.contains("İletildi"), "{}", done.body);
    assert!(!done.body.contains("hx-trigger") && !done.body.contains("hx-get"), "it stops polling: {}", done.body);
    let reference = app.get_ok(&format!("/portal/submissions/{id}"), f.key()).await["downstream_reference"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(done.body.contains(&reference), "the downstream's reference: {}", done.body);

    // The detail: the status, the attempts as the API lists them.
    let detail = v.get(&format!("/submissions/{id}")).await;
    assert_eq!(detail.status, StatusCode::OK);
    assert!(detail.body.contains(&format!(r#"id="submission-{id}""#)));
    assert_eq!(detail.body.matches(r#"<tr class="attempt">"#).count(), 1, "{}", detail.body);
    assert!(detail.body.contains("<td>delivered</td>"), "{}", detail.body);
    assert!(detail.body.contains(&format!("user:{}", f.org.user_id)) || detail.body.contains("key:"), "who");
}

#[tokio::test]
async fn a_failed_submission_is_retried_from_its_page() {
    let (app, _scheduler, f) = delivering().await;
    let v = Visitor::owner(&app, &f.org).await;
    let s = shipped(&app, &f, "34REJECT1", Some(10)).await;
    assert_eq!(s["state"], "failed", "{s}");
    let id = s["id"].as_i64().unwrap();
    let page = v.get(&format!("/submissions/{id}")).await;
    assert!(page.body.contains(&format!(r#"action="/submissions/{id}/retry""#)), "{}", page.body);
    assert!(page.body.contains("yetki belgesine"), "the downstream's message: {}", page.body);
    assert!(page.body.contains("<td>permanent</td>"), "{}", page.body);

    // Put right what the downstream refused (the plate), then retry.
    let vehicle_id = app.get_ok(&format!("/portal/cargo/{}", s["target_id"]), f.key()).await["vehicle_id"].clone();
    let res = app.put(&format!("/portal/vehicles/{vehicle_id}"), f.key(), json!({"plate": "34FIXED1"})).await;
    assert_eq!(res.status(), 200);
    let again = v.submit(&format!("/submissions/{id}"), &format!("/submissions/{id}/retry"), &[]).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.body);
    let new_id: i64 =
        again.location().strip_prefix("/submissions/").unwrap().split('?').next().unwrap().parse().unwrap();
    assert_ne!(new_id, id);
    assert!(until_final(&v, new_id).await.body.contains("state-delivered"));
    let api = app.get_ok(&format!("/portal/submissions/{new_id}"), f.key()).await;
    assert_eq!(api["submitted_by"], format!("user:{}", f.org.user_id));
    assert_eq!(api["target_id"], s["target_id"]);

    // Another organization's submission is nowhere, whatever is asked of it.
    let other = app.register().await;
    let stranger = Visitor::owner(&app, &other).await;
    for path in [format!("/submissions/{id}"), format!("/submissions/{id}/status")] {
        assert_eq!(stranger.get(&path).await.status, StatusCode::NOT_FOUND, "{path}");
    }
    let theirs = stranger.submit("/dashboard", &format!("/submissions/{id}/retry"), &[]).await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND);
    assert!(!stranger.get("/submissions").await.body.contains(&row(id)));
}

#[tokio::test]
async fn the_place_pickers_offer_matching_provinces_and_a_provinces_districts() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let ank = v.get("/reference/places?kind=city&q=Ank").await;
    assert_eq!(ank.status, StatusCode::OK);
    assert!(ank.body.contains(r#"<option value="6">Ankara</option>"#), "{}", ank.body);
    assert!(!ank.body.contains("Istanbul"));
    // Any case, Turkish letters or their plain ones; a code's digits too.
    let ist = v.get("/reference/places?kind=city&q=İSTANBUL").await;
    assert!(ist.body.contains(r#"<option value="34">Istanbul</option>"#), "{}", ist.body);
    assert!(v.get("/reference/places?kind=city&q=34").await.body.contains("Istanbul"));
    // A province's districts only.
    let kadikoy = v.get(&format!("/reference/places?kind=district&q=kad&city={ISTANBUL}")).await;
    assert!(kadikoy.body.contains(&format!(r#"<option value="{KADIKOY}">Kadıköy</option>"#)), "{}", kadikoy.body);
    let adana = v.get(&format!("/reference/places?kind=district&q=&city={ADANA}")).await;
    assert!(adana.body.contains(&format!(r#"value="{CEYHAN}""#)), "{}", adana.body);
    assert!(!adana.body.contains(&format!(r#"value="{KADIKOY}""#)));
    assert!(!v.get(&format!("/reference/places?kind=district&q=kad&city={ADANA}")).await.body.contains("Kadıköy"));
    // Without a province, a district names its own; at most 20 places answer.
    let any = v.get("/reference/places?kind=district&q=kadik").await;
    assert!(any.body.contains("Kadıköy (Istanbul)"), "{}", any.body);
    assert!(v.get("/reference/places?kind=district&q=a").await.body.matches("<option").count() <= 20);
    // What the look-up refuses, as the API's parsers refuse it.
    let long = "a".repeat(41);
    assert_eq!(v.get(&format!("/reference/places?kind=city&q={long}")).await.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(v.get("/reference/places?kind=planet&q=a").await.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(v.get("/reference/places?kind=district&city=99").await.status, StatusCode::UNPROCESSABLE_ENTITY);
}

/// `cargo()` as a form's fields.
fn cargo_form(vehicle_id: i64) -> Vec<(String, String)> {
    let body = cargo(vehicle_id);
    body.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().map(String::from).unwrap_or_else(|| v.to_string())))
        .collect()
}

fn pairs(fields: &[(String, String)]) -> Vec<(&str, &str)> {
    fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// The link of an invitation in the page that made it.
fn link(text: &str, prefix: &str) -> String {
    let at = text.find(prefix).unwrap_or_else(|| panic!("no {prefix} in {text}"));
    text[at..].split(|c: char| c.is_whitespace() || c == '<' || c == '"').next().unwrap().to_string()
}

#[tokio::test]
async fn a_shipment_through_its_form_is_submitted_and_delivered() {
    let (app, _scheduler, f) = delivering().await;
    let v = Visitor::owner(&app, &f.org).await;
    // The form follows the document; its places are picked by name.
    let form = v.get("/cargo/new").await;
    assert_eq!(form.status, StatusCode::OK);
    assert!(form.body.contains(r#"<label for="f-loading_city_id">"#), "{}", form.body);
    assert!(form.body.contains(r#"list="f-loading_city_id-options" data-picker="city""#), "{}", form.body);
    assert!(form.body.contains(r#"data-picker="district" data-city-field="unloading_city_id""#), "{}", form.body);
    assert!(form.body.contains(r#"<datalist id="f-loading_city_id-options">"#));

    // A refused field: the form again, the error beside it, what was typed kept, nothing stored.
    let mut fields = cargo_form(f.vehicle_id);
    fields.iter_mut().find(|(k, _)| k == "cargo_amount").unwrap().1 = "lots".into();
    let bad = v.submit("/cargo/new", "/cargo", &pairs(&fields)).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert!(bad.body.contains(r#"id="f-cargo_amount-error""#), "{}", bad.body);
    assert!(bad.body.contains(r#"value="lots""#) && bad.body.contains(r#"value="Gönderen A.Ş.""#), "{}", bad.body);
    // A rule across fields, with the API's words: Kadıköy is not in Adana.
    let mut fields = cargo_form(f.vehicle_id);
    fields.iter_mut().find(|(k, _)| k == "loading_city_id").unwrap().1 = ADANA.to_string();
    let across = v.submit("/cargo/new", "/cargo", &pairs(&fields)).await;
    assert_eq!(across.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", across.body);
    assert!(across.body.contains(r#"id="f-loading_district_id-error""#), "{}", across.body);
    assert_eq!(app.get_ok("/portal/cargo", f.key()).await["data"].as_array().unwrap().len(), 0);

    let ok = v.submit("/cargo/new", "/cargo", &pairs(&cargo_form(f.vehicle_id))).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    let id: i64 = ok.location().strip_prefix("/cargo/").unwrap().split('?').next().unwrap().parse().unwrap();
    let stored = app.get_ok(&format!("/portal/cargo/{id}"), f.key()).await;
    assert_eq!((stored["cargo_amount"].as_f64(), stored["status"].as_str()), (Some(1250.5), Some("draft")));
    assert_eq!(stored["loading_district_id"], KADIKOY);
    let list = v.get("/cargo?status=draft").await;
    assert!(list.body.contains(&format!(r#"href="/cargo/{id}""#)), "{}", list.body);
    assert!(!v.get("/cargo?status=delivered").await.body.contains(&format!(r#"href="/cargo/{id}""#)));
    assert!(v.get(&format!("/cargo/{id}/edit")).await.body.contains(r#"value="1250.5""#));

    // Submitted: the shipment's page shows the submission's live status until delivered.
    let sent = v.submit(&format!("/cargo/{id}"), &format!("/cargo/{id}/submit"), &[]).await;
    assert_eq!((sent.status, sent.location()), (StatusCode::SEE_OTHER, format!("/cargo/{id}?done=submitted").as_str()));
    let subs = app.get_ok(&format!("/portal/submissions?target_type=cargo&target_id={id}"), f.key()).await;
    let sub = subs["data"][0].clone();
    let sid = sub["id"].as_i64().unwrap();
    assert_eq!(sub["submitted_by"], format!("user:{}", f.org.user_id));
    let page = v.get(&format!("/cargo/{id}?done=submitted")).await;
    assert!(page.body.contains(&format!(r#"<div id="submission-{sid}" aria-live="polite""#)), "{}", page.body);
    assert!(until_final(&v, sid).await.body.contains("state-delivered"));
    let delivered = v.get(&format!("/cargo/{id}")).await;
    assert!(delivered.body.contains(&format!(r#"href="/cargo/{id}/report""#)), "{}", delivered.body);
    let pdf = v.get(&format!("/cargo/{id}/report")).await;
    assert_eq!(pdf.status, StatusCode::OK, "{}", pdf.body);
    assert_eq!(pdf.headers["content-type"], "application/pdf");
    // A delivered shipment is changed like a draft; the change goes as an amendment when it is
    // submitted again.
    assert!(delivered.body.contains(&format!(r#"href="/cargo/{id}/edit""#)), "{}", delivered.body);
    let late = v.submit(&format!("/cargo/{id}"), &format!("/cargo/{id}"), &pairs(&cargo_form(f.vehicle_id))).await;
    assert_eq!(late.status, StatusCode::SEE_OTHER, "{}", late.body);

    // Another organization's shipment is nowhere.
    let other = app.register().await;
    let stranger = Visitor::owner(&app, &other).await;
    for path in [format!("/cargo/{id}"), format!("/cargo/{id}/edit"), format!("/submissions/{sid}")] {
        assert_eq!(stranger.get(&path).await.status, StatusCode::NOT_FOUND, "{path}");
    }
    let theirs = stranger.submit("/cargo/new", &format!("/cargo/{id}/submit"), &[]).await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND);

    // A viewer reads submissions but makes no shipment.
    let email = format!("viewer-{}@example.com", f.org.id);
    let made = v.submit("/settings/team", "/settings/team/invite", &[("email", &email), ("role", "viewer")]).await;
    let viewer = Visitor::new(&app);
    let joined =
        viewer.post(&link(&made.body, "/invite/"), &[("full_name", "Ece Su"), ("password", "correct horse")]).await;
    assert_eq!(joined.status, StatusCode::SEE_OTHER);
    assert_eq!(viewer.get("/submissions").await.status, StatusCode::OK);
    assert_eq!(viewer.get(&format!("/submissions/{sid}")).await.status, StatusCode::OK);
    assert_eq!(viewer.get(&format!("/submissions/{sid}/status")).await.status, StatusCode::OK);
    assert_eq!(viewer.get("/cargo/new").await.status, StatusCode::FORBIDDEN);
    let refused = viewer.submit("/submissions", "/cargo", &pairs(&cargo_form(f.vehicle_id))).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(app.get_ok("/portal/cargo", f.key()).await["data"].as_array().unwrap().len(), 1);
}
