//! The portal's settings pages over HTTP, as a browser without scripts uses them: the
//! downstream chosen, API keys shown once and revoked, webhooks made, rotated and tested
//! against a real receiver, a plan change previewed before it is confirmed, support tickets;
//! each checked against the JSON API, which the pages share their rules with.

use std::{
    str::FromStr,
    sync::{Arc, Mutex},
};

use axum::{body::Bytes, extract::State, http::HeaderMap, Router};
use chrono::NaiveDate;
use reqwest::{header, StatusCode};
use rust_decimal::Decimal;
use tns_api::portal::{format::money, i18n::Lang};
use tns_core::domain::billing::TaxRate;
use tns_store::billing::invoices::{issue_due, Terms};

use crate::{
    helpers::{drain, hmac_sha256_hex, tns_admin, Env, Org, TestApp},
    portal::{Seen, Visitor},
};

/// The text of the element with `id` (its first text, up to the next tag).
fn text_of(body: &str, id: &str) -> Option<String> {
    let at = body.find(&format!(r#"id="{id}""#))?;
    let rest = &body[at..];
    let start = rest.find('>')? + 1;
    let end = rest[start..].find('<')?;
    Some(rest[start..start + end].to_string())
}

/// A member of `org` with `role`, invited by its owner and joined through the pages.
async fn member(app: &TestApp, owner: &Visitor, org: &Org, role: &str) -> Visitor {
    let email = format!("{role}-{}@example.com", org.id);
    let made = owner.submit("/settings/team", "/settings/team/invite", &[("email", &email), ("role", role)]).await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    let at = made.body.find("/invite/").expect("the invitation link is shown");
    let link: String = made.body[at..].chars().take_while(|c| !c.is_whitespace() && *c != '<' && *c != '"').collect();
    let v = Visitor::new(app);
    let joined = v.post(&link, &[("full_name", "Can Kaya"), ("password", "correct horse")]).await;
    assert_eq!(joined.status, StatusCode::SEE_OTHER, "{}", joined.body);
    v
}

#[tokio::test]
async fn the_downstream_is_chosen_on_its_page_and_the_api_agrees() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    // The first thing a dispatcher is told: nothing reaches the Ministry yet.
    let page = v.get("/settings/downstream").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("İlk adım"), "{}", page.body);
    assert!(page.body.contains(r#"href="/settings/downstream""#) && page.body.contains(r#"href="/settings/keys""#));
    assert!(app.get_ok("/portal/downstream", &org.key).await["updated_at"].is_null());

    let saved = v.submit("/settings/downstream", "/settings/downstream", &[("target", "sandbox")]).await;
    assert_eq!((saved.status, saved.location()), (StatusCode::SEE_OTHER, "/settings/downstream?done=saved"));
    let api = app.get_ok("/portal/downstream", &org.key).await;
    assert_eq!(api["adapter"], "sandbox");
    assert!(api["updated_at"].is_string(), "chosen now: {api}");
    let page = v.get("/settings/downstream?done=saved").await;
    assert!(!page.body.contains("İlk adım") && page.body.contains("Kaydedildi."));

    // A user name that is no UNET number: refused before U-ETDS is asked, the field named, what
    // was typed kept but the password, and nothing changed.
    let refused = v
        .submit(
            "/settings/downstream",
            "/settings/downstream",
            &[
                ("target", "uetds"),
                ("uetds.environment", "test"),
                ("uetds.ws_username", "firma-abc"),
                ("uetds.ws_password", "gizli-parola-1"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    let error = text_of(&refused.body, "uetds-ws_username-error").expect("the error is beside the user name");
    assert!(error.contains("UNET"), "{error}");
    assert!(refused.body.contains(r#"value="firma-abc""#), "the user name is kept");
    assert!(refused.body.contains(r#"value="uetds" checked"#), "the target is kept");
    assert!(!refused.body.contains("gizli-parola-1"), "the password is never shown back");
    assert_eq!(app.get_ok("/portal/downstream", &org.key).await["adapter"], "sandbox");

    // Pre-flight checks: off until chosen; two ticked and `warn` chosen, as the API then says.
    let page = v.get("/settings/downstream/preflight").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains(r#"value="off" checked"#), "{}", page.body);
    let saved = v
        .submit(
            "/settings/downstream/preflight",
            "/settings/downstream/preflight",
            &[("mode", "warn"), ("checks", "identity"), ("checks", "vehicle_inspection")],
        )
        .await;
    assert_eq!((saved.status, saved.location()), (StatusCode::SEE_OTHER, "/settings/downstream/preflight?done=saved"));
    let api = app.get_ok("/portal/downstream/preflight", &org.key).await;
    assert_eq!(
        (api["mode"].as_str(), &api["checks"]),
        (Some("warn"), &serde_json::json!(["identity", "vehicle_inspection"]))
    );
    let page = v.get("/settings/downstream/preflight?done=saved").await;
    assert!(page.body.contains(r#"value="warn" checked"#) && page.body.contains("Kaydedildi."));
    let refused =
        v.submit("/settings/downstream/preflight", "/settings/downstream/preflight", &[("mode", "always")]).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    assert_eq!(app.get_ok("/portal/downstream/preflight", &org.key).await["mode"], "warn", "nothing changed");
}

#[tokio::test]
async fn a_key_is_shown_once_works_and_stops_when_revoked_and_a_dispatcher_gets_none() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    // No name: refused beside the field, the ticked scopes kept.
    let nameless = v.submit("/settings/keys", "/settings/keys", &[("name", ""), ("scope", "journeys:read")]).await;
    assert_eq!(nameless.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", nameless.body);
    assert!(text_of(&nameless.body, "key-name-error").is_some(), "{}", nameless.body);
    assert!(nameless.body.contains(r#"value="journeys:read" checked"#));

    let made = v.submit("/settings/keys", "/settings/keys", &[("name", "ci robot"), ("scope", "journeys:read")]).await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    let key = text_of(&made.body, "new-secret").expect("the key is shown");
    assert!(key.len() > 20, "{key}");
    assert!(made.headers.get(header::LOCATION).is_none());
    assert!(made.headers.get_all(header::SET_COOKIE).iter().all(|c| !c.to_str().unwrap().contains(&key)));
    // It works on the JSON API, with the scopes ticked only.
    assert_eq!(app.get("/portal/vehicles", &key).await.status(), 200);
    assert_eq!(app.get("/portal/api-keys", &key).await.status(), 403);
    // Shown once: listed by its name and prefix afterwards, never whole.
    let list = v.get("/settings/keys").await;
    assert!(list.body.contains("ci robot") && !list.body.contains(&key));
    let keys = app.get_ok("/portal/api-keys", &org.key).await;
    let listed = keys["data"].as_array().unwrap().iter().find(|k| k["name"] == "ci robot").unwrap().clone();
    assert!(list.body.contains(listed["api_key_prefix"].as_str().unwrap()));

    let id = listed["id"].as_i64().unwrap();
    let revoked = v.submit("/settings/keys", &format!("/settings/keys/{id}/revoke"), &[]).await;
    assert_eq!((revoked.status, revoked.location()), (StatusCode::SEE_OTHER, "/settings/keys?done=revoked"));
    assert_eq!(app.get("/portal/vehicles", &key).await.status(), 401);
    assert!(!v.get("/settings/keys").await.body.contains("ci robot"));

    // A dispatcher may not see or make keys, on the pages as on the API.
    let dispatcher = member(&app, &v, &org, "dispatcher").await;
    assert_eq!(dispatcher.get("/settings/keys").await.status, StatusCode::FORBIDDEN);
    let tried = dispatcher.submit("/dashboard", "/settings/keys", &[("name", "x"), ("scope", "journeys:read")]).await;
    assert_eq!(tried.status, StatusCode::FORBIDDEN);
    assert_eq!(app.get_ok("/portal/api-keys", &org.key).await["data"].as_array().unwrap().len(), 1);
    // Webhooks it may read, not change.
    assert_eq!(dispatcher.get("/settings/webhooks").await.status, StatusCode::OK);
    let tried =
        dispatcher.submit("/dashboard", "/settings/webhooks", &[("event_type", "test"), ("endpoint_url", "x")]).await;
    assert_eq!(tried.status, StatusCode::FORBIDDEN);
}

type Got = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

/// A webhook receiver on loopback that keeps what it gets and answers 200.
async fn receiver() -> (String, Got) {
    let got: Got = Arc::default();
    async fn hook(State(got): State<Got>, headers: HeaderMap, body: Bytes) {
        got.lock().unwrap().push((headers, body));
    }
    let app = Router::new().route("/hook", axum::routing::post(hook)).with_state(got.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, got)
}

/// The last request the receiver got is signed with `secret`.
fn signed_with(got: &Got, secret: &str) -> bool {
    let got = got.lock().unwrap();
    let (headers, body) = got.last().expect("a delivery arrived");
    headers.get("x-webhook-signature").and_then(|s| s.to_str().ok())
        == Some(hmac_sha256_hex(secret.as_bytes(), body).as_str())
}

#[tokio::test]
async fn a_webhook_is_made_rotated_and_tested_and_another_org_sees_none_of_it() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let (url, got) = receiver().await;

    let bad = v
        .submit(
            "/settings/webhooks",
            "/settings/webhooks",
            &[("event_type", "journey.created"), ("endpoint_url", "not a url")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert!(text_of(&bad.body, "f-endpoint_url-error").is_some() && bad.body.contains(r#"value="not a url""#));

    let made = v
        .submit(
            "/settings/webhooks",
            "/settings/webhooks",
            &[("event_type", "journey.created"), ("endpoint_url", &url)],
        )
        .await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    let secret = text_of(&made.body, "new-secret").expect("the secret is shown");
    let subs = app.get_ok("/portal/webhooks", &org.key).await;
    let id = subs["data"][0]["id"].as_i64().unwrap();
    assert_eq!(subs["data"][0]["endpoint_url"], url.as_str());
    let page = v.get(&format!("/settings/webhooks/{id}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(!page.body.contains(&secret), "shown once");
    assert!(v.get("/settings/webhooks").await.body.contains(&url));

    // A test event, delivered by the scheduler, signed with the secret shown.
    let sent = v.submit(&format!("/settings/webhooks/{id}"), &format!("/settings/webhooks/{id}/test"), &[]).await;
    assert_eq!(
        (sent.status, sent.location()),
        (StatusCode::SEE_OTHER, format!("/settings/webhooks/{id}?done=test").as_str())
    );
    drain(&env).await;
    assert!(signed_with(&got, &secret));
    let events = app.get_ok(&format!("/portal/webhooks/events?subscription_id={id}"), &org.key).await;
    let delivery = events["data"][0]["id"].as_i64().unwrap();
    assert_eq!(events["data"][0]["delivery_status"], "delivered");
    let page = v.get(&format!("/settings/webhooks/{id}")).await;
    assert!(page.body.contains(&format!("/settings/webhooks/deliveries/{delivery}")));
    let detail = v.get(&format!("/settings/webhooks/deliveries/{delivery}")).await;
    assert_eq!(detail.status, StatusCode::OK);
    assert!(
        detail.body.contains("delivered") && detail.body.contains("&quot;type&quot;: &quot;test&quot;"),
        "{}",
        detail.body
    );

    // Rotated: the new secret shown once, and it signs the next delivery.
    let rotated = v.submit(&format!("/settings/webhooks/{id}"), &format!("/settings/webhooks/{id}/rotate"), &[]).await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
    let new_secret = text_of(&rotated.body, "new-secret").unwrap();
    assert_ne!(new_secret, secret);
    assert!(!v.get(&format!("/settings/webhooks/{id}")).await.body.contains(&new_secret));
    v.submit(&format!("/settings/webhooks/{id}"), &format!("/settings/webhooks/{id}/test"), &[]).await;
    drain(&env).await;
    assert_eq!(got.lock().unwrap().len(), 2);
    assert!(signed_with(&got, &new_secret));

    // Another organization: nothing of it is there.
    let other_org = app.register().await;
    let other = Visitor::owner(&app, &other_org).await;
    assert_eq!(other.get(&format!("/settings/webhooks/{id}")).await.status, StatusCode::NOT_FOUND);
    assert_eq!(other.get(&format!("/settings/webhooks/deliveries/{delivery}")).await.status, StatusCode::NOT_FOUND);
    let rotate = other.submit("/settings/webhooks", &format!("/settings/webhooks/{id}/rotate"), &[]).await;
    assert_eq!(rotate.status, StatusCode::NOT_FOUND);
    assert!(!other.get("/settings/webhooks").await.body.contains(&url));
}

#[tokio::test]
async fn a_plan_change_shows_its_invoice_first_and_happens_once_confirmed() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let before = app.get_ok("/portal/billing/subscription", &org.key).await["code"].clone();
    assert_ne!(before, "Y-10");
    let page = v.get("/settings/billing").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains(r#"action="/settings/billing/change""#) && page.body.contains(r#"value="Y-10""#));

    let preview: Seen = v.get("/settings/billing/change?plan_code=Y-10").await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    let api = app.get_ok("/portal/billing/invoices/upcoming?plan_code=Y-10", &org.key).await;
    let total = Decimal::from_str(&api["total_amount"].to_string()).unwrap();
    assert_eq!(text_of(&preview.body, "upcoming-total").unwrap(), money(Lang::Tr, total), "{}", preview.body);
    assert!(preview.body.contains("KDV"));
    for line in api["lines"].as_array().unwrap() {
        assert!(preview.body.contains(line["description"].as_str().unwrap()), "{line}");
    }
    // Only a preview: the plan is as it was, until confirmed.
    assert_eq!(app.get_ok("/portal/billing/subscription", &org.key).await["code"], before);
    let unknown = v.get("/settings/billing/change?plan_code=nope").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);

    let confirmed =
        v.submit("/settings/billing/change?plan_code=Y-10", "/settings/billing/change", &[("plan_code", "Y-10")]).await;
    assert_eq!((confirmed.status, confirmed.location()), (StatusCode::SEE_OTHER, "/settings/billing?done=changed"));
    assert_eq!(app.get_ok("/portal/billing/subscription", &org.key).await["code"], "Y-10");
    let log = tns_admin(&app.env, &["audit", "--org", &org.id.to_string()]).await.unwrap();
    let change = log.iter().find(|e| e["action"] == "change_plan").expect("the change is audited");
    assert_eq!(change["actor"], format!("tenant:user:{}", org.user_id));
    assert!(v.get("/settings/billing").await.body.contains(r#"id="current-plan""#));

    // Once issued, the invoice is listed with its document, the one the API serves.
    let today: NaiveDate =
        sqlx::query_scalar("SELECT (now() AT TIME ZONE 'UTC')::date").fetch_one(&app.db).await.unwrap();
    let terms = Terms { tax_rate: TaxRate::percent(Decimal::from(20)).unwrap(), due_days: 14 };
    issue_due(&app.db, today, terms).await.unwrap();
    let invoice = app.get_ok("/portal/billing/invoices", &org.key).await["data"][0]["id"].as_i64().unwrap();
    let link = format!("/settings/billing/invoices/{invoice}/pdf");
    assert!(v.get("/settings/billing").await.body.contains(&link));
    let pdf = v.get(&link).await;
    assert_eq!(pdf.status, StatusCode::OK);
    assert_eq!(pdf.headers[header::CONTENT_TYPE], "application/pdf");
    assert!(pdf.body.starts_with("%PDF"));
    assert_eq!(other_pdf(&app, &link).await, StatusCode::NOT_FOUND, "another organization's invoice");
}

/// What another organization's owner gets for `path`.
async fn other_pdf(app: &TestApp, path: &str) -> StatusCode {
    let other = app.register().await;
    Visitor::owner(app, &other).await.get(path).await.status
}

#[tokio::test]
async fn a_support_ticket_is_opened_and_listed_for_its_organization_only() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let empty = v
        .submit("/settings/support", "/settings/support", &[("subject", ""), ("body", "Yardım"), ("priority", "high")])
        .await;
    assert_eq!(empty.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", empty.body);
    assert!(text_of(&empty.body, "t-subject-error").is_some() && empty.body.contains(">Yardım</textarea>"));

    let opened = v
        .submit(
            "/settings/support",
            "/settings/support",
            &[("subject", "Bildirim gitmiyor"), ("body", "Dünden beri\nhata alıyoruz."), ("priority", "high")],
        )
        .await;
    assert_eq!((opened.status, opened.location()), (StatusCode::SEE_OTHER, "/settings/support?done=opened"));
    let api = app.get_ok("/portal/support/tickets", &org.key).await;
    assert_eq!(
        (api["data"][0]["subject"].as_str(), api["data"][0]["priority"].as_str()),
        (Some("Bildirim gitmiyor"), Some("high"))
    );
    assert!(v.get("/settings/support").await.body.contains("Bildirim gitmiyor"));

    let other_org = app.register().await;
    let other = Visitor::owner(&app, &other_org).await;
    assert!(!other.get("/settings/support").await.body.contains("Bildirim gitmiyor"));
}
