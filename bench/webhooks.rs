//! Benchmark (not a test): webhook delivery throughput, on the local PostgreSQL.
//!
//! Each round queues `N` new events (fanned out by `webhook_emit` to one subscription in each
//! of 10 organizations) and then, back to back:
//! - the baseline, a plain reqwest loop POSTing the very same bodies to the same local receiver
//!   (which answers 200 at once) with the same concurrency;
//! - a plain loop on hyper's client, which the scheduler's deliveries go through, for the
//!   stricter comparison (what the scheduler costs over its own HTTP path);
//! - a fresh scheduler delivering the round's events: claim, unseal, sign, POST, record.
//!
//! Each phase is timed over its steady middle (from 10 % to 90 % of its deliveries received),
//! so starting and draining do not count. The machines this runs on change speed from one
//! second to the next, so a single pair of timings can land far from the truth either way;
//! the figure is the median over the rounds of each round's ratio. Targets: scheduler / plain
//! reqwest loop ≥ 0.6, scheduler / plain hyper loop ≥ 0.45.
//!
//! Run with `bench/webhooks.sh [N] [rounds]` (builds in release first).

#[path = "cpu.rs"]
mod cpu;

use cpu::cpu_seconds;
use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tns::{
    config::{Config, Role},
    roles::Scheduler,
};
use tns_store as db;

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

/// One timed phase: deliveries per second, and CPU per delivery in this process and in
/// PostgreSQL (µs), over its steady middle: from the moment the receiver has 10 % of the
/// phase's deliveries to the moment it has 90 %. A phase's first and last moments measure
/// starting and draining (a fresh scheduler's first claim, the last record), not throughput,
/// and weigh more the shorter the phase.
struct Phase {
    rate: f64,
    own_us: Option<f64>,
    pg_us: Option<f64>,
}

impl Phase {
    /// Run `work` (which delivers `n` to the receiver counting in `got`, from zero) and time it.
    async fn time<F>(n: usize, got: &AtomicUsize, work: F) -> anyhow::Result<Phase>
    where
        F: std::future::Future<Output = anyhow::Result<()>>,
    {
        let (lo, hi) = (n / 10, n - n / 10);
        let watch = async {
            let mut marks = vec![];
            for mark in [lo, hi] {
                while got.load(Ordering::Relaxed) < mark {
                    tokio::time::sleep(Duration::from_micros(500)).await;
                }
                marks.push((Instant::now(), cpu_seconds(), got.load(Ordering::Relaxed)));
            }
            marks
        };
        let (done, marks) = tokio::join!(work, watch);
        done?;
        let ((t0, c0, n0), (t1, c1, n1)) = (marks[0], marks[1]);
        let count = (n1 - n0) as f64;
        let per = |a: Option<f64>, b: Option<f64>| Some((a? - b?) * 1e6 / count);
        Ok(Phase { rate: count / (t1 - t0).as_secs_f64(), own_us: per(c1.0, c0.0), pg_us: per(c1.1, c0.1) })
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let us = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.1} µs"));
        write!(f, "{:>7.0}/s  (CPU per delivery: here {}, PostgreSQL {})", self.rate, us(self.own_us), us(self.pg_us))
    }
}

/// POST every body with `concurrency` workers; `post` sends one and checks it was a success.
async fn plain_loop<F, Fut>(bodies: Arc<Vec<String>>, concurrency: usize, post: F) -> anyhow::Result<()>
where
    F: Fn(String) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (next, bodies, post) = (next.clone(), bodies.clone(), post.clone());
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(body) = bodies.get(i) else { return anyhow::Ok(()) };
                post(body.clone()).await?;
            }
        });
    }
    while let Some(r) = workers.join_next().await {
        r??;
    }
    Ok(())
}

/// The baseline: as plainly as reqwest allows.
async fn reqwest_loop(url: &str, bodies: Arc<Vec<String>>, concurrency: usize) -> anyhow::Result<()> {
    let (client, url) = (reqwest::Client::new(), url.to_string());
    plain_loop(bodies, concurrency, move |body| {
        let (client, url) = (client.clone(), url.clone());
        async move {
            let r = client.post(&url).header("content-type", "application/json").body(body).send().await?;
            anyhow::ensure!(r.status().is_success());
            r.bytes().await?;
            Ok(())
        }
    })
    .await
}

/// The same on hyper's pooled client, the scheduler's HTTP path.
async fn hyper_loop(url: &str, bodies: Arc<Vec<String>>, concurrency: usize) -> anyhow::Result<()> {
    let client: hyper_util::client::legacy::Client<_, Full<Bytes>> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build_http();
    let uri: hyper::Uri = url.parse()?;
    plain_loop(bodies, concurrency, move |body| {
        let (client, uri) = (client.clone(), uri.clone());
        async move {
            let req = hyper::Request::post(uri)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(body)))?;
            let r = client.request(req).await?;
            anyhow::ensure!(r.status().is_success());
            r.into_body().collect().await?;
            Ok(())
        }
    })
    .await
}

