use std::time::Duration;

use redis::AsyncCommands;
use serde_json::{json, Value};

use crate::helpers::*;

fn endpoint<'a>(usage: &'a Value, name: &str) -> Option<&'a Value> {
    usage["by_endpoint"].as_array().unwrap().iter().find(|e| e["endpoint"] == name)
}

#[tokio::test]
async fn hard_limit_answers_429_beyond_the_quota_and_does_not_count_it() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    set_custom_plan(&app.db, org.id, "it-hard-5", Some(5), None).await;
    for remaining in (0..5).rev() {
        let res = app.get("/portal/me", &org.key).await;
        assert_eq!(res.status(), 200);
        assert_eq!(header_i64(&res, "x-ratelimit-limit"), 5);
        assert_eq!(header_i64(&res, "x-ratelimit-remaining"), remaining);
    }
    let res = app.get("/portal/me", &org.key).await;
    assert_eq!(header_i64(&res, "x-ratelimit-remaining"), 0);
    let reset = header_i64(&res, "x-ratelimit-reset");
    let retry = header_i64(&res, "retry-after");
    let now = chrono::Utc::now().timestamp();
    assert!(reset > now && (retry - (reset - now)).abs() <= 2);
    error_body(res, 429).await;

    // Usage stays reachable beyond the quota, and the refused call was not counted.
    let usage = app.usage(&org.key).await;
    assert_eq!(usage["monthly_quota"], 5);
    assert_eq!(endpoint(&usage, "GET /portal/me").unwrap()["total_calls"], 5);
    assert_eq!(usage["monthly_total"], 6, "five calls plus this usage call: {usage}");
}

#[tokio::test]
async fn plans_with_an_overage_price_are_soft_limited() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    set_custom_plan(&app.db, org.id, "it-soft-3", Some(3), Some(0.05)).await;
    for i in 0..6 {
        let res = app.get("/portal/me", &org.key).await;
        assert_eq!(res.status(), 200, "call {i} is served as overage");
        assert_eq!(header_i64(&res, "x-ratelimit-remaining"), (2 - i).max(0));
    }
    assert_eq!(endpoint(&app.usage(&org.key).await, "GET /portal/me").unwrap()["total_calls"], 6);
}

#[tokio::test]
async fn unlimited_plan_reports_minus_one() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    let res = app.post("/portal/billing/subscription/change", Some(&org.key), json!({"plan_code": "Y-999"})).await;
    assert_eq!(res.status(), 200);
    let res = app.get("/portal/me", &org.key).await;
    assert_eq!(header_i64(&res, "x-ratelimit-limit"), -1);
    assert_eq!(header_i64(&res, "x-ratelimit-remaining"), -1);
    let me: Value = res.json().await.unwrap();
    assert_eq!(me["organization"]["monthly_quota"], -1);
    assert_eq!(me["subscription"]["monthly_quota"], -1);
}

#[tokio::test]
async fn usage_is_by_route_template_with_error_counts() {
    let app = TestApp::spawn().await;
    let org = app.register().await;
    for id in [999_001, 999_002] {
        error_body(app.delete(&format!("/portal/api-keys/{id}"), &org.key).await, 404).await;
    }
    app.get("/portal/api-keys", &org.key).await;
    let found = eventually(Duration::from_secs(5), || async {
        let u = app.usage(&org.key).await;
        let e = endpoint(&u, "DELETE /portal/api-keys/{id}")?.clone();
        (e["error_calls"] == 2).then_some((u, e))
    })
    .await
    .expect("error calls recorded");
    assert_eq!(found.1["total_calls"], 2);
    assert_eq!(endpoint(&found.0, "GET /portal/api-keys").unwrap()["error_calls"], 0);
    assert!(found.0["by_endpoint"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| !e["endpoint"].as_str().unwrap().contains("999")));
    let b = error_body(app.get("/portal/usage?month=2026-13", &org.key).await, 422).await;
    assert_eq!(b["field"], "month");
    let old = app.usage_month(&org.key, "2020-01").await;
    assert_eq!(old["monthly_total"], 0);
}

#[tokio::test]
async fn counters_are_persisted_and_reseeded_after_redis_loses_them() {
    let app = TestApp::spawn_with(&[("TNS_USAGE_FLUSH_SECS", "1")]).await;
    let org = app.register().await;
    for _ in 0..4 {
        assert_eq!(app.get("/portal/me", &org.key).await.status(), 200);
    }
    let persisted = eventually(Duration::from_secs(10), || async {
        let n: Option<i64> = sqlx::query_scalar(
            "SELECT total_calls FROM usage_monthly WHERE org_id = $1 AND endpoint = 'GET /portal/me'",
        )
        .bind(org.id)
        .fetch_optional(&app.db)
        .await
        .unwrap();
        n.filter(|n| *n == 4)
    })
    .await;
    assert_eq!(persisted, Some(4));

    // Redis loses the month: the next call re-seeds from PostgreSQL and continues the count.
    let month = chrono::Utc::now().format("%Y-%m").to_string();
    let mut r = app.env.redis().await;
    let _: () = r.del(app.env.redis_key(&format!("usage:{}:{month}", org.id))).await.unwrap();
    let res = app.get("/portal/me", &org.key).await;
    assert_eq!(header_i64(&res, "x-ratelimit-remaining"), 1000 - 5);
}

