//! The API while PostgreSQL cannot be reached: its database behind a proxy that refuses
//! connections as a stopped server does, while the test reads the database directly.

use std::time::Duration;

use reqwest::{header, Method, RequestBuilder};
use serde_json::{json, Value};

use crate::{
    fixtures::{journey, Fleet},
    helpers::*,
};

/// What one request of the mixed load got: its status, `Retry-After`, and the body.
struct Answer {
    status: u16,
    retry_after: Option<u64>,
    no_store: bool,
    request_id: String,
    body: Value,
}

/// Send `req`; its answer. A request left waiting for the pool's connection during an outage is
/// not answered before the client gives up (30 s).
async fn answer(req: RequestBuilder) -> Answer {
    let res = req.send().await.expect("answered (not left waiting for a database connection)");
    let status = res.status().as_u16();
    let retry_after = res.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()?.parse().ok());
    let no_store = res.headers().get(header::CACHE_CONTROL).is_some_and(|v| v == "no-store");
    let request_id = res.headers()["x-request-id"].to_str().unwrap().to_string();
    let body = res.json().await.unwrap_or(Value::Null);
    Answer { status, retry_after, no_store, request_id, body }
}

fn create(app: &TestApp, fleet: &Fleet) -> RequestBuilder {
    app.req(Method::POST, "/portal/journeys", Some(fleet.key())).json(&journey(json!(fleet.vehicle_id)))
}

/// `n` journeys created and `n` reads (a journey, the vehicles), all at once.
async fn mixed_load(app: &TestApp, fleet: &Fleet, read_id: i64, n: usize) -> (Vec<Answer>, Vec<Answer>) {
    let creates = (0..n).map(|_| answer(create(app, fleet)));
    let reads = (0..n).map(|i| {
        let path = if i % 2 == 0 { format!("/portal/journeys/{read_id}") } else { "/portal/vehicles".into() };
        answer(app.req(Method::GET, &path, Some(fleet.key())))
    });
    futures::future::join(futures::future::join_all(creates), futures::future::join_all(reads)).await
}

async fn readyz(app: &TestApp) -> u16 {
    app.get_anon("/readyz").await.status().as_u16()
}

