//! Benchmark (not a test): webhook delivery throughput, on the local PostgreSQL.
//!
//! `N` events (fanned out by `webhook_emit` to one subscription in each of 10 organizations)
//! are delivered by the scheduler — claim, unseal, sign, POST, record — to a local receiver
//! that answers 200 at once; the baseline is a plain reqwest loop POSTing the very same bodies
//! to the same receiver with the same concurrency, in the same run. Ratio target ≥ 0.5.
//!
//! Run with `bench/webhooks.sh [N]` (builds in release first).

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use anyhow::Context;
use tns_api::{
    config::{Config, Role},
    db,
    scheduling::Scheduler,
};

const DB_URL: &str = "postgres://postgres@127.0.0.1:5432/tns_bench_webhooks";
const ORGS: i64 = 10;

fn config() -> anyhow::Result<Config> {
    let vars: HashMap<&str, String> = [
        ("TNS_DATABASE_URL", DB_URL.to_string()),
        ("TNS_LISTEN_ADDR", "127.0.0.1:0".into()),
        ("TNS_SCHEDULER_DB_CONNECTIONS", "4".into()),
        // The benchmark's receiver is on loopback.
        ("TNS_WEBHOOK_ALLOW_PRIVATE", "true".into()),
    ]
    .into_iter()
    .collect();
    Ok(Config::from_lookup(Role::Dev, |k| vars.get(k).cloned())?)
}

/// A receiver that answers 200 at once and counts what it got.
async fn receiver() -> anyhow::Result<(String, Arc<AtomicUsize>)> {
    let got = Arc::new(AtomicUsize::new(0));
    let counter = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |_body: axum::body::Bytes| {
            let c = counter.clone();
            async move {
                c.fetch_add(1, Ordering::Relaxed);
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, got))
}

/// POST every body with `concurrency` workers, as plainly as reqwest allows.
async fn plain_loop(url: &str, bodies: Arc<Vec<String>>, concurrency: usize) -> anyhow::Result<()> {
    let client = reqwest::Client::new();
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (client, next, bodies, url) = (client.clone(), next.clone(), bodies.clone(), url.to_string());
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(body) = bodies.get(i) else { return anyhow::Ok(()) };
                let r = client.post(&url).header("content-type", "application/json").body(body.clone()).send().await?;
                anyhow::ensure!(r.status().is_success());
                r.bytes().await?;
            }
        });
    }
    while let Some(r) = workers.join_next().await {
        r??;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tns_api::telemetry::init(tns_api::config::LogFormat::Text);
    let n: i64 = std::env::args().nth(1).map(|a| a.parse()).transpose()?.unwrap_or(20_000);
    let n = n / ORGS * ORGS;

    let admin = db::connect("postgres://postgres@127.0.0.1:5432/postgres", 1, "tns-bench").await?;
    sqlx::query("DROP DATABASE IF EXISTS tns_bench_webhooks WITH (FORCE)").execute(&admin).await?;
    admin.close().await;
    let cfg = config()?;
    let pool = tns_api::startup::prepare_database(&cfg).await?;
    let (url, got) = receiver().await?;
    let hooks = &cfg.scheduler.webhooks;
    for i in 1..=ORGS {
        let org: i64 =
            sqlx::query_scalar("INSERT INTO organizations (name, tax_number) VALUES ($1, '1234567890') RETURNING id")
                .bind(format!("Bench {i}"))
                .fetch_one(&pool)
                .await?;
        let secret = tns_scheduler::webhooks::signing::generate_secret();
        tns_api::db::webhooks::insert(
            &pool,
            org,
            "journey.created",
            &url,
            &hooks.data_key.seal(org, secret.as_bytes()),
        )
        .await?
        .context("subscription")?;
    }
    // The events, before any scheduler runs: `test` events to every organization's subscription.
    sqlx::query(
        "SELECT webhook_emit(array_agg(o.id), array_agg('test'::text), array_agg(jsonb_build_object('n', g)))
           FROM (SELECT id FROM organizations) o, generate_series(1, $1) g",
    )
    .bind(n / ORGS)
    .execute(&pool)
    .await?;
    sqlx::query("VACUUM ANALYZE webhook_deliveries").execute(&pool).await?;
    let bodies: Arc<Vec<String>> = Arc::new(
        sqlx::query_scalar("SELECT e.body FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id")
            .fetch_all(&pool)
            .await?,
    );
    anyhow::ensure!(bodies.len() as i64 == n, "{} deliveries queued, expected {n}", bodies.len());

    // --- baseline: plain reqwest loop -----------------------------------------------------
    tns_scheduler::webhooks::send::install_tls_provider();
    let t = Instant::now();
    plain_loop(&url, bodies.clone(), hooks.concurrency).await?;
    let plain_rate = n as f64 / t.elapsed().as_secs_f64();
    anyhow::ensure!(got.swap(0, Ordering::Relaxed) as i64 == n);

    // --- the scheduler ------------------------------------------------------------------------
    let scheduler = Scheduler::prepare(&cfg, &prometheus::Registry::new()).await.context("scheduler")?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let t = Instant::now();
    let running = tokio::spawn(scheduler.run(async move {
        stopped.await.ok();
    }));
    // Wait on the receiver's count first: polling the table meanwhile would load the database
    // being measured.
    while (got.load(Ordering::Relaxed) as i64) < n {
        anyhow::ensure!(t.elapsed() < Duration::from_secs(300), "stalled at {} of {n}", got.load(Ordering::Relaxed));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    loop {
        let delivered: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered'")
            .fetch_one(&pool)
            .await?;
        if delivered == n {
            break;
        }
        anyhow::ensure!(t.elapsed() < Duration::from_secs(300), "stalled at {delivered} of {n}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let sched_rate = n as f64 / t.elapsed().as_secs_f64();
    stop.send(()).ok();
    running.await??;
    let received = got.load(Ordering::Relaxed) as i64;
    anyhow::ensure!(received == n, "the receiver got {received} deliveries, expected {n} (none twice)");
    let attempts: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_attempts").fetch_one(&pool).await?;

    println!(
        "webhook deliveries: {n} events to a local receiver that answers at once, concurrency {}",
        hooks.concurrency
    );
    println!("  plain reqwest loop (same bodies):        {plain_rate:>8.0}/s");
    println!("  scheduler (claim, sign, POST, record):   {sched_rate:>8.0}/s   ({attempts} attempts recorded)");
    println!("  ratio scheduler / plain loop:            {:>8.2}   (target ≥ 0.5)", sched_rate / plain_rate);
    Ok(())
}
