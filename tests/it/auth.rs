use std::time::Duration;

use reqwest::{header, Method};
use serde_json::{json, Value};

use crate::helpers::*;

#[tokio::test]
async fn register_then_me_shows_user_organization_and_trial_starter() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    assert!(org.key.starts_with("sk_live_") && org.key.len() >= 8 + 43);

    let res = app.get("/portal/me", &org.key).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header_i64(&res, "x-ratelimit-limit"), 1000);
    let me: Value = res.json().await.unwrap();
    assert_eq!(me["user"]["user_id"], org.user_id);
    assert_eq!(me["user"]["organization_id"], org.id);
    assert_eq!(me["user"]["email"], org.email.as_str());
    assert_eq!(me["user"]["role"], "owner");
    assert_eq!(me["organization"]["id"], org.id);
    assert_eq!(me["organization"]["tax_number"], org.tax_number.as_str());
    assert_eq!(me["organization"]["status"], "trial");
    assert_eq!(me["organization"]["monthly_quota"], 1000);
    assert_eq!(me["organization"]["ws_username"], Value::Null);
    assert_eq!(me["subscription"]["code"], "starter");
    assert_eq!(me["subscription"]["status"], "active");
    assert_eq!(me["subscription"]["price_try"], 99.0);
}

#[tokio::test]
async fn register_validates_every_field_and_writes_nothing_on_failure() {
    let app = TestApp::spawn().await;
    let good = json!({"organization_name": "Acme", "tax_number": "1234567890", "full_name": "A B",
                      "email": "ops@acme.com.tr", "password": "12345678"});
    let cases: &[(&str, Value, &str)] = &[
        ("organization_name", json!(""), "organization_name"),
        ("organization_name", json!("x".repeat(201)), "organization_name"),
        ("tax_number", json!("123456789"), "tax_number"),
        ("tax_number", json!("12345678ab"), "tax_number"),
        ("tax_number", json!(1234567890), "tax_number"),
        ("full_name", json!("  "), "full_name"),
        ("email", json!("not-an-address"), "email"),
        ("password", json!("1234567"), "password"),
    ];
    for (field, value, named) in cases {
        let mut body = good.clone();
        body[*field] = value.clone();
        let b = error_body(app.post("/auth/register", None, body).await, 422).await;
        assert_eq!(b["field"], *named, "{field}={value}: {b}");
        assert!(b["detail"].as_str().unwrap().starts_with(named));
    }
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("email");
    let b = error_body(app.post("/auth/register", None, missing).await, 422).await;
    assert_eq!(b["field"], "email");

    assert_eq!(app.post("/auth/register", None, good.clone()).await.status(), 201);
    // Same address in another case (another company): taken, and the failed attempt leaves no
    // organization behind.
    let mut dup = good.clone();
    dup["email"] = json!("OPS@acme.com.tr");
    dup["tax_number"] = json!("1234567891");
    let b = error_body(app.post("/auth/register", None, dup).await, 409).await;
    assert!(b["detail"].as_str().unwrap().starts_with("email"), "{b}");
    let orgs: i64 = sqlx::query_scalar("SELECT count(*) FROM organizations").fetch_one(&app.db).await.unwrap();
    assert_eq!(orgs, 1);
}

#[tokio::test]
async fn a_company_registers_once_whatever_the_address_and_even_when_suspended() {
    let app = TestApp::spawn().await;
    let first = app.register().await;
    let again = |email: &str| {
        json!({"organization_name": "Acme Again", "tax_number": first.tax_number, "full_name": "B C",
               "email": email, "password": "12345678"})
    };
    // A new address is no way to a fresh trial: 409 naming the tax number, not who holds it.
    let b = error_body(app.post("/auth/register", None, again("someone.else@example.com")).await, 409).await;
    let detail = b["detail"].as_str().unwrap();
    assert!(detail.starts_with("tax_number") && detail.contains("already has an account"), "{b}");
    assert!(!detail.contains(&first.email) && !detail.contains("owner-"), "the holder's address stays hidden: {b}");
    // Nor a way out of a suspension for unpaid invoices.
    let id = first.id.to_string();
    tns_admin(&app.env, &["set-status", &id, "suspended", "--reason", "invoice unpaid", "--operator", "deniz"])
        .await
        .unwrap();
    error_body(app.post("/auth/register", None, again("third@example.com")).await, 409).await;
    let orgs: i64 = sqlx::query_scalar("SELECT count(*) FROM organizations").fetch_one(&app.db).await.unwrap();
    assert_eq!(orgs, 1, "nothing half-written");
    // Another company registers as before.
    app.register().await;
}

