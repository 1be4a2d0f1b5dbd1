//! Registering an organization through the portal's form, as a browser without scripts would:
//! the API's own rules and messages beside the fields, what was typed kept (never the
//! password), the form's own token, then the new owner signed in on the dashboard.

use reqwest::StatusCode;

use crate::{
    helpers::{unique_tax_number, TestApp},
    portal::Visitor,
};

/// The registration form's fields with `tax` and `email`, and the form's token.
fn fields<'a>(token: &'a str, tax: &'a str, email: &'a str, password: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("token", token),
        ("organization_name", "Boğaziçi Turizm"),
        ("tax_number", tax),
        ("full_name", "Zeynep Kaya"),
        ("email", email),
        ("password", password),
    ]
}

#[tokio::test]
async fn registering_through_the_form_signs_the_owner_in() {
    let app = TestApp::spawn().await;
    let v = Visitor::new(&app);
    // The sign-in page links to it.
    assert!(v.get("/login").await.body.contains(r#"href="/register""#));
    let form = v.get("/register").await;
    assert_eq!(form.status, StatusCode::OK);
    for name in ["organization_name", "tax_number", "full_name", "email", "password"] {
        assert!(form.body.contains(&format!(r#"<label for="f-{name}""#)), "{name} is labelled: {}", form.body);
    }
    let token = form.hidden("token").expect("the form carries its token");
    let email = format!("zeynep-{}@example.com", unique_tax_number());

    // The API's parser refuses a tax number that is not 10 digits: beside the field, with what
    // was typed kept, but not the password; nothing stored.
    let bad = v.post("/register", &fields(&token, "12345", &email, "long enough pw")).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert!(bad.body.contains(r#"id="f-tax_number-error""#), "{}", bad.body);
    assert!(bad.body.contains(r#"aria-describedby="f-tax_number-error""#), "{}", bad.body);
    assert!(bad.body.contains(&format!(r#"value="{email}""#)) && bad.body.contains(r#"value="Boğaziçi Turizm""#));
    assert!(!bad.body.contains("long enough pw"), "the password is never sent back");
    let orgs = || async { sqlx::query_scalar::<_, i64>("SELECT count(*) FROM organizations").fetch_one(&app.db).await };
    assert_eq!(orgs().await.unwrap(), 0);
    // A short password: the API's rule, beside the password.
    let token = bad.hidden("token").unwrap();
    let tax = unique_tax_number();
    let short = v.post("/register", &fields(&token, &tax, &email, "short")).await;
    assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(short.body.contains(r#"id="f-password-error""#), "{}", short.body);

    // A post whose token is not this browser's registers no one.
    let other = Visitor::new(&app);
    let forged = other.post("/register", &fields(&short.hidden("token").unwrap(), &tax, &email, "correct horse")).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert_eq!(orgs().await.unwrap(), 0);

    // Right: registered, signed in, shown the first API key once (it works), then the dashboard.
    let ok = v.post("/register", &fields(&short.hidden("token").unwrap(), &tax, &email, "correct horse")).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    let at = ok.body.find(r#"<code id="new-secret">"#).expect("the key is shown") + r#"<code id="new-secret">"#.len();
    let key = &ok.body[at..at + ok.body[at..].find('<').unwrap()];
    assert!(ok.body.contains(r#"href="/dashboard""#));
    let me = app.get_ok("/portal/me", key).await;
    assert_eq!(me["organization"]["name"], "Boğaziçi Turizm", "{me}");
    let dash = v.get("/dashboard").await;
    assert_eq!(dash.status, StatusCode::OK);
    assert!(dash.body.contains("Bu ayki kullanım"), "{}", dash.body);
    // As the API registers: the organization with its owner, on a trial, who can sign in.
    let (name, status): (String, String) =
        sqlx::query_as("SELECT name, status::text FROM organizations WHERE tax_number = $1")
            .bind(&tax)
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!((name.as_str(), status.as_str()), ("Boğaziçi Turizm", "trial"));
    let login = app.post("/auth/login", None, serde_json::json!({"email": email, "password": "correct horse"})).await;
    assert_eq!(login.status(), 200);

    // The same tax number or address again: the API's 409, beside its field.
    let again = Visitor::new(&app);
    let token = again.get("/register").await.hidden("token").unwrap();
    let taken = again.post("/register", &fields(&token, &tax, "someone-else@example.com", "correct horse")).await;
    assert_eq!(taken.status, StatusCode::CONFLICT);
    assert!(taken.body.contains(r#"id="f-tax_number-error""#), "{}", taken.body);
    let token = taken.hidden("token").unwrap();
    let dup = again.post("/register", &fields(&token, &unique_tax_number(), &email, "correct horse")).await;
    assert_eq!(dup.status, StatusCode::CONFLICT);
    assert!(dup.body.contains(r#"id="f-email-error""#), "{}", dup.body);
    assert_eq!(orgs().await.unwrap(), 1);
}