/// Let `scheduler` (prepared: plugins loaded, pool connected) deliver `n` queued events;
/// returns when all are recorded delivered.
async fn scheduler_drains(
    scheduler: Scheduler,
    pool: &sqlx::PgPool,
    got: &AtomicUsize,
    n: usize,
) -> anyhow::Result<()> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(scheduler.run(async move {
        stopped.await.ok();
    }));
    let t = Instant::now();
    // Wait on the receiver's count first: polling the table meanwhile would load the database
    // being measured.
    while got.load(Ordering::Relaxed) < n {
        anyhow::ensure!(t.elapsed() < Duration::from_secs(300), "stalled at {} of {n}", got.load(Ordering::Relaxed));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    loop {
        let pending: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_deliveries WHERE state <> 'delivered'")
            .fetch_one(pool)
            .await?;
        if pending == 0 {
            break;
        }
        anyhow::ensure!(t.elapsed() < Duration::from_secs(300), "{pending} not recorded delivered");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.send(()).ok();
    running.await?
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let _tracing = tns_core::telemetry::init(tns_core::telemetry::LogFormat::Text, None);
    let mut args = std::env::args().skip(1);
    let n: i64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(20_000);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(9);
    let n = (n / ORGS * ORGS).max(ORGS);
    anyhow::ensure!(rounds >= 1, "at least one round");

    let admin = db::connect("postgres://postgres@127.0.0.1:5432/postgres", 1, "tns-bench").await?;
    sqlx::query("DROP DATABASE IF EXISTS tns_bench_webhooks WITH (FORCE)").execute(&admin).await?;
    admin.close().await;
    let cfg = config()?;
    let pool = tns::roles::database(&cfg, cfg.db.max_connections, "tns-bench").await?;
    let (url, got) = receiver().await?;
    let hooks = &cfg.scheduler.as_ref().context("scheduler settings")?.webhooks;
    for i in 1..=ORGS {
        let org: tns_core::ids::OrgId = sqlx::query_scalar(
            "INSERT INTO organizations (name, tax_number) VALUES ($1, lpad($2::text, 10, '0')) RETURNING id",
        )
        .bind(format!("Bench {i}"))
        .bind(i)
        .fetch_one(&pool)
        .await?;
        let secret = tns_core::signing::generate_secret();
        tns_store::webhooks::insert(
            &pool,
            org,
            tns_core::domain::kinds::EventType::JourneyCreated,
            &url,
            &hooks.data_key.seal(org, secret.as_bytes()),
        )
        .await?
        .context("subscription")?;
    }
    tns_scheduler::webhooks::send::install_tls_provider();

    println!(
        "webhook deliveries: {rounds} rounds of {n} events to a local receiver that answers at once, concurrency {}",
        hooks.concurrency
    );
    let (mut ratios, mut strict) = (vec![], vec![]);
    let total = n as usize;
    for round in 1..=rounds {
        // The round's events, queued before its scheduler starts: `test` events to every
        // organization's subscription.
        sqlx::query(
            "SELECT webhook_emit(array_agg(o.id), array_agg('test'::text), array_agg(jsonb_build_object('n', g)))
               FROM (SELECT id FROM organizations) o, generate_series(1, $1) g",
        )
        .bind(n / ORGS)
        .execute(&pool)
        .await?;
        let bodies: Arc<Vec<String>> = Arc::new(
            sqlx::query_scalar(
                "SELECT e.body FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
                  WHERE d.state = 'pending'",
            )
            .fetch_all(&pool)
            .await?,
        );
        anyhow::ensure!(bodies.len() == total, "{} deliveries queued, expected {n}", bodies.len());
        sqlx::query("VACUUM ANALYZE webhook_queue, webhook_deliveries").execute(&pool).await?;

        let plain = Phase::time(total, &got, reqwest_loop(&url, bodies.clone(), hooks.concurrency)).await?;
        anyhow::ensure!(got.swap(0, Ordering::Relaxed) == total);
        let hyper = Phase::time(total, &got, hyper_loop(&url, bodies.clone(), hooks.concurrency)).await?;
        anyhow::ensure!(got.swap(0, Ordering::Relaxed) == total);
        let scheduler = tns::roles::scheduler(&cfg, &prometheus::Registry::new(), None).await.context("scheduler")?;
        let sched = Phase::time(total, &got, scheduler_drains(scheduler, &pool, &got, total)).await?;
        let received = got.swap(0, Ordering::Relaxed);
        anyhow::ensure!(received == total, "the receiver got {received} deliveries, expected {n} (none twice)");

        println!("round {round}");
        println!("  plain reqwest loop (same bodies):       {plain}");
        println!("  plain hyper loop (scheduler's HTTP):    {hyper}");
        println!("  scheduler (claim, sign, POST, record):  {sched}");
        println!(
            "  ratio scheduler / plain reqwest loop: {:.2}   (scheduler / plain hyper loop: {:.2})",
            sched.rate / plain.rate,
            sched.rate / hyper.rate
        );
        ratios.push(sched.rate / plain.rate);
        strict.push(sched.rate / hyper.rate);
    }
    let attempts: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_attempt_history").fetch_one(&pool).await?;
    anyhow::ensure!(attempts == total as i64 * rounds as i64, "{attempts} attempts recorded");
    println!("every delivery recorded with exactly one attempt ({attempts})");
    println!(
        "median ratio scheduler / plain reqwest loop: {:.2}   (target ≥ 0.6; scheduler / plain hyper loop: {:.2}, target ≥ 0.45)",
        median(ratios),
        median(strict)
    );
    Ok(())
}
