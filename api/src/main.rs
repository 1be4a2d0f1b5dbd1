//! `tns`: one binary, several roles.
//!
//! ```text
//! tns api        serve the HTTP API
//! tns scheduler  claim queued submissions and call the adapter plugins
//! tns migrate    apply database migrations and exit
//! tns dev        everything in one process, creating the database if needed
//! tns adapters   list the adapter plugins that load, with versions
//! ```

use std::process::ExitCode;

use tns_api::{
    config::{Config, Role},
    db,
    scheduling::{self, Scheduler},
    startup::{self, Application},
    telemetry,
};

const USAGE: &str = "usage: tns <api|scheduler|migrate|dev>\n\
  api        serve the HTTP API (needs TNS_SIGNING_SECRET and TNS_DATA_KEY)\n\
  scheduler  deliver queued submissions through the adapter plugins, and webhooks (needs TNS_DATA_KEY)\n\
  migrate    apply database migrations and exit\n\
  dev        all roles in one process on the local PostgreSQL and Redis\n\
  adapters   list the adapter plugins that load (from TNS_ADAPTER_DIR)\n\
configuration: TNS_* environment variables, see README.md";

#[tokio::main]
async fn main() -> ExitCode {
    let arg = std::env::args().nth(1).unwrap_or_default();
    if matches!(arg.as_str(), "-h" | "--help" | "help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let Some(role) = Role::parse(&arg) else {
        eprintln!("{USAGE}");
        return ExitCode::from(64);
    };
    let cfg = match Config::from_env(role) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tns: configuration error: {e}");
            return ExitCode::from(2);
        }
    };
    telemetry::init(cfg.log_format);
    match run(cfg).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tns: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cfg: Config) -> anyhow::Result<()> {
    match cfg.role {
        Role::Migrate => {
            let pool = db::connect(&cfg.database_url, 2, "tns-migrate").await?;
            db::migrate(&pool).await?;
            println!("migrations applied");
            Ok(())
        }
        Role::Adapters => {
            let registry = tns_scheduler::adapters::Registry::load(&cfg.adapters)
                .map_err(|e| anyhow::anyhow!("TNS_ADAPTER_DIR {}: {e}", cfg.adapters.dir.display()))?;
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
        Role::Scheduler => scheduling::run_role(cfg, startup::shutdown_signal()).await,
        Role::Api | Role::Dev => {
            if cfg.role == Role::Dev {
                tracing::warn!(
                    "dev mode: throw-away signing secret unless TNS_SIGNING_SECRET is set; cookies without Secure"
                );
            }
            let app = Application::build(cfg.clone()).await?;
            // Machine-readable start lines (tests and scripts wait for them).
            println!("metrics on http://{}", app.metrics_addr());
            if cfg.role == Role::Api {
                println!("listening on http://{}", app.addr());
                return app.run(startup::shutdown_signal()).await;
            }
            // dev: the scheduler runs alongside and stops after the API has drained.
            let state = app.state();
            let scheduler =
                Scheduler::prepare_with(&cfg, state.metrics.registry(), state.downstreams.registry()).await?;
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let scheduler = tokio::spawn(scheduler.run(async move {
                stopped.await.ok();
            }));
            println!("listening on http://{}", app.addr());
            let served = app.run(startup::shutdown_signal()).await;
            stop.send(()).ok();
            scheduler.await??;
            served
        }
    }
}
