//! The platform's abuse limits and data protections, each shown shut from the outside.

use reqwest::Method;
use serde_json::{json, Value};

use crate::{fixtures::*, helpers::*};

#[tokio::test]
async fn submission_snapshots_show_personal_data_only_to_credentials_that_may_read_journeys() {
    let env = Env::new().await.with_scheduler();
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let id = f.journey(&app).await;
    app.post_ok(&format!("/portal/journeys/{id}/passengers"), f.key(), passenger(5), 201).await;
    let res = app.req(Method::POST, &format!("/portal/journeys/{id}/submit"), Some(f.key())).send().await.unwrap();
    let sub = json_of(res, 202).await["submission_id"].as_i64().unwrap();
    let path = format!("/portal/submissions/{sub}");

    let (_, auditor) = app.create_key(f.key(), &["submissions:read"]).await;
    let masked = app.get_ok(&path, &auditor).await["snapshot"].clone();
    let text = masked.to_string();
    assert!(!text.contains(&tckn(5)), "a passenger's identity number leaked: {text}");
    assert!(!text.contains("Kaya") && !text.contains("Demir"), "names leaked: {text}");
    assert_eq!(masked["passengers"][0]["person"]["last_name"], "K***");
    assert_eq!(masked["plate"], Value::String(f.plate.clone()), "the rest is shown");

    let (_, reader) = app.create_key(f.key(), &["submissions:read", "journeys:read"]).await;
    let clear = app.get_ok(&path, &reader).await["snapshot"].clone();
    assert_eq!(clear["passengers"][0]["person"]["identity_number"], json!(tckn(5)));
}

#[tokio::test]
async fn sign_in_routes_are_throttled_whatever_authorization_says() {
    let app = TestApp::spawn_with(&[("TNS_AUTH_RATE_LIMIT", "5")]).await;
    // One registration spends one of the address's five.
    let org = app.register().await;
    let login = json!({"email": org.email, "password": "wrong password"});
    let mut statuses = vec![];
    for _ in 0..6 {
        // A valid API key in the header buys nothing on the sign-in routes.
        statuses.push(app.post("/auth/login", Some(&org.key), login.clone()).await.status().as_u16());
    }
    assert_eq!(statuses, [401, 401, 401, 401, 429, 429], "the address's budget holds");
    let token = app.post("/auth/token", Some(&org.key), json!({"client_secret": org.key})).await;
    assert_eq!(token.status(), 429);
    assert!(token.headers().contains_key("retry-after"));
}

#[tokio::test]
async fn failed_sign_ins_back_off_per_account() {
    let app = TestApp::spawn().await;
    let (victim, other) = (app.register().await, app.register().await);
    let attempt = |org: &Org, password: &str| {
        let body = json!({"email": org.email, "password": password});
        app.post("/auth/login", None, body)
    };
    for _ in 0..5 {
        assert_eq!(attempt(&victim, "guess").await.status(), 401);
    }
    // The sixth failure starts a wait of 1 s, the seventh one of 2 s, and so on. Guess on until
    // a wait of more than a second is in force (how long checking a password takes on a busy
    // machine does not matter then): even the right password waits, told how long.
    let mut waited = None;
    for _ in 0..200 {
        let res = attempt(&victim, "guess").await;
        match res.status().as_u16() {
            429 if header_i64(&res, "retry-after") >= 2 => {
                waited = Some(attempt(&victim, &victim.password).await);
                break;
            }
            429 => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            status => assert_eq!(status, 401),
        }
    }
    let res = waited.expect("a wait of 2 s began");
    assert_eq!(res.status(), 429);
    assert!(header_i64(&res, "retry-after") >= 1);
    // Another account is not touched.
    assert_eq!(attempt(&other, &other.password).await.status(), 200);
}

#[tokio::test]
async fn guesses_sent_together_are_counted_together() {
    let app = TestApp::spawn().await;
    let victim = app.register().await;
    let body = json!({"email": victim.email, "password": "guess"});
    let answers = futures::future::join_all((0..40).map(|_| app.post("/auth/login", None, body.clone()))).await;
    let statuses: Vec<u16> = answers.iter().map(|r| r.status().as_u16()).collect();
    let checked = statuses.iter().filter(|s| **s == 401).count();
    // Five free attempts, then one per second of back-off: the burst checks a handful of
    // passwords, not forty.
    assert!(checked <= 8, "{checked} passwords checked: {statuses:?}");
    assert!(statuses.iter().all(|s| *s == 401 || *s == 429), "{statuses:?}");
}