#[tokio::test]
async fn secrets_are_stored_hashed() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let phc: String = sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1")
        .bind(org.user_id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert!(phc.starts_with("$argon2id$"), "{phc}");
    assert!(!phc.contains(&org.password));
    let (hash, prefix): (Vec<u8>, String) = sqlx::query_as("SELECT key_hash, prefix FROM api_keys WHERE org_id = $1")
        .bind(org.id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    use sha2::Digest;
    assert_eq!(hash, sha2::Sha256::digest(org.key.as_bytes()).to_vec());
    assert!(org.key.starts_with(&prefix) && prefix.len() < 20);
}

#[tokio::test]
async fn token_exchange_and_its_failures() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let res = app.post("/auth/token", None, json!({"client_id": "", "client_secret": org.key})).await;
    assert_eq!(res.status(), 200);
    let t: Value = res.json().await.unwrap();
    assert_eq!(t["token_type"], "Bearer");
    assert_eq!(t["expires_in"], 86400);
    let scope = t["scope"].as_str().unwrap();
    for s in ["journeys:write", "submissions:read", "webhooks:write", "account:write"] {
        assert!(scope.split(' ').any(|x| x == s), "{scope}");
    }
    let token = t["access_token"].as_str().unwrap();
    assert_eq!(app.get("/portal/me", token).await.status(), 200);

    // client_id is optional.
    assert_eq!(app.post("/auth/token", None, json!({"client_secret": org.key})).await.status(), 200);
    error_body(app.post("/auth/token", None, json!({"client_secret": "sk_live_nope"})).await, 401).await;
    error_body(app.post("/auth/token", None, json!({"client_secret": "hello"})).await, 401).await;
    let b = error_body(app.post("/auth/token", None, json!({"client_id": "x"})).await, 422).await;
    assert_eq!(b["field"], "client_secret");
}

#[tokio::test]
async fn missing_or_invalid_credentials_are_401_with_rate_headers() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let token = app.token(&org.key).await;
    // A token signed with another secret, and one whose payload was altered.
    let mut parts: Vec<String> = token.split('.').map(String::from).collect();
    parts[1] = parts[1].chars().rev().collect();
    let tampered = parts.join(".");

    for bearer in [None, Some("sk_live_unknown"), Some("garbage"), Some(tampered.as_str())] {
        let res = app.req(Method::GET, "/portal/me", bearer).send().await.unwrap();
        assert!(res.headers().contains_key("x-ratelimit-limit"));
        error_body(res, 401).await;
    }
    let res = app.req(Method::GET, "/portal/me", None).header(header::AUTHORIZATION, "Basic abc").send().await.unwrap();
    error_body(res, 401).await;
}

/// Unauthenticated requests refused so far for a client's budget (this process's counter).
fn client_ip_rejections(metrics: &str) -> i64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(r#"tns_quota_rejections_total{limit="client_ip"} "#))
        .map_or(0, |n| n.trim().parse().unwrap())
}

#[tokio::test]
async fn unauthenticated_calls_are_throttled_per_ip() {
    // A fixed window of 2 s: short enough to start at a window's beginning and to see it end.
    let app = TestApp::spawn_with(&[("TNS_AUTH_RATE_LIMIT", "3"), ("TNS_AUTH_RATE_WINDOW_SECS", "2")]).await;
    let body = json!({"client_secret": "sk_live_guess"});
    let guess = || app.post("/auth/token", None, body.clone());
    // Guess until a new window begins (the reset moves on): that guess is the window's first,
    // and the rest of the window is ahead.
    let before = header_i64(&guess().await, "x-ratelimit-reset");
    let first = eventually(Duration::from_secs(10), || async {
        let res = guess().await;
        (header_i64(&res, "x-ratelimit-reset") > before).then_some(res)
    })
    .await
    .expect("a new window begins");
    let window_ends = header_i64(&first, "x-ratelimit-reset");
    let mut within = vec![first];
    for _ in 0..2 {
        within.push(guess().await);
    }
    for (res, remaining) in within.into_iter().zip([2, 1, 0]) {
        assert_eq!(header_i64(&res, "x-ratelimit-limit"), 3);
        assert_eq!(header_i64(&res, "x-ratelimit-remaining"), remaining);
        assert_eq!(header_i64(&res, "x-ratelimit-reset"), window_ends, "one window");
        error_body(res, 401).await;
    }
    let rejected = client_ip_rejections(&app.metrics().await);
    let res = guess().await;
    assert_eq!(header_i64(&res, "x-ratelimit-reset"), window_ends, "one window");
    let retry = header_i64(&res, "retry-after");
    assert!((1..=2).contains(&retry), "retry after the window: {retry}");
    error_body(res, 429).await;
    assert_eq!(client_ip_rejections(&app.metrics().await), rejected + 1);
    // The window ends: the next one admits guesses again, counted from zero.
    let next = eventually(Duration::from_secs(10), || async {
        let res = guess().await;
        (res.status() != 429).then_some(res)
    })
    .await
    .expect("the window ends");
    assert!(header_i64(&next, "x-ratelimit-reset") > window_ends);
    assert_eq!(header_i64(&next, "x-ratelimit-remaining"), 2);
    error_body(next, 401).await;
}

