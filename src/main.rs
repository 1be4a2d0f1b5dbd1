//! `tns`: one binary, several roles.
//!
//! ```text
//! tns api        serve the HTTP API
//! tns scheduler  claim queued submissions and call the adapter plugins
//! tns migrate    apply database migrations and exit
//! tns dev        everything in one process, creating the database if needed
//! tns adapters   list the adapter plugins that load, with versions
//! tns jobs       run the singleton periodic work while this replica leads
//! tns env        print every environment variable the binary reads
//! tns admin …    an operator's command (organizations, status, audit log)
//! ```

use std::process::ExitCode;

use tns::{
    config::{Config, Role},
    roles,
};
use tns_core::telemetry;

const USAGE: &str = "usage: tns <api|scheduler|jobs|migrate|dev|adapters|admin|env>\n\
  api        serve the HTTP API (needs TNS_SIGNING_SECRET and TNS_DATA_KEY)\n\
  scheduler  deliver queued submissions through the adapter plugins, and webhooks (needs TNS_DATA_KEY)\n\
  jobs       run the periodic jobs (invoicing, dunning, trials, purges, retention) on the one replica that leads\n\
  migrate    apply database migrations and exit\n\
  dev        all roles in one process on the local PostgreSQL and Redis\n\
  adapters   list the adapter plugins that load (from TNS_ADAPTER_DIR)\n\
  admin      operators' commands: orgs, set-status, plan, submission, requeue, invoice, audit, token (tns admin help)\n\
  env        print every environment variable tns reads, one per line\n\
configuration: TNS_* environment variables, see README.md";

#[tokio::main]
async fn main() -> ExitCode {
    let arg = std::env::args().nth(1).unwrap_or_default();
    if matches!(arg.as_str(), "-h" | "--help" | "help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if arg == "admin" && matches!(std::env::args().nth(2).as_deref(), None | Some("help" | "-h" | "--help")) {
        println!("{}", tns_admin::usage());
        return ExitCode::SUCCESS;
    }
    if arg == "env" {
        for var in tns_core::env::VARIABLES {
            println!("{var}");
        }
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
    let tracing = telemetry::init(cfg.log_format, cfg.otlp.clone());
    let code = match roles::run(cfg, roles::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        // A plugin refusing its settings is a configuration error like any other.
        Err(e) if e.chain().any(|c| c.is::<tns_adapter_host::Refused>()) => {
            let refused = e.chain().find(|c| c.is::<tns_adapter_host::Refused>()).map(ToString::to_string);
            eprintln!("tns: configuration error: {}", refused.unwrap_or_default());
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("tns: {e:#}");
            ExitCode::FAILURE
        }
    };
    tracing.shutdown().await;
    code
}
