//! The jobs role: exactly one of its replicas leads (the PostgreSQL advisory lock, between real
//! processes), the other takes over when the leader dies, and the periodic purges drop only
//! what has expired.

use std::time::Duration;

use serde_json::json;
use tns_core::env::RedisSettings;
use tns_jobs::periodic::Job;

use crate::{
    fixtures::Fleet,
    helpers::{eventually, Env, Proc, TestApp},
};

fn redis(app: &TestApp) -> RedisSettings {
    RedisSettings { url: app.env.get("TNS_REDIS_URL").into(), prefix: app.env.get("TNS_REDIS_PREFIX").into() }
}

/// A gauge's value in a Prometheus exposition (0 when absent).
fn gauge(exposition: &str, name: &str) -> i64 {
    exposition.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok()).unwrap_or(0)
}

async fn leading(p: &Proc) -> i64 {
    gauge(&p.metrics().await, "tns_jobs_leading")
}

/// Which of `runners` leads, once exactly one of them does.
async fn the_leader(runners: &[&Proc]) -> usize {
    eventually(Duration::from_secs(30), || async {
        let mut leaders = vec![];
        for (i, p) in runners.iter().enumerate() {
            if leading(p).await == 1 {
                leaders.push(i);
            }
        }
        (leaders.len() == 1).then(|| leaders[0])
    })
    .await
    .expect("exactly one runner leads")
}

#[tokio::test]
async fn one_of_two_runners_leads_and_the_other_takes_over_when_it_is_killed() {
    let env = Env::new().await.with(&[("TNS_JOBS_RETRY_SECS", "1")]);
    let mut a = Proc::start("jobs", &env).await;
    let mut b = Proc::start("jobs", &env).await;
    let first = the_leader(&[&a, &b]).await;
    // The other keeps trying and keeps failing while the leader lives. That is a negative, so
    // it is watched for a bounded window: long enough to hold at least one more of the other's
    // tries (every TNS_JOBS_RETRY_SECS = 1 s, ± 20 % jitter, so at most 1.2 s apart), polling
    // both replicas throughout.
    let window = Duration::from_millis(1500);
    let (leader, other) = if first == 0 { (&a, &b) } else { (&b, &a) };
    let until = tokio::time::Instant::now() + window;
    while tokio::time::Instant::now() < until {
        assert_eq!(leading(other).await, 0, "two leaders at once");
        assert_eq!(leading(leader).await, 1, "the leader stopped leading while it lives");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (dead, survivor) = if first == 0 { (&mut a, &b) } else { (&mut b, &a) };
    dead.kill().await;
    let took_over =
        eventually(Duration::from_secs(30), || async { (leading(survivor).await == 1).then_some(()) }).await;
    assert!(took_over.is_some(), "the survivor took over after the leader was killed");
    // And it runs the jobs: each has run at least once under its leadership.
    let m = survivor.metrics().await;
    for job in ["idempotency-purge", "webhook-retention"] {
        let ran = eventually(Duration::from_secs(10), || async {
            let m = survivor.metrics().await;
            m.contains(&format!("tns_job_runs_total{{job=\"{job}\",outcome=\"ok\"}}")).then_some(())
        })
        .await;
        assert!(ran.is_some(), "{job} ran on the new leader: {m}");
    }
}

#[tokio::test]
async fn a_runner_started_later_waits_while_the_first_leads_and_follows_it() {
    let env = Env::new().await.with(&[("TNS_JOBS_RETRY_SECS", "1")]);
    let a = Proc::start("jobs", &env).await;
    assert_eq!(the_leader(&[&a]).await, 0);
    let b = Proc::start("jobs", &env).await;
    assert_eq!(the_leader(&[&a, &b]).await, 0, "the first keeps leading");
    drop(a);
    assert_eq!(the_leader(&[&b]).await, 0);
}

#[tokio::test]
async fn webhook_retention_drops_only_old_events_whose_deliveries_are_all_final() {
    let app = TestApp::spawn().await;
    let f = Fleet::new(&app.api).await;
    // Nothing listens there: the deliveries stay pending until the test says otherwise.
    let body = json!({"event_type": "journey.created", "endpoint_url": "http://127.0.0.1:9/hook"});
    app.api.post_ok("/portal/webhooks", f.key(), body, 201).await;
    for _ in 0..3 {
        f.journey(&app.api).await;
    }
    let events: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM webhook_events ORDER BY id").fetch_all(&app.db).await.unwrap();
    assert_eq!(events.len(), 3);
    let (old_final, old_pending, recent_final) = (events[0], events[1], events[2]);
    sqlx::query("UPDATE webhook_events SET created_at = now() - interval '31 days' WHERE id = ANY($1)")
        .bind(vec![old_final, old_pending])
        .execute(&app.db)
        .await
        .unwrap();
    sqlx::query(
        "WITH done AS (DELETE FROM webhook_queue WHERE event_id = ANY($1))
         UPDATE webhook_deliveries SET state = 'delivered', finished_at = now() WHERE event_id = ANY($1)",
    )
    .bind(vec![old_final, recent_final])
    .execute(&app.db)
    .await
    .unwrap();
    let dropped = Job::WebhookRetention { days: 30 }.run(&app.db, &redis(&app)).await.unwrap();
    assert_eq!(dropped, 1);
    let left: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM webhook_events ORDER BY id").fetch_all(&app.db).await.unwrap();
    assert_eq!(left, vec![old_pending, recent_final]);
    let orphans: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_deliveries WHERE event_id = $1")
        .bind(old_final)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(orphans, 0, "the dropped event's deliveries went with it");
    assert_eq!(
        Job::WebhookRetention { days: 30 }.run(&app.db, &redis(&app)).await.unwrap(),
        0,
        "a second run changes nothing"
    );
}

#[tokio::test]
async fn the_idempotency_purge_drops_only_expired_answers() {
    let app = TestApp::spawn().await;
    let f = Fleet::new(&app.api).await;
    for (key, plate) in [("old", "34IDM01"), ("new", "34IDM02")] {
        let res = app
            .api
            .req(reqwest::Method::POST, "/portal/vehicles", Some(f.key()))
            .header("Idempotency-Key", key)
            .json(&crate::fixtures::vehicle(plate))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 201);
    }
    sqlx::query("UPDATE idempotency_keys SET created_at = now() - interval '3 days' WHERE key = 'old'")
        .execute(&app.db)
        .await
        .unwrap();
    assert_eq!(Job::IdempotencyPurge.run(&app.db, &redis(&app)).await.unwrap(), 1);
    let left: Vec<String> = sqlx::query_scalar("SELECT key FROM idempotency_keys").fetch_all(&app.db).await.unwrap();
    assert_eq!(left, vec!["new".to_string()]);
}

