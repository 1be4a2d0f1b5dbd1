//! Composing the roles: each role's parts prepared from the configuration, and what every
//! `tns <role>` does.

use std::{future::Future, sync::Arc};

use anyhow::Context;
use sqlx::PgPool;
use tns_adapter_host::Plugins;
use tns_admin::http::AdminApi;
use tns_api::startup::{self, Application};
pub use tns_scheduler::role::Scheduler;

use crate::{
    config::{Config, Role},
    probes::Probes,
};

/// Load the adapter plugins (once per process: `tns dev` shares them between the API and the
/// scheduler). Plugins that fail to load are logged and left out.
pub fn load_adapters(cfg: &Config) -> anyhow::Result<Arc<Plugins>> {
    let dir = &cfg.adapters.dir;
    let adapters = Plugins::load(&cfg.adapters).with_context(|| format!("TNS_ADAPTER_DIR {}", dir.display()))?;
    for (name, version, path) in adapters.list() {
        tracing::info!(adapter = %name, %version, library = %path.display(), "adapter loaded");
    }
    for failure in &adapters.failures {
        tracing::warn!(error = %failure, "adapter not loaded");
    }
    Ok(Arc::new(adapters))
}

/// The database, ready: created first in `tns dev`, migrated when configured.
pub async fn database(cfg: &Config, max_connections: u32, application_name: &str) -> anyhow::Result<PgPool> {
    tns_store::prepare(&cfg.db, cfg.role == Role::Dev, max_connections, application_name).await
}

/// The API role, bound and ready to serve; with the plugins of `adapters`, or its own.
pub async fn api(cfg: &Config, adapters: Option<Arc<Plugins>>) -> anyhow::Result<Application> {
    let settings = cfg.api.clone().context("this role serves no API")?;
    let adapters = match adapters {
        Some(a) => a,
        None => load_adapters(cfg)?,
    };
    let db = database(cfg, cfg.db.max_connections, "tns-api").await?;
    Application::build(settings, cfg.listen, db, adapters).await
}

/// The operators' admin API when `TNS_ADMIN_ADDR` is set, bound. Its small pool is its own, so
/// operators can act while tenants' traffic holds every connection of the API's.
pub async fn admin_api(cfg: &Config, metrics: &prometheus::Registry) -> anyhow::Result<Option<AdminApi>> {
    let Some(settings) = cfg.admin else { return Ok(None) };
    let db = tns_store::connect(&cfg.db.url, 4, "tns-admin-api").await?;
    AdminApi::bind(settings, db, cfg.redis.clone(), metrics).await.map(Some)
}

/// Serve the API, and the admin API beside it when there is one, until `shutdown`; each lets
/// its requests in flight finish before this returns.
pub async fn serve_api(
    app: Application,
    admin: Option<AdminApi>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let Some(admin) = admin else { return app.run(shutdown).await };
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    // Also stops when the API ends for any reason (the sender is dropped with it).
    let admin = tokio::spawn(admin.run(async move {
        let _ = stopped.wait_for(|s| *s).await;
    }));
    let served = app
        .run(async move {
            shutdown.await;
            stop.send_replace(true);
        })
        .await;
    let admin_served = admin.await.context("the admin API's task failed");
    served?;
    admin_served?
}

/// A scheduler, ready to run (the database is migrated by whoever started first); with the
/// plugins of `adapters`, or its own.
pub async fn scheduler(
    cfg: &Config,
    metrics: &prometheus::Registry,
    adapters: Option<Arc<Plugins>>,
) -> anyhow::Result<Scheduler> {
    let settings = cfg.scheduler.clone().context("this role runs no scheduler")?;
    let adapters = match adapters {
        Some(a) => a,
        None => load_adapters(cfg)?,
    };
    Scheduler::prepare(settings, &cfg.db, metrics, adapters, &cfg.adapters.dir).await
}

/// The jobs role's parts: its pool, its elector, its metrics on `metrics`; with the plugins
/// of `adapters` (the drift checks ask them), or its own.
pub async fn jobs(
    cfg: &Config,
    metrics: &prometheus::Registry,
    adapters: Option<Arc<Plugins>>,
) -> anyhow::Result<tns_jobs::Runner> {
    let settings = cfg.jobs.clone().context("this role runs no jobs")?;
    let adapters = match adapters {
        Some(a) => a,
        None => load_adapters(cfg)?,
    };
    let db = tns_store::connect(&cfg.db.url, 4, "tns-jobs").await?;
    tns_jobs::Runner::prepare(settings, &cfg.db.url, db, metrics, adapters, cfg.adapters.call_timeout).await
}