#[tokio::test]
async fn an_invented_method_is_refused_before_anything_counts_it() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    for _ in 0..3 {
        let m = Method::from_bytes(b"XYZZYFOO").unwrap();
        let res = app.req(m, "/portal/me", Some(&org.key)).send().await.unwrap();
        assert_eq!(res.status(), 501);
        error_body(res, 501).await;
    }
    let metrics = app.metrics().await;
    assert!(!metrics.contains("XYZZYFOO"), "no series for an invented method");
    assert!(!app.usage(&org.key).await.to_string().contains("XYZZYFOO"), "no usage row either");
}

#[tokio::test]
async fn nothing_that_carries_a_secret_is_kept_for_replay() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let res = app
        .req(Method::POST, "/auth/token", Some(&org.key))
        .header("Idempotency-Key", "token-1")
        .json(&json!({"client_secret": org.key}))
        .send()
        .await
        .unwrap();
    assert_invalid(res, "Idempotency-Key").await;
    let kept: i64 = sqlx::query_scalar("SELECT count(*) FROM idempotency_keys").fetch_one(&app.db).await.unwrap();
    assert_eq!(kept, 0);
    // The answers that carry secrets are never cached either.
    let res = app.post("/auth/token", None, json!({"client_secret": org.key})).await;
    assert_eq!(res.headers()["cache-control"], "no-store");
    let res = app.post("/portal/api-keys", Some(&org.key), json!({"name": "n", "scopes": ["journeys:read"]})).await;
    assert_eq!(res.headers()["cache-control"], "no-store");
}

#[tokio::test]
async fn a_replay_is_only_ever_for_the_credential_that_made_the_request() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let ticket = json!({"subject": "s", "body": "b", "priority": "low"});
    let send = |bearer: String| {
        app.req(Method::POST, "/portal/support/tickets", Some(&bearer))
            .header("Idempotency-Key", "same-key")
            .json(&ticket)
            .send()
    };
    let first = json_of(send(org.key.clone()).await.unwrap(), 201).await;
    let again = send(org.key.clone()).await.unwrap();
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(json_of(again, 201).await, first);
    // A credential without the scope is judged by its own checks, never answered from the first.
    let (_, reader) = app.create_key(&org.key, &["journeys:read"]).await;
    error_body(send(reader).await.unwrap(), 403).await;
    // A cookie session's replay needs its CSRF token like any unsafe request.
    let login =
        json_of(app.post("/auth/login", None, json!({"email": org.email, "password": org.password})).await, 200).await;
    let no_csrf = app.req(Method::POST, "/portal/support/tickets", None).header("Idempotency-Key", "k2").json(&ticket);
    error_body(no_csrf.send().await.unwrap(), 403).await;
    let csrf = login["csrf_token"].as_str().unwrap();
    let with = app
        .req(Method::POST, "/portal/support/tickets", None)
        .header("Idempotency-Key", "k2")
        .header("X-CSRF-Token", csrf);
    json_of(with.json(&ticket).send().await.unwrap(), 201).await;
}

#[tokio::test]
async fn invented_keys_cost_no_lookup_from_a_client_over_its_budget() {
    let app = TestApp::spawn_with(&[("TNS_AUTH_RATE_LIMIT", "3"), ("TNS_AUTH_CACHE_TTL_MS", "4000")]).await;
    let org = app.register().await;
    assert_eq!(app.get("/portal/me", &org.key).await.status(), 200, "a good key, now known to this process");
    let invented = |n: u8| format!("sk_live_{}", char::from(b'a' + n).to_string().repeat(43));
    assert_eq!(app.get("/portal/me", &invented(1)).await.status(), 401, "looked up and refused");
    assert_eq!(app.get("/portal/me", &invented(2)).await.status(), 401);
    assert_eq!(app.get("/portal/me", &invented(3)).await.status(), 401);
    // Three refused keys spent the budget: from now on an unknown key is refused before the
    // database is asked about it.
    let lookups =
        |m: String| m.lines().find_map(|l| l.strip_prefix("tns_auth_key_lookups_total ")?.parse::<i64>().ok());
    let before = lookups(app.metrics().await).unwrap();
    for n in 4..14 {
        let res = app.get("/portal/me", &invented(n)).await;
        assert_eq!(res.status(), 429);
        assert!(res.headers().contains_key("retry-after"));
    }
    assert_eq!(lookups(app.metrics().await).unwrap(), before, "no lookup for any of them");
    // A key this process knows costs no lookup and is served.
    assert_eq!(app.get("/portal/me", &org.key).await.status(), 200);
}

