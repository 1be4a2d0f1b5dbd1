//! The web portal over HTTP, as a browser without scripts would use it: signing in and out,
//! the language, the dashboard, vehicles and personnel through their forms, and the rules the
//! portal shares with the API (CSRF, quota and suspension for actions, none for page views,
//! tenancy), plus the headers every page carries.

use reqwest::{header, redirect::Policy, Client, StatusCode};

use crate::helpers::{tns_admin, Org, TestApp};

/// A browser: cookies kept, redirects not followed (the tests look at them).
pub(crate) struct Visitor {
    pub root: String,
    pub client: Client,
}

/// An answer: status, headers and the page.
pub(crate) struct Seen {
    pub status: StatusCode,
    pub headers: header::HeaderMap,
    pub body: String,
}

impl Seen {
    pub(crate) fn location(&self) -> &str {
        self.headers.get(header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    /// The value of the first hidden input named `name`.
    pub(crate) fn hidden(&self, name: &str) -> Option<String> {
        let at = self.body.find(&format!(r#"name="{name}" value=""#))?;
        let rest = &self.body[at + name.len() + 15..];
        Some(rest[..rest.find('"')?].to_string())
    }
}

impl Visitor {
    pub(crate) fn new(app: &TestApp) -> Visitor {
        let client = Client::builder().cookie_store(true).redirect(Policy::none()).build().unwrap();
        Visitor { root: app.root.clone(), client }
    }

    pub(crate) async fn seen(res: reqwest::Response) -> Seen {
        let (status, headers) = (res.status(), res.headers().clone());
        Seen { status, headers, body: res.text().await.unwrap() }
    }

    pub(crate) async fn get(&self, path: &str) -> Seen {
        let res =
            self.client.get(format!("{}{path}", self.root)).header(header::ACCEPT, "text/html").send().await.unwrap();
        Visitor::seen(res).await
    }

    /// Post a form as a browser does (no htmx: the CSRF token travels in the form).
    pub(crate) async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Seen {
        let body: String = form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
        self.post_body(path, "application/x-www-form-urlencoded", body.into_bytes()).await
    }

    /// Post `body` of `content_type` as a browser's form does (the page as the answer).
    pub(crate) async fn post_body(&self, path: &str, content_type: &str, body: Vec<u8>) -> Seen {
        let res = self
            .client
            .post(format!("{}{path}", self.root))
            .header(header::CONTENT_TYPE, content_type)
            .header(header::ACCEPT, "text/html")
            .body(body)
            .send()
            .await
            .unwrap();
        Visitor::seen(res).await
    }

    /// Post a form with the CSRF token of the page at `from`.
    pub(crate) async fn submit(&self, from: &str, path: &str, fields: &[(&str, &str)]) -> Seen {
        let csrf = self.get(from).await.hidden("_csrf").expect("the page has a form with a CSRF token");
        let mut all = vec![("_csrf", csrf.as_str())];
        all.extend_from_slice(fields);
        self.post(path, &all).await
    }

    /// Sign in through the form; the answer to the form's post.
    pub(crate) async fn sign_in(&self, email: &str, password: &str) -> Seen {
        let form = self.get("/login?next=/vehicles").await;
        let token = form.hidden("token").expect("the sign-in form carries its token");
        self.post("/login", &[("email", email), ("password", password), ("token", &token), ("next", "/vehicles")]).await
    }

    /// A visitor signed in as `org`'s owner.
    pub(crate) async fn owner(app: &TestApp, org: &Org) -> Visitor {
        let v = Visitor::new(app);
        let res = v.sign_in(&org.email, &org.password).await;
        assert_eq!(res.status, StatusCode::SEE_OTHER, "signed in: {}", res.body);
        v
    }
}

#[tokio::test]
async fn signing_in_and_out_through_the_form() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::new(&app);
    // Not signed in: pages send to the sign-in form, which says where to come back.
    let res = v.get("/vehicles").await;
    assert_eq!((res.status, res.location()), (StatusCode::SEE_OTHER, "/login?next=%2Fvehicles"));
    assert_eq!(v.get("/").await.location(), "/login");

    // A wrong password: the form again, the address kept, the password not, one message for
    // an unknown address and a wrong password alike.
    let form = v.get("/login").await;
    let token = form.hidden("token").unwrap();
    let wrong = v.post("/login", &[("email", &org.email), ("password", "nope nope"), ("token", &token)]).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(wrong.body.contains("E-posta ya da parola yanlış."), "{}", wrong.body);
    assert!(wrong.body.contains(&format!(r#"value="{}""#, org.email)), "the address is kept");
    assert!(!wrong.body.contains("nope nope"));
    // The form's token must match the browser's cookie: a post from elsewhere signs no one in.
    let other = Visitor::new(&app);
    let forged = other.post("/login", &[("email", &org.email), ("password", &org.password), ("token", &token)]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert!(!forged
        .headers
        .get_all(header::SET_COOKIE)
        .iter()
        .any(|c| c.to_str().unwrap().starts_with("tns_session=")));

    // Right: a session, and back where the visitor was going; an outside place is not followed.
    let ok = v.sign_in(&org.email, &org.password).await;
    assert_eq!((ok.status, ok.location()), (StatusCode::SEE_OTHER, "/vehicles"));
    let page = v.get("/dashboard").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Oturum bitişi"), "when the session ends is shown");
    let token = v.get("/login").await.hidden("token").unwrap();
    let away = v
        .post(
            "/login",
            &[("email", &org.email), ("password", &org.password), ("token", &token), ("next", "//evil.example/")],
        )
        .await;
    assert_eq!(away.location(), "/dashboard");

    // Signing out ends the session everywhere: the API refuses its cookie too.
    let out = v.submit("/dashboard", "/logout", &[]).await;
    assert_eq!((out.status, out.location()), (StatusCode::SEE_OTHER, "/login"));
    assert_eq!(v.get("/dashboard").await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn turkish_first_english_remembered_istanbul_time_and_local_numbers() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let tr = v.get("/dashboard").await.body;
    assert!(tr.contains(r#"<html lang="tr">"#) && tr.contains("Bu ayki kullanım"), "{tr}");
    assert!(tr.contains("kota 1.000"), "a Turkish thousands separator: {tr}");
    let switched = v.get("/lang/en?back=/dashboard").await;
    assert_eq!(switched.location(), "/dashboard");
    assert!(switched.headers[header::SET_COOKIE].to_str().unwrap().starts_with("tns_lang=en;"));
    let en = v.get("/dashboard").await.body;
    assert!(en.contains(r#"<html lang="en">"#) && en.contains("Usage this month") && en.contains("1,000"), "{en}");
    // The session's end, in Istanbul time (UTC+3).
    let ends = en.split(r#"<time datetime=""#).nth(1).unwrap();
    let (utc, shown) = (ends.split('"').next().unwrap(), ends.split('>').nth(1).unwrap().split('<').next().unwrap());
    let at: chrono::DateTime<chrono::Utc> = utc.parse().unwrap();
    let local = at + chrono::Duration::hours(3);
    assert_eq!(shown, local.format("%Y-%m-%d %H:%M").to_string());
    // An outside place to come back to is not followed; an unknown language is nothing.
    assert_eq!(v.get("/lang/tr?back=https://evil.example").await.location(), "/dashboard");
    assert_eq!(v.get("/lang/xx").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn vehicles_through_their_forms_with_the_apis_rules() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    // A refused field: the form again (422), the error beside the field and linked to it, what
    // was typed kept, nothing stored.
    let bad = v
        .submit(
            "/vehicles/new",
            "/vehicles",
            &[("plate", "34 ABC 123"), ("vehicle_type", "otobus"), ("capacity", "lots")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad.body.contains(r#"id="f-capacity" type="number" inputmode="numeric" name="capacity" value="lots""#),
        "{}",
        bad.body
    );
    assert!(bad.body.contains(r#"aria-describedby="f-capacity-error""#) || bad.body.contains("f-capacity-error"));
    assert!(bad.body.contains(r#"value="34 ABC 123""#), "the plate is kept");
    let stored =
        || async { sqlx::query_scalar::<_, i64>("SELECT count(*) FROM vehicles").fetch_one(&app.db).await.unwrap() };
    assert_eq!(stored().await, 0);
    // The API's rule, with the API's words: a malformed plate.
    let plate = v.submit("/vehicles/new", "/vehicles", &[("plate", "??"), ("vehicle_type", "otobus")]).await;
    assert_eq!(plate.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(plate.body.contains(r#"id="f-plate-error""#), "{}", plate.body);

    // Fixed: stored as the API stores it (the plate normalized), listed.
    let ok = v
        .submit(
            "/vehicles/new",
            "/vehicles",
            &[("plate", "34 abc 123"), ("vehicle_type", "otobus"), ("capacity", "46")],
        )
        .await;
    assert_eq!((ok.status, ok.location()), (StatusCode::SEE_OTHER, "/vehicles?done=saved"));
    let api = app.get_ok("/portal/vehicles", &org.key).await;
    assert_eq!(api["data"][0]["plate"], "34ABC123");
    assert_eq!(api["data"][0]["capacity"], 46);
    let id = api["data"][0]["id"].as_i64().unwrap();
    let list = v.get("/vehicles?done=saved").await;
    assert!(list.body.contains("34ABC123") && list.body.contains("Kaydedildi."));
    // A duplicate is the API's 409, beside the plate's field... or above the form.
    let dup = v.submit("/vehicles/new", "/vehicles", &[("plate", "34ABC123"), ("vehicle_type", "otobus")]).await;
    assert_eq!(dup.status, StatusCode::CONFLICT);
    assert!(dup.body.contains("already exists"), "{}", dup.body);

    // Edit: the form shows the record; an emptied optional field is removed.
    let edit = v.get(&format!("/vehicles/{id}/edit")).await;
    assert!(edit.body.contains(r#"value="46""#));
    let path = format!("/vehicles/{id}");
    let changed = v
        .submit(
            &format!("/vehicles/{id}/edit"),
            &path,
            &[("plate", "34ABC123"), ("vehicle_type", "minibus"), ("capacity", "")],
        )
        .await;
    assert_eq!(changed.status, StatusCode::SEE_OTHER, "{}", changed.body);
    let one = app.get_ok(&format!("/portal/vehicles/{id}"), &org.key).await;
    assert_eq!((one["vehicle_type"].as_str(), one["capacity"].is_null()), (Some("minibus"), true));

    // Another organization's vehicle is nowhere.
    let other = app.register().await;
    let stranger = Visitor::owner(&app, &other).await;
    assert_eq!(stranger.get(&format!("/vehicles/{id}/edit")).await.status, StatusCode::NOT_FOUND);
    let theirs = stranger.submit("/vehicles/new", &format!("/vehicles/{id}/delete"), &[]).await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND);

    // Delete.
    let gone = v.submit(&format!("/vehicles/{id}/edit"), &format!("/vehicles/{id}/delete"), &[]).await;
    assert_eq!(gone.location(), "/vehicles?done=deleted");
    assert_eq!(app.get(&format!("/portal/vehicles/{id}"), &org.key).await.status(), 404);
}

#[tokio::test]
async fn a_crew_member_through_the_form_follows_the_identity_rule() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let person = |id: &'static str| {
        vec![
            ("identity_number", id),
            ("first_name", "Mehmet"),
            ("last_name", "Demir"),
            ("gender", "E"),
            ("role_type", "driver"),
        ]
    };
    // A Turkish identity number whose check digits are wrong: the API's cross-field rule.
    let bad = v.submit("/personnel/new", "/personnel", &person("10000000147")).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert!(bad.body.contains("f-identity_number-error"), "{}", bad.body);
    let ok = v.submit("/personnel/new", "/personnel", &person("10000000146")).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    let list = v.get("/personnel").await;
    assert!(list.body.contains("Mehmet") && list.body.contains("10000000146"));
}

#[tokio::test]
async fn page_views_are_not_metered_but_actions_are_like_api_calls() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let used = || async {
        let usage = app.get_ok("/portal/usage", &org.key).await;
        usage["monthly_total"].as_i64().unwrap()
    };
    let before = used().await;
    for path in ["/dashboard", "/vehicles", "/vehicles/new", "/personnel"] {
        assert_eq!(v.get(path).await.status, StatusCode::OK, "{path}");
    }
    // The usage reads themselves are calls: one each.
    assert_eq!(used().await, before + 1, "page views count nothing");
    let made = v.submit("/vehicles/new", "/vehicles", &[("plate", "06 TNS 06"), ("vehicle_type", "otobus")]).await;
    assert_eq!(made.status, StatusCode::SEE_OTHER);
    let usage = app.get_ok("/portal/usage", &org.key).await;
    assert_eq!(usage["monthly_total"].as_i64().unwrap(), before + 3, "the action counts as the API call it mirrors");
    assert!(usage["by_endpoint"].to_string().contains("POST /portal/vehicles"), "{usage}");
}

#[tokio::test]
async fn a_suspended_organization_reads_but_changes_nothing_and_a_stale_form_is_refused() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let form = v.get("/vehicles/new").await;
    let csrf = form.hidden("_csrf").unwrap();
    // Without the session's token a change is refused, as on the API.
    let stale = v.post("/vehicles", &[("plate", "34ABC1"), ("vehicle_type", "otobus")]).await;
    assert_eq!(stale.status, StatusCode::FORBIDDEN);
    assert!(stale.body.contains("Sayfa eskidi"), "{}", stale.body);
    let wrong = v.post("/vehicles", &[("_csrf", "not-it"), ("plate", "34ABC1"), ("vehicle_type", "otobus")]).await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);

    let id = org.id.to_string();
    tns_admin(&app.env, &["set-status", &id, "suspended", "--reason", "invoice unpaid", "--operator", "qa"])
        .await
        .unwrap();
    assert_eq!(v.get("/vehicles").await.status, StatusCode::OK, "reading goes on");
    let refused = v.post("/vehicles", &[("_csrf", &csrf), ("plate", "34ABC1"), ("vehicle_type", "otobus")]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(refused.body.contains("invoice unpaid"), "the reason is shown: {}", refused.body);
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM vehicles").fetch_one(&app.db).await.unwrap();
    assert_eq!(n, 0);
}

#[tokio::test]
async fn pages_are_private_framed_by_no_one_and_their_files_cached_for_good() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let v = Visitor::owner(&app, &org).await;
    let page = v.get("/dashboard").await;
    assert_eq!(page.headers[header::CACHE_CONTROL], "no-store");
    let csp = page.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(!page.body.contains(" style="), "no inline styles (the policy forbids them)");
    assert!(!page.body.contains("<script>"), "no inline scripts");
    // Every file the page names is served, hashed, for a year.
    for asset in page.body.split("\"/assets/").skip(1).map(|s| s.split('"').next().unwrap()) {
        let res = v.get(&format!("/assets/{asset}")).await;
        assert_eq!(res.status, StatusCode::OK, "{asset}");
        assert!(res.headers[header::CACHE_CONTROL].to_str().unwrap().contains("immutable"));
    }
    assert_eq!(v.get("/assets/portal-000000000000.css").await.status, StatusCode::NOT_FOUND);
    // A browser gets a page for a path that is nowhere; a program the API's JSON.
    let lost = v.get("/no/such/page").await;
    assert_eq!(lost.status, StatusCode::NOT_FOUND);
    assert!(lost.body.starts_with("<!DOCTYPE html>"));
    let res = app.client.get(format!("{}/no/such/page", app.root)).send().await.unwrap();
    assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
}
