//! Benchmark (not a test): non-scheduled journeys notified to U-ETDS by one scheduler, on the
//! local PostgreSQL.
//!
//! The fake U-ETDS (`uetds-sim`, in a process of its own so its CPU is not counted here) answers
//! every call after 50 ms. Each journey has a driver and 3 passengers: 4 calls (`seferEkle`,
//! `seferGrupEkle`, `personelEkle`, `yolcuEkleCoklu`), each recorded as progress before the next.
//! With `TNS_ADAPTER_CONCURRENCY` calls in flight, the most a scheduler can notify is
//! concurrency ÷ (4 × 50 ms) journeys per second: that limit is the baseline, and the figure is
//! the measured rate as a ratio of it (target ≥ 0.8), with this process's CPU per journey (the
//! whole scheduler: claims, plugin, SOAP, TLS-free HTTP, progress records) and PostgreSQL's.
//!
//! Run with `bench/uetds.sh [journeys] [concurrency]` (builds in release first).

#[path = "cpu.rs"]
mod cpu;

use std::{
    collections::HashMap,
    process::Stdio,
    time::{Duration, Instant},
};

use anyhow::Context;
use serde_json::{json, Value};
use sqlx::PgPool;
use tns::config::{Config, Role};
use tns_adapter::Credentials;
use tns_store as db;
use tns_store::submissions::queue;
use tokio::io::{AsyncBufReadExt, BufReader};

const DB_URL: &str = "postgres://postgres@127.0.0.1:5432/tns_bench_uetds";
const ORGS: i64 = 10;
const LATENCY_MS: u64 = 50;
const CALLS_PER_JOURNEY: f64 = 4.0;