#[tokio::test]
async fn anonymous_calls_from_an_address_do_not_hold_back_its_valid_keys() {
    // No key cache: every call with a key asks the database, as one whose cache entry expired.
    let app = TestApp::spawn_with(&[("TNS_AUTH_RATE_LIMIT", "3"), ("TNS_AUTH_CACHE_TTL_MS", "0")]).await;
    let org = app.register().await;
    for _ in 0..3 {
        app.get_anon("/portal/billing/plans").await;
    }
    assert_eq!(app.get_anon("/portal/billing/plans").await.status(), 429, "the address's anonymous budget is spent");
    assert_eq!(app.get("/portal/me", &org.key).await.status(), 200, "a valid key from it is served");
}

#[tokio::test]
async fn metrics_are_served_on_their_own_listener_only() {
    let app = TestApp::spawn().await;
    assert_eq!(app.get_anon("/metrics").await.status(), 404, "not on the API's port");
    assert!(app.metrics().await.contains("tns_http_requests_total"));
}

#[tokio::test]
async fn logout_ends_the_session_everywhere() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    json_of(app.post("/auth/login", None, json!({"email": org.email, "password": org.password})).await, 200).await;
    assert_eq!(app.get_anon("/portal/me").await.status(), 200, "the cookie works");
    let out = app.post("/auth/logout", None, json!({})).await;
    let cleared =
        out.headers().get_all("set-cookie").iter().filter(|c| c.to_str().unwrap().contains("Max-Age=0")).count();
    assert_eq!(cleared, 2);
    assert_eq!(app.get_anon("/portal/me").await.status(), 401, "the session is gone");
}

#[tokio::test]
async fn a_session_outlives_nothing_it_was_made_for() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    // A second user of the organization, signed in, then removed by an operator.
    let password = tns_core::domain::Password::parse("another horse".into()).unwrap();
    let hash = tns_api::auth::password::hash(password).await.unwrap();
    let user: i64 = sqlx::query_scalar(
        "INSERT INTO users (org_id, email, full_name, password_hash, role) VALUES ($1, $2, 'U', $3, 'dispatcher') RETURNING id",
    )
    .bind(org.id)
    .bind(format!("member-{}@example.com", org.id))
    .bind(hash)
    .fetch_one(&app.db)
    .await
    .unwrap();
    let login = json!({"email": format!("member-{}@example.com", org.id), "password": "another horse"});
    json_of(app.post("/auth/login", None, login).await, 200).await;
    assert_eq!(app.get_anon("/portal/me").await.status(), 200);
    sqlx::query("DELETE FROM users WHERE id = $1").bind(user).execute(&app.db).await.unwrap();
    let res = eventually(std::time::Duration::from_secs(10), || async {
        let s = app.get_anon("/portal/me").await.status().as_u16();
        (s == 401).then_some(s)
    })
    .await;
    assert_eq!(res, Some(401), "the session died with its user");
}