/// `n` active organizations, each a year on `starter` (2025), nothing invoiced yet: twelve
/// months to charge each.
async fn a_year_of_starter(db: &sqlx::PgPool, n: i64) -> Vec<i64> {
    let orgs: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO organizations (name, tax_number, status) SELECT 'Org ' || g, lpad(g::text, 10, '0'), 'active'
           FROM generate_series(1, $1) g RETURNING id",
    )
    .bind(n)
    .fetch_all(db)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO plan_terms (org_id, plan_code, starts_on, ends_on, billed_until)
         SELECT id, 'starter', '2025-01-01', '2026-01-01', '2025-01-01' FROM unnest($1::int8[]) AS u(id)",
    )
    .bind(&orgs)
    .execute(db)
    .await
    .unwrap();
    orgs
}

/// Every organization has exactly one invoice for its twelve months, complete (twelve plan
/// lines and the tax, 12 × 118.80), and every term is billed to its end.
async fn assert_billed_exactly_once(db: &sqlx::PgPool, orgs: &[i64]) {
    let per_org: Vec<(i64, i64)> =
        sqlx::query_as("SELECT org_id, count(*) FROM invoices WHERE org_id = ANY($1) GROUP BY org_id")
            .bind(orgs)
            .fetch_all(db)
            .await
            .unwrap();
    assert_eq!(per_org.len(), orgs.len(), "every organization invoiced");
    assert!(per_org.iter().all(|&(_, n)| n == 1), "{per_org:?}");
    let incomplete: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM invoices i WHERE (SELECT count(*) FROM invoice_lines l WHERE l.invoice_id = i.id) <> 13
            OR total_amount <> 1425.60",
    )
    .fetch_one(db)
    .await
    .unwrap();
    assert_eq!(incomplete, 0, "every invoice is whole");
    let unbilled: i64 = sqlx::query_scalar("SELECT count(*) FROM plan_terms WHERE billed_until <> '2026-01-01'")
        .fetch_one(db)
        .await
        .unwrap();
    assert_eq!(unbilled, 0);
}

#[tokio::test]
async fn two_runners_invoicing_at_once_bill_each_period_exactly_once() {
    // What a split brain would do: two runners invoicing the same periods at the same time.
    let app = TestApp::spawn().await;
    let orgs = a_year_of_starter(&app.db, 60).await;
    let job = Job::Invoicing(tns_store::billing::invoices::Terms {
        tax_rate: tns_core::domain::billing::TaxRate::percent(20.into()).unwrap(),
        due_days: 14,
    });
    let redis = redis(&app);
    let (a, b) = tokio::join!(job.run(&app.db, &redis), job.run(&app.db, &redis));
    assert_eq!(a.unwrap() + b.unwrap(), 60, "each invoice issued by one of them");
    assert_billed_exactly_once(&app.db, &orgs).await;
    assert_eq!(job.run(&app.db, &redis).await.unwrap(), 0);
}

#[tokio::test]
async fn killing_the_leading_runner_mid_invoicing_loses_and_duplicates_nothing() {
    let env = Env::new().await.with(&[("TNS_JOBS_RETRY_SECS", "1")]);
    let db = env.pool().await;
    tns_store::migrate(&db).await.unwrap();
    let orgs = a_year_of_starter(&db, 3000).await;
    let total = 3000;
    let issued =
        || async { sqlx::query_scalar::<_, i64>("SELECT count(*) FROM invoices").fetch_one(&db).await.unwrap() };
    let mut first = Proc::start("jobs", &env).await;
    the_leader(&[&first]).await;
    // Kill it while it is writing invoices.
    let mid_run = eventually(Duration::from_secs(60), || async { (issued().await > 0).then_some(()) }).await;
    assert!(mid_run.is_some(), "the leader started invoicing");
    first.kill().await;
    let at_kill = issued().await;
    assert!(at_kill < total, "killed mid-run ({at_kill} of {total} issued)");
    let second = Proc::start("jobs", &env).await;
    the_leader(&[&second]).await;
    let done = eventually(Duration::from_secs(120), || async { (issued().await == total).then_some(()) }).await;
    assert!(done.is_some(), "the new leader finished the invoicing ({} of {total})", issued().await);
    assert_billed_exactly_once(&db, &orgs).await;
}
