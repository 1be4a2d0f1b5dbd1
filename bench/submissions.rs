//! Benchmark (not a test): the submission pipeline, on the local PostgreSQL and Redis.
//!
//! 1. Throughput: `N` queued submissions drained by one scheduler calling the zero-delay
//!    sandbox plugin (loaded from next to this binary through libloading), against two
//!    baselines on the same database in the same run, each as two loops with no adapter call:
//!    - the floor: a plain batched queue, one statement claiming up to a batch and one
//!      completing it (`floor_loop`: none of the scheduler's guarantees). Ratio target ≥ 0.5;
//!      absolute target ≥ 20 000/s;
//!    - the scheduler's own claim and complete statements (`tns_store::submissions::queue`),
//!      one after the other: what the pipelining around them adds or loses.
//! 2. Latency at light load: one `POST …/submit` with `Prefer: wait=30` at a time through the
//!    API and the scheduler (both in this process), so the answer comes when the submission is
//!    delivered. p50 target ≤ 50 ms; printed against a plain `POST /portal/journeys` of the same
//!    run as the baseline.
//!
//! Run with `bench/submissions.sh [N] [samples]` (builds in release first).

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use anyhow::Context;
use serde_json::{json, Value};
use sqlx::PgPool;
use tns::config::{Config, Role};
use tns_store as db;
use tns_store::submissions::queue::{self, Finished};

const DB_URL: &str = "postgres://postgres@127.0.0.1:5432/tns_bench_submissions";
const ORGS: i64 = 10;