/// `tns admin ARGS`: one operator's command, its output on stdout.
pub async fn admin(cfg: &Config, args: &[String]) -> anyhow::Result<()> {
    let user = std::env::var("USER").ok();
    let command = tns_admin::Command::parse(args, user)?;
    if let tns_admin::Command::Help(text) = command {
        // Help needs no database.
        print!("{text}");
        return Ok(());
    }
    let db = tns_store::connect(&cfg.db.url, 2, "tns-admin").await?;
    let mut out = std::io::stdout().lock();
    tns_admin::run(command, &db, &cfg.redis, &mut out).await
}

/// Run `cfg.role` until `shutdown` resolves.
pub async fn run(cfg: Config, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
    match cfg.role {
        Role::Admin => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            admin(&cfg, &args).await
        }
        Role::Migrate => {
            let pool = tns_store::connect(&cfg.db.url, 2, "tns-migrate").await?;
            tns_store::migrate(&pool).await?;
            println!("migrations applied");
            Ok(())
        }
        Role::Adapters => {
            let registry = Plugins::load(&cfg.adapters)
                .with_context(|| format!("TNS_ADAPTER_DIR {}", cfg.adapters.dir.display()))?;
            for (name, version, path) in registry.list() {
                println!("{name}\t{version}\t{}", path.display());
            }
            for f in &registry.failures {
                eprintln!("not loaded: {f}");
            }
            if registry.list().is_empty() {
                anyhow::bail!("no adapter loaded from {}", cfg.adapters.dir.display());
            }
            Ok(())
        }
        Role::Scheduler => {
            // Migrate (when configured) with a small pool of its own, then hand over.
            database(&cfg, 2, "tns-scheduler").await?.close().await;
            let metrics = prometheus::Registry::new();
            let scheduler = scheduler(&cfg, &metrics, None).await?;
            let _probes = Probes::start(cfg.listen, metrics, scheduler.db().clone()).await?;
            scheduler.run(shutdown).await
        }
        Role::Jobs => {
            database(&cfg, 2, "tns-jobs").await?.close().await;
            let metrics = prometheus::Registry::new();
            let runner = jobs(&cfg, &metrics, None).await?;
            let _probes = Probes::start(cfg.listen, metrics, runner.db().clone()).await?;
            runner.run(shutdown).await
        }
        Role::Api => {
            let app = api(&cfg, None).await?;
            let admin = admin_api(&cfg, app.state().metrics.registry()).await?;
            // Machine-readable start lines (tests and scripts wait for them; `listening` last).
            println!("metrics on http://{}", app.metrics_addr());
            print_admin_addr(admin.as_ref());
            println!("listening on http://{}", app.addr());
            serve_api(app, admin, shutdown).await
        }
        Role::Dev => {
            tracing::warn!(
                "dev mode: throw-away signing secret unless TNS_SIGNING_SECRET is set; cookies without Secure"
            );
            let adapters = load_adapters(&cfg)?;
            let app = api(&cfg, Some(adapters.clone())).await?;
            let admin = admin_api(&cfg, app.state().metrics.registry()).await?;
            println!("metrics on http://{}", app.metrics_addr());
            print_admin_addr(admin.as_ref());
            // The scheduler and the jobs run alongside, on the API's metrics, and stop after the
            // API has drained.
            let registry = app.state().metrics.registry().clone();
            let scheduler = scheduler(&cfg, &registry, Some(adapters.clone())).await?;
            let runner = jobs(&cfg, &registry, Some(adapters)).await?;
            let (stop, stopped) = tokio::sync::watch::channel(false);
            let until_stopped = move || {
                let mut stopped = stopped.clone();
                async move {
                    let _ = stopped.wait_for(|s| *s).await;
                }
            };
            let scheduler = tokio::spawn(scheduler.run(until_stopped()));
            let runner = tokio::spawn(runner.run(until_stopped()));
            println!("listening on http://{}", app.addr());
            let served = serve_api(app, admin, shutdown).await;
            stop.send(true).ok();
            scheduler.await??;
            runner.await??;
            served
        }
    }
}

fn print_admin_addr(admin: Option<&AdminApi>) {
    if let Some(admin) = admin {
        println!("admin on http://{}", admin.addr());
    }
}

/// Resolves on SIGTERM or Ctrl-C.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    startup::shutdown_signal()
}