#[tokio::test]
async fn plan_change_applies_at_once_on_another_process() {
    let env = Env::new().await;
    let a = TestApp::start(env.clone()).await;
    let b = TestApp::start(env).await;
    let org = a.register().await;
    assert_eq!(header_i64(&b.get("/portal/me", &org.key).await, "x-ratelimit-limit"), 1000);
    let res = a.post("/portal/billing/subscription/change", Some(&org.key), json!({"plan_code": "Y-25"})).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header_i64(&b.get("/portal/me", &org.key).await, "x-ratelimit-limit"), 2500);
}

#[tokio::test]
async fn redis_outage_fails_open_and_catches_up_afterwards() {
    let proxy = ChaosProxy::start("127.0.0.1:6379").await;
    let url = proxy.url();
    let app = TestApp::spawn_with(&[("TNS_REDIS_URL", url.as_str()), ("TNS_USAGE_FLUSH_SECS", "1")]).await;
    let org = app.register().await;
    for _ in 0..3 {
        assert_eq!(app.get("/portal/me", &org.key).await.status(), 200);
    }
    // Wait until the three calls are persisted, then cut Redis off.
    eventually(Duration::from_secs(10), || async {
        let n: Option<i64> = sqlx::query_scalar("SELECT sum(total_calls)::int8 FROM usage_monthly WHERE org_id = $1")
            .bind(org.id)
            .fetch_one(&app.db)
            .await
            .unwrap();
        n.filter(|n| *n == 3)
    })
    .await
    .expect("persisted before the outage");
    proxy.cut();
    // The outage has begun once the proxy has closed the connections it was relaying.
    eventually(Duration::from_secs(5), || async { (proxy.live() == 0).then_some(()) })
        .await
        .expect("the proxy closed its connections");
    for i in 0..4 {
        let res = app.get("/portal/me", &org.key).await;
        assert_eq!(res.status(), 200, "served during the outage");
        assert_eq!(header_i64(&res, "x-ratelimit-remaining"), 1000 - 3 - 1 - i, "local count continues the month");
    }
    let metrics = app.metrics().await;
    let fallback: i64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("tns_quota_redis_fallback_total "))
        .expect("fallback metric")
        .parse()
        .unwrap();
    assert!(fallback >= 4);
    let ready = app.get_anon("/readyz").await;
    assert_eq!(ready.status(), 503);

    proxy.restore();
    // The flusher pushes the local counts back: Redis (read directly, not through the proxy)
    // then holds the month's 3 + 4 calls.
    let month = chrono::Utc::now().format("%Y-%m").to_string();
    let key = app.env.redis_key(&format!("usage:{}:{month}", org.id));
    let r = app.env.redis().await;
    let total = eventually(Duration::from_secs(15), || {
        let (mut r, key) = (r.clone(), key.clone());
        async move {
            let total: Option<i64> = r.hget(&key, "total").await.unwrap();
            total.filter(|n| *n >= 3 + 4)
        }
    })
    .await;
    assert_eq!(total, Some(3 + 4), "the local counts were pushed back to Redis, once");
    // And Redis continues from there.
    let res = app.get("/portal/me", &org.key).await;
    assert_eq!(res.status(), 200);
    assert_eq!(header_i64(&res, "x-ratelimit-remaining"), 1000 - 8, "Redis counts on from 3 + 4");
    // Every call made (3 + 4 + 1) is counted exactly once.
    let usage = app.usage(&org.key).await;
    let me_calls = endpoint(&usage, "GET /portal/me").unwrap()["total_calls"].as_i64().unwrap();
    assert_eq!(me_calls, 8, "{usage}");
}

#[tokio::test]
async fn fail_closed_refuses_calls_when_redis_is_down() {
    let app = TestApp::spawn_with(&[("TNS_REDIS_URL", "redis://127.0.0.1:1"), ("TNS_QUOTA_FAIL_MODE", "closed")]).await;
    let org = app.register().await;
    error_body(app.get("/portal/me", &org.key).await, 503).await;
}