#[tokio::test]
async fn the_schema_refuses_a_reference_across_organizations() {
    let app = TestApp::spawn().await;
    let (a, b) = (Fleet::new(&app).await, app.register().await);
    let err = sqlx::query(
        "INSERT INTO journeys (org_id, vehicle_ref, plate, vehicle_record_id, departure_date, departure_time,
                               departure_district_id, arrival_date, arrival_time, arrival_district_id, trip_kind)
         VALUES ($1, 'x', 'X', $2, '2026-12-01', '08:00', 1421, '2026-12-01', '09:00', 1421, 'tarifesiz')",
    )
    .bind(b.id)
    .bind(a.vehicle_id)
    .execute(&app.db)
    .await
    .unwrap_err();
    assert_eq!(err.as_database_error().and_then(|e| e.code()).as_deref(), Some("23503"), "{err}");

    // A webhook delivery of one organization's event to another's subscription.
    let sub = app
        .post_ok(
            "/portal/webhooks",
            &b.key,
            json!({"event_type": "journey.created", "endpoint_url": "https://127.0.0.1:9/h"}),
            201,
        )
        .await;
    app.post_ok("/portal/webhooks/test-event", &b.key, json!({}), 200).await;
    let event: i64 = sqlx::query_scalar("SELECT id FROM webhook_events WHERE org_id = $1")
        .bind(b.id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    let err = sqlx::query(
        "INSERT INTO webhook_deliveries (org_id, event_id, subscription_id, event_type) VALUES ($1, $2, $3, 'test')",
    )
    .bind(a.org.id)
    .bind(event)
    .bind(sub["id"].as_i64().unwrap())
    .execute(&app.db)
    .await
    .unwrap_err();
    assert_eq!(err.as_database_error().and_then(|e| e.code()).as_deref(), Some("23503"), "{err}");
}

#[tokio::test]
async fn a_request_is_held_no_longer_than_the_server_allows() {
    let env = Env::new().await.with_scheduler().with(&[("TNS_REQUEST_TIMEOUT_SECS", "1")]);
    let app = TestApp::start(env.clone()).await;
    let _scheduler = InProcessScheduler::start(&env).await;
    let f = Fleet::new(&app).await;
    let mut body = journey(json!("34SLOW3000"));
    body["personnel_ids"] = json!([f.driver_id]);
    let id = app.post_ok("/portal/journeys", f.key(), body, 201).await["id"].as_i64().unwrap();
    let res = app
        .req(Method::POST, &format!("/portal/journeys/{id}/submit"), Some(f.key()))
        .header("Prefer", "wait=10")
        .send()
        .await
        .unwrap();
    error_body(res, 503).await;
}

#[tokio::test]
async fn fail_open_admits_a_bounded_share_while_redis_is_down() {
    let proxy = ChaosProxy::start("127.0.0.1:6379").await;
    let url = proxy.url();
    let app = TestApp::spawn_with(&[("TNS_REDIS_URL", url.as_str()), ("TNS_QUOTA_FAIL_OPEN_ALLOWANCE", "3")]).await;
    let org = app.register().await;
    assert_eq!(app.get("/portal/me", &org.key).await.status(), 200);
    proxy.cut();
    // Pooled connections notice the cut once the proxy closes them: the first call counted
    // locally is the first of this process's allowance.
    let first_local = eventually(std::time::Duration::from_secs(10), || async {
        let res = app.get("/portal/me", &org.key).await;
        (fallback(&app.metrics().await) > 0).then_some(res.status().as_u16())
    })
    .await;
    assert_eq!(first_local, Some(200));
    // However long the outage, this process admits its allowance (3) and no more; the quota
    // itself (1000) is far away.
    let mut statuses = vec![];
    for _ in 0..5 {
        statuses.push(app.get("/portal/me", &org.key).await.status().as_u16());
    }
    assert_eq!(statuses, [200, 200, 429, 429, 429]);
    // What customers must reach stays reachable.
    assert_eq!(app.get("/portal/usage", &org.key).await.status(), 200);
    proxy.restore();
}

fn fallback(metrics: &str) -> i64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("tns_quota_redis_fallback_total "))
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1)
}

#[tokio::test]
async fn a_client_that_trickles_its_headers_is_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn_with(&[("TNS_HEADER_READ_TIMEOUT_SECS", "1")]).await;
    let addr = app.api.root.trim_start_matches("http://").to_string();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    // The headers never end: the server closes the connection (with or without a 408) once the
    // deadline passes; the outer timeout only fails the test if it never does.
    let mut answer = Vec::new();
    let read = tokio::time::timeout(std::time::Duration::from_secs(30), conn.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the connection was still open after 30 s");
    let text = String::from_utf8_lossy(&answer);
    assert!(answer.is_empty() || text.starts_with("HTTP/1.1 408"), "{text}");

    // A client that asks in time is served on the same listener.
    assert_eq!(app.get_anon("/portal/billing/plans").await.status(), 200);
}