fn config(sim: &str, concurrency: usize) -> anyhow::Result<Config> {
    let vars: HashMap<String, String> = [
        ("TNS_DATABASE_URL", DB_URL.to_string()),
        ("TNS_LISTEN_ADDR", "127.0.0.1:0".into()),
        ("TNS_REDIS_PREFIX", format!("bench:uetds:{}:", std::process::id())),
        ("TNS_ADAPTER_UETDS_BASE_URL", sim.to_string()),
        ("TNS_ADAPTER_CONCURRENCY", concurrency.to_string()),
        ("TNS_SCHEDULER_MAX_IN_FLIGHT", (concurrency * 2).to_string()),
        ("TNS_SCHEDULER_DB_CONNECTIONS", "8".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let mut cfg = Config::from_lookup(Role::Dev, |k| vars.get(k).cloned())?;
    // The plugins' own settings (`TNS_ADAPTER_UETDS_*`), which a lookup cannot list.
    cfg.adapters = cfg.adapters.clone().with_vars(vars);
    Ok(cfg)
}

/// A non-scheduled journey as the API freezes it: a driver and 3 passengers.
fn snapshot() -> Value {
    let stop = |time: &str, city: i32, district: i32, place: &str| json!({"date": "2026-12-01", "time": time, "city_id": city, "district_id": district, "place": place});
    let person = |role: &str, id: &str| {
        json!({"role": role, "identity_number": id, "first_name": "Ali", "last_name": "Kaya", "gender": "E",
               "nationality": null, "phone": null})
    };
    let passenger = |key: u32, id: &str| {
        json!({"key": key.to_string(), "person": person("passenger", id), "boarding_place_code": 1421,
               "destination_place_code": 1219, "seat_no": key.to_string(), "ticket_serial_no": null, "amount": null})
    };
    json!({
        "plate": "34BEN001", "departure": stop("08:30", 34, 1421, "Kadıköy"), "arrival": stop("20:15", 1, 1219, "Ceyhan"),
        "tarifeli": null, "crew": [person("driver", "10000000146")],
        "passengers": [passenger(1, "17291716060"), passenger(2, "23695921030"), passenger(3, "U1234567")],
    })
}

/// The fake U-ETDS in its own process; its address.
async fn start_sim() -> anyhow::Result<(tokio::process::Child, String)> {
    let exe = std::env::current_exe()?;
    let sim = exe.parent().context("binary directory")?.join("uetds-sim");
    let mut child = tokio::process::Command::new(&sim)
        .args(["--addr", "127.0.0.1:0", "--latency-ms", &LATENCY_MS.to_string(), "--no-xsd", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("{} (built by bench/uetds.sh)", sim.display()))?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    while let Some(line) = lines.next_line().await? {
        if let Some(addr) = line.strip_prefix("listening on ") {
            return Ok((child, addr.to_string()));
        }
    }
    anyhow::bail!("uetds-sim exited before listening")
}

/// Organizations on U-ETDS's test account, and `n` queued journeys spread over them.
async fn seed(db: &PgPool, cfg: &Config, n: i64) -> anyhow::Result<()> {
    let orgs: Vec<tns_core::ids::OrgId> = sqlx::query_scalar(
        "INSERT INTO organizations (name, tax_number) SELECT 'Bench ' || g, lpad(g::text, 10, '0') FROM generate_series(1, $1) g
         RETURNING id",
    )
    .bind(ORGS)
    .fetch_all(db)
    .await?;
    // Stored as the API stores them: the fields the plugin describes, its secret ones sealed.
    let uetds = tns_adapter_host::Plugins::load(&cfg.adapters)?
        .description("uetds")
        .context("the uetds plugin (built by bench/uetds.sh)")?;
    let account = Credentials {
        fields: [("environment", "test"), ("ws_username", "999999"), ("ws_password", "999999testtest")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into(),
    };
    for org in &orgs {
        let key = &cfg.scheduler.as_ref().context("scheduler settings")?.webhooks.data_key;
        let sealed = tns_adapter_host::credentials::seal(key, *org, &uetds, &account);
        sqlx::query("INSERT INTO downstream_settings (org_id, adapter, fields, secrets) VALUES ($1, 'uetds', $2, $3)")
            .bind(org)
            .bind(sqlx::types::Json(&sealed.fields))
            .bind(sqlx::types::Json(&sealed.secrets))
            .execute(db)
            .await?;
    }
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO submissions (org_id, target_type, target_id, operation, adapter, snapshot)
         SELECT o.id, 'journey', g, 'journey', 'uetds', $2
           FROM unnest($3::bigint[]) o(id), generate_series(1, $1) g",
    )
    .bind(n / ORGS)
    .bind(sqlx::types::Json(snapshot()))
    .bind(&orgs)
    .execute(&mut *tx)
    .await?;
    sqlx::query("SELECT pg_notify($1, '')").bind(queue::QUEUE_CHANNEL).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let _tracing = tns_core::telemetry::init(tns_core::telemetry::LogFormat::Text, None);
    let mut args = std::env::args().skip(1);
    let n: i64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5000);
    let concurrency: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(64);
    let n = n / ORGS * ORGS;

    let (_sim, sim) = start_sim().await?;
    let admin = db::connect("postgres://postgres@127.0.0.1:5432/postgres", 1, "tns-bench").await?;
    sqlx::query("DROP DATABASE IF EXISTS tns_bench_uetds WITH (FORCE)").execute(&admin).await?;
    admin.close().await;
    let cfg = config(&sim, concurrency)?;
    let pool = tns::roles::database(&cfg, cfg.db.max_connections, "tns-bench").await?;

    let registry = prometheus::Registry::new();
    let scheduler = tns::roles::scheduler(&cfg, &registry, None).await.context("scheduler (are the plugins built?)")?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(scheduler.run(async move {
        stopped.await.ok();
    }));
    // Count finished ids from the scheduler's own notifications: polling would load the database.
    let mut done = sqlx::postgres::PgListener::connect_with(&pool).await?;
    done.listen(queue::DONE_CHANNEL).await?;
    tokio::time::sleep(Duration::from_millis(300)).await; // listeners connected, queue empty

    let (cpu0, pg0) = cpu::cpu_seconds();
    let t = Instant::now();
    seed(&pool, &cfg, n).await?;
    let mut finished = 0;
    while finished < n {
        let note = tokio::time::timeout(Duration::from_secs(60), done.recv()).await.context("stalled")??;
        finished += note.payload().split(',').filter(|s| !s.is_empty()).count() as i64;
    }
    let secs = t.elapsed().as_secs_f64();
    let (cpu1, pg1) = cpu::cpu_seconds();
    stop.send(()).ok();
    running.await??;

    let (delivered, whole): (i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE state = 'delivered'),
                count(*) FILTER (WHERE state = 'delivered' AND jsonb_array_length(passenger_results) = 3
                                 AND NOT jsonb_path_exists(passenger_results, '$[*] ? (@.error != null)'))
           FROM submissions",
    )
    .fetch_one(&pool)
    .await?;
    anyhow::ensure!(delivered == n, "delivered {delivered} of {n}");
    anyhow::ensure!(whole == n, "{} journeys delivered without all their passengers", n - whole);
    let attempts: i64 = sqlx::query_scalar("SELECT count(*) FROM submission_attempts").fetch_one(&pool).await?;
    anyhow::ensure!(attempts == n, "{attempts} attempts for {n} journeys: some were retried");

    let rate = n as f64 / secs;
    let limit = concurrency as f64 / (CALLS_PER_JOURNEY * LATENCY_MS as f64 / 1000.0);
    let per = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.0} µs", (b - a) / n as f64 * 1e6),
        _ => "n/a".into(),
    };
    println!(
        "journeys={n} (driver + 3 passengers: {CALLS_PER_JOURNEY} calls each) over {ORGS} organizations, \
         adapter concurrency {concurrency}, every U-ETDS answer after {LATENCY_MS} ms"
    );
    println!("{:<58} {:>9.0} /s", "limit: concurrency / (calls per journey x latency)", limit);
    println!("{:<58} {:>9.0} /s", "one scheduler, submission to delivered", rate);
    println!("CPU per journey: this process (scheduler + plugin) {}, PostgreSQL {}", per(cpu0, cpu1), per(pg0, pg1));
    println!("ratio delivered / limit: {:.2} (target >= 0.8)", rate / limit);
    Ok(())
}