/// Redis, holding nothing on disk, dies under four clients of two API processes and comes back
/// empty: every call is answered (fail-open), and every answered call reaches the usage ledger
/// and Redis's new copy of the month exactly once: those counted in the lost copy, those
/// counted locally while it was away, and those counted in the new one, whichever process
/// re-seeded it.
#[tokio::test]
async fn usage_survives_redis_coming_back_empty_under_load() {
    use std::sync::{
        atomic::{AtomicBool, AtomicI64, Ordering},
        Arc,
    };
    let proxy = ChaosProxy::start("127.0.0.1:6379").await;
    let url = proxy.url();
    // The outage's share of a hard quota is beyond what the load uses, so every call is served.
    let app = Arc::new(
        TestApp::spawn_with(&[
            ("TNS_REDIS_URL", url.as_str()),
            ("TNS_USAGE_FLUSH_SECS", "1"),
            ("TNS_QUOTA_FAIL_OPEN_ALLOWANCE", "1000000"),
        ])
        .await,
    );
    // Two API processes, as a deployment has: each counts, flushes and re-seeds on its own.
    let other = Arc::new(TestApp::start(app.env.clone()).await);
    let org = app.register().await;
    // A quota the load cannot reach: every call is to be answered.
    set_custom_plan(&app.db, org.id, "it-large", Some(10_000_000), None).await;
    let (stop, answered, failed) =
        (Arc::new(AtomicBool::new(false)), Arc::new(AtomicI64::new(0)), Arc::new(AtomicI64::new(0)));
    let clients: Vec<_> = (0..4)
        .map(|i| {
            let app = if i % 2 == 0 { app.clone() } else { other.clone() };
            let key = org.key.clone();
            let (stop, answered, failed) = (stop.clone(), answered.clone(), failed.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let res = app.get("/portal/me", &key).await;
                    if res.status() == 200 {
                        answered.fetch_add(1, Ordering::SeqCst);
                    } else if failed.fetch_add(1, Ordering::SeqCst) == 0 {
                        eprintln!("not answered: {} {}", res.status(), res.text().await.unwrap_or_default());
                    }
                }
            })
        })
        .collect();
    let more_answered = |n: i64, when: &'static str| {
        let (answered, failed) = (answered.clone(), failed.clone());
        let target = answered.load(Ordering::SeqCst) + n;
        async move {
            let got = eventually(Duration::from_secs(30), || async {
                (answered.load(Ordering::SeqCst) >= target).then_some(())
            })
            .await;
            let (a, f) = (answered.load(Ordering::SeqCst), failed.load(Ordering::SeqCst));
            assert!(got.is_some(), "{when}: {a} answered (wanted {target}), {f} not 200");
        }
    };
    more_answered(100, "before").await;

    // Redis goes away, and comes back with nothing: every key of this deployment is gone.
    proxy.cut();
    eventually(Duration::from_secs(5), || async { (proxy.live() == 0).then_some(()) })
        .await
        .expect("the proxy closed its connections");
    let mut r = app.env.redis().await;
    let keys: Vec<String> = r.keys(app.env.redis_key("*")).await.unwrap();
    assert!(!keys.is_empty());
    let _: () = r.del(keys).await.unwrap();
    more_answered(100, "while Redis is away").await;
    proxy.restore();
    // The API reconnects by itself and seeds a new copy of the month; calls count in it again.
    let month = chrono::Utc::now().format("%Y-%m").to_string();
    let key = app.env.redis_key(&format!("usage:{}:{month}", org.id));
    let seeded = eventually(Duration::from_secs(30), || {
        let (mut r, key) = (r.clone(), key.clone());
        async move { r.exists::<_, bool>(&key).await.unwrap().then_some(()) }
    })
    .await;
    assert!(seeded.is_some(), "a new copy of the month once Redis is back");
    more_answered(100, "after Redis is back").await;
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.await.unwrap();
    }
    assert_eq!(failed.load(Ordering::SeqCst), 0, "every call was answered 200");
    let answered = answered.load(Ordering::SeqCst);

    // The ledger gets every answered call, once.
    let ledger = eventually(Duration::from_secs(20), || async {
        let n: Option<i64> = sqlx::query_scalar("SELECT sum(total_calls)::int8 FROM usage_monthly WHERE org_id = $1")
            .bind(org.id)
            .fetch_one(&app.db)
            .await
            .unwrap();
        n.filter(|n| *n >= answered)
    })
    .await;
    assert_eq!(ledger, Some(answered), "the usage ledger holds every answered call once");
    // And so does Redis's new copy of the month (read directly, not through the proxy).
    let total = eventually(Duration::from_secs(20), || {
        let (mut r, key) = (r.clone(), key.clone());
        async move {
            let total: Option<i64> = r.hget(&key, "total").await.unwrap();
            total.filter(|n| *n >= answered)
        }
    })
    .await;
    assert_eq!(total, Some(answered), "Redis's copy counts every answered call once");
    // The usage report agrees (its own call is the one more).
    let usage = app.usage(&org.key).await;
    let me_calls = endpoint(&usage, "GET /portal/me").unwrap()["total_calls"].as_i64().unwrap();
    assert_eq!(me_calls, answered, "{usage}");
}