fn config(overrides: &[(&str, String)]) -> anyhow::Result<Config> {
    let mut vars: HashMap<String, String> = [
        ("TNS_DATABASE_URL", DB_URL.to_string()),
        ("TNS_LISTEN_ADDR", "127.0.0.1:0".into()),
        ("TNS_METRICS_ADDR", "127.0.0.1:0".into()),
        ("TNS_REDIS_PREFIX", format!("bench:sub:{}:", std::process::id())),
        ("TNS_SIGNING_SECRET", "bench-signing-secret-0123456789abcdefghij".into()),
        ("TNS_AUTH_RATE_LIMIT", "100000000".into()),
        ("TNS_SCHEDULER_DB_CONNECTIONS", "4".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    vars.extend(overrides.iter().map(|(k, v)| (k.to_string(), v.clone())));
    Ok(Config::from_lookup(Role::Dev, |k| vars.get(k).cloned())?)
}

/// A journey snapshot as the API freezes it, on an ordinary (zero-delay) plate.
fn snapshot() -> Value {
    let stop = json!({"date": "2026-12-01", "time": "08:30", "city_id": 34, "district_id": 1421});
    json!({
        "plate": "34BEN001", "departure": stop, "arrival": stop, "tarifeli": null,
        "crew": [{"role": "driver", "identity_number": "10000000146", "first_name": "Ali", "last_name": "Kaya",
                  "gender": "E", "nationality": null, "phone": null}],
        "passengers": [],
    })
}

/// Queue `n` submissions spread over the benchmark's organizations, and wake schedulers.
async fn seed(db: &PgPool, n: i64, round: i64) -> anyhow::Result<()> {
    let per = n / ORGS;
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO submissions (org_id, target_type, target_id, operation, adapter, snapshot)
         SELECT o.id, 'journey', $2 * 10000000 + g, 'journey', 'sandbox', $3
           FROM (SELECT id FROM organizations WHERE name LIKE 'Bench %') o, generate_series(1, $1) g",
    )
    .bind(per)
    .bind(round)
    .bind(sqlx::types::Json(snapshot()))
    .execute(&mut *tx)
    .await?;
    sqlx::query("SELECT pg_notify($1, '')").bind(queue::QUEUE_CHANNEL).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

/// The same claim and complete statements the scheduler runs, with no adapter in between.
async fn raw_loop(db: PgPool, batch: usize) -> anyhow::Result<usize> {
    let mut done = 0;
    let mut after = 0;
    loop {
        let claimed = queue::claim(&db, batch, Duration::from_secs(300), rand::random(), after).await?;
        let Some(last) = claimed.last() else { return Ok(done) };
        after = last.org_id.get();
        let now = chrono_now();
        let finished: Vec<Finished> = claimed
            .iter()
            .map(|c| Finished {
                id: c.id,
                lease_token: c.lease_token,
                state: tns_core::domain::kinds::SubmissionState::Delivered,
                retry_at: None,
                downstream_reference: Some(format!("26120100{:06}", c.id % 1_000_000)),
                error_message: None,
                passenger_results: Some(json!([])),
                outcome: tns_core::domain::kinds::AttemptOutcome::Delivered,
                error: None,
                started_at: now,
                downstream_state: Some(serde_json::Value::Null),
                untried: false,
                was_unknown: c.state == tns_core::domain::kinds::SubmissionState::Unknown,
            })
            .collect();
        queue::complete(&db, &finished).await?;
        done += finished.len();
    }
}

/// The floor: a plain batched queue on the same table and indexes, with none of the
/// scheduler's guarantees. One statement claims up to `batch` due rows (in the pending index's
/// order, skipping locked ones), one statement completes them all (`UPDATE … FROM unnest`). No
/// fairness across organizations, no attempt history, no record status, no webhook events, no
/// NOTIFY: what any queue on this table costs PostgreSQL at least.
async fn floor_loop(db: PgPool, batch: usize) -> anyhow::Result<usize> {
    let mut done = 0;
    loop {
        let token: i64 = rand::random();
        let claimed: Vec<(i64, sqlx::types::Json<Value>)> = sqlx::query_as(
            "UPDATE submissions s
                SET run_at = now() + interval '300 seconds', lease_token = $2, leased_at = now(),
                    attempts = s.attempts + 1
               FROM (SELECT id FROM submissions
                      WHERE state IN ('pending', 'unknown') AND run_at <= now()
                      ORDER BY org_id, run_at LIMIT $1 FOR UPDATE SKIP LOCKED) c
              WHERE s.id = c.id
          RETURNING s.id, s.snapshot",
        )
        .bind(batch as i64)
        .bind(token)
        .fetch_all(&db)
        .await?;
        if claimed.is_empty() {
            return Ok(done);
        }
        let ids: Vec<i64> = claimed.iter().map(|c| c.0).collect();
        let refs: Vec<String> = ids.iter().map(|id| format!("26120100{:06}", id % 1_000_000)).collect();
        let r = sqlx::query(
            "UPDATE submissions s
                SET state = 'delivered', lease_token = NULL, downstream_reference = r.reference,
                    passenger_results = '[]', finished_at = now()
               FROM unnest($1::bigint[], $2::text[]) AS r(id, reference)
              WHERE s.id = r.id AND s.lease_token = $3",
        )
        .bind(&ids)
        .bind(&refs)
        .bind(token)
        .execute(&db)
        .await?;
        done += r.rows_affected() as usize;
    }
}

/// Queue `n` submissions (seed round `round`) and drain them with two copies of `each`, one
/// after the other's claim as the database allows: submissions per second.
async fn loops_rate<F, Fut>(pool: &PgPool, n: i64, round: i64, what: &str, each: F) -> anyhow::Result<f64>
where
    F: Fn(PgPool) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<usize>> + Send + 'static,
{
    seed(pool, n, round).await?;
    sqlx::query("VACUUM ANALYZE submissions").execute(pool).await?;
    let t = Instant::now();
    let loops: Vec<_> = (0..2).map(|_| tokio::spawn(each(pool.clone()))).collect();
    let mut done = 0;
    for l in loops {
        done += l.await??;
    }
    let secs = t.elapsed().as_secs_f64();
    anyhow::ensure!(done as i64 == n / ORGS * ORGS, "{what} finished {done} of {n}");
    Ok(done as f64 / secs)
}

fn chrono_now() -> sqlx::types::chrono::DateTime<sqlx::types::chrono::Utc> {
    sqlx::types::chrono::Utc::now()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let _tracing = tns_core::telemetry::init(tns_core::telemetry::LogFormat::Text, None);
    let mut args = std::env::args().skip(1);
    let n: i64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(20_000);
    let samples: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(200);

    let admin = db::connect("postgres://postgres@127.0.0.1:5432/postgres", 1, "tns-bench").await?;
    sqlx::query("DROP DATABASE IF EXISTS tns_bench_submissions WITH (FORCE)").execute(&admin).await?;
    admin.close().await;
    let cfg = config(&[])?;
    let pool = tns::roles::database(&cfg, cfg.db.max_connections, "tns-bench").await?;
    sqlx::query(
        "INSERT INTO organizations (name, tax_number) SELECT 'Bench ' || g, lpad(g::text, 10, '0') FROM generate_series(1, $1) g",
    )
    .bind(ORGS)
    .execute(&pool)
    .await?;
    let batch = cfg.scheduler.as_ref().context("scheduler settings")?.batch;

    // --- 1a. the scheduler's own statements, 1b. the floor ------------------------------------
    let raw_rate = loops_rate(&pool, n, 1, "raw loop", |db| raw_loop(db, batch)).await?;
    let floor_rate = loops_rate(&pool, n, 3, "floor loop", |db| floor_loop(db, batch)).await?;

    // --- 1c. the scheduler with the sandbox plugin -------------------------------------------
    let registry = prometheus::Registry::new();
    let scheduler =
        tns::roles::scheduler(&cfg, &registry, None).await.context("scheduler (is the sandbox built in release?)")?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(scheduler.run(async move {
        stopped.await.ok();
    }));
    tokio::time::sleep(Duration::from_millis(300)).await; // listener connected, queue empty
    sqlx::query("VACUUM ANALYZE submissions").execute(&pool).await?;
    // Count finished ids from the schedulers' own notifications: polling the table would load
    // the database being measured.
    let mut done = sqlx::postgres::PgListener::connect_with(&pool).await?;
    done.listen(queue::DONE_CHANNEL).await?;
    let t = Instant::now();
    seed(&pool, n, 2).await?;
    let mut finished = 0;
    while finished < n / ORGS * ORGS {
        let note = tokio::time::timeout(Duration::from_secs(60), done.recv()).await.context("stalled")??;
        finished += note.payload().split(',').filter(|s| !s.is_empty()).count() as i64;
    }
    let sched_secs = t.elapsed().as_secs_f64();
    let delivered: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM submissions WHERE state = 'delivered' AND target_id BETWEEN 20000000 AND 29999999",
    )
    .fetch_one(&pool)
    .await?;
    anyhow::ensure!(delivered == n / ORGS * ORGS, "scheduler delivered {delivered} of {n}");
    let sched_rate = delivered as f64 / sched_secs;

    // --- 2. submit-to-delivered latency through the API --------------------------------------
    let app = tns::roles::api(&config(&[])?, None).await?;
    let api = format!("http://{}/api/v1", app.addr());
    tokio::spawn(app.run(std::future::pending()));
    tns_scheduler::webhooks::send::install_tls_provider();
    let http = reqwest::Client::new();
    let reg: Value = http
        .post(format!("{api}/auth/register"))
        .json(&json!({"organization_name": "Latency", "tax_number": "9999999999", "full_name": "L",
                      "email": "latency@example.com", "password": "benchmark"}))
        .send()
        .await?
        .json()
        .await?;
    let key = reg["api_key"].as_str().context("registered")?.to_string();
    sqlx::query("UPDATE subscriptions SET plan_code = 'Y-999'").execute(&pool).await?;
    let driver: Value = http
        .post(format!("{api}/portal/personnel"))
        .bearer_auth(&key)
        .json(&json!({"identity_number": "10000000146", "first_name": "Ali", "last_name": "Kaya", "gender": "E",
                      "role_type": "driver"}))
        .send()
        .await?
        .json()
        .await?;
    let journey = json!({
        "vehicle_id": "34LAT001", "personnel_ids": [driver["id"]], "trip_kind": "tarifesiz",
        "departure": {"date": "2026-12-01", "time": "08:30", "district_id": "1421"},
        "arrival": {"date": "2026-12-01", "time": "20:15", "district_id": "1219"},
    });
    let (mut create_ms, mut submit_ms) = (vec![], vec![]);
    for i in 0..samples + 10 {
        let t = Instant::now();
        let j: Value =
            http.post(format!("{api}/portal/journeys")).bearer_auth(&key).json(&journey).send().await?.json().await?;
        let created = t.elapsed().as_secs_f64() * 1000.0;
        let id = j["id"].as_i64().context("journey created")?;
        let t = Instant::now();
        let s: Value = http
            .post(format!("{api}/portal/journeys/{id}/submit"))
            .bearer_auth(&key)
            .header("Prefer", "wait=30")
            .send()
            .await?
            .json()
            .await?;
        let submitted = t.elapsed().as_secs_f64() * 1000.0;
        anyhow::ensure!(s["status"] == "delivered", "submission not delivered: {s}");
        if i >= 10 {
            // The first ten warm up connections and caches.
            create_ms.push(created);
            submit_ms.push(submitted);
        }
    }
    create_ms.sort_by(f64::total_cmp);
    submit_ms.sort_by(f64::total_cmp);
    stop.send(()).ok();
    running.await??;

    println!("submissions={n} over {ORGS} organizations, claim batch {batch} (2 cores shared by everything)");
    println!("{:<60} {:>10.0} /s", "floor: plain batched claim + complete (2 loops)", floor_rate);
    println!("{:<60} {:>10.0} /s", "raw loop of the scheduler's own statements (2 loops)", raw_rate);
    println!("{:<60} {:>10.0} /s", "scheduler + sandbox plugin, end to end", sched_rate);
    println!(
        "ratio scheduler / floor:                                      {:.2} (target >= 0.5; absolute target >= 20000/s)",
        sched_rate / floor_rate
    );
    println!("ratio scheduler / raw loop of its statements:                 {:.2}", sched_rate / raw_rate);
    let (c50, s50) = (percentile(&create_ms, 0.5), percentile(&submit_ms, 0.5));
    println!(
        "{:<60} {:>10.2} ms (p99 {:.2})",
        "POST /portal/journeys p50 (baseline)",
        c50,
        percentile(&create_ms, 0.99)
    );
    println!(
        "{:<60} {:>10.2} ms (p99 {:.2})",
        "submit with Prefer: wait, to delivered, p50",
        s50,
        percentile(&submit_ms, 0.99)
    );
    println!("ratio submit-to-delivered / plain create (p50):               {:.2} (target: p50 <= 50 ms)", s50 / c50);
    Ok(())
}