#[tokio::test]
async fn an_unreachable_database_is_a_prompt_503_and_the_api_recovers_by_itself() {
    let env = Env::new().await;
    let direct = env.pool().await;
    tns_store::migrate(&direct).await.unwrap();
    let proxy = ChaosProxy::start("127.0.0.1:5432").await;
    let through = proxy.url_for(env.get("TNS_DATABASE_URL"));
    // Requests wait for a pooled connection far longer than the client waits for an answer
    // (30 s): during the outage, only a request that never waits for the pool is answered.
    let app = TestApp::start(env.with(&[
        ("TNS_DATABASE_URL", through.as_str()),
        ("TNS_MIGRATE_ON_START", "false"),
        ("TNS_DB_ACQUIRE_TIMEOUT_SECS", "120"),
    ]))
    .await;
    let fleet = Fleet::new(&app).await;
    let read_id = fleet.journey(&app).await;
    let mut created = vec![read_id];
    let mut record = |creates: &[Answer]| {
        created.extend(creates.iter().filter(|a| a.status == 201).map(|a| a.body["id"].as_i64().unwrap()));
    };

    let (creates, reads) = mixed_load(&app, &fleet, read_id, 6).await;
    assert!(creates.iter().all(|a| a.status == 201) && reads.iter().all(|a| a.status == 200), "served before");
    record(&creates);

    proxy.refuse();
    let down = eventually(Duration::from_secs(30), || async { (readyz(&app).await == 503).then_some(()) }).await;
    assert!(down.is_some(), "/readyz says not ready once the database is down");
    let ready: Value = app.get_anon("/readyz").await.json().await.unwrap();
    assert_eq!(ready["postgres"], "unreachable", "{ready}");

    // Every request is answered while the outage lasts, a 503 the client may retry: none waited
    // for the pool, none is a 500.
    let (creates, reads) = mixed_load(&app, &fleet, read_id, 6).await;
    for a in creates.iter().chain(&reads) {
        assert_eq!(a.status, 503, "{}", a.body);
        assert!(a.retry_after.is_some_and(|s| s >= 1), "503 with Retry-After: {}", a.body);
        assert!(a.no_store, "as every /api/v1 answer");
        assert_eq!(a.body["error"], "Service Unavailable", "{}", a.body);
        assert!(a.body["detail"].as_str().unwrap().contains("database"), "{}", a.body);
        // Support finds the case by the ID the customer pastes from the answer.
        let named = format!("(request id {})", a.request_id);
        assert!(a.body["detail"].as_str().unwrap().ends_with(&named), "{}", a.body);
    }
    assert_eq!(readyz(&app).await, 503, "answered during the outage, not after it");
    assert_eq!(app.get_anon("/api/v1/openapi.json").await.status(), 200, "the document needs no database");

    proxy.restore();
    let up = eventually(Duration::from_secs(30), || async { (readyz(&app).await == 200).then_some(()) }).await;
    assert!(up.is_some(), "ready again by itself once the database answers");
    let first = eventually(Duration::from_secs(30), || async {
        let a = answer(create(&app, &fleet)).await;
        assert!(a.status == 201 || a.status == 503, "{} {}", a.status, a.body);
        (a.status == 201).then_some(a)
    })
    .await
    .expect("writes succeed again");
    record(std::slice::from_ref(&first));
    let (creates, reads) = mixed_load(&app, &fleet, read_id, 6).await;
    assert!(creates.iter().all(|a| a.status == 201) && reads.iter().all(|a| a.status == 200), "served after");
    record(&creates);

    // Every journey answered 201 is a row, and nothing else was written.
    let mut rows: Vec<i64> = sqlx::query_scalar("SELECT id FROM journeys WHERE org_id = $1")
        .bind(fleet.org.id)
        .fetch_all(&direct)
        .await
        .unwrap();
    rows.sort_unstable();
    created.sort_unstable();
    assert_eq!(rows, created);
}

/// The admin API, on the same process, answers an unreachable database with a 503 and
/// `Retry-After` too (after its pool's wait), never a 500, and serves again once it is back.
#[tokio::test]
async fn the_admin_api_answers_an_unreachable_database_with_a_503() {
    let env = Env::new().await;
    tns_store::migrate(&env.pool().await).await.unwrap();
    let made = tns_admin(&env, &["token", "create", "ayse", "--scope", "read", "--operator", "lead"]).await.unwrap();
    let token = made[0]["token"].as_str().unwrap().to_string();
    let proxy = ChaosProxy::start("127.0.0.1:5432").await;
    let through = proxy.url_for(env.get("TNS_DATABASE_URL"));
    let p = Proc::start(
        "api",
        &env.with(&[
            ("TNS_DATABASE_URL", through.as_str()),
            ("TNS_MIGRATE_ON_START", "false"),
            ("TNS_ADMIN_ADDR", "127.0.0.1:0"),
        ]),
    )
    .await;
    let url = format!("{}/admin/v1/organizations", p.admin_root.clone().unwrap());
    let get = || client().get(&url).bearer_auth(&token).send();
    assert_eq!(get().await.unwrap().status(), 200);
    proxy.refuse();
    let res = get().await.unwrap();
    assert_eq!(res.status(), 503);
    assert!(res.headers().contains_key("retry-after"));
    let body: Value = res.json().await.unwrap();
    assert!(body["detail"].as_str().unwrap().contains("database"), "{body}");
    proxy.restore();
    let back =
        eventually(Duration::from_secs(30), || async { (get().await.unwrap().status() == 200).then_some(()) }).await;
    assert!(back.is_some(), "served again once the database is back");
}