#[tokio::test]
async fn portal_session_cookie_needs_csrf_on_unsafe_methods() {
    let app = TestApp::spawn_with(&[("TNS_COOKIE_SECURE", "false")]).await;
    let org = app.register().await;

    let wrong = app.post("/auth/login", None, json!({"email": org.email, "password": "wrong password"})).await;
    error_body(wrong, 401).await;
    let unknown = app.post("/auth/login", None, json!({"email": "nobody@example.com", "password": "whatever1"})).await;
    error_body(unknown, 401).await;

    let res = app.post("/auth/login", None, json!({"email": org.email.to_uppercase(), "password": org.password})).await;
    assert_eq!(res.status(), 200);
    let cookies: Vec<String> =
        res.headers().get_all(header::SET_COOKIE).iter().map(|v| v.to_str().unwrap().to_string()).collect();
    let session = cookies.iter().find(|c| c.starts_with("tns_session=")).expect("session cookie");
    assert!(session.contains("HttpOnly") && session.contains("SameSite=Lax") && !session.contains("Secure"));
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["ok"], true);
    assert_eq!(body["user"]["user_id"], org.user_id);
    let csrf = body["csrf_token"].as_str().unwrap().to_string();

    // The client now holds the cookie: reads work, writes need the CSRF header.
    let me = app.get_anon("/portal/me").await;
    assert_eq!(me.status(), 200);
    let create = json!({"name": "from portal", "scopes": ["journeys:read"]});
    let res = app.client.post(app.url("/portal/api-keys")).json(&create).send().await.unwrap();
    error_body(res, 403).await;
    let res =
        app.client.post(app.url("/portal/api-keys")).header("x-csrf-token", "nope").json(&create).send().await.unwrap();
    error_body(res, 403).await;
    let res =
        app.client.post(app.url("/portal/api-keys")).header("x-csrf-token", &csrf).json(&create).send().await.unwrap();
    assert_eq!(res.status(), 201);

    // A bearer request from the same client is not subject to CSRF.
    let res = app.post("/portal/api-keys", Some(&org.key), create).await;
    assert_eq!(res.status(), 201);
}

#[tokio::test]
async fn session_cookie_is_secure_outside_dev() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let res = app.post("/auth/login", None, json!({"email": org.email, "password": org.password})).await;
    assert_eq!(res.status(), 200);
    let secure = res.headers().get_all(header::SET_COOKIE).iter().all(|v| v.to_str().unwrap().contains("; Secure"));
    assert!(secure);
}

#[tokio::test]
async fn credentials_with_a_nul_character_are_refused_as_invalid_not_looked_up() {
    let app = TestApp::spawn().await;
    let res = app.api.post("/auth/login", None, json!({"email": "a\u{0}@b.com", "password": "x"})).await;
    crate::helpers::assert_invalid(res, "email").await;
    let res = app.api.post("/auth/token", None, json!({"client_id": "", "client_secret": "sk_live_\u{0}"})).await;
    crate::helpers::assert_invalid(res, "client_secret").await;
}

/// A database that already holds several organizations of one company (registered before the
/// rule) migrates without failing: all are kept, the later ones marked, operators told which.
#[tokio::test]
async fn existing_duplicate_tax_numbers_are_kept_and_shown_to_operators() {
    let env = Env::new().await;
    let db = sqlx::PgPool::connect(env.get("TNS_DATABASE_URL")).await.unwrap();
    let all = &tns_store::MIGRATOR;
    let before = sqlx::migrate::Migrator {
        migrations: all.migrations.iter().filter(|m| m.version < 20261127000017).cloned().collect::<Vec<_>>().into(),
        ..sqlx::migrate::Migrator::DEFAULT
    };
    before.run(&db).await.unwrap();
    let orgs: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO organizations (name, tax_number)
         VALUES ('First', '5555555555'), ('Again', '5555555555'), ('Third', '5555555555'), ('Other', '6666666666')
         RETURNING id",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    sqlx::query("INSERT INTO subscriptions (org_id, plan_code) SELECT id, 'starter' FROM unnest($1::int8[]) AS u(id)")
        .bind(&orgs)
        .execute(&db)
        .await
        .unwrap();
    all.run(&db).await.unwrap();

    let marked: Vec<bool> =
        sqlx::query_scalar("SELECT tax_number_duplicate FROM organizations ORDER BY id").fetch_all(&db).await.unwrap();
    assert_eq!(marked, [false, true, true, false], "the oldest holds the number");
    let listed = tns_admin(&env, &["orgs"]).await.unwrap();
    let shares: Vec<(i64, bool)> =
        listed.iter().map(|o| (o["id"].as_i64().unwrap(), o["shares_tax_number"].as_bool().unwrap())).collect();
    assert_eq!(shares, [(orgs[3], false), (orgs[2], true), (orgs[1], true), (orgs[0], true)]);
    // From now on the rule holds, in the database too.
    let refused = sqlx::query("INSERT INTO organizations (name, tax_number) VALUES ('Fourth', '5555555555')")
        .execute(&db)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains(tns_store::accounts::TAX_NUMBER_KEY), "{refused}");
}
